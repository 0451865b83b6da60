"""The SQL of a table server's side of the house: claiming its house name, shipping one
table's events, line and records, each batch in one transaction, and its PIN holder's hidden
players (the whole set).

Pure functions over an open psycopg connection (autocommit on: every function opens its own
transaction), so that the thread calling them (:mod:`server.house.shipper`) owns all timing
and retrying, and a test can deliver a batch twice on purpose. Exactly once rests on the house
itself, not on what the shipper remembers: a batch locks its table's row, inserts only
``last_seq + 1, ...`` (a gap is refused), and finds any event it carries that the house holds
already to be the very same event, so a batch whose commit was lost on the way back is
harmless, and one that disagrees with the house (a table server restored from an old backup)
is refused instead of silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from server.house.schema import CHANNEL
from server.rows import EventRow, RecordRow, TableRow

Conn = psycopg.Connection[Any]

RELEASED = ""  #: ``members.instance`` of a name freed by ``dicepad house --release``
#: records per INSERT statement (13 parameters each; PostgreSQL takes at most 65,535)
RECORDS_PER_INSERT = 1000


class ShipError(RuntimeError):
    """The house refuses what this table server sends; the sentence says why."""


class NameTakenError(ShipError):
    """The house name is held by another table server (another instance id)."""


class ClaimLostError(ShipError):
    """The house no longer lists this server under its name (its database was reset?): the
    shipper claims the name again before shipping on."""


class LogConflictError(ShipError):
    """A table's log at the house does not continue or match this server's (a gap, or an
    event that differs): that table is not shipped, the others are."""


@dataclass(frozen=True)
class HouseHead:
    """What the house holds of one table: its last seq and its line's seq (None: no line)."""

    last_seq: int
    summary_seq: int | None


@dataclass(frozen=True)
class Batch:
    """One transaction's worth: consecutive events of one table and, when they reach the
    table's head, its line in the table list (``summary``, with ``seq``) and its records."""

    table: TableRow
    events: tuple[EventRow, ...]
    summary: Mapping[str, Any] | None = None
    records: tuple[RecordRow, ...] = ()


def taken_message(house_name: str, claimed: datetime | None) -> str:
    when = f" (claimed {claimed.astimezone():%Y-%m-%d %H:%M})" if claimed is not None else ""
    return (
        f"house name {house_name!r} is already used by another table server{when}; "
        "pick another --house-name (or, if that table server is gone for good, free the "
        f"name on the house machine: dicepad house --release {house_name})"
    )


def claim(conn: Conn, house_name: str, instance: str, url: str) -> None:
    """Take ``house_name`` for ``instance`` (or find it ours already, and note our ``url``);
    :class:`NameTakenError` when another instance holds it. A name freed by :func:`release` is
    taken over, with what the house holds of its tables."""
    with conn.transaction():
        mine = conn.execute(
            "INSERT INTO members (house_name, instance, url) VALUES (%s, %s, %s)"
            " ON CONFLICT (house_name) DO UPDATE SET instance = excluded.instance,"
            " url = excluded.url, seen = now(), claimed = CASE WHEN members.instance = %s"
            " THEN now() ELSE members.claimed END"
            " WHERE members.instance IN (excluded.instance, %s) RETURNING instance",
            (house_name, instance, url, RELEASED, RELEASED),
        ).fetchone()
        held = (
            None
            if mine is not None
            else conn.execute(
                "SELECT claimed FROM members WHERE house_name = %s", (house_name,)
            ).fetchone()
        )
    if mine is None:
        raise NameTakenError(taken_message(house_name, held[0] if held else None))


def release(conn: Conn, house_name: str) -> bool:
    """Free ``house_name`` for the next table server that claims it (a Pi replaced, its SD
    card lost: the new one has another instance id); whether the house knew the name. Its
    tables, logs and records stay; the old Pi must not run any more, or it takes it back."""
    with conn.transaction():
        done = conn.execute(
            "UPDATE members SET instance = %s WHERE house_name = %s", (RELEASED, house_name)
        )
    return done.rowcount > 0


