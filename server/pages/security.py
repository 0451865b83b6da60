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

from flask import Flask, Response, request, session
from werkzeug.exceptions import HTTPException

from server.api import PIN_HEADER, SESSION_KEY
from server.errors import error_response
from server.hardening import (
    CSRF_FIELD,
    CSRF_HEADER,
    CSRF_KEY,
    CsrfError,
    add_headers,
    csrf_token,
    token_matches,
)
from server.services import dicepad


def check_form() -> None:
    """Refuse a form POST whose ``csrf`` field is not this session's token."""
    if not token_matches(request.form.get(CSRF_FIELD)):
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
    if not token_matches(request.headers.get(CSRF_HEADER)):
        raise CsrfError(f"missing or wrong {CSRF_HEADER} header: reload the page and try again")


def _api_csrf(exc: CsrfError) -> Response | HTTPException:
    """The API's refusal names its cause (``csrf``, not a bare ``forbidden``): board.js tells
    it from every other 403 to know that nothing was applied and a retry is safe. The pages'
    own forms keep their "please reload" page (the pages blueprint's handler)."""
    if not request.path.startswith("/api"):
        return exc
    return error_response(403, "csrf", exc.description or "wrong CSRF token")


def init_app(app: Flask) -> None:
    app.before_request(_check_api)
    app.register_error_handler(CsrfError, _api_csrf)
    app.after_request(add_headers)
    app.jinja_env.globals["csrf_token"] = csrf_token
