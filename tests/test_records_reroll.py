"""A roll taken back by a re-roll never stays on the high-roll wall.

Through :class:`server.tables.TableService` with the real engines: the camera logs a roll
(with its photo), its highlights land on the wall, then the camera (or a phone) flags the dice
cocked or sloppy and logs a ``reroll``. Every engine models that re-roll as replacing the throw
just made, so whatever the throw recorded must go, live and after a restart alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_app import ticking_clock

from scoring.actions import Action, Keep, Reroll, Roll, Undo
from scoring.errors import IllegalActionError
from server.feed.hub import Feed
from server.pages import board
from server.records import Records
from server.rows import RecordRow
from server.store import Store
from server.tables import TableService

JPEG = b"\xff\xd8\xff\xe0a-photo-of-the-pad"
FIVE_ACES = Roll((1, 1, 1, 1, 1))


CLOCK_START = datetime(2026, 11, 22, 21, 0, tzinfo=UTC)


class House:
    """One dicepad's tables and wall on a data directory; ``reopen`` is a restart."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self._open()

    def _open(self) -> None:
        self.store = Store(self.data / "dicepad.sqlite3")
        self.tables = TableService(
            self.store, Feed(max_clients=4, queue_size=1000), clock=ticking_clock(CLOCK_START)
        )
        assert self.tables.load() == []
        self.records = Records(self.store, ticking_clock(CLOCK_START))

    def reopen(self) -> None:
        self.store.close()
        self._open()

    def wall(self, table: str) -> list[RecordRow]:
        return self.records.wall(table_id=table, include_hidden=True, limit=1000)

    def kinds(self, table: str) -> set[str]:
        return {r.kind for r in self.wall(table)}

    def play(self, table: str, *actions: Action, source: str = "camera") -> None:
        for action in actions:
            snap = JPEG if isinstance(action, Roll) else None
            self.tables.apply(table, action, source=source, snapshot=snap)


@pytest.fixture
def house(tmp_path: Path) -> Iterator[House]:
    h = House(tmp_path)
    yield h
    h.store.close()


def _bar_dice_at_the_flop(house: House) -> str:
    """Three players, order rolled (Ann first): Ann's flop is next."""
    table: str = house.tables.create("bar-dice", players=["Ann", "Bob", "Cy"])["table"]
    house.play(table, Roll((6,)), Roll((5,)), Roll((4,)))
    assert house.tables.view(table)["expecting"]["text"] == "Ann: flop, roll 5 dice"
    return table


def test_a_cocked_five_aces_flop_is_not_too_lucky(house: House) -> None:
    table = _bar_dice_at_the_flop(house)
    house.play(table, FIVE_ACES)
    assert {"too_lucky", "hand"} <= house.kinds(table)  # on the wall the moment it lands
    house.play(table, Reroll((), "cocked"))
    assert house.wall(table) == []
    assert house.tables.view(table)["expecting"]["text"] == "Ann: re-roll 5 dice (cocked)"
    house.reopen()
    assert house.wall(table) == []  # rebuilt from the log at start: still gone


def test_the_re_thrown_flop_is_recorded_with_its_own_photo(house: House) -> None:
    table = _bar_dice_at_the_flop(house)
    house.play(table, FIVE_ACES, Reroll((1,), "cocked"))  # 4: the flop; 5: the re-roll
    assert house.wall(table) == []
    house.play(table, FIVE_ACES)  # D-16: all five thrown again, aces again: 6
    rows = house.wall(table)
    assert {r.kind for r in rows} == {"too_lucky", "hand"}
    assert {r.seq for r in rows} == {6}
    assert {r.snapshot_seq for r in rows} == {6}
    assert all(r.dice == (1, 1, 1, 1, 1) for r in rows)


def test_a_flop_that_stands_stays_when_a_later_throw_is_re_rolled(house: House) -> None:
    table = _bar_dice_at_the_flop(house)
    house.play(table, FIVE_ACES)  # seq 4, Ann is too lucky and it stands
    house.play(table, Roll((2, 3, 4, 5, 6)), Reroll((), "sloppy"))  # Bob's flop taken back
    rows = house.wall(table)
    assert {r.seq for r in rows} == {4}
    assert "too_lucky" in {r.kind for r in rows}
    house.reopen()
    assert house.wall(table) == rows


def test_a_hidden_record_of_a_standing_roll_stays_hidden_across_the_rebuild(house: House) -> None:
    table = _bar_dice_at_the_flop(house)
    house.play(table, FIVE_ACES)
    lucky = next(r for r in house.wall(table) if r.kind == "too_lucky")
    house.records.set_hidden(lucky.id)
    house.play(table, Roll((2, 3, 4, 5, 6)), Reroll((), "cocked"))  # the wall is re-derived
    again = next(r for r in house.wall(table) if r.kind == "too_lucky")
    assert (again.id, again.hidden) == (lucky.id, True)


