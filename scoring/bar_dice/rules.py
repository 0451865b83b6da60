"""Bar Dice house rules (RULES.md 3.2, D1-D17, and C1): every ambiguity a named field."""

from __future__ import annotations

from dataclasses import dataclass

from scoring.rules import house_rule


@dataclass(frozen=True)
class HouseRules:
    """The options of ``bardice.*``; defaults are RULES.md's proposals."""

    order_ties: str = house_rule(
        "reroll", "D1: players tied for the highest order die roll again", ("reroll",)
    )
    five_aces_value: int = house_rule(
        56, "D2: five aces count as 56 (five 6s), 51, or 60 (beats everything)", (56, 51, 60)
    )
    ace_required: bool = house_rule(
        True, "D4: a hand counts only with an ace; false scores ace-less hands (2 2 3 3 4 = 23)"
    )
    all_nothing: str = house_rule(
        "reroll_round", "D5: when nobody's flop counts, the round is re-rolled", ("reroll_round",)
    )
    one_tie_all_tie: str = house_rule(
        "any_counting",
        "D6: any two equal counting hands reset the elimination round (any_counting), only a "
        "tie for the top does (top_only), or never: tied top hands roll off (off)",
        ("any_counting", "top_only", "off"),
    )
    hammer_next: str = house_rule(
        "last_to_roll_still_in",
        "D7: the last player still in to roll brings it back",
        ("last_to_roll_still_in",),
    )
    fewer_rolls_wins_tie: bool = house_rule(
        True, "D8: the same value in fewer rolls wins (43 in one beats 43 in two)"
    )
    nothing_in_fewer_rolls_wins: bool = house_rule(
        True,
        "D8/D12: with fewer_rolls_wins_tie, 'nothing' is a hand like any other: nothing in two "
        "beats nothing in three, and only nothing v nothing in as many rolls rolls off (D-9); "
        "false: any two 'nothing' hands roll off",
    )
    rolloff_first: str = house_rule(
        "hammer", "D9: in a roll-off the turn's hammer flops first", ("hammer",)
    )
    first_farm_needs_ace: bool = house_rule(
        True, "D11: the first dice farmed in a turn must include an ace"
    )
    too_lucky: str = house_rule(
        "five_aces_one_throw",
        "D13: 'too lucky' is five aces in one throw of all five dice, or five aces in a final hand",
        ("five_aces_one_throw", "five_aces_in_final_hand"),
    )
    cocked_reroll_counts: bool = house_rule(
        False,
        "D14: a cocked throw spends a roll of the pace and its re-roll is the next roll, so the "
        "hand is the dice that stayed plus the re-roll (multi-roll turns only); a cocked throw "
        "with no roll left after it is re-rolled in its place, as when this is off",
    )
    dropped_die: str = house_rule(
        "reroll_that_die",
        "D15: a dropped die is re-rolled alone, the roll count unchanged (and a gin shot)",
        ("reroll_that_die",),
    )
    all_day_elimination: bool = house_rule(
        False, "D16: with three or more players, elimination turns take up to three rolls"
    )
    best_of: int = house_rule(3, "D17: the sponsor phase is best of 3 (or 5) turns", (3, 5))
    cocked_dice: str = house_rule(
        "reroll_all_just_rolled",
        "C1/D-16: a cocked or stacked die means re-rolling every die just rolled, "
        "or only the offending dice",
        ("reroll_all_just_rolled", "reroll_offending"),
    )
