"""The JSON API (``/api``): reading is public, every change needs the table PIN.

Handlers only translate: they parse and validate the request (:mod:`server.bodies`), call the
table service, and shape the answer. Errors are mapped to statuses in :mod:`server.errors`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, session
from werkzeug.exceptions import Conflict, NotFound

from scoring import games
from scoring.errors import RulesError
from scoring.rules import describe_rules
from server import bodies
from server.auth_errors import NotAuthenticatedError
from server.errors import BodyError
from server.feed.messages import live_view
from server.feed.waitress import waitress_sink
from server.pad.service import EXTENSION as PAD_EXTENSION
from server.pad.service import PadService
from server.services import dicepad

bp = Blueprint("api", __name__, url_prefix="/api")

PIN_HEADER = "X-Dicepad-Pin"
SESSION_KEY = "session_token"
"""The cookie's key for the PIN holder's session token (``PinAuth.open_session``)."""


def _address() -> str:
    return request.remote_addr or "unknown"


def require_pin() -> None:
    """Allow the request if it carries the right PIN or a logged-in session.

    401 with neither, 403 with a wrong PIN, 429 while this address is locked out.
    """
    auth = dicepad().auth
    pin = request.headers.get(PIN_HEADER)
    if pin is not None:
        auth.attempt(_address(), pin)
        return
    if auth.session_ok(session.get(SESSION_KEY)):
        return
    raise NotAuthenticatedError(f"this needs the table PIN: send {PIN_HEADER} or log in")


def _created(body: dict[str, Any]) -> Response:
    response = jsonify(body)
    response.status_code = 201
    return response


# -- session ------------------------------------------------------------------------------


@bp.get("/login")
def login_status() -> Response:
    return jsonify({"authenticated": dicepad().auth.session_ok(session.get(SESSION_KEY))})


@bp.post("/login")
def login() -> Response:
    """Trade the PIN for a session cookie (phone pages log in once)."""
    pin = bodies.parse_pin(bodies.json_body(request))
    auth = dicepad().auth
    version = auth.attempt(_address(), pin)
    token = auth.open_session(version, address=_address(), replacing=session.get(SESSION_KEY))
    session.clear()
    session[SESSION_KEY] = token
    session.permanent = True
    return jsonify({"authenticated": True})


@bp.post("/logout")
def logout() -> Response:
    dicepad().auth.end_session(session.get(SESSION_KEY))
    session.clear()
    return jsonify({"authenticated": False})


# -- games --------------------------------------------------------------------------------


@bp.get("/games")
def list_games() -> Response:
    """Every game this install can run, with its house rules (for the new-game form)."""
    out = []
    for name in games.NAMES:
        try:
            game = games.find(name)
        except ImportError:  # a game whose module is not installed is simply not offered
            continue
        out.append(
            {
                "name": game.name,
                "title": game.title,
                "uses_teams": game.uses_teams,
                "rules": describe_rules(game.rules_type, game.rules_prefix),
            }
        )
    return jsonify(out)


# -- tables -------------------------------------------------------------------------------


@bp.get("/tables")
def list_tables() -> Response:
    """The tables, newest first (``?limit=``, default 100)."""
    limit = bodies.int_arg(request.args, "limit", 100, 1, 10_000)
    return jsonify(dicepad().tables.summaries()[:limit])


@bp.post("/tables")
def create_table() -> Response:
    require_pin()
    new = bodies.parse_new_table(bodies.json_body(request))
    try:
        games.find(new.game)
    except (ValueError, ImportError) as exc:
        raise BodyError(str(exc)) from None
    try:
        view = dicepad().tables.create(
            new.game, players=new.players, teams=new.teams, rules=new.rules
        )
    except RulesError:
        raise
    except ValueError as exc:  # the game refuses the line-up
        raise BodyError(str(exc)) from None
    response = _created(view)
    response.headers["Location"] = f"/api/tables/{view['table']}"
    return response


@bp.get("/tables/<table_id>")
def get_table(table_id: str) -> Response:
    """The table now; ``?since=SEQ`` adds the log entries after SEQ (the polling fallback);
    ``?history=last`` cuts the history as a live ``state`` message does (what a polling phone
    needs, bounded however long the game). A GET without ``since`` carries an ETag (the seq
    and the pad state) so pollers get 304 while nothing changes."""
    from server.pages.board import pad_key  # here: server.pages imports this module

    tables = dicepad().tables
    view = tables.view(table_id)
    history = request.args.get("history", "all")
    if history not in ("all", "last"):
        raise BodyError(f"history must be 'all' or 'last', got {history!r}")
    if "since" in request.args:
        since = bodies.int_arg(request.args, "since", 0, 0, 1 << 62)
        view = live_view(view) if history == "last" else view
        return jsonify(view | {"events": tables.log(table_id, since)})
    response = jsonify(live_view(view) if history == "last" else view)
    response.set_etag(f"{table_id}-{view['seq']}-{pad_key(view)}-{history}", weak=True)
    response.make_conditional(request)
    return response


@bp.get("/tables/<table_id>/log")
def get_log(table_id: str) -> Response:
    since = bodies.int_arg(request.args, "since", 0, 0, 1 << 62)
    return jsonify(dicepad().tables.log(table_id, since))


@bp.get("/tables/<table_id>/snapshots/<int(max=9223372036854775807):seq>")  # SQLite's
def get_snapshot(table_id: str, seq: int) -> Response:
    jpeg = dicepad().tables.snapshot(table_id, seq)
    if jpeg is None:
        raise NotFound(f"table {table_id} has no snapshot for event {seq}")
    return jpeg_response(jpeg, cache_control="public, max-age=31536000, immutable")


def jpeg_response(jpeg: bytes, *, cache_control: str) -> Response:
    """A photo of a throw: a logged roll's never changes (cache it for good); the pad's
    photo awaiting confirmation is replaced by the next throw (``no-store``)."""
    response = Response(jpeg, mimetype="image/jpeg")
    response.headers["Cache-Control"] = cache_control
    return response


@bp.get("/tables/<table_id>/events")
def events(table_id: str) -> Response:
    """Server-sent events: catch-up after ``Last-Event-ID``, the table now, then live
    (under waitress written by the feed's one writer thread, :mod:`server.feed.writer`)."""
    d = dicepad()
    raw = request.headers.get("Last-Event-ID", request.args.get("last_event_id"))
    last: int | None = None
    if raw is not None and raw.strip():
        last = bodies.whole_number(raw.strip())
        if last is None:
            raise BodyError("Last-Event-ID must be an event number")
    if request.method == "HEAD":  # the head alone: no feed slot held for a body never sent
        d.tables.view(table_id)  # 404 for an unknown table
        response = Response(b"", mimetype="text/event-stream")
    else:
        stream = d.tables.watch(table_id, last, sink=waitress_sink(request.environ))
        response = Response(stream, mimetype="text/event-stream", direct_passthrough=True)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def pad_photo(table_id: str) -> bytes | None:
    """The photo of the throw the pad asks ``table_id`` about (None: no camera, or no photo)."""
    service = current_app.extensions.get(PAD_EXTENSION)
    return service.pending_snapshot(table_id) if isinstance(service, PadService) else None


def pad_answer(table_id: str, view: Mapping[str, Any]) -> AbstractContextManager[None]:
    """Apply the answer to the pad's question inside this: the dice of the throw asked about
    are taught to the house set with the answer's values (``server.pad.house``)."""
    service = current_app.extensions.get(PAD_EXTENSION)
    house = service.house if isinstance(service, PadService) else None
    notice = (view.get("pad") or {}).get("notice")
    if house is None or not isinstance(notice, Mapping):
        return contextlib.nullcontext()
    return house.answering(table_id, notice.get("throw"))


@bp.post("/tables/<table_id>/actions")
def post_action(table_id: str) -> Response:
    require_pin()
    d = dicepad()
    view = d.tables.view(table_id)  # 404 before reading the body
    action, source, answers = bodies.parse_action(bodies.json_body(request))
    photo = None
    teach: AbstractContextManager[None] = contextlib.nullcontext()
    if answers is not None:  # the pad's question answered: its throw's photo goes with it
        from server.pages import ask  # here: the pages import this module (the session key)

        if ask.asked(view, answers) is None:
            raise Conflict(ask.ANSWERED_ELSEWHERE)
        photo = pad_photo(table_id)
        teach = pad_answer(table_id, view)  # ... and its dice teach the house
    with teach:
        applied = d.tables.apply(table_id, action, source=source, snapshot=photo)
    return _created(
        applied.entry
        | {"highlights": [h.to_json() for h in applied.highlights], "table": applied.table}
    )


@bp.post("/tables/<table_id>/end")
def end_table(table_id: str) -> Response:
    require_pin()
    applied = dicepad().tables.end(table_id, source="phone")
    return jsonify(applied.entry | {"table": applied.table})


# -- records ------------------------------------------------------------------------------


@bp.get("/records")
def list_records() -> Response:
    """The wall: ``?game=&kind=&table=&limit=``; ``?hidden=1`` (PIN) includes hidden ones."""
    args = request.args
    include_hidden = args.get("hidden") in {"1", "true"}
    if include_hidden:
        require_pin()
    rows = dicepad().records.wall(
        game=args.get("game") or None,
        kind=args.get("kind") or None,
        table_id=args.get("table") or None,
        include_hidden=include_hidden,
        limit=bodies.int_arg(args, "limit", 50, 1, 500),
    )
    return jsonify([r.to_json() for r in rows])


@bp.post("/records/<record_id>/hide")
def hide_record(record_id: str) -> Response:
    """Hide a bogus record from the wall (or show it again with ``{"hidden": false}``)."""
    require_pin()
    hidden = bodies.parse_hidden(bodies.json_body(request)) if request.content_length else True
    dicepad().records.set_hidden(record_id, hidden)
    return jsonify({"id": record_id, "hidden": hidden})


# -- health -------------------------------------------------------------------------------


@bp.get("/health")
def health() -> Response:
    report = dicepad().health.to_json()
    response = jsonify(report)
    response.status_code = 200 if report["ok"] else 503
    return response