def heads(conn: Conn, house_name: str) -> dict[str, HouseHead]:
    """What the house holds of each of this server's tables."""
    rows = conn.execute(
        "SELECT table_id, last_seq, CASE WHEN summary IS NULL THEN NULL ELSE summary_seq END"
        " FROM tables WHERE house_name = %s",
        (house_name,),
    ).fetchall()
    return {str(r[0]): HouseHead(int(r[1]), None if r[2] is None else int(r[2])) for r in rows}


def ship(conn: Conn, house_name: str, instance: str, batch: Batch) -> HouseHead:
    """Ship ``batch`` in ONE transaction (and NOTIFY :data:`CHANNEL` in it); what the house
    then holds of the table. Events the house holds already are checked, not inserted again.
    Raises :class:`ClaimLostError` when the name is no longer ours, :class:`LogConflictError`
    on a gap or a differing event; a connection error propagates (nothing was shipped)."""
    table = batch.table
    key = (house_name, table.id)
    with conn.transaction():
        conn.execute(
            "INSERT INTO tables (house_name, table_id, game, setup, rules, created, ended)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (house_name, table_id) DO NOTHING",
            (*key, table.game, Jsonb(table.setup), Jsonb(table.rules), table.created, table.ended),
        )
        row = conn.execute(  # the row lock: two shippers of one name queue here
            "SELECT t.last_seq, t.summary_seq, t.summary IS NOT NULL, m.instance FROM tables t"
            " JOIN members m ON m.house_name = t.house_name"
            " WHERE t.house_name = %s AND t.table_id = %s FOR UPDATE OF t",
            key,
        ).fetchone()
        if row is None or row[3] != instance:
            raise ClaimLostError(f"the house no longer lists this server as {house_name!r}")
        last = int(row[0])
        summary_seq = int(row[1]) if row[2] else None
        _check_delivered(conn, key, [e for e in batch.events if e.seq <= last])
        fresh = [e for e in batch.events if e.seq > last]
        for n, event in enumerate(fresh):
            if event.seq != last + 1 + n:
                raise LogConflictError(
                    f"table {table.id}: the house holds its log up to {last}, this batch "
                    f"skips to {event.seq}"
                )
        if fresh:
            _insert_events(conn, key, fresh)
            last = fresh[-1].seq
        if batch.summary is not None:
            summary_seq = _ship_line(conn, key, last, batch.summary, batch.records)
        elif fresh:
            conn.execute(
                "UPDATE tables SET last_seq = %s WHERE house_name = %s AND table_id = %s",
                (last, *key),
            )
        conn.execute(
            "SELECT pg_notify(%s, %s)",
            (CHANNEL, json.dumps({"house_name": house_name, "table": table.id, "seq": last})),
        )
    return HouseHead(last, summary_seq)


def seen(conn: Conn, house_name: str, instance: str) -> None:
    """Note that this server is alive (the house page shows it); :class:`ClaimLostError`
    when the house no longer lists it under ``house_name``."""
    with conn.transaction():
        held = conn.execute(
            "UPDATE members SET seen = now() WHERE house_name = %s AND instance = %s",
            (house_name, instance),
        )
    if held.rowcount != 1:
        raise ClaimLostError(f"the house no longer lists this server as {house_name!r}")


