"""Player pages at scale: a player of 10,000 finished games, page and API timed.

Derives the rows of one real finished Bolo game (the 41-action board game of ``tests/data``,
Ann v Bob, through :func:`server.players.stats.derive`: the coach's rating included, and
timed), then stores copies of them for ``--games`` tables (each its own table row, later in
time) through :class:`server.player_store.PlayerStore` on a temporary SQLite store, and times
``GET /players/Ann``, ``GET /api/players/Ann`` and ``GET /api/players`` through the real
app's test client (Flask, Jinja, SQLite; no network): median and p99 over ``--runs``.

    .venv/bin/python bench/players_scale.py [--games 10000] [--runs 200]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from server_app import make_app  # noqa: E402  (tests/)

from scoring import games  # noqa: E402
from scoring.actions import action_from_json  # noqa: E402
from server.player_store import PlayerStore  # noqa: E402
from server.players.api import players  # noqa: E402
from server.players.service import stamp  # noqa: E402
from server.players.stats import derive  # noqa: E402
from server.rows import TableRow  # noqa: E402
from server.services import dicepad  # noqa: E402
from server.standing import Standing, resolve  # noqa: E402

SCRIPT = REPO / "tests" / "data" / "bolo_board_game.jsonl"


def quantiles(ms: list[float]) -> str:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    return f"median {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    actions = [action_from_json(json.loads(x)) for x in SCRIPT.read_text().splitlines() if x]
    standing = resolve([Standing(i + 1, "t", a) for i, a in enumerate(actions)])
    bolo = games.find("bolo")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    template = TableRow("x", "bolo", {"players": ["Ann", "Bob"]}, {}, start.isoformat())
    derive(bolo, template, standing)  # the policies solved once
    t0 = time.perf_counter()
    rows = derive(bolo, template, standing)
    derive_ms = (time.perf_counter() - t0) * 1000
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(Path(tmp))
        d = dicepad(app)
        store = PlayerStore(d.store)
        d.store._db.execute("PRAGMA synchronous=OFF")  # building only: thousands of commits
        t0 = time.perf_counter()
        for n in range(args.games):
            at = (start + timedelta(minutes=n)).isoformat()
            table = TableRow(f"g{n:06d}", "bolo", template.setup, {}, at)
            d.store.create_table(table)
            copies = [dataclasses.replace(r, table_id=table.id, at=at) for r in rows]
            store.replace(table.id, stamp(), len(actions), copies)
        build_s = time.perf_counter() - t0
        d.store._db.execute("PRAGMA synchronous=FULL")
        players(app).wait()
        client = app.test_client()
        print(f"derive one 41-action Bolo game: {derive_ms:.1f} ms; built {args.games} games "
              f"in {build_s:.1f} s")  # fmt: skip
        for path in ("/players/Ann", "/api/players/Ann", "/api/players"):
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                r = client.get(path)
                times.append((time.perf_counter() - t0) * 1000)
                assert r.status_code == 200, r.status_code
            print(f"GET {path}: {quantiles(times)}")
        got = client.get("/api/players/Ann").get_json()
        assert got["games"] == args.games, got["games"]
        d.close()


if __name__ == "__main__":
    main()
