"""Camera faults applied to a finished frame: motion blur, blur, exposure, sensor noise, JPEG.

Noise comes from random windows of one cached block, so a noisy frame costs a slice and an add.
"""

from __future__ import annotations

import functools
import math

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.model import Degrade, Image


@functools.lru_cache(maxsize=8)
def _noise_bank(sigma: float, size: tuple[int, int]) -> npt.NDArray[np.int16]:
    """A large block of Gaussian noise; frames take random windows of it (cheap, independent)."""
    w, h = size
    bank = np.random.default_rng(12345).normal(0, sigma, (h + 64, w + 64, 3))
    out = np.round(bank).astype(np.int16)
    out.flags.writeable = False
    return out


def _degrade(img: Image, deg: Degrade, rng: np.random.Generator) -> Image:
    if deg.motion_px >= 1:
        n = round(deg.motion_px) | 1
        k = np.zeros((n, n), np.float32)
        a = math.radians(deg.motion_dir_deg)
        c = n // 2
        cv2.line(
            k,
            (round(c - math.cos(a) * c), round(c - math.sin(a) * c)),
            (round(c + math.cos(a) * c), round(c + math.sin(a) * c)),
            1.0,
            1,
        )
        img = np.asarray(cv2.filter2D(img, -1, k / k.sum()), np.uint8)
    if deg.blur_sigma > 0:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), deg.blur_sigma), np.uint8)
    if deg.exposure != 1.0:
        img = np.asarray(cv2.convertScaleAbs(img, alpha=deg.exposure), np.uint8)
    if deg.noise_sigma > 0:
        h, w = img.shape[:2]
        bank = _noise_bank(round(deg.noise_sigma, 2), (w, h))
        oy, ox = int(rng.integers(0, 64)), int(rng.integers(0, 64))
        img = np.asarray(cv2.add(img, bank[oy : oy + h, ox : ox + w], dtype=cv2.CV_8U), np.uint8)
    if deg.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(deg.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        if decoded is None:
            raise RuntimeError("JPEG decoding failed")
        img = np.asarray(decoded, np.uint8)
    return img
