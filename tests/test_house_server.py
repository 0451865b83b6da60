"""The house server (``dicepad house``) against real PostgreSQL: its API and pages through
Flask's test client on a database filled as a shipper fills it (:mod:`house_fill`), and the
LISTEN/NOTIFY path to the live feed through a real ``dicepad house`` child under waitress."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from house_fill import (
    Event,
    Rec,
    add_member,
    add_table,
    fill_wall,
    now_iso,
    replace_records,
    ship,
)
from pg_cluster import PgCluster, wait_until
from psycopg import sql

from server.house.app import HouseConfig, create_house_app, house
from server.house.migrate import connect
from server.house.reads import RecordQuery, records_query

REPO = Path(__file__).resolve().parent.parent
PIN = "2468"
PIN_HEADER = {"X-Dicepad-House-Pin": PIN}
EVIL = "<script>alert(1)</script>"


def make_app(url: str, **kw: Any) -> Flask:
    return create_house_app(HouseConfig(db_url=url, pin_scrypt_n=2**8, **({"pin": PIN} | kw)))


@pytest.fixture
def db(house_url: str) -> Iterator[psycopg.Connection[Any]]:
    conn = connect(house_url, autocommit=True)
    add_member(conn, "bar-pi", "http://bar-pi.local:8080")
    add_member(conn, EVIL, "javascript:alert(1)")
    add_table(conn, "bar-pi", "t1", players=[EVIL, "Bob"])
    add_table(conn, "bar-pi", "t2", game="you-blew-it", teams={"Reds": ["Ann"], "Blues": ["Al"]})
    add_table(conn, EVIL, "t1", game="gords", players=["Cy", "Dee"])
    # a second before t2's batch: two batches in one millisecond tie on "last" (milliseconds),
    # and the tie goes by table name, t1 first -- "latest first" then failed now and then
    a_second_ago = now_iso(timedelta(seconds=-1))
    ship(
        conn, "bar-pi", "t1", [Event(), Event(snapshot=True)],
        scores={EVIL: 350, "Bob": 0}, last=a_second_ago,
    )  # fmt: skip
    ship(conn, "bar-pi", "t2", [Event(type="end")], over=True, scores={"Reds": 10000, "Blues": 0})
    ship(conn, EVIL, "t1", [Event()], last="2020-01-01T20:00:00.000+00:00")  # long idle
    replace_records(conn, "bar-pi", "t1", [
        Rec("bar-pi", "t1.2.0", "t1", "bolo", "roll", EVIL, 1500, seq=2, snapshot_seq=2),
        Rec("bar-pi", "t1.1.0", "t1", "bolo", "turn", "Bob", 900, seq=1),
        Rec("bar-pi", "t1.1.1", "t1", "bolo", "roll", "Bob", 700, seq=1, hidden_at_table=True),
    ])  # fmt: skip
    replace_records(conn, EVIL, "t1", [Rec(EVIL, "t1.1.0", "t1", "gords", "hand", "Cy", 1200)])
    yield conn
    conn.close()


@pytest.fixture
def app(house_url: str, db: psycopg.Connection[Any]) -> Iterator[Flask]:
    a = make_app(house_url)
    yield a
    house(a).close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


# -- the API ----------------------------------------------------------------------------------


def test_tables_lists_every_table_of_every_house_name_latest_first(client: FlaskClient) -> None:
    got = client.get("/api/house/tables").get_json()
    assert [(t["house_name"], t["table"]) for t in got] == [
        ("bar-pi", "t2"), ("bar-pi", "t1"), (EVIL, "t1"),
    ]  # fmt: skip
    t1 = got[1]
    for key in ("house_name", "table", "game", "players", "scores", "over", "last", "seq"):
        assert key in t1
    assert t1["players"] == [EVIL, "Bob"]
    assert t1["scores"] == {EVIL: 350, "Bob": 0}
    assert t1["seq"] == 2
    assert not t1["over"]
    assert not t1["idle"]
    assert t1["scoreboard"] == "http://bar-pi.local:8080/t/t1"
    assert got[0]["over"]
    assert got[0]["players"] == ["Ann", "Al"]
    assert got[2]["idle"]
    assert got[2]["scoreboard"] is None
    playing = client.get("/api/house/tables?state=playing").get_json()
    assert [(t["house_name"], t["table"]) for t in playing] == [("bar-pi", "t1")]
    mine = client.get(f"/api/house/tables?house_name={EVIL}&state=idle").get_json()
    assert [t["table"] for t in mine] == ["t1"]
    assert len(client.get("/api/house/tables?limit=1&offset=1").get_json()) == 1


@pytest.mark.parametrize(
    ("query", "word"),
    [("state=asleep", "state"), ("limit=0", "limit"), ("limit=x", "limit"),
     ("offset=-1", "offset"), ("house_name=a%00b", "house_name")],
)  # fmt: skip
def test_malformed_table_queries_are_400_naming_the_parameter(
    client: FlaskClient, query: str, word: str
) -> None:
    response = client.get(f"/api/house/tables?{query}")
    assert response.status_code == 400
    body = response.get_json()
    assert body["error"] == "malformed"
    assert word in body["message"]
    assert body["status"] == 400


def test_a_tables_log_as_the_house_holds_it(client: FlaskClient) -> None:
    log = client.get("/api/house/tables/bar-pi/t1/log").get_json()
    assert [e["seq"] for e in log] == [1, 2]
    assert set(log[0]) == {"seq", "at", "source", "action", "snapshot"}  # a table's /log
    assert log[0]["action"] == {"type": "roll"}
    assert log[1]["snapshot"] is True
    assert [e["seq"] for e in client.get("/api/house/tables/bar-pi/t1/log?since=1").get_json()] == [
        2
    ]
    for path in ("/api/house/tables/bar-pi/t9/log", "/api/house/tables/nobody/t1/log"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.get_json()["error"] == "not_found"
    assert client.get("/api/house/tables/bar-pi/t1/log?since=x").status_code == 400
    assert client.get("/api/house/tables/bar-pi/t1").get_json()["seq"] == 2


def test_records_carry_their_house_name_biggest_first_paged(client: FlaskClient) -> None:
    got = client.get("/api/house/records").get_json()
    assert [(r["house_name"], r["id"], r["points"]) for r in got] == [
        ("bar-pi", "t1.2.0", 1500),
        (EVIL, "t1.1.0", 1200),
        ("bar-pi", "t1.1.0", 900),
    ]  # fmt: skip  (the record hidden at its table is not on the house wall)
    assert got[0]["snapshot_url"] == "http://bar-pi.local:8080/api/tables/t1/snapshots/2"
    page = client.get("/api/house/records?limit=1&offset=1").get_json()
    assert [r["points"] for r in page] == [1200]
    assert [r["id"] for r in client.get("/api/house/records?game=gords").get_json()] == ["t1.1.0"]
    kinds = client.get("/api/house/records?game=bolo&kind=turn").get_json()
    assert [r["points"] for r in kinds] == [900]
    assert client.get("/api/house/records?game=chess").status_code == 400
    assert client.get("/api/house/records?hidden=1").status_code == 401
    everything = client.get("/api/house/records?hidden=1", headers=PIN_HEADER).get_json()
    assert [r["points"] for r in everything] == [1500, 1200, 900, 700]
    assert everything[-1]["hidden"]
    assert everything[-1]["hidden_at_table"]


def test_hiding_needs_the_house_pin_and_survives_reshipping(
    client: FlaskClient, db: psycopg.Connection[Any]
) -> None:
    path = "/api/house/records/bar-pi/t1.2.0/hide"
    assert client.post(path, json={"hidden": True}).status_code == 401
    wrong = client.post(path, json={"hidden": True}, headers={"X-Dicepad-House-Pin": "1111"})
    assert wrong.status_code == 403
    assert wrong.get_json()["error"] == "wrong_pin"
    assert client.post(path, json={"hidden": True}, headers=PIN_HEADER).status_code == 200
    assert "t1.2.0" not in [r["id"] for r in client.get("/api/house/records").get_json()]
    replace_records(db, "bar-pi", "t1", [Rec("bar-pi", "t1.2.0", "t1", "bolo", "roll", "A", 1500)])
    assert [r["points"] for r in client.get("/api/house/records").get_json()] == [1200]
    shown = client.post(path, json={"hidden": False}, headers=PIN_HEADER)
    assert shown.get_json() == {"house_name": "bar-pi", "id": "t1.2.0", "hidden": False}
    assert client.get("/api/house/records").get_json()[0]["id"] == "t1.2.0"
    missing = client.post("/api/house/records/bar-pi/nope/hide", headers=PIN_HEADER)
    assert missing.status_code == 404


def test_wrong_pins_lock_an_address_out(client: FlaskClient) -> None:
    path = "/api/house/records/bar-pi/t1.2.0/hide"
    for _ in range(5):
        assert client.post(path, headers={"X-Dicepad-House-Pin": "0000"}).status_code == 403
    locked = client.post(path, headers=PIN_HEADER)
    assert locked.status_code == 429
    assert int(locked.headers["Retry-After"]) > 0


def test_a_page_session_needs_its_csrf_token_for_the_api(client: FlaskClient) -> None:
    login = client.post("/api/house/login", json={"pin": PIN})
    assert login.status_code == 200
    token = login.get_json()["csrf"]
    path = "/api/house/records/bar-pi/t1.2.0/hide"
    refused = client.post(path, json={"hidden": True})
    assert refused.status_code == 403
    assert refused.get_json()["error"] == "csrf"
    assert (
        client.post(path, json={"hidden": True}, headers={"X-CSRF-Token": token}).status_code == 200
    )


def test_logging_out_ends_the_session_for_every_copy_of_its_cookie(
    app: Flask, client: FlaskClient
) -> None:
    login = client.post("/api/house/login", json={"pin": PIN})
    csrf = login.get_json()["csrf"]
    cookie = client.get_cookie("dicepad_house_session")
    assert cookie is not None
    copy = app.test_client()  # a copy of the cookie, as someone on the Wi-Fi might take
    copy.set_cookie("dicepad_house_session", cookie.value)
    path = "/api/house/records/bar-pi/t1.2.0/hide"
    ok = {"X-CSRF-Token": csrf}
    assert copy.post(path, json={"hidden": False}, headers=ok).status_code == 200
    assert client.post("/logout", data={"csrf": csrf}).status_code == 302
    assert copy.post(path, json={"hidden": True}, headers=ok).status_code == 401
    assert "hide</button>" not in copy.get("/records").get_data(as_text=True)


def test_the_wall_queries_read_off_the_indexes(house_url: str) -> None:
    """The API's queries as reads.py builds them: the whole wall from ``records_points``
    (migration 2), one game's kind from ``records_wall``; no sort over every record."""
    conn = connect(house_url, autocommit=True)
    try:
        fill_wall(conn, 20_000, houses=3)
        cases = {
            RecordQuery(): "records_points",
            RecordQuery(house_name="pi-1", limit=10): "records_points",
            RecordQuery(game="bolo", kind="roll"): "records_wall",
        }
        for q, index in cases.items():
            query, params = records_query(q)
            plan = "\n".join(r[0] for r in conn.execute(sql.SQL("EXPLAIN ") + query, params))
            assert f"Index Scan using {index}" in plan, plan
            assert "Seq Scan on records" not in plan, plan
    finally:
        conn.close()


