"""Every page through Flask's test client: each game's scoreboard, the table list, 404s, caching."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from pages_rig import JPEG, SCRIPTS, act, assert_strict_markup, html, new_table, played
from server_app import login

from scoring.actions import Roll
from server.services import dicepad


def dice_shown(fragment: str) -> list[int]:
    return [int(v) for v in re.findall(r'class="die d(\d)[^"]*" role="img"', fragment)]


# -- every page -----------------------------------------------------------------------------


@pytest.mark.parametrize("game", list(SCRIPTS))
def test_the_scoreboard_of_every_game(client: FlaskClient, game: str) -> None:
    table = played(client, game)
    view = client.get(f"/api/tables/{table}").json
    assert view is not None
    page = html(client.get(f"/t/{table}"))
    assert_strict_markup(page)
    assert view["expecting"]["text"].replace("'", "&#39;") in page
    assert 'src="/static/board.js"' in page
    assert f'data-events-url="/api/tables/{table}/events"' in page
    for name in view["state"]["scores"]:
        assert name in page
    assert "Scorekeeper" not in page  # watchers get no controls
    part = html(client.get(f"/t/{table}/board"))
    assert f'data-seq="{view["seq"]}"' in part
    assert "<html" not in part
    kiosk = html(client.get(f"/t/{table}/kiosk"))
    assert "kiosk" in kiosk
    assert f"/t/{table}/qr.svg" in kiosk


def test_farkle_boards_show_the_roll_as_dice_the_turn_and_round_history(
    client: FlaskClient,
) -> None:
    table = new_table(client, "you-blew-it", teams={"A": ["Ann"], "B": ["Bob"]})
    act(client, table, {"type": "roll", "dice": [1, 1, 1, 5, 2, 3]})
    part = html(client.get(f"/t/{table}/board"))
    assert sorted(dice_shown(part.split('class="roll')[1].split("</div>")[0])) == [1, 1, 1, 2, 3, 5]
    act(client, table, {"type": "keep", "dice": [1, 1, 1, 5]})
    act(client, table, {"type": "bank"})
    part = html(client.get(f"/t/{table}/board"))
    assert "Round 1" in part
    assert "1,050" in part
    assert "three 1s" in part


def test_bolo_shows_the_board_thresholds_and_bong_hits(client: FlaskClient) -> None:
    table = played(client, "bolo")
    part = html(client.get(f"/t/{table}/board"))
    for label, value in (("get on", "650"), ("then", "350"), ("from 7,000", "750")):
        assert f"<small>{label}</small> {value}" in part
    assert "6 hits" in part  # Ann's 5,150 turn
    assert "Van Halen" in part


def test_bar_dice_shows_hammer_horses_and_eliminations(client: FlaskClient) -> None:
    table = played(client, "bar-dice")
    part = html(client.get(f"/t/{table}/board"))
    assert "<small>hammer</small> Cy" in part
    assert "a horse a piece" in part
    assert "Eliminated" in part
    assert "out in round 1" in part
    assert "Sponsor turns" in part


def test_gords_shows_dice_per_player_bids_and_revealed_rounds(client: FlaskClient) -> None:
    table = played(client, "gords")
    view = client.get(f"/api/tables/{table}").json
    assert view is not None
    part = html(client.get(f"/t/{table}/board"))
    for player, count in view["state"]["scores"].items():
        assert re.search(rf'{player}.*?<span class="value">{count}</span>', part, re.S)
    assert "Round by round" in part
    assert "Cy loses 1 die" in part
    assert 'class="bids"' in part
    # the revealed dice that made the bid are marked
    assert "die d5 hit" in part


def test_a_reroll_request_shows_why_and_the_roll_snapshot(app: Flask, client: FlaskClient) -> None:
    table = new_table(client, "you-blew-it", teams={"A": ["Ann"], "B": ["Bob"]})
    dicepad(app).tables.apply(table, Roll((1, 2, 3, 4, 6, 6)), source="camera", snapshot=JPEG)
    act(client, table, {"type": "reroll", "dice": [6], "reason": "cocked"})
    part = html(client.get(f"/t/{table}/board"))
    assert "Re-roll 1 die" in part
    assert '<span class="why">cocked</span>' in part
    assert f'src="/api/tables/{table}/snapshots/1"' in part
    assert client.get(f"/api/tables/{table}/snapshots/1").data == JPEG


def test_the_table_list_and_qr_codes(client: FlaskClient) -> None:
    assert "No games yet" in html(client.get("/"))
    table = played(client, "bolo")
    page = html(client.get("/"))
    assert_strict_markup(page)
    assert f'href="/t/{table}"' in page
    assert f'src="/t/{table}/qr.svg"' in page
    assert "New game (PIN)" in page
    assert f'href="/t/{table}"' in html(client.get("/tables.part"))
    r = client.get(f"/t/{table}/qr.svg", base_url="http://10.0.0.9:8080")
    assert r.status_code == 200
    assert r.mimetype == "image/svg+xml"
    assert b"<svg" in r.data
    assert client.get("/t/nosuch/qr.svg").status_code == 404


def test_finished_games_are_listed_after_the_ones_in_play(app: Flask, client: FlaskClient) -> None:
    ended = new_table(client, "bolo", players=["Ann", "Bob"])
    act(client, ended, {"type": "end"})
    playing = new_table(client, "gords", players=["Ann", "Bob"])
    page = html(client.get("/"))
    assert page.index(f'href="/t/{playing}"') < page.index("Finished") < page.index(ended)


@pytest.mark.parametrize("game", list(SCRIPTS))
def test_a_game_ended_by_the_scorekeeper_names_no_winner(client: FlaskClient, game: str) -> None:
    table = new_table(client, game, **SCRIPTS[game][0])
    act(client, table, {"type": "end"})
    page = html(client.get(f"/t/{table}"))
    assert "Game ended" in page
    assert "ended by the scorekeeper" in page
    assert "Winner" not in page  # not "Winners: " and an empty list


def test_an_unknown_table_is_a_friendly_404_page(client: FlaskClient) -> None:
    for path in ("/t/nosuch", "/t/nosuch/board", "/t/nosuch/kiosk"):
        r = client.get(path)
        assert r.status_code == 404
        assert r.mimetype == "text/html"
        assert "No such table" in r.get_data(as_text=True)


def test_the_board_fragment_answers_304_while_nothing_changes(client: FlaskClient) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    first = client.get(f"/t/{table}/board")
    etag = first.headers["ETag"]
    again = client.get(f"/t/{table}/board", headers={"If-None-Match": etag})
    assert again.status_code == 304
    act(client, table, {"type": "roll", "dice": [1, 2, 3, 4, 6]})
    assert client.get(f"/t/{table}/board", headers={"If-None-Match": etag}).status_code == 200


def test_the_board_body_is_rendered_once_for_every_watcher(app: Flask, client: FlaskClient) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    cache = app.extensions["dicepad.pages"]
    watchers = [app.test_client() for _ in range(5)]
    bodies = {html(w.get(f"/t/{table}/board")) for w in watchers}
    assert len(bodies) == 1
    assert (cache.misses, cache.hits) == (1, 4)
    keeper = app.test_client()
    login(keeper)
    assert "Scorekeeper" in html(keeper.get(f"/t/{table}/board"))  # another role, rendered
    assert "Scorekeeper" not in html(keeper.get(f"/t/{table}/board?kiosk=1"))
    act(client, table, {"type": "roll", "dice": [1, 2, 3, 4, 6]})
    assert 'data-seq="1"' in html(watchers[0].get(f"/t/{table}/board"))
    assert cache.misses == 4
