"""Issue 35's scale benchmark end to end: real table servers ship to a real house while
phones watch the house feed, and what shipping costs a table's actions.

    .venv/bin/python bench/house_servers.py [--servers 20] [--phones 200] [--seconds 60]
                                            [--baseline interleaved|phase]
                                            [--schedule random|fixed] [--seed 1]

All on loopback: a throwaway PostgreSQL cluster (tests/pg_cluster.py), one ``dicepad house``
and N ``dicepad serve --camera none --house URL --house-name pi-NN`` children, each with its
own data folder and PIN, and a Bolo or You Blew It table. A driver process posts one legal
action a second to each server (the dice ``expecting`` asks for, else a random keep, bank or
reroll from ``legal``; a finished game is followed by a new table), each at a random moment of
each second, and notes when each answer came (CLOCK_MONOTONIC, system-wide); the phones are raw
SSE connections in this process's asyncio loop (house_bench_util.Phone). Why random: with a
fixed stagger (``--schedule fixed``, server i at i/N of each second) each plain server posted
just as its shipping neighbour's event reached the house and 200 phones, on the same 2 cores,
and came out 70 % slower than the shipping ones; at random moments both kinds meet the house's
bursts equally often.

Measured, with the targets of issue 35:

- POST answer at the table -> the ``table`` message at a phone, and at every phone (p99 <=
  500 ms); the fan-out alone (first phone to last) says how much of it is the house's.
- The action's round trip (``POST /api/tables/<t>/actions``) with shipping and without (<= 5 %
  more). ``interleaved`` (default): N more servers without ``--house`` run at the same time,
  their posts among the shipping ones', so both see the same machine (on a bar's Pis the house
  runs elsewhere: this isolates what shipping costs the table server itself); ``phase``: the
  same N servers restarted on the same data without ``--house`` for another ``--seconds``,
  while the house and the phones idle, so that it also counts the house's fan-out competing
  for these cores. Each server's CPU per action (/proc) says what shipping costs whatever the
  scheduler did.
- Exactly once: each table's ``/log`` against the house's copy, once shipping has settled.

The coach's policies are solved once and copied into every data folder (else 40 servers would
each solve them at start), and the figures start only once every server is warm and shipping.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from house_bench_util import cpu_seconds, rss_mb, start_house, stop_all  # noqa: E402
from house_fleet.driver import run_driver  # noqa: E402
from house_fleet.measure import compare_logs, measure, postgres_pids  # noqa: E402
from house_fleet.report import report_actions, report_cpu, report_feed  # noqa: E402
from house_fleet.servers import GAMES, TableServer, Target, seed_coach, wait_warm  # noqa: E402
from pg_cluster import PgCluster  # noqa: E402  (tests/)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--phones", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--baseline", choices=("interleaved", "phase"), default="interleaved")
    parser.add_argument(
        "--schedule",
        choices=("random", "fixed"),
        default="random",
        help="each server's action at a random moment of each second (default), or "
        "staggered by 1/N of a second",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    def interrupted(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does

    signal.signal(signal.SIGTERM, interrupted)
    root = Path(tempfile.mkdtemp(prefix="house-servers-"))
    cluster: Any = None
    house: subprocess.Popen[bytes] | None = None
    servers: list[TableServer] = []
    try:
        cluster = PgCluster()
        url = cluster.new_database()
        coach = seed_coach(root)
        house, base = start_house(url, args.phones, root / "house.log")
        for i in range(args.servers):
            game = GAMES[i % 2]
            servers.append(
                TableServer(f"pi-{i:02d}", True, game, root / f"pi-{i:02d}", f"{2000 + i}")
            )
            if args.baseline == "interleaved":
                servers.append(
                    TableServer(f"solo-{i:02d}", False, game, root / f"solo-{i:02d}", f"{5000 + i}")
                )
        for s in servers:
            shutil.copytree(coach, s.data / "coach")
            s.start(url if s.ships else None)
        for s in servers:
            s.wait_listening()
        wait_warm(servers)
        rss = sum(rss_mb(s.proc.pid) for s in servers if s.proc)
        print(
            f"{len(servers)} table servers ({sum(s.ships for s in servers)} shipping), "
            f"{rss:.0f} MB resident in all; house {rss_mb(house.pid):.0f} MB"
        )
        shipping = [s for s in servers if s.ships]
        groups = {
            "house": [house.pid],
            "postgresql": postgres_pids(cluster),
            "table servers shipping": [s.proc.pid for s in shipping if s.proc],
            "table servers plain": [s.proc.pid for s in servers if s.proc and not s.ships],
        }
        targets = [Target(s.name, s.ships, s.game, s.url, s.pin) for s in servers]
        port = int(base.rsplit(":", 1)[1])
        fixed = args.schedule == "fixed"
        run = asyncio.run(
            measure(port, args.phones, targets, args.seconds, args.seed, fixed, groups)
        )
        for line in run.errors[:10]:
            print("  driver:", line)
        n_ship = sum(1 for p in run.posts if p[1])
        print(
            f"{len(targets)} servers x 1 action/s for {args.seconds:.0f} s: {len(run.posts)} "
            f"actions answered, {len(run.errors)} errors"
        )
        report_feed(run, args.phones)
        counts = compare_logs(shipping, base)
        print(
            f"exactly once: {counts['tables']} tables, {counts['events']} events at the tables, "
            f"{counts['house']} at the house; {counts['missing']} missing, "
            f"{counts['duplicated']} duplicated, {counts['different']} different, "
            f"{counts['extra']} extra"
        )
        dup = cluster.psql(
            "SELECT count(*) - count(DISTINCT (house_name, table_id, seq)) FROM events",
            url.rsplit("/", 1)[1],
        ).strip()
        print(f"  the house's events table: {dup} rows repeating a (house name, table, seq)")
        ship_rtt = [p[5] for p in run.posts if p[1]]
        plain_rtt = [p[5] for p in run.posts if not p[1]]
        per_group = {"house": n_ship, "table servers shipping": n_ship,
                     "table servers plain": len(run.posts) - n_ship}  # fmt: skip
        if args.baseline == "phase":
            procs = [s.proc for s in shipping if s.proc]
            stop_all(procs)
            for s in shipping:
                s.start(None)
            for s in shipping:
                s.wait_listening()
            wait_warm(shipping)
            plain_targets = [Target(s.name, False, s.game, s.url, s.pin) for s in shipping]
            plain_pids = [s.proc.pid for s in shipping if s.proc]
            c0 = sum(cpu_seconds(p) for p in plain_pids)
            posts, errors = run_driver(plain_targets, args.seconds, args.seed + 1, fixed)
            run.cpu["table servers plain"] = sum(cpu_seconds(p) for p in plain_pids) - c0
            per_group["table servers plain"] = len(posts)
            plain_rtt = [p[5] for p in posts]
            print(f"second phase without --house: {len(posts)} actions, {len(errors)} errors")
        report_actions(ship_rtt, plain_rtt, args.baseline)
        report_cpu(run, per_group, args.seconds)
    except KeyboardInterrupt:
        print("interrupted: cleaning up", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not strand a child
        stop_all([s.proc for s in servers if s.proc] + ([house] if house else []))
        if cluster is not None:
            cluster.close()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
