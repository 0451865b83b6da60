"""Gords coach: how likely a bid is, the most likely true bid, and raise or call.

The maths is RULES.md 4.3: with ``u`` unknown dice and ``k`` matching dice in the player's own
hand, P(q x f is met) = P(X >= q - k), X ~ Binomial(u, p), p = 1/3 for a face with ones wild,
1/6 for ones (or any face when ones are not wild, e.g. a palifico round). The bid ordering and
matching come from :mod:`scoring.gords_bids`, so the coach ranks bids exactly as the engine.

Advice (a simple, explainable rule, not an equilibrium of the bluffing game): open with the
most likely true bid; then call when the standing bid is less likely true than the safest
legal raise, otherwise make that raise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from scoring.gords_bids import Bid, bid_key, bid_text, is_raise, matching, p_met

FACES = range(1, 7)


def p_true(bid: Bid, *, own: Iterable[int] = (), unknown: int, ones_wild: bool = True) -> float:
    """P(``bid`` is met) knowing ``own`` dice, with ``unknown`` other dice in play."""
    if unknown < 0:
        raise ValueError(f"unknown dice cannot be negative, got {unknown}")
    dice = tuple(own)
    if any(not 1 <= d <= 6 for d in dice):
        raise ValueError("dice show 1-6")
    k = matching(dice, bid[1], ones_wild=ones_wild)
    return p_met(bid, unknown=unknown, in_hand=k, ones_wild=ones_wild)


def expected_count(
    face: int, *, own: Iterable[int] = (), unknown: int, ones_wild: bool = True
) -> float:
    """Expected number of matching dice on the table: ``k + u p``."""
    k = matching(tuple(own), face, ones_wild=ones_wild)
    p = 1 / 3 if face != 1 and ones_wild else 1 / 6
    return k + unknown * p


def most_likely_bids(
    *, own: Iterable[int] = (), unknown: int, ones_wild: bool = True, at_least: float = 0.5
) -> list[tuple[Bid, float]]:
    """Per face, the biggest count still true with probability >= ``at_least`` (a bid is
    "likely true" when it is met at least half the time)."""
    dice = tuple(own)
    total = len(dice) + unknown
    out = []
    for face in FACES:
        best: tuple[Bid, float] | None = None
        for count in range(1, total + 1):
            p = p_true((count, face), own=dice, unknown=unknown, ones_wild=ones_wild)
            if p < at_least:
                break
            best = ((count, face), p)
        if best is not None:
            out.append(best)
    return out


def most_likely_true_bid(
    *,
    own: Iterable[int] = (),
    unknown: int,
    ones_wild: bool = True,
    ones_rank: str = "perudo",
    board: Sequence[Bid] = (),
) -> tuple[Bid, float] | None:
    """The highest-ranked bid that is met with probability >= 1/2 (``None`` with no dice)."""
    found = most_likely_bids(own=own, unknown=unknown, ones_wild=ones_wild)
    if ones_rank == "board_order":
        found = [b for b in found if b[0] in board]
    if not found:
        return None
    return max(found, key=lambda b: bid_key(b[0], ones_rank=ones_rank, board=board))


def advise(
    current: Bid | None,
    raises: Iterable[Bid],
    *,
    own: Iterable[int] = (),
    unknown: int,
    ones_wild: bool = True,
    ones_rank: str = "perudo",
    board: Sequence[Bid] = (),
) -> dict[str, Any]:
    """Raise or call: ``raises`` are the legal raises (from the engine's legal actions)."""
    dice = tuple(own)
    options = sorted(
        ((b, p_true(b, own=dice, unknown=unknown, ones_wild=ones_wild)) for b in raises),
        key=lambda bp: (-bp[1], bid_key(bp[0], ones_rank=ones_rank, board=board)),
    )
    likely = most_likely_true_bid(
        own=dice, unknown=unknown, ones_wild=ones_wild, ones_rank=ones_rank, board=board
    )
    out: dict[str, Any] = {
        "game": "gords",
        "own": list(dice),
        "unknown": unknown,
        "ones_wild": ones_wild,
        "bid": None,
        "p_bid": None,
        "most_likely": None
        if likely is None
        else {"count": likely[0][0], "face": likely[0][1], "p": round(likely[1], 4)},
        "expected": {
            str(f): round(expected_count(f, own=dice, unknown=unknown, ones_wild=ones_wild), 2)
            for f in FACES
        },
        "advice": "none",
        "raise": None,
        "p_raise": None,
    }
    if options:
        best, p_best = options[0]
        out["raise"] = {"count": best[0], "face": best[1], "text": bid_text(best)}
        out["p_raise"] = round(p_best, 4)
    if current is not None:
        p_cur = p_true(current, own=dice, unknown=unknown, ones_wild=ones_wild)
        out["bid"] = {"count": current[0], "face": current[1], "text": bid_text(current)}
        out["p_bid"] = round(p_cur, 4)
        call = not options or (1 - p_cur) > options[0][1]
        out["advice"] = "call" if call else "raise"
        head = f"{bid_text(current)} is true with {100 * p_cur:.1f} %"
        if call:
            out["text"] = f"{head}: call."
        else:
            b, p = options[0]
            out["text"] = f"{head}; the safest raise {bid_text(b)} holds {100 * p:.1f} %: raise."
    elif options:
        # Opening: the most likely true bid (as high as it goes while still >= 50 %).
        b, p = options[0]
        if likely is not None and likely[0] in dict(options):
            b, p = likely
        out["advice"] = "raise"
        out["raise"] = {"count": b[0], "face": b[1], "text": bid_text(b)}
        out["p_raise"] = round(p, 4)
        out["text"] = f"Open with {bid_text(b)} ({100 * p:.1f} % to hold)."
    else:
        out["text"] = "No bid to make."
    return out


def legal_raises(
    current: Bid | None,
    dice_in_play: int,
    *,
    ones_rank: str = "perudo",
    board: Sequence[Bid] = (),
    open_on_ones: bool = True,
) -> list[Bid]:
    """Every bid that may follow ``current`` (G-6, G3, G4, G9) when no engine state is at hand."""
    out = []
    for count in range(1, dice_in_play + 1):
        for face in FACES:
            bid = (count, face)
            if current is None and face == 1 and not open_on_ones:
                continue
            if ones_rank == "board_order" and bid not in board:
                continue
            if is_raise(current, bid, ones_rank=ones_rank, board=board):
                out.append(bid)
    return out
