"""Bar Dice hand values (RULES.md 3, D-3/D-4, D2-D4): pure functions over a multiset of dice.

A hand is named "count-face": "forty two" is four 2s. Aces (1s) are wild and join the face
that already shows most often (ties to the higher face, D3), so one number orders every hand:
``value = count * 10 + face``. A hand without an ace is "nothing" (``None``), below every
counting hand, unless the house plays ``bardice.ace_required = false``. The coach and the
scoreboard call these directly; the game engine never computes a value anywhere else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

ACE = 1
DICE = 5  #: dice in a Bar Dice hand
BEATS_EVERYTHING = 60  #: ``bardice.five_aces_value = 60``: five aces above five 6s (56)

_UNITS = ("", "one", "two", "three", "four", "five", "six")
_TENS = ("", "ten", "twenty", "thirty", "forty", "fifty", "sixty")
_ROLLS = ("none", "one", "two", "three")


@dataclass(frozen=True)
class Hand:
    """A counting hand: ``count`` dice of ``face`` (aces joined in) and its ``value``.

    ``value`` is ``count * 10 + face`` ("forty two" = 42), except five aces under
    ``five_aces_value = 60``; compare hands by ``value`` only (D3: natural = wild).
    """

    count: int
    face: int
    value: int


def hand_of(
    dice: Iterable[int], *, ace_required: bool = True, five_aces_value: int = 56
) -> Hand | None:
    """The best hand in ``dice`` (any number of dice), or ``None`` for "nothing".

    ``five_aces_value`` (D2) is 56 (five aces count as five 6s), 51 (five 1s) or 60 (beats
    everything). Fewer than five dice, all aces (a farmed-only hand), count as 6s, or as 1s
    under the 51 rule.
    """
    counts = Counter(dice)
    if any(d not in range(1, 7) for d in counts):
        raise ValueError(f"pip values are 1-6, got {sorted(counts)}")
    aces = counts.pop(ACE, 0)
    if not aces and (ace_required or not counts):
        return None
    if not counts:  # nothing but aces
        if five_aces_value == 51:
            return Hand(aces, ACE, aces * 10 + ACE)
        if five_aces_value == BEATS_EVERYTHING and aces == DICE:
            return Hand(aces, ACE, BEATS_EVERYTHING)
        return Hand(aces, 6, aces * 10 + 6)
    best = max(counts.values())
    face = max(f for f, n in counts.items() if n == best)
    return Hand(best + aces, face, (best + aces) * 10 + face)


def hand_value(
    dice: Iterable[int], *, ace_required: bool = True, five_aces_value: int = 56
) -> int | None:
    """``hand_of(...).value``: 42 for 1 2 2 2 5, ``None`` for a hand that does not count."""
    hand = hand_of(dice, ace_required=ace_required, five_aces_value=five_aces_value)
    return None if hand is None else hand.value


def result_key(
    value: int | None,
    rolls: int,
    *,
    fewer_rolls_wins_tie: bool = True,
    nothing_in_fewer_rolls_wins: bool = True,
) -> tuple[int, int]:
    """How two finished hands compare (bigger wins, equal ties): the value first, "nothing"
    below everything; then, under D8, fewer rolls ("43 in one" beats "43 in two"). "Nothing"
    takes D8 too ("nothing in two" beats "nothing in three": D-9 and D12 roll off only a tie
    in the same number of rolls) unless ``nothing_in_fewer_rolls_wins`` is false."""
    if value is None:
        by_rolls = fewer_rolls_wins_tie and nothing_in_fewer_rolls_wins
        return (-1, -rolls if by_rolls else 0)
    return (value, -rolls if fewer_rolls_wins_tie else 0)


def is_five_aces(dice: Iterable[int]) -> bool:
    """Five dice, all aces: the "too lucky" throw (D-15)."""
    d = tuple(dice)
    return len(d) == DICE and all(x == ACE for x in d)


def value_words(value: int | None) -> str:
    """``42`` -> "forty two"; ``None`` -> "nothing"; 60 -> "five aces"."""
    if value is None:
        return "nothing"
    if value == BEATS_EVERYTHING:
        return "five aces"
    tens, units = divmod(value, 10)
    return f"{_TENS[tens]} {_UNITS[units]}".strip()


def rolls_words(rolls: int) -> str:
    """``2`` -> "in two" (the pace as the table says it)."""
    return f"in {_ROLLS[rolls]}" if 0 <= rolls < len(_ROLLS) else f"in {rolls}"


def pace_text(value: int | None, rolls: int) -> str:
    """ "43 in two", "nothing in three"."""
    name = "nothing" if value is None else str(value)
    return f"{name} {rolls_words(rolls)}"
