"""A player hidden by a table server's own PIN holder is hidden at the house too, on real
PostgreSQL: each Pi ships its whole set of hidden players (at every connection and after every
hide or show), the house keeps it per house name, and a player hidden at ANY member is off the
house's public listing, page and API, while the house PIN holder still sees them, marked with
the table servers that hid them. Showing them at the house does not undo a Pi's hide; showing
them on the Pi does. A hide made while the house is down arrives once it is back; a lone Pi
hides as before and never loads the PostgreSQL driver."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from house_fill import Event, add_member, add_table
from house_fill import ship as fill
from house_shipping import arrived, house_app, house_status
from pg_cluster import PgCluster, wait_until
from server_app import AUTH, json_of, login, make_app
from test_house_players import derived
from test_house_server import EVIL, PIN, PIN_HEADER
from test_house_server import make_app as make_house_app
from test_players import BANK_1000, play, settled

from server.house import ship
from server.house.app import house
from server.house.migrate import connect
from server.services import dicepad

REPO = Path(__file__).resolve().parent.parent


def public(client: FlaskClient) -> dict[str, Any]:
    """The house's public players list by folded name."""
    return {p["name"].casefold().strip(): p for p in json_of(client.get("/api/house/players"))}


def held(url: str) -> set[tuple[str, str]] | None:
    """The house's copy of every member's hidden players (None: not set up yet, or down)."""
    try:
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT house_name, player FROM players_hidden_at_table")
            return {(str(r[0]), str(r[1])) for r in rows.fetchall()}
    except psycopg.Error:
        return None


def test_a_player_hidden_on_a_pi_is_hidden_at_the_house_until_shown_there(
    pis: tuple[Flask, Flask], house_url: str, house_client: tuple[Flask, FlaskClient]
) -> None:
    front, back = pis
    app, client = house_client
    t1 = play(front.test_client(), {"game": "bolo", "players": ["Ann", "Bob"]}, BANK_1000)
    t2 = play(back.test_client(), {"game": "bolo", "players": ["ann ", "Dee"]}, BANK_1000)
    assert wait_until(lambda: arrived(front, house_url, "front-bar", t1), timeout=20)
    assert wait_until(lambda: arrived(back, house_url, "back-room", t2), timeout=20)
    settled(front)  # a Pi hides only a player it has rows of
    settled(back)
    assert wait_until(lambda: {"ann", "bob", "dee"} <= set(public(client)), timeout=30)
    assert public(client)["ann"]["hidden_at_tables"] == []
    wall = json_of(client.get("/api/house/records"))

    # the front bar's PIN holder hides Ann: gone from the house's public pages
    front_client = front.test_client()
    assert front_client.post("/api/players/ANN/hide", headers=AUTH).status_code == 200
    assert wait_until(lambda: "ann" not in public(client), timeout=20)
    assert {"bob", "dee"} <= set(public(client))
    assert client.get("/api/house/players/Ann").status_code == 404
    assert client.get("/players/ann%20").status_code == 404
    assert 'href="/players/ann"' not in client.get("/players").get_data(as_text=True)
    assert 'href="/players/bob"' in client.get("/players").get_data(as_text=True)
    # as on the Pi's own wall, a hide covers the players' pages, not the games played
    assert json_of(client.get("/api/house/records")) == wall
    # only the house PIN holder sees them, marked with the table server that hid them
    assert client.get("/api/house/players?hidden=1").status_code == 401
    assert client.get("/api/house/players/Ann?hidden=1").status_code == 401
    listed = json_of(client.get("/api/house/players?hidden=1", headers=PIN_HEADER))
    ann = next(p for p in listed if p["name"].casefold().strip() == "ann")
    assert (ann["hidden"], ann["hidden_at_tables"]) == (False, ["front-bar"])
    got = json_of(client.get(ann["url"], headers=PIN_HEADER))
    assert (got["hidden"], got["hidden_at_tables"], got["tables"]) == (False, ["front-bar"], 2)
    pin_holder = app.test_client()
    assert pin_holder.post("/api/house/login", json={"pin": PIN}).status_code == 200
    page = pin_holder.get("/players/Ann").get_data(as_text=True)
    assert "Hidden by the PIN holder at: front-bar." in page
    assert "hidden at front-bar</small>" in pin_holder.get("/players?hidden=1").get_data(
        as_text=True
    )
    assert 'href="/players/ann"' not in pin_holder.get("/players").get_data(as_text=True)

    # the house PIN's own hide is another decision: showing at the house lifts no Pi's hide
    hide = "/api/house/players/Ann/hide"
    assert client.post(hide, headers=PIN_HEADER).status_code == 200
    shown = client.post(hide, json={"hidden": False}, headers=PIN_HEADER)
    assert shown.get_json() == {"player": "ann", "hidden": False}
    assert client.get("/api/house/players/Ann").status_code == 404

    # hidden at ANY member: the back room hides her too, the front bar shows her (its page
    # form), and she stays hidden until the back room shows her as well
    assert back.test_client().post("/api/players/ann/hide", headers=AUTH).status_code == 200
    assert wait_until(lambda: ("back-room", "ann") in (held(house_url) or ()), timeout=20)
    token = login(front_client)
    form = front_client.post("/players/ann/hide", data={"csrf": token, "hidden": "0"})
    assert form.status_code == 302
    assert wait_until(lambda: held(house_url) == {("back-room", "ann")}, timeout=20)
    assert client.get("/api/house/players/Ann").status_code == 404
    again = json_of(client.get("/api/house/players/Ann?hidden=1", headers=PIN_HEADER))
    assert again["hidden_at_tables"] == ["back-room"]
    off = back.test_client().post("/api/players/Ann/hide", json={"hidden": False}, headers=AUTH)
    assert off.status_code == 200
    assert wait_until(lambda: "ann" in public(client), timeout=20)
    back_again = json_of(client.get("/api/house/players/Ann"))
    assert (back_again["hidden"], back_again["hidden_at_tables"]) == (False, [])
    assert client.get("/players/Ann").status_code == 200
    assert held(house_url) == set()


