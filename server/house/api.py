"""The house's JSON API (``/api/house``) and ``/api/health``: reading is public; hiding a
record from the house wall needs the house PIN (:mod:`server.house.guard`).

Handlers only translate: query parameters are checked here (a clear 400 naming the
parameter), the queries are :mod:`server.house.reads`, errors map to statuses in
:mod:`server.house.app` with the table server's error shape (:mod:`server.errors`).
"""

from __future__ import annotations

from collections.abc import Mapping

from flask import Blueprint, Response, jsonify, request

from scoring import games
from server import bodies
from server.errors import BodyError
from server.feed.hub import Stream
from server.feed.messages import sse
from server.feed.waitress import waitress_sink
from server.hardening import rotate_csrf_token
from server.house import guard
from server.house.listen import TOPIC, tables_message
from server.house.pool import HouseUnavailableError
from server.house.reads import TABLE_STATES, RecordQuery, TableState

bp = Blueprint("house_api", __name__, url_prefix="/api")

MAX_TEXT = 200  #: a name or filter in a query or path (longer is no house name, no game)


def text_arg(args: Mapping[str, str], name: str) -> str | None:
    """An optional text filter: absent or empty is none; control characters (PostgreSQL
    refuses NUL) or an overlong value are a 400 naming it."""
    raw = args.get(name)
    if not raw:
        return None
    return checked(raw, name)


def checked(value: str, what: str) -> str:
    if len(value) > MAX_TEXT or not value.isprintable():
        raise BodyError(f"{what} must be printable text of at most {MAX_TEXT} characters")
    return value


def game_arg(args: Mapping[str, str]) -> str | None:
    game = text_arg(args, "game")
    if game is not None and game not in games.NAMES:
        raise BodyError(f"game must be one of {', '.join(games.NAMES)}")
    return game


def flag_arg(args: Mapping[str, str], name: str) -> bool:
    raw = args.get(name, "")
    if raw not in {"", "0", "1", "true", "false"}:
        raise BodyError(f"{name} must be 1 or 0")
    return raw in {"1", "true"}


# -- tables -----------------------------------------------------------------------------------


@bp.get("/house/tables")
def tables() -> Response:
    """Every table of every house name, the most recently acted on first:
    ``?house_name=&state=all|playing|idle|over&limit=&offset=``."""
    args = request.args
    state = args.get("state") or "all"
    if state not in TABLE_STATES:
        raise BodyError(f"state must be one of {', '.join(TABLE_STATES)}")
    lines = guard.parts().reads.tables(
        house_name=text_arg(args, "house_name"),
        state=_state(state),
        limit=bodies.int_arg(args, "limit", 100, 1, 1000),
        offset=bodies.int_arg(args, "offset", 0, 0, 10_000_000),
    )
    return jsonify([line.to_json() for line in lines])


def _state(text: str) -> TableState:
    for state in TABLE_STATES:
        if state == text:
            return state
    raise BodyError(f"state must be one of {', '.join(TABLE_STATES)}")


@bp.get("/house/tables/<house_name>/<table_id>")
def table(house_name: str, table_id: str) -> Response:
    line = guard.parts().reads.table(checked(house_name, "house name"), checked(table_id, "table"))
    return jsonify(line.to_json())


@bp.get("/house/tables/<house_name>/<table_id>/log")
def log(house_name: str, table_id: str) -> Response:
    """The events as the house holds them (``?since=SEQ``), as a table's own ``/log``."""
    since = bodies.int_arg(request.args, "since", 0, 0, 2**62)
    rows = guard.parts().reads.log(
        checked(house_name, "house name"), checked(table_id, "table"), since
    )
    return jsonify(rows)


# -- the wall ---------------------------------------------------------------------------------


@bp.get("/house/records")
def records() -> Response:
    """The house wall biggest first: ``?game=&kind=&house_name=&table=&limit=&offset=``;
    ``?hidden=1`` (house PIN) includes the hidden ones."""
    args = request.args
    include_hidden = flag_arg(args, "hidden")
    if include_hidden:
        guard.require_pin()
    query = RecordQuery(
        game=game_arg(args),
        kind=text_arg(args, "kind"),
        house_name=text_arg(args, "house_name"),
        table=text_arg(args, "table"),
        include_hidden=include_hidden,
        limit=bodies.int_arg(args, "limit", 50, 1, 500),
        offset=bodies.int_arg(args, "offset", 0, 0, 1_000_000),
    )
    return jsonify([r.to_json() for r in guard.parts().reads.records(query)])


@bp.post("/house/records/<house_name>/<record_id>/hide")
def hide(house_name: str, record_id: str) -> Response:
    """Hide a record from the house wall (``{"hidden": false}`` shows it again)."""
    guard.require_pin()
    hidden = bodies.parse_hidden(bodies.json_body(request)) if request.content_length else True
    name, rid = checked(house_name, "house name"), checked(record_id, "record id")
    guard.parts().reads.set_hidden(name, rid, hidden)
    return jsonify({"house_name": name, "id": rid, "hidden": hidden})


# -- the PIN ----------------------------------------------------------------------------------


@bp.post("/house/login")
def login() -> Response:
    """Trade the house PIN for a session cookie."""
    pin = bodies.parse_pin(bodies.json_body(request))
    version = guard.parts().pin.attempt(guard.address(), pin)
    guard.log_in(version)
    return jsonify({"authenticated": True, "csrf": rotate_csrf_token()})


# -- live -------------------------------------------------------------------------------------


@bp.get("/house/events")
def events() -> Response:
    """Server-sent events across every table: the whole board on (re)connection
    (``tables``), then one ``table`` per shipped batch (``{"house_name", "table", "seq",
    "line"}``) and ``records`` when the house wall changes; keep-alives while quiet."""
    parts = guard.parts()
    if request.method == "HEAD":
        response = Response(b"", mimetype="text/event-stream")
    else:
        sub = parts.feed.subscribe(TOPIC)  # first: nothing slips between board and feed
        try:
            try:
                initial = [tables_message(parts.reads.board())]
            except HouseUnavailableError as exc:  # the listener resyncs once it is back
                initial = [sse("unavailable", {"message": str(exc)})]
        except BaseException:
            parts.feed.unsubscribe(sub)
            raise
        stream = Stream(
            sub,
            initial,
            keepalive_seconds=parts.config.keepalive_seconds,
            sink=waitress_sink(request.environ),
        )
        response = Response(stream, mimetype="text/event-stream", direct_passthrough=True)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


# -- health -----------------------------------------------------------------------------------


@bp.get("/health")
def health() -> Response:
    """The database (migrated, answering) and the live feed (listening): 503 unless both."""
    parts = guard.parts()
    database_ok, problem = True, "answering"
    try:
        parts.reads.ping()
    except HouseUnavailableError as exc:
        database_ok, problem = False, str(exc)
    listening = parts.listener.problem is None
    stats = parts.feed.stats().to_json()
    report = {
        "ok": database_ok and listening,
        "components": {
            "database": {"ok": database_ok, "detail": problem},
            "feed": {
                "ok": listening,
                "detail": "listening" if listening else f"not listening: {parts.listener.problem}",
            }
            | stats,
        },
    }
    response = jsonify(report)
    response.status_code = 200 if report["ok"] else 503
    return response
