"""The JSON API through Flask's test client: every endpoint and every error status."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_app import AUTH, create_table, json_of, make_app, read_events
from werkzeug.test import TestResponse

from scoring.actions import Roll
from server.services import dicepad

TEAMS = {"A": ["Ann"], "B": ["Bob"]}
BLOW = {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]}
JPEG = b"\xff\xd8\xff\xe0a-roll"


def new_table(client: FlaskClient, **body: Any) -> str:
    return create_table(client, {"game": "you-blew-it", "teams": TEAMS} | body)


def error(r: Any, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.data[:300])
    assert r.is_json
    assert r.json["status"] == status
    message: str = r.json["message"]
    assert message
    return message


# -- games and tables ---------------------------------------------------------------------


def test_games_lists_each_game_with_its_house_rules(client: FlaskClient) -> None:
    games = {g["name"]: g for g in json_of(client.get("/api/games"))}
    ybi = games["you-blew-it"]
    assert ybi["title"] == "You Blew It"
    assert ybi["uses_teams"] is True
    target = next(r for r in ybi["rules"] if r["name"] == "ybi.target")
    assert target["default"] == 10000
    assert target["help"]


def test_create_list_and_read_a_table(client: FlaskClient) -> None:
    r = client.post(
        "/api/tables",
        json={"game": "you-blew-it", "teams": TEAMS, "rules": {"ybi.target": 5000}},
        headers=AUTH,
    )
    assert r.status_code == 201
    t = json_of(r)["table"]
    assert r.headers["Location"] == f"/api/tables/{t}"
    assert json_of(r)["rules"]["target"] == 5000
    assert json_of(r)["expecting"]["text"] == "Ann: roll 6 dice"
    listed = json_of(client.get("/api/tables"))
    assert [x["table"] for x in listed] == [t]  # fmt: skip
    assert listed[0]["scores"] == {"A": 0, "B": 0}
    new_table(client)
    assert len(json_of(client.get("/api/tables?limit=1"))) == 1
    error(client.get("/api/tables?limit=0"), 400)
    got = client.get(f"/api/tables/{t}")
    assert json_of(got)["table"] == t
    assert json_of(got)["seq"] == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"game": "you-blew-it"}, "either players"),
        ({"game": "you-blew-it", "players": ["a"], "teams": TEAMS}, "either players"),
        ({"game": "yahtzee", "players": ["a"]}, "unknown game"),
        ({"game": "you-blew-it", "teams": TEAMS, "colour": "red"}, "unknown field"),
        ({"game": "you-blew-it", "players": ["a", "a"]}, "different"),
        ({"game": "you-blew-it", "players": ["x" * 41]}, "1-40"),
        ({"game": "you-blew-it", "players": ["a\u0007"]}, "control"),
        ({"game": "you-blew-it", "teams": {"A": ["a"], "B": ["a"]}}, "one team"),
        ({"game": "you-blew-it", "teams": {"A": ["a"]}}, "2 teams"),
        ({"game": "you-blew-it", "teams": {"A": ["a"], "A ": ["b"], "B": ["c"]}}, "two teams"),
        ({"game": "you-blew-it", "teams": TEAMS, "rules": {"nope": 1}}, "unknown house rule"),
        ({"game": "you-blew-it", "teams": TEAMS, "rules": {"target": "lots"}}, "whole number"),
        ({"game": "you-blew-it", "teams": TEAMS, "rules": {"target": [1]}}, "value must be"),
        (  # one rule spelled twice: the last one used to win silently
            {"game": "you-blew-it", "teams": TEAMS, "rules": {"target": 5000, "ybi.target": 3000}},
            "given twice",
        ),
        ([1, 2], "JSON object"),
    ],
)
def test_a_bad_new_table_is_400_with_the_reason(
    client: FlaskClient, body: Any, message: str
) -> None:
    r = client.post("/api/tables", json=body, headers=AUTH)
    assert message in error(r, 400)
    assert json_of(client.get("/api/tables")) == []


def test_bodies_must_be_json_objects_of_json_type(client: FlaskClient) -> None:
    url = "/api/tables"
    assert "Content-Type" in error(client.post(url, data="game=bolo", headers=AUTH), 400)
    bad = {"Content-Type": "application/json"} | AUTH
    assert "not valid JSON" in error(client.post(url, data="{nope", headers=bad), 400)
    assert "not valid JSON" in error(client.post(url, data='{"a": NaN}', headers=bad), 400)
    assert "not valid JSON" in error(client.post(url, data=b"\xff\xfe", headers=bad), 400)


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/login", '{"pin": "\\ud800"}'),
        ("actions", '{"type": "reroll", "dice": [], "reason": "\\ud83d"}'),
    ],
)
def test_a_lone_surrogate_in_a_body_is_400_and_changes_nothing(
    client: FlaskClient, url: str, body: str
) -> None:
    """JSON may spell half of a UTF-16 pair, which Python cannot encode: it was a 500 from the
    PIN hash, and from SQLite after the engine had taken the re-roll's reason."""
    t = create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]})
    client.post(
        f"/api/tables/{t}/actions", json={"type": "roll", "dice": [1, 2, 3, 4, 6]}, headers=AUTH
    )
    url = f"/api/tables/{t}/actions" if url == "actions" else url
    r = client.post(url, data=body, headers=AUTH, content_type="application/json")
    assert "surrogate" in error(r, 400)
    assert len(json_of(client.get(f"/api/tables/{t}/log"))) == 1
    assert len(json_of(client.get("/api/tables"))) == 1
    pair = '{"type": "reroll", "dice": [], "reason": "\\ud83c\\udfb2"}'  # a whole pair: a die
    r = client.post(
        f"/api/tables/{t}/actions", data=pair, headers=AUTH, content_type="application/json"
    )
    assert r.status_code == 201
    assert json_of(r)["action"]["reason"] == "\N{GAME DIE}"


