"""Players across the house (issue 36, the house part) on real PostgreSQL: the house derives
each player's rows from the logs the Pis shipped, with the table servers' own derivation, so
one player's figures over two Pis are exactly the sum of what each Pi's ``/api/players``
gives; an undo shipped later is derived again; a start derives what is missing or stale;
only the house PIN holder hides a player; names people typed stay text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from house_fill import Event, add_member, add_table, ship
from house_shipping import arrived
from pg_cluster import wait_until
from server_app import AUTH, json_of
from test_house_server import EVIL, PIN, PIN_HEADER
from test_house_server import make_app as make_house_app
from test_players import BANK_1000, BOLO_RULES, HELD_OUT, play, settled

from server.house.app import house
from server.house.migrate import connect

#: "ann " wins a Bolo game to 2000 at the back room: four aces, banked
ANN_WINS: list[dict[str, Any]] = [
    {"type": "roll", "dice": [1, 1, 1, 1, 2]},
    {"type": "keep", "dice": [1, 1, 1, 1]},
    {"type": "bank"},
]
SUMMED = ("games", "wins", "tables", "turns", "blown", "rated_turns", "decisions")


def derived(app: Flask) -> None:
    assert house(app).players.wait(30), "the house's players' worker did not finish"


def _shipped(app: Flask, url: str, name: str, table: str) -> None:
    assert wait_until(lambda: arrived(app, url, name, table), timeout=20), f"{name}/{table}"


def test_one_player_on_two_pis_is_the_sum_of_what_each_pi_gives(
    pis: tuple[Flask, Flask], house_url: str
) -> None:
    front, back = pis
    t1 = play(
        front.test_client(),
        {"game": "bolo", "players": ["Ann", "Bob", "Cy"], "rules": BOLO_RULES},
        HELD_OUT,
    )
    t2 = play(
        back.test_client(), {"game": "bolo", "players": ["ann ", "Dee"], "rules": BOLO_RULES},
        ANN_WINS,
    )  # fmt: skip
    _shipped(front, house_url, "front-bar", t1)
    _shipped(back, house_url, "back-room", t2)
    settled(front)
    settled(back)
    mine = [a.test_client().get("/api/players/Ann").get_json() for a in (front, back)]
    assert [m["wins"] for m in mine] == [0, 1]  # the game at the back is Ann's
    app = make_house_app(house_url)
    try:
        derived(app)
        client = app.test_client()
        listed = client.get("/api/house/players").get_json()
        ann = [p for p in listed if p["name"].casefold() == "ann"]
        assert len(ann) == 1, listed  # one player, however it was typed
        assert (ann[0]["games"], ann[0]["wins"]) == (2, 1)
        got = client.get(ann[0]["url"]).get_json()
        assert got == client.get("/api/house/players/ANN").get_json()
        for field in SUMMED:
            assert got[field] == mine[0][field] + mine[1][field], field
        assert got["best_turn"] == max(m["best_turn"] for m in mine)
        assert got["best_roll"]["points"] == max(m["best_roll"]["points"] for m in mine)
        points = sum(m["average_turn"] * m["turns"] for m in mine)
        assert got["average_turn"] == pytest.approx(points / got["turns"], abs=0.1)
        # each game exactly as its own Pi gives it, with its Pi and its scoreboard there
        games = {g["house_name"]: g for g in got["last_games"]}
        assert set(games) == {"front-bar", "back-room"}
        for name, pi, table in (("front-bar", mine[0], t1), ("back-room", mine[1], t2)):
            theirs = pi["last_games"][0]
            ours = games[name]
            assert ours["url"] == f"http://{name}.local:8080/t/{table}"
            assert {k: v for k, v in ours.items() if k not in ("url", "house_name")} == {
                k: v for k, v in theirs.items() if k != "url"
            }
        assert got["by_game"]["bolo"]["turns"] == got["turns"]
        bob = client.get("/api/house/players/bob").get_json()
        assert (bob["games"], bob["wins"], bob["turns"]) == (1, 1, 2)
        page = client.get("/players/ann").get_data(as_text=True)
        assert 'id="turns">' + str(got["turns"]) in page
        assert '<svg class="chart-svg"' in page
        assert f'href="http://back-room.local:8080/t/{t2}"' in page
        assert client.get("/players").status_code == 200
    finally:
        house(app).close()


def test_an_undo_shipped_later_is_derived_again(
    pis: tuple[Flask, Flask], house_url: str, house_client: tuple[Flask, FlaskClient]
) -> None:
    front, _ = pis
    app, client = house_client
    table = play(front.test_client(), {"game": "bolo", "players": ["Ann", "Bob"]}, BANK_1000)
    _shipped(front, house_url, "front-bar", table)

    def turns() -> int | None:
        r = client.get("/api/house/players/Ann")
        return r.get_json()["turns"] if r.status_code == 200 else None

    assert wait_until(lambda: turns() == 1, timeout=20)  # woken by the shipped batch's NOTIFY
    undo = front.test_client().post(
        f"/api/tables/{table}/actions", json={"type": "undo"}, headers=AUTH
    )
    assert undo.status_code == 201
    assert wait_until(lambda: turns() == 0, timeout=20)
    derived(app)
    done = house(app).players.derived
    for path in ("/players/Ann", "/api/house/players/Ann", "/players", "/api/house/players"):
        assert client.get(path).status_code == 200
    assert house(app).players.derived == done  # a page reads the rows: no replay


def _bolo_table(conn: psycopg.Connection[Any], name: str, table: str, player: str) -> None:
    add_table(conn, name, table, players=[player, "Bob"])
    ship(conn, name, table, [Event(a["type"], a) for a in BANK_1000])


def test_a_start_derives_what_is_missing_behind_or_from_other_code(house_url: str) -> None:
    conn = connect(house_url, autocommit=True)
    add_member(conn, "bar-pi", "http://bar-pi.local:8080")
    _bolo_table(conn, "bar-pi", "t1", "Ann")
    app = make_house_app(house_url)
    try:
        derived(app)
        assert app.test_client().get("/api/house/players/ann").get_json()["turns"] == 1
    finally:
        house(app).close()
    # shipped while the house server was down; and rows made by other code
    ship(conn, "bar-pi", "t1", [Event(a["type"], a) for a in BANK_1000[:1]])
    _bolo_table(conn, "bar-pi", "t2", "Ann")
    conn.execute("UPDATE player_tables SET turns = 99 WHERE table_id = 't1'")  # behind: redone
    app = make_house_app(house_url)
    try:
        derived(app)
        assert app.test_client().get("/api/house/players/ann").get_json()["turns"] == 2
        conn.execute("UPDATE player_tables SET turns = 99")
        conn.execute("UPDATE player_derived SET stamp = 'older code'")
    finally:
        house(app).close()
    app = make_house_app(house_url)
    try:
        derived(app)
        got = app.test_client().get("/api/house/players/ann").get_json()
        assert (got["turns"], got["tables"]) == (2, 2)
    finally:
        house(app).close()
        conn.close()


@pytest.fixture
def filled(house_url: str) -> Iterator[psycopg.Connection[Any]]:
    conn = connect(house_url, autocommit=True)
    add_member(conn, "bar-pi", "http://bar-pi.local:8080")
    add_member(conn, EVIL, "javascript:alert(1)")
    _bolo_table(conn, "bar-pi", "t1", "Ann")
    _bolo_table(conn, EVIL, "t1", EVIL)
    yield conn
    conn.close()


def test_only_the_house_pin_holder_hides_a_player(
    filled: psycopg.Connection[Any], house_client: tuple[Flask, FlaskClient]
) -> None:
    app, client = house_client
    derived(app)
    path = "/api/house/players/Ann/hide"
    assert client.post(path).status_code == 401
    assert client.post(path, headers={"X-Dicepad-House-Pin": "1111"}).status_code == 403
    assert b"/players/ann/hide" not in client.get("/players/Ann").data
    assert client.post("/players/ann/hide", data={"hidden": "1"}).status_code == 403  # no CSRF
    assert client.post("/api/house/players/ANN%20/hide", headers=PIN_HEADER).get_json() == {
        "player": "ann",
        "hidden": True,
    }
    assert "ann" not in [p["name"].casefold() for p in json_of(client.get("/api/house/players"))]
    assert client.get("/api/house/players/Ann").status_code == 404
    assert client.get("/players/Ann").status_code == 404
    assert ">Ann<" not in client.get("/players").get_data(as_text=True)
    # the PIN holder's page session: sees them, shows them again through the form
    assert client.post("/api/house/login", json={"pin": PIN}).status_code == 200
    page = client.get("/players/Ann").get_data(as_text=True)
    assert "hidden</small>" in page
    token = page.split('name="csrf" value="')[1].split('"')[0]
    assert "Ann" in client.get("/players?hidden=1").get_data(as_text=True)
    shown = client.post("/players/ann/hide", data={"csrf": token, "hidden": "0"})
    assert shown.status_code == 302
    assert client.get("/api/house/players/Ann").status_code == 200
    assert client.post("/api/house/players/Nobody/hide", headers=PIN_HEADER).status_code == 404


def test_names_are_escaped_and_links_stay_on_http(
    filled: psycopg.Connection[Any], house_client: tuple[Flask, FlaskClient]
) -> None:
    app, client = house_client
    derived(app)
    evil = client.get("/api/house/players").get_json()
    assert EVIL in [p["name"] for p in evil]
    got = client.get(f"/api/house/players/{EVIL}").get_json()
    assert got["last_games"][0]["url"] is None  # a javascript: member URL is no link
    for path in ("/players", f"/players/{EVIL}"):
        html = client.get(path).get_data(as_text=True)
        assert EVIL not in html, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, path
        assert "javascript:" not in html, path
    assert client.get("/players/nobody%00").status_code == 404
    assert client.get("/api/house/players/nobody").get_json()["error"] == "not_found"


def test_a_player_not_derived_yet_is_said_to_be_on_the_way(
    house_client: tuple[Flask, FlaskClient],
) -> None:
    """A player whose first game just ended has no rows until the worker derives its table:
    while it has tables to work out, the 404 says the house is still at it (and names are
    escaped in it); with nothing pending it is a plain "nobody"."""
    app, client = house_client
    derived(app)
    evil = "<b>Zed</b>"
    plain = client.get(f"/players/{evil}").get_data(as_text=True)
    assert "has played in this house" in plain
    assert "still working out" not in plain
    workers = house(app).players
    workers.stop()  # held, so the table below stays to be worked out
    workers.queue([("front-bar", "t-1")])
    page = client.get(f"/players/{evil}")
    assert page.status_code == 404
    html = page.get_data(as_text=True)
    assert "still working out 1 table." in html
    assert evil not in html
    assert "&lt;b&gt;Zed&lt;/b&gt;" in html
    api = client.get("/api/house/players/Zed")
    assert api.status_code == 404
    assert "yet: still working out 1 table" in api.get_json()["message"]
