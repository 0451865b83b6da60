"""House player pages at scale: a player of 10,000 finished games across the house's Pis.

On a throwaway PostgreSQL cluster (or ``--db URL``, an empty database): ``--games`` finished
Bolo tables (the 41-action board game of ``tests/data``, Ann v Bob) spread over ``--pis``
house names, each with the player rows the house's worker would derive (derived once with
:func:`server.players.stats.from_log`, copied per table, stamped current so that nothing is
stale), then ``--derive`` more tables whose events only are in (as shipped while the house
server was down): ``dicepad house``'s app starts, its worker sweeps and derives them (timed:
the catch-up rate), and ``GET /players/Ann``, ``GET /api/house/players/Ann``,
``GET /api/house/players`` and ``GET /players`` are timed through the app's test client
(Flask, Jinja, PostgreSQL on loopback): median and p99 over ``--runs``.

    .venv/bin/python bench/house_players_scale.py [--games 10000] [--runs 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from pg_cluster import PgCluster  # noqa: E402  (tests/)

from server.house.app import HouseConfig, create_house_app, house  # noqa: E402
from server.house.migrate import connect  # noqa: E402
from server.house.players import COLUMNS, stamp  # noqa: E402
from server.players.stats import PlayerRow, from_log  # noqa: E402
from server.rows import EventRow, TableRow  # noqa: E402

SCRIPT = REPO / "tests" / "data" / "bolo_board_game.jsonl"
SETUP = {"players": ["Ann", "Bob"]}


def quantiles(ms: list[float]) -> str:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    return f"median {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms"


def _row(pi: str, table: str, at: str, r: PlayerRow) -> tuple[Any, ...]:
    return (
        pi, table, r.player, r.name, r.game, at, r.over, r.win, r.score, r.turns, r.blown,
        r.points, r.best_turn, r.best_roll, json.dumps(list(r.best_roll_dice)), r.best_roll_seq,
        r.rated_turns, r.decisions, r.given_away, r.luck, json.dumps(list(r.rounds)),
        json.dumps([d.to_json() for d in r.costly]),
    )  # fmt: skip


def fill(url: str, games: int, pis: int, extra: int, events: list[EventRow]) -> None:
    """``games`` tables with their rows, ``extra`` with events only."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    template = TableRow("x", "bolo", SETUP, {}, start.isoformat())
    rows = from_log(template, events)
    assert all(r.over for r in rows), "the board game must be finished"
    conn = connect(url, autocommit=True)
    last = len(events)
    with conn.transaction():
        for p in range(pis):
            conn.execute(
                "INSERT INTO members (house_name, instance, url) VALUES (%s, %s, %s)",
                (f"pi-{p}", f"i{p}", f"http://pi-{p}.local:8080/"),
            )
        with conn.cursor().copy(
            "COPY tables (house_name, table_id, game, setup, rules, created, last_seq) FROM STDIN"
        ) as copy:
            for n in range(games + extra):
                at = (start + timedelta(minutes=n)).isoformat()
                copy.write_row((f"pi-{n % pis}", f"g{n:06d}", "bolo", json.dumps(SETUP), "{}",
                                at, last))  # fmt: skip
        with conn.cursor().copy(f"COPY player_tables ({COLUMNS}) FROM STDIN") as copy:
            for n in range(games):
                at = (start + timedelta(minutes=n)).isoformat()
                for r in rows:
                    copy.write_row(_row(f"pi-{n % pis}", f"g{n:06d}", at, r))
        with conn.cursor().copy(
            "COPY player_derived (house_name, table_id, stamp, seq) FROM STDIN"
        ) as copy:
            for n in range(games):
                copy.write_row((f"pi-{n % pis}", f"g{n:06d}", stamp(), last))
        with conn.cursor().copy(
            "COPY events (house_name, table_id, seq, at, source, type, payload) FROM STDIN"
        ) as copy:
            for n in range(games, games + extra):
                for e in events:
                    copy.write_row((f"pi-{n % pis}", f"g{n:06d}", e.seq, e.at, e.source,
                                    e.type, json.dumps(e.payload)))  # fmt: skip
    conn.execute("ANALYZE")
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--pis", type=int, default=4)
    parser.add_argument("--derive", type=int, default=200, help="tables the worker derives")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--db", help="an empty house database (default: a throwaway cluster)")
    args = parser.parse_args()
    payloads = [json.loads(x) for x in SCRIPT.read_text().splitlines() if x]
    events = [
        EventRow("x", i + 1, f"2026-01-01T20:{i // 60:02}:{i % 60:02}", "phone", p["type"], p)
        for i, p in enumerate(payloads)
    ]
    cluster = None if args.db else PgCluster()
    url = args.db if cluster is None else cluster.new_database()
    try:
        t0 = time.perf_counter()
        fill(url, args.games, args.pis, args.derive, events)
        print(f"filled {args.games} games (+{args.derive} to derive) in "
              f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
        t0 = time.perf_counter()
        app = create_house_app(HouseConfig(db_url=url, pin="2468", pin_scrypt_n=2**8))
        workers = house(app).players
        assert workers.wait(3600), "the worker did not finish"
        took = time.perf_counter() - t0
        print(f"start + sweep + derive {workers.derived} tables: {took:.1f} s "
              f"({workers.derived / took:.1f} tables/s)")  # fmt: skip
        client = app.test_client()
        for path in ("/players/Ann", "/api/house/players/Ann", "/api/house/players", "/players"):
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                r = client.get(path)
                times.append((time.perf_counter() - t0) * 1000)
                assert r.status_code == 200, (path, r.status_code)
            print(f"GET {path}: {quantiles(times)}")
        got = client.get("/api/house/players/Ann").get_json()
        assert got["games"] == args.games + args.derive, got["games"]
        house(app).close()
    finally:
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
