"""The sd_notify client against a real Unix datagram socket bound by the test, as systemd binds
one, and ``dicepad serve`` end to end under a fake service manager (the socket + a watchdog)."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.sdnotify import Notifier

REPO = Path(__file__).resolve().parent.parent


class ServiceManager:
    """The receiving end of ``NOTIFY_SOCKET``: what systemd reads, one datagram per message."""

    def __init__(self, sock: socket.socket, address: str) -> None:
        self.sock = sock
        self.address = address  #: the NOTIFY_SOCKET value (a path, or ``@name``)

    def receive(self, timeout: float = 5.0) -> str:
        self.sock.settimeout(timeout)
        return self.sock.recv(65536).decode()

    def pending(self) -> list[str]:
        messages: list[str] = []
        self.sock.setblocking(False)
        try:
            while True:
                messages.append(self.sock.recv(65536).decode())
        except BlockingIOError:
            return messages

    def wait_for(self, wanted: str, timeout: float) -> list[str]:
        """Every message up to and including the first that has the line ``wanted``."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {wanted!r} within {timeout} s; got {seen!r}")
            try:
                message = self.receive(left)
            except TimeoutError:
                continue
            seen.append(message)
            if wanted in message.split("\n"):
                return seen


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[ServiceManager]:
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        yield ServiceManager(sock, str(path))


@pytest.fixture
def abstract_manager() -> Iterator[ServiceManager]:
    name = f"dicepad-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        yield ServiceManager(sock, "@" + name)


def test_ready_status_watchdog_stopping_arrive_in_order(manager: ServiceManager) -> None:
    notifier = Notifier(manager.address)
    assert notifier.enabled
    assert notifier.ready()
    assert notifier.status("camera ok, 12 fps")
    assert notifier.watchdog()
    assert notifier.stopping()
    assert [manager.receive() for _ in range(4)] == [
        "READY=1",
        "STATUS=camera ok, 12 fps",
        "WATCHDOG=1",
        "STOPPING=1",
    ]


def test_ready_carries_a_status_in_the_same_datagram(manager: ServiceManager) -> None:
    assert Notifier(manager.address).ready("listening on :8080")
    assert manager.receive() == "READY=1\nSTATUS=listening on :8080"


def test_abstract_namespace_socket(abstract_manager: ServiceManager) -> None:
    notifier = Notifier(abstract_manager.address)
    assert notifier.ready()
    assert notifier.watchdog()
    assert abstract_manager.receive() == "READY=1"
    assert abstract_manager.receive() == "WATCHDOG=1"


@given(text=st.text(st.characters(codec="utf-8"), max_size=200))
def test_a_status_is_one_assignment_whatever_its_text(text: str) -> None:
    """A multi-line error in a status must not smuggle in ``READY=1`` or ``WATCHDOG=1``."""
    name = f"dicepad-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        assert Notifier("@" + name).status(text)
        sock.settimeout(5)
        lines = sock.recv(65536).decode().split("\n")
    assert len(lines) == 1
    assert lines[0].startswith("STATUS=")


def test_watchdog_interval_is_half_of_watchdog_usec(manager: ServiceManager) -> None:
    env = {"NOTIFY_SOCKET": manager.address, "WATCHDOG_USEC": "30000000"}
    assert Notifier.from_environ(env).watchdog_interval == 15.0
    env["WATCHDOG_PID"] = str(os.getpid())
    assert Notifier.from_environ(env).watchdog_interval == 15.0


@pytest.mark.parametrize(
    "extra",
    [
        {},  # no watchdog configured
        {"WATCHDOG_USEC": "0"},
        {"WATCHDOG_USEC": "soon"},
        {"WATCHDOG_USEC": "-5"},
        {"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"},  # meant for another process
    ],
)
def test_no_watchdog_unless_it_is_meant_for_this_process(
    manager: ServiceManager, extra: dict[str, str]
) -> None:
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": manager.address, **extra})
    assert notifier.enabled
    assert notifier.watchdog_interval is None


