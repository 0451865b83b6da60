"""What each die shows: a scale-normalised patch around every candidate, classified by the value
network into "not a die" or 1-6.

The same :func:`die_patch` cuts the training patches (``bench/train_vision.py``), so training and
reading see identical pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.nets import F32, NOT_A_DIE, U8, run, to_blob


def die_patch(
    frame: U8,
    center_xy: tuple[float, float],
    side_px: float,
    out_px: int,
    *,
    angle_deg: float = 0.0,
) -> U8:
    """The square of side ``side_px`` frame px centred on ``center_xy`` (turned by
    ``angle_deg``), resampled to ``out_px`` x ``out_px``; edges replicate outside the frame."""
    cx, cy = center_xy
    m = cv2.getRotationMatrix2D((cx, cy), angle_deg, out_px / max(side_px, 1e-3))
    m[0, 2] += out_px / 2.0 - cx
    m[1, 2] += out_px / 2.0 - cy
    patch = cv2.warpAffine(
        frame, m, (out_px, out_px), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(patch, dtype=np.uint8)


@dataclass(frozen=True)
class ValueGuess:
    """The value network's verdict on one patch."""

    value: int  # 1-6, the most probable face
    probability: float  # of that value
    not_die: float  # probability that the patch is not centred on a die


def softmax(logits: F32) -> F32:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)


def classify(net: cv2.dnn.Net, patches: Sequence[U8]) -> list[ValueGuess]:
    """One :class:`ValueGuess` per patch (all patches the same size)."""
    if not patches:
        return []
    probs = softmax(run(net, to_blob(list(patches))))
    out = []
    for p in probs:
        faces = p[NOT_A_DIE + 1 :]
        best = int(np.argmax(faces))
        out.append(ValueGuess(best + 1, float(faces[best]), float(p[NOT_A_DIE])))
    return out
