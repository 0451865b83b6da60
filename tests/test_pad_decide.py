"""The pad's decisions as pure functions (:mod:`server.pad.decide`): a settled throw's
reading, against a real game's state, to game actions and a notice for the table."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pad_rig import applied, die, reading

from scoring import games
from scoring.actions import Bank, Bid, Call, Keep, Reroll, Roll, Stand
from scoring.errors import IllegalActionError
from server.pad.decide import UNSURE_FLAG, NoticeKind, decide, dice_wanted, split_standing
from vision.reading import DieFlag, Reading

# -- the decisions, as pure functions ----------------------------------------------------------


def test_a_clean_roll_is_rolled() -> None:
    game = games.find("you-blew-it")
    state = game.new(teams={"A": ["Ann"], "B": ["Bob"]})
    d = decide(game, state, reading(1, 5, 2, 3, 4, 6))
    assert d.actions == (Roll((1, 5, 2, 3, 4, 6)),)
    assert d.notice is None


def test_cocked_die_bolo_rerolls_only_it_and_leaves_the_rest_standing() -> None:
    game = games.find("bolo")
    state = game.new(players=["Ann"])
    d = decide(game, state, reading(1, 5, 2, 3, 3, flags={2: (DieFlag.COCKED,)}))
    assert d.actions == (Roll((1, 5, 2, 3, 3)), Reroll((2,), "cocked"))
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.REROLL
    assert [x.value for x in d.standing] == [1, 5, 3, 3]
    after = applied("bolo", state, d)
    assert game.expecting(after).dice == 1
    # the re-thrown die lands; the four standing ones have not moved
    again = Reading((*d.standing, die(6, 300.0, 300.0)), (640, 480))
    d2 = decide(game, after, again, standing=d.standing)
    assert d2.actions == (Roll((6,)),)


def test_a_re_roll_on_unsure_flags_says_so() -> None:
    """Every offending die flagged under ``UNSURE_FLAG`` (a confidence the flags gave): the
    re-roll stands, and the notice asks the table to check the photo; one sure flag, or a die
    off the pad (the pad's outline decides that), and it does not."""
    game = games.find("bolo")
    state = game.new(players=["Ann"])

    def with_flags(*marks: tuple[DieFlag, float]) -> Reading:
        dice = list(reading(1, 5, 2, 3, 3).dice)
        flags = frozenset(f for f, _ in marks)
        dice[2] = replace(dice[2], flags=flags, flag_confidence=tuple(sorted(marks)))
        return Reading(tuple(dice), (640, 480))

    hedge = "the camera is not sure"
    unsure = decide(game, state, with_flags((DieFlag.COCKED, UNSURE_FLAG - 0.01)))
    assert unsure.actions == (Roll((1, 5, 2, 3, 3)), Reroll((2,), "cocked"))
    assert unsure.notice is not None
    assert hedge in unsure.notice.text
    for marks in (
        ((DieFlag.COCKED, UNSURE_FLAG),),
        ((DieFlag.COCKED, 0.99), (DieFlag.STACKED, 0.8)),  # leaning on a die: cocked for sure
    ):
        sure = decide(game, state, with_flags(*marks))
        assert sure.notice is not None
        assert hedge not in sure.notice.text
    dice = list(with_flags((DieFlag.COCKED, 0.85)).dice)
    dice[2] = replace(dice[2], flags=dice[2].flags | {DieFlag.OFF_PAD})  # cocked off the pad
    off = decide(game, state, Reading(tuple(dice), (640, 480)))
    assert off.notice is not None
    assert "sloppy" in off.notice.text
    assert hedge not in off.notice.text


def test_bolo_house_rule_reroll_all_and_bar_dice_default() -> None:
    bolo = games.find("bolo")
    state = bolo.new(players=["Ann"], rules={"bolo.sloppy_dice": "reroll_all_just_rolled"})
    d = decide(bolo, state, reading(1, 5, 2, 3, 3, flags={0: (DieFlag.OFF_PAD,)}))
    assert d.actions[-1] == Reroll((), "sloppy")
    assert d.standing == ()
    assert d.notice is not None
    assert "re-roll all 5 dice" in d.notice.text
    assert bolo.expecting(applied("bolo", state, d)).dice == 5

    bar = games.find("bar-dice")
    s = bar.new(players=["A", "B"])
    for dice in ((6,), (2,)):
        s = bar.apply(s, Roll(dice))
    d = decide(bar, s, reading(1, 4, 4, 2, 3, flags={1: (DieFlag.STACKED,)}))
    assert d.actions == (Roll((1, 4, 4, 2, 3)), Reroll((), "stacked"))  # D-16: all of them
    assert bar.expecting(applied("bar-dice", s, d)).dice == 5


def test_the_bolo_order_roll_is_read_one_die_at_a_time() -> None:
    bolo = games.find("bolo")
    s = bolo.new(players=["Ann", "Bob"], rules={"bolo.start_order": "roll"})
    d = decide(bolo, s, reading(3))
    assert d.actions == (Roll((3,)),)
    s = applied("bolo", s, d)
    d = decide(bolo, s, reading(5, flags={0: (DieFlag.COCKED,)}))  # Bob's die is cocked
    assert d.actions == (Roll((5,)), Reroll((5,), "cocked"))
    s = applied("bolo", s, d)
    assert bolo.expecting(s).player == "Bob"  # throws it again
    s = applied("bolo", s, decide(bolo, s, reading(6)))
    e = bolo.expecting(s)
    assert (e.player, e.dice) == ("Bob", 5)  # his 6 beats Ann's 3: he starts


def test_too_few_dice_is_a_sloppy_reroll_without_an_action() -> None:
    game = games.find("bolo")
    state = game.new(players=["Ann"])
    d = decide(game, state, reading(1, 5, 2, 3))
    assert d.actions == ()
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.MISSING
    assert d.notice.text.startswith("sloppy dice:")
    assert "missing 1 die" in d.notice.text


def test_a_missing_die_in_bar_dice_is_rethrown_alone() -> None:
    bar = games.find("bar-dice")
    s = bar.new(players=["A", "B"])
    for dice in ((6,), (2,)):
        s = bar.apply(s, Roll(dice))
    d = decide(bar, s, reading(1, 4, 4, 2))  # D15: a dropped die is re-rolled by itself
    assert d.actions == ()
    assert d.notice is not None
    assert "re-roll the missing 1 die" in d.notice.text


def test_unreadable_dice_ask_for_confirmation() -> None:
    game = games.find("bolo")
    state = game.new(players=["Ann"])
    d = decide(game, state, reading(1, None, 2, 3, 3))
    assert d.actions == ()
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.CONFIRM
    assert d.notice.dice == (1, None, 2, 3, 3)
    # unreadable AND cocked: say re-roll, log nothing (the next throw answers it)
    d = decide(game, state, reading(1, None, 2, 3, 3, flags={1: (DieFlag.COCKED,)}))
    assert d.actions == ()
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.REROLL


def test_an_unread_die_is_asked_with_its_guesses_and_its_crop_of_the_photo() -> None:
    """The phone's one-tap answer: each unread die's place among the dice read, its two best
    values and its square of the photo (twice its side, as fractions of the frame, so a
    JPEG halved to fit the snapshot limit is cut in the same place)."""
    game = games.find("bolo")
    state = game.new(players=["Ann"])
    read = reading(1, None, 2, 3, None)
    guesses = ((5, 0.61), (6, 0.32))
    dice = (read.dice[0], replace(read.dice[1], candidates=guesses), *read.dice[2:])
    d = decide(game, state, Reading(dice, (640, 480)))
    notice = d.notice
    assert notice is not None
    assert notice.kind is NoticeKind.CONFIRM
    assert notice.wanted == 5  # answered, the dice read make the roll
    first, last = notice.asked
    assert (first.index, first.candidates) == (1, guesses)
    assert first.box == pytest.approx((20 / 640, 80 / 480, 40 / 640, 40 / 480))  # centre 40, 100
    assert (last.index, last.candidates) == (4, ())  # nothing to offer: the phone shows all six
    assert last.box == pytest.approx((140 / 640, 80 / 480, 40 / 640, 40 / 480))
    body = json.loads(json.dumps(notice.to_json()))
    assert body["wanted"] == 5
    assert body["asked"][0] == {
        "index": 1,
        "candidates": [[5, 0.61], [6, 0.32]],
        "box": [0.0312, 0.1667, 0.0625, 0.0833],
    }
    # a die at the frame's corner: its square slides inside the frame
    corner = Reading((die(None, 632.0, 5.0), *reading(1, 2, 3, 4).dice), (640, 480))
    notice = decide(game, state, corner).notice
    assert notice is not None
    assert notice.asked[0].box == pytest.approx((600 / 640, 0.0, 40 / 640, 40 / 480))
    # every die read: nothing asked, nothing in the JSON
    clean = decide(game, state, reading(1, 5, None, 3, 3, flags={2: (DieFlag.COCKED,)}))
    assert clean.notice is not None
    assert clean.notice.kind is NoticeKind.REROLL
    assert (clean.notice.asked, clean.notice.wanted) == ((), 0)
    assert {"asked", "wanted"}.isdisjoint(clean.notice.to_json())


def test_a_throw_one_die_off_says_how_many_dice_the_phone_may_log() -> None:
    """One die too many (a glare read as a die) or too few (a die the camera missed): the
    notice stays as it was, and says the roll the phone may log instead; further off, or
    when a keep must come first, it says nothing of the kind."""
    game = games.find("bolo")
    state = game.new(players=["Ann"])
    more = decide(game, state, reading(1, 5, 2, 3, 3, 4)).notice
    assert more is not None
    assert (more.kind, more.wanted, more.asked) == (NoticeKind.COUNT, 5, ())
    fewer = decide(game, state, reading(1, None, 3, 3)).notice
    assert fewer is not None
    assert fewer.kind is NoticeKind.MISSING
    assert fewer.text.startswith("sloppy dice:")  # the sloppy re-roll is still said
    assert fewer.wanted == 5
    assert [a.index for a in fewer.asked] == [1]  # an unread die among them is asked too
    for far in (reading(1, 5, 2), reading(1, 5, 2, 3, 3, 4, 4)):
        notice = decide(game, state, far).notice
        assert notice is not None
        assert notice.wanted == 0
        assert "wanted" not in notice.to_json()
    after = game.apply(state, Roll((1, 5, 2, 3, 3)))  # a keep is due before the next throw
    notice = decide(game, after, reading(4, 4, 6, 2, 2, 3)).notice
    assert notice is not None
    assert (notice.kind, notice.wanted) == (NoticeKind.COUNT, 0)


def test_keep_inferred_when_clearly_best_else_asked() -> None:
    game = games.find("bolo")
    state = game.apply(game.new(players=["Ann"]), Roll((1, 5, 2, 3, 3)))
    d = decide(game, state, reading(4, 4, 6, 2))  # one kept: the 1 (100) beats the 5 (50)
    assert d.actions == (Keep((1,)), Roll((4, 4, 6, 2)))
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.INFERRED

    bar = games.find("bar-dice")
    s = bar.new(players=["A", "B"])
    for dice in ((6,), (2,), (1, 2, 3, 5, 6)):
        s = bar.apply(s, Roll(dice))
    d = decide(bar, s, reading(4, 4))  # three farmed: 1 6 x all make "26": ask
    assert d.actions == ()
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.KEEP
    assert set(d.notice.options) == {(1, 2, 6), (1, 3, 6), (1, 5, 6)}
    d = decide(bar, s, reading(4, 4, 4))  # two farmed: the ace and the 6 ("26") are best
    assert d.actions == (Keep((1, 6)), Roll((4, 4, 4)))


def test_wrong_counts_and_other_moments_are_notices() -> None:
    game = games.find("bolo")
    state = game.apply(game.new(players=["Ann"]), Roll((1, 5, 2, 3, 3)))
    d = decide(game, state, reading(4, 4, 6, 2, 2, 3))
    assert d.actions == ()
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.COUNT
    gords = games.find("gords")
    s = gords.new(players=["A", "B"])
    d = decide(gords, s, reading(1, 2, 3))
    assert d.actions == ()
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.IGNORED


def test_dice_wanted_for_the_next_throw() -> None:
    game = games.find("bolo")
    state = game.new(players=["Ann"])
    assert dice_wanted(game, state) == 5
    state = game.apply(state, Roll((1, 5, 2, 3, 3)))
    assert dice_wanted(game, state) == 3  # after the best keep, 1 5 (150)
    gords = games.find("gords")
    assert dice_wanted(gords, gords.new(players=["A", "B"])) is None  # bidding


def test_standing_dice_that_moved_mean_a_full_rethrow() -> None:
    standing = (die(1, 10.0), die(5, 60.0))
    assert split_standing((die(5, 62.0), die(1, 11.0), die(3, 200.0)), standing) == (
        (die(3, 200.0),),
        (die(1, 11.0), die(5, 62.0)),
    )
    assert split_standing((die(1, 10.0), die(5, 120.0), die(3, 200.0)), standing) is None


flag_sets = st.sampled_from([(), (), (), (DieFlag.COCKED,), (DieFlag.OFF_PAD,), (DieFlag.STACKED,)])
dice_st = st.lists(
    st.tuples(st.one_of(st.integers(1, 6), st.just(None)), flag_sets), min_size=0, max_size=7
)


@settings(max_examples=40, deadline=None)
@given(
    game_name=st.sampled_from(["bolo", "you-blew-it", "bar-dice"]),
    throws=st.lists(dice_st, min_size=1, max_size=8),
)
def test_decisions_are_always_legal(game_name: str, throws: list[list[Any]]) -> None:
    """Whatever the camera sees, the decision never raises and its actions always apply."""
    game = games.find(game_name)
    if game.uses_teams:
        state = game.new(teams={"A": ["Ann"], "B": ["Bob"]})
    else:
        state = game.new(players=["Ann", "Bob"])
    for throw in throws:
        read = Reading(
            tuple(die(v, 40.0 * i, 100.0, *f) for i, (v, f) in enumerate(throw)), (640, 480)
        )
        d = decide(game, state, read)
        try:
            state = applied(game_name, state, d)
        except IllegalActionError as exc:  # pragma: no cover - the property under test
            raise AssertionError(f"{d} did not apply: {exc}") from exc
        rolls = [a for a in d.actions if isinstance(a, Roll)]
        assert len(rolls) <= 1
        if rolls:
            assert all(v is not None for v, _ in throw)
        if d.actions and not isinstance(d.actions[-1], Reroll):
            assert d.notice is None or d.notice.kind in (NoticeKind.INFERRED, NoticeKind.CONFIRM)
        assert not any(isinstance(a, Bank | Stand) for a in d.actions)  # never banks for you


# P5 -- pad/decide.py: a cocked die at a Gords reveal is checked on the phone, never logged


def test_a_cocked_die_at_a_gords_reveal_asks_the_phone() -> None:
    gords = games.find("gords")
    s = gords.new(players=["A", "B"])
    s = gords.apply(gords.apply(s, Bid(2, 3)), Call())
    exp = gords.expecting(s)
    assert exp.action == "reveal"
    values = [3, 4, 2, 6, 5, 1, 3, 2, 6, 4][: exp.dice]
    d = decide(gords, s, reading(*values, flags={0: (DieFlag.COCKED,)}))
    assert d.actions == ()
    assert d.notice is not None
    assert d.notice.kind is NoticeKind.CONFIRM


# P8 -- pad/decide.py split_standing: a standing die showing another face was disturbed


def test_a_standing_die_that_turned_over_means_a_full_rethrow() -> None:
    standing = (die(1, 10.0), die(5, 60.0))
    # the 1 is where it was but now shows 4: it was knocked, the whole pad was thrown again
    assert split_standing((die(4, 10.0), die(5, 60.0), die(3, 200.0)), standing) is None