def test_everything_is_a_no_op_without_notify_socket(manager: ServiceManager) -> None:
    notifier = Notifier.from_environ({"WATCHDOG_USEC": "2000000"})
    assert not notifier.enabled
    assert notifier.watchdog_interval is None
    assert not notifier.ready()
    assert not notifier.status("x")
    assert not notifier.watchdog()
    assert not notifier.stopping()
    assert Notifier.from_environ({"NOTIFY_SOCKET": ""}).enabled is False
    assert manager.pending() == []  # nothing went anywhere


def test_an_unreachable_socket_never_raises(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(closed))  # bound, then closed: the file stays, nobody listens
    regular = tmp_path / "regular"
    regular.write_text("not a socket")
    for address in (
        str(tmp_path / "missing"),
        str(closed),
        str(regular),
        "@dicepad-nobody-" + uuid.uuid4().hex,
        str(tmp_path / ("x" * 200)),  # longer than sun_path
    ):
        notifier = Notifier(address, 2_000_000)
        assert not notifier.ready("x")
        assert not notifier.watchdog()
        assert not notifier.stopping()


def test_an_oversized_message_is_dropped_not_raised(manager: ServiceManager) -> None:
    assert not Notifier(manager.address).status("x" * 1_000_000)
    assert Notifier(manager.address).watchdog()  # and the next ping still goes through
    assert manager.receive() == "WATCHDOG=1"


# --- dicepad serve under a fake service manager ---------------------------------------------

HAS_SERVE = importlib.util.find_spec("server.cli.serve") is not None


@pytest.mark.skipif(not HAS_SERVE, reason="server/cli/serve.py (the server's issue) not there yet")
def test_serve_feeds_the_watchdog_only_while_healthy(manager: ServiceManager) -> None:
    """A failing (or crashing) health check silences the pings, so systemd restarts us."""
    from server.cli.serve import _watchdog

    state = {"health": "ok"}

    def healthy() -> bool:
        if state["health"] == "crash":
            raise RuntimeError("database is locked")
        return state["health"] == "ok"

    stop = threading.Event()
    pinger = threading.Thread(
        target=_watchdog, args=(Notifier(manager.address, 100_000), healthy, stop), daemon=True
    )
    pinger.start()  # pings every 0.05 s
    try:
        manager.wait_for("WATCHDOG=1", timeout=5)
        for bad in ("sick", "crash"):
            state["health"] = bad
            time.sleep(0.2)  # let a ping already on its way arrive
            manager.pending()
            time.sleep(0.5)
            assert manager.pending() == [], bad
            state["health"] = "ok"
            manager.wait_for("WATCHDOG=1", timeout=5)
    finally:
        stop.set()
        pinger.join(5)
    assert not pinger.is_alive()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.skipif(not HAS_SERVE, reason="server/cli/serve.py (the server's issue) not there yet")
def test_serve_notifies_ready_once_listening_then_feeds_the_watchdog_then_stops(
    manager: ServiceManager, tmp_path: Path
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "NOTIFY_SOCKET": manager.address,
        "WATCHDOG_USEC": "1000000",  # pings every 0.5 s
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DICEPAD_PIN", None)
    cmd = [
        sys.executable,
        "-c",
        "import sys; from server.cli import main; sys.exit(main())",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data",
        str(tmp_path / "data"),
        "--camera",
        "none",
    ]
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            before = manager.wait_for("READY=1", timeout=60)
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                pass  # READY=1 means phones can connect now
            assert not any("WATCHDOG=1" in m for m in before), "a ping before READY=1"
            started = time.monotonic()
            pings = 0
            while pings < 3:
                if "WATCHDOG=1" in manager.wait_for("WATCHDOG=1", timeout=5)[-1]:
                    pings += 1
            assert time.monotonic() - started < 5
            proc.send_signal(signal.SIGTERM)
            manager.wait_for("STOPPING=1", timeout=15)
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, log.read_text()
