"""What the house benchmarks share (``house_scale.py``, ``house_servers.py``): percentiles, the
raw SSE phone on ``/api/house/events``, and starting ``dicepad`` children that log their
address, so that both measure the feed the same way.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI = "import sys; from server.cli import main; sys.exit(main())"

#: the start of a ``table`` message on the house feed (its line follows; the seq whole)
EVENT = re.compile(
    rb'event: table\ndata: \{"house_name":"([^"]*)","table":"([^"]*)","seq":(\d+)[,}]'
)

Key = tuple[str, str, int]  #: (house name, table, seq)


#: a server's "listening on URL" line; its URL and port (the line may run on into a log line)
LISTENING = r"listening on (http://[\w.\[\]:-]+:(\d+))"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(v: float) -> str:
    return f"{v * 1000:.1f} ms"


def spread(values: list[float]) -> str:
    """``median X, p99 Y`` (or a dash when nothing was measured)."""
    if not values:
        return "-"
    return f"median {ms(pct(values, 0.5))}, p99 {ms(pct(values, 0.99))}"


# -- a phone on the house feed ----------------------------------------------------------------


class Phone:
    """One raw SSE connection (no HTTP library: 200 of them share one asyncio loop). Notes
    when each (house name, table, seq) became known: a ``table`` message carries the line's
    seq, and a batch of several events sends one message, so a message for seq S makes every
    seq after the last one seen up to S known at once."""

    def __init__(self) -> None:
        self.arrivals: dict[Key, float] = {}
        self.heads: dict[tuple[str, str], int] = {}
        self.messages = 0
        self.ready = asyncio.Event()
        self.error: str | None = None

    def _note(self, house_name: str, table: str, seq: int, now: float) -> None:
        self.messages += 1
        head = self.heads.get((house_name, table))
        first = seq if head is None else head + 1  # the board before it came as ``tables``
        for s in range(first, seq + 1):
            self.arrivals.setdefault((house_name, table, s), now)
        self.heads[(house_name, table)] = max(seq, head or 0)

    async def run(self, port: int, stop: asyncio.Event) -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as exc:
            self.error = str(exc)
            self.ready.set()
            return
        writer.write(b"GET /api/house/events HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        try:
            status = await reader.readline()
            if b" 200 " not in status:
                self.error = status.decode().strip() or "no answer"
                self.ready.set()
                return
            tail = b""
            while not stop.is_set():
                chunk = await reader.read(262144)
                now = time.monotonic()
                if not chunk:
                    self.error = self.error or "closed by server"
                    break
                data = tail + chunk
                if b"event: tables" in data:
                    self.ready.set()
                end = 0
                for m in EVENT.finditer(data):
                    self._note(m.group(1).decode(), m.group(2).decode(), int(m.group(3)), now)
                    end = m.end()
                tail = data[max(end, len(data) - 200) :]
        finally:
            writer.close()


# -- dicepad children -------------------------------------------------------------------------


def child_env(**extra: str) -> dict[str, str]:
    """This environment without systemd's variables (a child must not notify our unit)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCH"))}
    return env | extra


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``dicepad ARGS`` in its own session: a Ctrl-C at the terminal reaches the bench only,
    whose clean-up then stops every child in order."""
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-c", CLI, *args],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def listening(proc: subprocess.Popen[bytes], log: Path, timeout: float = 60.0) -> str:
    """The address a child logs once it listens (``--port 0``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(LISTENING, log.read_text())  # stdout and stderr share the log
        if found:
            return found.group(1)
        if proc.poll() is not None:
            raise SystemExit(f"dicepad exited: {log.read_text()}")
        time.sleep(0.05)
    raise SystemExit(f"dicepad did not start: {log.read_text()}")


def stop_all(procs: list[subprocess.Popen[bytes]], timeout: float = 20.0) -> None:
    """SIGTERM to every child at once (a clean stop each), then SIGKILL to any still there
    after ``timeout``: 40 servers stop in one server's time."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def start_house(url: str, clients: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A ``dicepad house`` child on a free loopback port, room for ``clients`` phones."""
    proc = spawn(
        ["house", "--db", url, "--host", "127.0.0.1", "--port", "0",
         "--max-clients", str(clients + 8)],
        child_env(DICEPAD_HOUSE_PIN="2468"), log,
    )  # fmt: skip
    try:
        return proc, listening(proc, log)
    except BaseException:
        stop_all([proc])
        raise


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used (``/proc``; 0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
