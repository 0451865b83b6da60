"""The measured run (the phones on the house feed while the driver posts, and the CPU every
group of processes spent) and the exactly-once comparison of the logs."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from house_bench_util import Phone, cpu_seconds

from house_fleet.driver import Post, await_driver
from house_fleet.servers import TableServer, Target


@dataclass
class Run:
    posts: list[Post]
    errors: list[str]
    phones: list[Phone]
    cpu: dict[str, float] = field(default_factory=dict)  #: CPU seconds during the run
    busy: float = 0.0  #: the machine's share of CPU time busy (all processes, any user)


def _machine() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine (/proc/stat)."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]
    return sum(f) - idle, sum(f)


def postgres_pids(cluster: Any) -> list[int]:
    """The postmaster and its children (backends, writers)."""
    try:
        pm = int((Path(cluster.data) / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    pids = [pm]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pm:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def _cpu(groups: dict[str, list[int]]) -> dict[str, float]:
    return {name: sum(cpu_seconds(p) for p in pids) for name, pids in groups.items()}


async def measure(port: int, phones_n: int, targets: list[Target], seconds: float, seed: int,
                  fixed: bool, groups: dict[str, list[int]]) -> Run:  # fmt: skip
    """The phones connect, the driver runs, then the phones get until every shipped event
    has reached all of them (or 15 s)."""
    stop = asyncio.Event()
    phones = [Phone() for _ in range(phones_n)]
    tasks = [asyncio.create_task(p.run(port, stop)) for p in phones]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.ready.wait() for p in phones)), timeout=120)
        failed = [p.error for p in phones if p.error]
        if failed:
            raise SystemExit(f"{len(failed)} phones failed to connect: {failed[0]}")
        cpu0, m0, t0 = _cpu(groups), _machine(), time.process_time()
        posts, errors = await await_driver(targets, seconds, seed, fixed)
        cpu1, m1, t1 = _cpu(groups), _machine(), time.process_time()
        keys = [(name, table, seq) for name, ships, table, seq, _, _ in posts if ships]
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if all(k in p.arrivals for p in phones for k in keys):
                break
            await asyncio.sleep(0.25)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    cpu = {name: cpu1[name] - cpu0[name] for name in groups} | {"phones (bench)": t1 - t0}
    busy = (m1[0] - m0[0]) / max(1, m1[1] - m0[1])
    return Run(posts, errors, phones, cpu, busy)


def compare_logs(servers: list[TableServer], house: str, timeout: float = 60.0) -> dict[str, int]:
    """Each shipping server's tables, its ``/log`` against the house's copy; retried until
    they agree or ``timeout`` (the last events may still be on their way)."""
    deadline = time.monotonic() + timeout
    while True:
        counts = {"tables": 0, "events": 0, "house": 0, "missing": 0, "duplicated": 0,
                  "different": 0, "extra": 0}  # fmt: skip
        for s in servers:
            for line in s.get("/api/tables"):
                t = line["table"]
                local = s.get(f"/api/tables/{t}/log")
                try:
                    with urllib.request.urlopen(
                        f"{house}/api/house/tables/{s.name}/{t}/log", timeout=30
                    ) as response:
                        there = json.loads(response.read())
                except urllib.error.HTTPError as exc:
                    if exc.code != 404:
                        raise
                    there = []
                held = {e["seq"]: e for e in there}
                counts["tables"] += 1
                counts["events"] += len(local)
                counts["house"] += len(there)
                counts["duplicated"] += len(there) - len(held)
                counts["missing"] += sum(1 for e in local if e["seq"] not in held)
                counts["different"] += sum(
                    1 for e in local if e["seq"] in held and held[e["seq"]] != e
                )
                counts["extra"] += len(set(held) - {e["seq"] for e in local})
        bad = counts["missing"] + counts["duplicated"] + counts["different"] + counts["extra"]
        if not bad or time.monotonic() > deadline:
            return counts
        time.sleep(1.0)
