"""Shared helpers of the start-up tests (``test_tables_startup*.py``): a dicepad's data
directory started and stopped like the service, and an evening of finished games and
games in play."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from game_scripts import load
from server_app import ticking_clock

from scoring.actions import Action, Bid, End, Keep, Reroll, Roll, Undo
from server.feed.hub import Feed
from server.records import Records
from server.rows import RecordRow, TableHead
from server.store import Store
from server.tables import TableService

JPEG = b"\xff\xd8\xff\xe0the-pad"
CLOCK_START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


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


@pytest.fixture(name="house")  # imported by the tests that use it
def fixture_house(tmp_path: Path) -> Iterator[House]:
    h = House(tmp_path)
    yield h
    h.stop()


def an_evening(house: House) -> dict[str, str]:
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