def test_health_reports_the_database_and_the_listener(app: Flask, client: FlaskClient) -> None:
    assert wait_until(lambda: house(app).listener.problem is None)
    report = client.get("/api/health").get_json()
    assert report["ok"]
    assert report["components"]["database"]["ok"]
    assert report["components"]["feed"]["ok"]
    assert report["components"]["feed"]["max_clients"] == 200


# -- the pages --------------------------------------------------------------------------------


def test_the_board_shows_every_table_escaped_with_links(client: FlaskClient) -> None:
    html = client.get("/").get_data(as_text=True)
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="http://bar-pi.local:8080/t/t1"' in html
    assert "javascript:" not in html
    assert "Playing now" in html
    assert "Finished" in html
    assert "Idle" in html
    assert 'data-events="/api/house/events"' in html
    assert "350" in html
    assert "10,000" in html
    response = client.get("/")
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert "<script>" not in html.replace('<script src="/static/house.js" defer></script>', "")


def test_the_wall_page_filters_and_hides_for_the_pin_holder_only(client: FlaskClient) -> None:
    html = client.get("/records").get_data(as_text=True)
    assert "1,500" in html
    assert "bar-pi" in html
    assert EVIL not in html
    assert "hide</button>" not in html
    only_gords = client.get("/records?game=gords").get_data(as_text=True)
    assert "1,200" in only_gords
    assert "1,500" not in only_gords
    by_house = client.get("/records?house_name=bar-pi").get_data(as_text=True)
    assert "1,500" in by_house
    assert "1,200" not in by_house
    assert client.get("/records?game=chess").status_code == 400
    # the log-in page's form, then hide through the wall's form
    login = client.get("/login?next=/records").get_data(as_text=True)
    token = login.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    assert (
        client.post("/login", data={"pin": "0000", "csrf": token, "next": "/records"}).status_code
        == 403
    )
    done = client.post("/login", data={"pin": PIN, "csrf": token, "next": "/records"})
    assert done.status_code == 302
    assert done.headers["Location"].endswith("/records")
    html = client.get("/records").get_data(as_text=True)
    token = html.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    form = "/records/bar-pi/t1.2.0/hide"
    assert client.post(form, data={"hidden": "1"}).status_code == 403  # no token: refused
    assert client.post(form, data={"hidden": "1", "csrf": token}).status_code == 302
    assert "1,500" not in client.get("/records").get_data(as_text=True)
    hidden = client.get("/records?hidden=1").get_data(as_text=True)
    assert "1,500" in hidden
    assert "show again</button>" in hidden
    assert "hidden at its table" in hidden  # the table's own hide: not the house's to undo