def test_oversized_bodies_are_413(client: FlaskClient) -> None:
    t = new_table(client)
    huge = json.dumps({"type": "roll", "dice": [1], "pad": "x" * 70_000})
    r = client.post(
        f"/api/tables/{t}/actions", data=huge, headers=AUTH, content_type="application/json"
    )
    error(r, 413)
    assert json_of(client.get(f"/api/tables/{t}/log")) == []


def test_unknown_tables_and_paths_are_404_and_wrong_methods_405(client: FlaskClient) -> None:
    assert "no table" in error(client.get("/api/tables/zzzzzz"), 404)
    error(client.get("/api/tables/zzzzzz/log"), 404)
    error(client.get("/api/tables/zzzzzz/events"), 404)
    error(client.post("/api/tables/zzzzzz/actions", json=BLOW, headers=AUTH), 404)
    error(client.post("/api/tables/zzzzzz/end", headers=AUTH), 404)
    error(client.get("/api/nothing-here"), 404)
    r = client.get("/api/tables/zzzzzz/actions")
    error(r, 405)
    assert "POST" in r.headers["Allow"]
    error(client.delete("/api/tables"), 405)
    page = client.get("/no-such-page")  # outside /api: Flask's page, for the phone pages
    assert page.status_code == 404
    assert not page.is_json


# -- actions ------------------------------------------------------------------------------


def test_actions_apply_and_come_back_with_the_table(client: FlaskClient) -> None:
    t = new_table(client)
    r = client.post(
        f"/api/tables/{t}/actions", json={"type": "roll", "dice": [1, 1, 1, 5, 2, 3]}, headers=AUTH
    )
    assert r.status_code == 201
    assert json_of(r)["seq"] == 1
    assert json_of(r)["source"] == "phone"
    assert json_of(r)["table"]["expecting"]["action"] == "keep"
    r = client.post(
        f"/api/tables/{t}/actions",
        json={"type": "keep", "dice": [1, 1, 1, 5], "source": "button"},
        headers=AUTH,
    )
    assert json_of(r)["highlights"][0]["points"] == 1050
    assert json_of(r)["source"] == "button"
    log = json_of(client.get(f"/api/tables/{t}/log"))
    assert [(e["seq"], e["source"], e["action"]["type"]) for e in log] == [
        (1, "phone", "roll"), (2, "button", "keep")]  # fmt: skip
    assert set(log[0]) == {"seq", "at", "source", "action", "snapshot"}
    assert [e["seq"] for e in json_of(client.get(f"/api/tables/{t}/log?since=1"))] == [2]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"type": "roll", "dice": [7, 1]}, "1-6"),
        ({"type": "roll", "dice": []}, "must not be empty"),
        ({"type": "roll"}, "list of pip values"),
        ({"type": "teleport"}, "unknown action type"),
        ({"dice": [1]}, "unknown action type"),
        ({"type": "bank", "points": 5000}, "unknown field"),
        ({"type": "roll", "dice": [1], "source": "telepathy"}, "source"),
        ({"type": "bid", "count": True, "face": 3}, "whole number"),
        ("roll", "JSON object"),
    ],
)
def test_malformed_actions_are_400_before_the_engine(
    client: FlaskClient, action: Any, message: str
) -> None:
    t = new_table(client)
    r = client.post(f"/api/tables/{t}/actions", json=action, headers=AUTH)
    assert message in error(r, 400)
    assert json_of(client.get(f"/api/tables/{t}/log")) == []


