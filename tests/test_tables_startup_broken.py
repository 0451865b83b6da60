"""Dormant tables whose log, game or rules no longer replay: closed or left out on use."""

from __future__ import annotations

from typing import Any

import pytest
from tables_startup_rig import (
    House,
    fixture_house,  # noqa: F401 (the house fixture)
)
from tables_startup_rig import an_evening as _an_evening

from scoring import games
from scoring.actions import Undo
from server.table_values import UnknownTableError
from server.tables import TableClosedError


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
