"""The API fuzzer's strategies (attacks on every route) and oracle, for ``test_fuzz_api.py``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flask import Flask
from hypothesis import strategies as st
from werkzeug.routing import IntegerConverter, Rule

from scoring import games
from scoring.actions import action_from_json
from scoring.errors import IllegalActionError, MalformedActionError
from scoring.history import apply_logged, replay
from server.auth_errors import LockedOutError
from server.services import dicepad

PIN = "8080"
MAX_BODY = 16 * 1024
GOOD_ADDRESS = "192.168.1.10"  #: only ever sends the right PIN: it never gets locked out
ADDRESSES = [GOOD_ADDRESS, "192.168.1.66", "10.0.0.7", "::1", "unknown"]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"]
SETUPS: list[dict[str, Any]] = [
    {"game": "you-blew-it", "teams": {"A": ["Ann", "Al"], "B": ["Bob"]}},
    {"game": "bolo", "players": ["Ann", "Bob", "Cy"]},
    {"game": "bar-dice", "players": ["Ann", "Bob"]},
    {"game": "gords", "players": ["Ann", "Bob", "Cy"]},
]

# -- strategies ---------------------------------------------------------------------------

KEYS = [
    "type",
    "dice",
    "count",
    "face",
    "players",
    "teams",
    "game",
    "rules",
    "source",
    "order",
    "pin",
    "hidden",
    "table",
    "name",
    "x",
    "__proto__",
    "<b>",
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-10, 40)
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["<script>alert(1)</script>", "\u202e", "\x00", "💥" * 30, "A" * 200])
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=7)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=25,
)
DICE = st.lists(st.integers(1, 6), min_size=1, max_size=6)
ACTIONS = st.one_of(
    st.builds(lambda d: {"type": "roll", "dice": d}, DICE),
    st.builds(lambda d: {"type": "keep", "dice": d}, DICE),
    st.builds(lambda d: {"type": "reroll", "dice": d}, DICE),
    st.builds(lambda d: {"type": "fix", "dice": d}, DICE),
    st.builds(lambda d: {"type": "reveal", "dice": d}, DICE),
    st.builds(
        lambda c, f: {"type": "bid", "count": c, "face": f}, st.integers(0, 12), st.integers(0, 7)
    ),
    st.sampled_from([{"type": t} for t in ("bank", "call", "stand", "undo", "undo", "end")]),
    st.builds(
        lambda s: {"type": "roll", "dice": [1, 5], "source": s},
        st.sampled_from(["camera", "button", "replay", "phone", "admin"]),
    ),
)
NEW_TABLES = st.one_of(
    st.sampled_from(SETUPS),
    st.builds(
        lambda g, p: {"game": g, "players": p},
        st.sampled_from(["bolo", "gords", "bar-dice", "chess"]),
        st.lists(st.text(min_size=1, max_size=45), min_size=0, max_size=14),
    ),
    st.builds(
        lambda r: {"game": "bolo", "players": ["A", "B"], "rules": r},
        st.dictionaries(st.sampled_from(["bolo.target", "target", "x", "<i>"]), SCALARS),
    ),
)


@dataclass(frozen=True)
class Body:
    kind: str  #: none | json | raw | form | huge
    value: Any = None


BODIES = st.one_of(
    st.just(Body("none")),
    st.builds(lambda v: Body("json", v), ACTIONS),
    st.builds(lambda v: Body("json", v), ACTIONS),
    st.builds(lambda v: Body("json", v), NEW_TABLES),
    st.builds(lambda v: Body("json", v), JSON_VALUES),
    st.builds(lambda v: Body("json", {"pin": v}), st.text(max_size=70) | st.just(PIN)),
    st.builds(lambda v: Body("raw", v), st.binary(max_size=64)),
    st.builds(lambda n: Body("raw", b"[" * n + b"]" * n), st.integers(1, 20_000)),
    st.builds(
        lambda n: Body("raw", b'{"type": "bid", "count": ' + b"9" * n + b"}"),
        st.integers(4000, 6000),
    ),
    st.sampled_from([Body("raw", b"NaN"), Body("raw", b'{"type":"roll","dice":[1e999]}')]),
    st.builds(
        lambda v: Body("form", v),
        st.dictionaries(
            st.sampled_from(["csrf", "pin", "next", "game", "players", "hidden", "x"]),
            st.text(max_size=40),
        ),
    ),
    st.builds(lambda n: Body("huge", n), st.integers(MAX_BODY + 1, 4 * MAX_BODY)),
)


@dataclass(frozen=True)
class Attack:
    rule_index: int
    path_values: dict[str, Any]
    junk_path: str | None
    method: str
    query: dict[str, str]
    pin: str | None
    address: str
    headers: dict[str, str]
    content_type: str
    body: Body


def _pick(data: st.DataObject, choices: list[Any]) -> Any:
    """One of ``choices``, whose length depends on the app's state: Hypothesis must make the
    same draws whatever that state is, so draw an index and wrap it."""
    i = data.draw(st.integers(0, 255))
    return choices[i % len(choices)] if choices else None


def _table_ref(data: st.DataObject, app: Flask) -> str:
    summaries = dicepad(app).tables.summaries()
    live = [t["table"] for t in summaries if not t["over"]]
    want_live, want_real = _often(data, 7), _often(data, 7)
    some_live, some_table = _pick(data, live), _pick(data, [t["table"] for t in summaries])
    junk = data.draw(st.text(min_size=1, max_size=12).filter(lambda s: "/" not in s))
    if want_live and some_live:
        return str(some_live)
    return str(some_table) if want_real and some_table else junk


def _often(data: st.DataObject, tenths: int) -> bool:
    """True about ``tenths`` times in ten (Hypothesis has no weights; this is one)."""
    return data.draw(st.integers(0, 9)) < tenths


def attacks(app: Flask, data: st.DataObject) -> Attack:
    rules = _rules(app)
    writes = [i for i, r in enumerate(rules) if r.endpoint == "api.post_action"]
    index = data.draw(st.sampled_from(writes)) if _often(data, 4) else None
    if index is None:
        index = data.draw(st.integers(0, len(rules) - 1))
    rule = rules[index]
    values: dict[str, Any] = {}
    for name in sorted(rule.arguments):
        if name == "table_id":
            values[name] = _table_ref(data, app)
        elif name == "seq":
            values[name] = data.draw(st.integers(0, 2**40))
        elif name == "record_id":
            ids = [r.id for r in dicepad(app).records.wall(include_hidden=True, limit=20)]
            real, junk_id = _pick(data, [*ids, "nope"]), data.draw(st.text(min_size=1))
            values[name] = real if _often(data, 6) else junk_id
        elif isinstance(getattr(rule, "_converters", {}).get(name), IntegerConverter):
            values[name] = data.draw(st.integers(0, 2**40))  # <int:...> (the teaching page's)
        else:  # static files and anything added later
            values[name] = data.draw(st.sampled_from(["dicepad.css", "../app.py"]) | st.text())
    junk = None
    if _often(data, 1):
        junk = data.draw(
            st.text(max_size=30).map(lambda s: "/api/" + s)
            | st.sampled_from(
                [
                    "/api",
                    "/api/tables/../../etc/passwd",
                    "//x",
                    "/console",
                    "/t/%00",
                    "/static/../server/app.py",
                    "/?__debugger__=yes",
                ]
            )
        )
    own = sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}) or ["GET"]
    method = data.draw(st.sampled_from(own if _often(data, 8) else METHODS))
    query = data.draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "since",
                    "limit",
                    "hidden",
                    "game",
                    "kind",
                    "table",
                    "kiosk",
                    "last_event_id",
                    "next",
                    "x",
                ]
            ),
            st.sampled_from(
                [
                    "0",
                    "1",
                    "-1",
                    "3",
                    "99999999999999999999999",
                    "9" * 5000,
                    "\u00b2",
                    "true",
                    "",
                    "//evil.example",
                    "<script>",
                ]
            )
            | st.text(max_size=8),
            max_size=3,
        )
    )
    if _often(data, 7):
        pin: str | None = PIN
    else:
        pin = data.draw(st.sampled_from([None, "0000", "8080 ", ""]) | st.text(max_size=70))
    address = GOOD_ADDRESS if _often(data, 5) else data.draw(st.sampled_from(ADDRESSES))
    if address == GOOD_ADDRESS and pin not in (PIN, None):
        pin = PIN
    headers = data.draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "Last-Event-ID",
                    "X-CSRF-Token",
                    "If-None-Match",
                    "Origin",
                    "X-Forwarded-For",
                    "Accept",
                ]
            ),
            st.sampled_from(["1", "x", "*", "http://evil.example", "\u00b2", "9" * 5000])
            | st.text(max_size=10),
            max_size=2,
        )
    )
    if _often(data, 8):
        content_type = "application/json"
    else:
        content_type = data.draw(
            st.sampled_from(
                [
                    "text/plain",
                    "application/x-www-form-urlencoded",
                    "",
                    "application/json; charset=latin-1",
                ]
            )
        )
    if rule.endpoint == "api.post_action" and _often(data, 7):
        body = Body("json", _fitting_action(data, app, values.get("table_id")))
    else:
        body = data.draw(BODIES)
    return Attack(index, values, junk, method, query, pin, address, headers, content_type, body)


def _fitting_action(data: st.DataObject, app: Flask, table_id: object) -> Any:
    """An action that fits what the table expects now (so that play moves on): a throw of as
    many dice as it waits for, one it lists as legal (not ``end``), or any action."""
    dice = data.draw(st.lists(st.integers(1, 6), min_size=6, max_size=6))
    choice = data.draw(st.integers(0, 2))
    anything = data.draw(ACTIONS)
    tables = dicepad(app).tables
    if not isinstance(table_id, str) or table_id not in tables:
        return anything
    view = tables.view(table_id)
    listed = _pick(data, [a for a in view["legal"] if a["type"] != "end"])
    kind, n = view["expecting"].get("action"), view["expecting"].get("dice") or 0
    throw = {"type": kind, "dice": dice[:n]} if kind in ("roll", "reveal") and n <= 6 else None
    options = [o for o in (throw, listed, anything) if o is not None]
    return options[min(choice, len(options) - 1)]


def _rules(app: Flask) -> list[Rule]:
    return sorted(app.url_map.iter_rules(), key=lambda r: r.rule)


# -- the oracle ---------------------------------------------------------------------------


def _logs(app: Flask) -> dict[str, list[dict[str, Any]]]:
    tables = dicepad(app).tables
    return {t["table"]: tables.log(t["table"]) for t in tables.summaries()}


def _replay_matches(app: Flask, table_id: str) -> None:
    """The table's state is what the rules engine makes of its log (the server's cache and
    its store agree with an independent replay)."""
    tables = dicepad(app).tables
    view = tables.view(table_id)
    log = tables.log(table_id)
    assert view["seq"] == len(log)
    game, start = _start(view)
    state = replay(game, start, [action_from_json(e["action"]) for e in log])
    assert game.state_to_json(state) == view["state"], table_id


def _start(view: dict[str, Any]) -> tuple[Any, Any]:
    game = games.find(view["game"])
    setup = view["setup"]
    if "teams" in setup:
        return game, game.new(teams=setup["teams"], rules=view["rules"])
    return game, game.new(players=setup["players"], rules=view["rules"])


def _engine_accepts(app: Flask, table_id: str, body: Any) -> bool | None:
    """Would the rules engine take ``body`` on this table now? ``None`` when it is not a
    well-formed action for a live table (then 400/409 are both fine)."""
    if not isinstance(body, dict) or body.get("source", "phone") not in (
        "camera",
        "phone",
        "button",
        "replay",
    ):
        return None
    tables = dicepad(app).tables
    if table_id not in tables or tables.view(table_id)["problem"]:
        return None
    try:
        action = action_from_json({k: v for k, v in body.items() if k != "source"})
    except (MalformedActionError, ValueError, TypeError):
        return None
    view = tables.view(table_id)
    game, start = _start(view)
    standing = [action_from_json(e["action"]) for e in tables.log(table_id)]
    try:
        apply_logged(game, start, standing, action)
    except IllegalActionError:
        return False
    return True


def _locked(app: Flask, address: str) -> bool:
    try:
        dicepad(app).auth.limiter.check(address)
    except LockedOutError:
        return True
    return False


def _send(app: Flask, attack: Attack) -> tuple[int, Any, str]:
    rule = _rules(app)[attack.rule_index]
    if attack.junk_path is not None:
        path = attack.junk_path
    else:
        adapter = app.url_map.bind("localhost")
        path = str(adapter.build(rule.endpoint, attack.path_values))
    headers = dict(attack.headers)
    if attack.pin is not None:
        headers["X-Dicepad-Pin"] = attack.pin
    kwargs: dict[str, Any] = {}
    body = attack.body
    if body.kind == "json":
        kwargs["data"] = json.dumps(body.value)
    elif body.kind in ("raw", "form"):
        kwargs["data"] = body.value
    elif body.kind == "huge":
        kwargs["data"] = b"[" + b"1," * (body.value // 2) + b"1]"
    if body.kind in ("json", "raw", "huge") and attack.content_type:
        headers["Content-Type"] = attack.content_type
    client = app.test_client()
    try:
        r = client.open(
            path,
            method=attack.method,
            query_string=None if "?" in path else attack.query,
            headers=headers,
            environ_base={"REMOTE_ADDR": attack.address},
            buffered=False,
            **kwargs,
        )
    except (UnicodeEncodeError, ValueError):  # a header no HTTP client could send (newline,
        return -1, None, path  # non-Latin-1): the test client refuses to build the request
    try:
        if r.mimetype == "text/event-stream":
            first = bytes(next(iter(r.iter_encoded()), b""))
            assert attack.method == "HEAD" or first.startswith(b"retry:"), first
            payload: Any = None
        else:
            payload = r.get_json(silent=True) if r.is_json else r.get_data()
    finally:
        r.close()
    return r.status_code, payload, path