def test_hides_and_shows_made_while_the_house_was_down_arrive_once_it_is_back(
    tmp_path: Path, own_pg_cluster: PgCluster
) -> None:
    url = own_pg_cluster.new_database()
    pi = house_app(tmp_path / "pi", url, "back-bar")
    client = pi.test_client()
    try:
        table = play(client, {"game": "bolo", "players": ["Ann", "Bob"]}, BANK_1000)
        assert wait_until(lambda: arrived(pi, url, "back-bar", table), timeout=20)
        settled(pi)
        assert client.post("/api/players/Bob/hide", headers=AUTH).status_code == 200
        assert wait_until(lambda: held(url) == {("back-bar", "bob")}, timeout=20)
        own_pg_cluster.stop()
        started = time.monotonic()
        assert client.post("/api/players/Ann/hide", headers=AUTH).status_code == 200
        shown = client.post("/api/players/Bob/hide", json={"hidden": False}, headers=AUTH)
        assert shown.status_code == 200
        assert time.monotonic() - started < 5  # the Pi never waits on the house
        assert wait_until(lambda: house_status(pi).offline_since is not None, timeout=20)
        own_pg_cluster.start()
        assert wait_until(lambda: held(url) == {("back-bar", "ann")}, timeout=20)
    finally:
        dicepad(pi).close()
    app = make_house_app(url)
    try:
        derived(app)
        listed = public(app.test_client())
        assert "bob" in listed
        assert "ann" not in listed
    finally:
        house(app).close()


def test_hides_made_before_the_pi_had_a_house_ship_at_its_first_connection(
    tmp_path: Path, house_url: str
) -> None:
    lone = make_app(tmp_path / "pi")
    play(lone.test_client(), {"game": "bolo", "players": ["Ann", "Bob"]}, BANK_1000)
    settled(lone)
    assert lone.test_client().post("/api/players/Ann/hide", headers=AUTH).status_code == 200
    dicepad(lone).close()
    pi = house_app(tmp_path / "pi", house_url, "back-bar")
    try:
        assert wait_until(lambda: held(house_url) == {("back-bar", "ann")}, timeout=20)
    finally:
        dicepad(pi).close()


