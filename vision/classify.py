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

from vision.face import face_angle, face_side
from vision.nets import F32, NOT_A_DIE, U8, NetArg, run, to_blob


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
class DieCut:
    """A located die cut out: the axis-aligned patch (colour, flags' geometry), the turn of its
    top face and the patch the value network is shown."""

    patch: U8
    angle_deg: float
    view: U8


def cut_die(
    frame: U8,
    center_xy: tuple[float, float],
    extent_px: float,
    out_px: int,
    *,
    turned: bool,
    margin: float = 1.0,
    angle_deg: float | None = None,
) -> DieCut:
    """Cut a die of axis-aligned extent ``extent_px`` and find its face's turn; with ``turned``
    the value network's patch is the top face turned square to the patch and cut to the face's
    side, so the pips land on a grid and a die turned 45 degrees fills the patch like one at 0
    (the axis-aligned cut gives it 30 % fewer pixels per pip, and every turn to learn);
    ``margin`` x the face's side is cut, so a centre pulled towards a side face keeps its pips.
    ``angle_deg`` is the face's turn when already known (a second cut of the same die).
    """
    patch = die_patch(frame, center_xy, extent_px, out_px)
    angle = face_angle(patch) if angle_deg is None else angle_deg
    if not turned:
        return DieCut(patch, angle, patch)
    side = face_side(extent_px, angle) * margin
    return DieCut(patch, angle, die_patch(frame, center_xy, side, out_px, angle_deg=angle))


@dataclass(frozen=True)
class ValueGuess:
    """The value network's verdict on one patch."""

    value: int  # 1-6, the most probable face
    probability: float  # of that value, given that the patch shows a die
    not_die: float  # probability that the patch is not centred on a die
    faces: tuple[float, ...] = ()  # P(1..6 | a die), when the whole distribution is known

    @property
    def confidence(self) -> float:
        """How surely the cut shows a die centred in it *and* which face (0-1): the reading's
        ``confidence``, and what the reader's floors compare."""
        return self.probability * (1.0 - self.not_die)

    @property
    def candidates(self) -> tuple[tuple[int, float], ...]:
        """The two most probable values with their probabilities, best first (the value alone
        when only it is known)."""
        if len(self.faces) != 6:
            return ((self.value, self.probability),)
        order = sorted(range(6), key=lambda k: -self.faces[k])[:2]
        return tuple((k + 1, float(self.faces[k])) for k in order)


def softmax(logits: F32) -> F32:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)


def classify(
    net: NetArg, patches: Sequence[U8], *, views: int = 1, sure: float = 1.0
) -> list[ValueGuess]:
    """One :class:`ValueGuess` per patch (all patches the same size).

    With ``views`` 2 or 4 a patch is also seen turned by 90 (and 180, 270) degrees and the
    probabilities averaged: a die's value does not depend on its turn, the network's small
    mistakes do, so they average out. Only patches whose first look is unsure get the extra
    views -- those whose most probable class (of "not a die" and 1-6) is below ``sure`` -- so
    the clear majority of dice costs one view (``sure=1.0``: every patch gets every view).
    """
    if not patches:
        return []
    if views not in (1, 2, 4):
        raise ValueError(f"views must be 1, 2 or 4, got {views}")
    probs = softmax(run(net, to_blob([np.ascontiguousarray(p) for p in patches])))
    if views > 1:
        unsure = [i for i, p in enumerate(probs) if float(p.max()) < sure]
        if unsure:
            batch = [
                np.ascontiguousarray(np.rot90(patches[i], k))
                for k in range(1, views)
                for i in unsure
            ]
            more = softmax(run(net, to_blob(batch))).reshape(views - 1, len(unsure), -1)
            probs[unsure] = (probs[unsure] + more.sum(axis=0)) / views
    out = []
    for p in probs:
        faces = p[NOT_A_DIE + 1 :]
        best = int(np.argmax(faces))
        share = float(faces[best] / max(float(faces.sum()), 1e-9))
        shares = faces / max(float(faces.sum()), 1e-9)
        out.append(
            ValueGuess(best + 1, share, float(p[NOT_A_DIE]), tuple(float(f) for f in shares))
        )
    return out
