"""The phone pages through Flask's test client: every page and form, escaping of whatever a
user typed, CSRF refusals, the security headers, the wall and its CSV export."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape
from server_app import AUTH, PIN, create_table, csrf_token, login

from scoring.actions import Roll
from server.pages import board, coach, forms, links, wall
from server.services import dicepad

DATA = Path(__file__).parent / "data"
JPEG = b"\xff\xd8\xff\xe0a-roll"
EVIL = '<script>alert("x")</script>'
EVIL_ATTR = '"><img src=x onerror=alert(1)>'

SCRIPTS: dict[str, tuple[dict[str, Any], str, int]] = {
    "you-blew-it": ({"teams": {"Reds": ["Ann", "Al"], "Blues": ["Bob", "Bea"]}},
                    "ybi_sample_game.jsonl", 26),
    "bolo": ({"players": ["Ann", "Bob"]}, "bolo_board_game.jsonl", 12),
    "bar-dice": ({"players": ["Ann", "Bob", "Cy", "Dee"]}, "bardice_four_players.jsonl", 46),
    "gords": ({"players": ["Ann", "Bob", "Cy"]}, "gords_three_players.jsonl", 14),
}  # fmt: skip


def new_table(client: FlaskClient, game: str, **lineup: Any) -> str:
    return create_table(client, {"game": game, **lineup})


def act(client: FlaskClient, table: str, action: dict[str, Any], status: int = 201) -> Any:
    r = client.post(f"/api/tables/{table}/actions", json=action, headers=AUTH)
    assert r.status_code == status, r.json
    return r.json


def played(client: FlaskClient, game: str, count: int | None = None) -> str:
    """A table of ``game`` played part-way through its sample script (``count`` actions)."""
    lineup, script, part = SCRIPTS[game]
    table = new_table(client, game, **lineup)
    for line in (DATA / script).read_text().splitlines()[: count or part]:
        act(client, table, json.loads(line))
    return table


def html(r: Any, status: int = 200) -> str:
    assert r.status_code == status, (r.status_code, r.data[:500])
    text: str = r.get_data(as_text=True)
    return text


def dice_shown(fragment: str) -> list[int]:
    return [int(v) for v in re.findall(r'class="die d(\d)[^"]*" role="img"', fragment)]


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
STYLE_ATTR = re.compile(r"<[^>]+\sstyle\s*=", re.I)


def assert_strict_markup(page: str) -> None:
    """No inline script, no event-handler attribute, no inline style (CSP would block them)."""
    assert not INLINE_SCRIPT.search(page)
    assert not EVENT_HANDLER.search(page)
    assert not STYLE_ATTR.search(page)


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


# -- escaping -------------------------------------------------------------------------------


def test_markup_in_names_is_shown_escaped_everywhere(app: Flask, client: FlaskClient) -> None:
    table = new_table(client, "bolo", players=[EVIL, EVIL_ATTR])
    for action in (
        {"type": "roll", "dice": [2, 2, 2, 2, 2]},
        {"type": "keep", "dice": [2, 2, 2, 2, 2]},
    ):
        act(client, table, action)
    team = new_table(client, "you-blew-it", teams={EVIL: ["Ann"], "B": [EVIL_ATTR]})
    keeper = app.test_client()
    login(keeper)
    pages = [
        client.get("/"),
        client.get("/tables.part"),
        client.get(f"/t/{table}"),
        client.get(f"/t/{table}/kiosk"),
        client.get(f"/t/{team}"),
        client.get("/records"),
        keeper.get(f"/t/{table}"),
        keeper.get(f"/t/{team}"),
        keeper.get("/records"),
    ]
    for r in pages:
        page = html(r)
        assert EVIL not in page
        assert EVIL_ATTR not in page
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
        assert_strict_markup(page)


def test_markup_typed_in_the_new_game_form_comes_back_escaped(client: FlaskClient) -> None:
    csrf = login(client)
    r = client.post(
        "/new", data={"csrf": csrf, "game": "bolo", "players": f"{EVIL}\n{EVIL}"}
    )  # duplicate names: refused, and the typed text is shown back escaped
    page = html(r, 400)
    assert "names must be different" in page
    assert EVIL not in page
    assert "&lt;script&gt;" in page


# -- headers --------------------------------------------------------------------------------


def test_every_page_sends_a_strict_content_security_policy(client: FlaskClient) -> None:
    table = new_table(client, "gords", players=["Ann", "Bob"])
    for path in ("/", f"/t/{table}", f"/t/{table}/kiosk", "/records", "/login", "/records.csv"):
        r = client.get(path)
        csp = r.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp
        assert "'unsafe-inline'" not in csp
        assert "frame-ancestors 'none'" in csp
        assert r.headers["X-Content-Type-Options"] == "nosniff"


def test_static_files_are_served(client: FlaskClient) -> None:
    for name in ("dicepad.css", "board.js", "tables.js", "new.js", "records.js", "favicon.svg"):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200, name
        r.close()


# -- the PIN holder's session and CSRF ------------------------------------------------------


def test_login_logout_and_the_controls(client: FlaskClient) -> None:
    table = new_table(client, "you-blew-it", teams={"A": ["Ann"], "B": ["Bob"]})
    act(client, table, {"type": "roll", "dice": [1, 1, 1, 5, 2, 3]})
    assert "Scorekeeper" not in html(client.get(f"/t/{table}"))
    r = client.post("/login", data={"pin": "9999", "csrf": csrf_token(client)})
    assert "wrong PIN" in html(r, 403)
    csrf = login(client)
    page = html(client.get(f"/t/{table}"))
    assert "Scorekeeper" in page
    assert f'data-csrf="{csrf}"' in page
    # the keep buttons are exactly the legal keeps, best first, with their points
    assert page.index("[1, 1, 1, 5]") < page.index("[1, 1, 1]")
    assert "1,050" in page
    assert 'data-fix-index="5"' in page  # the last roll's dice can be fixed
    assert 'data-reroll="cocked"' in page  # and thrown again when cocked
    assert 'data-action=\'{"type": "undo"}\'' in page
    assert "Scorekeeper" not in html(client.get(f"/t/{table}/kiosk"))
    r = client.post("/logout", data={"csrf": csrf, "next": f"/t/{table}"})
    assert r.status_code == 302
    assert r.headers["Location"] == f"/t/{table}"
    assert "Scorekeeper" not in html(client.get(f"/t/{table}"))


def test_login_only_redirects_within_the_site(client: FlaskClient) -> None:
    for target, expected in (("/records", "/records"), ("//evil.example", "/"), ("http://x", "/")):
        r = client.post("/login", data={"pin": PIN, "csrf": csrf_token(client), "next": target})
        assert r.headers["Location"] == expected


def test_login_lockout_shows_the_wait(client: FlaskClient) -> None:
    for _ in range(5):
        client.post("/login", data={"pin": "0000", "csrf": csrf_token(client)})
    r = client.post("/login", data={"pin": PIN, "csrf": csrf_token(client)})
    assert "try again in" in html(r, 429)
    wait = int(r.headers["Retry-After"])
    assert 1 <= wait <= 300
    assert f"try again in {wait} s" in html(r, 429)


def test_forms_without_the_csrf_token_are_refused(app: Flask, client: FlaskClient) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    before = len(dicepad(app).tables.summaries())
    assert "reload" in html(client.post("/login", data={"pin": PIN}), 403)
    assert client.post("/login", data={"pin": PIN, "csrf": "forged"}).status_code == 403
    csrf = login(client)
    for path, data in (
        ("/new", {"game": "bolo", "players": "Ann\nBob"}),
        ("/logout", {}),
        (f"/records/{table}.1.0/hide", {}),
    ):
        assert client.post(path, data=data).status_code == 403
        assert client.post(path, data=data | {"csrf": csrf + "x"}).status_code == 403
    assert len(dicepad(app).tables.summaries()) == before
    assert "Scorekeeper" in html(client.get(f"/t/{table}"))  # still logged in


def test_api_calls_riding_a_page_session_need_the_csrf_header(
    app: Flask, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    csrf = login(client)
    roll = {"type": "roll", "dice": [1, 2, 3, 4, 6]}
    r = client.post(f"/api/tables/{table}/actions", json=roll)
    assert r.status_code == 403
    assert r.json is not None
    assert "X-CSRF-Token" in r.json["message"]
    r = client.post(f"/api/tables/{table}/actions", json=roll, headers={"X-CSRF-Token": "nope"})
    assert r.status_code == 403
    assert dicepad(app).tables.view(table)["seq"] == 0  # nothing was applied
    r = client.post(f"/api/tables/{table}/actions", json=roll, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 201
    # illegal actions come back with the rule's message for the page to show
    r = client.post(
        f"/api/tables/{table}/actions", json={"type": "call"}, headers={"X-CSRF-Token": csrf}
    )
    assert r.status_code == 409
    assert r.json is not None
    assert r.json["message"]
    # API clients with the PIN header are not browsers riding a cookie
    act(app.test_client(), table, {"type": "undo"})


# -- a new game -----------------------------------------------------------------------------


def test_new_game_needs_the_pin_holder(client: FlaskClient) -> None:
    r = client.get("/new")
    assert r.status_code == 302
    assert r.headers["Location"].startswith("/login?next=/new")


def test_the_new_game_form_explains_every_house_rule(client: FlaskClient) -> None:
    login(client)
    page = html(client.get("/new"))
    assert_strict_markup(page)
    games = client.get("/api/games").json
    assert games is not None
    for g in games:
        assert f'data-game="{g["name"]}"' in page
        for rule in g["rules"]:
            short = rule["name"].split(".", 1)[1]
            assert f'name="rule.{g["name"]}.{short}"' in page
            default = rule["default"]
            shown = ("on" if default else "off") if isinstance(default, bool) else default
            assert f"Default: {shown if shown != '' else '(none)'}" in page
            assert str(escape(rule["help"])) in page


def test_a_new_game_from_the_form_keeps_seating_and_house_rules(
    app: Flask, client: FlaskClient
) -> None:
    csrf = login(client)
    form = {
        "csrf": csrf,
        "game": "bolo",
        "players": "Cy\nAnn, Bob\n",
        "rule.bolo.entry_min": "500",
        "rule.bolo.van_halen": ["false"],  # unticked box: only the hidden field
        "rule.bolo.yahtzee_clause": ["false", "true"],
        "rule.bolo.four_of_a_kind": "triple_plus_single",
        "rule.gords.spot_on": "true",  # another game's fields are ignored
    }
    r = client.post("/new", data=form)
    assert r.status_code == 302
    table = r.headers["Location"].rsplit("/", 1)[1]
    view = dicepad(app).tables.view(table)
    assert view["setup"] == {"players": ["Cy", "Ann", "Bob"]}
    rules = view["rules"]
    assert rules["entry_min"] == 500
    assert rules["van_halen"] is False
    assert rules["yahtzee_clause"] is True
    assert rules["four_of_a_kind"] == "triple_plus_single"


def test_a_new_team_game_from_the_form(app: Flask, client: FlaskClient) -> None:
    csrf = login(client)
    r = client.post(
        "/new",
        data={"csrf": csrf, "game": "you-blew-it", "teams": "Reds: Ann, Al\nBob, Bea"},
    )
    assert r.status_code == 302
    table = r.headers["Location"].rsplit("/", 1)[1]
    assert dicepad(app).tables.view(table)["setup"] == {
        "teams": {"Reds": ["Ann", "Al"], "Team 2": ["Bob", "Bea"]}
    }


def test_a_refused_new_game_says_why_and_loses_nothing(app: Flask, client: FlaskClient) -> None:
    csrf = login(client)
    for data, message in (
        ({"game": "bolo", "players": ""}, "players must be a non-empty list"),
        ({"game": "bolo", "players": "Ann\nBob", "rule.bolo.entry_min": "lots"}, "whole number"),
        ({"game": "chess", "players": "Ann"}, "unknown game"),
    ):
        r = client.post("/new", data=data | {"csrf": csrf})
        page = html(r, 400)
        assert message in page, page
        if data.get("players"):
            assert data["players"] in page.replace("\r", "")
    page = html(
        client.post(
            "/new",
            data={"csrf": csrf, "game": "bolo", "players": "Ann", "rule.bolo.entry_min": "lots"},
        ),
        400,
    )
    assert 'value="lots"' in page  # the typed value is kept for correction
    assert dicepad(app).tables.summaries() == []


# -- the wall -------------------------------------------------------------------------------


def _high_roller(app: Flask, client: FlaskClient, player: str = "Ann") -> str:
    table = new_table(client, "bolo", players=[player, "Bob"])
    dicepad(app).tables.apply(table, Roll((2, 2, 2, 2, 2)), source="camera", snapshot=JPEG)
    act(client, table, {"type": "keep", "dice": [2, 2, 2, 2, 2]})
    return table


def test_the_wall_shows_high_rollers_with_the_snapshot(app: Flask, client: FlaskClient) -> None:
    assert "Nobody yet" in html(client.get("/records"))
    table = _high_roller(app, client)
    played(client, "you-blew-it", 88)  # the sample's first game
    page = html(client.get("/records"))
    assert_strict_markup(page)
    rollers = page.split('class="wall high-rollers"')[1].split("</section>")[0]
    assert "Ann" in rollers
    assert "5,000" in rollers
    assert f"/api/tables/{table}/snapshots/1" in rollers
    assert '<time datetime="2026-11-21' in rollers
    ybi = page.split('id="wall-you-blew-it"')[1].split("</section>")[0]
    assert "Biggest rolls" in ybi
    assert "Biggest turns" in ybi
    assert "hide" not in page  # only the PIN holder may hide


def test_the_pin_holder_hides_a_bogus_entry_and_it_stays_in_the_log(
    app: Flask, client: FlaskClient
) -> None:
    table = _high_roller(app, client, "Bogus")
    rows = dicepad(app).records.high_rollers()
    assert rows
    csrf = login(client)
    assert "hide" in html(client.get("/records"))
    r = client.post(f"/records/{rows[0].id}/hide", data={"csrf": csrf, "next": "/records"})
    assert r.status_code == 302
    assert r.headers["Location"] == "/records"
    assert "Bogus" not in html(app.test_client().get("/records"))
    assert "Bogus" not in app.test_client().get("/records.csv").get_data(as_text=True)
    assert len(client.get(f"/api/tables/{table}/log").json or []) == 2  # the log is untouched
    shown = html(client.get("/records?hidden=1"))
    assert "Bogus" in shown
    assert "show again" in shown
    assert "Bogus" not in html(app.test_client().get("/records?hidden=1"))  # PIN holder only
    client.post(f"/records/{rows[0].id}/hide", data={"csrf": csrf, "hidden": "0"})
    assert "Bogus" in html(app.test_client().get("/records"))
    r = client.post("/records/nosuch/hide", data={"csrf": csrf})
    assert r.status_code == 404


def test_hiding_needs_the_pin_holder(app: Flask, client: FlaskClient) -> None:
    _high_roller(app, client)
    rows = dicepad(app).records.high_rollers()
    r = client.post(f"/records/{rows[0].id}/hide", data={"csrf": csrf_token(client)})
    assert r.status_code == 302
    assert r.headers["Location"].startswith("/login")
    assert dicepad(app).records.high_rollers() == rows


def test_the_csv_export_is_safe_from_formula_injection(app: Flask, client: FlaskClient) -> None:
    _high_roller(app, client, "=HYPERLINK(1)")
    _high_roller(app, client, "-2+3")
    _high_roller(app, client, "x;=1+1")
    r = client.get("/records.csv")
    assert r.mimetype == "text/csv"
    assert "attachment" in r.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(r.get_data(as_text=True))))
    players = {row["player"] for row in rows}
    assert {"'=HYPERLINK(1)", "'-2+3"} <= players
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(wall.FORMULA_START)
    assert "x;'=1+1" in players
    for line in r.get_data(as_text=True).splitlines()[1:]:  # split on ";" as such a sheet
        for cell in next(csv.reader([line], delimiter=";")):  # does: quotes keep cells whole
            assert not cell.lstrip().startswith(wall.FORMULA_START), line
    roller = next(row for row in rows if row["kind"] == "high_roller")
    assert roller["points"] == "5000"
    assert roller["dice"] == "2 2 2 2 2"
    assert roller["game"] == "bolo"


@given(st.text(alphabet=st.sampled_from("ab =+-@;,\t|'\" 5"), max_size=30) | st.text(max_size=30))
def test_no_csv_cell_starts_like_a_formula(text: str) -> None:
    cell = wall.safe_cell(text)
    assert isinstance(cell, str)
    assert not cell.startswith(wall.FORMULA_START)
    for part in re.split(r"[;,\t|]", cell):  # however a spreadsheet splits it
        assert not part.lstrip(' \n\r\x0b\x0c"').startswith(wall.FORMULA_START[:4]), cell
    assert cell.replace("'", "") == text.replace("'", "")  # only quotes were added


# -- the pure parts -------------------------------------------------------------------------


def test_kept_dice_are_marked_as_a_multiset() -> None:
    assert board.mark_kept([1, 1, 1, 5, 2], [1, 1, 5]) == [
        (1, True),
        (1, True),
        (1, False),
        (5, True),
        (2, False),
    ]
    assert board.mark_kept([3, 4], []) == [(3, False), (4, False)]


def test_matching_gords_dice_follow_the_engines_count() -> None:
    dice = [1, 5, 1, 5, 2]
    assert [hit for _, hit in board.mark_matching(dice, 5, 4)] == [True] * 4 + [False]
    assert [hit for _, hit in board.mark_matching(dice, 5, 2)] == [False, True, False, True, False]
    assert [hit for _, hit in board.mark_matching(dice, 1, 2)] == [True, False, True, False, False]


def test_bolo_turns_group_into_rounds_newest_first() -> None:
    turns = [{"n": i} for i in range(5)]
    assert board.rounds(turns, 2) == [
        (3, [{"n": 4}]),
        (2, [{"n": 2}, {"n": 3}]),
        (1, [{"n": 0}, {"n": 1}]),
    ]
    assert board.rounds([], 3) == []


def test_line_ups_from_the_form() -> None:
    assert forms.parse_players(" Ann \n\nBob, Cy\r\n") == ["Ann", "Bob", "Cy"]
    assert forms.parse_teams("Reds: Ann, Al\nBob\n: Cy") == {
        "Reds": ["Ann", "Al"],
        "Team 2": ["Bob"],
        "Team 3": ["Cy"],
    }
    with pytest.raises(ValueError, match="two teams"):
        forms.parse_teams("A: x\nA: y")


def test_qr_links_point_phones_at_the_network_address() -> None:
    assert links.public_url("http://127.0.0.1:8080/", "/t/x", lan="10.0.0.5") == (
        "http://10.0.0.5:8080/t/x"
    )
    assert links.public_url("http://localhost/", "/t/x", lan="10.0.0.5") == "http://10.0.0.5/t/x"
    assert links.public_url("http://bar.lan:80/", "/t/x", lan="10.0.0.5") == "http://bar.lan:80/t/x"
    assert links.public_url("http://127.0.0.1:8080/", "/t/x", lan=None) == (
        "http://127.0.0.1:8080/t/x"
    )
    assert links.qr_svg("http://10.0.0.5/t/x").startswith(b"<svg")


def test_the_coach_is_optional_and_never_breaks_the_board(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    monkeypatch.setattr(coach, "_hint_function", lambda: None)
    assert 'class="hint"' not in html(client.get(f"/t/{table}"))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("no policy for these rules")

    monkeypatch.setattr(coach, "_hint_function", lambda: broken)
    assert 'class="hint"' not in html(client.get(f"/t/{table}"))
    monkeypatch.setattr(coach, "_hint_function", lambda: lambda game, state: {"text": "Roll."})
    assert "<b>Coach</b> Roll." in html(client.get(f"/t/{table}"))
