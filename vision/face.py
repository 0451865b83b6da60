"""Top-face geometry of a located die: its turn angle and four corners.

A die face is a square, so the image gradients along its outline repeat every 90 degrees; the
magnitude-weighted mean of the gradient direction taken four times (a "4-fold structure tensor")
gives the face's turn without finding a single edge, and round pips add nothing to it.
"""

from __future__ import annotations

import functools
import math

import cv2
import numpy as np
import numpy.typing as npt

from vision.nets import U8

Point = tuple[float, float]


@functools.cache
def _weight(h: int, w: int) -> npt.NDArray[np.float32]:
    """A Gaussian fall-off from the patch's centre (one per patch shape: every die's patch is
    the same size, and building it took a third of :func:`face_angle`'s time)."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xx - (w - 1) / 2) ** 2 + (yy - (h - 1) / 2) ** 2) / (0.5 * min(h, w)) ** 2
    weight: npt.NDArray[np.float32] = np.exp(-r2)
    weight.flags.writeable = False
    return weight


def face_angle(patch: U8) -> float:
    """Turn of the square in ``patch`` (BGR or grey), in degrees within [-45, 45)."""
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY) if patch.ndim == 3 else patch
    g = grey.astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    # sum of |g|^2 e^{4i phi} over the patch, weighted to favour the die over its neighbours
    # near the border: (gx + i gy)^4 / |g|^2 in real float32 parts (a + ib = (gx + i gy)^2),
    # summed by BLAS dot products; 3x faster than in complex128 and within 1e-5 degrees
    gx2, gy2 = gx * gx, gy * gy
    a, b = gx2 - gy2, 2.0 * gx * gy
    w = (_weight(*g.shape) / (gx2 + gy2 + 1e-6)).ravel()
    re = float(np.dot((a * a - b * b).ravel(), w))
    im = float(np.dot((2.0 * a * b).ravel(), w))
    if math.hypot(re, im) < 1e-6:
        return 0.0
    angle = math.degrees(math.atan2(im, re)) / 4.0
    return (angle + 45.0) % 90.0 - 45.0


def face_side(extent_px: float, angle_deg: float) -> float:
    """Side of a square turned by ``angle_deg`` whose axis-aligned extent is ``extent_px``."""
    a = math.radians(angle_deg)
    return extent_px / (abs(math.cos(a)) + abs(math.sin(a)))


def square_corners(center: Point, side: float, angle_deg: float) -> tuple[Point, ...]:
    """The four corners (clockwise in image coordinates, from the top-left one when unturned)."""
    cx, cy = center
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    half = side / 2
    out = []
    for dx, dy in ((-half, -half), (half, -half), (half, half), (-half, half)):
        out.append((cx + dx * c - dy * s, cy + dx * s + dy * c))
    return tuple(out)
