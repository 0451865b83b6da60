"""Exact Bar Dice odds for the coach and the docs (RULES.md 3.3): flops and round resets.

Everything is enumerated over the 7776 ordered flops of five dice, so the figures are exact
fractions of 7776 (computed once, then cached).
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache
from math import comb, factorial

from scoring.bar_dice.hand import DICE, hand_value

FLOPS = 6**DICE  #: 7776 ordered outcomes of one flop


@cache
def flop_counts(*, ace_required: bool = True, five_aces_value: int = 56) -> dict[int | None, int]:
    """Outcomes per 7776 of each flop value (``None`` = nothing): nothing 3125, 25: 120 ..."""
    counts = Counter(
        hand_value(d, ace_required=ace_required, five_aces_value=five_aces_value)
        for d in itertools.product(range(1, 7), repeat=DICE)
    )
    return dict(counts)


def p_round_resets(players: int, one_tie_all_tie: str = "any_counting") -> float:
    """P(an elimination round of one flop each resets on a tie), default rules.

    ``any_counting``: some two counting hands are equal; ``top_only``: the highest counting
    hand is shared. (A round where nobody counts is re-rolled too, D5, and is not included.)
    """
    if players < 2:
        raise ValueError("a round needs at least two players")
    counts = flop_counts()
    p_nothing = counts[None] / FLOPS
    values = sorted(v for v in counts if v is not None)
    probs = [counts[v] / FLOPS for v in values]
    if one_tie_all_tie == "any_counting":
        # P(all counting hands distinct) = sum_k C(n,k) p0^(n-k) k! e_k(p), e_k elementary symmetric
        e = [1.0] + [0.0] * players
        for p in probs:
            for j in range(players, 0, -1):
                e[j] += e[j - 1] * p
        distinct = sum(
            comb(players, k) * float(p_nothing ** (players - k)) * factorial(k) * e[k]
            for k in range(players + 1)
        )
        return 1.0 - distinct
    if one_tie_all_tie == "top_only":
        total, below = 0.0, p_nothing
        for p in probs:
            total += sum(
                comb(players, m) * p**m * below ** (players - m) for m in range(2, players + 1)
            )
            below += p
        return total
    if one_tie_all_tie == "off":
        return 0.0
    raise ValueError(f"unknown one_tie_all_tie {one_tie_all_tie!r}")
