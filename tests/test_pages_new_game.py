"""The new game form: PIN holder only, every house rule explained, seating and rules kept."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape
from pages_rig import assert_strict_markup, html
from server_app import login

from server.services import dicepad

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
