"""Where the dice are: the locator network's centre heat map turned into die candidates.

The network sees the frame shrunk to a fixed working size (dice then span roughly 12-60 px) and
predicts, per 4 x 4 cell, the probability that a die centre lies there, the centre's sub-cell
offset and the die's size. Local maxima above a threshold are the candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.nets import (
    F32,
    LOCATOR_MULTIPLE,
    LOCATOR_STRIDE,
    SIZE_UNIT_PX,
    U8,
    NetArg,
    run,
    to_blob,
)


@dataclass(frozen=True)
class Candidate:
    """A probable die: centre and axis-aligned size in frame px, and the centre probability."""

    center_xy: tuple[float, float]
    size_px: float
    score: float


def locator_input(frame: U8, long_side_px: int) -> tuple[U8, float]:
    """The frame resized for the locator and padded (bottom/right, black) to a multiple of 8;
    returns the image and the frame-to-input scale."""
    h, w = frame.shape[:2]
    scale = long_side_px / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    small = cv2.resize(frame, (nw, nh), interpolation=interp)
    pw, ph = -nw % LOCATOR_MULTIPLE, -nh % LOCATOR_MULTIPLE
    if pw or ph:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_CONSTANT, value=(0, 0, 0))
    return np.ascontiguousarray(small), scale


def decode(maps: F32, scale: float, threshold: float) -> list[Candidate]:
    """Heat-map local maxima (3 x 3) above ``threshold`` -> candidates in frame px.

    ``maps`` is the locator output for one image: (4, H, W) = centre logit, x and y offset
    within the cell (0-1), log size.
    """
    heat = 1.0 / (1.0 + np.exp(-maps[0]))
    peaks = (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat > threshold)
    ys, xs = np.nonzero(peaks)
    out = []
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        cx = (x + float(maps[1, y, x])) * LOCATOR_STRIDE / scale
        cy = (y + float(maps[2, y, x])) * LOCATOR_STRIDE / scale
        size = float(np.exp(maps[3, y, x])) * SIZE_UNIT_PX / scale
        out.append(Candidate((cx, cy), size, float(heat[y, x])))
    out.sort(key=lambda c: -c.score)
    return out


def locate(frame: U8, net: NetArg, *, long_side_px: int, threshold: float) -> list[Candidate]:
    """Die candidates in ``frame`` (BGR uint8), strongest first."""
    small, scale = locator_input(frame, long_side_px)
    maps = run(net, to_blob([small]))[0]
    return decode(maps, scale, threshold)
