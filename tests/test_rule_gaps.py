"""Issue 37 item 2: rule gaps decided, each a house rule (or a fixed meaning) with a test.

1. Bar Dice ``cocked_reroll_counts``: the re-roll is always owed; a cocked throw spends a roll
   only while one is left for the re-roll, so a hand is always the dice that stayed plus the
   re-roll, never "standing" on the dice that stayed.
2. Bar Dice ``nothing_in_fewer_rolls_wins``: "nothing in two" beats "nothing in three" (D8, D-9).
3. You Blew It ``final_turns_from``: extra turns play on the round's running score, or from zero.
4. Bolo ``final_round_ties``: tied leaders after the final turns play sudden death, or share.
5. Gords ``palifico_opener``: the player down to one die opens the palifico round.
6. Bolo with one player is a solo game that ends when the board reaches the target.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from game_scripts import B, K, R

from scoring import bar_dice, gords
from scoring.actions import Action, Bid, Call, Lineup, Reroll, Reveal, Stand
from scoring.bar_dice.state import Go
from scoring.errors import IllegalActionError, RulesError
from scoring.farkle import bolo, you_blew_it
from scoring.history import replay
from scoring.rules import describe_rules

BOLO_ROLL = R(2, 2, 3, 3, 4)
BAR_NOTHING = R(2, 2, 3, 3, 4)


def _play(game: Any, state: Any, actions: Iterable[Action]) -> Any:
    for action in actions:
        state = game.apply(state, action)
    return state


def _described(game: Any) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in describe_rules(game.rules_type, game.rules_prefix)}


# -- 1. Bar Dice: a counted cocked throw ------------------------------------------------------


def _sponsor(**rules: object) -> bar_dice.BarDiceState:
    """Ann (the hammer) v Bob, straight to the sponsor phase."""
    s = bar_dice.GAME.new(players=["Ann", "Bob"], rules=rules)
    return bar_dice.GAME.apply(s, Lineup(("Ann", "Bob")))


def _news(state: bar_dice.BarDiceState) -> str:
    return " | ".join(n.text for n in state.news)


def _go(state: bar_dice.BarDiceState) -> Go:
    assert state.round is not None
    assert state.round.go is not None
    return state.round.go


def test_d14_a_counted_cocked_last_roll_is_still_re_rolled() -> None:
    """No roll is left to spend: the re-roll stands in for the third roll, and the hand is
    five dice (the farmed 1 4 4 plus the re-roll), not the farmed dice alone."""
    g = bar_dice.GAME
    s = _play(g, _sponsor(cocked_reroll_counts=True), [R(1, 4, 4, 2, 3), K(1, 4, 4)])
    s = _play(g, s, [R(4, 6), R(2, 3), Reroll((), "cocked")])
    assert s.rethrow is not None
    assert (g.expecting(s).action, g.expecting(s).dice) == ("roll", 2)
    assert "roll 3 of 3, so the re-roll replaces it (D14)" in _news(s)
    with pytest.raises(IllegalActionError, match="D-16"):
        g.apply(s, Stand())
    s = g.apply(s, R(4, 4))
    assert _go(s).rolls == 3
    assert "Ann: 54 in three (1 4 4 4 4)" in _news(g.apply(s, Stand()))


def test_d14_a_counted_cocked_throw_with_a_roll_left_spends_it() -> None:
    """Only the cocked die is re-rolled (reroll_offending); the throw was roll 1, the re-roll
    is roll 2, and the hand is the four dice that stayed plus the re-rolled one."""
    g = bar_dice.GAME
    s = _sponsor(cocked_reroll_counts=True, cocked_dice="reroll_offending")
    s = _play(g, s, [R(1, 4, 4, 2, 3), Reroll((3,), "cocked")])
    assert "the cocked throw counts as roll 1 of 3 (D14)" in _news(s)
    assert _go(s).rolls == 1
    assert g.expecting(s).dice == 1
    s = g.apply(s, R(4))
    assert _go(s).rolls == 2
    assert sorted(_go(s).roll) == [1, 2, 4, 4, 4]


def test_d14_an_opponent_held_to_one_roll_re_rolls_a_cocked_one() -> None:
    """Bob may take one roll (Ann stood in one): his cocked throw cannot spend a roll he does
    not have, so it is re-rolled in its place rather than leaving him "nothing in one"."""
    g = bar_dice.GAME
    s = _play(g, _sponsor(cocked_reroll_counts=True), [R(1, 6, 6, 2, 3), Stand()])
    s = _play(g, s, [R(1, 5, 5, 2, 3), Reroll((), "cocked")])
    assert g.expecting(s).dice == 5
    s = _play(g, s, [R(1, 5, 5, 5, 2), Stand()])
    assert s.turns[0].winner == "Bob"
    assert "45 in one beats 36 in one" in s.turns[0].text


def test_d14_the_default_never_counts_a_cocked_throw() -> None:
    g = bar_dice.GAME
    s = _play(g, _sponsor(), [R(1, 4, 4, 2, 3), Reroll((), "cocked"), R(1, 4, 4, 4, 3)])
    assert _go(s).rolls == 1
    help_text = _described(g)["bardice.cocked_reroll_counts"]["help"]
    assert "re-rolled in its place" in help_text


# -- 2. Bar Dice: nothing in two v nothing in three --------------------------------------------


def _nothing_turn(**rules: object) -> bar_dice.BarDiceState:
    """Ann: nothing in three; Bob stands on nothing after one roll."""
    g = bar_dice.GAME
    ann = [BAR_NOTHING, BAR_NOTHING, BAR_NOTHING, Stand()]
    s: bar_dice.BarDiceState = _play(g, _sponsor(**rules), [*ann, BAR_NOTHING, Stand()])
    return s


def test_d8_nothing_in_fewer_rolls_beats_nothing_in_more() -> None:
    s = _nothing_turn()
    assert s.round is not None
    assert s.round.kind == "sponsor"  # no roll-off: the turn is decided
    assert s.turns[0].winner == "Bob"
    assert s.turns[0].text == "nothing in one beats nothing in three"


def test_d9_nothing_against_nothing_in_as_many_rolls_rolls_off() -> None:
    g = bar_dice.GAME
    s = _play(g, _sponsor(), [BAR_NOTHING, Stand(), BAR_NOTHING, Stand()])
    assert s.round is not None
    assert s.round.kind == "rolloff"
    assert not s.turns


@pytest.mark.parametrize(
    "rules", [{"nothing_in_fewer_rolls_wins": False}, {"fewer_rolls_wins_tie": False}]
)
def test_d8_off_or_nothing_exempt_every_nothing_rolls_off(rules: dict[str, object]) -> None:
    s = _nothing_turn(**rules)
    assert s.round is not None
    assert s.round.kind == "rolloff"
    assert "D-9: nothing in three v nothing in one: a roll-off, Ann first" in _news(s)


def test_d8_nothing_rule_is_declared() -> None:
    rule = _described(bar_dice.GAME)["bardice.nothing_in_fewer_rolls_wins"]
    assert rule["default"] is True
    assert "nothing in two" in rule["help"]
    with pytest.raises(RulesError, match="true or false"):
        bar_dice.GAME.new(players=["A", "B"], rules={"nothing_in_fewer_rolls_wins": "maybe"})


# -- 3. You Blew It: where the extra turns of one_more_turn_each start -------------------------


def _ybi(**rules: object) -> you_blew_it.State:
    teams = {"A": ["Ann", "Al"], "B": ["Bob", "Bo"]}
    return you_blew_it.GAME.new(
        teams=teams, rules={"target": 1000, "end_rule": "one_more_turn_each", **rules}
    )


def test_y11_extra_turns_from_zero_keep_the_points_that_reached_the_target() -> None:
    g = you_blew_it.GAME
    s = _play(g, _ybi(final_turns_from="zero"), [R(1, 1, 1, 2, 3, 4), K(1, 1, 1), B])
    s = _play(g, s, [R(2, 2, 3, 3, 4, 6)])  # Al blows: only his own (empty) turn is lost
    s = _play(g, s, [R(5, 5, 5, 2, 3, 4), K(5, 5, 5), B])  # Bob 500
    s = _play(g, s, [R(1, 2, 3, 4, 6, 6), K(1), R(2, 2, 3, 3, 4)])  # Bo blows: Bob keeps 500
    outcome = g.outcome(s)
    assert outcome is not None
    assert outcome.winner == "A"
    assert g.state_to_json(s)["scores"] == {"A": 1000, "B": 500}


def test_y11_extra_turns_play_on_the_round_score_by_default() -> None:
    """The default keeps YBI-8: a blow in an extra turn still wipes the teammates' earlier
    points of the round, the reaching turn included."""
    g = you_blew_it.GAME
    s = _play(g, _ybi(), [R(1, 1, 1, 2, 3, 4), K(1, 1, 1), B])
    s = _play(g, s, [R(2, 2, 3, 3, 4, 6)])  # Al blows: Ann's 1000 is wiped
    s = _play(g, s, [R(5, 5, 5, 2, 3, 4), K(5, 5, 5), B])
    s = _play(g, s, [R(1, 2, 3, 4, 6, 6), K(1), R(2, 2, 3, 3, 4)])  # Bo blows: Bob's 500 too
    view = g.state_to_json(s)
    assert view["scores"] == {"A": 0, "B": 0}
    assert not view["over"]  # 0 v 0: Y12 plays a full extra round
    assert view["final_turns"] == 4


def test_y11_final_turns_from_is_declared() -> None:
    rule = _described(you_blew_it.GAME)["ybi.final_turns_from"]
    assert (rule["default"], rule["choices"]) == ("round_score", ["round_score", "zero"])
    with pytest.raises(RulesError, match="must be one of"):
        _ybi(final_turns_from="half")


# -- 4. Bolo: tied leaders after the final round -----------------------------------------------


def _bolo(players: list[str], **rules: object) -> bolo.State:
    return bolo.GAME.new(players=players, rules={"target": 1000, "final_round": True, **rules})


TO_1000 = [R(1, 1, 1, 2, 3), K(1, 1, 1), B]


def test_b11_tied_leaders_play_sudden_death_among_themselves() -> None:
    g = bolo.GAME
    s = _play(g, _bolo(["Ann", "Bob", "Cy"]), [*TO_1000, *TO_1000, BOLO_ROLL])
    assert g.outcome(s) is None  # Ann and Bob tie on 1000 after the final turns
    assert g.state_to_json(s)["tied"] == ["Ann", "Bob"]
    assert g.expecting(s).player == "Ann"
    assert "sudden death, tied at 1000" in g.expecting(s).text
    s = _play(g, s, [BOLO_ROLL, BOLO_ROLL])  # both BOLO: still tied, Cy never plays again
    assert g.outcome(s) is None
    assert g.expecting(s).player == "Ann"
    assert g.state_from_json(g.state_to_json(s)) == s
    s = _play(g, s, [BOLO_ROLL, R(5, 5, 5, 2, 3), K(5, 5, 5), B])  # Bob takes 500
    outcome = g.outcome(s)
    assert outcome is not None
    assert outcome.winners == ("Bob",)
    assert outcome.reason == "Bob won the sudden death with 1500 (B11)"
    assert [t.player for t in s.turns] == ["Ann", "Bob", "Cy", "Ann", "Bob", "Ann", "Bob"]


def test_b11_tied_leaders_may_share_the_win() -> None:
    g = bolo.GAME
    s = _play(g, _bolo(["Ann", "Bob"], final_round_ties="shared"), [*TO_1000, *TO_1000])
    outcome = g.outcome(s)
    assert outcome is not None
    assert outcome.winners == ("Ann", "Bob")
    assert "Ann and Bob share the win on 1000" in outcome.reason


def test_b11_sudden_death_replays_from_the_log() -> None:
    g = bolo.GAME
    log = [*TO_1000, *TO_1000, BOLO_ROLL, R(5, 5, 5, 2, 3), K(5, 5, 5), B]
    s = replay(g, _bolo(["Ann", "Bob"]), log)
    outcome = g.outcome(s)
    assert outcome is not None
    assert outcome.winner == "Bob"


def test_b11_final_round_ties_is_declared() -> None:
    rule = _described(bolo.GAME)["bolo.final_round_ties"]
    assert (rule["default"], rule["choices"]) == ("sudden_death", ["sudden_death", "shared"])


# -- 5. Gords: who opens a palifico round ------------------------------------------------------


def _down_to_one_as_bidder(**rules: object) -> gords.GordsState:
    """Bob loses four dice, the last as the bidder whose bid Ann called: Ann is the caller."""
    g = gords.GAME
    s: gords.GordsState = g.new(players=["Ann", "Bob"], rules={"palifico": True, **rules})
    met, missed = (2,), (3,)
    for n, bidder, shown in ((10, "Ann", met), (9, "Bob", missed), (8, "Ann", met)):
        s = _play(g, s, [Bid(1, 2, bidder), Call()])
        s = g.apply(s, Reveal(shown + (3,) * (n - 1)))
    assert s.dice == (5, 2)
    s = _play(g, s, [Bid(1, 2, "Bob"), Call("Ann"), Reveal((3,) * 7)])
    assert s.dice == (5, 1)
    assert s.results[-1].caller == "Ann"
    assert s.palifico
    return s


def test_g10_the_player_down_to_one_die_opens_the_palifico_round() -> None:
    s = _down_to_one_as_bidder()
    assert (s.starter, s.turn) == ("Bob", "Bob")
    assert "Bob opens round 5 (palifico)" in s.news
    assert gords.GAME.expecting(s).player == "Bob"


def test_g10_palifico_opener_may_follow_next_starter() -> None:
    s = _down_to_one_as_bidder(palifico_opener="next_starter")
    assert s.starter == "Ann"  # G7: the caller


def test_g10_the_round_after_palifico_goes_back_to_next_starter() -> None:
    g = gords.GAME
    s = _down_to_one_as_bidder()
    s = _play(g, s, [Bid(1, 3), Call(), Reveal((3,) + (2,) * 5)])  # met: Ann (caller) loses
    assert s.dice == (4, 1)
    assert not s.palifico
    assert s.starter == "Ann"  # the caller again


def test_g10_palifico_opener_is_declared() -> None:
    rule = _described(gords.GAME)["gords.palifico_opener"]
    assert (rule["default"], rule["choices"]) == (
        "palifico_player",
        ["palifico_player", "next_starter"],
    )


# -- 6. Bolo with one player: a solo game ------------------------------------------------------


def test_one_player_bolo_ends_when_the_board_reaches_the_target() -> None:
    g = bolo.GAME
    s = _play(g, g.new(players=["Ann"], rules={"target": 2000}), [*TO_1000[:2], R(5, 2), K(5)])
    s = _play(g, s, [B])
    assert g.outcome(s) is None
    assert g.expecting(s).player == "Ann"  # every turn is hers
    s = _play(g, s, TO_1000)
    outcome = g.outcome(s)
    assert outcome is not None
    assert outcome.winners == ("Ann",)
    assert outcome.reason == "Ann reached 2000 with 2050 (solo game, in 2 turns)"


def test_one_player_bolo_with_a_final_round_still_ends() -> None:
    """Nobody is left to give a final turn: the solo game ends at once (it never did)."""
    g = bolo.GAME
    s = _play(g, _bolo(["Ann"]), TO_1000)
    outcome = g.outcome(s)
    assert outcome is not None
    assert outcome.winners == ("Ann",)
    assert "solo game, in 1 turn" in outcome.reason
    with pytest.raises(IllegalActionError, match="B-7: the game is over"):
        g.apply(s, BOLO_ROLL)


def test_bolo_without_players_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one named player"):
        bolo.GAME.new(players=[])
