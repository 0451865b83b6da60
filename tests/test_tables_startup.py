"""A start replays only the tables in play: finished ones wait, dormant, on their digest.

Real SQLite in ``tmp_path`` and the real rules engines. That a finished table is not replayed
is seen from the engines themselves: a counting wrapper around each game's ``new`` and
``apply`` (the engine still does the work) shows which games were asked to replay anything.
The rig is :mod:`tables_startup_rig`; waking and putting tables back to sleep is in
``test_tables_startup_waking.py``, tables that no longer replay in
``test_tables_startup_broken.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from game_scripts import load
from server_app import ticking_clock
from tables_startup_rig import (
    FINISHED,
    JPEG,
    House,
    fixture_house,  # noqa: F401 (the house fixture)
)
from tables_startup_rig import an_evening as _an_evening

from scoring import games
from scoring.actions import Roll, Undo
from server.feed.hub import Feed
from server.rows import RecordRow
from server.schema import MIGRATIONS, SCHEMA_VERSION
from server.stamp import engine_stamp, source_files
from server.store import Store
from server.tables import TableService

BLOW = Roll((2, 3, 4, 6, 2, 3))  # You Blew It: nothing scores, the turn passes


class EngineSpy:
    """Counts what each game's engine is asked to do, per game name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.new: Counter[str] = Counter()
        self.apply: Counter[str] = Counter()
        for name in games.NAMES:
            game = games.find(name)
            monkeypatch.setattr(game, "new", self._counting(self.new, name, game.new))
            monkeypatch.setattr(game, "apply", self._counting(self.apply, name, game.apply))

    @staticmethod
    def _counting(
        counter: Counter[str], name: str, method: Callable[..., Any]
    ) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counter[name] += 1
            return method(*args, **kwargs)

        return counted

    def reset(self) -> None:
        self.new.clear()
        self.apply.clear()


