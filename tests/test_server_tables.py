"""The one path that changes a table (``TableService.apply``), replay, records, the feed hook.

Real games only: the rules engine is never faked.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_app import ticking_clock

from scoring.actions import Action, Bank, End, Fix, Keep, Roll, Undo, action_from_json
from scoring.errors import IllegalActionError
from scoring.history import effective_actions
from server.feed.hub import Feed
from server.records import Records
from server.rows import TableRow
from server.standing import Standing, resolve
from server.store import Store
from server.table_values import UnknownTableError
from server.tables import SnapshotError, TableClosedError, TableService

JPEG = b"\xff\xd8\xff\xe0fake-but-jpeg-shaped"
BLOW = Roll((2, 3, 4, 6, 2, 3))  # no scoring die: always legal when six dice are wanted
TEAMS = {"A": ["Ann"], "B": ["Bob"]}


CLOCK_START = datetime(2026, 11, 21, 20, 0, tzinfo=UTC)


class Parts:
    def __init__(self, data: Path) -> None:
        self.store = Store(data / "d.sqlite3")
        self.feed = Feed(max_clients=10, queue_size=1000)
        self.tables = TableService(self.store, self.feed, clock=ticking_clock(CLOCK_START))
        self.problems = self.tables.load()
        self.records = Records(self.store, ticking_clock(CLOCK_START))

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[Parts]:
    p = Parts(tmp_path)
    yield p
    p.close()


def _ybi(parts: Parts) -> str:
    table: str = parts.tables.create("you-blew-it", teams=TEAMS)["table"]
    return table


def _play(parts: Parts, table: str, actions: list[Action], source: str = "phone") -> None:
    for action in actions:
        parts.tables.apply(table, action, source=source)


def test_apply_appends_updates_and_returns_the_entry(parts: Parts) -> None:
    t = _ybi(parts)
    applied = parts.tables.apply(t, Roll((1, 1, 1, 5, 2, 3)), source="camera", snapshot=JPEG)
    assert applied.entry["seq"] == 1
    assert applied.entry["source"] == "camera"
    assert applied.entry["snapshot"] is True
    assert applied.table["expecting"]["action"] == "keep"
    assert parts.tables.snapshot(t, 1) == JPEG
    applied = parts.tables.apply(t, Keep((1, 1, 1, 5)), source="phone")
    assert [h.kind for h in applied.highlights] == ["roll"]
    assert parts.tables.view(t)["seq"] == 2
    assert [e["action"]["type"] for e in parts.tables.log(t)] == ["roll", "keep"]
    assert parts.tables.log(t, since=1)[0]["seq"] == 2


def test_an_illegal_action_changes_nothing(parts: Parts) -> None:
    t = _ybi(parts)
    before = parts.tables.view(t)
    with pytest.raises(IllegalActionError):
        parts.tables.apply(t, Bank(), source="phone")  # nothing to bank yet
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        parts.tables.apply(t, Undo(), source="phone")
    assert parts.tables.view(t) == before
    assert parts.tables.log(t) == []
    assert parts.feed.stats().published == 0


def test_bad_source_snapshot_and_table_are_refused(parts: Parts) -> None:
    t = _ybi(parts)
    with pytest.raises(ValueError, match="source"):
        parts.tables.apply(t, BLOW, source="carrier-pigeon")
    with pytest.raises(SnapshotError, match="JPEG"):
        parts.tables.apply(t, BLOW, source="camera", snapshot=b"\x89PNG....")
    small = TableService(
        parts.store, parts.feed, clock=ticking_clock(CLOCK_START), max_snapshot_bytes=10
    )
    small.load()
    with pytest.raises(SnapshotError, match="at most 10"):
        small.apply(t, BLOW, source="camera", snapshot=JPEG)
    with pytest.raises(UnknownTableError):
        parts.tables.apply("nope", BLOW, source="phone")
    assert parts.tables.log(t) == []


def test_undo_is_an_event_and_takes_its_record_off_the_wall(parts: Parts) -> None:
    t = _ybi(parts)
    _play(parts, t, [Roll((5,) * 6)])
    parts.tables.apply(t, Keep((5,) * 6), source="phone")
    assert [r.points for r in parts.records.wall(table_id=t, kind="roll")] != []
    parts.tables.apply(t, Undo(), source="button")
    assert parts.records.wall(table_id=t) == []  # the undone keep's record is gone
    log = parts.tables.log(t)
    assert [e["action"]["type"] for e in log] == ["roll", "keep", "undo"]  # nothing deleted
    assert parts.tables.view(t)["expecting"]["action"] == "keep"
    parts.tables.apply(t, Undo(), source="phone")
    assert parts.tables.view(t)["expecting"]["text"] == "Ann: roll 6 dice"


def test_fix_corrects_the_roll_and_refuses_what_no_longer_fits(parts: Parts) -> None:
    t = _ybi(parts)
    _play(parts, t, [Roll((5,) * 6)])
    parts.tables.apply(t, Fix((2, 2, 2, 3, 4, 6)), source="phone")
    assert parts.tables.view(t)["state"]["current_roll"] == [2, 2, 2, 3, 4, 6]
    _play(parts, t, [Keep((2, 2, 2))])
    with pytest.raises(IllegalActionError):
        parts.tables.apply(t, Fix((3, 3, 4, 4, 6, 6)), source="phone")  # the keep would break
    assert len(parts.tables.log(t)) == 3


def test_records_point_at_the_rolls_snapshot(parts: Parts) -> None:
    t = _ybi(parts)
    parts.tables.apply(t, Roll((1,) * 6), source="camera", snapshot=JPEG)
    parts.tables.apply(t, Keep((1,) * 6), source="phone")
    (record,) = parts.records.wall(table_id=t, kind="roll")
    assert record.seq == 2
    assert record.snapshot_seq == 1
    assert record.player == "Ann"
    parts.records.set_hidden(record.id)
    assert parts.records.wall(table_id=t) == []
    assert parts.records.wall(table_id=t, include_hidden=True)[0].hidden


def test_end_is_an_undoable_event_that_marks_the_table(parts: Parts) -> None:
    t = _ybi(parts)
    applied = parts.tables.end(t)
    assert applied.table["ended"] is not None
    assert applied.table["over"]
    assert parts.store.table(t).ended == applied.table["ended"]  # type: ignore[union-attr]
    with pytest.raises(IllegalActionError):
        parts.tables.apply(t, BLOW, source="phone")
    parts.tables.apply(t, Undo(), source="phone")  # a mistaken end is taken back
    assert parts.tables.view(t)["ended"] is None
    assert parts.store.table(t).ended is None  # type: ignore[union-attr]


def _game() -> list[Action]:
    return [
        Roll((1, 1, 1, 5, 2, 3)), Keep((1, 1, 1, 5)), Bank(),
        BLOW, Roll((5,) * 6), Fix((2, 2, 2, 3, 4, 6)), Keep((2, 2, 2)), Undo(),
        Keep((2, 2, 2)), Roll((1, 5, 3)), Keep((1, 5)), Bank(),
    ]  # fmt: skip


def test_replay_after_reopen_is_identical(tmp_path: Path) -> None:
    first = Parts(tmp_path)
    t = _ybi(first)
    other = first.tables.create("you-blew-it", teams={"X": ["Xi"], "Y": ["Yo"]})["table"]
    _play(first, t, _game())
    first.tables.apply(other, BLOW, source="camera", snapshot=JPEG)
    first.tables.end(other)
    views = {x: first.tables.view(x) for x in (t, other)}
    logs = {x: first.tables.log(x) for x in (t, other)}
    wall = first.records.wall(include_hidden=True)
    first.close()

    second = Parts(tmp_path)
    assert second.problems == []
    for x in (t, other):
        assert second.tables.view(x) == views[x]
        assert second.tables.log(x) == logs[x]
    assert second.records.wall(include_hidden=True) == wall
    assert [s["table"] for s in second.tables.summaries()] == [other, t]  # newest first
    # ... and it carries on from where it was
    second.tables.apply(t, BLOW, source="phone")
    assert second.tables.view(t)["seq"] == views[t]["seq"] + 1
    second.close()


def test_a_log_that_no_longer_replays_closes_only_that_table(tmp_path: Path) -> None:
    first = Parts(tmp_path)
    bad, good = _ybi(first), _ybi(first)
    _play(first, bad, [BLOW])
    _play(first, good, [BLOW])
    # As if a rules change made an old event illegal: write one behind the service's back.
    first.store._db.execute(
        "INSERT INTO events VALUES (?, 2, 'x', 'phone', 'bank', '{\"type\": \"bank\"}')", (bad,)
    )
    first.close()
    second = Parts(tmp_path)
    assert len(second.problems) == 1
    assert bad in second.problems[0]
    assert second.tables.view(bad)["problem"]
    with pytest.raises(TableClosedError, match="no longer replays"):
        second.tables.apply(bad, BLOW, source="phone")
    second.tables.apply(good, BLOW, source="phone")
    second.close()


def test_two_threads_posting_both_land_in_order(parts: Parts) -> None:
    t = _ybi(parts)
    watch = parts.tables.watch(t)
    next(watch), next(watch)  # retry + the snapshot
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def post(source: str) -> None:
        try:
            barrier.wait()
            for _ in range(25):
                parts.tables.apply(t, BLOW, source=source)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=post, args=(s,)) for s in ("phone", "button")]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert errors == []
    log = parts.tables.log(t)
    assert [e["seq"] for e in log] == list(range(1, 51))
    assert sorted(e["source"] for e in log).count("button") == 25
    # the feed carried all of them, in log order
    seqs = []
    for _ in range(50):
        chunk = next(watch).decode()
        seqs.append(int(chunk.split("\n", 1)[0].removeprefix("id: ")))
    assert seqs == list(range(1, 51))
    watch.close()


def test_watch_catches_up_after_last_event_id_then_goes_live(parts: Parts) -> None:
    t = _ybi(parts)
    _play(parts, t, [BLOW, BLOW, BLOW])
    stream = parts.tables.watch(t, last_event_id=1)
    chunks = [next(stream) for _ in range(4)]
    assert chunks[0].startswith(b"retry:")
    assert chunks[1].startswith(b"id: 2\nevent: entry")
    assert chunks[2].startswith(b"id: 3\nevent: entry")
    assert chunks[3].startswith(b"id: 3\nevent: state")
    parts.tables.apply(t, BLOW, source="phone")
    live = next(stream)
    assert live.startswith(b"id: 4\nevent: entry")
    assert b"id: 4\nevent: state" in live
    stream.close()
    assert parts.feed.stats().clients == 0


ACTIONS = st.sampled_from(
    [Roll((1, 2)), Roll((5, 5)), Keep((1,)), Bank(), Undo(), Fix((3, 4)), Fix((6,)), End()]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ACTIONS, max_size=30))
def test_resolve_keeps_provenance_and_agrees_with_the_history(actions: list[Any]) -> None:
    entries = [Standing(n, f"t{n}", a) for n, a in enumerate(actions, 1)]
    try:
        expected = effective_actions(actions)
    except IllegalActionError as exc:
        with pytest.raises(IllegalActionError, match=str(exc)[:10]):
            resolve(entries)
        return
    got = resolve(entries)
    assert [s.action for s in got] == expected
    for s in got:  # each standing action came from its own entry (a fix keeps the roll's)
        original = entries[s.seq - 1].action
        assert type(original) is type(s.action)


def test_actions_round_trip_through_the_log(parts: Parts) -> None:
    t = _ybi(parts)
    _play(parts, t, [Roll((1, 1, 1, 5, 2, 3)), Keep((1, 1, 1, 5))])
    assert [action_from_json(e["action"]) for e in parts.tables.log(t)] == [
        Roll((1, 1, 1, 5, 2, 3)),
        Keep((1, 1, 1, 5)),
    ]


def test_a_table_of_an_unknown_game_is_reported_and_the_rest_load(tmp_path: Path) -> None:
    first = Parts(tmp_path)
    good = _ybi(first)
    first.store.create_table(TableRow("oldgame", "yahtzee", {"players": ["A"]}, {}, "x"))
    first.close()
    second = Parts(tmp_path)
    assert second.problems == [
        "table oldgame is not loaded: unknown game 'yahtzee'; known games: "
        "you-blew-it, bolo, bar-dice, gords"
    ]
    assert "oldgame" not in second.tables
    assert good in second.tables
    assert second.store.table("oldgame") is not None  # kept in the database all the same
    second.close()
