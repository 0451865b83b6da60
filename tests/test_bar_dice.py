"""Bar Dice (RULES.md 3): hand values, every phase and house rule, JSON, history, the CLI."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from math import factorial
from typing import Any

import pytest
from game_scripts import DATA, load
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.actions import (
    Action,
    Bid,
    End,
    Keep,
    Lineup,
    Reroll,
    Reveal,
    Roll,
    Stand,
    Undo,
    action_from_json,
)
from scoring.bar_dice import GAME, BarDiceState
from scoring.bar_dice.hand import hand_of, hand_value, pace_text, result_key, value_words
from scoring.bar_dice.odds import flop_counts, p_round_resets
from scoring.errors import IllegalActionError, RulesError
from scoring.games import find
from scoring.history import apply_logged, replay
from scoring.rules import describe_rules

MULTISETS = list(itertools.combinations_with_replacement(range(1, 7), 5))


def play(state: BarDiceState, actions: Iterable[Action | dict[str, Any]]) -> BarDiceState:
    for a in actions:
        state = GAME.apply(state, a if isinstance(a, Action) else action_from_json(a))
    return state


def roll(*dice: int) -> Roll:
    return Roll(tuple(dice))


def keep(*dice: int) -> Keep:
    return Keep(tuple(dice))


def sponsor(rules: dict[str, object] | None = None) -> BarDiceState:
    """Two players, straight to the sponsor phase with Ann as the hammer."""
    return GAME.apply(GAME.new(players=["Ann", "Bob"], rules=rules), Lineup(("Ann", "Bob")))


def news(state: BarDiceState) -> str:
    return " | ".join(n.text for n in state.news)


# -- hand values ------------------------------------------------------------------------------


def oracle(dice: Sequence[int]) -> tuple[int, int] | None:
    """Brute force: try every face for every ace, keep the best (count, face) (D-4, D3)."""
    if 1 not in dice:
        return None
    best: tuple[int, int] | None = None
    aces = dice.count(1)
    for faces in itertools.product(range(2, 7), repeat=aces):
        hand = [d for d in dice if d != 1] + list(faces)
        for face in range(2, 7):
            cand = (hand.count(face), face)
            best = cand if best is None or cand > best else best
    return best


@pytest.mark.parametrize(
    ("dice", "value"),
    [
        ((1, 2, 2, 2, 5), 42),
        ((1, 6, 6, 3, 4), 36),
        ((2, 2, 2, 2, 3), None),
        ((1, 1, 1, 1, 1), 56),
        ((1, 1, 2, 2, 6), 42),
        ((1, 1, 6, 6, 6), 56),
        ((1, 2, 3, 4, 5), 25),
        # ActuallyDC/bar-dice vectors (RULES.md 6d)
        ((1, 1, 3, 5, 6), 36),
        ((1, 1, 1, 5, 6), 46),
        ((1, 1, 1, 1, 2), 52),
    ],
)
def test_rules_self_test_values(dice: tuple[int, ...], value: int | None) -> None:
    assert hand_value(dice) == value


def test_every_multiset_matches_the_brute_force_reading() -> None:
    assert len(MULTISETS) == 252
    for dice in MULTISETS:
        hand, want = hand_of(dice), oracle(dice)
        if want is None:
            assert hand is None, dice
        else:
            assert hand is not None
            if dice != (1, 1, 1, 1, 1):
                assert (hand.count, hand.face) == want, dice
            assert hand.value == hand.count * 10 + hand.face


def test_values_compare_like_the_rules_for_every_pair_of_multisets() -> None:
    """Higher count first, then higher face; nothing is below every counting hand; a natural
    and a wild hand of the same count and face are equal (D3, D4)."""
    keys = {d: oracle(d) for d in MULTISETS}
    keys[(1, 1, 1, 1, 1)] = (5, 6)  # D2: five aces are 56
    values = {d: hand_value(d) for d in MULTISETS}
    for a, b in itertools.product(MULTISETS, repeat=2):
        ka, kb = keys[a], keys[b]
        va, vb = values[a], values[b]
        ra = (0, 0) if ka is None else (1, *ka)
        rb = (0, 0) if kb is None else (1, *kb)
        sa = -1 if va is None else va
        sb = -1 if vb is None else vb
        assert (ra > rb) == (sa > sb), (a, b)
        assert (ra == rb) == (sa == sb), (a, b)


def test_flop_distribution_per_7776_and_the_figures_of_rules_3_3() -> None:
    weight = {d: 120 // prod_fact(d) for d in MULTISETS}
    counts = Counter[int | None]()
    for d in MULTISETS:
        counts[hand_value(d)] += weight[d]
    assert sum(counts.values()) == 7776
    want = {None: 3125, 25: 120, 26: 480, 32: 360, 33: 390, 34: 480, 35: 630, 36: 840}
    want |= {42: 200, 43: 220, 44: 240, 45: 260, 46: 280, 56: 31}
    want |= dict.fromkeys((52, 53, 54, 55), 30)
    assert dict(counts) == want
    assert flop_counts() == want
    assert round(1 - counts[None] / 7776, 4) == 0.5981
    assert round(sum(n for v, n in counts.items() if v and v >= 42) / 7776, 3) == 0.174
    assert min(v for v in counts if v is not None) == 25


def prod_fact(d: tuple[int, ...]) -> int:
    out = 1
    for n in Counter(d).values():
        out *= factorial(n)
    return out


@pytest.mark.parametrize(
    ("players", "any_counting", "top_only"),
    [(3, 0.102, 0.072), (4, 0.190, 0.102), (5, 0.293, 0.124), (6, 0.400, 0.141), (8, 0.603, 0.163)],
)
def test_reset_odds_table_of_rules_3_3(players: int, any_counting: float, top_only: float) -> None:
    assert round(p_round_resets(players), 3) == any_counting
    assert round(p_round_resets(players, "top_only"), 3) == top_only


def test_rules_3_3_self_test_sentences() -> None:
    assert result_key(43, 1) > result_key(43, 2)  # 43 in one beats 43 in two
    assert result_key(43, 2) == result_key(43, 2)  # 43 in two v 43 in two: a roll-off
    assert result_key(43, 1, fewer_rolls_wins_tie=False) == result_key(
        43, 2, fewer_rolls_wins_tie=False
    )
    assert result_key(25, 3) > result_key(None, 1)  # any counting hand beats nothing
    assert result_key(None, 1) > result_key(None, 3)  # D8/D12: nothing in one beats it in three
    assert result_key(None, 1, nothing_in_fewer_rolls_wins=False) == result_key(
        None, 3, nothing_in_fewer_rolls_wins=False
    )
    assert result_key(None, 1, fewer_rolls_wins_tie=False) == result_key(
        None, 3, fewer_rolls_wins_tie=False
    )
    assert result_key(44, 3) > result_key(43, 1)


def test_house_rules_for_values() -> None:
    assert hand_value((2, 2, 3, 3, 4), ace_required=False) == 23
    assert hand_value((2, 2, 2, 2, 3), ace_required=False) == 42
    assert hand_value((1, 1, 1, 1, 1), five_aces_value=51) == 51
    assert hand_value((1, 1, 1, 1, 1), five_aces_value=60) == 60
    assert hand_value((6, 6, 6, 6, 1), five_aces_value=60) == 56
    assert value_words(42) == "forty two"
    assert value_words(None) == "nothing"
    assert pace_text(43, 2) == "43 in two"
    report = GAME.score_report((1, 1, 1, 1, 1), {"bardice.five_aces_value": 60})
    assert report == {"dice": [1] * 5, "counts": True, "count": 5, "face": 1, "value": 60}


def test_score_report_exact_shape() -> None:
    assert GAME.score_report((1, 2, 2, 2, 5)) == {
        "dice": [1, 2, 2, 2, 5],
        "counts": True,
        "count": 4,
        "face": 2,
        "value": 42,
    }
    nothing = GAME.score_report((2, 2, 2, 2, 3))
    assert nothing == {
        "dice": [2, 2, 2, 2, 3],
        "counts": False,
        "count": None,
        "face": None,
        "value": None,
    }
    assert "nothing" in GAME.describe_report(nothing)
    assert "too lucky" in GAME.describe_report(GAME.score_report((1, 1, 1, 1, 1)))
    with pytest.raises(ValueError, match="C3"):
        GAME.score_report((1, 2, 3))
    with pytest.raises(ValueError, match="no bid"):
        GAME.score_report((1, 2, 2, 2, 5), bid=(4, 6))


def test_house_rules_are_all_named_with_defaults() -> None:
    names = {r["name"]: r for r in describe_rules(GAME.rules_type, "bardice")}
    for option in (
        "order_ties",
        "five_aces_value",
        "ace_required",
        "all_nothing",
        "one_tie_all_tie",
        "hammer_next",
        "fewer_rolls_wins_tie",
        "nothing_in_fewer_rolls_wins",
        "rolloff_first",
        "first_farm_needs_ace",
        "too_lucky",
        "cocked_reroll_counts",
        "dropped_die",
        "all_day_elimination",
        "best_of",
        "cocked_dice",
    ):
        assert names[f"bardice.{option}"]["help"]
    assert names["bardice.one_tie_all_tie"]["default"] == "any_counting"
    with pytest.raises(RulesError):
        GAME.new(players=["A", "B"], rules={"bardice.best_of": 4})
    with pytest.raises(RulesError):
        GAME.new(players=["A", "B"], rules={"no_such_rule": True})


def test_bad_lineups() -> None:
    with pytest.raises(ValueError, match="2 to"):
        GAME.new(players=["Solo"])
    with pytest.raises(ValueError, match="distinct"):
        GAME.new(players=["Ann", "Ann"])
    with pytest.raises(ValueError, match="teams"):
        GAME.new(teams={"A": ["x"], "B": ["y"]})
    assert find("bar-dice") is GAME


# -- scripted whole games ---------------------------------------------------------------------


def test_four_players_through_every_phase() -> None:
    """Order roll with a tie, eliminations with a one-tie-all-tie reset and a nobody-counts
    re-roll, a cocked and a dropped die, too lucky, then a sponsor phase decided 2-1 with a
    roll-off; an undo and a fix on the way (tests/data/bardice_four_players.jsonl)."""
    log = load("bardice_four_players.jsonl")
    start = GAME.new(players=["Ann", "Bob", "Cy", "Dee"])
    s = start
    seen: list[str] = []
    for i, action in enumerate(log):
        s = apply_logged(GAME, start, log[:i], action)
        seen.append(news(s))
        if i == 5:
            assert s.phase == "elimination"
            assert s.round is not None
            assert s.round.roster == ("Cy", "Dee", "Ann", "Bob")
    text = "\n".join(seen)
    assert "D1: Bob and Cy tie on 5 and roll again" in text
    assert "one tie all tie (D-12): Dee and Ann match on thirty six" in text
    assert "Bob is out with forty six" in text
    assert "Ann is the hammer" in text
    assert "D5: nobody's flop counted" in text
    assert "Dee is out with thirty six" in text
    assert "sponsor phase: Cy v Ann, Cy is the hammer" in text
    assert "44 in two v 44 in two: a roll-off, Cy first" in text
    assert "turn 1: Ann wins the roll-off; a horse on Cy" in text
    assert "a horse a piece" in text
    assert s == replay(GAME, start, log)
    assert s.phase == "over"
    assert s.sponsor == "Ann"
    assert [(t.winner, t.loser) for t in s.turns] == [("Ann", "Cy"), ("Cy", "Ann"), ("Cy", "Ann")]
    assert [(x.player, x.round, x.value) for x in s.safe] == [("Bob", 1, 46), ("Dee", 2, 36)]
    assert [(p.player, p.kind) for p in s.penalties] == [("Cy", "gin"), ("Dee", "too_lucky")]
    out = GAME.outcome(s)
    assert out is not None
    assert out.winners == ("Bob", "Cy", "Dee")
    assert "Ann is the sponsor" in (out.reason)
    j = GAME.state_to_json(s)
    assert j["over"]
    assert j["winner"] is None
    assert j["horses"] == "two horses on Ann, a horse on Cy"
    assert j["scores"]["Ann"]["status"] == "sponsor"
    assert j["scores"]["Bob"]["status"] == "safe"
    assert GAME.expecting(s).action == "none"
    assert GAME.legal_actions(s) == []
    # without the fix, Cy's misread (no ace) would have ended the game 2-0 in turn 2
    fix_at = next(i for i, a in enumerate(log) if a.type == "fix")
    early = replay(GAME, start, log[:fix_at])
    assert early.phase == "over"
    assert len(early.turns) == 2


def test_all_day_elimination_top_tie_rolloff_fewer_rolls_and_too_lucky() -> None:
    rules = {"all_day_elimination": True, "one_tie_all_tie": "off"}
    start = GAME.new(players=["Ann", "Bob", "Cy"], rules=rules)
    log = load("bardice_all_day.jsonl")
    states = [start]
    for a in log:
        states.append(GAME.apply(states[-1], a))
    text = "\n".join(news(s) for s in states)
    assert "Bob goes first (lineup)" in text
    assert "D6: Bob and Cy tie for the top and roll off" in text
    assert "Cy is out with thirty three" in text
    assert "43 in one beats 43 in three" in text
    assert "Bob is too lucky" in text
    assert "roll off again" in text
    s = states[-1]
    assert s.sponsor == "Ann"
    assert dict(zip(s.players, s.turns_won, strict=True)) == {"Bob": 2, "Cy": 0, "Ann": 1}
    assert GAME.state_to_json(s)["winners"] == ["Bob", "Cy"]
    # the pace: in all-day elimination everyone after Bob had at most his two rolls
    after_bob = states[5]
    assert GAME.expecting(after_bob).text.startswith("Cy: roll 5 dice, up to 2 rolls to beat 54")


def test_all_day_elimination_stays_all_day_after_a_rolloff_puts_a_player_out() -> None:
    """D16: the round after a top-tie roll-off (D6 = off) was built from the roll-off's one
    roll, so with four players the rest of the elimination became one flop each."""
    rules = {"all_day_elimination": True, "one_tie_all_tie": "off"}
    s = GAME.new(players=["Ann", "Bob", "Cy", "Dee"], rules=rules)
    s = play(s, [Lineup(("Ann", "Bob", "Cy", "Dee"))])
    s = play(s, [roll(1, 2, 2, 2, 5), Stand(), roll(1, 2, 2, 2, 6), Stand()])  # 42 v 42
    s = play(s, [roll(2, 3, 4, 5, 6), Stand(), roll(2, 3, 4, 5, 6), Stand()])
    s = play(s, [roll(1, 6, 6, 6, 2), roll(1, 2, 3, 4, 5)])  # the roll-off: Ann is out
    assert [x.player for x in s.safe] == ["Ann"]
    assert s.round is not None
    assert (s.round.kind, s.round.roster, s.round.max_rolls) == (
        "elimination",
        ("Bob", "Cy", "Dee"),
        3,
    )
    assert GAME.expecting(s).text == "Bob: roll 5 dice, up to 3 rolls setting the pace"


# -- rules one at a time ----------------------------------------------------------------------


def test_farming_legality() -> None:
    s = play(sponsor(), [roll(2, 3, 4, 5, 6)])
    with pytest.raises(
        IllegalActionError, match="D-8: at least one ace is needed to begin farming"
    ):
        GAME.apply(s, keep(6))
    assert GAME.legal_actions(s) == [Stand()]
    s = play(s, [roll(1, 4, 4, 2, 3)])
    with pytest.raises(IllegalActionError, match="D-8: at least one ace"):
        GAME.apply(s, keep(4, 4))
    with pytest.raises(IllegalActionError, match="D-8: only dice of the last roll"):
        GAME.apply(s, keep(1, 6))
    s = play(s, [keep(1, 4)])
    assert GAME.expecting(s).dice == 3
    s = play(s, [keep(4)])  # later farms are free (D11), even from the same roll
    with pytest.raises(IllegalActionError, match=r"D-8: farmed dice .* may not be re-rolled"):
        GAME.apply(s, roll(1, 4, 4, 2, 3))
    with pytest.raises(IllegalActionError, match="C3"):
        GAME.apply(s, roll(2))
    s = play(s, [roll(4, 2)])
    assert s.round is not None
    assert s.round.go is not None
    assert s.round.go.farmed == (1, 4, 4)
    assert GAME.legal_actions(s) == [Stand()]  # three rolls taken
    with pytest.raises(IllegalActionError, match="D-7: at most 3 rolls per turn"):
        GAME.apply(s, roll(6, 6))
    with pytest.raises(IllegalActionError, match="D-7: no rolls are left"):
        GAME.apply(s, keep(4))
    s = play(s, [Stand()])
    assert "Ann: 44 in three" in news(s)


def test_the_hammer_sets_the_pace() -> None:
    s = play(sponsor(), [roll(1, 4, 4, 4, 3), roll(1, 4, 4, 4, 2), Stand()])  # 44 in two
    assert GAME.state_to_json(s)["pace"] == {
        "player": "Ann",
        "value": 44,
        "rolls": 2,
        "text": "44 in two",
    }
    s = play(s, [roll(2, 3, 4, 5, 6), roll(2, 3, 4, 5, 6)])
    with pytest.raises(
        IllegalActionError, match="D-7: the hammer took 2 rolls; you may take no more"
    ):
        GAME.apply(s, roll(1, 1, 1, 1, 1))
    assert GAME.expecting(s).action == "stand"
    s = play(s, [Stand()])
    assert "44 in two beats nothing in two" in news(s)
    assert s.turns[0].loser == "Bob"
    assert s.hammer == "Bob"  # D10: whoever rolled last brings it back


def test_hammer_without_an_ace_in_three() -> None:
    """D12: nothing in three; the opponent gets three rolls and any counting hand wins."""
    s = play(sponsor(), [roll(2, 3, 4, 5, 6), roll(2, 2, 3, 4, 6), roll(3, 3, 4, 5, 6), Stand()])
    assert "nothing in three" in news(s)
    s = play(s, [roll(2, 2, 2, 2, 2), roll(2, 3, 4, 5, 1), Stand()])
    assert s.turns[-1].winner == "Bob"
    assert "25 in two beats nothing in three" in news(s)


def test_fewer_rolls_house_rule() -> None:
    actions = [roll(2, 3, 4, 5, 6), roll(1, 3, 3, 4, 6), Stand(), roll(1, 3, 3, 5, 6), Stand()]
    s = play(sponsor(), actions)  # 33 in two v 33 in one
    assert s.turns[-1].winner == "Bob"
    s = play(sponsor({"bardice.fewer_rolls_wins_tie": "false"}), actions)
    assert not s.turns
    assert s.round is not None
    assert s.round.kind == "rolloff"
    assert s.round.roster == ("Ann", "Bob")  # D9: the turn's hammer first


def test_best_of_five() -> None:
    ann_wins = [
        [roll(1, 6, 6, 6, 6), Stand(), roll(2, 2, 3, 3, 4), Stand()],  # Ann is the hammer
        [roll(2, 2, 3, 3, 4), Stand(), roll(1, 6, 6, 6, 6), Stand()],  # Bob is the hammer
    ]
    three = play(sponsor(), ann_wins[0] + ann_wins[1])
    assert three.phase == "over"
    assert three.sponsor == "Bob"
    s = play(sponsor({"best_of": 5}), ann_wins[0] + ann_wins[1])
    assert s.phase == "sponsor"
    assert GAME.state_to_json(s)["horses"] == "two horses on Bob"
    s = play(s, ann_wins[0])
    assert s.phase == "over"
    assert s.sponsor == "Bob"
    assert len(s.turns) == 3


def test_top_only_tie_rule() -> None:
    s = play(
        GAME.new(players=["Ann", "Bob", "Cy"], rules={"one_tie_all_tie": "top_only"}),
        [
            Lineup(("Ann", "Bob", "Cy")),
            roll(1, 2, 2, 3, 4),
            roll(1, 2, 2, 3, 4),
            roll(1, 6, 6, 2, 3),
        ],
    )
    assert [x.player for x in s.safe] == ["Cy"]  # equal 32s below the top do not reset
    assert s.phase == "sponsor"
    assert s.hammer == "Bob"


def test_cocked_dice_rules() -> None:
    s = play(sponsor(), [roll(1, 4, 4, 2, 3), keep(1, 4, 4), roll(4, 6)])
    with pytest.raises(IllegalActionError, match="D-16: 5 were not in the last throw"):
        GAME.apply(s, Reroll((5,), "cocked"))
    s2 = GAME.apply(s, Reroll((6,), "cocked"))  # default: every die just rolled
    assert GAME.expecting(s2).dice == 2
    assert "re-roll 2 dice" in GAME.expecting(s2).text
    assert GAME.legal_actions(s2) == []
    with pytest.raises(IllegalActionError, match="D-16"):
        GAME.apply(s2, Stand())
    s3 = GAME.apply(s2, roll(4, 4))
    go = s3.round.go if s3.round else None
    assert go is not None
    assert go.rolls == 2
    assert go.roll == (4, 4)
    # only the offending die under the alternative rule
    t = play(sponsor({"cocked_dice": "reroll_offending"}), [roll(1, 4, 4, 2, 3)])
    t = GAME.apply(t, Reroll((3,), "stacked"))
    assert GAME.expecting(t).dice == 1
    t = GAME.apply(t, roll(4))
    assert t.round is not None
    assert t.round.go is not None
    assert sorted(t.round.go.roll) == [1, 2, 4, 4, 4]
    assert t.round.go.rolls == 1
    # counted cocked throws (D14 = true): the throw spends a roll
    u = play(sponsor({"cocked_reroll_counts": True}), [roll(1, 4, 4, 2, 3)])
    u = GAME.apply(u, Reroll((), "cocked"))
    u = GAME.apply(u, roll(1, 4, 4, 4, 3))
    assert u.round is not None
    assert u.round.go is not None
    assert u.round.go.rolls == 2
    with pytest.raises(IllegalActionError, match="nothing has been thrown"):
        GAME.apply(play(sponsor(), [roll(1, 4, 4, 2, 3), Stand()]), Reroll((), "cocked"))


def test_cocked_last_throw_of_the_game_can_still_be_rerolled() -> None:
    """A flop lands and decides at once: the roll-off throw that ends the game can still be
    taken back when the camera flags it cocked."""
    s = play(sponsor(), [roll(1, 6, 6, 6, 6), Stand(), roll(2, 2, 3, 3, 4), Stand()])
    s = play(s, [roll(1, 3, 3, 4, 5), Stand(), roll(1, 3, 3, 4, 6), Stand()])  # 33 in one each
    assert s.round is not None
    assert s.round.roster == ("Bob", "Ann")
    s = play(s, [roll(2, 2, 3, 3, 4), roll(1, 2, 2, 2, 3)])
    assert s.phase == "over"
    assert s.sponsor == "Bob"
    again = GAME.apply(s, Reroll((), "cocked"))
    assert again.phase == "sponsor"
    assert again.rethrow is not None
    assert len(again.turns) == 1
    assert GAME.expecting(again).player == "Ann"
    assert GAME.apply(again, roll(2, 2, 3, 3, 4)).round.kind == "rolloff"  # type: ignore[union-attr]


def test_five_aces_in_final_hand_rule() -> None:
    s = play(
        sponsor({"too_lucky": "five_aces_in_final_hand"}),
        [roll(1, 1, 2, 3, 4), keep(1, 1), roll(1, 1, 1)],
    )
    assert not s.penalties
    s = play(s, [Stand()])
    assert [p.kind for p in s.penalties] == ["too_lucky"]
    lights = GAME.highlights(s, Stand(), s)
    assert {h.kind for h in lights} == {"hand", "too_lucky"}
    assert lights[0].points == 56


def test_highlights_are_the_hands() -> None:
    s = sponsor()
    after = GAME.apply(play(s, [roll(1, 5, 5, 2, 3)]), Stand())
    (h,) = GAME.highlights(s, Stand(), after)
    assert (h.kind, h.player, h.points, h.dice) == ("hand", "Ann", 35, (1, 5, 5, 2, 3))
    assert GAME.highlights(s, roll(2, 2, 3, 3, 4), GAME.apply(s, roll(2, 2, 3, 3, 4))) == ()


@pytest.mark.parametrize(
    ("actions", "action", "rule"),
    [
        ([], roll(1, 2, 3, 4, 5), "D-1: the order of play is one die each"),
        ([], Bid(3, 4), "Bar Dice has no 'bid' action"),
        ([], Reveal((1, 2)), "Bar Dice has no reveal"),
        ([], Stand(), "D-3"),
        ([], keep(1), "D-8: farming is for turns of up to three rolls"),
        ([roll(3)], Lineup(("A", "B", "C")), "D-1: the order of play is set before"),
        ([Lineup(("A", "B", "C"))], roll(1, 2, 3), "C3: A rolls 5 dice now; the roll had 3"),
        ([Lineup(("A", "B", "C"))], keep(1), "D-8: farming is for turns"),
        ([Lineup(("A", "B", "C"))], Undo(), "history"),
        ([Lineup(("A", "B", "C")), roll(1, 2, 2, 2, 5)], Reroll((2,), "dropped"), None),
        ([Lineup(("A", "B", "C")), roll(1, 2, 2, 2, 5)], Reroll((), "dropped"), "D15"),
        ([End()], roll(3), "the game is over"),
    ],
)
def test_illegal_actions_name_the_rule(
    actions: list[Action], action: Action, rule: str | None
) -> None:
    s = play(GAME.new(players=["A", "B", "C"]), actions)
    if rule is None:
        after = GAME.apply(s, action)
        assert after.penalties[-1].kind == "gin"
        assert GAME.expecting(after).dice == 1
        return
    with pytest.raises(IllegalActionError, match=rule.replace("(", r"\(").replace(")", r"\)")):
        GAME.apply(s, action)


def test_end_and_outcome() -> None:
    s = GAME.apply(sponsor(), End())
    out = GAME.outcome(s)
    assert out is not None
    assert out.winners == ()
    assert "ended" in out.reason
    assert GAME.outcome(sponsor()) is None


# -- JSON, history, robustness ----------------------------------------------------------------


def roundtrip(s: BarDiceState) -> BarDiceState:
    return GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(s))))


@pytest.mark.parametrize(
    ("script", "players", "rules"),
    [
        ("bardice_four_players.jsonl", ["Ann", "Bob", "Cy", "Dee"], None),
        (
            "bardice_all_day.jsonl",
            ["Ann", "Bob", "Cy"],
            {"all_day_elimination": True, "one_tie_all_tie": "off"},
        ),
    ],
)
def test_json_round_trip_and_replay_at_every_step(
    script: str, players: list[str], rules: dict[str, object] | None
) -> None:
    start = GAME.new(players=players, rules=rules)
    log = list(replay_log(load(script)))
    live = start
    for i, action in enumerate(log):
        before = live
        live = GAME.apply(live, action)
        assert roundtrip(live) == live
        j = GAME.state_to_json(live)
        for key in ("game", "rules", "scores", "over", "winner", "expecting", "phase", "hammer"):
            assert key in j
        assert replay(GAME, start, log[: i + 1]) == live
        assert apply_logged(GAME, start, log[: i + 1], Undo()) == before


def replay_log(actions: list[Action]) -> list[Action]:
    from scoring.history import effective_actions

    return effective_actions(actions)


def test_state_from_json_rejects_garbage() -> None:
    j = GAME.state_to_json(sponsor())
    with pytest.raises(ValueError, match="not a bar-dice state"):
        GAME.state_from_json({**j, "game": "bolo"})
    with pytest.raises(ValueError, match="bad"):
        GAME.state_from_json({k: v for k, v in j.items() if k != "round"})
    with pytest.raises(ValueError, match="bad phase"):
        GAME.state_from_json({**j, "phase": "party"})


decisions = st.one_of(
    st.lists(st.integers(1, 6), min_size=1, max_size=5).map(lambda d: Roll(tuple(d))),
    st.lists(st.integers(1, 6), min_size=1, max_size=5).map(lambda d: Keep(tuple(d))),
    st.just(Stand()),
    st.lists(st.integers(1, 6), max_size=2).map(lambda d: Reroll(tuple(d), "cocked")),
    st.lists(st.integers(1, 6), min_size=1, max_size=1).map(lambda d: Reroll(tuple(d), "dropped")),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(decisions, max_size=60), st.integers(2, 4), st.data())
def test_any_input_is_applied_or_refused_cleanly(
    actions: list[Action], players: int, data: st.DataObject
) -> None:
    """Random input: every action either applies or raises IllegalActionError; the JSON
    always round-trips; what expecting asks for is accepted."""
    s = GAME.new(players=[f"P{i}" for i in range(players)])
    for action in actions:
        want = GAME.expecting(s)
        if want.action == "roll" and data.draw(st.booleans()):
            action = Roll(
                tuple(
                    data.draw(st.lists(st.integers(1, 6), min_size=want.dice, max_size=want.dice))
                )
            )
        try:
            s = GAME.apply(s, action)
        except IllegalActionError:
            continue
        assert roundtrip(s) == s
        for legal in GAME.legal_actions(s):
            GAME.apply(s, legal)


# -- the CLI ----------------------------------------------------------------------------------


def test_cli_score_and_replay(capsys: pytest.CaptureFixture[str]) -> None:
    from server.cli import main

    assert main(["score", "--game", "bar-dice", "--json", "1", "2", "2", "2", "5"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "dice": [1, 2, 2, 2, 5],
        "counts": True,
        "count": 4,
        "face": 2,
        "value": 42,
    }
    path = str(DATA / "bardice_four_players.jsonl")
    assert main(["replay", "--game", "bar-dice", "--players", "Ann,Bob,Cy,Dee", path]) == 0
    final = json.loads(capsys.readouterr().out)
    assert final["sponsor"] == "Ann"
    assert final["over"] is True
    assert final["winners"] == ["Bob", "Cy", "Dee"]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.integers(2, 5), st.sampled_from([None, "all_day"]))
def test_random_games_played_through_expecting_end_with_one_sponsor(
    seed: int, players: int, variant: str | None
) -> None:
    """Play whole games by what ``expecting`` asks and ``legal_actions`` offers, with random
    dice: every game ends with exactly one sponsor, who lost ``best_of // 2 + 1`` turns."""
    rnd = random.Random(seed)
    rules = {"all_day_elimination": True} if variant else None
    names = [f"P{i}" for i in range(players)]
    s = GAME.new(players=names, rules=rules)
    for _ in range(3000):
        if s.phase == "over":
            break
        want = GAME.expecting(s)
        legal = GAME.legal_actions(s)
        if want.action == "roll" or (want.dice and legal and rnd.random() < 0.5):
            action: Action = Roll(tuple(rnd.randint(1, 6) for _ in range(want.dice)))
        else:
            assert legal, want
            action = rnd.choice(legal)
        s = GAME.apply(s, action)
    assert s.phase == "over"
    assert s.sponsor in names
    lost = sum(t.loser == s.sponsor for t in s.turns)
    assert lost == 2
    won = s.turns_won[s.players.index(s.sponsor)]
    assert f"lost 2 turns to {won}" in GAME.state_to_json(s)["expecting"]["text"]
    assert len(s.safe) == players - 2
    assert roundtrip(s) == s