def test_a_restart_replays_only_the_tables_in_play(
    house: House, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables, _ = house.start()
    t = _an_evening(house)
    views = {name: tables.view(table) for name, table in t.items()}
    logs = {name: tables.log(table) for name, table in t.items()}
    summaries, wall = tables.summaries(), house.wall()

    spy = EngineSpy(monkeypatch)
    tables, problems = house.start()
    assert problems == []
    # Only the two open tables were replayed: Bar Dice and Gords (finished only) never ran.
    assert tables.replays == 2
    assert spy.new == Counter({"you-blew-it": 1, "bolo": 1})
    assert spy.apply["bar-dice"] == spy.apply["gords"] == 0
    assert spy.apply["bolo"] == 2  # the open table's roll and keep, not the 41 of the won game
    assert tables.summaries() == summaries
    assert house.wall() == wall
    # The log, a photo and the game of a dormant table are read without waking it.
    assert tables.log(t["bolo"]) == logs["bolo"]
    assert tables.snapshot(t["bolo"], 1) == JPEG
    assert tables.game_of(t["bar"]).name == "bar-dice"
    assert t["gords"] in tables
    assert tables.replays == 2
    # Viewing one replays it, once, to exactly what it was.
    spy.reset()
    for name in FINISHED:
        assert tables.view(t[name]) == views[name]
        assert tables.view(t[name]) is tables.view(t[name])
    assert tables.replays == 2 + len(FINISHED)
    assert spy.new == Counter(dict.fromkeys(("bolo", "you-blew-it", "bar-dice", "gords"), 1))
    assert tables.summaries() == summaries
    assert house.wall() == wall


def test_the_wall_after_a_dormant_start_equals_a_full_replays_hidden_included(
    house: House,
) -> None:
    house.start(engine="v1")
    _an_evening(house)
    live_wall = house.wall()
    assert any(r.hidden for r in live_wall)

    tables, _ = house.start(engine="v1")  # finished tables dormant
    assert tables.replays == 2
    dormant_wall, dormant_summaries = house.wall(), tables.summaries()

    tables, _ = house.start(engine="v2")  # a rules upgrade: every table replayed
    assert tables.replays == 6
    assert house.wall() == dormant_wall == live_wall
    assert tables.summaries() == dormant_summaries


def test_a_new_rules_stamp_replays_every_table_and_derives_its_records_again(
    house: House, monkeypatch: pytest.MonkeyPatch
) -> None:
    house.start(engine="v1")
    t = _an_evening(house)
    wall = house.wall()
    bolo_records = [r for r in wall if r.table_id == t["bolo"]]
    assert bolo_records
    assert house.store is not None
    # Derived data gone wrong behind the service's back (as a rules change would leave it):
    # the won Bolo game's records lost, a bogus one added.
    house.store._db.execute("DELETE FROM records WHERE table_id = ?", (t["bolo"],))
    bogus = RecordRow(f"{t['gords']}.9.0", t["gords"], 9, "gords", "roll", "Eve", 99, (6,), "", "x")
    house.store.rederive(
        {t["gords"]: [*(r for r in house.wall() if r.table_id == t["gords"]), bogus]}
    )

    tables, _ = house.start(engine="v1")  # same stamp: the digests stand, the wall is kept
    assert tables.replays == 2
    assert [r for r in house.wall() if r.table_id == t["bolo"]] == []

    spy = EngineSpy(monkeypatch)
    tables, problems = house.start(engine="v2")
    assert problems == []
    assert tables.replays == 6
    assert spy.new["bar-dice"] == spy.new["gords"] == 1
    assert house.wall() == wall  # derived again from the logs: restored, the bogus one gone
    heads = house.heads()
    for name in FINISHED:  # and digested again under the new stamp
        digest = heads[t[name]].digest
        assert digest is not None
        assert (digest.engine, digest.seq) == ("v2", heads[t[name]].last_seq)
    assert heads[t["open_ybi"]].digest is None

    tables, _ = house.start(engine="v2")
    assert tables.replays == 2


def test_undo_of_the_end_on_a_dormant_table_reopens_it_and_the_next_start_replays_it(
    house: House,
) -> None:
    house.start()
    t = _an_evening(house)
    ybi = t["ybi"]
    seq = house.heads()[ybi].last_seq

    tables, _ = house.start()
    assert tables.replays == 2
    applied = tables.apply(ybi, Undo(), source="phone")  # woken, then the end taken back
    assert tables.replays == 3
    assert applied.table["ended"] is None
    assert not applied.table["over"]
    tables.apply(ybi, BLOW, source="phone")  # it plays on
    assert house.heads()[ybi].digest.seq == seq  # type: ignore[union-attr]
    assert house.heads()[ybi].last_seq == seq + 2  # the digest is stale
    open_summary = next(s for s in tables.summaries() if s["table"] == ybi)
    assert not open_summary["over"]

    tables, problems = house.start()
    assert problems == []
    assert tables.replays == 3  # the two open tables and the reopened one
    assert tables.view(ybi)["seq"] == seq + 2
    assert tables.replays == 3  # it was loaded, not dormant
    assert house.heads()[ybi].digest is None  # the stale digest is dropped
    assert next(s for s in tables.summaries() if s["table"] == ybi) == open_summary

    tables.end(ybi)  # finished again: digested with the end
    digest = house.heads()[ybi].digest
    assert digest is not None
    assert digest.seq == seq + 3
    tables, _ = house.start()
    assert tables.replays == 2


def test_the_action_that_finishes_a_game_digests_it_with_the_event(house: House) -> None:
    tables, _ = house.start()
    table = tables.create("bolo", players=["Ann", "Bob"])["table"]
    actions = load("bolo_board_game.jsonl")
    house.play(table, *actions[:-1])
    assert house.heads()[table].digest is None  # not over yet
    house.play(table, actions[-1])  # Ann banks her way past 10,000
    head = house.heads()[table]
    assert head.digest is not None
    assert (head.digest.engine, head.digest.seq) == (engine_stamp(), head.last_seq)
    assert head.row.ended is None  # won, not ended: finished all the same
    summary = next(s for s in tables.summaries() if s["table"] == table)
    assert head.digest.summary | {"idle": False} == summary  # idle is judged when served

    tables, _ = house.start()
    assert tables.replays == 0  # a table finished since the last start is dormant at once
    assert tables.summaries() == [summary]


def test_the_stamp_covers_the_rules_and_what_derives_from_them() -> None:
    names = {name for name, _ in source_files()}
    assert {"scoring/farkle/bolo/game.py", "scoring/history.py", "scoring/actions.py"} <= names
    assert {
        "server/records.py",
        "server/standing.py",
        "server/table_memory.py",
        "server/table_values.py",
        "server/tables.py",
    } <= names
    stamp = engine_stamp()
    assert len(stamp) == 64
    assert engine_stamp() == stamp


def test_a_version_1_database_gains_the_digests_and_keeps_its_tables(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        db.execute(statement)
    db.execute("PRAGMA user_version = 1")
    db.execute(
        "INSERT INTO tables VALUES ('abc234', 'you-blew-it',"
        ' \'{"teams": {"A": ["Ann"], "B": ["Bob"]}}\', \'{}\', \'2026-01-01\', NULL)'
    )
    db.execute(
        "INSERT INTO events VALUES ('abc234', 1, 'x', 'phone', 'roll',"
        ' \'{"type": "roll", "dice": [2, 3, 4, 6, 2, 3]}\')'
    )
    db.commit()
    db.close()
    store = Store(path)
    try:
        assert store.schema_version == SCHEMA_VERSION == 5  # digests, sessions, ..., players
        assert store._query("SELECT count(*) FROM player_tables") == [(0,)]
        (head,) = store.heads()
        assert (head.row.id, head.last_seq, head.digest) == ("abc234", 1, None)
        tables = TableService(store, Feed(max_clients=1, queue_size=10), clock=ticking_clock())
        assert tables.load() == []
        assert tables.view("abc234")["seq"] == 1
    finally:
        store.close()
