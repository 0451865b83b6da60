"""Who may change the house (hide or show a record on its wall), and the browser hardening
on every house response; the table server's rules (:mod:`server.pages.security`) on the
house's own PIN and session.

An API client sends the house PIN in ``X-Dicepad-House-Pin``; a page logs in once and holds
a signed, ``SameSite=Strict`` cookie bound to the PIN's version. Page forms carry the
session's CSRF token, and a page's script sends it in ``X-CSRF-Token``: an API write riding a
page session without it is refused (``403 csrf``) before anything is applied.
"""

from __future__ import annotations

import hmac
import secrets
from typing import TYPE_CHECKING

from flask import Flask, Response, current_app, g, request, session
from werkzeug.exceptions import Forbidden

from server.auth import SESSION_SECONDS
from server.auth_errors import NotAuthenticatedError

if TYPE_CHECKING:  # the app imports this module
    from server.house.app import HouseParts

PIN_HEADER = "X-Dicepad-House-Pin"
CSRF_HEADER = "X-CSRF-Token"
CSRF_KEY = "csrf"
CSRF_FIELD = "csrf"
TOKEN_KEY = "house_session"  #: the cookie's key: the token of its session (:mod:`.pin`)
EXTENSION = "dicepad_house"

#: no inline script or style anywhere (the roll photos on the table servers are links)
CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


class CsrfError(Forbidden):
    """A write riding a page session without its token (HTTP 403)."""


def parts() -> HouseParts:
    """The current house app's services."""
    found: HouseParts = current_app.extensions[EXTENSION]
    return found


def address() -> str:
    return request.remote_addr or "unknown"


def logged_in() -> bool:
    """The house PIN holder's page session: live, not logged out, and the PIN unchanged since
    it logged in (looked up once a request: a page asks several times)."""
    if not current_app.secret_key or TOKEN_KEY not in session:
        return False
    known: bool | None = g.get("house_logged_in")
    if known is None:
        known = parts().pin.session_ok(session.get(TOKEN_KEY))
        g.house_logged_in = known
    return known


def log_in(version: int) -> None:
    """Start a page session at PIN ``version`` (a fresh cookie: nothing of an earlier one)."""
    session.clear()
    session[TOKEN_KEY] = parts().pin.open_session(version, SESSION_SECONDS)
    session.permanent = True
    g.house_logged_in = True


def log_out() -> None:
    """End this page's session for good, every copy of its cookie included."""
    parts().pin.end_session(session.get(TOKEN_KEY))
    session.clear()
    g.house_logged_in = False


def require_pin() -> None:
    """Allow the request with the right house PIN in the header or a page session: else
    401, 403 for a wrong PIN, 429 while locked out."""
    given = request.headers.get(PIN_HEADER)
    if given is not None:
        parts().pin.attempt(address(), given)
        return
    if logged_in():
        return
    raise NotAuthenticatedError(f"this needs the house PIN: send {PIN_HEADER} or log in")


def csrf_token() -> str:
    token = session.get(CSRF_KEY)
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        session[CSRF_KEY] = token
    return token


def rotate_csrf_token() -> str:
    session.pop(CSRF_KEY, None)
    return csrf_token()


def _matches(given: str | None) -> bool:
    expected = session.get(CSRF_KEY)
    if not isinstance(expected, str) or not given:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def check_form() -> None:
    if not _matches(request.form.get(CSRF_FIELD)):
        raise CsrfError(
            "this form is out of date or did not come from this house page: reload and try again"
        )


def _check_api() -> None:
    if request.method != "POST" or not request.path.startswith("/api/"):
        return
    if request.path == "/api/house/login" or PIN_HEADER in request.headers:
        return
    if not logged_in():
        return  # not a page session: the endpoint's own PIN check decides
    if not _matches(request.headers.get(CSRF_HEADER)):
        raise CsrfError(f"missing or wrong {CSRF_HEADER} header: reload the page and try again")


def _headers(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    if response.mimetype == "text/html" and "Cache-Control" not in response.headers:
        response.headers["Cache-Control"] = "private, no-cache"
    return response


def init_app(app: Flask) -> None:
    app.before_request(_check_api)
    app.after_request(_headers)
    app.jinja_env.globals["csrf_token"] = csrf_token
    app.jinja_env.globals["logged_in"] = logged_in
