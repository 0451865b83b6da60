"""Gords house rules (RULES.md 4.2, G1-G10, and C1): every ambiguity a named field."""

from __future__ import annotations

from dataclasses import dataclass

from scoring.rules import house_rule


@dataclass(frozen=True)
class HouseRules:
    """The options of ``gords.*``; defaults are RULES.md's proposals."""

    direction: str = house_rule(
        "clockwise",
        "G1: play passes clockwise (to the left; the seating order given) or counter-clockwise",
        ("clockwise", "counter_clockwise"),
    )
    only_next_player_may_call: bool = house_rule(
        True, "G2: only the next player may call; false lets anyone but the bidder call"
    )
    ones_bid_rank: str = house_rule(
        "perudo",
        "G3: ones bids rank by the Perudo exchange rate (q ones ~ 2q of a face), above sixes "
        "at the same count (highest_face), or by the listed board spots (board_order)",
        ("perudo", "highest_face", "board_order"),
    )
    board: str = house_rule(
        "",
        "G3: with ones_bid_rank=board_order, the board's spots in rising order, e.g. "
        "'1x2,1x3,1x4,1x5,1x6,1x1,2x2,...'",
    )
    open_on_ones: bool = house_rule(True, "G4: the opening bid of a round may be on ones")
    spot_on: bool = house_rule(
        False,
        "G5: allow a 'spot on' call (Perudo calza): exactly right wins the caller a die back "
        "(up to 5), otherwise the caller loses one",
    )
    dice_lost: str = house_rule(
        "one",
        "G6: the loser of a call loses one die, or the difference between bid and count (Dudo)",
        ("one", "difference"),
    )
    next_starter: str = house_rule(
        "caller",
        "G7: the caller opens the next round (or the next player with dice), or the loser",
        ("caller", "loser"),
    )
    game_end: str = house_rule(
        "one_player_left",
        "G8: the game ends when only one player has dice ('one die left' is read as loose "
        "wording of the same thing)",
        ("one_player_left",),
    )
    max_quantity: str = house_rule(
        "dice_in_play",
        "G9: a bid's count is at most the dice in play; facing the maximum, a player must call",
        ("dice_in_play",),
    )
    palifico: bool = house_rule(
        False,
        "G10: Perudo palifico: the round after a player first drops to one die, ones are not "
        "wild and the opening face cannot change",
    )
    palifico_opener: str = house_rule(
        "palifico_player",
        "G10 (palifico): a palifico round is opened by the player just down to one die, who "
        "sets its face as in Perudo (palifico_player), or by whoever next_starter names, e.g. "
        "the caller (next_starter)",
        ("palifico_player", "next_starter"),
    )
    cocked_dice: str = house_rule(
        "reroll_offending",
        "C1: a cocked die under the cup is re-rolled alone (a table convention: hidden shakes "
        "are never read by the engine)",
        ("reroll_offending",),
    )
