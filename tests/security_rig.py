"""Shared helpers of the security tests (``test_security*.py``): the app with a known PIN,
a furnished table for every route's arguments, and logging in through the pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import server_app
from flask import Flask
from flask.testing import FlaskClient
from server_app import FakeMonotonic, create_table, ticking_clock

import server.auth
from scoring.actions import action_from_json
from server.players.api import players
from server.services import dicepad

PIN = "Zebra-7391"  # distinctive, so it can be searched for in the files
AUTH = {"X-Dicepad-Pin": PIN}
JPEG = b"\xff\xd8\xff\xe0a-roll"


def make_app(data: Path, **overrides: Any) -> Flask:
    """The test app with the rig's PIN and a short keep-alive."""
    settings: dict[str, Any] = {
        "pin": PIN,
        "clock": ticking_clock(datetime(2026, 11, 22, 21, 0, tzinfo=UTC)),
        "keepalive_seconds": 0.05,
    }
    return server_app.make_app(data, **(settings | overrides))


@pytest.fixture(name="app")  # imported by the tests that use it
def fixture_app(tmp_path: Path, clock: FakeMonotonic) -> Iterator[Flask]:
    a = make_app(tmp_path / "data", monotonic=clock)
    yield a
    dicepad(a).close()


def new_table(client: FlaskClient, **body: Any) -> str:
    return create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]} | body, AUTH)


def page_token(client: FlaskClient, path: str = "/login") -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).get_data(as_text=True))
    assert found, path
    return found.group(1)


def log_in(client: FlaskClient, pin: str = PIN) -> str:
    r = client.post("/login", data={"pin": pin, "csrf": page_token(client), "next": "/"})
    assert r.status_code == 302, r.data[:300]
    with client.session_transaction() as s:
        return str(s["csrf"])


def everything(app: Flask) -> dict[str, Any]:
    """What a change would touch: every table's log, the records, hidden records, settings."""
    d = dicepad(app)
    tables = d.tables.summaries()
    return {
        "logs": {t["table"]: d.tables.log(t["table"]) for t in tables},
        "records": [r.to_json() for r in d.records.wall(include_hidden=True, limit=500)],
        "pin_version": d.store.setting(server.auth.PIN_VERSION),
    }


@pytest.fixture(name="furnished")  # imported by the tests that use it
def fixture_furnished(app: Flask, client: FlaskClient) -> dict[str, str]:
    """A table with a roll snapshot and a record on the wall, for every route's arguments."""
    table = new_table(client)
    tables = dicepad(app).tables
    tables.apply(table, action("roll", [2, 2, 2, 2, 2]), source="camera", snapshot=JPEG)
    tables.apply(table, action("keep", [2, 2, 2, 2, 2]), source="phone")  # a high roll
    record = dicepad(app).records.wall(limit=1)[0].id
    assert players(app).wait(20)  # the players' rows are derived in the background
    return {
        "table_id": table,
        "seq": "1",
        "record_id": record,
        "filename": "dicepad.css",
        "number": "1",  # the teaching page's throw, its die and an example
        "die": "0",
        "example_id": "0123456789ab",
        "name": "Ann",  # a player's pages (issue 36)
    }


def action(kind: str, dice: list[int]) -> Any:
    return action_from_json({"type": kind, "dice": dice})