def ship_hidden_players(
    conn: Conn, house_name: str, instance: str, players: Collection[str]
) -> bool:
    """Make the house's copy of this server's hidden players exactly ``players`` (their
    keys), in ONE transaction; whether it changed anything.

    The whole set every time, not each hide as it happens: a set is a few keys, and a
    replacement is idempotent, so shipping it twice, or again after a commit lost on the way
    back, or after a house that was down, reset or restored, leaves the house holding the
    table server's set and nothing else (a show made while the house was away included).
    :class:`ClaimLostError` when the name is no longer ours."""
    keys = sorted(set(players))
    with conn.transaction():
        held = conn.execute(  # FOR SHARE: no release between this check and the rows
            "SELECT instance FROM members WHERE house_name = %s FOR SHARE", (house_name,)
        ).fetchone()
        if held is None or held[0] != instance:
            raise ClaimLostError(f"the house no longer lists this server as {house_name!r}")
        gone = conn.execute(
            "DELETE FROM players_hidden_at_table WHERE house_name = %s"
            " AND NOT (player = ANY(%s::text[]))",
            (house_name, keys),
        )
        added = conn.execute(
            "INSERT INTO players_hidden_at_table (house_name, player)"
            " SELECT %s, unnest(%s::text[]) ON CONFLICT DO NOTHING",
            (house_name, keys),
        )
    return gone.rowcount + added.rowcount > 0


def _check_delivered(conn: Conn, key: tuple[str, str], events: Sequence[EventRow]) -> None:
    """A duplicate delivery is harmless only if it is the same event: else refuse it."""
    if not events:
        return
    rows = conn.execute(
        "SELECT seq, at, source, type, payload FROM events"
        " WHERE house_name = %s AND table_id = %s AND seq BETWEEN %s AND %s",
        (*key, events[0].seq, events[-1].seq),
    ).fetchall()
    found = {int(r[0]): (r[1], r[2], r[3], r[4]) for r in rows}
    for e in events:
        if found.get(e.seq) != (e.at, e.source, e.type, e.payload):
            raise LogConflictError(
                f"table {key[1]}: event {e.seq} at the house differs from this server's log "
                "(was this table server restored from an older backup?)"
            )


def _insert_events(conn: Conn, key: tuple[str, str], events: Sequence[EventRow]) -> None:
    """One multi-row INSERT; every row must be new (the row lock and last_seq say so)."""
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s)"] * len(events))
    args: list[object] = []
    for e in events:
        args += [*key, e.seq, e.at, e.source, e.type, Jsonb(e.payload), e.snapshot]
    cur = conn.execute(
        "INSERT INTO events (house_name, table_id, seq, at, source, type, payload, snapshot)"
        f" VALUES {values} ON CONFLICT DO NOTHING",
        args,
    )
    if cur.rowcount != len(events):
        raise LogConflictError(
            f"table {key[1]}: the house holds events past its last_seq; not shipping it"
        )


def _ship_line(
    conn: Conn,
    key: tuple[str, str],
    last: int,
    summary: Mapping[str, Any],
    records: Sequence[RecordRow],
) -> int:
    """The table's line and records, replacing the house's, and its ``last`` seq; the
    line's seq (at most ``last``: a line never claims an event the house does not hold)."""
    seq = int(summary["seq"])
    if seq > last:
        raise ValueError(f"a line at seq {seq} shipped with the log only up to {last}")
    conn.execute(
        "UPDATE tables SET last_seq = %s, summary = %s, summary_seq = %s, ended = %s"
        " WHERE house_name = %s AND table_id = %s",
        (last, Jsonb(dict(summary)), seq, summary.get("ended"), *key),
    )
    conn.execute("DELETE FROM records WHERE house_name = %s AND table_id = %s", key)
    for start in range(0, len(records), RECORDS_PER_INSERT):
        part = records[start : start + RECORDS_PER_INSERT]
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(part))
        args: list[object] = []
        for r in part:
            args += [key[0], r.id, key[1], r.seq, r.game, r.kind, r.player, r.points,
                     Jsonb(list(r.dice)), r.text, r.at, r.snapshot_seq, r.hidden]  # fmt: skip
        conn.execute(
            "INSERT INTO records (house_name, id, table_id, seq, game, kind, player, points,"
            f" dice, text, at, snapshot_seq, hidden_at_table) VALUES {values}",
            args,
        )
    return seq