def test_the_set_ships_whole_idempotently_and_only_under_its_claim(house_url: str) -> None:
    conn = connect(house_url, autocommit=True)
    try:
        ship.claim(conn, "front-bar", "me", "")
        assert ship.ship_hidden_players(conn, "front-bar", "me", ["bob", "ann"]) is True
        first = conn.execute("SELECT player, at FROM players_hidden_at_table ORDER BY 1").fetchall()
        assert [r[0] for r in first] == ["ann", "bob"]
        # shipped again (a commit lost on the way back): nothing changes, not even when
        assert ship.ship_hidden_players(conn, "front-bar", "me", ["ann", "bob", "ann"]) is False
        again = conn.execute("SELECT player, at FROM players_hidden_at_table ORDER BY 1").fetchall()
        assert again == first
        assert ship.ship_hidden_players(conn, "front-bar", "me", ["bob"]) is True
        with pytest.raises(ship.ClaimLostError):
            ship.ship_hidden_players(conn, "front-bar", "another pi", [])
        assert held(house_url) == {("front-bar", "bob")}
        # a Pi replaced: the new one's set is the truth for its name
        assert ship.release(conn, "front-bar")
        ship.claim(conn, "front-bar", "new pi", "")
        assert ship.ship_hidden_players(conn, "front-bar", "new pi", []) is True
        assert held(house_url) == set()
    finally:
        conn.close()


def test_the_table_servers_that_hid_a_player_are_escaped(house_url: str) -> None:
    conn = connect(house_url, autocommit=True)
    try:
        add_member(conn, EVIL, "javascript:alert(1)")
        add_table(conn, EVIL, "t1", players=["Ann", "Bob"])
        fill(conn, EVIL, "t1", [Event(a["type"], a) for a in BANK_1000])
        ship.ship_hidden_players(conn, EVIL, f"instance-{EVIL}", ["ann"])
    finally:
        conn.close()
    # started after the shipping, so its first sweep has the table and derived() waits for
    # it: a house already running derives on the NOTIFY, which its worker does not know of
    # until the LISTEN thread hands it over (derived() could return before that)
    app = make_house_app(house_url)
    try:
        derived(app)
        client = app.test_client()
        assert client.get("/players/Ann").status_code == 404
        assert client.post("/api/house/login", json={"pin": PIN}).status_code == 200
        escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
        for path, mark in (
            ("/players/Ann", f"Hidden by the PIN holder at: {escaped}."),
            ("/players?hidden=1", f"hidden at {escaped}</small>"),
        ):
            html = client.get(path).get_data(as_text=True)
            assert EVIL not in html, path
            assert mark in html, path
    finally:
        house(app).close()


def test_a_lone_pi_hides_a_player_without_the_house_or_its_driver(tmp_path: Path) -> None:
    """A guard, not the feature: without ``--house`` a hide is the Pi's alone, and nothing of
    the house (or psycopg) is imported for it."""
    code = (
        "import sys; sys.path.insert(0, 'tests'); from pathlib import Path;"
        "from server_app import AUTH, make_app; from test_players import BANK_1000, play, settled;"
        "from server.players.api import players; from server.players.service import PlayerService;"
        f"app = make_app(Path({str(tmp_path)!r})); c = app.test_client();"
        "play(c, {'game': 'bolo', 'players': ['Ann', 'Bob']}, BANK_1000); settled(app);"
        "assert type(players(app)) is PlayerService;"
        "assert c.post('/api/players/Ann/hide', headers=AUTH).status_code == 200;"
        "assert [p['name'] for p in c.get('/api/players').get_json()] == ['Bob'];"
        "assert c.get('/api/players/Ann').status_code == 404;"
        "mods = [m for m in sys.modules if m.startswith(('psycopg', 'server.house'))];"
        "assert not mods, mods"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICEPAD_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
