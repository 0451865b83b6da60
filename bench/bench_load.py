"""Load: 200 phones on the live feed, an action every second, for 10 minutes.

Starts a real ``dicepad serve`` on 127.0.0.1 with the demo camera (``--camera demo``; ``none``
to leave it out). The camera reads its own table (assigned with ``POST /api/pad``); the phones
all watch a second table, where a scorekeeper posts one action per second. Each phone is an
SSE client (one asyncio loop in this process) that, if the server ever drops it, reconnects
with ``Last-Event-ID`` and catches up from the log, as a browser's EventSource does.

Reported, and checked:

- updates lost: every phone must end up with every seq (0 expected); drops and reconnects;
- latency from just before the POST to each phone's receipt: p50 / p99 / max, and to the
  LAST phone per action;
- clients held at the end (the server's own count);
- server RSS sampled every few seconds: at start (phones connected), end, max, and the
  growth over the second half of the run (a leak grows steadily);
- the camera loop: frames per second and the time from a settled frame to its decision,
  idle (before the phones connect) and under load.

    ./run bench bench_load [--clients 200] [--duration 600] [--interval 1] [--camera demo]
                           [--workload steady|growing]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from crash_harness import Serve, get, request  # noqa: E402

BLOW = {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]}  # always legal: the turn passes on
UNDO = {"type": "undo"}
#: ``steady``: a blown roll, then its undo, and again: the table's state stays the same size,
#: so memory that grows is a leak. ``growing``: blown rolls only: every turn stays in the
#: history, and every state message (sent to every phone) grows with the game.
WORKLOADS = {"steady": (BLOW, UNDO), "growing": (BLOW,)}
TEAMS = {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}
CAMERA_TABLE = {"game": "bolo", "players": ["Cam", "Era"], "rules": {"bolo.entry_min": 100}}
EVENT = re.compile(rb"^id: (\d+)\nevent: (\w+)\n", re.M)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


@dataclass
class Phone:
    """One EventSource: the arrival time of every entry seq, reconnecting when dropped."""

    arrivals: dict[int, float] = field(default_factory=dict)
    connects: int = 0
    refused: int = 0
    last_id: int | None = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self, port: int, table: str, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                await self._stream(port, table, stop)
            if not stop.is_set():
                await asyncio.sleep(0.5)  # EventSource's retry (the server asks for 2 s)

    async def _stream(self, port: int, table: str, stop: asyncio.Event) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            last = f"Last-Event-ID: {self.last_id}\r\n" if self.last_id is not None else ""
            writer.write(
                f"GET /api/tables/{table}/events HTTP/1.0\r\nHost: x\r\n"
                f"Accept: text/event-stream\r\n{last}\r\n".encode()
            )
            await writer.drain()
            status = await reader.readline()
            if b" 200 " not in status:
                self.refused += 1
                return
            await reader.readuntil(b"\r\n\r\n")
            self.connects += 1
            self.connected.set()
            buf = b""
            while not stop.is_set():
                chunk = await reader.read(65536)
                now = time.perf_counter()
                if not chunk:
                    return
                buf += chunk
                cut = buf.rfind(b"\n\n")
                if cut < 0:
                    continue
                done, buf = buf[: cut + 2], buf[cut + 2 :]
                for m in EVENT.finditer(done):
                    seq = int(m.group(1))
                    self.last_id = seq
                    if m.group(2) == b"entry":
                        self.arrivals.setdefault(seq, now)
        finally:
            writer.close()


class Sampler(threading.Thread):
    """RSS of the server and the camera's frame counter, every ``every`` seconds."""

    def __init__(self, pid: int, port: int, every: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.port, self.every = pid, port, every
        self.stop = threading.Event()
        self.rss: list[tuple[float, int]] = []
        self.frames: list[tuple[float, int]] = []
        self.clients: list[int] = []  #: live-feed clients the server holds

    def run(self) -> None:
        while not self.stop.wait(self.every):
            now = time.monotonic()
            self.rss.append((now, rss_kb(self.pid)))
            self.clients.append(int(get(self.port, "/api/health")["feed"]["clients"]))
            with contextlib.suppress(Exception):  # the camera figure is best effort
                self.frames.append((now, int(get(self.port, "/api/pad")["frames"])))


def camera_figures(port: int, seconds: float) -> dict[str, float]:
    """Frames per second over ``seconds`` and the settle-to-decision times of its throws."""
    first = get(port, "/api/pad")
    t0 = time.monotonic()
    time.sleep(seconds)
    last = get(port, "/api/pad")
    fps = (last["frames"] - first["frames"]) / (time.monotonic() - t0)
    decisions = [t["seconds"] for t in last["throws"]]
    return {
        "fps": fps,
        "decide_p50": pct(decisions, 0.5),
        "decide_max": max(decisions, default=0.0),
    }


async def load(
    port: int,
    table: str,
    clients: int,
    duration: float,
    interval: float,
    cycle: tuple[dict[str, Any], ...],
) -> tuple[list[Phone], dict[int, float], list[float]]:
    stop = asyncio.Event()
    phones = [Phone() for _ in range(clients)]
    tasks = [asyncio.create_task(p.run(port, table, stop)) for p in phones]
    await asyncio.wait_for(asyncio.gather(*(p.connected.wait() for p in phones)), 120)
    sent: dict[int, float] = {}
    posts: list[float] = []
    end = time.perf_counter() + duration
    next_at = time.perf_counter()
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        action = cycle[len(posts) % len(cycle)]
        status, body = await asyncio.to_thread(
            request, port, "POST", f"/api/tables/{table}/actions", action
        )
        posts.append(time.perf_counter() - t0)
        if status != 201:
            raise SystemExit(f"action refused: {status} {body}")
        sent[body["seq"]] = t0
        next_at += interval
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
    last = max(sent)
    deadline = time.perf_counter() + 30
    while any(last not in p.arrivals for p in phones) and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return phones, sent, posts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between actions")
    parser.add_argument("--camera", default="demo", help="demo (default) or none")
    parser.add_argument(
        "--workload",
        choices=sorted(WORKLOADS),
        default="steady",
        help="steady: roll/undo, the state keeps its size (default); growing: the history grows",
    )
    parser.add_argument("--sample", type=float, default=5.0, help="RSS sampling period (s)")
    args = parser.parse_args(argv)
    print(
        f"dicepad load: {args.clients} SSE phones, one action per {args.interval:g} s for "
        f"{args.duration:g} s ({args.workload}), camera {args.camera}; {os.cpu_count()} CPUs",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="dicepad-load-") as tmp:
        server = Serve(
            Path(tmp) / "data",
            Path(tmp) / "serve.log",
            camera=args.camera,
            max_clients=args.clients + 20,
        )
        try:
            port = server.port
            _, table = request(port, "POST", "/api/tables", TEAMS)
            camera_on = args.camera != "none"
            idle_cam: dict[str, float] = {}
            if camera_on:
                _, cam_table = request(port, "POST", "/api/tables", CAMERA_TABLE)
                request(port, "POST", "/api/pad", {"table": cam_table["table"]})
                time.sleep(3)  # the camera opens and settles in
                idle_cam = camera_figures(port, 10)
            sampler = Sampler(server.proc.pid, port, args.sample)
            sampler.start()
            t_start = time.monotonic()
            phones, sent, posts = asyncio.run(
                load(
                    port,
                    table["table"],
                    args.clients,
                    args.duration,
                    args.interval,
                    WORKLOADS[args.workload],
                )
            )
            sampler.stop.set()
            sampler.join()
            held = get(port, "/api/health")["feed"]
            last_state_bytes = len(json.dumps(get(port, f"/api/tables/{table['table']}")))
            load_cam = camera_figures(port, 10) if camera_on else {}
            elapsed = time.monotonic() - t_start
        finally:
            server.kill()

    lost = sum(1 for p in phones for seq in sent if seq not in p.arrivals)
    single = [p.arrivals[s] - t0 for s, t0 in sent.items() for p in phones if s in p.arrivals]
    every = [
        max(p.arrivals[s] for p in phones) - t0
        for s, t0 in sent.items()
        if all(s in p.arrivals for p in phones)
    ]
    reconnects = sum(p.connects - 1 for p in phones)
    rss = [kb for _, kb in sampler.rss]
    half = sampler.rss[len(sampler.rss) // 2 :]
    growth = (half[-1][1] - half[0][1]) / 1024 if len(half) >= 2 else 0.0
    print(
        f"run: {elapsed:.0f} s, {len(sent)} actions, {len(posts)} posts; last state message "
        f"{last_state_bytes / 1024:.0f} KiB"
    )
    print(
        f"updates lost: {lost} (of {len(sent) * len(phones)} deliveries); "
        f"reconnects {reconnects}, refused connects {sum(p.refused for p in phones)}"
    )
    print(
        f"clients held during the load (server's count, sampled): min "
        f"{min(sampler.clients, default=0)}, max {max(sampler.clients, default=0)} "
        f"(limit {held['max_clients']}); dropped by the server {held['dropped']}"
    )
    ms = 1000.0
    print(
        f"action -> one phone: p50 {pct(single, 0.5) * ms:.1f} ms, "
        f"p99 {pct(single, 0.99) * ms:.1f} ms, max {max(single, default=0) * ms:.1f} ms"
    )
    print(
        f"action -> every phone: p50 {pct(every, 0.5) * ms:.1f} ms, "
        f"p99 {pct(every, 0.99) * ms:.1f} ms, max {max(every, default=0) * ms:.1f} ms"
    )
    print(
        f"POST round trip: p50 {statistics.median(posts) * ms:.1f} ms, "
        f"p99 {pct(posts, 0.99) * ms:.1f} ms"
    )
    if rss:
        print(
            f"server RSS: start {rss[0] / 1024:.1f} MB, end {rss[-1] / 1024:.1f} MB, "
            f"max {max(rss) / 1024:.1f} MB; growth over the second half {growth:+.1f} MB "
            f"({len(rss)} samples)"
        )
    if idle_cam:
        fps_ratio = load_cam["fps"] / idle_cam["fps"] if idle_cam["fps"] else 0.0
        print(
            f"camera loop idle: {idle_cam['fps']:.1f} fps, settled frame -> decision "
            f"p50 {idle_cam['decide_p50'] * ms:.0f} ms"
        )
        print(
            f"camera loop under load: {load_cam['fps']:.1f} fps ({fps_ratio:.2f} of idle), "
            f"settled frame -> decision p50 {load_cam['decide_p50'] * ms:.0f} ms, "
            f"max {load_cam['decide_max'] * ms:.0f} ms"
        )
        frames = sampler.frames
        if len(frames) >= 2:
            during = (frames[-1][1] - frames[0][1]) / (frames[-1][0] - frames[0][0])
            print(f"camera loop during the whole load: {during:.1f} fps")
    ok = lost == 0 and min(sampler.clients, default=0) >= len(phones)
    print("PASS" if ok else "FAIL: updates were lost or phones were not all held")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