def test_cocked_order_die_and_a_cocked_flop_that_ended_a_round() -> None:
    s = play(GAME.new(players=["A", "B", "C"]), [roll(6)])
    s = GAME.apply(s, Reroll((6,), "cocked"))
    assert GAME.expecting(s).text == "A: re-roll 1 die (cocked)"
    s = play(s, [roll(2), roll(5), roll(3)])
    assert s.phase == "elimination"
    assert s.hammer == "B"
    s = play(s, [roll(1, 2, 2, 3, 4), roll(1, 3, 3, 4, 5)])
    done = GAME.apply(s, roll(1, 6, 6, 6, 2))  # A's 46 would put A out
    assert [x.player for x in done.safe] == ["A"]
    back = GAME.apply(done, Reroll((6,), "stacked"))
    assert back.safe == ()
    assert GAME.expecting(back).player == "A"
    assert back.round is not None
    assert [r.player for r in back.round.results] == ["B", "C"]


def test_d13_five_aces_with_farmed_aces_is_not_too_lucky() -> None:
    """Default too_lucky = five_aces_one_throw: only one throw of all five dice counts."""
    s = play(sponsor(), [roll(1, 1, 1, 2, 3), keep(1, 1, 1), roll(1, 1)])
    assert not s.penalties
    s = play(s, [Stand()])
    assert not s.penalties
    assert "Ann: 56 in two" in news(s)


def test_d13_five_aces_completed_by_a_cocked_die_reroll_is_not_too_lucky() -> None:
    s = play(sponsor({"cocked_dice": "reroll_offending"}), [roll(1, 1, 1, 1, 6)])
    s = play(s, [Reroll((6,), "cocked"), roll(1)])
    assert s.round is not None
    assert s.round.go is not None
    assert sorted(s.round.go.roll) == [1, 1, 1, 1, 1]
    assert not s.penalties
