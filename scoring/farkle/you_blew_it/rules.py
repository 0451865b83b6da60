"""You Blew It's house rules and the combination table they give.

Every ambiguity of RULES.md 1.3 (Y1-Y16) is a field of :class:`HouseRules` with its default;
:func:`table` is the YBI-5 combination table under them (Y1-Y5), :func:`cocked_rule` what a
cocked-die re-roll throws again (Y16).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from scoring.farkle.combos import Combo, ComboTable
from scoring.farkle.turn import RuleIds
from scoring.rules import house_rule

DICE = 6

IDS = RuleIds(keep="YBI-4", hot="YBI-6", cocked="Y16", cocked_option="ybi.cocked_dice")


@dataclass(frozen=True)
class HouseRules:
    """Every You Blew It ambiguity of RULES.md 1.3 (Y1-Y16) with its default."""

    combo_must_be_kept: bool = house_rule(
        True, "Y1: every combination rolled (triples, the straight) must be kept whole"
    )
    keep_all_scoring_dice: bool = house_rule(False, "Y2: every scoring die of a roll must be kept")
    extra_dice_of_a_kind: str = house_rule(
        "singles",
        "Y3/Y6: four to six of a kind: extra dice score as singles, or linear "
        "((n-2) x triple), or doubling (2^(n-3) x triple)",
        ("singles", "linear", "doubling"),
    )
    four_of_a_kind_is_one_combo: bool = house_rule(
        False, "Y4: four 1s (1100) / four 5s (550) are one combo that must be kept whole"
    )
    six_of_a_kind_as_two_triples: bool = house_rule(
        True, "Y5: six of a kind scores as two triples (six 1s = 2000) rather than one triple"
    )
    seating: str = house_rule(
        "together",
        "YBI-2: default line-up: teams sit together (as listed) or alternate seats",
        ("together", "alternate"),
    )
    first_player: str = house_rule(
        "choose", "Y9: the scorekeeper chooses who starts (the line-up order)", ("choose",)
    )
    rotate_start: bool = house_rule(
        False, "Y9/YBI-9: each round starts with the previous round's second player"
    )
    target: int = house_rule(
        10000, "Y10/YBI-11: score to reach (5000 short game)", range=(50, 1000000)
    )
    end_rule: str = house_rule(
        "end_of_round",
        "Y11: the game ends at the end of the round a team reaches the target, or after one "
        "more turn for every other player",
        ("end_of_round", "one_more_turn_each"),
    )
    final_turns_from: str = house_rule(
        "round_score",
        "Y11 (end_rule=one_more_turn_each): the extra turns play on in the round, so a blow "
        "still wipes the teammates' earlier points of that round (round_score), or each extra "
        "turn starts from zero: points are safe once the target is reached and a blow loses "
        "only the blower's own turn (zero)",
        ("round_score", "zero"),
    )
    tie_rule: str = house_rule(
        "extra_round",
        "Y12: equal top totals at the end: play on, or share",
        ("extra_round", "shared"),
    )
    on_board_min: int = house_rule(
        0, "Y13: a single banked turn needed to get on the board (0 = off; 350, 700)"
    )
    on_board_scope: str = house_rule(
        "team", "Y13: the on-board minimum applies per team or per player", ("team", "player")
    )
    teams: int = house_rule(2, "Y14: number of teams", range=(2, 8))
    unequal_teams: str = house_rule(
        "allow_with_warning",
        "Y14: teams of different sizes",
        ("allow_with_warning", "allow", "forbid"),
    )
    cocked_dice: str = house_rule(
        "reroll_offending",
        "Y16/C1: a cocked, stacked or off-pad die: re-roll only it, or every die just rolled",
        ("reroll_offending", "reroll_all_just_rolled"),
    )


@lru_cache(maxsize=64)
def table(rules: HouseRules = HouseRules()) -> ComboTable:
    """The combination table of YBI-5 under these house rules (Y1-Y5)."""
    two_triples = rules.six_of_a_kind_as_two_triples
    combos = [Combo.single(1, 100), Combo.single(5, 50)]
    for face in range(1, 7):
        triple = 1000 if face == 1 else 100 * face
        combos.append(Combo.of_a_kind(face, 3, triple, repeatable=two_triples))
        if rules.extra_dice_of_a_kind == "singles":
            if rules.four_of_a_kind_is_one_combo and face in (1, 5):
                combos.append(Combo.of_a_kind(face, 4, triple + (100 if face == 1 else 50)))
            continue
        for n in (4, 5, 6):
            factor = n - 2 if rules.extra_dice_of_a_kind == "linear" else 2 ** (n - 3)
            combos.append(Combo.of_a_kind(face, n, factor * triple, repeatable=False))
    combos.append(Combo.made_of("straight", (1, 2, 3, 4, 5, 6), 1500))
    return ComboTable(
        "you-blew-it",
        DICE,
        tuple(combos),
        must_keep_combos=rules.combo_must_be_kept,
        keep_all_scoring=rules.keep_all_scoring_dice,
    )


def cocked_rule(rules: HouseRules) -> Literal["reroll_offending", "reroll_all_just_rolled"]:
    """Y16/C1: which dice a re-roll of cocked, stacked or off-pad dice throws again."""
    return (
        "reroll_all_just_rolled"
        if rules.cocked_dice == "reroll_all_just_rolled"
        else ("reroll_offending")
    )
