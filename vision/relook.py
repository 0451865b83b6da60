"""Second looks, with the cut shifted, at dice the value network reads without conviction.

Why: the locator's peak is not always on the top face's centre. On a 2 it can sit on a pip, a
third of a side off, and the cut around it loses the far pip: a clean 1. Looking again a
quarter side away towards each corner of the face finds the 2. A corner counts only when every
shift towards it reads 2 (``DetectorParams.relook_accept``): a single shifted look at a real 1
can take in a pip of a neighbour or of a side face and read 2.

The same off-centre peak hurts other faces too: a cut a quarter side off takes in a
neighbour's pip or loses one of its own. The value network learnt off-centre cuts as "not a
die", so such a cut shows itself; :func:`recentred` looks again a small step away in the eight
directions of the face and keeps the look that is most surely a centred die.

The locator can also size a die as one of its pips (a 2 read as 1): :func:`undersized` looks
again at the size of the frame's other dice, around the peak.

Tried and not kept: the same search (towards the edges too) for candidates the first look
narrowly takes for "not a die" (p 0.25-0.6). On flat renders it found 1-2 missed dice per
3500 and one held-out matteop65 die, but on the flag scenes it also "found" 13 side faces of
dice tilted 23-40 degrees whose top face the locator missed, read as unflagged dice of the
wrong value (against 27 right); requiring a consistent pip layout (``vision.pipsize``) of the
face it found removed those and every gain with them. Tried again with :func:`recentred`'s
eight looks (0.15 sides) on candidates at "not a die" 0.25-0.5, a look taken only when all but
sure (not a die <= 0.05, value >= 0.9): 2 of 6994 clean render dice more right and no photo
changed, but on the flag scenes 2 of its 8 finds in trays were tilted dice read unflagged. A
die missed is asked for again (the pad service's count check); a tilted die read flat is scored.

Tried and not kept either: every unsure die (value below 0.9) looked around as well, its cut
centred or not: on held-out nellbyler_d6 photos the best of eight looks changed 4 values
rightly and 6 wrongly; mirrored views of an unsure die (the network never saw a mirrored die):
3 rightly, 5 wrongly; the die moved to the best look, not only read from it: the flags then
judge a tilted die where its side face reads best, and passed one the camera-view test flags.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from vision.classify import DieCut, ValueGuess, classify, die_patch
from vision.face import face_angle, face_side
from vision.house.views import view_at
from vision.locate import Candidate
from vision.nets import U8, Nets
from vision.params import DetectorParams

Point = tuple[float, float]

CORNERS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
"""Directions towards the face's corners, in the face's own axes."""

AROUND = ((1, 0), (-1, 0), (0, 1), (0, -1), *CORNERS)
"""Directions towards the face's edges and corners, in the face's own axes."""


def shifted_centre(
    center_xy: Point, side_px: float, angle_deg: float, direction: tuple[int, int], shift: float
) -> Point:
    """``center_xy`` moved ``shift`` face sides along ``direction`` of a face turned by
    ``angle_deg`` (the axes of ``vision.classify.cut_die``'s turned patch)."""
    a = math.radians(angle_deg)
    u, v = direction[0] * shift * side_px, direction[1] * shift * side_px
    return (
        center_xy[0] + u * math.cos(a) - v * math.sin(a),
        center_xy[1] + u * math.sin(a) + v * math.cos(a),
    )


def _shifted_view(
    image: U8,
    candidate: Candidate,
    cut: DieCut,
    direction: tuple[int, int],
    shift: float,
    params: DetectorParams,
) -> U8:
    """The value network's patch of a located die cut again ``shift`` face sides towards
    ``direction`` of its face (turned as the first cut found it)."""
    side = face_side(candidate.size_px, cut.angle_deg)
    centre = shifted_centre(candidate.center_xy, side, cut.angle_deg, direction, shift)
    return view_at(image, centre, candidate.size_px, cut.angle_deg, params)


def _looks(
    image: U8,
    found: Sequence[Candidate],
    cuts: Sequence[DieCut],
    which: Sequence[int],
    nets: Nets,
    params: DetectorParams,
) -> list[list[list[ValueGuess]]]:
    """For each die in ``which``, per corner, the guesses of the cuts shifted towards it by
    each of ``params.relook_shifts`` (all dice in one classifier batch)."""
    patches = [
        _shifted_view(image, found[i], cuts[i], d, shift, params)
        for i in which
        for d in CORNERS
        for shift in params.relook_shifts
    ]
    flat = classify(nets.value, patches, views=params.relook_views, sure=params.value_sure)
    k = len(params.relook_shifts)
    per_die = len(CORNERS) * k
    return [
        [flat[n * per_die + j * k : n * per_die + (j + 1) * k] for j in range(len(CORNERS))]
        for n in range(len(which))
    ]


def unsure_ones(
    image: U8,
    found: Sequence[Candidate],
    cuts: Sequence[DieCut],
    guesses: Sequence[ValueGuess],
    nets: Nets,
    params: DetectorParams,
) -> list[ValueGuess]:
    """``guesses`` with the dice read as 1 without conviction (``DetectorParams.ones_unsure``)
    read as 2 where the shifted looks towards one corner all say 2
    (``DetectorParams.relook_accept``). Only a 2 loses a pip into a clean 1 (any other face
    that loses one shows a valid face of one pip fewer), so only a 2 can overrule."""
    which = [
        i
        for i, g in enumerate(guesses)
        if g.value == 1
        and g.probability < params.ones_unsure
        and g.not_die <= params.reject_not_die
    ]
    out = list(guesses)
    if not which or not params.relook_shifts:
        return out

    def p2(g: ValueGuess) -> float:
        return g.probability if g.value == 2 and g.not_die <= params.reject_not_die else 0.0

    for i, by_corner in zip(which, _looks(image, found, cuts, which, nets, params), strict=True):
        best = max(float(np.mean([p2(g) for g in looks])) for looks in by_corner)
        if best >= params.relook_accept:
            faces = (1.0 - best, best, 0.0, 0.0, 0.0, 0.0)  # a 1 or, surely, a 2
            out[i] = replace(out[i], value=2, probability=best, faces=faces)
    return out


def centred(guess: ValueGuess) -> float:
    """How surely a look shows a die centred in the cut *and* which face it is (0-1): the value
    network's "not a die" class is trained on cuts off a die's centre, so it grades centring."""
    return guess.confidence


def recentred(
    image: U8,
    found: Sequence[Candidate],
    cuts: Sequence[DieCut],
    guesses: Sequence[ValueGuess],
    nets: Nets,
    params: DetectorParams,
    *,
    skip: frozenset[int] = frozenset(),
) -> list[ValueGuess]:
    """``guesses`` with each die whose cut looks off its face's centre ("not a die" above
    ``DetectorParams.recentre_not_die``, yet kept as a die) read from the best of the looks
    ``recentre_step`` sides towards its face's edges and corners: the one most surely a
    centred die (:func:`centred`), if it is more so and less "not a die" than the first. Dice
    in ``skip`` (settled by another look) keep theirs.

    Only the reading moves, not the die: the flags judge a die where the locator put it, as
    they were trained to, and the look that reads a tilted die best can lie towards its side.
    A die whose cut is centred is never looked at again, however unsure its value: on the
    marbled dice of nellbyler_d6 the best of eight looks at such a die changes its value as
    often wrongly as rightly. Candidates dropped as "not a die" are not looked at either:
    looking around them finds the side faces of tilted dice whose top face the locator
    missed."""
    out = list(guesses)
    which = [
        i
        for i, g in enumerate(guesses)
        if i not in skip
        and params.recentre_not_die < g.not_die <= params.not_die_limit(found[i].score)
    ]
    if not which or params.recentre_step <= 0:
        return out
    whose = [i for i in which for _ in AROUND]
    patches = [
        _shifted_view(image, found[i], cuts[i], d, params.recentre_step, params)
        for i in which
        for d in AROUND
    ]
    looks = classify(nets.value, patches, views=params.relook_views, sure=params.value_sure)
    for i, g in zip(whose, looks, strict=True):
        if g.not_die < out[i].not_die and centred(g) > centred(out[i]):
            out[i] = g
    return out


def undersized(
    image: U8,
    found: Sequence[Candidate],
    cuts: Sequence[DieCut],
    guesses: Sequence[ValueGuess],
    nets: Nets,
    params: DetectorParams,
    *,
    skip: frozenset[int] = frozenset(),
) -> list[ValueGuess]:
    """``guesses`` with each die read without conviction (under ``value_sure``) and sized under
    ``DetectorParams.undersized`` x the median face side of the frame's other dice (two or
    more) read again at that side: from the best of the looks on its centre and
    ``undersized_step`` sides towards its face's edges and corners (:func:`centred`), if that
    look is all but sure (``recentre_not_die``, ``value_sure``), more so than the first, and
    not centred on another located die (then this one is a pip of that die). Dice in ``skip``
    keep theirs.

    Why: the locator can peak on one pip of a die and size it as that pip; the cut, that small,
    shows a clean 1 (a 2's pip) or a corner of a face. One set of dice under one camera looks
    the same size across the frame, so the others say how big a die really is. A die read
    surely is left alone: a photo may mix dice sets, and a look at a bigger size around a
    smaller die takes in its neighbours' pips. Only the reading moves, not the die (as in
    :func:`recentred`)."""
    out = list(guesses)
    if params.undersized <= 0 or len(found) < 3:
        return out
    sides = [face_side(c.size_px, cut.angle_deg) for c, cut in zip(found, cuts, strict=True)]
    whose: list[int] = []
    centres: list[Point] = []
    refs: dict[int, float] = {}
    patches: list[U8] = []
    for i, c in enumerate(found):
        ref = float(np.median(sides[:i] + sides[i + 1 :]))
        if (
            i in skip
            or guesses[i].probability >= params.value_sure
            or sides[i] >= params.undersized * ref
        ):
            continue
        angle = face_angle(die_patch(image, c.center_xy, ref * math.sqrt(2), params.crop_px))
        extent = ref * (abs(math.cos(math.radians(angle))) + abs(math.sin(math.radians(angle))))
        refs[i] = ref
        for d in ((0, 0), *AROUND):
            centre = shifted_centre(c.center_xy, ref, angle, d, params.undersized_step)
            centres.append(centre)
            patches.append(view_at(image, centre, extent, angle, params))
            whose.append(i)
    if not patches:
        return out
    looks = classify(nets.value, patches, views=params.relook_views, sure=params.value_sure)
    best: dict[int, tuple[ValueGuess, Point]] = {}
    for i, g, at in zip(whose, looks, centres, strict=True):
        if i not in best or centred(g) > centred(best[i][0]):
            best[i] = (g, at)
    for i, (g, at) in best.items():
        if any(  # the look found another die: this one is a pip of it
            j != i and math.dist(at, found[j].center_xy) < 0.5 * refs[i] for j in range(len(found))
        ):
            continue
        if (
            g.not_die <= params.recentre_not_die
            and g.probability >= params.value_sure
            and centred(g) > centred(out[i])
        ):
            out[i] = g
    return out


def seen_whole(
    image: U8,
    dice: Sequence[tuple[Candidate, float]],
    nets: Nets,
    params: DetectorParams,
) -> list[bool]:
    """For each ``(candidate, face turn)`` of a die read as 1 whose lone pip the pip count
    found engulfed in the body's colour (``PipCount.engulfed``): whether the 1 holds when the
    die is seen whole -- the value network, shown cuts ``DetectorParams.whole_scales`` times
    the located size around the same centre, reads 1 in every one at ``value_sure`` or more,
    all but sure each is a die (``whole_not_die``).

    Why: the engulfed test asks about any 1 whose body colour runs on past the located face,
    which is what a pip of a bigger die taken for a die looks like -- and also what a real 1
    looks like when the locator sized it small (a third of the dice asked about on one photo
    source nobody trained on). A bigger cut settles it: around a pip of a 2 or a 4 it takes in
    the die's other pips, off its centre, and reads them (or "not a die"); around a real 1 it
    still shows one pip in the middle of one face."""
    if not dice or not params.whole_scales:
        return [False] * len(dice)
    patches = [
        view_at(image, c.center_xy, c.size_px * scale, angle, params)
        for c, angle in dice
        for scale in params.whole_scales
    ]
    looks = classify(nets.value, patches, views=params.relook_views, sure=params.value_sure)
    k = len(params.whole_scales)
    sure, not_die = params.value_sure, params.whole_not_die
    return [
        all(
            g.value == 1 and g.probability >= sure and g.not_die <= not_die
            for g in looks[n * k : (n + 1) * k]
        )
        for n in range(len(dice))
    ]
