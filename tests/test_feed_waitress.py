"""The live feed under waitress: phones' sockets lent to the one writer thread.

A real waitress server in this process (configured as ``dicepad serve`` configures it) on
127.0.0.1, real sockets: the HTTP framing, the catch-up, keep-alives, hang-ups, laggards and
shutdown are checked on the wire, where a framing mistake would corrupt every phone's stream.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from waitress.server import create_server

from server.app import create_app
from server.cli.serve import EXTRA_CONNECTIONS, EXTRA_THREADS, OUTBUF_HIGH_WATERMARK
from server.config import Config
from server.feed.waitress import waitress_sink
from server.services import dicepad

PIN = "2468"
BLOW = {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]}  # always legal in You Blew It
TEAMS = {"A": ["Ann"], "B": ["Bob"]}


class Live:
    """An app served by waitress on a free loopback port, from a thread of this process."""

    def __init__(self, data: Path, **config: Any) -> None:
        settings: dict[str, Any] = {
            "data_dir": data,
            "pin": PIN,
            "camera": "none",
            "pin_scrypt_n": 2**4,
            "max_feed_clients": 8,
        }
        self.app: Flask = create_app(Config(**(settings | config)))
        clients = dicepad(self.app).config.max_feed_clients
        self.server: Any = create_server(
            self.app,
            host="127.0.0.1",
            port=0,
            threads=clients + EXTRA_THREADS,
            connection_limit=clients + EXTRA_CONNECTIONS,
            outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
            asyncore_use_poll=True,
        )
        self.port = int(self.server.effective_port)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.server.asyncore.loop(0.05, map=self.server._map, use_poll=True, count=1)

    @property
    def feed(self) -> Any:
        return dicepad(self.app).feed

    def call(self, method: str, path: str, body: Any = None) -> Any:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(
                method,
                path,
                body=None if body is None else json.dumps(body),
                headers={"X-Dicepad-Pin": PIN, "Content-Type": "application/json"},
            )
            resp = conn.getresponse()
            payload = resp.read()
            assert resp.status < 400, payload
            return json.loads(payload)
        finally:
            conn.close()

    def table(self) -> str:
        table: str = self.call("POST", "/api/tables", {"game": "you-blew-it", "teams": TEAMS})[
            "table"
        ]
        return table

    def act(self, table: str) -> int:
        seq: int = self.call("POST", f"/api/tables/{table}/actions", BLOW)["seq"]
        return seq

    def close(self) -> None:
        self.feed.close()
        self._stop.set()
        self._thread.join(5)
        self.server.task_dispatcher.shutdown(timeout=5)
        self.server.asyncore.close_all(self.server._map)
        dicepad(self.app).close()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Callable[..., Live]]:
    started: list[Live] = []

    def start(**config: Any) -> Live:
        server = Live(tmp_path / f"data{len(started)}", **config)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


class Phone:
    """An EventSource over http.client: the chunked body is decoded (and checked) by it."""

    def __init__(self, port: int, path: str, headers: dict[str, str] | None = None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.conn.request("GET", path, headers=headers or {})
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200
        assert self.resp.getheader("Transfer-Encoding") == "chunked"
        self.comments = 0

    def event(self) -> tuple[int | None, str, Any]:
        """The next event (id, name, data); counts the comments (keep-alives) it skips."""
        fields: dict[str, str] = {}
        while True:
            line = self.resp.readline()
            assert line, "the stream ended"
            text = line.decode().rstrip("\n")
            if text.startswith(":"):
                self.comments += 1
            elif text and ": " in text:
                key, value = text.split(": ", 1)
                fields[key] = value
            elif not text and "event" in fields:
                seq = int(fields["id"]) if "id" in fields else None
                return seq, fields["event"], json.loads(fields["data"])

    def until_state(self) -> list[tuple[int | None, str]]:
        """Read up to and including the next ``state`` event; their (id, name)s."""
        got = []
        while True:
            seq, name, _ = self.event()
            got.append((seq, name))
            if name == "state":
                return got

    def close(self) -> None:
        self.resp.close()  # holds the socket: waitress answers "Connection: close"
        self.conn.close()


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_lent_streams_get_catch_up_then_every_action_in_order(
    live: Callable[..., Live],
) -> None:
    server = live()
    t = server.table()
    server.act(t)
    server.act(t)
    phones = [Phone(server.port, f"/api/tables/{t}/events", {"Last-Event-ID": "1"})]
    phones += [Phone(server.port, f"/api/tables/{t}/events") for _ in range(2)]
    assert phones[0].until_state() == [(2, "entry"), (2, "state")]
    for phone in phones[1:]:
        assert phone.until_state() == [(2, "state")]
    _wait(lambda: server.feed.lent == 3)  # the writer thread holds them all
    for _ in range(5):
        server.act(t)
    for phone in phones:
        got = [phone.until_state() for _ in range(5)]
        assert got == [[(n, "entry"), (n, "state")] for n in range(3, 8)]
        phone.close()
    _wait(lambda: server.feed.stats().clients == 0)
    assert server.feed.lent == 0


def test_an_http10_phone_gets_the_bytes_unframed_until_the_connection_closes(
    live: Callable[..., Live],
) -> None:
    server = live()
    t = server.table()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(f"GET /api/tables/{t}/events HTTP/1.0\r\n\r\n".encode())
        _wait(lambda: server.feed.lent == 1)
        server.act(t)
        body = b""
        while b"id: 1\nevent: entry\ndata: " not in body:  # delivered before the stream ends
            chunk = sock.recv(65536)
            assert chunk, "the connection closed before the action arrived"
            body += chunk
        server.feed.close()  # the stream ends: for HTTP/1.0 the connection closes
        while chunk := sock.recv(65536):
            body += chunk
    head, _, rest = body.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head
    assert rest.startswith(b"retry: 2000\n\n")
    assert b"id: 1\nevent: entry\ndata: " in rest
    assert rest.endswith(b"\n\n")


def test_the_writer_keeps_a_quiet_stream_alive(live: Callable[..., Live]) -> None:
    server = live(keepalive_seconds=0.05)
    t = server.table()
    phone = Phone(server.port, f"/api/tables/{t}/events")
    phone.until_state()
    _wait(lambda: server.feed.lent == 1)
    time.sleep(0.3)  # quiet: six keep-alive intervals
    server.act(t)
    assert phone.until_state() == [(1, "entry"), (1, "state")]
    assert phone.comments >= 2  # keep-alives came in the quiet time before the action
    phone.close()


def test_a_phone_that_hangs_up_is_let_go_without_waiting_for_a_write(
    live: Callable[..., Live],
) -> None:
    server = live(keepalive_seconds=60)
    t = server.table()
    phone = Phone(server.port, f"/api/tables/{t}/events")
    phone.until_state()
    _wait(lambda: server.feed.lent == 1)
    phone.close()
    _wait(lambda: server.feed.stats().clients == 0, timeout=5)  # not 60 s
    assert server.feed.lent == 0
    assert server.feed.stats().dropped == 0  # gone, not lagging
    server.act(t)  # the table carries on
    assert server.call("GET", "/api/health")["feed"]["clients"] == 0


def test_a_phone_that_stops_reading_is_dropped_and_the_others_keep_up(
    live: Callable[..., Live],
) -> None:
    server = live()
    server.feed.max_backlog = 32 * 1024  # before the writer thread starts
    t = server.table()
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a tiny window, never read
    stuck.connect(("127.0.0.1", server.port))
    stuck.sendall(f"GET /api/tables/{t}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    good = Phone(server.port, f"/api/tables/{t}/events")
    good.until_state()
    _wait(lambda: server.feed.lent == 2)
    blob = b": " + b"x" * 65536 + b"\n\n"  # an SSE comment: phones ignore it
    try:
        for _ in range(400):
            started = time.monotonic()
            assert server.feed.publish(t, blob) >= 1
            assert time.monotonic() - started < 0.5  # never held up by the stuck phone
            assert good.resp.readline() == blob[:-1]  # the attentive phone has every one
            assert good.resp.readline() == b"\n"
            if server.feed.stats().dropped:
                break
        else:
            raise AssertionError("the stuck phone was never dropped")
        _wait(lambda: server.feed.stats().clients == 1)  # its thread and slot came back
        assert server.feed.lent == 1
        server.act(t)
        assert good.until_state() == [(1, "entry"), (1, "state")]
    finally:
        stuck.close()
        good.close()


def test_closing_the_feed_ends_every_lent_stream_properly(live: Callable[..., Live]) -> None:
    server = live()
    t = server.table()
    phones = [Phone(server.port, f"/api/tables/{t}/events") for _ in range(3)]
    for phone in phones:
        phone.until_state()
    _wait(lambda: server.feed.lent == 3)
    server.act(t)
    for phone in phones:  # delivered first: closing discards what is still unsent, by design
        assert phone.until_state() == [(1, "entry"), (1, "state")]
    server.feed.close()
    for phone in phones:
        assert phone.resp.read() == b""  # http.client checks the last chunk arrives
        assert phone.resp.isclosed()
    _wait(lambda: server.feed.stats().clients == 0)
    assert server.feed.lent == 0


def test_a_head_request_holds_no_feed_slot(live: Callable[..., Live]) -> None:
    server = live(max_feed_clients=1)
    t = server.table()
    for _ in range(3):  # more than the feed holds
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("HEAD", f"/api/tables/{t}/events")
        resp = conn.getresponse()
        assert resp.status == 200
        assert resp.getheader("Content-Type", "").startswith("text/event-stream")
        assert resp.read() == b""
        conn.close()
    assert server.feed.stats().clients == 0
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("HEAD", "/api/tables/zzzzzz/events")
    assert conn.getresponse().status == 404
    conn.close()


def test_only_a_get_served_by_waitress_is_lent() -> None:
    class Channel:
        socket = _map = _fileno = connected = total_outbufs_len = None

        def write_soon(self, data: bytes) -> int:
            return len(data)

        def check_client_disconnected(self) -> bool:
            return False

    probe = Channel().check_client_disconnected
    environ = {"REQUEST_METHOD": "GET", "SERVER_PROTOCOL": "HTTP/1.1"}
    assert waitress_sink(environ | {"waitress.client_disconnected": probe}) is not None
    assert waitress_sink(environ) is None  # another WSGI server, Flask's test client
    assert waitress_sink(environ | {"waitress.client_disconnected": lambda: False}) is None
    head = environ | {"REQUEST_METHOD": "HEAD", "waitress.client_disconnected": probe}
    assert waitress_sink(head) is None  # no body to write


def test_phones_joining_while_actions_land_see_each_one_exactly_once_in_order(
    live: Callable[..., Live],
) -> None:
    """Actions published between a phone's subscription and the hand-over of its socket are
    queued and written first: no gap, no repeat, whatever the timing."""
    server = live()
    t = server.table()
    actions = 30
    poster = threading.Thread(target=lambda: [server.act(t) for _ in range(actions)])
    poster.start()
    phones = []
    for _ in range(4):
        phones.append(Phone(server.port, f"/api/tables/{t}/events"))
        time.sleep(0.02)
    poster.join()
    for phone in phones:
        (start, _), *_ = phone.until_state()  # the snapshot: what it has so far
        assert start is not None
        seen = [seq for _ in range(start, actions) for seq, name in phone.until_state()]
        assert seen == [n for n in range(start + 1, actions + 1) for _ in ("entry", "state")]
        phone.close()


def test_a_slow_phone_within_the_bound_gets_every_byte_once_it_reads(
    live: Callable[..., Live],
) -> None:
    """What its socket does not take is kept and sent when it drains, in order."""
    server = live()
    server.feed.max_backlog = 16 * 1024 * 1024
    t = server.table()
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect(("127.0.0.1", server.port))
    slow.sendall(f"GET /api/tables/{t}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    _wait(lambda: server.feed.lent == 1)
    blobs = [b": " + bytes([97 + n]) * 262144 + b"\n\n" for n in range(16)]  # 4 MB
    for blob in blobs:
        assert server.feed.publish(t, blob) == 1  # never waits for the phone
    seq = server.act(t)
    response = http.client.HTTPResponse(slow)
    response.begin()  # the head, then the chunked body, as a phone reads it
    try:
        while response.readline() != b"event: state\n":  # the snapshot
            pass
        response.readline()  # its data
        response.readline()
        for blob in blobs:
            assert response.readline() == blob[:-1]
            assert response.readline() == b"\n"
        assert response.readline() == f"id: {seq}\n".encode()
        assert server.feed.stats().dropped == 0
    finally:
        response.close()
        slow.close()
