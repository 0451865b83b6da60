"""Dice drawn with known truth, for the vision tests (flat, clean, any colours and turn)."""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.synth.geometry import PIP_LAYOUTS


def draw_die(
    img: np.ndarray,
    center: tuple[float, float],
    side: float,
    value: int,
    *,
    angle_deg: float = 0.0,
    body: tuple[int, int, int] = (235, 235, 235),
    pip: tuple[int, int, int] = (20, 20, 20),
) -> None:
    """Draw a flat die seen from straight above onto ``img`` (BGR, in place), anti-aliased by
    drawing at 4x and shrinking."""
    s = 4
    cx, cy = center
    a = math.radians(angle_deg)
    c, si = math.cos(a), math.sin(a)

    def at(dx: float, dy: float) -> tuple[int, int]:
        return (round((cx + dx * c - dy * si) * s), round((cy + dx * si + dy * c) * s))

    h, w = img.shape[:2]
    big = cv2.resize(img, (w * s, h * s), interpolation=cv2.INTER_NEAREST)
    half = side / 2
    r = 0.12 * side  # rounded corners
    outline = []
    for k in range(4):
        ox, oy = [
            (half - r, half - r),
            (-(half - r), half - r),
            (-(half - r), -(half - r)),
            (half - r, -(half - r)),
        ][k]
        for t in range(0, 91, 10):
            ang = math.radians(90 * k + t)
            outline.append(at(ox + r * math.cos(ang), oy + r * math.sin(ang)))
    cv2.fillPoly(big, [np.array(outline, np.int32)], body, cv2.LINE_AA)
    shade = tuple(int(v * 0.8) for v in body)
    cv2.polylines(big, [np.array(outline, np.int32)], True, shade, max(1, s), cv2.LINE_AA)
    for px, py in PIP_LAYOUTS[value]:
        cv2.circle(
            big,
            at(px * 0.27 * side, py * 0.27 * side),
            round(0.085 * side * s),
            pip,
            -1,
            cv2.LINE_AA,
        )
    img[...] = cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA)


def table(w: int = 320, h: int = 240, colour: tuple[int, int, int] = (90, 120, 80)) -> np.ndarray:
    """A plain textured table top (BGR) with a little noise, reproducible."""
    rng = np.random.default_rng(1)
    img = np.empty((h, w, 3), np.uint8)
    img[...] = colour
    noise = rng.normal(0, 4, (h, w, 1))
    return np.clip(img + noise, 0, 255).astype(np.uint8)
