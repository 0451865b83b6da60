"""Live-feed benchmark: N phones on loopback, how long until every one sees an action.

For each N (default 50, 100, 200) a fresh ``dicepad serve`` process is started on a free
127.0.0.1 port with its own temporary data directory. N server-sent-event clients (one asyncio
loop in this process, so the clients do not fight the server for threads) connect to one
table; then actions are posted one at a time. For each action we measure the time from just
before the POST is sent until the LAST client has received its event ("action to every
client"), every single delivery ("one"), and the POST round trip itself (validation, the
fsync'd SQLite commit, the broadcast: when "every" has a long tail and "POST" has the same
one, the server was starved or the disk stalled, not the fan-out), and the "spread" from the
first client's delivery to the last (the fan-out itself, whatever the commit took). The
server's resident memory (VmRSS, peak VmHWM) and its CPU time per action (user+system) come
from /proc.

Measured after the coach warm-up (the Farkle policies solved at start, under a second here)
has finished, so that the figures are the steady state of an evening: while a policy is
solved, a request that waits on I/O takes the GIL back a few milliseconds later each time.

Targets (issue 6): p99 action-to-every-client <= 100 ms at 200 clients; server RSS <= 150 MB.

    ./run bench bench_feed [--clients 50 100 200] [--actions 60] [--interval 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PIN = "97531"
SERVE = "import sys; from server.cli import main; sys.exit(main())"
BLOW = {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]}  # always legal: the turn passes on


#: a server's "listening on URL" line; its URL and port (the line may run on into a log line)
LISTENING = r"listening on (http://[\w.\[\]:-]+:(\d+))"


def start_server(data: Path, max_clients: int) -> tuple[subprocess.Popen[bytes], int, Path]:
    log = data / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCHDOG_"))}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, "serve", "--host", "127.0.0.1", "--port", "0",
             "--data", str(data / "db"), "--camera", "none", "--max-clients", str(max_clients)],
            cwd=REPO, env=env | {"DICEPAD_PIN": PIN}, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(LISTENING, log.read_text())  # stdout and stderr share the log
        if found:
            return proc, int(found.group(2)), log
        if proc.poll() is not None:
            raise SystemExit(f"serve exited:\n{log.read_text()}")
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("serve did not start")


def wait_for_coach(port: int, timeout: float = 120.0) -> str:
    """Wait until the coach warm-up has nothing queued; its health line."""
    deadline = time.monotonic() + timeout
    while True:
        coach = call(port, "GET", "/api/health")["components"].get("coach", {})
        detail = str(coach.get("detail", "no coach warm-up"))
        if "queued" not in detail or time.monotonic() > deadline:
            return detail
        time.sleep(0.1)


def call(port: int, method: str, path: str, body: Any = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"X-Dicepad-Pin": PIN}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        if resp.status >= 400:
            raise RuntimeError(f"{method} {path}: {resp.status} {payload[:200]!r}")
        return json.loads(payload)
    finally:
        conn.close()


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def memory_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


ENTRY = re.compile(rb"id: (\d+)\r?\nevent: (\w+)")


class Client:
    """One SSE connection; records when each entry id arrives.

    Kept cheap on purpose (a C regex over each read) so the clients, which share the CPUs
    with the server, disturb the measurement as little as possible.
    """

    def __init__(self) -> None:
        self.arrivals: dict[int, float] = {}
        self.ready = asyncio.Event()
        self.error: str | None = None

    async def run(self, port: int, table: str, stop: asyncio.Event) -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as exc:
            self.error = str(exc)
            self.ready.set()
            return
        writer.write(
            f"GET /api/tables/{table}/events HTTP/1.1\r\nHost: x\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
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
                now = time.perf_counter()
                if not chunk:
                    self.error = self.error or "closed by server"
                    break
                data = tail + chunk
                for match in ENTRY.finditer(data):
                    if match.group(2) == b"entry":
                        self.arrivals.setdefault(int(match.group(1)), now)
                    elif not self.ready.is_set():
                        self.ready.set()
                tail = data[-40:]  # a header split across two reads is found next time
        finally:
            writer.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(
    port: int, table: str, clients: int, actions: int, interval: float
) -> dict[str, Any]:
    stop = asyncio.Event()
    pool = [Client() for _ in range(clients)]
    tasks = [asyncio.create_task(c.run(port, table, stop)) for c in pool]
    await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in pool)), timeout=120)
    failed = [c.error for c in pool if c.error]
    if failed:
        raise SystemExit(f"{len(failed)} clients failed to connect: {failed[0]}")
    sent: dict[int, float] = {}
    posts: list[float] = []  # POST round trips: validation + the fsync'd commit + broadcast
    for _ in range(actions):
        t0 = time.perf_counter()
        reply = await asyncio.to_thread(call, port, "POST", f"/api/tables/{table}/actions", BLOW)
        posts.append(time.perf_counter() - t0)
        seq = reply["seq"]
        sent[seq] = t0
        deadline = time.perf_counter() + 10
        while any(seq not in c.arrivals for c in pool) and time.perf_counter() < deadline:
            await asyncio.sleep(0.001)
        await asyncio.sleep(interval)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    every, single, spread, lost = [], [], [], 0
    for seq, t0 in sent.items():
        got = [c.arrivals.get(seq) for c in pool]
        lost += sum(1 for g in got if g is None)
        arrived = [g - t0 for g in got if g is not None]
        single.extend(arrived)
        if len(arrived) == len(got):
            every.append(max(arrived))
            spread.append(max(arrived) - min(arrived))
    return {"every": every, "single": single, "spread": spread, "lost": lost, "posts": posts}


def run_one(clients: int, actions: int, interval: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dicepad-bench-") as tmp:
        proc, port, _ = start_server(Path(tmp), max_clients=clients)
        try:
            result_coach = wait_for_coach(port)
            teams = {"A": ["Ann"], "B": ["Bob"]}
            table = call(port, "POST", "/api/tables", {"game": "you-blew-it", "teams": teams})
            table = table["table"]
            call(port, "POST", f"/api/tables/{table}/actions", BLOW)  # warm-up (PIN memo)
            idle = memory_kb(proc.pid)
            cpu0 = cpu_seconds(proc.pid)
            result = asyncio.run(measure(port, table, clients, actions, interval))
            cpu1 = cpu_seconds(proc.pid)
            result["user_ms"] = (cpu1[0] - cpu0[0]) * 1000 / actions
            result["sys_ms"] = (cpu1[1] - cpu0[1]) * 1000 / actions
            result["mem"] = memory_kb(proc.pid)
            result["idle"] = idle
            result["health"] = call(port, "GET", "/api/health")["feed"]
            result["coach"] = result_coach
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return result


def ms(v: float) -> str:
    """Seconds as milliseconds, 10 characters wide."""
    return f"{v * 1000:8.1f}ms"


def mb(kb: float) -> str:
    """Kilobytes as megabytes, 8 characters wide."""
    return f"{kb / 1024:6.1f}MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--actions", type=int, default=60)
    parser.add_argument("--interval", type=float, default=0.1, help="pause between actions (s)")
    args = parser.parse_args()
    print(f"dicepad live feed, loopback, {args.actions} actions per run, "
          f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}")  # fmt: skip
    header = (f"{'clients':>7} {'POST p50':>9} {'POST p99':>9} "
              f"{'every p50':>10} {'every p99':>10} {'every max':>10} "
              f"{'one p50':>8} {'one p99':>8} {'spread p99':>10} {'lost':>5} {'dropped':>7} "
              f"{'RSS idle':>9} {'RSS':>7} {'RSS peak':>9}  CPU/action user+sys")  # fmt: skip
    print(header)
    ok = True
    for n in args.clients:
        r = run_one(n, args.actions, args.interval)
        every, single = r["every"], r["single"]
        posts = r["posts"]
        print(f"{n:>7} {ms(statistics.median(posts))[1:]:>9} {ms(pct(posts, 0.99))[1:]:>9} "
              f"{ms(statistics.median(every)):>10} {ms(pct(every, 0.99)):>10} "
              f"{ms(max(every)):>10} {ms(statistics.median(single))[2:]:>8} "
              f"{ms(pct(single, 0.99))[2:]:>8} {ms(pct(r['spread'], 0.99)):>10} "
              f"{r['lost']:>5} {r['health']['dropped']:>7} "
              f"{mb(r['idle']['VmRSS']):>9} {mb(r['mem']['VmRSS']):>7} "
              f"{mb(r['mem']['VmHWM']):>9}  {r['user_ms']:.1f}+{r['sys_ms']:.1f}ms",
              flush=True)  # fmt: skip
        print(f"{'':>7} ({r['coach']})", flush=True)
        if n >= 200:
            ok = ok and pct(every, 0.99) <= 0.100 and r["mem"]["VmHWM"] <= 150 * 1024
    print("targets (p99 <= 100 ms at 200 clients, RSS <= 150 MB):", "met" if ok else "MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
