"""Players (issue 36): a held-out Bolo game played through the API gives each player's
games, wins, turns and blown turns exactly, a best roll at least their best on the wall, and
points given away never below 0; names match however typed; only the PIN holder hides a
player; the figures follow an undo; a start derives the rows a database lacks."""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_app import AUTH, make_app

from server.players.api import players
from server.players.names import display, player_key, valid_key
from server.services import dicepad

BOLO_RULES = {"target": 2000, "final_round": False}
# Ann banks 1000; Bob BOLOs; Cy rolls a misread (undone), then 350 below the entry minimum
# (passed); Ann keeps to hot dice and BOLOs; Bob keeps four 1s (2000) and wins.
HELD_OUT: list[dict[str, Any]] = [
    {"type": "roll", "dice": [1, 1, 1, 2, 3]}, {"type": "keep", "dice": [1, 1, 1]},
    {"type": "bank"},
    {"type": "roll", "dice": [2, 3, 4, 6, 6]},
    {"type": "roll", "dice": [1, 1, 1, 1, 1]}, {"type": "undo"},
    {"type": "roll", "dice": [3, 3, 3, 4, 6]}, {"type": "keep", "dice": [3, 3, 3]},
    {"type": "roll", "dice": [5, 2]}, {"type": "keep", "dice": [5]}, {"type": "bank"},
    {"type": "roll", "dice": [1, 2, 3, 6, 6]}, {"type": "keep", "dice": [1]},
    {"type": "roll", "dice": [5, 2, 3, 4]}, {"type": "fix", "dice": [5, 2, 3, 6]},
    {"type": "keep", "dice": [5]},
    {"type": "roll", "dice": [1, 1, 1]}, {"type": "keep", "dice": [1, 1, 1]},
    {"type": "roll", "dice": [2, 2, 3, 4, 6]},
    {"type": "roll", "dice": [1, 1, 1, 1, 2]}, {"type": "keep", "dice": [1, 1, 1, 1]},
    {"type": "bank"},
]  # fmt: skip
BANK_1000: list[dict[str, Any]] = [
    {"type": "roll", "dice": [1, 1, 1, 2, 3]},
    {"type": "keep", "dice": [1, 1, 1]},
    {"type": "bank"},
]
EXPECTED = {  # name: (games, wins, turns, blown, best turn)
    "Ann": (1, 0, 2, 1, 1000),
    "Bob": (1, 1, 2, 1, 2000),
    "Cy": (1, 0, 1, 0, 0),
}


def play(client: FlaskClient, body: dict[str, Any], actions: list[dict[str, Any]]) -> str:
    table = str(client.post("/api/tables", json=body, headers=AUTH).get_json()["table"])
    for action in actions:
        r = client.post(f"/api/tables/{table}/actions", json=action, headers=AUTH)
        assert r.status_code == 201, (action, r.get_json())
    return table


def settled(app: Flask) -> None:
    assert players(app).wait(20), "the players' worker did not finish"


def test_names_match_case_space_and_unicode_forms() -> None:
    composed, decomposed = "Ren\u00e9", "Rene\u0301"
    assert composed != decomposed
    assert player_key(composed) == player_key(decomposed) == player_key(" RENÉ ")
    assert player_key("Ann") == player_key("ann ") == player_key("ANN") == "ann"
    assert player_key("Mary  Ann") == player_key("mary ann")
    assert display(" Rene\u0301  Z ") == unicodedata.normalize("NFC", "René Z")
    assert valid_key("   ") is None
    assert valid_key("a\x00b") is None


def test_a_held_out_bolo_game_gives_each_players_figures_exactly(
    app: Flask, client: FlaskClient
) -> None:
    body = {"game": "bolo", "players": ["Ann", "Bob", "Cy"], "rules": BOLO_RULES}
    table = play(client, body, HELD_OUT)
    assert client.get(f"/api/tables/{table}").get_json()["outcome"]["winners"] == ["Bob"]
    settled(app)
    listed = {p["name"]: p for p in client.get("/api/players").get_json()}
    assert set(listed) == set(EXPECTED)
    wall = client.get("/api/records?game=bolo&limit=500").get_json()
    for name, (games, wins, turns, blown, best_turn) in EXPECTED.items():
        assert (listed[name]["games"], listed[name]["wins"]) == (games, wins)
        got = client.get(f"/api/players/{name}").get_json()
        assert (got["games"], got["wins"], got["turns"], got["blown"]) == (
            games,
            wins,
            turns,
            blown,
        )
        assert got["best_turn"] == best_turn
        rolls = [r["points"] for r in wall if r["player"] == name and r["kind"] == "roll"]
        best = got["best_roll"]["points"] if got["best_roll"] else 0
        assert best >= max(rolls, default=0)
        assert got["given_away"] is not None
        assert got["given_away"] >= 0
        assert got["by_game"]["bolo"]["turns"] == turns
        (last,) = got["last_games"]
        assert last["table"] == table
        assert last["url"] == f"/t/{table}"
        assert last["rounds"][0] == 0
        assert len(last["rounds"]) == turns + 1
        assert all(d["cost"] > 0 for d in last["costly"])
    ann = client.get("/api/players/ann").get_json()
    assert ann["best_roll"]["points"] == 1000  # 1 1 1, not the undone 1 1 1 1 1 (Cy's anyway)
    assert ann["last_games"][0]["rounds"] == [0, 1000, 1000]


