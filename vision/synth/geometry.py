"""Die and camera geometry: the cube's faces and pip layout, a die's pose in the world, and the
pinhole projection to pixels (as floats, or OpenCV's 1/16 px fixed point).

World units are millimetres: ``x`` right, ``y`` down the image, ``z`` up towards the camera.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vision.synth.model import Camera, DieSpec, PadStyle, Vec

# Die-local faces: value, outward normal, and two in-face axes. 1|6, 2|5, 3|4 are opposite.
_FACES: tuple[tuple[int, tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]], ...] = (
    (1, (0, 0, 1), (1, 0, 0), (0, 1, 0)),
    (6, (0, 0, -1), (1, 0, 0), (0, -1, 0)),
    (2, (1, 0, 0), (0, 1, 0), (0, 0, 1)),
    (5, (-1, 0, 0), (0, -1, 0), (0, 0, 1)),
    (3, (0, 1, 0), (-1, 0, 0), (0, 0, 1)),
    (4, (0, -1, 0), (1, 0, 0), (0, 0, 1)),
)
_NORMAL = {v: np.array(n, float) for v, n, _, _ in _FACES}

_D = 0.52  # pip offset from the face centre, in half-sides
PIP_LAYOUTS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
}
"""Each face's pips on a unit grid (-1, 0, 1 each way): the one pip layout every drawing of a
die uses -- the renders here, the drawn training patches, the tests' drawn dice."""
_PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    v: tuple((_D * x, _D * y) for x, y in layout) for v, layout in PIP_LAYOUTS.items()
}
_PIP_R = 0.19  # pip radius in half-sides
_CORNER_R = 0.22  # rounded-corner radius in half-sides


def _rounded_square(r: float, per_corner: int = 4) -> npt.NDArray[np.float64]:
    pts = []
    for k, (cx, cy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
        a0 = k * math.pi / 2
        for j in range(per_corner):
            a = a0 + (math.pi / 2) * j / (per_corner - 1)
            pts.append((cx * (1 - r) + r * math.cos(a), cy * (1 - r) + r * math.sin(a)))
    return np.array(pts)


_OUTLINE = _rounded_square(_CORNER_R)
_CIRCLE = np.array([(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 12, False)])
_SQUARE = np.array([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
_CUBE = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)


def _rot(axis: Sequence[float] | Vec, angle: float) -> Vec:
    """Rotation matrix about ``axis`` by ``angle`` radians (Rodrigues)."""
    a = np.asarray(axis, float)
    n = float(np.linalg.norm(a))
    if n < 1e-12 or angle == 0.0:
        return np.eye(3)
    x, y, z = a / n
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    out: Vec = np.eye(3) + s * k + (1 - c) * (k @ k)
    return out


def _align_to_up(n: Vec) -> Vec:
    """A rotation taking the unit vector ``n`` to +z."""
    up = np.array([0.0, 0.0, 1.0])
    d = float(np.dot(n, up))
    if d > 1 - 1e-9:
        return np.eye(3)
    if d < -1 + 1e-9:
        return _rot((1, 0, 0), math.pi)
    return _rot(np.cross(n, up), math.acos(d))


def orientation(spec: DieSpec) -> Vec:
    """World-from-die rotation of ``spec``: value up, then yaw, then tilt, then spin."""
    r = _align_to_up(_NORMAL[spec.value])
    r = _rot((0, 0, 1), math.radians(spec.yaw_deg)) @ r
    if spec.tilt_deg:
        d = math.radians(spec.tilt_dir_deg)
        r = _rot((-math.sin(d), math.cos(d), 0), math.radians(spec.tilt_deg)) @ r
    spin = np.asarray(spec.spin, float)
    angle = float(np.linalg.norm(spin))
    if angle > 0:
        r = _rot(spin, angle) @ r
    return r


@dataclass(frozen=True)
class _Pose:
    rot: Vec
    centre: Vec  # world mm
    half: float


def _pose(spec: DieSpec) -> _Pose:
    rot = orientation(spec)
    half = spec.size_mm / 2
    lowest = float(np.min((_CUBE * half) @ rot.T, axis=0)[2])
    return _Pose(rot, np.array([spec.xy_mm[0], spec.xy_mm[1], spec.lift_mm - lowest]), half)


class _Projector:
    def __init__(self, camera: Camera, size: tuple[int, int]) -> None:
        self.w, self.h = size
        self.f = camera.focal_px(self.w)
        self.height = camera.height_mm
        self.cx, self.cy = self.w / 2, self.h / 2

    def __call__(self, pts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        depth = np.maximum(self.height - pts[..., 2], 1.0)
        u = self.cx + self.f * pts[..., 0] / depth
        v = self.cy + self.f * pts[..., 1] / depth
        return np.stack([u, v], axis=-1)

    def ground_from_px(self, u: float, v: float) -> tuple[float, float]:
        return ((u - self.cx) * self.height / self.f, (v - self.cy) * self.height / self.f)

    def view_mm(self) -> tuple[float, float]:
        return (self.w * self.height / self.f, self.h * self.height / self.f)


def _pad_corners_mm(pad: PadStyle, grow: float = 0.0) -> npt.NDArray[np.float64]:
    w, h = pad.size_mm[0] / 2 + grow, pad.size_mm[1] / 2 + grow
    a = math.radians(pad.angle_deg)
    c, s = math.cos(a), math.sin(a)
    pts = np.array([(-w, -h), (w, -h), (w, h), (-w, h)])
    rot = pts @ np.array([[c, s], [-s, c]])
    out: Vec = rot + np.array(pad.centre_mm)
    return out


def _pad_polygon_px(pad: PadStyle, proj: _Projector, grow: float = 0.0) -> npt.NDArray[np.float64]:
    mm = _pad_corners_mm(pad, grow)
    return proj(np.column_stack([mm, np.zeros(4)]))


def _fix(pts: npt.NDArray[np.float64]) -> npt.NDArray[np.int32]:
    """Pixels to OpenCV's fixed point (1/16 px, ``shift=4``): sub-pixel edges, smooth motion."""
    return np.round(pts * 16).astype(np.int32)
