"""A tray's walls: a mat with ``Mat.wall_mm`` stands in a tray whose four walls rise from its
edges, topped by a rim ``Mat.border_mm`` wide. A camera above the floor sees each wall's inner
face, behind the dice; a camera off to one side sees the outer face of the wall nearest it,
which hides the floor (and dice) just inside it. So each wall is drawn either before the dice
or after them, and the dice of a walled tray lie inside it (see :func:`inside`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vision.synth.surfaces import Mat
from vision.synth.view import _ViewProjector


@dataclass(frozen=True)
class Wall:
    """One wall as drawn: its face and rim polygons (px), the world normal of the face seen
    and a point on it, and whether that face is the outer one (drawn over the dice)."""

    face: npt.NDArray[np.float64]
    rim: npt.NDArray[np.float64]
    normal: npt.NDArray[np.float64]
    at: npt.NDArray[np.float64]
    outer: bool


def walls(mat: Mat, proj: _ViewProjector) -> list[Wall]:
    """The four walls of ``mat``'s tray (none when it has no walls)."""
    if mat.wall_mm <= 0:
        return []
    inner = mat.corners_mm()
    outer = mat.corners_mm(max(mat.border_mm, 2.0))
    centre = inner.mean(axis=0)
    z = mat.wall_mm
    out = []
    for i in range(4):
        a, b = inner[i], inner[(i + 1) % 4]
        mid = (a + b) / 2
        out_n = mid - centre  # outward, in the table's plane
        out_n = out_n / np.linalg.norm(out_n)
        at = np.array([mid[0], mid[1], z / 2])
        to_eye = proj.eye - at
        outer_seen = float(out_n @ to_eye[:2]) > 0
        ground = np.array([[a[0], a[1], 0.0], [b[0], b[1], 0.0], [b[0], b[1], z], [a[0], a[1], z]])
        oa, ob = outer[i], outer[(i + 1) % 4]
        if outer_seen:  # the outer face stands at the rim's outer edge
            ground = np.array(
                [[oa[0], oa[1], 0.0], [ob[0], ob[1], 0.0], [ob[0], ob[1], z], [oa[0], oa[1], z]]
            )
        rim = np.array([[a[0], a[1], z], [b[0], b[1], z], [ob[0], ob[1], z], [oa[0], oa[1], z]])
        normal = np.array([*(out_n if outer_seen else -out_n), 0.0])
        out.append(Wall(proj(ground), proj(rim), normal, at, outer_seen))
    return out


def inside(mat: Mat, xy: tuple[float, float], margin: float) -> bool:
    """Whether ``xy`` (mm) lies on ``mat`` at least ``margin`` in from its edges."""
    a = math.radians(mat.angle_deg)
    dx, dy = xy[0] - mat.centre_mm[0], xy[1] - mat.centre_mm[1]
    lx, ly = dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a)
    return min(mat.size_mm[0] / 2 - abs(lx), mat.size_mm[1] / 2 - abs(ly)) >= margin
