"""Gords coach: how likely a bid is, the most likely true bid, and raise or call.

The maths is RULES.md 4.3: with ``u`` unknown dice and ``k`` matching dice in the player's own
hand, P(q x f is met) = P(X >= q - k), X ~ Binomial(u, p), p = 1/3 for a face with ones wild,
1/6 for ones (or any face when ones are not wild, e.g. a palifico round). The bid ordering and
matching come from :mod:`scoring.gords.bids`, so the coach ranks bids exactly as the engine.

Advice (a simple, explainable rule, not an equilibrium of the bluffing game): open with the
most likely true bid; then take the option that loses the fewest dice on average
(:func:`expected_loss`): call the standing bid, make the raise that costs least *if it is
called* (the next player's reply is not modelled: a raise that is raised again costs
nothing), or, under ``gords.spot_on``, call it spot on. Dice change hands as the engine
settles a call (G-8, G5, G6): the caller loses when the bid is met, the bidder when it is not;
under ``gords.dice_lost = difference`` the loser loses the difference between the count and
the bid (at least one when the caller loses a met bid); a spot-on call wins the caller a die
back (up to five) when the count is exactly the bid and costs the caller one die otherwise;
nobody loses more dice than they have. With one die lost per call and no spot on, this is the
old rule: call when the standing bid is less likely true than the safest legal raise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from scoring.gords.bids import Bid, bid_key, bid_text, is_raise, matching, p_face, p_met
from scoring.gords.state import START_DICE

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


def count_odds(
    face: int, *, own: Iterable[int] = (), unknown: int, ones_wild: bool = True
) -> list[float]:
    """P(exactly ``g`` dice on the table match ``face``), for ``g`` = 0 .. all dice in play:
    the ``k`` matches in ``own`` plus X ~ Binomial(``unknown``, p)."""
    if unknown < 0:
        raise ValueError(f"unknown dice cannot be negative, got {unknown}")
    dice = tuple(own)
    k = matching(dice, face, ones_wild=ones_wild)
    p = p_face(face, ones_wild=ones_wild)
    out = [0.0] * (len(dice) + unknown + 1)
    for x in range(unknown + 1):
        out[k + x] = math.comb(unknown, x) * p**x * (1 - p) ** (unknown - x)
    return out


ACTIONS = ("call", "spot_on", "raise")


def expected_loss(
    bid: Bid,
    action: str,
    *,
    own: Iterable[int] = (),
    unknown: int,
    ones_wild: bool = True,
    dice_lost: str = "one",
    my_dice: int | None = None,
) -> float:
    """The dice the player to act expects to lose (negative: a die won back) by ``action``:
    ``call`` (call ``bid``), ``spot_on`` (call ``bid`` spot on) or ``raise`` (bid ``bid`` and
    be called: the loss if the next player calls it). ``my_dice``: the player's dice (caps
    the loss; default ``len(own)``, or 5 without own dice)."""
    if action not in ACTIONS:
        raise ValueError(f"action is one of {', '.join(ACTIONS)}, got {action!r}")
    if dice_lost not in ("one", "difference"):
        raise ValueError(f"unknown dice_lost {dice_lost!r}")
    dice = tuple(own)
    mine = (len(dice) or START_DICE) if my_dice is None else my_dice
    count = bid[0]
    odds = count_odds(bid[1], own=dice, unknown=unknown, ones_wild=ones_wild)
    diff = dice_lost == "difference"
    total = 0.0
    for got, p in enumerate(odds):
        if action == "spot_on":
            if got == count:
                total -= p * (mine < START_DICE)
            else:
                total += p * min(1, mine)
        elif action == "call" and got >= count:
            total += p * min(max(1, got - count) if diff else 1, mine)
        elif action == "raise" and got < count:
            total += p * min(count - got if diff else 1, mine)
    return total


def expected_count(
    face: int, *, own: Iterable[int] = (), unknown: int, ones_wild: bool = True
) -> float:
    """Expected number of matching dice on the table: ``k + u p``."""
    k = matching(tuple(own), face, ones_wild=ones_wild)
    return k + unknown * p_face(face, ones_wild=ones_wild)


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
    spot_on: bool = False,
    dice_lost: str = "one",
    my_dice: int | None = None,
) -> dict[str, Any]:
    """Raise, call or (with ``spot_on``, ``gords.spot_on``) call spot on: ``raises`` are the
    legal raises (from the engine's legal actions); ``dice_lost`` is ``gords.dice_lost``;
    ``my_dice`` the player's dice (see :func:`expected_loss`). ``loss`` holds the expected
    dice lost by each option (``raise``: the best raise, if it is called)."""
    dice = tuple(own)

    def loss(bid: Bid, action: str) -> float:
        return expected_loss(
            bid,
            action,
            own=dice,
            unknown=unknown,
            ones_wild=ones_wild,
            dice_lost=dice_lost,
            my_dice=my_dice,
        )

    def order(bp: tuple[Bid, float]) -> tuple[float, float, tuple[int, int]]:
        cost = round(loss(bp[0], "raise"), 12) if dice_lost != "one" else 0.0
        return (cost, -bp[1], bid_key(bp[0], ones_rank=ones_rank, board=board))

    options = sorted(
        ((b, p_true(b, own=dice, unknown=unknown, ones_wild=ones_wild)) for b in raises),
        key=order,
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
        "spot_on": spot_on,
        "dice_lost": dice_lost,
        "loss": None,
    }
    if options:
        best, p_best = options[0]
        out["raise"] = {"count": best[0], "face": best[1], "text": bid_text(best)}
        out["p_raise"] = round(p_best, 4)
    if current is not None:
        p_cur = p_true(current, own=dice, unknown=unknown, ones_wild=ones_wild)
        out["bid"] = {"count": current[0], "face": current[1], "text": bid_text(current)}
        out["p_bid"] = round(p_cur, 4)
        costs = {"call": loss(current, "call")}
        if options:
            costs["raise"] = loss(options[0][0], "raise")
        if spot_on:
            costs["spot_on"] = loss(current, "spot_on")
        out["loss"] = {a: round(costs[a], 4) if a in costs else None for a in ACTIONS}
        # Ties go to raising, then to a plain call (the old rule: call only when strictly
        # better); rounding keeps equal figures equal.
        advice = min(
            costs, key=lambda a: (round(costs[a], 12), ("raise", "call", "spot_on").index(a))
        )
        out["advice"] = advice
        head = f"{bid_text(current)} is true with {100 * p_cur:.1f} %"
        if advice == "call":
            out["text"] = f"{head}: call."
        elif advice == "spot_on":
            p_exact = count_odds(current[1], own=dice, unknown=unknown, ones_wild=ones_wild)
            exact = p_exact[current[0]] if current[0] < len(p_exact) else 0.0
            out["text"] = f"{head}, exactly {current[0]} with {100 * exact:.1f} %: call it spot on."
        else:
            b, p = options[0]
            word = "safest" if dice_lost == "one" else "cheapest"
            out["text"] = f"{head}; the {word} raise {bid_text(b)} holds {100 * p:.1f} %: raise."
        if spot_on or dice_lost != "one":
            parts = [f"call {costs['call']:.2f}"]
            if "spot_on" in costs:
                parts.append(f"spot on {costs['spot_on']:+.2f}")
            if options:
                parts.append(f"raise to {bid_text(options[0][0])} {costs['raise']:.2f} if called")
            out["text"] += f" Expected dice lost: {', '.join(parts)}."
    elif options:
        # Opening: the most likely true bid (as high as it goes while still >= 50 %).
        b, p = options[0]
        if likely is not None and likely[0] in dict(options):
            b, p = likely
        out["advice"] = "raise"
        out["raise"] = {"count": b[0], "face": b[1], "text": bid_text(b)}
        out["p_raise"] = round(p, 4)
        out["loss"] = {"call": None, "spot_on": None, "raise": round(loss(b, "raise"), 4)}
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
