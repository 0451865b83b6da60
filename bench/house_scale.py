"""The house at bar scale (issue 35): 200 phones on the house feed while 20 tables ship one
event a second each, and the house wall with 100,000 records.

    .venv/bin/python bench/house_scale.py [--clients 200] [--tables 20] [--seconds 30]
                                          [--records 100000] [--db postgresql://...]

Without ``--db`` a throwaway PostgreSQL cluster is made (tests/pg_cluster.py, as the tests
do). A real ``dicepad house`` child serves; the tables ship from another process with the
shipper's own SQL (``server.house.ship.ship``: events, line and NOTIFY in one transaction),
each batch stamped with ``time.monotonic()`` (system-wide on Linux) just before it; every
phone is one raw SSE connection in one asyncio loop that notes when each ``table`` event
arrives. Then the wall: ``/api/house/records`` and ``/records`` timed one after another.

Prints medians and p99s: event -> one phone, event -> every phone, and the wall's answers.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from house_bench_util import Key, Phone, ms, pct, start_house, stop_all  # noqa: E402
from house_fill import fill_wall  # noqa: E402  (tests/)
from pg_cluster import PgCluster  # noqa: E402

from server.house.migrate import connect  # noqa: E402
from server.house.ship import Batch, claim, ship  # noqa: E402
from server.rows import EventRow, TableRow  # noqa: E402

HOUSE_NAME = "bench-pi"


# -- the tables, in their own process -------------------------------------------------------------


def _line(table: TableRow, seq: int, at: str) -> dict[str, Any]:
    return {
        "table": table.id, "game": table.game, "title": "Bolo", "setup": table.setup,
        "created": table.created, "ended": None, "seq": seq, "last": at,
        "scores": {"Ann": seq * 50, "Bob": seq * 40}, "expecting": {"text": "Ann to roll"},
        "over": False,
    }  # fmt: skip


def ship_tables(url: str, tables: int, seconds: float, out: Any) -> None:
    """Each table ships one event a second, the tables evenly staggered; sends back
    ``{(house name, table, seq): monotonic time just before its transaction}``."""
    conn = connect(url, autocommit=True)
    claim(conn, HOUSE_NAME, "bench-instance", "http://bench-pi.local:8080")
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000+00:00", time.gmtime())
    rows = [TableRow(f"t{i}", "bolo", {"players": ["Ann", "Bob"]}, {}, now) for i in range(tables)]
    seqs = [0] * tables
    sent: dict[Key, float] = {}
    step = 1.0 / tables
    start = time.monotonic() + 0.5
    n = 0
    while True:
        due = start + n * step
        if due - start > seconds:
            break
        time.sleep(max(0.0, due - time.monotonic()))
        i = n % tables
        seqs[i] += 1
        at = time.strftime("%Y-%m-%dT%H:%M:%S.000+00:00", time.gmtime())
        event = EventRow(rows[i].id, seqs[i], at, "camera", "roll", {"type": "roll"})
        t0 = time.monotonic()
        ship(conn, HOUSE_NAME, "bench-instance",
             Batch(rows[i], (event,), _line(rows[i], seqs[i], at)))  # fmt: skip
        sent[(HOUSE_NAME, rows[i].id, seqs[i])] = t0
        n += 1
    conn.close()
    out.send(sent)


# -- the phones (house_bench_util.Phone) ----------------------------------------------------


async def watch(port: int, clients: int, url: str, tables: int, seconds: float) -> dict[str, Any]:
    stop = asyncio.Event()
    phones = [Phone() for _ in range(clients)]
    tasks = [asyncio.create_task(p.run(port, stop)) for p in phones]
    await asyncio.wait_for(asyncio.gather(*(p.ready.wait() for p in phones)), timeout=120)
    failed = [p.error for p in phones if p.error]
    if failed:
        raise SystemExit(f"{len(failed)} phones failed to connect: {failed[0]}")
    here, there = multiprocessing.Pipe()
    shipper = multiprocessing.Process(target=ship_tables, args=(url, tables, seconds, there))
    shipper.start()
    sent: dict[Key, float] = await asyncio.to_thread(here.recv)
    shipper.join()
    await asyncio.sleep(2)  # the last events' way to every phone
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    every: list[float] = []
    single: list[float] = []
    lost = 0
    for key, t0 in sent.items():
        got = [p.arrivals.get(key) for p in phones]
        lost += sum(1 for g in got if g is None)
        arrived = [g - t0 for g in got if g is not None]
        single.extend(arrived)
        if len(arrived) == len(got):
            every.append(max(arrived))
    return {"events": len(sent), "every": every, "single": single, "lost": lost}


# -- the wall ---------------------------------------------------------------------------------


def time_get(base: str, path: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        with urllib.request.urlopen(base + path, timeout=30) as response:
            response.read()
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=100, help="per wall URL")
    parser.add_argument("--db", help="an empty house database (default: a throwaway cluster)")
    args = parser.parse_args()
    cluster = None if args.db else PgCluster()
    url = args.db or (cluster.new_database() if cluster else "")
    proc = None
    logs = Path(tempfile.mkdtemp(prefix="house-bench-"))
    try:
        conn = connect(url, autocommit=True)
        t0 = time.perf_counter()
        fill_wall(conn, args.records)
        conn.close()
        print(f"house wall: {args.records:,} records written in {time.perf_counter() - t0:.1f} s")
        proc, base = start_house(url, args.clients, logs / "house.log")
        port = int(base.rsplit(":", 1)[1])
        feed = asyncio.run(watch(port, args.clients, url, args.tables, args.seconds))
        print(
            f"house feed: {args.clients} phones, {args.tables} tables x 1 event/s for "
            f"{args.seconds:.0f} s = {feed['events']} events, {feed['lost']} deliveries lost"
        )
        for name in ("single", "every"):
            values = feed[name]
            what = "event -> a phone   " if name == "single" else "event -> every phone"
            print(f"  {what}: median {ms(statistics.median(values))}, p99 {ms(pct(values, 0.99))}")
        for path in ("/api/house/records", "/api/house/records?game=bolo&limit=100",
                     "/records", "/records?game=bolo", "/"):  # fmt: skip
            times = time_get(base, path, args.requests)
            print(
                f"  GET {path:38} median {ms(statistics.median(times))}, p99 {ms(pct(times, 0.99))}"
            )
    finally:
        if proc is not None:
            stop_all([proc])
        if cluster is not None:
            cluster.close()
        shutil.rmtree(logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
