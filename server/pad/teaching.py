"""What the house set is taught, as values: the dice of a throw as the reader saw them
(:class:`SeenDie`), a settled throw held for the teaching page (:class:`TeachThrow`, its
:class:`TeachDie`), what teaching it did (:class:`Taught`) and what the page shows of the set
(:class:`Progress`); and the pure work on them: a die's crop of the raw frame (:func:`crop_of`),
which value each die is taught (:func:`pair`, rules in :mod:`server.pad.house`) and which dice
of a reading were thrown (:func:`thrown_dice`).

Apart from :class:`~server.pad.house.PadHouse` (which holds and hands them over) and its worker
(:mod:`server.pad.worker`, which keeps the set) because nothing here holds state or a thread:
the teaching page and the pad service use these values without either.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import cv2
import numpy as np

from server.pad.decide import split_standing
from vision.reading import DieReading, Reading

if TYPE_CHECKING:
    from vision.house import Example
    from vision.house.learn import HeldBack

CROP_PX = 128  #: a die's crop on the teaching page (JPEG, square): pips a person can count
CROP_SIDES = 1.8  #: ... cut this many of the die's sides wide around it from the raw frame
CROP_QUALITY = 90


@dataclass(frozen=True)
class SeenDie:
    """One die of a throw as the reader saw it: the value it gave (None: asked) and the patch
    the value network was shown (None: it could not be cut)."""

    value: int | None
    view: np.ndarray | None


@dataclass(frozen=True)
class TeachDie:
    """One die of a settled throw for the teaching page: the reader's value (None: asked),
    its two best guesses, the patch the value network was shown (None: it could not be cut:
    not taught) and its crop of the raw frame (JPEG; None: none could be cut)."""

    guess: int | None
    candidates: tuple[tuple[int, float], ...]
    view: np.ndarray | None
    crop: bytes | None


@dataclass(frozen=True)
class TeachThrow:
    """A settled throw held for the teaching page; ``number`` names it (unique over
    restarts: the wall clock's milliseconds), ``at`` is when it settled (wall clock)."""

    number: int
    at: float
    dice: tuple[TeachDie, ...]


@dataclass(frozen=True)
class Taught:
    """What :meth:`PadHouse.teach` did with a throw: ``examples`` queued, or nothing because
    the throw was ``before`` taught. ``ticket`` is for :meth:`PadHouse.wait_kept`."""

    number: int
    examples: int
    before: bool
    ticket: int = 0


@dataclass(frozen=True)
class Progress:
    """What the teaching page shows of the set: examples per value (0: not a die), whether the
    camera reads with a house model, the held-back figure (None: too few examples to hold any
    back, or not worked out: ``held_state``), the newest examples."""

    examples: int
    per_value: dict[int, int]
    model: bool
    problem: str | None
    held: HeldBack | None
    held_state: str  # "ready", "working" (being worked out), "failed"
    held_problem: str | None
    recent: tuple[Example, ...] = field(default=())


def crop_of(image: np.ndarray, die: DieReading, *, px: int = CROP_PX) -> bytes:
    """A square JPEG of ``px`` around ``die`` cut from ``image``, :data:`CROP_SIDES` of its
    sides wide (past the frame's edge, the edge's pixels repeated)."""
    side = max(8, round(CROP_SIDES * max(die.size_px, 4.0)))
    centre = (float(die.center_xy[0]), float(die.center_xy[1]))
    patch = cv2.getRectSubPix(image, (side, side), centre)
    shrink = cv2.INTER_AREA if side > px else cv2.INTER_CUBIC
    patch = cv2.resize(patch, (px, px), interpolation=shrink)
    ok, buf = cv2.imencode(".jpg", patch, [cv2.IMWRITE_JPEG_QUALITY, CROP_QUALITY])
    if not ok:
        raise ValueError("the crop could not be encoded")
    return bytes(buf)


def pair(read: Sequence[int | None], given: Sequence[int]) -> list[int | None]:
    """The value the player's dice ``given`` teach each die the reader ``read`` (None: not
    taught). A value the reader gave pairs with its die when the player kept at least as many
    of it as the reader saw; the remaining dice take the remaining values only when there are
    as many dice as values in all and the remaining values are all the same (one die left and
    one value left among them): never a guess."""
    out: list[int | None] = [None] * len(read)
    left = Counter(given)
    by_value: dict[int, list[int]] = {}
    for i, value in enumerate(read):
        if value is not None:
            by_value.setdefault(value, []).append(i)
    rest = [i for i, value in enumerate(read) if value is None]
    for value, dice in by_value.items():
        if left[value] >= len(dice):
            for i in dice:
                out[i] = value
            left[value] -= len(dice)
        else:  # the reader saw more of it than the player kept: which one was wrong?
            rest.extend(dice)
    values = list(left.elements())
    if rest and len(read) == len(given) and len(set(values)) == 1:
        for i in rest:
            out[i] = values[0]
    return out


def thrown_dice(reading: Reading, standing: Sequence[DieReading]) -> tuple[DieReading, ...]:
    """The dice of ``reading`` that were thrown (those left standing on the pad for a re-roll
    the service logged are not), in the order :func:`~server.pad.decide.decide` reads them."""
    if standing:
        split = split_standing(reading.dice, standing)
        if split is not None:
            return split[0]
    return reading.dice
