"""JSON errors for the API: every failure is ``{"error", "message", "status"}``.

The mapping from the engine's and the server's named errors to HTTP statuses lives here, once:
400 malformed, 401/403 PIN, 404 unknown, 405, 409 illegal (the rule's message), 413 too big,
429 locked out, 503 feed full or database unavailable. Paths outside ``/api`` keep Flask's own
error pages for the phone pages (issue 7), except a database failure: its page says what to do.
"""

from __future__ import annotations

import logging
import sqlite3

from flask import Flask, Response, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from scoring.errors import IllegalActionError, MalformedActionError, RulesError
from server.auth_errors import AuthError, LockedOutError
from server.feed.hub import FeedFullError
from server.records import RecordNotFoundError
from server.store import StoreError
from server.table_values import UnknownTableError
from server.tables import SnapshotError

log = logging.getLogger(__name__)


class BodyError(ValueError):
    """A request body or query parameter that is not what the endpoint takes (HTTP 400)."""


def error_response(status: int, code: str, message: str) -> Response:
    response = jsonify({"error": code, "message": message, "status": status})
    response.status_code = status
    return response


def _http(exc: HTTPException) -> Response | HTTPException:
    if not request.path.startswith("/api"):
        return exc
    status = exc.code or 500
    code = (exc.name or "error").lower().replace(" ", "_")
    response = error_response(status, code, exc.description or exc.name)
    if status == 405 and exc.get_response().headers.get("Allow"):
        response.headers["Allow"] = exc.get_response().headers["Allow"]
    return response


def _malformed(exc: ValueError) -> Response:
    return error_response(400, "malformed", str(exc))


def _rules(exc: RulesError) -> Response:
    return error_response(400, "bad_rules", str(exc))


def _illegal(exc: IllegalActionError) -> Response:
    return error_response(409, "illegal_action", str(exc))


def _not_found(exc: LookupError) -> Response:
    return error_response(404, "not_found", str(exc.args[0]) if exc.args else "not found")


def auth_error(exc: AuthError) -> Response:
    """A PIN refused, as JSON (also the house server's): 401 / 403 / 429 with Retry-After."""
    codes = {401: "pin_required", 403: "wrong_pin", 429: "locked_out"}
    response = error_response(exc.status, codes.get(exc.status, "auth"), str(exc))
    if isinstance(exc, LockedOutError):
        response.headers["Retry-After"] = str(exc.retry_after)
    return response


def feed_full_error(exc: FeedFullError) -> Response:
    """The live feed at its limit (also the house server's): 503, try again in 10 s."""
    response = error_response(503, "feed_full", str(exc))
    response.headers["Retry-After"] = "10"
    return response


STORAGE_RETRY_SECONDS = 60


def storage_message(method: str) -> str:
    """What a person at the bar can do when the database fails: SQLite's own words ("database
    is locked", "disk I/O error") help no one there and go to the server's log instead."""
    saved = "" if method in {"GET", "HEAD"} else ", so nothing was saved"
    return (
        f"the scoreboard's storage is not answering{saved}: try again in a minute, "
        "or ask staff to restart dicepad"
    )


def _storage_page(message: str) -> Response:
    """The phone pages' 503: the error page without its header (whose log-in link asks the
    database), or plain text should even that fail."""
    try:
        html = render_template("error.html", title="Try again soon", message=message, bare=True)
        return Response(html, 503, mimetype="text/html")
    except Exception:  # the page is a courtesy; the text must get through
        log.exception("the storage error page did not render")
        return Response(message, 503, mimetype="text/plain")


def _storage(exc: Exception) -> Response:
    log.error("database failure on %s %s: %s", request.method, request.path, exc, exc_info=exc)
    message = storage_message(request.method)
    if request.path.startswith("/api"):
        response = error_response(503, "storage", message)
    else:
        response = _storage_page(message)
    response.headers["Retry-After"] = str(STORAGE_RETRY_SECONDS)
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(MalformedActionError, _malformed)
    app.register_error_handler(BodyError, _malformed)
    app.register_error_handler(SnapshotError, _malformed)
    app.register_error_handler(RulesError, _rules)
    app.register_error_handler(IllegalActionError, _illegal)
    app.register_error_handler(UnknownTableError, _not_found)
    app.register_error_handler(RecordNotFoundError, _not_found)
    app.register_error_handler(AuthError, auth_error)
    app.register_error_handler(FeedFullError, feed_full_error)
    app.register_error_handler(sqlite3.Error, _storage)
    app.register_error_handler(StoreError, _storage)