def test_illegal_actions_are_409_with_the_rules_message(client: FlaskClient) -> None:
    t = new_table(client)
    assert "nothing to undo" in error(
        client.post(f"/api/tables/{t}/actions", json={"type": "undo"}, headers=AUTH), 409
    )
    client.post(
        f"/api/tables/{t}/actions", json={"type": "roll", "dice": [1, 1, 1, 5, 2, 3]}, headers=AUTH
    )
    message = error(
        client.post(f"/api/tables/{t}/actions", json={"type": "keep", "dice": [2]}, headers=AUTH),
        409,
    )
    assert message != "illegal"
    assert len(json_of(client.get(f"/api/tables/{t}/log"))) == 1


def test_undo_and_fix_through_the_api(client: FlaskClient) -> None:
    t = new_table(client)

    def post(action: dict[str, Any]) -> TestResponse:
        return client.post(f"/api/tables/{t}/actions", json=action, headers=AUTH)

    post({"type": "roll", "dice": [5, 5, 5, 5, 5, 5]})
    r = post({"type": "fix", "dice": [1, 1, 1, 5, 2, 3]})
    assert json_of(r)["table"]["state"]["current_roll"] == [1, 1, 1, 2, 3, 5]
    post({"type": "keep", "dice": [1, 1, 1, 5]})
    assert json_of(client.get("/api/records?table=" + t))[0]["dice"] == [1, 1, 1, 2, 3, 5]
    r = post({"type": "undo"})
    assert json_of(r)["table"]["expecting"]["action"] == "keep"
    assert json_of(client.get("/api/records?table=" + t)) == []
    assert [e["action"]["type"] for e in json_of(client.get(f"/api/tables/{t}/log"))] == [
        "roll", "fix", "keep", "undo"]  # fmt: skip


def test_end_a_table(client: FlaskClient) -> None:
    t = new_table(client)
    error(client.post(f"/api/tables/{t}/end"), 401)
    r = client.post(f"/api/tables/{t}/end", headers=AUTH)
    assert r.status_code == 200
    assert json_of(r)["action"] == {"type": "end"}
    assert json_of(r)["table"]["ended"]
    assert json_of(client.get("/api/tables"))[0]["over"] is True
    error(client.post(f"/api/tables/{t}/actions", json=BLOW, headers=AUTH), 409)
    error(client.post(f"/api/tables/{t}/end", headers=AUTH), 409)


def test_polling_fallback_since_and_etag(client: FlaskClient) -> None:
    t = new_table(client)
    first = client.get(f"/api/tables/{t}")
    etag = first.headers["ETag"]
    assert client.get(f"/api/tables/{t}", headers={"If-None-Match": etag}).status_code == 304
    client.post(f"/api/tables/{t}/actions", json=BLOW, headers=AUTH)
    again = client.get(f"/api/tables/{t}", headers={"If-None-Match": etag})
    assert again.status_code == 200
    assert json_of(again)["seq"] == 1
    polled = json_of(client.get(f"/api/tables/{t}?since=0"))
    assert [e["seq"] for e in polled["events"]] == [1]
    assert polled["seq"] == 1
    assert json_of(client.get(f"/api/tables/{t}?since=1"))["events"] == []
    assert "whole number" in error(client.get(f"/api/tables/{t}?since=-1"), 400)
    error(client.get(f"/api/tables/{t}/log?since=abc"), 400)
    # digits int() refuses, or too many for it (both were 500s): a plain 400
    for odd in ("\u00b2", "\u0663", "9" * 5000, "99999999999999999999"):
        assert "whole number" in error(
            client.get(f"/api/tables/{t}/log", query_string={"since": odd}), 400
        )
        assert "whole number" in error(client.get("/api/records", query_string={"limit": odd}), 400)


def test_snapshots_are_served_as_jpeg(app: Flask, client: FlaskClient) -> None:
    t = new_table(client)
    dicepad(app).tables.apply(t, Roll((5,) * 6), source="camera", snapshot=JPEG)
    r = client.get(f"/api/tables/{t}/snapshots/1")
    assert r.status_code == 200
    assert r.mimetype == "image/jpeg"
    assert r.data == JPEG
    assert json_of(client.get(f"/api/tables/{t}/log"))[0]["snapshot"] is True
    error(client.get(f"/api/tables/{t}/snapshots/2"), 404)
    error(client.get(f"/api/tables/{t}/snapshots/{'9' * 23}"), 404)  # past SQLite's integers


