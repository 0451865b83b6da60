"""Where the dice are: the locator network's centre heat map turned into die candidates.

The network sees the frame shrunk to a fixed working size (dice then span roughly 12-60 px) and
predicts, per 4 x 4 cell, the probability that a die centre lies there, the centre's sub-cell
offset and the die's size. Local maxima above a threshold are the candidates.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Sequence
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
    small = _shrunk(frame, nw, nh)
    pw, ph = -nw % LOCATOR_MULTIPLE, -nh % LOCATOR_MULTIPLE
    if pw or ph:
        small = np.asarray(
            cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_CONSTANT, value=(0, 0, 0)), np.uint8
        )
    return np.ascontiguousarray(small), scale


def _shrunk(frame: U8, nw: int, nh: int) -> U8:
    """``frame`` resized to ``nw`` x ``nh``: by a whole factor, the area average (OpenCV's fast
    path); by any other, the area average by the whole part of the factor, then bilinear.

    Why: OpenCV's area average by a fractional factor costs 10-20x its whole-factor one (a
    640 px frame to 376: 2.3 ms against 0.1 for 320, more than the locator's own extra time),
    and the locator was trained on bilinear resamplings at every scale (``train_vision``'s
    crops), so the fractional part read bilinearly is what it knows."""
    h, w = frame.shape[:2]
    if nw >= w or nh >= h:
        return np.asarray(cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_LINEAR), np.uint8)
    k = min(w // nw, h // nh)
    if w == k * nw and h == k * nh:
        return np.asarray(cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_AREA), np.uint8)
    if k >= 2:  # whole blocks only: the crop keeps the origin, so the scale stays 1 / k
        block = frame[: (h // k) * k, : (w // k) * k]
        frame = np.asarray(cv2.resize(block, (w // k, h // k), interpolation=cv2.INTER_AREA))
    return np.asarray(cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_LINEAR), np.uint8)


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


def located_die_px(found: Sequence[Candidate], *, strong: float, weak: float) -> float | None:
    """The dice's typical located size (axis-aligned extent, frame px) among ``found``: the
    median of the peaks at least ``strong`` sure of a die centre, or failing any, of those at
    least ``weak``; None when there are none."""
    for floor in (strong, weak):
        sizes = [c.size_px for c in found if c.score >= floor]
        if sizes:
            return float(statistics.median(sizes))
    return None


def scaled_long_side(
    frame_shape: tuple[int, ...], die_px: float, trained_die_px: float, bounds: tuple[int, int]
) -> int:
    """The locator input's long side (a multiple of ``LOCATOR_MULTIPLE`` within ``bounds``)
    that shows dice of ``die_px`` frame px at ``trained_die_px``, the size the locator learnt
    them at."""
    long_side = max(frame_shape[:2]) * trained_die_px / max(die_px, 1.0)
    lo, hi = bounds
    side = LOCATOR_MULTIPLE * round(long_side / LOCATOR_MULTIPLE)
    return int(min(max(side, lo), hi))


def rescaled(side: int, wanted: int, tolerance: float) -> bool:
    """Whether ``wanted`` differs from ``side`` by more than ``tolerance`` (a share of it)."""
    return abs(math.log(wanted / side)) > math.log1p(tolerance)


class DieSizeMemory:
    """A fixed camera's dice size, learnt from its own readings: what ``read_roll`` is given as
    ``die_px`` so that its locator looks once, at the right scale, instead of first looking to
    measure the dice.

    It learns only from reads that measured the dice themselves (given no ``die_px``), the
    median of the last ``keep``; one read in ``every`` is such a read, so a camera moved to
    another height is relearnt. A read given the size reports that size back, so learning from
    it would only echo it. Another frame size starts afresh."""

    def __init__(self, *, keep: int = 15, every: int = 10, need: int = 3) -> None:
        if keep < 1 or every < 1 or not 1 <= need <= keep:
            raise ValueError("keep >= need >= 1 and every >= 1 needed")
        self._every, self._need = every, need
        self._sizes: deque[float] = deque(maxlen=keep)
        self._shape: tuple[int, ...] = ()
        self._reads = 0

    def die_px(self, frame_shape: tuple[int, ...]) -> float | None:
        """The size to give the next read of a frame of ``frame_shape`` (None: let it measure)."""
        if tuple(frame_shape[:2]) != self._shape:
            self._shape, self._reads = tuple(frame_shape[:2]), 0
            self._sizes.clear()
        self._reads += 1
        if len(self._sizes) < self._need or self._reads % self._every == 0:
            return None
        return float(statistics.median(self._sizes))

    def learn(self, given: float | None, measured: float | None) -> None:
        """What a read given ``given`` (from :meth:`die_px`) measured as the dice's size."""
        if given is None and measured is not None:
            self._sizes.append(measured)
