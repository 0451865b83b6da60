"""The dice of one frame as the flags see them: what the reader knows of each (``DieView``),
which detections are other dice, and how near the nearest one is.

Two detections whose centres are closer than half a side (``FlagParams.duplicate``) are one die
seen twice (the reader often finds a tilted die's top and side face separately): neither is
evidence of a stack, and they are not each other's neighbour. Another (distinct) detection
within ``FlagParams.stack_reach`` sides is a die this one may rest on or lean against
(``Evidence.touching``, see ``vision.flags.evidence``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from vision.reading import Point

DUPLICATE = 0.5
"""Centre distance, in sides of the larger, under which two detections are one die seen twice."""


@dataclass(frozen=True)
class DieView:
    """What the reader knows of one die: centre, top-face side and turn (frame px, degrees).
    The side is taken to be derived from the die's axis-aligned extent and the turn (as
    ``vision.face.face_side`` does), so ``vision.flags.features.features`` can re-derive it
    for a better turn."""

    center_xy: Point
    side_px: float
    angle_deg: float


@dataclass(frozen=True)
class Neighbour:
    """Another die in the same frame: its centre and top-face side (frame px)."""

    center_xy: Point
    side_px: float


def neighbours_of(
    die: DieView, others: Sequence[DieView], duplicate: float = DUPLICATE
) -> list[Neighbour]:
    """The other dice as the model's neighbours, leaving out detections of this same die (a
    die cannot rest on or against itself; the model was trained without them)."""
    return [Neighbour(o.center_xy, o.side_px) for o in others if _distinct(die, o, duplicate)]


def _distinct(die: DieView, other: DieView, duplicate: float) -> bool:
    """Whether ``other`` is another die, not a second detection of ``die``."""
    return math.dist(die.center_xy, other.center_xy) >= duplicate * max(die.side_px, other.side_px)


def _nearest(die: DieView, others: Sequence[Neighbour]) -> float:
    """The centre distance from ``die`` to the nearest of ``others``, in sides of the larger of
    the two (infinite when there is none)."""
    return min(
        (math.dist(die.center_xy, o.center_xy) / max(die.side_px, o.side_px, 1e-9) for o in others),
        default=math.inf,
    )