def test_a_pin_is_made_up_on_the_first_start_and_told_once(house_url: str) -> None:
    told: list[str] = []
    first = create_house_app(HouseConfig(db_url=house_url, pin_scrypt_n=2**8, announce=told.append))
    house(first).close()
    second = create_house_app(
        HouseConfig(db_url=house_url, pin_scrypt_n=2**8, announce=told.append)
    )
    try:
        assert len(told) == 1
        assert "house PIN is" in told[0]
        pin = told[0].split("house PIN is ", 1)[1].split()[0]
        client = second.test_client()
        ok = client.post("/api/house/records/x/y/hide", headers={"X-Dicepad-House-Pin": pin})
        assert ok.status_code == 404  # past the PIN: there is no such record
    finally:
        house(second).close()


def test_an_unreachable_database_is_a_page_saying_so_until_it_answers(
    own_pg_cluster: PgCluster,
) -> None:
    url = own_pg_cluster.new_database()
    own_pg_cluster.stop()
    app = make_app(url, retry_seconds=0.2)
    try:
        client = app.test_client()
        page = client.get("/")
        assert page.status_code == 503
        assert "House database unreachable" in page.get_data(as_text=True)
        assert client.get("/api/house/tables").get_json()["error"] == "house_unavailable"
        assert client.get("/api/health").status_code == 503
        own_pg_cluster.start()
        assert wait_until(lambda: client.get("/").status_code == 200, timeout=15)
        assert client.get("/api/health").status_code == 200 or wait_until(
            lambda: client.get("/api/health").status_code == 200, timeout=10
        )
    finally:
        house(app).close()


