"""``read_roll``: every die in a frame with its value, geometry, colour and flags.

Pipeline: the locator network proposes die centres and sizes (``vision.locate``); each one is cut
out as a scale-normalised patch and the value network says "not a die" or 1-6
(``vision.classify``), with second looks at the unsure (``vision.relook``); the face's turn
gives its corners (``vision.face``) and the body its colour name (``vision.colour``);
:func:`_judge_flags` decides the flags. Detection never draws (``vision.annotate`` does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.classify import DieCut, ValueGuess, classify, cut_die
from vision.colour import body_colour
from vision.face import face_side, square_corners
from vision.flags import DieView, judge
from vision.house.judging import held_whole, house_floor, rescued
from vision.house.model import HouseGuess, HouseModel, look
from vision.house.views import view_at
from vision.locate import Candidate, locate, located_die_px, rescaled, scaled_long_side
from vision.nets import U8, Nets, load_nets
from vision.params import DetectorParams
from vision.pipcount import PipCount, count_cut, cut_faces
from vision.pipfind import load_finder, with_found
from vision.reading import DieFlag, DieReading, FaceSize, Pad, Reading
from vision.relook import recentred, seen_whole, undersized, unsure_ones
from vision.trust import Verdict, Why, overrule, verdict

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
    frame: np.ndarray,
    *,
    pad: Pad | None = None,
    params: DetectorParams = _DEFAULT,
    house: HouseModel | None = None,
    die_px: float | None = None,
) -> Reading:
    """Every die in ``frame`` (BGR uint8, any size; no calibration needed).

    ``die_px``: the dice's size in this camera's frames (axis-aligned extent, px), when known
    -- a fixed camera's ``Reading.located_die_px`` of an earlier frame: the locator then looks
    once, at the scale it learnt dice at (``DetectorParams.locator_rescale``), instead of
    looking first to find the dice's size.

    With a ``pad`` dice whose centre lies outside it are flagged ``OFF_PAD``; a die whose value
    is not confidently readable has ``value=None`` and ``UNREADABLE``. With a ``house`` model
    (``vision.house``: fitted on this house's own dice, on the same value network) a die like
    the dice it was taught is read by it, and what it is sure is not a die is dropped.
    """
    image = as_bgr(frame)
    nets = load_nets(params.models_dir)
    if die_px is not None and not (math.isfinite(die_px) and die_px > 0):
        raise ValueError(f"die_px must be a positive size in px, got {die_px}")
    with nets.lock:
        found, located_px = _located(image, nets, params, die_px)
        dice = dice_at(image, found, nets, params, house=house)
    if params.pip_reach > 0:
        dice = _without_pips_of_other_dice(dice, params.pip_reach)
    judged: list[HouseGuess | None] = [None] * len(dice)
    floor = house_floor(house, params)
    if house is not None and dice:
        with nets.lock:
            views = [
                view_at(image, d.candidate.center_xy, d.candidate.size_px, d.angle_deg, params)
                for d in dice
            ]
            judged = list(house.judge(*look(nets.value, views)))
        # a die the house is sure is not one goes, unless the base reader alone was sure of
        # its value: a die of a set never taught may look like the house's mat more than
        # like its dice, never like a die the network knows
        kept = [
            i
            for i, (d, g) in enumerate(zip(dice, judged, strict=True))
            if g is None
            or not (g.best == 0 and g.judges(floor))
            or d.guess.confidence >= params.min_value_confidence
        ]
        dice, judged = [dice[i] for i in kept], [judged[i] for i in kept]
    counts: list[PipCount | None] = [None] * len(dice)
    if params.pip_count:
        cuts = cut_faces(image, [(d.candidate.center_xy, d.side_px, d.angle_deg) for d in dice])
        counts = list(count_cut(cuts))
        if params.pip_finder:  # where a count can matter: below it the die is asked anyway
            wanted = [d.guess.confidence >= params.agreed_value_confidence for d in dice]
            counts = with_found(load_finder(params.models_dir), cuts, counts, wanted)
        counts = _whole_ones(image, dice, counts, nets, params, house)
    readings = []
    for die, judgement, count in zip(dice, judged, counts, strict=True):
        told = verdict(
            die.guess,
            count,
            alone=params.min_value_confidence,
            agreed=params.agreed_value_confidence,
        )
        told = overrule(
            told,
            judgement,
            count,
            floor=floor,
            not_die=die.guess.not_die,
            net_sure_of=die.guess.value
            if die.guess.confidence >= params.min_value_confidence
            else None,
        )
        if told.why is not Why.HOUSE and params.unknown(die.candidate.score, die.guess.not_die):
            # a face the network does not know is asked -- unless the house was taught it
            told = Verdict(None, told.candidates, Why.UNKNOWN)
        reading = DieReading(
            value=told.value,
            center_xy=die.candidate.center_xy,
            corners_xy=die.corners_xy,
            size_px=die.side_px,
            colour=body_colour(die.patch),
            confidence=judgement.sure
            if told.why is Why.HOUSE and judgement is not None
            else die.guess.confidence,
            candidates=told.candidates,
            why=told.why,
        )
        readings.append(reading)
    marks = _judge_flags(image, dice, readings, pad, params)
    readings = [
        replace(r, flags=m.flags, flag_confidence=m.flag_confidence, face=m.face)
        for r, m in zip(readings, marks, strict=True)
    ]
    readings.sort(key=lambda d: (d.center_xy[1], d.center_xy[0]))
    h, w = image.shape[:2]
    return Reading(tuple(readings), (w, h), located_px)


def _whole_ones(
    image: U8,
    dice: Sequence[DieGeometry],
    counts: list[PipCount | None],
    nets: Nets,
    params: DetectorParams,
    house: HouseModel | None = None,
) -> list[PipCount | None]:
    """``counts`` with each engulfed lone pip read as 1 that holds seen whole
    (``vision.relook.seen_whole``; or, with a ``house`` model, that the house judges a 1 in
    every one of those cuts: a logo ace it was taught) counted as a clean 1."""
    which = [
        i
        for i, (d, c) in enumerate(zip(dice, counts, strict=True))
        if c is not None and c.engulfed and d.guess.value == 1
    ]
    if not which:
        return counts
    with nets.lock:
        located = [(dice[i].candidate, dice[i].angle_deg) for i in which]
        whole = seen_whole(image, located, nets, params)
        if house is not None and not all(whole):
            whole = held_whole(image, located, whole, nets, params, house)
    out = list(counts)
    for i, ok in zip(which, whole, strict=True):
        count = out[i]
        if ok and count is not None:
            out[i] = replace(count, value=1, engulfed=False)
    return out


def _located(
    image: U8, nets: Nets, params: DetectorParams, die_px: float | None
) -> tuple[list[Candidate], float | None]:
    """The locator's candidates in ``image``, looked for at the scale that shows dice of
    ``die_px`` at the size the locator was trained at (``DetectorParams.locator_rescale``);
    without ``die_px``, a first look at ``locator_long_side_px`` measures it. Also the dice's
    size the look was scaled for (None: not known)."""
    threshold = min(params.peak_threshold, params.faint_peak_threshold)
    side = params.locator_long_side_px
    trained = nets.trained_die_px if params.locator_rescale else None
    first = None
    if trained is None or die_px is None:
        first = locate(image, nets.locator, long_side_px=side, threshold=threshold)
        die_px = located_die_px(
            first, strong=params.strong_peak_threshold, weak=params.peak_threshold
        )
        if trained is None or die_px is None:
            return first, die_px
    bounds = (params.locator_min_side_px, params.locator_max_side_px)
    wanted = scaled_long_side(image.shape, die_px, trained, bounds)
    within = not rescaled(side, wanted, params.locator_rescale_tolerance)
    if first is not None and within:
        return first, die_px
    if first is None and within and wanted > side:  # enlarging costs; within the trained
        wanted = side  # sizes it buys little -- shrinking saves time as well
    return locate(image, nets.locator, long_side_px=wanted, threshold=threshold), die_px


def dice_at(
    image: U8,
    found: Sequence[Candidate],
    nets: Nets,
    params: DetectorParams,
    *,
    house: HouseModel | None = None,
) -> list[DieGeometry]:
    """The dice among the located candidates ``found`` (strongest first): each cut out and
    read, those the value network takes for "not a die" dropped, the unsure looked at again
    (``vision.relook``), then duplicates dropped. Call with ``nets.lock`` held.

    Duplicates are settled among dice only, where the second looks put them: a stronger peak
    off the face's centre, which is "not a die", must not hide a weaker one on the centre."""
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
    if house is not None:  # what the base network takes for no die may be a house die
        guesses = rescued(found, cuts, guesses, nets, params, house)
    kept = [
        i
        for i, (c, g) in enumerate(zip(found, guesses, strict=True))
        if g.not_die <= params.not_die_limit(c.score) or params.unknown(c.score, g.not_die)
    ]
    found, cuts, guesses = (
        [found[i] for i in kept],
        [cuts[i] for i in kept],
        [guesses[i] for i in kept],
    )
    # a strong peak kept although its cut hesitated (``strong_peak_not_die``) ranks after the
    # dice whose cut was surely a die: off a face's centre towards a side face, it must not
    # hide a weaker peak on the centre as a duplicate
    hesitant = [g.not_die > params.reject_not_die for g in guesses]
    if params.turned_patches:  # the second looks cut turned patches
        first = guesses
        if params.ones_unsure > 0:
            guesses = unsure_ones(image, found, cuts, guesses, nets, params)
        settled = frozenset(i for i, g in enumerate(guesses) if g is not first[i])
        guesses = undersized(image, found, cuts, guesses, nets, params, skip=settled)
        settled = frozenset(i for i, g in enumerate(guesses) if g is not first[i])
        guesses = recentred(image, found, cuts, guesses, nets, params, skip=settled)
    # a die the network does not know (``DetectorParams.unknown_peak``) ranks after all others
    unknown = [params.unknown(c.score, g.not_die) for c, g in zip(found, guesses, strict=True)]
    order = sorted(range(len(found)), key=lambda i: (unknown[i], hesitant[i], -found[i].score))
    ranked = [found[i] for i in order]
    dice = [
        _geometry(found[order[k]], cuts[order[k]], guesses[order[k]])
        for k in _distinct(ranked, params.min_center_distance)
    ]
    return _outside_other_faces(dice, params)


def _without_pips_of_other_dice(dice: list[DieGeometry], reach: float) -> list[DieGeometry]:
    """``dice`` less those read as 1 within ``reach`` face sides of a stronger detection read
    as 2 (``DetectorParams.pip_reach``): a second locator peak on a pip of that die. Only a
    2's pip, cut out alone, is a clean 1 (its other pip is 0.74 sides away, outside the cut);
    a die read as 1 beside a 4 or 6 may be a cocked 1 whose side face is the stronger
    detection."""

    def pip_of(die: DieGeometry, other: DieGeometry) -> bool:
        return (
            other is not die
            and other.guess.value == 2
            and other.candidate.score > die.candidate.score
            and math.dist(die.candidate.center_xy, other.candidate.center_xy)
            < reach * other.side_px
        )

    return [d for d in dice if d.guess.value != 1 or not any(pip_of(d, o) for o in dice)]


def _distinct(found: Sequence[Candidate], min_distance: float) -> list[int]:
    """Indices of ``found`` (strongest first) less the weaker candidates closer than
    ``min_distance`` x the smaller size to a stronger one kept."""
    kept: list[int] = []
    for i, c in enumerate(found):
        if all(
            (c.center_xy[0] - found[k].center_xy[0]) ** 2
            + (c.center_xy[1] - found[k].center_xy[1]) ** 2
            >= (min_distance * min(c.size_px, found[k].size_px)) ** 2
            for k in kept
        ):
            kept.append(i)
    return kept


def _outside_other_faces(dice: list[DieGeometry], params: DetectorParams) -> list[DieGeometry]:
    """``dice`` (strongest peak first) less those whose centre lies within ``inside_face``
    face sides of a stronger die's centre (``faint_peak_reach`` for a faint peak): the locator
    peaked on a pip of that die, and a pip cut out with its die around it reads as a die.
    Another flat die's centre is at least a side away, and a die on a die shows its face
    beside the one below."""
    kept: list[DieGeometry] = []
    for die in dice:
        reach = (
            params.inside_face
            if die.candidate.score >= params.peak_threshold
            else params.faint_peak_reach
        )
        if all(
            math.dist(die.candidate.center_xy, k.candidate.center_xy)
            >= reach * max(die.side_px, k.side_px)
            for k in kept
        ):
            kept.append(die)
    return kept


def _geometry(candidate: Candidate, cut: DieCut, guess: ValueGuess) -> DieGeometry:
    side = face_side(candidate.size_px, cut.angle_deg)
    corners = square_corners(candidate.center_xy, side, cut.angle_deg)
    return DieGeometry(candidate, cut.patch, cut.angle_deg, side, corners, guess)


@dataclass(frozen=True)
class _Marks:
    flags: frozenset[DieFlag]
    flag_confidence: tuple[tuple[DieFlag, float], ...]
    face: FaceSize | None


def _judge_flags(
    frame: U8,
    dice: Sequence[DieGeometry],
    readings: Sequence[DieReading],
    pad: Pad | None,
    params: DetectorParams,
) -> list[_Marks]:
    """What :func:`read_roll` adds to every die, in order, as ``DieReading`` fields: the flags
    (UNREADABLE and OFF_PAD from the reading and the pad, COCKED / STACKED from
    ``vision.flags``, all dice of the frame in one batched pass), how sure each COCKED /
    STACKED is, and the top face as the flags measured it from its pips, if they did."""
    views = [DieView(d.candidate.center_xy, d.side_px, d.angle_deg) for d in dice]
    # the pips' layout the flags measure is the network's best guess, given or asked: a tilted
    # die is often one the reader asks about, and its squeezed layout is what shows the tilt
    values = [
        d.guess.value if d.guess.probability >= params.layout_confidence else None for d in dice
    ]
    judged = judge(
        frame,
        views,
        values=values,
        pad=pad,
        params=params.flags,
        pad_margin_px=params.off_pad_margin_px,
    )
    out = []
    for reading, evidence in zip(readings, judged, strict=True):
        sure: dict[DieFlag, float] = {}  # each judged flag, as sure as its surest cue
        for d in evidence.decisions(params.flags):
            sure[d.flag] = max(sure.get(d.flag, 0.0), d.confidence)
        flags = set(sure)
        if reading.value is None:
            flags.add(DieFlag.UNREADABLE)
        if pad is not None and not pad.contains(reading.center_xy, margin=params.off_pad_margin_px):
            flags.add(DieFlag.OFF_PAD)
        out.append(_Marks(frozenset(flags), tuple(sorted(sure.items())), evidence.face))
    return out
