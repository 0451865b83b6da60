"""Filling a house database the way a table server's shipper does, with plain SQL shaped like
``server/house/schema.py``: a member, its tables, a batch of events with the table's fresh
line and a NOTIFY in the same transaction, records replaced per table; and 100,000 records at
once for the wall's benchmark (COPY).

For the house server's tests and ``bench/house_scale.py`` while the shipper is written; the
shapes follow the schema's comments (``summary`` is the table server's own table-list line).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from server.house.schema import CHANNEL

GAMES = ("you-blew-it", "bolo", "bar-dice", "gords")
KINDS = {
    "you-blew-it": ("roll", "turn", "hot_dice"),
    "bolo": ("roll", "turn", "high_roller", "board"),
    "bar-dice": ("hand", "roll", "horse"),
    "gords": ("hand", "call"),
}


def now_iso(offset: timedelta = timedelta()) -> str:
    return (datetime.now(UTC) + offset).isoformat(timespec="milliseconds")


def add_member(conn: psycopg.Connection, house_name: str, url: str = "") -> None:
    conn.execute(
        "INSERT INTO members (house_name, instance, url) VALUES (%s, %s, %s)"
        " ON CONFLICT (house_name) DO UPDATE SET url = excluded.url, seen = now()",
        (house_name, f"instance-{house_name}", url),
    )


def add_table(
    conn: psycopg.Connection,
    house_name: str,
    table_id: str,
    *,
    game: str = "bolo",
    players: Sequence[str] = ("Ann", "Bob"),
    teams: dict[str, list[str]] | None = None,
    created: str | None = None,
) -> None:
    setup: dict[str, Any] = {"teams": teams} if teams else {"players": list(players)}
    conn.execute(
        "INSERT INTO tables (house_name, table_id, game, setup, rules, created)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (house_name, table_id, game, Jsonb(setup), Jsonb({}), created or now_iso()),
    )


@dataclass(frozen=True)
class Event:
    type: str = "roll"
    payload: dict[str, Any] | None = None
    source: str = "phone"
    at: str | None = None
    snapshot: bool = False


def ship(
    conn: psycopg.Connection,
    house_name: str,
    table_id: str,
    events: Sequence[Event],
    *,
    scores: dict[str, int] | None = None,
    over: bool = False,
    expecting: str = "Ann to roll",
    last: str | None = None,
) -> int:
    """One shipped batch: the events after the house's ``last_seq``, the table's fresh line,
    and the NOTIFY, in one transaction; the new last seq."""
    with conn.transaction():
        row = conn.execute(
            "SELECT last_seq, game, setup, created FROM tables"
            " WHERE house_name = %s AND table_id = %s FOR UPDATE",
            (house_name, table_id),
        ).fetchone()
        assert row is not None, f"no table {house_name}/{table_id}"
        seq, game, setup, created = int(row[0]), row[1], row[2], row[3]
        at = None
        for e in events:
            seq += 1
            at = e.at or now_iso()
            conn.execute(
                "INSERT INTO events (house_name, table_id, seq, at, source, type, payload,"
                " snapshot) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (house_name, table_id, seq, at, e.source, e.type,
                 Jsonb(e.payload or {"type": e.type}), e.snapshot),
            )  # fmt: skip
        summary = {
            "table": table_id,
            "game": game,
            "title": game.replace("-", " ").title(),
            "setup": setup,
            "created": created,
            "ended": now_iso() if over else None,
            "seq": seq,
            "last": last or at or created,
            "scores": scores,
            "expecting": {"text": expecting},
            "over": over,
        }
        conn.execute(
            "UPDATE tables SET summary = %s, summary_seq = %s, last_seq = %s, ended = %s"
            " WHERE house_name = %s AND table_id = %s",
            (Jsonb(summary), seq, seq, summary["ended"], house_name, table_id),
        )
        payload = json.dumps({"house_name": house_name, "table": table_id, "seq": seq})
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
    return seq


@dataclass(frozen=True)
class Rec:
    house_name: str
    id: str
    table_id: str
    game: str
    kind: str
    player: str
    points: int
    seq: int = 1
    dice: tuple[int, ...] = (1, 1, 1, 5, 5)
    text: str = "a big roll"
    at: str = "2025-01-01T20:00:00.000+00:00"
    snapshot_seq: int | None = None
    hidden_at_table: bool = False


def replace_records(
    conn: psycopg.Connection, house_name: str, table_id: str, records: Iterable[Rec]
) -> None:
    """A table's records replaced whole, as a batch reaching the table's head does."""
    with conn.transaction():
        conn.execute(
            "DELETE FROM records WHERE house_name = %s AND table_id = %s", (house_name, table_id)
        )
        copy_records(conn, records)


def copy_records(conn: psycopg.Connection, records: Iterable[Rec]) -> int:
    """Many records at once (COPY); how many."""
    n = 0
    columns = (
        "house_name, id, table_id, seq, game, kind, player, points, dice, text, at,"
        " snapshot_seq, hidden_at_table"
    )
    with conn.cursor().copy(f"COPY records ({columns}) FROM STDIN") as copy:
        for r in records:
            copy.write_row(
                (r.house_name, r.id, r.table_id, r.seq, r.game, r.kind, r.player, r.points,
                 json.dumps(list(r.dice)), r.text, r.at, r.snapshot_seq, r.hidden_at_table)
            )  # fmt: skip
            n += 1
    return n


def fill_wall(conn: psycopg.Connection, count: int, *, houses: int = 10, seed: int = 1) -> int:
    """``count`` records spread over ``houses`` house names with 10 tables each (members and
    tables made here), random games, kinds and points; how many were written."""
    rng = random.Random(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    with conn.transaction():
        for h in range(houses):
            add_member(conn, f"pi-{h}", f"http://pi-{h}.local:8080")
            for t in range(10):
                add_table(conn, f"pi-{h}", f"t{t}", game=GAMES[t % len(GAMES)])

        def rows() -> Iterable[Rec]:
            for i in range(count):
                h, t = rng.randrange(houses), rng.randrange(10)
                game = GAMES[t % len(GAMES)]
                at = (start + timedelta(seconds=i * 37)).isoformat(timespec="milliseconds")
                yield Rec(
                    f"pi-{h}", f"t{t}.{i}.0", f"t{t}", game, rng.choice(KINDS[game]),
                    rng.choice(("Ann", "Bob", "Cy", "Dee", "Eve")), rng.randrange(50, 20000),
                    seq=i + 1, at=at, hidden_at_table=rng.random() < 0.01,
                )  # fmt: skip

        n = copy_records(conn, rows())
    conn.execute("ANALYZE records")
    return n
