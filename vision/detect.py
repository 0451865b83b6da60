"""``read_roll``: every die in a frame with its value, geometry, colour and flags.

Pipeline: the locator network proposes die centres and sizes (``vision.locate``); each one is cut
out as a scale-normalised patch and the value network says "not a die" or 1-6
(``vision.classify``); the face's turn gives its corners (``vision.face``) and the body its colour
name (``vision.colour``); :func:`_judge_flags` decides the flags. Detection never draws
(``vision.annotate`` does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.classify import DieCut, ValueGuess, classify, cut_die
from vision.colour import body_colour
from vision.face import face_side, square_corners
from vision.flags import DieView, judge_all
from vision.locate import Candidate, locate
from vision.nets import U8, Nets, load_nets
from vision.params import DetectorParams
from vision.reading import DieFlag, DieReading, Pad, Reading

_DEFAULT = DetectorParams()


@dataclass(frozen=True)
class DieGeometry:
    """Everything known about one die before its flags are judged (what Vision II's cocked and
    stacked checks get to look at)."""

    candidate: Candidate  # locator output: centre, axis-aligned extent (frame px), score
    patch: U8  # the crop_px x crop_px BGR patch around the die, axis-aligned
    angle_deg: float  # turn of the top face, [-45, 45)
    side_px: float  # top-face side in frame px
    corners_xy: tuple[tuple[float, float], ...]  # top-face corners in frame px
    guess: ValueGuess  # value network verdict


def as_bgr(frame: np.ndarray) -> U8:
    """Check a frame and return it as contiguous 3-channel uint8 BGR (grey and BGRA accepted)."""
    if not isinstance(frame, np.ndarray):
        raise TypeError(f"frame must be a numpy array, got {type(frame).__name__}")
    if frame.dtype != np.uint8:
        raise ValueError(f"frame must be uint8, got {frame.dtype}")
    if frame.ndim == 2:
        frame = np.repeat(frame[:, :, None], 3, axis=2)
    elif frame.ndim != 3 or frame.shape[2] not in (3, 4):
        raise ValueError(f"frame must be HxW, HxWx3 or HxWx4, got shape {frame.shape}")
    elif frame.shape[2] == 4:
        frame = frame[:, :, :3]
    if frame.shape[0] < 8 or frame.shape[1] < 8:
        raise ValueError(f"frame too small: {frame.shape[1]}x{frame.shape[0]}")
    return np.ascontiguousarray(frame)


def read_roll(
    frame: np.ndarray, *, pad: Pad | None = None, params: DetectorParams = _DEFAULT
) -> Reading:
    """Every die in ``frame`` (BGR uint8, any size; no calibration needed).

    With a ``pad`` dice whose centre lies outside it are flagged ``OFF_PAD``; a die whose value
    is not confidently readable has ``value=None`` and ``UNREADABLE``.
    """
    image = as_bgr(frame)
    nets = load_nets(params.models_dir)
    with nets.lock:
        found = locate(
            image,
            nets.locator,
            long_side_px=params.locator_long_side_px,
            threshold=params.peak_threshold,
        )
        found = _distinct(found, params.min_center_distance)
        cuts = [
            cut_die(
                image,
                c.center_xy,
                c.size_px * params.crop_scale,
                params.crop_px,
                turned=params.turned_patches,
                margin=params.turned_margin,
            )
            for c in found
        ]
        guesses = classify(
            nets.value, [c.view for c in cuts], views=params.value_views, sure=params.value_sure
        )
        if params.ones_unsure > 0 and params.turned_patches:
            guesses = _look_again_at_unsure_ones(image, found, cuts, guesses, nets, params)
    dice = [
        _geometry(c, cut, g)
        for c, cut, g in zip(found, cuts, guesses, strict=True)
        if g.not_die <= params.reject_not_die
    ]
    readings = []
    for die in dice:
        value = die.guess.value if die.guess.probability >= params.min_value_confidence else None
        reading = DieReading(
            value=value,
            center_xy=die.candidate.center_xy,
            corners_xy=die.corners_xy,
            size_px=die.side_px,
            colour=body_colour(die.patch),
            confidence=die.guess.probability * (1.0 - die.guess.not_die),
        )
        readings.append(reading)
    marks = _judge_flags(image, dice, readings, pad, params)
    readings = [replace(r, flags=f) for r, f in zip(readings, marks, strict=True)]
    readings.sort(key=lambda d: (d.center_xy[1], d.center_xy[0]))
    h, w = image.shape[:2]
    return Reading(tuple(readings), (w, h))


def _look_again_at_unsure_ones(
    image: U8,
    found: Sequence[Candidate],
    cuts: Sequence[DieCut],
    guesses: list[ValueGuess],
    nets: Nets,
    params: DetectorParams,
) -> list[ValueGuess]:
    """Dice read as 1 without conviction, looked at again with the cut shifted towards each
    corner of the face (``DetectorParams.ones_unsure``, ``ones_shifts``, ``ones_accept``): a 2
    when every shift towards one corner reads 2.

    The locator's peak on a 2 can sit on one of its pips, a third of a side off the face's
    centre; the cut then loses the far pip and shows a clean 1. Only a 2 fails that way (a
    face that loses a pip elsewhere shows a valid face of one pip fewer, not a 1), so only a
    2 can overrule; a real 1 shifted still shows one pip."""
    unsure = [
        i
        for i, g in enumerate(guesses)
        if g.value == 1
        and g.probability < params.ones_unsure
        and g.not_die <= params.reject_not_die
    ]
    if not unsure or not params.ones_shifts:
        return guesses
    corners = ((1, 1), (1, -1), (-1, 1), (-1, -1))
    looks = []
    for i in unsure:
        side = face_side(found[i].size_px, cuts[i].angle_deg)
        a = math.radians(cuts[i].angle_deg)
        cos, sin = math.cos(a), math.sin(a)
        cx, cy = found[i].center_xy
        for su, sv in corners:
            for f in params.ones_shifts:
                u, v = su * f * side, sv * f * side  # along the patch's axes: the face's
                centre = (cx + u * cos - v * sin, cy + u * sin + v * cos)
                looks.append(
                    cut_die(
                        image,
                        centre,
                        found[i].size_px * params.crop_scale,
                        params.crop_px,
                        turned=params.turned_patches,
                        margin=params.turned_margin,
                        angle_deg=cuts[i].angle_deg,
                    ).view
                )
    again = classify(nets.value, looks, views=params.value_views, sure=params.value_sure)
    p2 = np.array(
        [
            g.probability if g.value == 2 and g.not_die <= params.reject_not_die else 0.0
            for g in again
        ]
    ).reshape(len(unsure), len(corners), len(params.ones_shifts))
    out = list(guesses)
    for i, by_corner in zip(unsure, p2.mean(axis=2), strict=True):
        if float(by_corner.max()) >= params.ones_accept:
            out[i] = replace(out[i], value=2, probability=float(by_corner.max()))
    return out


def _distinct(found: list[Candidate], min_distance: float) -> list[Candidate]:
    """Drop weaker candidates closer than ``min_distance`` x the smaller size to a stronger one."""
    kept: list[Candidate] = []
    for c in found:  # strongest first
        if all(
            (c.center_xy[0] - k.center_xy[0]) ** 2 + (c.center_xy[1] - k.center_xy[1]) ** 2
            >= (min_distance * min(c.size_px, k.size_px)) ** 2
            for k in kept
        ):
            kept.append(c)
    return kept


def _geometry(candidate: Candidate, cut: DieCut, guess: ValueGuess) -> DieGeometry:
    side = face_side(candidate.size_px, cut.angle_deg)
    corners = square_corners(candidate.center_xy, side, cut.angle_deg)
    return DieGeometry(candidate, cut.patch, cut.angle_deg, side, corners, guess)


def _judge_flags(
    frame: U8,
    dice: Sequence[DieGeometry],
    readings: Sequence[DieReading],
    pad: Pad | None,
    params: DetectorParams,
) -> list[frozenset[DieFlag]]:
    """The flags of every die, in order: UNREADABLE and OFF_PAD from the reading and the pad,
    COCKED / STACKED from ``vision.flags`` (all dice of the frame in one batched pass)."""
    views = [DieView(d.candidate.center_xy, d.side_px, d.angle_deg) for d in dice]
    values = [r.value for r in readings]
    judged = judge_all(frame, views, values=values, pad=pad, params=params.flags)
    out = []
    for reading, marks in zip(readings, judged, strict=True):
        flags = set(marks)
        if reading.value is None:
            flags.add(DieFlag.UNREADABLE)
        if pad is not None and not pad.contains(reading.center_xy, margin=params.off_pad_margin_px):
            flags.add(DieFlag.OFF_PAD)
        out.append(frozenset(flags))
    return out
