"""What the shipping tests share: a table server app pointed at a house database with a
test-sized back-off, a game that logs as many events as wanted, and the logs side by side
(the table server's SQLite and the house's PostgreSQL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
from flask import Flask
from flask.testing import FlaskClient
from server_app import AUTH, create_table, make_app

from server.services import dicepad

#: back-off from 20 ms doubling to 0.3 s: a test waits for a reconnection, not a minute
FAST = {"house_retry_min": 0.02, "house_retry_max": 0.3}
TEAMS = {"A": ["Ann"], "B": ["Bob"]}
BLOW = {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]}  #: no scoring dice: the turn passes on

Row = tuple[int, str, str, str, dict[str, Any]]


def house_app(data: Path, url: str, name: str, **overrides: Any) -> Flask:
    """A table server on ``data`` shipping to ``url`` as ``name``."""
    settings: dict[str, Any] = FAST | {
        "house_url": url,
        "house_name": name,
        "public_url": f"http://{name}.local:8080/",
    }
    return make_app(data, **(settings | overrides))


def new_table(client: FlaskClient) -> str:
    return create_table(client, {"game": "you-blew-it", "teams": TEAMS})


def blow(client: FlaskClient, table: str, times: int = 1) -> None:
    """Log ``times`` blown rolls on ``table`` through the API."""
    for _ in range(times):
        r = client.post(f"/api/tables/{table}/actions", json=BLOW, headers=AUTH)
        assert r.status_code == 201, r.json


def local_log(app: Flask, table: str) -> list[Row]:
    return [(e.seq, e.at, e.source, e.type, e.payload) for e in dicepad(app).store.events(table)]


def house_log(url: str, name: str, table: str) -> list[Row]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT seq, at, source, type, payload FROM events"
            " WHERE house_name = %s AND table_id = %s ORDER BY seq",
            (name, table),
        ).fetchall()
    return [(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]


def house_table(url: str, name: str, table: str) -> tuple[int, int, Any] | None:
    """``(last_seq, summary_seq, summary)`` of the house's row, None when it has none."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT last_seq, summary_seq, summary FROM tables"
            " WHERE house_name = %s AND table_id = %s",
            (name, table),
        ).fetchone()
    return None if row is None else (int(row[0]), int(row[1]), row[2])


def arrived(app: Flask, url: str, name: str, table: str) -> bool:
    """Every event of ``table`` is at the house, with the line of its head."""
    try:
        log = house_log(url, name, table)
        head = house_table(url, name, table)
    except psycopg.Error:  # the house is down, or not set up yet
        return False
    mine = local_log(app, table)
    return log == mine and head is not None and head[1] == (mine[-1][0] if mine else 0)


def house_status(app: Flask) -> Any:
    house = dicepad(app).house
    assert house is not None
    return house.status()
