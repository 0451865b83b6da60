"""Gords bid maths (RULES.md 4, G-4..G-7, G3, 4.3): pure functions the engine and the coach share.

Bids are ``(count, face)``. Every ``gords.ones_bid_rank`` ordering is a strict total order
given by one sort key, so "is this a raise?" is always ``bid_key(new) > bid_key(old)``:

- ``perudo`` (default): a bid of q ones sits just above every face bid of quantity 2q and
  below every face bid of 2q + 1, i.e. key ``(2q, 7)``. That is exactly the exchange rate
  (to ones: at least ⌈q/2⌉; back from q ones: at least 2q + 1) and matches the odds.
- ``highest_face``: ones rank above sixes at the same quantity, key ``(q, 7)``.
- ``board_order``: the house lists its board's spots in rising order (``gords.board``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

Bid = tuple[int, int]  #: ``(count, face)``

ONES = 1
FACE_NAMES = ("", "ones", "twos", "threes", "fours", "fives", "sixes")

_SPOT = re.compile(r"^\s*(\d+)\s*[x×*]\s*([1-6])\s*$")


def parse_board(text: str) -> tuple[Bid, ...]:
    """``"1x2, 1x3, ..."`` -> the board's spots in rising order; ``ValueError`` if malformed."""
    spots: list[Bid] = []
    for part in re.split(r"[,;\s]+(?=\d)", text.strip()) if text.strip() else []:
        m = _SPOT.match(part)
        if not m or int(m.group(1)) < 1:
            raise ValueError(f"G3: board spot {part!r} is not COUNTxFACE (e.g. 4x6)")
        spot = (int(m.group(1)), int(m.group(2)))
        if spot in spots:
            raise ValueError(f"G3: board spot {part.strip()!r} is listed twice")
        spots.append(spot)
    return tuple(spots)


def bid_key(bid: Bid, *, ones_rank: str = "perudo", board: Sequence[Bid] = ()) -> tuple[int, int]:
    """The sort key of ``bid``: a raise is a strictly greater key (G-6, G3)."""
    count, face = bid
    if count < 1 or not 1 <= face <= 6:
        raise ValueError(f"a bid is a count of at least 1 and a face 1-6, got {count} x {face}")
    if ones_rank == "board_order":
        if bid not in board:
            raise ValueError(f"G3: {bid_text(bid)} is not a spot on the board")
        return (list(board).index(bid), 0)
    if face != ONES:
        return (count, face)
    if ones_rank == "perudo":
        return (2 * count, 7)
    if ones_rank == "highest_face":
        return (count, 7)
    raise ValueError(f"unknown ones_bid_rank {ones_rank!r}")


def is_raise(
    old: Bid | None, new: Bid, *, ones_rank: str = "perudo", board: Sequence[Bid] = ()
) -> bool:
    """Whether ``new`` may follow ``old`` (any bid may open a round)."""
    key = bid_key(new, ones_rank=ones_rank, board=board)
    return old is None or key > bid_key(old, ones_rank=ones_rank, board=board)


def matching(dice: Iterable[int], face: int, *, ones_wild: bool = True) -> int:
    """Dice that count for a bid on ``face`` (G-5, G-7): the face and the wild ones, or only
    ones on a ones bid (or only the face when ones are not wild, e.g. palifico)."""
    d = list(dice)
    if face == ONES or not ones_wild:
        return d.count(face)
    return d.count(face) + d.count(ONES)


def is_met(dice: Iterable[int], bid: Bid, *, ones_wild: bool = True) -> bool:
    """G-8: the bid stands when the count meets or exceeds it (then the caller loses)."""
    return matching(dice, bid[1], ones_wild=ones_wild) >= bid[0]


def p_face(face: int, *, ones_wild: bool = True) -> float:
    """The chance that one hidden die matches ``face``: 1/3 for a face when ones are wild (the
    face or a 1), else 1/6."""
    return 1 / 3 if face != ONES and ones_wild else 1 / 6


def p_met(bid: Bid, *, unknown: int, in_hand: int = 0, ones_wild: bool = True) -> float:
    """P(the bid is met) with ``unknown`` hidden dice and ``in_hand`` known matches (4.3):
    P(X >= count - in_hand), X ~ Binomial(unknown, p), p = 1/3 for a face (ones wild), else 1/6.
    """
    count, face = bid
    p = p_face(face, ones_wild=ones_wild)
    need = count - in_hand
    if need <= 0:
        return 1.0
    return sum(
        math.comb(unknown, k) * p**k * (1 - p) ** (unknown - k) for k in range(need, unknown + 1)
    )


def bid_text(bid: Bid) -> str:
    """``(4, 6)`` -> "4 × sixes"."""
    count, face = bid
    name = FACE_NAMES[face]
    return f"{count} × {name.removesuffix('es' if face == 6 else 's') if count == 1 else name}"
