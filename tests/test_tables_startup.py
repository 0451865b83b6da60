"""A start replays only the tables in play: finished ones wait, dormant, on their digest.

Real SQLite in ``tmp_path`` and the real rules engines. That a finished table is not replayed
is seen from the engines themselves: a counting wrapper around each game's ``new`` and
``apply`` (the engine still does the work) shows which games were asked to replay anything.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from game_scripts import load
from server_app import ticking_clock

from scoring import games
from scoring.actions import Action, Bid, End, Keep, Reroll, Roll, Undo
from server.feed.hub import Feed
from server.records import Records
from server.rows import RecordRow, TableHead
from server.schema import MIGRATIONS, SCHEMA_VERSION
from server.stamp import engine_stamp, source_files
from server.store import Store
from server.table_values import UnknownTableError
from server.tables import TableClosedError, TableService

JPEG = b"\xff\xd8\xff\xe0the-pad"
CLOCK_START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)
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


class House:
    """One dicepad's data directory, started (``start``) and stopped like the service."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.store: Store | None = None

    def start(
        self, engine: str | None = None, *, keep_awake: int = 32
    ) -> tuple[TableService, list[str]]:
        self.stop()
        self.store = Store(self.data / "dicepad.sqlite3")
        self.tables = TableService(
            self.store,
            Feed(max_clients=4, queue_size=1000),
            clock=ticking_clock(CLOCK_START),
            engine=engine,
            keep_awake=keep_awake,
        )
        problems = self.tables.load()
        self.records = Records(self.store, ticking_clock(CLOCK_START))
        return self.tables, problems

    def stop(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def play(self, table: str, *actions: Action) -> None:
        for action in actions:
            snap = JPEG if isinstance(action, Roll) else None
            self.tables.apply(table, action, source="camera", snapshot=snap)

    def wall(self) -> list[RecordRow]:
        return self.records.wall(include_hidden=True, limit=10_000)

    def heads(self) -> dict[str, TableHead]:
        assert self.store is not None
        return {h.row.id: h for h in self.store.heads()}


@pytest.fixture
def house(tmp_path: Path) -> Iterator[House]:
    h = House(tmp_path)
    yield h
    h.stop()


def _an_evening(house: House) -> dict[str, str]:
    """Four finished games (one of each; Bolo won, the rest ended) and two in play, with
    records, a re-roll that took a roll back, an undone keep and a hidden record."""
    tables = house.tables
    t = {
        "bolo": tables.create("bolo", players=["Ann", "Bob"])["table"],
        "ybi": tables.create("you-blew-it", teams={"A": ["Ann"], "B": ["Bob"]})["table"],
        "bar": tables.create("bar-dice", players=["Ann", "Bob", "Cy"])["table"],
        "gords": tables.create("gords", players=["Ann", "Bob"])["table"],
        "open_ybi": tables.create("you-blew-it", teams={"X": ["Xi"], "Y": ["Yo"]})["table"],
        "open_bolo": tables.create("bolo", players=["Cam", "Dee"])["table"],
    }
    house.play(t["bolo"], *load("bolo_board_game.jsonl"))  # won: over without an ``end``
    house.play(t["ybi"], Roll((5,) * 6), Keep((5,) * 6), Undo(), Keep((5,) * 6), End())
    five_aces = Roll((1,) * 5)
    house.play(t["bar"], Roll((6,)), Roll((5,)), Roll((4,)))  # the order: Ann flops first
    house.play(t["bar"], five_aces, Reroll((), "cocked"), five_aces, End())
    house.play(t["gords"], Bid(3, 4), End())
    house.play(t["open_ybi"], Roll((1, 1, 1, 5, 2, 3)), Keep((1, 1, 1, 5)), Roll((2, 3)))
    house.play(t["open_bolo"], Roll((2, 2, 2, 2, 2)), Keep((2, 2, 2, 2, 2)))
    lucky = next(r for r in house.wall() if r.table_id == t["bar"] and r.kind == "too_lucky")
    house.records.set_hidden(lucky.id)
    for name in ("bolo", "ybi", "bar", "gords"):
        assert tables.view(t[name])["over"], name
    for name in ("open_ybi", "open_bolo"):
        assert not tables.view(t[name])["over"], name
    return t


FINISHED = ("bolo", "ybi", "bar", "gords")


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


def test_watching_or_marking_a_dormant_table_wakes_it(house: House) -> None:
    house.start()
    t = _an_evening(house)
    seq = house.tables.view(t["gords"])["seq"]
    tables, _ = house.start()
    stream = tables.watch(t["gords"], last_event_id=seq - 1)
    chunks = [next(stream) for _ in range(3)]
    assert chunks[1].startswith(f"id: {seq}\nevent: entry".encode())  # the catch-up
    assert chunks[2].startswith(f"id: {seq}\nevent: state".encode())  # the table now
    stream.close()
    assert tables.replays == 3
    tables.set_pad(t["bar"], "camera", {"ok": True})
    assert tables.view(t["bar"])["pad"] == {"camera": {"ok": True}}
    assert tables.replays == 4


def test_tables_looked_at_go_back_to_sleep_past_keep_awake_and_wake_again_unchanged(
    house: House,
) -> None:
    house.start()
    t = _an_evening(house)
    views = {name: house.tables.view(t[name]) for name in FINISHED}
    summaries, wall = house.tables.summaries(), house.wall()
    tables, _ = house.start(keep_awake=2)
    assert tables.replays == 2  # the two tables in play

    for name in FINISHED:  # a look at each finished table wakes it
        assert tables.view(t[name]) == views[name]
    assert tables.replays == 2 + len(FINISHED)
    assert tables.awake == 2 + 2
    # Only the two looked at last stay replayed: looking at them again replays nothing.
    assert tables.view(t["bar"]) is tables.view(t["bar"])
    assert tables.view(t["gords"]) == views["gords"]
    assert tables.replays == 2 + len(FINISHED)
    # The first two went back to sleep: listed and on the wall as before, replayed on use.
    assert tables.summaries() == summaries
    assert house.wall() == wall
    assert tables.view(t["bolo"]) == views["bolo"]
    assert tables.replays == 2 + len(FINISHED) + 1
    # The tables in play are never put to sleep, however many finished ones are looked at.
    before = tables.replays
    house.play(t["open_bolo"], Roll((2, 3, 4, 6, 6)))
    assert tables.replays == before
    # The digests saved on the way are current: the next start replays only the two in play.
    tables, _ = house.start()
    assert tables.replays == 2
    assert tables.summaries() == house.tables.summaries()


def test_a_change_to_a_table_put_back_to_sleep_lands_on_its_replay(house: House) -> None:
    house.start()
    t = _an_evening(house)
    tables, _ = house.start(keep_awake=1)
    gords = tables.view(t["gords"])
    seq = gords["seq"]
    tables.view(t["bar"])  # gords goes back to sleep
    applied = tables.apply(t["gords"], Undo(), source="phone")  # the end taken back
    assert applied.table["seq"] == seq + 1
    assert not applied.table["over"]
    assert not tables.summary(t["gords"])["over"]  # reopened: in play again
    assert t["gords"] in [s["table"] for s in tables.in_play()]
    tables.view(t["ybi"])  # the reopened table is in play: it stays awake
    before = tables.replays
    assert tables.view(t["gords"])["seq"] == seq + 1
    assert tables.replays == before


def test_a_change_racing_the_table_going_back_to_sleep_lands_on_the_table_in_use(
    house: House, monkeypatch: pytest.MonkeyPatch
) -> None:
    house.start()
    t = _an_evening(house)
    tables, _ = house.start(keep_awake=1)
    seq = tables.view(t["gords"])["seq"]
    fetch = tables._get
    raced: list[str] = []

    def fetch_then_race(table_id: str) -> Any:
        held = fetch(table_id)
        if table_id == t["gords"] and not raced:  # between the fetch and the table's lock,
            raced.append(table_id)
            tables.view(t["bar"])  # another phone's look puts gords back to sleep
        return held

    monkeypatch.setattr(tables, "_get", fetch_then_race)
    tables.apply(t["gords"], Undo(), source="phone")  # the end taken back
    assert raced
    assert t["gords"] in [s["table"] for s in tables.in_play()]  # reopened: in play again
    assert tables.view(t["gords"])["seq"] == seq + 1
    assert not tables.summary(t["gords"])["over"]


def test_a_disk_that_refuses_the_digests_keeps_the_tables_awake_and_fails_nothing(
    house: House, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    house.start()
    t = _an_evening(house)
    views = {name: house.tables.view(t[name]) for name in FINISHED}
    tables, _ = house.start(keep_awake=1)
    assert house.store is not None

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(house.store, "rederive", full_disk)
    for name in FINISHED:  # every look still answers, though none can go back to sleep
        assert tables.view(t[name]) == views[name]
    assert tables.awake == 2 + len(FINISHED)
    assert "could not save digests" in caplog.text
    monkeypatch.undo()
    house.play(t["open_ybi"], End())  # the disk is back: the next game over tidies up
    assert tables.awake == 1 + 1  # the table still in play, and the one just finished


def test_a_rules_upgrade_replays_every_table_and_keeps_only_keep_awake_of_the_finished(
    house: House,
) -> None:
    house.start(engine="v1")
    _an_evening(house)
    tables, _ = house.start(engine="v2", keep_awake=1)
    assert tables.replays == 6
    assert tables.awake == 2 + 1  # the two in play, and one finished table of the four
    tables, _ = house.start(engine="v2")
    assert tables.replays == 2  # and their digests, saved by the new rules code, are current


def test_keep_awake_must_keep_the_table_in_use() -> None:
    store = Store(":memory:")
    with pytest.raises(ValueError, match="keep_awake"):
        TableService(store, Feed(max_clients=1, queue_size=1), clock=_now, keep_awake=0)
    store.close()


def _now() -> datetime:
    return CLOCK_START


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


def test_two_first_uses_at_once_replay_a_dormant_table_once(
    house: House, monkeypatch: pytest.MonkeyPatch
) -> None:
    house.start()
    t = _an_evening(house)
    tables, _ = house.start()
    before = tables.replays
    bolo = games.find("bolo")
    new = bolo.new

    def slow_new(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.05)  # a long replay: every thread arrives while the first is in it
        return new(*args, **kwargs)

    monkeypatch.setattr(bolo, "new", slow_new)
    barrier = threading.Barrier(8)
    seen: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def first_use() -> None:
        try:
            barrier.wait()
            seen.append(tables.view(t["bolo"]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert errors == []
    assert tables.replays == before + 1
    assert len(seen) == 8
    assert all(v is seen[0] for v in seen)


def test_a_dormant_table_whose_log_no_longer_replays_is_closed_on_first_use(
    house: House,
) -> None:
    house.start()
    t = _an_evening(house)
    bar = t["bar"]
    assert house.store is not None
    # As if the rules changed without the stamp noticing: an event the game refuses,
    # written behind the service's back, and the digest made to look current.
    last = house.heads()[bar].last_seq
    house.store._db.execute(
        "INSERT INTO events VALUES (?, ?, 'x', 'phone', 'bank', '{\"type\": \"bank\"}')",
        (bar, last + 1),
    )
    house.store._db.execute("UPDATE table_digests SET seq = ? WHERE table_id = ?", (last + 1, bar))

    tables, problems = house.start()
    assert problems == []  # dormant: nobody has looked yet
    assert any(r.table_id == bar for r in house.wall())
    view = tables.view(bar)
    assert "no longer replays" in view["problem"]
    with pytest.raises(TableClosedError):
        tables.apply(bar, Undo(), source="phone")
    assert [r for r in house.wall() if r.table_id == bar] == []  # as a full load leaves it
    assert house.heads()[bar].digest is None

    tables, problems = house.start()  # and the next start reports it, as it always did
    assert len(problems) == 1
    assert bar in problems[0]


def test_a_dormant_table_the_game_now_refuses_is_left_out_on_first_use(
    house: House, monkeypatch: pytest.MonkeyPatch
) -> None:
    house.start()
    t = _an_evening(house)
    tables, _ = house.start()
    gords = games.find("gords")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("G-1: two players are not enough any more")

    monkeypatch.setattr(gords, "new", refuse)  # a rules change the stamp did not see
    with pytest.raises(UnknownTableError, match="not enough"):
        tables.view(t["gords"])
    assert t["gords"] not in tables
    assert not any(s["table"] == t["gords"] for s in tables.summaries())
    assert house.heads()[t["gords"]].digest is None  # the next start replays it, and says so
    monkeypatch.undo()
    tables, problems = house.start()
    assert problems == []
    assert tables.replays == 3


def test_a_dormant_table_whose_game_is_gone_is_left_out(house: House) -> None:
    house.start()
    t = _an_evening(house)
    assert house.store is not None
    house.store._db.execute("UPDATE tables SET game = 'yahtzee' WHERE id = ?", (t["gords"],))
    tables, problems = house.start()
    assert problems == [
        f"table {t['gords']} is not loaded: unknown game 'yahtzee'; known games: "
        "you-blew-it, bolo, bar-dice, gords"
    ]
    assert t["gords"] not in tables
    with pytest.raises(UnknownTableError):
        tables.view(t["gords"])


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