def _bolo_blown_after_five_of_a_kind(house: House) -> str:
    table: str = house.tables.create("bolo", players=["Ann", "Bob"])["table"]
    house.play(table, Roll((2, 2, 2, 2, 2)))
    house.play(table, Keep((2, 2, 2, 2, 2)), source="phone")
    house.play(table, Roll((3, 3, 4, 4, 6)))  # nothing scores: BOLO right after five 2s
    return table


def test_a_bolo_after_five_of_a_kind_signs_the_pad_only_if_the_roll_stands(
    house: House,
) -> None:
    table = _bolo_blown_after_five_of_a_kind(house)

    def signed() -> list[tuple[int, str]]:
        return [(r.seq, r.text) for r in house.wall(table) if r.kind == "high_roller"]

    five_twos, bolo = signed()  # the keep of five 2s (seq 2), then the BOLO roll (seq 3)
    assert five_twos[0] == 2
    assert bolo[0] == 3
    assert "BOLOed right after five of a kind" in bolo[1]
    house.play(table, Reroll((6,), "sloppy"))  # a die was off the pad: that roll never was
    assert signed() == [five_twos]
    house.play(table, Roll((5,)))  # the sloppy die re-thrown scores: no BOLO at all
    assert house.tables.view(table)["expecting"]["action"] == "keep"
    assert signed() == [five_twos]
    house.reopen()
    assert signed() == [five_twos]


def test_undoing_the_re_roll_puts_the_roll_back_on_the_wall(house: House) -> None:
    table = _bar_dice_at_the_flop(house)
    house.play(table, FIVE_ACES, Reroll((), "cocked"))
    assert house.wall(table) == []
    house.tables.apply(table, Undo(), source="phone")  # the camera was wrong: it stood
    assert {r.kind for r in house.wall(table)} == {"too_lucky", "hand"}


def test_the_re_roll_is_refused_when_nothing_was_just_thrown_and_the_wall_is_kept(
    house: House,
) -> None:
    table = _bar_dice_at_the_flop(house)
    house.play(table, FIVE_ACES)
    before = house.wall(table)
    house.play(table, Roll((2, 3, 4, 5, 6)))  # Bob's flop: Ann's aces are no longer "just thrown"
    with pytest.raises(IllegalActionError):
        house.play(table, Reroll((1,), "cocked"))  # no ace in the last throw
    assert [r for r in house.wall(table) if r.seq == 4] == [r for r in before if r.seq == 4]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_live_wall_always_equals_the_wall_rebuilt_from_the_log(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Random Bar Dice play with re-rolls and undos: what the live path wrote is exactly what
    a restart derives, and no record belongs to a roll that a re-roll took back."""
    house = House(tmp_path_factory.mktemp("house"))
    try:
        table = _bar_dice_at_the_flop(house)
        tables = house.tables
        game = tables.game_of(table)
        for _ in range(data.draw(st.integers(4, 16), label="steps")):
            view = tables.view(table)
            if view["over"]:
                break
            choices: list[Action] = []
            wanted = view["expecting"]["dice"] if view["expecting"]["action"] == "roll" else 0
            if wanted:
                aces = data.draw(st.integers(0, wanted), label="aces")
                rest = data.draw(
                    st.lists(st.integers(2, 6), min_size=wanted - aces, max_size=wanted - aces)
                )
                choices.append(Roll(tuple([1] * aces + rest)))
            last = tables.log(table)[-1]["action"]
            if last["type"] == "roll" and len(last["dice"]) > 1:
                choices.append(Reroll((), data.draw(st.sampled_from(["cocked", "sloppy"]))))
            if view["can_undo"]:
                choices.append(Undo())
            choices.extend(game.legal_actions(game.state_from_json(view["state"])))
            action = data.draw(st.sampled_from(choices), label="action")
            try:
                house.play(table, action, source="phone")
            except IllegalActionError:
                continue  # refused actions change nothing
        live = house.wall(table)
        standing = board.standing(tables.log(table))
        taken_back = {
            a.seq
            for a, b in itertools.pairwise(standing)
            if isinstance(a.action, Roll) and isinstance(b.action, Reroll)
        }
        assert not {r.seq for r in live} & taken_back
        assert {r.seq for r in live} <= {s.seq for s in standing}
        house.reopen()
        assert house.wall(table) == live
    finally:
        house.store.close()


# R3 -- records.py: a record of a roll entered on a phone (no photo) points to no photo


def test_a_record_of_a_roll_without_a_photo_has_no_snapshot(tmp_path: Path) -> None:
    house = House(tmp_path)
    try:
        table = _bar_dice_at_the_flop(house)
        house.tables.apply(table, FIVE_ACES, source="phone")  # typed in: no photo
        rows = house.wall(table)
        assert {"too_lucky", "hand"} <= {r.kind for r in rows}
        assert {r.snapshot_seq for r in rows} == {None}
        house.reopen()
        assert {r.snapshot_seq for r in house.wall(table)} == {None}
    finally:
        house.store.close()
