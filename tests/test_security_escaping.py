"""Markup typed anywhere (players, teams, house rules) comes back escaped."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape
from security_rig import (
    AUTH,
    fixture_app,  # noqa: F401 (the app fixture)
    log_in,
    make_app,
    new_table,
)

from server.services import dicepad

MARKUP = '<script>alert("x")</script>'

NAMES = st.text(
    alphabet=st.sampled_from(list("<>&\"'/=`ab ")) | st.characters(codec="utf-8"),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() and s.isprintable() and len(s.strip()) <= 40)


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    a = make_app(tmp_path_factory.mktemp("escape"))
    yield a
    dicepad(a).close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES, team=NAMES)
def test_names_with_markup_are_escaped_on_every_page(
    shared_app: Flask, name: str, team: str
) -> None:
    client = shared_app.test_client()
    # wrapped in a tag of its own, so that finding it raw in a page means it was not escaped
    name, team = f"<i title='{name.strip()}'>", f"<u data-t='{team.strip()}'>"
    players = [name, name + "2"]
    bolo = new_table(client, players=players)
    for kind in ("roll", "keep"):  # a high roll: the name goes on the wall too
        action = {"type": kind, "dice": [2, 2, 2, 2, 2]}
        assert (
            client.post(f"/api/tables/{bolo}/actions", json=action, headers=AUTH).status_code == 201
        )
    teams = {team: [name + "3"], team + "B": ["Zed"]}
    r = client.post("/api/tables", json={"game": "you-blew-it", "teams": teams}, headers=AUTH)
    assert r.status_code == 201, r.json
    ybi = str(r.json["table"])  # type: ignore[index]
    keeper = shared_app.test_client()
    log_in(keeper)
    pages = [client.get(p) for p in ("/", "/tables.part", "/records")]
    for t in (bolo, ybi):
        pages += [client.get(f"/t/{t}"), client.get(f"/t/{t}/kiosk"), keeper.get(f"/t/{t}"),
                  client.get(f"/t/{t}/board")]  # fmt: skip
    for r in pages:
        assert r.status_code == 200
        page = r.get_data(as_text=True)
        for shown in (name, team):
            assert shown not in page, (r.request.path, shown)
        assert str(escape(name)) in page, r.request.path


def test_house_rule_values_with_markup_come_back_escaped(client: FlaskClient) -> None:
    csrf = log_in(client)
    r = client.post(
        "/new",
        data={"csrf": csrf, "game": "bolo", "players": "Ann\nBob",
              "rule.bolo.four_of_a_kind": MARKUP, "rule.bolo.target": MARKUP},
    )  # fmt: skip
    assert r.status_code == 400
    page = r.get_data(as_text=True)
    assert MARKUP not in page
    assert "&lt;script&gt;" in page
    r = client.post(
        "/api/tables",
        json={"game": "bolo", "players": ["A", "B"], "rules": {"four_of_a_kind": MARKUP}},
        headers=AUTH,
    )
    assert r.status_code == 400
    assert r.mimetype == "application/json"  # and nosniff: a browser never renders it
