"""The empty, lit pad: felt, rail and wooden table with the lighting's gain, cast and gradient.

A scene's background depends on its pad, camera and light only, so it is drawn once and cached:
every frame of a throw reuses it.
"""

from __future__ import annotations

import functools
import math

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.geometry import _pad_polygon_px, _Projector
from vision.synth.model import Camera, Image, Lighting, PadStyle


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
    gain = _lighting_map(lighting, size)
    out = np.clip(img * gain, 0, 255).astype(np.uint8)
    out.flags.writeable = False
    gain.flags.writeable = False
    return out, gain
