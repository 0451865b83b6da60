"""Dormant tables woken by use, put back to sleep past ``keep_awake``, and races on it."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import datetime
from typing import Any

import pytest
from tables_startup_rig import (
    CLOCK_START,
    FINISHED,
    House,
    fixture_house,  # noqa: F401 (the house fixture)
)
from tables_startup_rig import an_evening as _an_evening

from scoring import games
from scoring.actions import End, Roll, Undo
from server.feed.hub import Feed
from server.store import Store
from server.tables import TableService


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
