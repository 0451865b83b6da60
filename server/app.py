"""The Flask app factory: ``create_app(config)`` builds one complete, independent dicepad.

No module-level state: everything lives on the app (``app.extensions["dicepad"]``, see
:mod:`server.services`), so tests run many apps side by side on temporary data directories.
Building the app opens (and migrates) the database and brings back every table (replaying the
logs of those in play; see :mod:`server.tables`).
"""

from __future__ import annotations

from datetime import timedelta

from flask import Flask, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from server import api, errors, pages
from server.auth import SESSION_SECONDS, PinAuth, load_or_create_secret
from server.config import Config
from server.feed.hub import Feed
from server.health import Health
from server.limiter import FailureLimiter
from server.pad import api as pad_api
from server.pages import players as player_pages
from server.players import api as players_api
from server.players.service import PlayerService
from server.records import Records
from server.services import EXTENSION, Dicepad
from server.store import Store
from server.tables import TableService

SECRET_FILE = "session.key"


def create_app(config: Config) -> Flask:
    """A ready app on ``config.data_dir`` (created 0700 when missing)."""
    config.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    app = Flask(__name__)
    app.config.update(
        DEBUG=False,  # whatever FLASK_DEBUG says: no debugger, no tracebacks, ever
        TESTING=False,
        SECRET_KEY=load_or_create_secret(config.data_dir / SECRET_FILE),
        MAX_CONTENT_LENGTH=config.max_content_length,
        SESSION_COOKIE_NAME="dicepad_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=SESSION_SECONDS),
        DICEPAD=config,
    )
    store = Store(config.database_path)
    feed = Feed(max_clients=config.max_feed_clients, queue_size=config.feed_queue_size)
    try:
        parts = _parts(config, store, feed)
    except BaseException:  # a bad PIN, an unloadable table: no connection left open behind
        feed.close()
        store.close()
        raise
    app.extensions[EXTENSION] = parts
    errors.init_app(app)
    app.before_request(_refuse_oversized)
    app.register_blueprint(api.bp)
    app.register_blueprint(pad_api.bp)
    pages.init_app(app)
    players_api.init_app(app, _players(parts))  # the players' rows, kept as tables change
    player_pages.init_app(app)
    return app


def _parts(config: Config, store: Store, feed: Feed) -> Dicepad:
    """The app's services on an open ``store``: the tables loaded, the PIN set, health told."""
    tables = TableService(
        store,
        feed,
        clock=config.clock,
        max_snapshot_bytes=config.max_snapshot_bytes,
        keepalive_seconds=config.keepalive_seconds,
        idle_after=config.idle_after,
    )
    limiter = FailureLimiter(
        max_failures=config.pin_max_failures,
        window=config.pin_window_seconds,
        lockout=config.pin_lockout_seconds,
        monotonic=config.monotonic,
        max_total=config.pin_max_failures_total,
    )
    auth = PinAuth(store, limiter, pin=config.pin, scrypt_n=config.pin_scrypt_n)
    health = Health(store, feed, monotonic=config.monotonic)
    problems = tables.load()
    count = len(tables.summaries())
    loaded = f"{count} tables, {tables.replays} replayed (finished and idle games wait)"
    health.report("tables", not problems, "; ".join(problems) or loaded)
    if config.manual_only:
        health.report("camera", True, "no camera (--camera none): manual entry only")
    else:
        health.report("camera", False, f"camera {config.camera!r}: waiting for the pad service")
    if config.house_url is None:
        return Dicepad(config, store, feed, tables, Records(store, config.clock), auth, health)
    from server.house import link  # only now: a lone Pi never loads the PostgreSQL driver

    house = link.start(config, store, tables, health)
    records = link.ShippedRecords(store, config.clock, house)
    return Dicepad(config, store, feed, tables, records, auth, health, house)


def _players(parts: Dicepad) -> PlayerService:
    """The players' service; with ``--house`` one that tells the shipper when the PIN holder
    hides or shows a player (as :class:`server.house.link.ShippedRecords` does for records)."""
    if parts.house is None:
        return PlayerService(parts.store, clock=parts.config.clock)
    from server.house import link  # loaded already: the shipper is running

    return link.ShippedPlayers(parts.store, parts.config.clock, parts.house)


def _refuse_oversized() -> None:
    """413 for a declared body over the limit, even where the endpoint would not read it
    (as waitress does in front): nothing happens on the strength of an oversized request."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if request.content_length is not None and request.content_length > limit:
        raise RequestEntityTooLarge(f"the body may be at most {limit} bytes")
