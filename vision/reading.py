"""What vision returns: frozen value types shared by the detector, the flags, the pad service
and the tests. No OpenCV here, so everything downstream can use them without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Point = tuple[float, float]


class DieFlag(StrEnum):
    """Why a die cannot simply be scored (RULES.md section 5)."""

    COCKED = "cocked"  # top face not flat to the camera (leaning on the rail or a die)
    STACKED = "stacked"  # resting on or against another die
    OFF_PAD = "off_pad"  # outside the pad ("sloppy")
    UNREADABLE = "unreadable"  # no confident value (blur, glare, occlusion)


class Why(StrEnum):
    """Why a die was given a value, or asked about (``vision.trust`` decides): a reading says so,
    so a benchmark can tell the asked dice apart and a phone could say why it asks."""

    AGREED = "agreed"  # the network and the pip count say the same
    SURE = "sure"  # no clean count; the network is sure enough alone
    DISAGREED = "disagreed"  # a clean pip count contradicts the network: asked
    UNSURE = "unsure"  # the network is not sure enough: asked
    PART = "part"  # a lone pip with the die's body all round it: part of a bigger die, asked
    HOUSE = "house"  # the house model, taught this house's dice, is sure (``vision.house``)
    HOUSE_DOUBTS = "house_doubts"  # the house model is sure it is another value: asked
    UNKNOWN = "unknown"  # the locator is sure of a die the network takes for none: asked


@dataclass(frozen=True)
class Pad:
    """The region dice must land in, as a polygon in frame pixels (clockwise or not), and, once
    known, how large a flat die's top face looks at the polygon's centre (``flat_side_px``,
    frame px: learnt from settled rolls, ``vision.pipsize.learned_side``; it lets a die
    squarely on another be told by its size when no flat die lies beside it)."""

    polygon: tuple[Point, ...]
    flat_side_px: float | None = None

    def __post_init__(self) -> None:
        if len(self.polygon) < 3:
            raise ValueError("a pad needs at least three corners")
        if self.flat_side_px is not None and not self.flat_side_px > 0:
            raise ValueError("flat_side_px must be positive")

    def contains(self, xy: Point, *, margin: float = 0.0) -> bool:
        """True when ``xy`` lies inside the polygon, or within ``margin`` px outside it."""
        x, y = xy
        inside = False
        pts = self.polygon
        n = len(pts)
        for i in range(n):
            x1, y1 = pts[i]
            x2, y2 = pts[(i + 1) % n]
            if (y1 > y) != (y2 > y):
                xc = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
                if xc > x:
                    inside = not inside
        if inside or margin <= 0:
            return inside
        return _distance_to_polygon(xy, pts) <= margin

    def to_json(self) -> dict[str, Any]:
        return {"polygon": [[round(x, 1), round(y, 1)] for x, y in self.polygon]}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Pad:
        poly = obj.get("polygon")
        if not isinstance(poly, list):
            raise ValueError("pad.polygon must be a list of [x, y] points")
        return cls(tuple((float(p[0]), float(p[1])) for p in poly))


def _distance_to_polygon(xy: Point, pts: tuple[Point, ...]) -> float:
    px, py = xy
    best = float("inf")
    for i in range(len(pts)):
        (x1, y1), (x2, y2) = pts[i], pts[(i + 1) % len(pts)]
        dx, dy = x2 - x1, y2 - y1
        length2 = dx * dx + dy * dy
        t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - x1) * dx + (py - y1) * dy) / length2))
        cx, cy = x1 + t * dx, y1 + t * dy
        best = min(best, ((px - cx) ** 2 + (py - cy) ** 2) ** 0.5)
    return best


JUDGED = frozenset({DieFlag.COCKED, DieFlag.STACKED})
"""The flags the flags model judges, with a confidence (``DieReading.flag_confidence``)."""


def sure_3(c: float) -> float:
    """A confidence to three places that never rounds up to certain (0.9996 is 0.999, not 1)."""
    return 1.0 if c >= 1.0 else min(round(c, 3), 0.999)


@dataclass(frozen=True)
class FaceSize:
    """A top face measured from its pips (``vision.pipsize.face_size``)."""

    side_px: float  # the top face's side, frame px
    center_xy: Point  # the centre of its pip pattern, frame px
    angle_deg: float  # its turn, degrees in [0, 90) (or [0, 180) for 2, 3 and 6)
    consistent: bool  # fit and moment agree, ink centred, as wide as tall
    squeeze: float | None = None  # 4-6: the layout's width over its height, over a flat face's
    fits: bool = True  # fit and moment agree, ink centred: the pips were measured well


@dataclass(frozen=True)
class DieReading:
    """One die as seen from above.

    ``value`` is the top face's pips (1-6) or ``None`` when unreadable; ``center_xy`` and
    ``corners_xy`` (the top face's four corners) are in frame pixels; ``size_px`` is the top
    face's side length; ``colour`` a plain body-colour name; ``confidence`` in [0, 1], that
    of the value. ``flag_confidence`` says how sure each COCKED / STACKED flag the die carries
    is, in [0, 1] (``vision.flags.Evidence.decisions``): a phone can show a flag at 0.99 as
    certain and one at 0.8 as "check this die" (OFF_PAD and UNREADABLE are not judged but
    measured: the pad's outline, the value's confidence).

    ``candidates`` are the die's most probable values, best first, at most two, each with its
    probability given that it is a die: what the phone offers as one-tap answers when the
    reader asks about a die (``value`` None) rather than guess a number nobody checks.
    """

    value: int | None
    center_xy: Point
    corners_xy: tuple[Point, ...]
    size_px: float
    colour: str
    confidence: float
    flags: frozenset[DieFlag] = field(default_factory=frozenset)
    face: FaceSize | None = None  # its pips' measurement, when the flags took one (not in JSON)
    flag_confidence: tuple[tuple[DieFlag, float], ...] = ()  # (flag, 0-1) per COCKED / STACKED
    candidates: tuple[tuple[int, float], ...] = ()  # (value, 0-1), best first, at most two
    why: Why | None = None  # why it was given its value or asked (None: not read by vision.trust)

    def __post_init__(self) -> None:
        if len(self.candidates) > 2 or any(
            not 1 <= v <= 6 or not 0.0 <= p <= 1.0 for v, p in self.candidates
        ):
            raise ValueError(f"candidates must be at most two (value 1-6, 0-1): {self.candidates}")
        named = [flag for flag, _ in self.flag_confidence]
        if len(set(named)) != len(named):
            raise ValueError(f"flag confidence: a flag named twice in {named}")
        for flag, sure in self.flag_confidence:
            if flag not in self.flags & JUDGED or not 0.0 <= sure <= 1.0:
                raise ValueError(
                    f"flag confidence {flag.value}={sure}: not a judged flag the die carries,"
                    " or not 0-1"
                )

    def flag_sure(self, flag: DieFlag) -> float | None:
        """How sure the die's ``flag`` is (0-1), or None when it does not carry it or it is not
        a judged flag."""
        return dict(self.flag_confidence).get(flag)

    @property
    def scorable(self) -> bool:
        """Flat, on the pad and read: the die counts toward the roll."""
        return self.value is not None and not self.flags

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "center": [round(self.center_xy[0], 1), round(self.center_xy[1], 1)],
            "corners": [[round(x, 1), round(y, 1)] for x, y in self.corners_xy],
            "size": round(self.size_px, 1),
            "colour": self.colour,
            "confidence": round(self.confidence, 3),
            "flags": sorted(f.value for f in self.flags),
            "flag_confidence": {f.value: sure_3(c) for f, c in sorted(self.flag_confidence)},
            "candidates": [[v, round(p, 3)] for v, p in self.candidates],
            "why": None if self.why is None else self.why.value,
        }


@dataclass(frozen=True)
class Reading:
    """Every die found in one frame."""

    dice: tuple[DieReading, ...]
    frame_size: tuple[int, int]  # (width, height)
    located_die_px: float | None = None
    """The dice's size (axis-aligned extent, frame px) the locator's look was scaled for: what a
    fixed camera passes to the next ``read_roll`` as ``die_px`` (None: no die seen)."""

    @property
    def values(self) -> tuple[int, ...]:
        """Sorted values of the scorable dice."""
        return tuple(sorted(d.value for d in self.dice if d.scorable and d.value is not None))

    def flagged(self, flag: DieFlag) -> tuple[DieReading, ...]:
        return tuple(d for d in self.dice if flag in d.flags)

    @property
    def clean(self) -> bool:
        """Every die is scorable: the roll can go to the rules engine as it is."""
        return all(d.scorable for d in self.dice)

    def to_json(self) -> dict[str, Any]:
        return {
            "dice": [d.to_json() for d in self.dice],
            "frame_size": list(self.frame_size),
        }
