"""Small logos printed on a branded die's 1 face (its ace) in place of the single pip.

Many bars play with dice bought with their name or brand on them, and on such dice the ace is
a picture: the Bar Dice rules dicepad follows count an ace as "1, or on our dice, the Layman
logo". A reader that has only ever seen round pips must still call that face a 1, so the
renderer can draw it (``DieStyle(logo=...)``, ``DieLook(logo=...)``).

Each logo is a few polygons in face units (half-sides: ``x`` along the face's first axis,
``y`` along its second, the face centre at 0), spanning about 0.6 of the face, filled together
in one ``cv2.fillPoly`` call: a polygon inside another cuts a hole in it (OpenCV fills
overlaps of one call even-odd), which is how rings and letters with counters are drawn. No
image files: every shape is made of straight edges here.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

Poly = npt.NDArray[np.float64]

LOGOS = ("star", "crown", "diamond", "shield", "ring-l", "ring-b")
"""The built-in logos, by name."""


def _circle(r: float, n: int = 28) -> Poly:
    a = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.column_stack([r * np.cos(a), r * np.sin(a)])


def _star(outer: float = 0.66, inner: float = 0.27) -> tuple[Poly, ...]:
    """A five-pointed star, one point up, centred on its height."""
    a = np.radians(-90.0 + 36.0 * np.arange(10))
    r = np.where(np.arange(10) % 2 == 0, outer, inner)
    pts = np.column_stack([r * np.cos(a), r * np.sin(a)])
    pts[:, 1] += (outer - outer * math.cos(math.radians(36))) / 2
    return (pts,)


def _crown() -> tuple[Poly, ...]:
    """Three points over a band, and a bar under it."""
    body = np.array(
        [
            (-0.6, 0.3),
            (0.6, 0.3),
            (0.6, -0.46),
            (0.3, -0.08),
            (0.0, -0.62),
            (-0.3, -0.08),
            (-0.6, -0.46),
        ]
    )
    bar = np.array([(-0.6, 0.4), (0.6, 0.4), (0.6, 0.58), (-0.6, 0.58)])
    return body, bar


def _diamond() -> tuple[Poly, ...]:
    """A tall diamond outline with a small diamond in it."""
    unit = np.array([(0.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0)]) * (0.56, 0.72)
    return unit, unit * 0.62, unit * 0.3


def _shield() -> tuple[Poly, ...]:
    """A heater shield's outline (a flat top, sides curving in to a point) and a smaller
    shield in it."""
    # the right side below the top corners: an arc centred left of the middle, through
    # (0.52, 0) and the point (0, 0.66), so that the two sides meet at an angle
    c = (0.66**2 - 0.52**2) / (2 * 0.52)
    a = np.linspace(0.0, math.atan2(0.66, c), 8)
    right = np.column_stack([(0.52 + c) * np.cos(a) - c, (0.52 + c) * np.sin(a)])
    left = right[::-1] * (-1.0, 1.0)
    outline = np.vstack([[(-0.52, -0.56), (0.52, -0.56)], right, left[1:]])
    outline[:, 1] -= 0.05
    return outline, outline * 0.7, outline * 0.42


def _ring() -> tuple[Poly, ...]:
    return _circle(0.66), _circle(0.5)


def _letter_l() -> tuple[Poly, ...]:
    return (
        np.array(
            [(-0.2, -0.3), (-0.06, -0.3), (-0.06, 0.16), (0.22, 0.16), (0.22, 0.3), (-0.2, 0.3)]
        ),
    )


def _letter_b() -> tuple[Poly, ...]:
    """A blocky B: its outline and its two counters."""
    outline = np.array(
        [
            (-0.21, -0.32),
            (0.12, -0.32),
            (0.2, -0.24),
            (0.2, -0.07),
            (0.14, 0.0),
            (0.23, 0.07),
            (0.23, 0.24),
            (0.15, 0.32),
            (-0.21, 0.32),
        ]
    )
    upper = np.array([(-0.08, -0.2), (0.07, -0.2), (0.07, -0.07), (-0.08, -0.07)])
    lower = np.array([(-0.08, 0.07), (0.1, 0.07), (0.1, 0.2), (-0.08, 0.2)])
    return outline, upper, lower


_SHAPES: dict[str, tuple[Poly, ...]] = {
    "star": _star(),
    "crown": _crown(),
    "diamond": _diamond(),
    "shield": _shield(),
    "ring-l": _ring() + _letter_l(),
    "ring-b": _ring() + _letter_b(),
}
for _p in (p for polys in _SHAPES.values() for p in polys):
    _p.flags.writeable = False


def logo_polys(name: str) -> tuple[Poly, ...]:
    """The polygons of logo ``name`` (one of :data:`LOGOS`), in face units, to be filled
    together (even-odd)."""
    try:
        return _SHAPES[name]
    except KeyError:
        raise ValueError(f"unknown logo {name!r}; known: {', '.join(LOGOS)}") from None
