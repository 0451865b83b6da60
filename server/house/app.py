"""The house server's Flask app factory: ``create_house_app(config)``.

Like :func:`server.app.create_app`, no module-level state: the parts live on the app
(``app.extensions["dicepad_house"]``). Building it connects to the house database and
migrates it; when PostgreSQL does not answer, the app is built anyway and serves "the house
database is not answering" (503) while a thread keeps trying (:mod:`server.house.pool` says
why), and the live feed's LISTEN thread keeps trying too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from flask import Flask, Response, render_template, request
from werkzeug.exceptions import HTTPException

from server.auth import SESSION_SECONDS, validate_pin
from server.auth_errors import AuthError
from server.errors import BodyError, auth_error, error_response, feed_full_error
from server.feed.hub import Feed, FeedFullError
from server.hardening import CsrfError
from server.house import api, guard, pages, players_api, players_pages
from server.house.listen import HouseListener
from server.house.pin import HousePin
from server.house.player_reads import HousePlayerReads
from server.house.players import HousePlayers
from server.house.pool import RETRY_SECONDS, HouseDb, HouseUnavailableError
from server.house.reads import HouseReads, UnknownHouseRecordError, UnknownHouseTableError
from server.limiter import FailureLimiter

log = logging.getLogger(__name__)

SERVER_DIR = Path(__file__).resolve().parent.parent  #: server/: its templates and static


def _say(text: str) -> None:
    print(text, flush=True)


@dataclass(frozen=True)
class HouseConfig:
    """What ``dicepad house`` runs with (the table server's defaults where they overlap)."""

    db_url: str
    pin: str | None = None  #: ``DICEPAD_HOUSE_PIN``; None: the stored one, or one made up
    idle_hours: float = 12.0
    max_feed_clients: int = 200
    feed_queue_size: int = 64
    keepalive_seconds: float = 15.0
    max_content_length: int = 16 * 1024
    retry_seconds: float = RETRY_SECONDS
    pin_max_failures: int = 5
    pin_max_failures_total: int = 30
    pin_window_seconds: float = 300.0
    pin_lockout_seconds: float = 300.0
    pin_scrypt_n: int = 2**14
    monotonic: Callable[[], float] = time.monotonic
    #: how a PIN made up on the first start is told (once): printed, for the journal
    announce: Callable[[str], None] = _say


@dataclass
class HouseParts:
    """One house app's services (``app.extensions["dicepad_house"]``)."""

    config: HouseConfig
    db: HouseDb
    reads: HouseReads
    pin: HousePin
    feed: Feed
    listener: HouseListener
    players: HousePlayers  #: the worker deriving the players' rows (issue 36)
    player_reads: HousePlayerReads
    closed: bool = field(default=False)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.feed.close()
        self.listener.stop()
        self.players.stop()
        self.db.close()


def house(app: Flask) -> HouseParts:
    parts: HouseParts = app.extensions[guard.EXTENSION]
    return parts


def create_house_app(config: HouseConfig) -> Flask:
    """A ready house app (serving a "database unreachable" page until it is reachable)."""
    if config.pin is not None:
        validate_pin(config.pin)  # a typo in DICEPAD_HOUSE_PIN stops the start, clearly
    app = Flask(
        __name__,
        root_path=str(SERVER_DIR),
        template_folder="templates",
        static_folder="static",
    )
    app.config.update(
        DEBUG=False,
        TESTING=False,
        MAX_CONTENT_LENGTH=config.max_content_length,
        SESSION_COOKIE_NAME="dicepad_house_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=SESSION_SECONDS),
        DICEPAD_HOUSE=config,
    )
    limiter = FailureLimiter(
        max_failures=config.pin_max_failures,
        window=config.pin_window_seconds,
        lockout=config.pin_lockout_seconds,
        monotonic=config.monotonic,
        max_total=config.pin_max_failures_total,
    )

    def ready() -> None:  # the database answers (at start, or later): the PIN and the key
        generated = parts.pin.setup(config.pin)
        if generated is not None:
            config.announce(
                f"dicepad house: the house PIN is {generated} - write it down, it is shown "
                "only this once (set DICEPAD_HOUSE_PIN to choose your own)"
            )
        app.secret_key = parts.pin.session_secret()
        parts.players.sweep()  # what was shipped while it was away

    db = HouseDb(config.db_url, retry_seconds=config.retry_seconds, on_ready=ready)
    reads = HouseReads(db, idle_after=timedelta(hours=config.idle_hours))
    feed = Feed(max_clients=config.max_feed_clients, queue_size=config.feed_queue_size)
    players = HousePlayers(db, retry_seconds=config.retry_seconds)
    parts = HouseParts(
        config,
        db,
        reads,
        HousePin(db, limiter, scrypt_n=config.pin_scrypt_n, monotonic=config.monotonic),
        feed,
        HouseListener(
            config.db_url,
            reads,
            feed,
            retry_seconds=min(2.0, config.retry_seconds),
            on_tables=players.queue,
            on_listening=players.sweep,
        ),
        players,
        HousePlayerReads(db),
    )
    app.extensions[guard.EXTENSION] = parts
    _errors(app)
    guard.init_app(app)
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    app.register_blueprint(api.bp)
    app.register_blueprint(pages.bp)
    app.register_blueprint(players_api.bp)
    app.register_blueprint(players_pages.bp)
    parts.listener.start()
    db.start()
    players.start()
    return app


# -- errors: the API's JSON shape (server.errors), pages for the rest ----------------------------


def _is_api() -> bool:
    return request.path.startswith("/api")


def _page(status: int, title: str, message: str) -> Response:
    return Response(
        render_template("house_error.html", title=title, message=message),
        status,
        mimetype="text/html",
    )


def _http(exc: HTTPException) -> Response | HTTPException:
    if isinstance(exc, CsrfError):
        if _is_api():
            return error_response(403, "csrf", exc.description or "wrong CSRF token")
        return _page(403, "Please reload", exc.description or "")
    if not _is_api():
        return exc
    code = (exc.name or "error").lower().replace(" ", "_")
    return error_response(exc.code or 500, code, exc.description or exc.name)


def _unavailable(exc: HouseUnavailableError) -> Response:
    if _is_api():
        response = error_response(503, "house_unavailable", str(exc))
    else:
        response = _page(503, "House database unreachable", str(exc))
    response.headers["Retry-After"] = "5"
    return response


def _not_found(exc: LookupError) -> Response:
    message = str(exc.args[0]) if exc.args else "not found"
    return (
        error_response(404, "not_found", message) if _is_api() else _page(404, "Not found", message)
    )


def _malformed(exc: BodyError) -> Response:
    return (
        error_response(400, "malformed", str(exc))
        if _is_api()
        else _page(400, "Bad request", str(exc))
    )


def _errors(app: Flask) -> None:
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(HouseUnavailableError, _unavailable)
    app.register_error_handler(UnknownHouseTableError, _not_found)
    app.register_error_handler(UnknownHouseRecordError, _not_found)
    app.register_error_handler(BodyError, _malformed)
    app.register_error_handler(AuthError, auth_error)
    app.register_error_handler(FeedFullError, feed_full_error)