# -- records, health ----------------------------------------------------------------------


def test_records_wall_and_hiding(app: Flask, client: FlaskClient) -> None:
    t = new_table(client)
    dicepad(app).tables.apply(t, Roll((1,) * 6), source="camera", snapshot=JPEG)
    client.post(f"/api/tables/{t}/actions", json={"type": "keep", "dice": [1] * 6}, headers=AUTH)
    (rec,) = json_of(client.get("/api/records?game=you-blew-it&kind=roll"))
    assert rec["player"] == "Ann"
    assert rec["table"] == t
    assert rec["snapshot"] == 1
    assert json_of(client.get("/api/records?game=bolo")) == []
    error(client.post(f"/api/records/{rec['id']}/hide"), 401)
    assert json_of(client.post(f"/api/records/{rec['id']}/hide", headers=AUTH))["hidden"] is True
    assert json_of(client.get("/api/records")) == []
    error(client.get("/api/records?hidden=1"), 401)
    assert json_of(client.get("/api/records?hidden=1", headers=AUTH))[0]["hidden"] is True
    r = client.post(f"/api/records/{rec['id']}/hide", json={"hidden": False}, headers=AUTH)
    assert json_of(r)["hidden"] is False
    assert len(json_of(client.get("/api/records"))) == 1
    error(client.post("/api/records/nope.1.0/hide", headers=AUTH), 404)
    error(client.post(f"/api/records/{rec['id']}/hide", json={"hidden": "yes"}, headers=AUTH), 400)
    error(client.get("/api/records?limit=0"), 400)


def test_health_reports_components(app: Flask, client: FlaskClient) -> None:
    r = client.get("/api/health")
    assert r.status_code == 200
    assert json_of(r)["ok"] is True
    assert json_of(r)["components"]["camera"]["detail"].startswith("no camera")
    assert json_of(r)["components"]["store"]["ok"] is True
    dicepad(app).health.report("camera", False, "cable out")  # not critical: still ok
    assert json_of(client.get("/api/health"))["ok"] is True
    dicepad(app).health.report("pad", False, "pad loop stuck", critical=True)
    r = client.get("/api/health")
    assert r.status_code == 503
    assert json_of(r)["components"]["pad"]["detail"] == "pad loop stuck"


# -- the live feed ------------------------------------------------------------------------


def test_events_stream_snapshot_then_live(app: Flask, client: FlaskClient) -> None:
    t = new_table(client)
    r = client.get(f"/api/tables/{t}/events", buffered=False)
    assert r.status_code == 200
    assert r.mimetype == "text/event-stream"
    assert r.headers["Cache-Control"] == "no-cache"
    ((sid, kind, data),) = read_events(r, 1)
    assert (sid, kind, data["table"], data["seq"]) == ("0", "state", t, 0)
    client.post(f"/api/tables/{t}/actions", json=BLOW, headers=AUTH)
    entry, state = read_events(r, 2)
    assert entry[:2] == ("1", "entry")
    assert entry[2]["action"] == BLOW
    assert state[:2] == ("1", "state")
    assert state[2]["expecting"]["text"] == "Bob: roll 6 dice"
    r.close()
    assert dicepad(app).feed.stats().clients == 0


def test_events_catch_up_after_last_event_id(client: FlaskClient) -> None:
    t = new_table(client)
    for _ in range(3):
        client.post(f"/api/tables/{t}/actions", json=BLOW, headers=AUTH)
    r = client.get(f"/api/tables/{t}/events", headers={"Last-Event-ID": "1"}, buffered=False)
    got = read_events(r, 3)
    assert [(i, k) for i, k, _ in got] == [("2", "entry"), ("3", "entry"), ("3", "state")]
    r.close()
    r = client.get(f"/api/tables/{t}/events?last_event_id=3", buffered=False)
    assert [k for _, k, _ in read_events(r, 1)] == ["state"]  # nothing missed
    r.close()
    error(client.get(f"/api/tables/{t}/events", headers={"Last-Event-ID": "x"}), 400)
    for odd in ("\u00b2", "9" * 5000):
        error(client.get(f"/api/tables/{t}/events", headers={"Last-Event-ID": odd}), 400)
        error(client.get(f"/api/tables/{t}/events", query_string={"last_event_id": odd}), 400)


