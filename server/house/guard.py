"""Who may change the house (hide or show a record on its wall), and the browser hardening
on every house response; the table server's rules (:mod:`server.pages.security`) on the
house's own PIN and session.

An API client sends the house PIN in ``X-Dicepad-House-Pin``; a page logs in once and holds
a signed, ``SameSite=Strict`` cookie bound to the PIN's version. Page forms carry the
session's CSRF token, and a page's script sends it in ``X-CSRF-Token``: an API write riding a
page session without it is refused (``403 csrf``) before anything is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask, current_app, g, request, session

from server.auth import SESSION_SECONDS
from server.auth_errors import NotAuthenticatedError
from server.hardening import (
    CSRF_FIELD,
    CSRF_HEADER,
    CsrfError,
    add_headers,
    csrf_token,
    token_matches,
)

if TYPE_CHECKING:  # the app imports this module
    from server.house.app import HouseParts

PIN_HEADER = "X-Dicepad-House-Pin"
TOKEN_KEY = "house_session"  #: the cookie's key: the token of its session (:mod:`.pin`)
EXTENSION = "dicepad_house"


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


def check_form() -> None:
    if not token_matches(request.form.get(CSRF_FIELD)):
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
    if not token_matches(request.headers.get(CSRF_HEADER)):
        raise CsrfError(f"missing or wrong {CSRF_HEADER} header: reload the page and try again")


def init_app(app: Flask) -> None:
    app.before_request(_check_api)
    app.after_request(add_headers)
    app.jinja_env.globals["csrf_token"] = csrf_token
    app.jinja_env.globals["logged_in"] = logged_in
