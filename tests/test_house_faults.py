"""Issue 35's faults for a table server shipping to the house: PostgreSQL stopped mid-evening
and restarted, the house unreachable at start, a ``dicepad serve --house`` SIGKILLed while
shipping. Nothing lost, nothing twice, and the tables play on meanwhile, saying so on the
scoreboard and in ``/api/health``."""

from __future__ import annotations

import http.client
import threading
import time
from pathlib import Path

import psycopg
from flask import Flask
from house_shipping import (
    BLOW,
    TEAMS,
    Row,
    arrived,
    blow,
    house_app,
    house_log,
    house_status,
    new_table,
)
from pg_cluster import PgCluster, wait_until
from serve_process import Server
from server_app import json_of

from server.services import dicepad


def _offline_with(app: Flask, waiting: int) -> bool:
    status = house_status(app)
    return status.offline_since is not None and status.waiting == waiting


def _shows_offline(app: Flask, table: str, waiting: int) -> None:
    """The scoreboard and ``/api/health`` say since when and how many events wait."""
    status = house_status(app)
    assert status.offline_since is not None
    line = (
        f"house offline since {status.offline_since.astimezone():%H:%M}, {waiting} events waiting"
    )
    client = app.test_client()
    assert line in client.get(f"/t/{table}").data.decode()
    assert line in client.get(f"/t/{table}/board").data.decode()
    health = client.get("/api/health")
    assert health.status_code == 200  # the house is never critical: the watchdog is fed
    assert json_of(health)["house"]["waiting"] == waiting
    assert json_of(health)["house"]["online"] is False
    assert json_of(health)["house"]["offline_since"] is not None
    assert json_of(health)["house"]["last_error"]
    part = json_of(health)["components"]["house"]
    assert part["ok"] is False
    assert part["detail"].startswith(line)


def test_postgres_stopped_mid_evening_then_restarted(
    tmp_path: Path, own_pg_cluster: PgCluster
) -> None:
    url = own_pg_cluster.new_database()
    app = house_app(tmp_path / "pi", url, "back-bar")
    client = app.test_client()
    t = new_table(client)
    blow(client, t, 5)
    assert wait_until(lambda: arrived(app, url, "back-bar", t))
    own_pg_cluster.stop()
    started = time.monotonic()
    blow(client, t, 37)  # the table plays on
    assert time.monotonic() - started < 10
    assert wait_until(lambda: _offline_with(app, 37))
    _shows_offline(app, t, 37)
    own_pg_cluster.start()
    assert wait_until(lambda: arrived(app, url, "back-bar", t))
    assert [e[0] for e in house_log(url, "back-bar", t)] == list(range(1, 43))  # each once
    assert wait_until(lambda: house_status(app).online)
    assert house_status(app).waiting == 0
    assert b"house-banner" not in client.get(f"/t/{t}").data
    assert json_of(client.get("/api/health"))["components"]["house"]["ok"] is True
    dicepad(app).close()


def test_house_unreachable_at_start_then_caught_up(
    tmp_path: Path, own_pg_cluster: PgCluster
) -> None:
    url = own_pg_cluster.new_database()
    own_pg_cluster.stop()
    app = house_app(tmp_path / "pi", url, "back-bar")  # starts all the same
    client = app.test_client()
    t = new_table(client)
    blow(client, t, 4)
    assert wait_until(lambda: _offline_with(app, 4))
    _shows_offline(app, t, 4)
    own_pg_cluster.start()
    assert wait_until(lambda: arrived(app, url, "back-bar", t))
    assert wait_until(lambda: house_status(app).online)
    dicepad(app).close()


def test_a_server_killed_while_shipping_loses_nothing_and_sends_nothing_twice(
    tmp_path: Path, house_url: str
) -> None:
    args = ["--house", house_url, "--house-name", "kill-bar"]
    data = tmp_path / "pi"
    server = Server(data, tmp_path / "first.log", args=args)
    stop = threading.Event()
    try:
        t = server.call("POST", "/api/tables", {"game": "you-blew-it", "teams": TEAMS})["table"]

        def play() -> None:
            while not stop.is_set():
                try:
                    server.call("POST", f"/api/tables/{t}/actions", BLOW)
                except (OSError, http.client.HTTPException):  # killed under us, maybe mid-answer
                    return

        player = threading.Thread(target=play)
        player.start()
        assert wait_until(lambda: len(_house(house_url, t)) >= 20, timeout=30)
        server.proc.kill()  # SIGKILL, mid-evening, shipping as the actions come
        server.proc.wait(timeout=10)
        stop.set()
        player.join(timeout=10)
    finally:
        stop.set()
        server.kill_if_running()
    again = Server(data, tmp_path / "second.log", args=args)
    try:
        for _ in range(3):
            again.call("POST", f"/api/tables/{t}/actions", BLOW)
        local = [
            (e["seq"], e["at"], e["source"], e["action"]["type"], e["action"])
            for e in again.call("GET", f"/api/tables/{t}/log")
        ]
        # the house had 20 when the server was killed, so the Pi had at least 20 (the kill may
        # land just as the house has caught up: then exactly 20), and three more since
        assert len(local) >= 23
        assert wait_until(lambda: _house(house_url, t) == local, timeout=20)
        health = again.call("GET", "/api/health")
        assert health["house"]["online"] is True
        assert health["house"]["waiting"] == 0
    finally:
        again.terminate()
    assert "house: shipping to the house as 'kill-bar'" in (tmp_path / "second.log").read_text()


def _house(url: str, table: str) -> list[Row]:
    try:
        return house_log(url, "kill-bar", table)
    except psycopg.Error:  # not set up yet
        return []


def test_after_a_restart_with_the_house_away_only_what_it_lacks_is_waiting(
    tmp_path: Path, own_pg_cluster: PgCluster
) -> None:
    """What the house held is noted in SQLite at shutdown, so the count stays true."""
    url = own_pg_cluster.new_database()
    app = house_app(tmp_path / "pi", url, "back-bar")
    client = app.test_client()
    t = new_table(client)
    blow(client, t, 5)
    assert wait_until(lambda: arrived(app, url, "back-bar", t))
    dicepad(app).close()
    own_pg_cluster.stop()
    again = house_app(tmp_path / "pi", url, "back-bar")
    blow(again.test_client(), t, 3)
    assert wait_until(lambda: _offline_with(again, 3))
    own_pg_cluster.start()
    assert wait_until(lambda: arrived(again, url, "back-bar", t))
    dicepad(again).close()