def test_the_feed_is_bounded_503_past_the_limit(tmp_path: Path) -> None:
    app = make_app(tmp_path, max_feed_clients=1)
    client = app.test_client()
    t = new_table(client)
    first = client.get(f"/api/tables/{t}/events", buffered=False)
    read_events(first, 1)
    r = client.get(f"/api/tables/{t}/events")
    assert "full" in error(r, 503)
    assert r.headers["Retry-After"]
    first.close()
    second = client.get(f"/api/tables/{t}/events", buffered=False)
    assert second.status_code == 200
    second.close()
    dicepad(app).close()


def test_keepalives_flow_while_the_table_is_quiet(client: FlaskClient) -> None:
    t = new_table(client)
    r = client.get(f"/api/tables/{t}/events", buffered=False)
    chunks = iter(r.response)
    seen = [next(chunks) for _ in range(3)]  # retry, state, then a keep-alive after 0.2 s
    assert seen[2] == b": keep-alive\n\n"
    r.close()


# -- every game, storage failure, fuzzing -------------------------------------------------


def test_every_game_is_offered_and_can_be_started(client: FlaskClient) -> None:
    offered = {g["name"]: g["uses_teams"] for g in json_of(client.get("/api/games"))}
    assert set(offered) == {"you-blew-it", "bolo", "bar-dice", "gords"}
    for name, teams in offered.items():
        body = {"game": name} | ({"teams": TEAMS} if teams else {"players": ["Ann", "Bob"]})
        r = client.post("/api/tables", json=body, headers=AUTH)
        assert r.status_code == 201, r.json
        assert json_of(r)["game"] == name
        assert json_of(r)["expecting"]["text"]


def test_bolo_high_rollers_reach_the_wall_with_their_snapshot(
    app: Flask, client: FlaskClient
) -> None:
    r = client.post("/api/tables", json={"game": "bolo", "players": ["Ann", "Bob"]},
                    headers=AUTH)  # fmt: skip
    t = json_of(r)["table"]
    dicepad(app).tables.apply(t, Roll((6,) * 5), source="camera", snapshot=JPEG)
    client.post(f"/api/tables/{t}/actions", json={"type": "keep", "dice": [6] * 5}, headers=AUTH)
    (rec,) = json_of(client.get("/api/records?game=bolo&kind=high_roller"))
    assert (rec["player"], rec["points"], rec["dice"]) == ("Ann", 5000, [6] * 5)
    assert rec["snapshot"] == 1
    assert client.get(f"/api/tables/{t}/snapshots/{rec['snapshot']}").data == JPEG
    assert [x.id for x in dicepad(app).records.high_rollers()] == [rec["id"]]


def test_a_database_failure_is_503_and_changes_nothing(app: Flask, client: FlaskClient) -> None:
    t = new_table(client)
    dicepad(app).store.close()  # as if the disk went away
    r = client.post(f"/api/tables/{t}/actions", json=BLOW, headers=AUTH)
    assert "nothing was saved" in error(r, 503)
    view = json_of(client.get(f"/api/tables/{t}"))
    assert view["seq"] == 0
    assert view["expecting"]["text"] == "Ann: roll 6 dice"
    assert client.get("/api/health").status_code == 503


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=8)
    | st.dictionaries(
        st.sampled_from(["type", "dice", "count", "face", "players", "teams", "game",
                         "rules", "source", "order", "name", "value", "x"]),
        inner, max_size=5),
    max_leaves=20,
)  # fmt: skip
TYPES = st.sampled_from(["roll", "keep", "bank", "reroll", "fix", "undo", "bid", "call",
                         "reveal", "stand", "lineup", "rule", "end", "nope"])  # fmt: skip


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Flask, str]]:
    """One app for every example: fast, and the table's state accumulates across them."""
    app = make_app(tmp_path_factory.mktemp("fuzz"))
    yield app, new_table(app.test_client())
    dicepad(app).close()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=JSON_VALUES
    | st.fixed_dictionaries({"type": TYPES}, optional={"dice": JSON_VALUES, "x": JSON_VALUES})
)
def test_random_bodies_never_cause_a_server_error(fuzz_app: tuple[Flask, str], body: Any) -> None:
    app, t = fuzz_app
    client = app.test_client()
    before = json_of(client.get(f"/api/tables/{t}"))["seq"]
    r = client.post(f"/api/tables/{t}/actions", json=body, headers=AUTH)
    assert r.status_code in {201, 400, 409}, (body, r.json)
    assert json_of(client.get(f"/api/tables/{t}"))["seq"] == before + (r.status_code == 201)
    r = client.post("/api/tables", json=body, headers=AUTH)
    assert r.status_code in {201, 400}, (body, r.json)