# -- a real ``dicepad house``: LISTEN/NOTIFY to the phones --------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HouseProcess:
    def __init__(self, url: str, log: Path, *, extra_env: dict[str, str] | None = None) -> None:
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCH"))}
        env |= {"DICEPAD_HOUSE_PIN": PIN} | (extra_env or {})
        code = "import sys; from server.cli import main; sys.exit(main())"
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, "house", "--db", url, "--host", "127.0.0.1",
                 "--port", "0", "--max-clients", "8"],
                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 30
        self.url = ""
        while not self.url and time.monotonic() < deadline:
            # stdout and stderr share the log, so a line may run on into a log message
            found = re.search(r"listening on (http://[\w.\[\]:-]+:\d+)", log.read_text())
            if found:
                self.url = found.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(log.read_text())
            time.sleep(0.05)
        assert self.url, log.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


class SseReader:
    """A raw SSE connection: the events as (name, data) in arrival order."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.sock.sendall(b"GET /api/house/events HTTP/1.0\r\nHost: x\r\n\r\n")  # unchunked
        self.buffer = b""

    def next_event(self, timeout: float = 10) -> tuple[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for block in self.buffer.split(b"\n\n")[:-1]:
                self.buffer = self.buffer.split(b"\n\n", 1)[1]
                fields = dict(
                    line.split(": ", 1) for line in block.decode().splitlines() if ": " in line
                )
                if "event" in fields:
                    return fields["event"], json.loads(fields["data"])
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(self.buffer)
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk.replace(b"\r\n", b"\n")

    def close(self) -> None:
        self.sock.close()


def test_a_shipped_batch_reaches_every_phone_on_the_house_feed(
    house_url: str, db: psycopg.Connection[Any], tmp_path: Path
) -> None:
    server = HouseProcess(house_url, tmp_path / "house.log")
    phones: list[SseReader] = []
    try:
        phones = [SseReader(server.url) for _ in range(3)]
        for phone in phones:
            name, data = phone.next_event()
            assert name == "tables"
            assert {(t["house_name"], t["table"]) for t in data["tables"]} >= {("bar-pi", "t1")}
        time.sleep(0.3)  # the phones are on the feed (the listener was, before the server said so)
        t0 = time.monotonic()
        seq = ship(db, "bar-pi", "t1", [Event()], scores={EVIL: 500, "Bob": 50})
        for phone in phones:
            name, data = phone.next_event(timeout=5)
            assert name == "table"
            assert (data["house_name"], data["table"], data["seq"]) == ("bar-pi", "t1", seq)
            assert data["line"]["scores"] == {EVIL: 500, "Bob": 50}
            assert data["line"]["seq"] == seq
        assert time.monotonic() - t0 < 2
        with urllib.request.urlopen(
            urllib.request.Request(
                server.url + "/api/house/records/bar-pi/t1.2.0/hide",
                data=b"{}", method="POST",
                headers={"X-Dicepad-House-Pin": PIN, "Content-Type": "application/json"},
            ),
            timeout=10,
        ) as response:  # fmt: skip
            assert response.status == 200
        assert phones[0].next_event(timeout=5) == ("records", {"records": True})
    finally:
        for phone in phones:
            phone.close()
        server.stop()


def test_the_command_says_in_one_line_what_is_wrong(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DICEPAD_HOUSE_DB"}
    code = "import sys; from server.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", code, "house"], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--db postgresql://" in done.stderr
    port = _free_port()  # nothing listens there
    server = HouseProcess(f"postgresql://dicepad@127.0.0.1:{port}/nothing", tmp_path / "h.log")
    try:
        text = server.log.read_text()
        assert "dicepad house: cannot reach the house database" in text
        assert "retrying" in text
        assert "Traceback" not in text
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(server.url + "/api/health", timeout=10)
        caught.value.close()  # its socket
        assert caught.value.code == 503
    finally:
        server.stop()
