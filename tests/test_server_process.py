"""``dicepad serve`` as a real process: SIGKILL and restart lose nothing, SIGTERM stops
cleanly, systemd hears ready / watchdog / stopping."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_process import PIN, REPO, SERVE, Server


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for s in started:
        s.kill_if_running()


ACTIONS: list[dict[str, Any]] = [
    {"type": "roll", "dice": [1, 1, 1, 5, 2, 3]},
    {"type": "keep", "dice": [1, 1, 1, 5]},
    {"type": "bank"},
    {"type": "roll", "dice": [5, 5, 5, 5, 5, 5]},
    {"type": "fix", "dice": [2, 2, 2, 3, 4, 6]},
    {"type": "keep", "dice": [2, 2, 2]},
    {"type": "undo"},
    {"type": "keep", "dice": [2, 2, 2]},
]


def test_sigkill_then_restart_gives_identical_state_and_log(
    tmp_path: Path, servers: list[Server]
) -> None:
    data = tmp_path / "data"
    first = Server(data, tmp_path / "a.log")
    servers.append(first)
    t = first.call(
        "POST", "/api/tables", {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}
    )["table"]
    for action in ACTIONS:
        first.call("POST", f"/api/tables/{t}/actions", action)
    state = first.call("GET", f"/api/tables/{t}")
    log = first.call("GET", f"/api/tables/{t}/log")
    records = first.call("GET", "/api/records")
    assert first.stop(signal.SIGKILL) == -signal.SIGKILL

    second = Server(data, tmp_path / "b.log")
    servers.append(second)
    assert second.call("GET", f"/api/tables/{t}") == state
    assert second.call("GET", f"/api/tables/{t}/log") == log
    assert second.call("GET", "/api/records") == records
    assert [e["action"]["type"] for e in log] == [a["type"] for a in ACTIONS]
    # and play goes on from the same place
    after = second.call("POST", f"/api/tables/{t}/actions", {"type": "bank"})
    assert after["seq"] == len(ACTIONS) + 1
    assert second.stop(signal.SIGTERM) == 0


def test_sigterm_stops_cleanly_with_live_clients_and_tells_systemd(
    tmp_path: Path, servers: list[Server]
) -> None:
    sock_path = tmp_path / "notify.sock"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(sock_path))
    notify.settimeout(10)
    try:
        server = Server(
            tmp_path / "data",
            tmp_path / "c.log",
            {"NOTIFY_SOCKET": str(sock_path), "WATCHDOG_USEC": "200000"},
        )
        servers.append(server)
        assert notify.recv(4096).startswith(b"READY=1")
        assert notify.recv(4096) == b"WATCHDOG=1"  # healthy: the watchdog is fed
        t = server.call(
            "POST", "/api/tables", {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}
        )["table"]
        feed = urllib.request.urlopen(f"{server.url}/api/tables/{t}/events", timeout=10)
        assert feed.readline() == b"retry: 2000\n"
        health = server.call("GET", "/api/health")
        assert health["feed"]["clients"] == 1
        started = time.monotonic()
        assert server.stop(signal.SIGTERM) == 0
        assert time.monotonic() - started < 10
        assert b"event: state" in feed.read()  # the stream ended instead of hanging
        feed.close()
        messages = []
        notify.settimeout(1)
        try:
            while True:
                messages.append(notify.recv(4096))
        except TimeoutError:
            pass
        assert b"STOPPING=1" in messages
        assert "dicepad: stopped" in server.log.read_text()
    finally:
        notify.close()


def test_serve_refuses_a_port_in_use_and_bad_flags(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-c", SERVE, "serve", "--host", "127.0.0.1", "--port", str(port),
             "--data", str(tmp_path / "d"), "--camera", "none"],
            cwd=REPO, env=os.environ | {"DICEPAD_PIN": PIN}, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
    assert out.returncode == 1
    assert "cannot listen" in out.stderr
    bad = subprocess.run(
        [sys.executable, "-c", SERVE, "serve", "--max-clients", "0", "--data", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "--max-clients" in bad.stderr
    # settings from the environment: a clear error before listening, not a traceback after
    for env, named in (
        ({"DICEPAD_PORT": "abc"}, "DICEPAD_PORT"),
        ({"DICEPAD_BUTTONS": "bogus"}, "DICEPAD_BUTTONS"),
        ({"DICEPAD_CAMERA": "webcam"}, "webcam"),
    ):
        bad = subprocess.run(
            [sys.executable, "-c", SERVE, "serve", "--host", "127.0.0.1", "--data", str(tmp_path)],
            cwd=REPO, env=os.environ | {"DICEPAD_PIN": PIN, "DICEPAD_CAMERA": "none"} | env,
            capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
        assert bad.returncode == 2
        assert named in bad.stderr
        assert "Traceback" not in bad.stderr
        assert "listening" not in bad.stdout


def test_a_generated_pin_is_printed_on_first_start_only(
    tmp_path: Path, servers: list[Server]
) -> None:
    data = tmp_path / "data"
    first = Server(data, tmp_path / "e.log", {"DICEPAD_PIN": ""})
    servers.append(first)
    out = first.log.read_text()
    pin = out.split("the table PIN is ", 1)[1].split()[0]
    assert pin.isdigit()
    assert first.stop(signal.SIGTERM) == 0
    second = Server(data, tmp_path / "f.log", {"DICEPAD_PIN": ""})
    servers.append(second)
    assert "PIN" not in second.log.read_text()
    assert pin not in second.log.read_text()
    req = urllib.request.Request(second.url + "/api/login", method="POST",
                                 data=json.dumps({"pin": pin}).encode(),
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert json.loads(resp.read()) == {"authenticated": True}


def test_http_errors_from_the_real_server_are_json(tmp_path: Path, servers: list[Server]) -> None:
    server = Server(tmp_path / "data", tmp_path / "d.log")
    servers.append(server)
    with pytest.raises(urllib.error.HTTPError) as info:
        server.call("GET", "/api/tables/nothere")
    assert info.value.code == 404
    assert json.loads(info.value.read())["error"] == "not_found"
    info.value.close()


@pytest.mark.slow
@pytest.mark.parametrize("stall_timeout", ["0", "2"])
def test_a_phone_that_stops_reading_never_stalls_the_table(
    tmp_path: Path, servers: list[Server], stall_timeout: str
) -> None:
    """Without a stall timeout the stuck phone is dropped from the feed when its queue fills
    (its thread waits until it goes away); with one, the kernel cuts it off and its thread
    and slot come back while it still holds the socket open."""
    server = Server(tmp_path / "data", tmp_path / "g.log", args=["--stall-timeout", stall_timeout])
    servers.append(server)
    teams = {"A": ["Ann"], "B": ["Bob"]}
    t = server.call("POST", "/api/tables", {"game": "you-blew-it", "teams": teams})["table"]
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a tiny window, never read
    stuck.connect((host, int(port)))
    stuck.sendall(f"GET /api/tables/{t}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    good = urllib.request.urlopen(f"{server.url}/api/tables/{t}/events", timeout=10)
    try:
        assert good.readline() == b"retry: 2000\n"
        slowest = 0.0
        for n in range(1, 2001):
            started = time.monotonic()
            server.call("POST", f"/api/tables/{t}/actions",
                        {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]})  # fmt: skip
            slowest = max(slowest, time.monotonic() - started)
            _read_until_entry(good, n)  # the attentive phone has every action, in order
            if n % 10 == 0:
                feed = server.call("GET", "/api/health")["feed"]
                if feed["dropped"] if stall_timeout == "0" else feed["clients"] == 1:
                    break
        else:
            raise AssertionError("the stuck phone was never let go")
        assert slowest < 2.0  # the writer was never held up by the stuck phone
    finally:
        stuck.close()
    deadline = time.monotonic() + 20
    while server.call("GET", "/api/health")["feed"]["clients"] != 1:  # its slot comes back
        assert time.monotonic() < deadline
        time.sleep(0.1)
    good.close()


def _read_until_entry(stream: Any, seq: int) -> None:
    """Read the SSE stream until the entry with id ``seq`` (fails on any other id)."""
    last = None
    while True:
        line = stream.readline()
        assert line, "stream ended"
        if line.startswith(b"id: ") and line != last:
            last = line
            got = int(line[4:])
            if got == seq:
                return
            assert got < seq, (got, seq)
