"""A camera anywhere above the table: tilted up to 45 degrees, turned and rolled, as phones and
bar cameras are really held; the straight-down :class:`~vision.synth.model.Camera` is its
special case (tilt 0, roll 0), so wide scenes share the dice geometry of :mod:`geometry`.

The table is the plane ``z = 0``; its picture is a homography of the ground, which is how the
surfaces are drawn (one warp of a texture tile) and how pixels are taken back to the table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vision.synth.model import Vec


@dataclass(frozen=True)
class View:
    """A pinhole ``distance_mm`` from ``target_mm`` on the table, its axis ``tilt_deg`` from the
    vertical, leaning towards ``azimuth_deg``, rolled ``roll_deg`` about its axis; the focal
    length is a fraction of the frame width (phones 0.7-0.9, webcams about 1)."""

    distance_mm: float = 400.0
    tilt_deg: float = 0.0
    azimuth_deg: float = 0.0
    roll_deg: float = 0.0
    focal_frac: float = 1.0
    target_mm: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        if not 0.0 <= self.tilt_deg < 80.0:
            raise ValueError("tilt_deg must be within [0, 80)")
        if not self.distance_mm > 0 or not self.focal_frac > 0:
            raise ValueError("distance_mm and focal_frac must be positive")


def _rz(a: float) -> Vec:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rx(a: float) -> Vec:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


class _ViewProjector:
    """World mm to pixels for a :class:`View` (``rot``: world-from-camera, columns the camera's
    x right, y down and z forward axes; ``eye``: the camera's position)."""

    def __init__(self, view: View, size: tuple[int, int]) -> None:
        self.w, self.h = size
        self.f = view.focal_frac * self.w
        self.cx, self.cy = self.w / 2, self.h / 2
        down = np.diag([1.0, 1.0, -1.0])  # straight down: x right, y down the image
        self.rot: Vec = (
            _rz(math.radians(view.azimuth_deg))
            @ _rx(math.radians(view.tilt_deg))
            @ down
            @ _rz(math.radians(view.roll_deg))
        )
        target = np.array([view.target_mm[0], view.target_mm[1], 0.0])
        self.eye: Vec = target - view.distance_mm * self.rot[:, 2]

    def __call__(self, pts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        cam = (pts - self.eye) @ self.rot
        depth = np.maximum(cam[..., 2], 1.0)
        return np.stack(
            [self.cx + self.f * cam[..., 0] / depth, self.cy + self.f * cam[..., 1] / depth],
            axis=-1,
        )

    def depth(self, pts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Distance along the optical axis (mm): what focus blur depends on."""
        out: npt.NDArray[np.float64] = (pts - self.eye) @ self.rot[:, 2]
        return out

    def to_plane(self, u: npt.ArrayLike, v: npt.ArrayLike, z: float = 0.0) -> Vec:
        """Where the rays through pixels ``(u, v)`` meet the plane at height ``z`` (mm)."""
        uu, vv = np.asarray(u, float), np.asarray(v, float)
        rays = np.stack([(uu - self.cx) / self.f, (vv - self.cy) / self.f, np.ones_like(uu)], -1)
        d = rays @ self.rot.T
        t = (z - self.eye[2]) / np.minimum(d[..., 2], -1e-6)
        out: Vec = self.eye + t[..., None] * d
        return out

    def homography(self) -> Vec:
        """The 3x3 map from table mm ``(x, y, 1)`` to pixels: the ground's picture."""
        k = np.array([[self.f, 0.0, self.cx], [0.0, self.f, self.cy], [0.0, 0.0, 1.0]])
        plane = np.column_stack([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], -self.eye])
        out: Vec = k @ self.rot.T @ plane
        return out
