"""The patch the value network is shown of a die already read: what the house keeps of it."""

from __future__ import annotations

import math

from vision.classify import cut_die
from vision.face import face_side
from vision.nets import U8
from vision.params import DetectorParams
from vision.reading import DieReading


def turn_of(die: DieReading) -> float:
    """The top face's turn (degrees, [-45, 45)) from its corners (``vision.face.square_corners``
    puts the second corner at the turn from the first)."""
    (x0, y0), (x1, y1) = die.corners_xy[0], die.corners_xy[1]
    return (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0


def die_view(image: U8, die: DieReading, params: DetectorParams) -> U8:
    """The patch ``read_roll`` showed the value network for ``die`` (its size is the top
    face's side; the cut is its axis-aligned extent times ``crop_scale``)."""
    angle = turn_of(die)
    a = math.radians(angle)
    extent = die.size_px * (abs(math.cos(a)) + abs(math.sin(a)))
    assert abs(face_side(extent, angle) - die.size_px) < 1e-6 * max(1.0, die.size_px)
    return cut_die(
        image,
        die.center_xy,
        extent * params.crop_scale,
        params.crop_px,
        turned=params.turned_patches,
        margin=params.turned_margin,
        angle_deg=angle,
    ).view
