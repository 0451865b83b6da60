"""Start-up: what ``TableService.load`` costs with N finished Bolo games, cold and warm.

Builds N finished games (the 41-action board game of ``tests/data``, won by Ann: over without
an ``end``) through the real :class:`server.tables.TableService` on a temporary SQLite store,
then times ``load()`` on a fresh store and service, as a start does:

- cold: a rules-code stamp no digest has (a first start after an upgrade): every table is
  replayed, its records derived again and its digest written;
- warm: the stamp of the last cold run: every finished table is held dormant.

Medians over ``--runs`` of each, ms per game, and the replays each start made; then the first
view of a dormant table (its replay on first use), and the memory the service holds for the
tables after each kind of start and after a look at every table, with the shipped
``keep_awake`` and with every table kept (tracemalloc, separate untimed starts).

    ./run bench bench_startup [--games 400] [--runs 5]

The store is built with ``synchronous=OFF`` (thousands of commits; the timed starts run as
the product does, ``synchronous=FULL``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from scoring.actions import Action, action_from_json
from server.feed.hub import Feed
from server.store import Store
from server.tables import TableService

GAME = Path(__file__).resolve().parent.parent / "tests" / "data" / "bolo_board_game.jsonl"


def board_game() -> list[Action]:
    lines = GAME.read_text().splitlines()
    return [action_from_json(json.loads(line)) for line in lines if line.strip()]


def service(store: Store, engine: str, keep_awake: int = 32) -> TableService:
    return TableService(
        store, Feed(), clock=lambda: datetime.now(UTC), engine=engine, keep_awake=keep_awake
    )


def build(path: Path, games: int) -> list[str]:
    """``games`` finished Bolo games in a new store; their table ids."""
    store = Store(path)
    store._db.execute("PRAGMA synchronous=OFF")  # building only: the starts run FULL
    tables = service(store, "build")
    tables.load()
    actions = board_game()
    ids = []
    for _ in range(games):
        table = tables.create("bolo", players=["Ann", "Bob"])["table"]
        for action in actions:
            tables.apply(table, action, source="camera")
        ids.append(table)
    assert all(s["over"] for s in tables.summaries())
    store.close()
    return ids


def timed_start(path: Path, engine: str) -> tuple[float, int, float]:
    """One start: seconds in ``load()``, the tables it replayed, and the first view of a
    table (seconds; a dormant table's replay on first use)."""
    store = Store(path)
    try:
        tables = service(store, engine)
        t0 = time.perf_counter()
        problems = tables.load()
        elapsed = time.perf_counter() - t0
        assert problems == [], problems
        replays = tables.replays
        first = tables.summaries()[0]["table"]
        t0 = time.perf_counter()
        tables.view(first)
        woken = time.perf_counter() - t0
    finally:
        store.close()
    return elapsed, replays, woken


def held_bytes(path: Path, engine: str) -> int:
    """The memory the service keeps for the tables after ``load()`` (untimed)."""
    store = Store(path)
    try:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tables = service(store, engine)
        tables.load()
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert tables.summaries()
    finally:
        store.close()
    return held


def held_after_views(path: Path, engine: str, keep_awake: int) -> tuple[int, int]:
    """The memory held (and the tables held replayed) after a warm start and a look at every
    table, as weeks of phones browsing the record wall do (untimed)."""
    store = Store(path)
    try:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tables = service(store, engine, keep_awake)
        tables.load()
        for line in tables.summaries():
            tables.view(line["table"])
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        awake = tables.awake
    finally:
        store.close()
    return held, awake


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--games", type=int, default=400, help="finished Bolo games (default 400)")
    ap.add_argument("--runs", type=int, default=5, help="timed starts of each kind (default 5)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_startup.") as tmp:
        path = Path(tmp) / "dicepad.sqlite3"
        t0 = time.perf_counter()
        build(path, args.games)
        print(
            f"built {args.games} finished Bolo games ({len(board_game())} actions each) "
            f"in {time.perf_counter() - t0:.1f} s"
        )
        cold = [timed_start(path, f"cold-{run}") for run in range(args.runs)]
        engine = f"cold-{args.runs - 1}"
        warm = [timed_start(path, engine) for _ in range(args.runs)]
        for name, results in (("cold", cold), ("warm", warm)):
            seconds = statistics.median(r[0] for r in results)
            replays = {r[1] for r in results}
            woken = statistics.median(r[2] for r in results)
            print(
                f"{name}: load {seconds * 1000:8.1f} ms median of {args.runs}"
                f" ({seconds * 1000 / args.games:.3f} ms per game; replayed {sorted(replays)}"
                f" tables; first view {woken * 1000:.2f} ms)"
            )
        cold_mb = held_bytes(path, "memory") / 1e6
        warm_mb = held_bytes(path, "memory") / 1e6
        print(f"held after load: cold {cold_mb:.1f} MB, warm {warm_mb:.1f} MB (tracemalloc)")
        for keep in (32, args.games):
            held, awake = held_after_views(path, "memory", keep)
            print(
                f"held after a look at every table, keep_awake {keep}: {held / 1e6:.1f} MB,"
                f" {awake} tables replayed"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
