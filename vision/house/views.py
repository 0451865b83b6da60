"""The patch the value network is shown of a die already read: what the house keeps of it."""

from __future__ import annotations

import math

from vision.classify import cut_die
from vision.nets import U8
from vision.params import DetectorParams
from vision.reading import DieReading


def turn_of(die: DieReading) -> float:
    """The top face's turn (degrees, [-45, 45)) from its corners (``vision.face.square_corners``
    puts the second corner at the turn from the first)."""
    (x0, y0), (x1, y1) = die.corners_xy[0], die.corners_xy[1]
    return (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0


def view_at(
    image: U8,
    center_xy: tuple[float, float],
    extent_px: float,
    angle_deg: float,
    params: DetectorParams,
) -> U8:
    """The patch ``read_roll`` shows the value network of a die centred at ``center_xy`` whose
    axis-aligned extent is ``extent_px`` and whose face is turned ``angle_deg``."""
    return cut_die(
        image,
        center_xy,
        extent_px * params.crop_scale,
        params.crop_px,
        turned=params.turned_patches,
        margin=params.turned_margin,
        angle_deg=angle_deg,
    ).view


def die_view(image: U8, die: DieReading, params: DetectorParams) -> U8:
    """The patch ``read_roll`` showed the value network for ``die`` (its size is the top
    face's side, its extent that side's axis-aligned span at its turn)."""
    angle = turn_of(die)
    a = math.radians(angle)
    return view_at(
        image, die.center_xy, die.size_px * (abs(math.cos(a)) + abs(math.sin(a))), angle, params
    )
