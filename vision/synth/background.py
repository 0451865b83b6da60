"""The empty, lit pad: felt, rail and wooden table with the lighting's gain, cast and gradient,
and (``PadStyle.markers_mm``) the four corner-marker cards stuck on the table.

A scene's background depends on its pad, camera and light only, so it is drawn once and cached:
every frame of a throw reuses it.
"""

from __future__ import annotations

import functools
import math

import cv2
import numpy as np
import numpy.typing as npt

from vision.markers import UNIT_SQUARE, card_cells, card_side_mm
from vision.synth.geometry import _pad_corners_mm, _pad_polygon_px, _Projector
from vision.synth.model import BGR, Camera, Image, Lighting, PadStyle

_PAPER: BGR = (236, 238, 240)
_INK: BGR = (30, 30, 32)
_CARD_SAMPLES = 4
"""Samples per pixel side on a marker card: anti-aliased card edges and cells."""


def _noise(rng: np.random.Generator, h: int, w: int, cell: float) -> npt.NDArray[np.float32]:
    """Smooth noise of roughly unit spread with features about ``cell`` px across."""
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    small = rng.standard_normal((gh, gw)).astype(np.float32)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC), np.float32)


def _lighting_map(lighting: Lighting, size: tuple[int, int]) -> npt.NDArray[np.float32]:
    """Per-pixel BGR gain: overall gain, colour cast and the linear gradient."""
    w, h = size
    d = math.radians(lighting.gradient_dir_deg)
    xs = (np.arange(w, dtype=np.float32) / max(w - 1, 1) - 0.5) * math.cos(d)
    ys = (np.arange(h, dtype=np.float32) / max(h - 1, 1) - 0.5) * math.sin(d)
    ramp = 1.0 + lighting.gradient * (ys[:, None] + xs[None, :])
    cast = np.array(lighting.cast, np.float32) * lighting.gain
    return (ramp[:, :, None] * cast[None, None, :]).astype(np.float32)


@functools.lru_cache(maxsize=16)
def _background(
    pad: PadStyle, camera: Camera, lighting: Lighting, size: tuple[int, int]
) -> tuple[Image, npt.NDArray[np.float32]]:
    """The lit, empty pad (cached: the same pad is drawn in every frame of a sequence)."""
    w, h = size
    proj = _Projector(camera, size)
    rng = np.random.default_rng(pad.seed)
    scale = w / 640
    grain = _noise(rng, h, w, 60 * scale) * 0.5 + _noise(rng, h, w, 3 * scale)
    rows = np.arange(h, dtype=np.float32)[:, None] / (7 * scale)
    wood = np.sin(rows + 3 * _noise(rng, h, w, 90))
    rail_mask = np.zeros((h, w), np.uint8)
    rail = np.round(_pad_polygon_px(pad, proj, pad.rail_mm) * 16).astype(np.int32)
    cv2.fillPoly(rail_mask, [rail], 1, cv2.LINE_8, 4)
    pad_mask = np.zeros((h, w), np.uint8)
    inner = np.round(_pad_polygon_px(pad, proj) * 16).astype(np.int32)
    cv2.fillPoly(pad_mask, [inner], 1, cv2.LINE_8, 4)
    around = np.where(rail_mask > 0, 0.0, 10 * wood) + 4 * grain
    outside = (
        np.where(
            (rail_mask > 0)[:, :, None],
            np.array(pad.rail_colour, np.float32),
            np.array(pad.table_colour, np.float32),
        )
        + around[:, :, None]
    )
    felt = np.array(pad.colour, np.float32) * (1 + 0.06 * pad.texture * grain)[:, :, None]
    img = np.where((pad_mask > 0)[:, :, None], felt, outside)
    if pad.markers_mm > 0:
        _stick_markers(img, pad, proj)
    gain = _lighting_map(lighting, size)
    out = np.clip(img * gain, 0, 255).astype(np.uint8)
    out.flags.writeable = False
    gain.flags.writeable = False
    return out, gain


def _stick_markers(img: npt.NDArray[np.float32], pad: PadStyle, proj: _Projector) -> None:
    """Print the four corner-marker cards on the table (z = 0) in ``img``, as
    :mod:`vision.markers` tells the owner: each outside its pad corner, its inner corner on
    the pad's, upright with the pad (marker 0 at the pad's first corner, then round it)."""
    corners = _pad_corners_mm(pad)
    centre = corners.mean(axis=0)
    ex = (corners[1] - corners[0]) / np.linalg.norm(corners[1] - corners[0])
    ey = (corners[3] - corners[0]) / np.linalg.norm(corners[3] - corners[0])
    side = card_side_mm(pad.markers_mm)
    for marker_id, corner in enumerate(corners):
        # the card runs outwards from the pad's corner: its printed top-left is a card's side
        # back along each of the pad's axes that points inwards there
        inwards_x, inwards_y = np.dot(corner - centre, ex) < 0, np.dot(corner - centre, ey) < 0
        top_left = corner - side * (inwards_x * ex + inwards_y * ey)
        mm = top_left + side * (UNIT_SQUARE[:, :1] * ex + UNIT_SQUARE[:, 1:] * ey)
        px = proj(np.column_stack([mm, np.zeros(len(mm))]))
        _paint_card(img, card_cells(marker_id), px)


def _paint_card(
    img: npt.NDArray[np.float32], cells: npt.NDArray[np.bool_], px: npt.NDArray[np.float64]
) -> None:
    """Paint a card whose printed corners (top-left first, clockwise) land at ``px``: every
    pixel near it is sampled back onto the card through the inverse homography."""
    h, w = img.shape[:2]
    x0, y0 = np.maximum(np.floor(px.min(axis=0)).astype(int) - 1, 0)
    x1, y1 = np.minimum(np.ceil(px.max(axis=0)).astype(int) + 2, [w, h])
    if x1 <= x0 or y1 <= y0:
        return
    square = UNIT_SQUARE.astype(np.float32)
    back = np.linalg.inv(cv2.getPerspectiveTransform(square, px.astype(np.float32)))
    k = _CARD_SAMPLES
    xs = x0 + (np.arange((x1 - x0) * k) + 0.5) / k - 0.5  # sample points, pixel centres at ints
    ys = y0 + (np.arange((y1 - y0) * k) + 0.5) / k - 0.5
    gx, gy = np.meshgrid(xs, ys)
    hom = back @ np.stack([gx.ravel(), gy.ravel(), np.ones(gx.size)])
    u, v = (hom[:2] / hom[2]).reshape(2, *gx.shape)
    on_card = (u >= 0) & (u < 1) & (v >= 0) & (v < 1)
    n = len(cells)
    inked = cells[np.clip((v * n).astype(int), 0, n - 1), np.clip((u * n).astype(int), 0, n - 1)]
    colour = np.where(
        (on_card & inked)[:, :, None], np.array(_INK, np.float32), np.array(_PAPER, np.float32)
    )
    shape = (y1 - y0, k, x1 - x0, k)
    alpha = on_card.reshape(shape).mean(axis=(1, 3))[:, :, None]
    paint = (colour * on_card[:, :, None]).reshape(*shape[:2], *shape[2:], 3).sum(axis=(1, 3))
    roi = img[y0:y1, x0:x1]
    img[y0:y1, x0:x1] = roi * (1 - alpha) + paint / (k * k)
