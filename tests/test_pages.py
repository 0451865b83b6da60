"""The pages' defences: escaping, security headers, the PIN holder's session and CSRF, the wall."""

from __future__ import annotations

import csv
import io
import re

from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st
from pages_rig import JPEG, act, assert_strict_markup, html, new_table, played
from server_app import PIN, csrf_token, login

from scoring.actions import Roll
from server.pages import wall
from server.services import dicepad

EVIL = '<script>alert("x")</script>'
EVIL_ATTR = '"><img src=x onerror=alert(1)>'


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
