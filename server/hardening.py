"""What every dicepad web server (a table's ``dicepad serve``, the house's ``dicepad house``)
sends browsers and asks of them: the strict headers on every response, and the per-session
CSRF token its page forms and page scripts carry.

Kept apart from either app (Flask and Werkzeug only), so that the house server, which runs
no camera, does not import the table server's pages and with them the pad and OpenCV.
"""

from __future__ import annotations

import hmac
import secrets

from flask import Response, session
from werkzeug.exceptions import Forbidden

CSRF_KEY = "csrf"  #: the session's key for its token
CSRF_FIELD = "csrf"  #: a form's field for it
CSRF_HEADER = "X-CSRF-Token"  #: a page script's header for it

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
    """A page's write without the session's token (HTTP 403)."""


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


def token_matches(given: str | None) -> bool:
    """Whether ``given`` is this session's token (compared in constant time)."""
    expected = session.get(CSRF_KEY)
    if not isinstance(expected, str) or not given:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def add_headers(response: Response) -> Response:
    """After every request: :data:`HEADERS`, and no shared caching of a page."""
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    if response.mimetype == "text/html" and "Cache-Control" not in response.headers:
        # a page can carry a session's CSRF token and the PIN holder's controls: never kept
        # by a shared cache, and fetched afresh (a back button shows no stale table)
        response.headers["Cache-Control"] = "private, no-cache"
    return response