def test_an_undo_is_followed_and_the_page_reads_no_replay(app: Flask, client: FlaskClient) -> None:
    body = {"game": "bolo", "players": ["Ann", "Bob"]}
    table = play(client, body, BANK_1000)
    settled(app)
    assert client.get("/api/players/Ann").get_json()["turns"] == 1
    client.post(f"/api/tables/{table}/actions", json={"type": "undo"}, headers=AUTH)
    settled(app)
    assert client.get("/api/players/Ann").get_json()["turns"] == 0
    replays = dicepad(app).tables.replays
    client.get("/players/Ann")
    client.get("/api/players/Ann")
    assert dicepad(app).tables.replays == replays


def test_one_player_across_tables_however_the_name_was_typed(
    app: Flask, client: FlaskClient
) -> None:
    bank = BANK_1000
    play(client, {"game": "bolo", "players": ["Ren\u00e9", "Bob"]}, bank)
    play(client, {"game": "bolo", "players": ["Bob", "rene\u0301 "]}, [*bank, *bank])
    settled(app)
    names = [p["name"] for p in client.get("/api/players").get_json()]
    assert sorted(names) == ["Bob", "rené"]  # the latest table's spelling, NFC
    got = client.get("/api/players/REN%C3%89").get_json()
    assert got["turns"] == 2
    assert got["tables"] == 2


def test_only_the_pin_holder_hides_a_player(app: Flask, client: FlaskClient) -> None:
    play(
        client,
        {"game": "bolo", "players": ["Ann", "Bob"]},
        [{"type": "roll", "dice": [2, 3, 4, 6, 6]}],
    )
    settled(app)
    assert client.post("/api/players/Ann/hide").status_code == 401
    assert (
        client.post("/api/players/Ann/hide", headers={"X-Dicepad-Pin": "0000"}).status_code == 403
    )
    page = client.get("/players/Ann")
    assert page.status_code == 200
    assert b"/players/ann/hide" not in page.data
    assert client.post("/players/ann/hide", data={"hidden": "1"}).status_code == 403  # no CSRF
    r = client.post("/api/players/ANN/hide", headers=AUTH)
    assert r.get_json() == {"player": "ann", "hidden": True}
    assert [p["name"] for p in client.get("/api/players").get_json()] == ["Bob"]
    assert client.get("/api/players/Ann").status_code == 404
    assert client.get("/players/Ann").status_code == 404
    assert b"Ann" not in client.get("/players").data
    r = client.post("/api/players/Ann/hide", json={"hidden": False}, headers=AUTH)
    assert r.status_code == 200
    assert client.get("/api/players/Ann").status_code == 200
    assert client.post("/api/players/Nobody/hide", headers=AUTH).status_code == 404


def test_the_pin_holder_hides_through_the_page_form(app: Flask, client: FlaskClient) -> None:
    play(
        client,
        {"game": "bolo", "players": ["Ann", "Bob"]},
        [{"type": "roll", "dice": [2, 3, 4, 6, 6]}],
    )
    settled(app)
    assert client.post("/api/login", json={"pin": AUTH["X-Dicepad-Pin"]}).status_code == 200
    page = client.get("/players/Ann").get_data(as_text=True)
    token = page.split('name="csrf" value="')[1].split('"')[0]
    r = client.post("/players/ann/hide", data={"csrf": token, "hidden": "1"})
    assert r.status_code == 302
    assert client.get("/api/players/Ann").status_code == 404
    assert "hidden" in client.get("/players/Ann").get_data(as_text=True)  # the PIN holder's view


def test_a_player_name_is_escaped_everywhere(app: Flask, client: FlaskClient) -> None:
    evil = "<b>x</b>&\"'"
    play(
        client,
        {"game": "bolo", "players": [evil, "Bob"]},
        BANK_1000,
    )
    settled(app)
    for path in ("/players", f"/players/{evil}"):
        html = client.get(path).get_data(as_text=True)
        assert "<b>x</b>" not in html, path
        assert "&lt;b&gt;x&lt;/b&gt;" in html, path


def test_the_table_page_draws_the_score_by_round(app: Flask, client: FlaskClient) -> None:
    table = play(
        client,
        {"game": "bolo", "players": ["Ann", "Bob"]},
        BANK_1000,
    )
    html = client.get(f"/t/{table}").get_data(as_text=True)
    assert '<svg class="chart-svg"' in html
    assert "<polyline" in html
    assert 'href="/players/ann"' in html
    assert "style=" not in html.split("chart-svg")[1].split("</figure>")[0]  # the CSP


def test_a_start_derives_the_rows_a_database_lacks(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    client = app.test_client()
    play(
        client,
        {"game": "bolo", "players": ["Ann", "Bob"]},
        BANK_1000,
    )
    settled(app)
    dicepad(app).close()
    db = sqlite3.connect(tmp_path / "dicepad.sqlite3")
    with db:
        db.execute("DELETE FROM player_tables")
        db.execute("DELETE FROM player_derived")
    db.close()
    again = make_app(tmp_path)
    try:
        settled(again)
        assert again.test_client().get("/api/players/Ann").get_json()["turns"] == 1
    finally:
        dicepad(again).close()


@pytest.mark.parametrize("game", ["you-blew-it", "bar-dice", "gords"])
def test_every_game_counts_games_and_wins(app: Flask, client: FlaskClient, game: str) -> None:
    body: dict[str, Any] = {"game": game, "players": ["Ann", "Bob"]}
    if game == "you-blew-it":
        body = {"game": game, "teams": {"A": ["Ann"], "B": ["Bob"]}}
    table = play(client, body, [])
    client.post(f"/api/tables/{table}/end", headers=AUTH)
    settled(app)
    got = client.get("/api/players/Ann").get_json()
    assert (got["games"], got["wins"], got["last_games"][0]["over"]) == (1, 0, True)
