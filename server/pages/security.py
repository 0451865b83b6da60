"""CSRF tokens for the pages and the browser-hardening headers on every response.

The session cookie is already ``SameSite=Strict`` and the API only takes JSON bodies; the
per-session token is the belt to those braces. Forms carry it in a hidden ``csrf`` field;
the pages' scripts send it in the ``X-CSRF-Token`` header when they call the JSON API. An
API call authenticated by a page session (no PIN header) must carry it; API clients that
send the PIN header, or that logged in through ``/api/login`` and never loaded a page, are
not asked for it (they are not browsers riding a cookie). The API refuses a wrong token as
``{"error": "csrf"}`` before it reads the call, so a page may fetch the session's current
token (``GET /csrf.json``: a login in another tab rotates it) and send the same call again.
"""

from __future__ import annotations

import hmac
import secrets

from flask import Flask, Response, request, session
from werkzeug.exceptions import Forbidden, HTTPException

from server.api import PIN_HEADER, SESSION_KEY
from server.errors import error_response
from server.services import dicepad

CSRF_KEY = "csrf"
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"

#: no inline script or style anywhere; images only from here (snapshots, QR codes)
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
    """A page POST without the session's token (HTTP 403)."""


def csrf_token() -> str:
    """This session's token, made on first use (a page that shows a form asks for it)."""
    token = session.get(CSRF_KEY)
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        session[CSRF_KEY] = token
    return token


def rotate_csrf_token() -> str:
    """A new token (after logging in or out)."""
    session.pop(CSRF_KEY, None)
    return csrf_token()


def _matches(given: str | None) -> bool:
    expected = session.get(CSRF_KEY)
    if not isinstance(expected, str) or not given:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def check_form() -> None:
    """Refuse a form POST whose ``csrf`` field is not this session's token."""
    if not _matches(request.form.get(CSRF_FIELD)):
        raise CsrfError(
            "this form is out of date or did not come from this scoreboard: "
            "reload the page and try again"
        )


def _check_api() -> None:
    """Before every request: an API write riding a page session needs the header token."""
    if request.method != "POST" or not request.path.startswith("/api/"):
        return
    if request.path == "/api/login" or PIN_HEADER in request.headers:
        return
    if CSRF_KEY not in session or not dicepad().auth.session_ok(session.get(SESSION_KEY)):
        return  # not a page session: the API's own PIN check decides
    if not _matches(request.headers.get(CSRF_HEADER)):
        raise CsrfError(f"missing or wrong {CSRF_HEADER} header: reload the page and try again")


def _api_csrf(exc: CsrfError) -> Response | HTTPException:
    """The API's refusal names its cause (``csrf``, not a bare ``forbidden``): board.js tells
    it from every other 403 to know that nothing was applied and a retry is safe. The pages'
    own forms keep their "please reload" page (the pages blueprint's handler)."""
    if not request.path.startswith("/api"):
        return exc
    return error_response(403, "csrf", exc.description or "wrong CSRF token")


def _headers(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    if response.mimetype == "text/html" and "Cache-Control" not in response.headers:
        # a page can carry a session's CSRF token and the PIN holder's controls: never kept
        # by a shared cache, and fetched afresh (a back button shows no stale table)
        response.headers["Cache-Control"] = "private, no-cache"
    return response


def init_app(app: Flask) -> None:
    app.before_request(_check_api)
    app.register_error_handler(CsrfError, _api_csrf)
    app.after_request(_headers)
    app.jinja_env.globals["csrf_token"] = csrf_token
