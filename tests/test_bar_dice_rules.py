"""Bar Dice: the rules one at a time -- farming, the pace, ties, cocked dice, too lucky."""

from __future__ import annotations

import pytest
from bar_dice_rig import keep, news, play, roll, sponsor

from scoring.actions import Action, Bid, End, Lineup, Reroll, Reveal, Stand, Undo
from scoring.bar_dice import GAME
from scoring.errors import IllegalActionError

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
