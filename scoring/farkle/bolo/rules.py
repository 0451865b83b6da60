"""Bolo's house rules and what follows from them alone: the combination table, the minimum.

Every ambiguity of RULES.md 2.2 (B1-B17) is a field of :class:`HouseRules` with its default;
:func:`table` is the B-3 combination table those rules give (B2, B4-B6), :func:`minimum` the
least turn tallied on a board (B10), :func:`cocked_rule` what a sloppy-die re-roll takes back
(B16). The coach plans with the same table and minimums.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from scoring.farkle.combos import Combo, ComboTable, NonScoring
from scoring.farkle.turn import RuleIds, words
from scoring.rules import house_rule

DICE = 5

IDS = RuleIds(keep="B-2", hot="B-4", cocked="B-9/B16", cocked_option="bolo.sloppy_dice")


@dataclass(frozen=True)
class HouseRules:
    """Every Bolo ambiguity of RULES.md 2.2 (B1-B17) with its default."""

    start_order: str = house_rule(
        "lineup",
        "B-1: who starts: the players as listed or set with a line-up (the table rolls for it "
        "off the books), or one die each on the pad, highest starts, clockwise from there",
        ("lineup", "roll"),
    )
    start_order_ties: str = house_rule(
        "reroll", "B1: tied start rolls: the tied players roll again", ("reroll",)
    )
    four_of_a_kind: str = house_rule(
        "double_triple",
        "B2: four of a kind = 2 x the triple (four 1s 2000), or triple plus a single",
        ("double_triple", "triple_plus_single"),
    )
    five_ones_wins_instantly: bool = house_rule(False, "B3: keeping five 1s wins the game at once")
    non_scoring_die: str = house_rule(
        "face_count_lt_3",
        "B4: a non-scoring die (to stop) is a 2/3/4/6 showing fewer than three times, or any "
        "2/3/4/6 not counted",
        ("face_count_lt_3", "player_choice"),
    )
    all_scoring_roll_takes_all: bool = house_rule(
        True, "B5: when every rolled die scores, all must be kept and five rolled again"
    )
    full_house_distinct_pair: bool = house_rule(
        True, "B6: a full house needs a pair of another face (five of a kind is not one)"
    )
    below_min_may_pass: bool = house_rule(
        True, "B9: a player below the minimum may stop; the turn scores nothing"
    )
    entry_min: int = house_rule(650, "B10: points in one turn to get on the board")
    take_min: int = house_rule(350, "B10: minimum turn to take once on the board")
    take_min_7000: int = house_rule(750, "B10: minimum turn with a board of 7000 or more")
    take_min_9000: int = house_rule(1000, "B10: minimum turn with a board of 9000 or more")
    target: int = house_rule(10000, "B-7/B11: board score that wins", range=(50, 1000000))
    final_round: bool = house_rule(
        False, "B11: after a player reaches the target every other player has one more turn"
    )
    final_round_ties: str = house_rule(
        "sudden_death",
        "B11 (final_round): players tied for the top board after the final turns each take one "
        "more turn, in seating order, until one of them leads (sudden_death), or share the win "
        "(shared)",
        ("sudden_death", "shared"),
    )
    hits_on: str = house_rule(
        "banked_turn",
        "B12: bong hits count on banked, tallied turns only, or on every turn total",
        ("banked_turn", "turn_total_even_if_bolo"),
    )
    yahtzee_clause: bool = house_rule(
        True, "B13: kept three/four of a 2/3/4/6 and the rest rolled the same face: re-roll them"
    )
    yahtzee_rerolls: int = house_rule(1, "B13: Yahtzee-clause re-rolls per cycle (0 = unlimited)")
    van_halen: bool = house_rule(
        True, "B14: a board of exactly van_halen_score earns a bonus bong hit"
    )
    van_halen_score: int = house_rule(5150, "B14: the Van Halen board score")
    high_roller_min: int = house_rule(5000, "B15: a roll (or turn) worth this signs the pad")
    high_roller_on: str = house_rule(
        "roll",
        "B15: what must be worth high_roller_min to sign the pad: a single roll, or a banked "
        "turn's total",
        ("roll", "turn_total"),
    )
    sloppy_dice: str = house_rule(
        "reroll_offending",
        "B16/C1: off-pad or cocked dice: re-roll only them, or every die just rolled",
        ("reroll_offending", "reroll_all_just_rolled"),
    )
    rule_overrides: str = house_rule(
        "per_game", "B17: a vote changes a rule for the rest of this game only", ("per_game",)
    )


@lru_cache(maxsize=64)
def table(rules: HouseRules = HouseRules()) -> ComboTable:
    """The combination table of B-3 under these house rules (B2, B4-B6)."""
    combos = [Combo.single(1, 100), Combo.single(5, 50)]
    for face in range(1, 7):
        triple = 1000 if face == 1 else 100 * face
        combos.append(Combo.of_a_kind(face, 3, triple))
        if rules.four_of_a_kind == "double_triple":
            combos.append(Combo.of_a_kind(face, 4, 2 * triple))
        combos.append(Combo.of_a_kind(face, 5, 10000 if face == 1 else 5000))
    for face in range(1, 7):
        for pair in range(1, 7):
            if pair != face or not rules.full_house_distinct_pair:
                dice = (face,) * 3 + (pair,) * 2
                combos.append(Combo.made_of(f"full house {words(dice)}", dice, 500))
    combos.append(Combo.made_of("straight 1-5", (1, 2, 3, 4, 5), 1000))
    combos.append(Combo.made_of("straight 2-6", (2, 3, 4, 5, 6), 1000))
    non_scoring: NonScoring = (
        "player_choice" if rules.non_scoring_die == "player_choice" else "face_count_lt_3"
    )
    return ComboTable(
        "bolo",
        DICE,
        tuple(combos),
        all_scoring_takes_all=rules.all_scoring_roll_takes_all,
        stop_rule="non_scoring_left",
        non_scoring=non_scoring,
    )


def minimum(rules: HouseRules, board: int, on_board: bool) -> int:
    """The least turn that is tallied, from the board at the start of the turn (B10)."""
    if not on_board:
        return rules.entry_min
    if board >= 9000:
        return rules.take_min_9000
    if board >= 7000:
        return rules.take_min_7000
    return rules.take_min


def cocked_rule(rules: HouseRules) -> Literal["reroll_offending", "reroll_all_just_rolled"]:
    """B16/C1: which dice a re-roll of off-pad or cocked dice throws again."""
    if rules.sloppy_dice == "reroll_all_just_rolled":
        return "reroll_all_just_rolled"
    return "reroll_offending"
