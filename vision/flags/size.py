"""The cues measured from a die's pips (``vision.pipsize``): its top face's size against the flat
dice's (``size_cues``: a die on a die is nearer the camera) and its pip layout's proportions
(``squeeze_cues``: a tilted face is foreshortened).

The size scalar the network sees is weak: a die on a die is only 4-8 % nearer a camera
280-370 mm up, within the reader's spread of sides (the figures are in
``bench/bench_synth.py``'s stack cues). So the size is also measured properly, from the pips
(``vision.pipsize``, about 1 %), for the dice the model leaves unsure (:func:`size_cues`,
``Evidence.larger``): it adds 11-20 points to the rendered dice squarely on another
caught end to end (56 / 55 / 56 % by the earlier model alone; clean, degraded and tray scenes).
A die on a die often hides the only other die: then the flat size the pad has learnt from
settled rolls stands in for the flat dice beside it (``Pad.flat_side_px``), and once it is
learnt every die flagged neither is measured against it, whatever the model says: dice
squarely on another flagged 87 / 83 / 85 % without it, 93 / 87 / 90 % with it
(``bench/bench_synth.py --only learnt``; over it and two more seeds 93.4 / 85.5 / 91.1 %,
where measuring only the unsure dice against it made 91.2 / 86.1 / 90.0 %). The same
measurement tells a tilt: a 4, 5 or 6 whose pips spread wider one way than a flat face's is
foreshortened (:func:`squeeze_cues`); for the few dice the model finds somewhat tilted but
does not flag, that catches dice tilted in the open pad, where the model is weakest (open-pad
tilted dice flagged 66 -> 69 %, no flat die more). It also names the flag of a lone die the
model is sure is stacked: with no die in reach that is a die squarely on a die it hides, or a
die tilted alone, which looks the same to it; a die on a die lies flat on it, so squeezed pips
make it COCKED instead of STACKED (``Evidence.alone_stack``; the same re-roll, the right
word on the phone: open-pad tilted dice called COCKED 26 -> 32 %, called STACKED though on no
die 18.5 -> 16.5 %, every recall and false flag otherwise unchanged).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from vision import pipsize
from vision.flags.dice import DieView, _distinct
from vision.flags.evidence import Evidence
from vision.flags.params import FlagParams
from vision.reading import DieFlag, FaceSize, Pad

U8 = npt.NDArray[np.uint8]


def squeeze_cues(
    frame: U8,
    dice: Sequence[DieView],
    values: Sequence[int | None],
    evidence: Sequence[Evidence],
    params: FlagParams = FlagParams(),
    *,
    pad: Pad | None = None,
    measured: dict[int, FaceSize | None] | None = None,
) -> list[bool]:
    """Per die: its pips' layout is squeezed one way, as a tilt foreshortens it ("a pip layout
    that fits no flat face"): a 4, 5 or 6 measured well (``vision.pipsize``) whose layout is
    ``FlagParams.squeeze`` or more off a flat face's proportions. Only where the pad shows the
    camera square on (a camera at a slant foreshortens every flat face), and only for the dice
    the model finds somewhat tilted (``FlagParams.squeeze_gate``) but flags neither COCKED nor
    STACKED -- or only STACKED, alone (:meth:`Evidence.alone_stack`): few, so few are
    measured.

    Why: the model learnt tilted dice leaning on the rail or on a die, and misses many a die
    tilted in the open pad (on a crumb, a coin). On those renders (``bench/bench_synth.py``'s
    open pad) this catches 13 of the 66 missed tilted 4-6s and flags none of the flat dice
    measured on any rendered set (it measures under 4 % of the dice there, under 1 % on the
    others)."""
    out = [False] * len(dice)
    want = [
        i
        for i, e in enumerate(evidence)
        if values[i] in (4, 5, 6)
        and e.cocked >= params.squeeze_gate
        and _unflagged_or_alone_stack(e, params)
    ]
    if not want or not pipsize.square_on(pad):  # in that order: most frames have no such die
        return out
    cache = {} if measured is None else measured
    for i in want:
        size = _face_size(cache, frame, dice, values, i)
        out[i] = (
            size is not None
            and size.fits
            and size.squeeze is not None
            and abs(size.squeeze - 1) >= params.squeeze
        )
    return out


def _unflagged_or_alone_stack(e: Evidence, params: FlagParams) -> bool:
    """Neither COCKED nor STACKED, or STACKED only because the model is sure of it alone."""
    alarms = e.flags(params) & {DieFlag.COCKED, DieFlag.STACKED}
    return not alarms or (alarms == {DieFlag.STACKED} and e.alone_stack(params))


def _face_size(
    cache: dict[int, FaceSize | None],
    frame: U8,
    dice: Sequence[DieView],
    values: Sequence[int | None],
    k: int,
) -> FaceSize | None:
    """Die ``k``'s top face measured from its pips, once per frame (``cache``: the size and
    squeeze cues share it)."""
    if k not in cache:
        d = dice[k]
        cache[k] = pipsize.face_size(frame, d.center_xy, d.side_px, values[k])
    return cache[k]


def size_cues(
    frame: U8,
    dice: Sequence[DieView],
    values: Sequence[int | None],
    evidence: Sequence[Evidence],
    params: FlagParams = FlagParams(),
    *,
    pad: Pad | None = None,
    references: int | None = None,
    measured: dict[int, FaceSize | None] | None = None,
    pad_margin_px: float = 0.0,
) -> list[tuple[float, bool] | None]:
    """Each die's top-face side over the flat dice's (and whether over the pad's learnt flat
    size), measured from the pips, where it can matter: for the dice that look alone (no other
    die in reach: a die squarely on another hides it; one beside another is judged by the model
    at its lower threshold) which the model does not flag STACKED but gives at least
    ``FlagParams.size_gate``, against the other dice it flags neither COCKED nor STACKED (a
    tilted face looks smaller, a die on a die larger).

    ``references`` flat dice that agree in size are needed (by default one when the ``pad``
    shows the camera square on, else ``FlagParams.size_refs``, by default none: only the
    learnt size is compared with at a slant); with fewer, the size a flat die has at that
    place on the pad, when the pad has learnt it (``Pad.flat_side_px``,
    ``vision.pipsize.learned_side``: a die squarely on another is often the only die seen; and
    when none of the flat dice beside it measures well, +1 / +1 of 54 / 82 dice squarely on
    another on degraded / tray renders, no flat die more). Until the size is learnt the pips
    are measured only then, so a frame with no such die costs nothing (``vision.pipsize``:
    ~0.5 ms a die; on the renders about one frame in six measures any: the flags' median time
    hardly moves, their mean rises a tenth or so).

    Once the pad has learnt the flat size, every die flagged neither is measured against it as
    well, whatever the model says and whether or not it touches another die. The pad service
    measures those dice of every settled roll to learn the size anyway, and now takes the
    measurements from ``DieReading.face`` (``vision.pipsize.flat_samples``), so a throw costs no
    more: on 160 rendered settled frames, 243 faces measured by ``read_roll`` and the service
    together before, 204 now (``read_roll`` alone takes about 8 % longer a frame: ``bench_synth
    --only learnt``'s paired frames, with / without, 0.97-0.98 -> 1.05-1.06). It catches dice on
    a die that touch another or that the model is sure are not stacked: on 3 x 100 cameras'
    renders each (``bench_synth --only learnt`` and two more seeds) dice squarely on another
    flagged STACKED went clean 165 -> 169 of 181, degraded 149 -> 148 of 173, tray 243 -> 246 of
    270; flat dice flagged 1 / 2 / 18 -> 1 / 1 / 18 of 1736 / 1767 / 2822. Dice off the pad are
    not measured: they are re-rolled as they are.

    Why: the flat dice's top faces all lie in one plane square to an overhead camera and look
    the same size wherever they are; a die on a die is one die nearer. On renders (overhead,
    clean / degraded / tray) it adds 11 / 20 / 19 points to the recall of dice squarely on
    another (56 / 55 / 56 % before) and flags no more flat dice. The gate matters: on its own
    the size cue would flag flat dice that one misjudged neighbour makes look large."""
    out: list[tuple[float, bool] | None] = [None] * len(dice)
    base = [e.flags(params) for e in evidence]
    learnt = pad is not None and pad.flat_side_px is not None and params.size_ratio_learnt > 0.0
    want = [  # the dice the model leaves unsure, alone: compared with the flat dice
        i
        for i, (e, f) in enumerate(zip(evidence, base, strict=True))
        if DieFlag.STACKED not in f
        and not e.touching
        and e.stacked >= params.size_gate
        and _has_layout(values[i])
    ]
    if learnt and pad is not None:  # ... and every other die lying flat on the pad: against
        taken = set(want)  # the learnt size (a die off the pad is re-rolled as it is)
        want += [
            i
            for i, f in enumerate(base)
            if i not in taken
            and not f & {DieFlag.COCKED, DieFlag.STACKED}
            and _has_layout(values[i])
            and pad.contains(dice[i].center_xy, margin=pad_margin_px)
        ]
    if not want:
        return out
    flat = [
        j
        for j, f in enumerate(base)
        if not f & {DieFlag.COCKED, DieFlag.STACKED} and _has_layout(values[j])
    ]
    sizes: dict[int, FaceSize | None] = {} if measured is None else measured

    def size(k: int) -> FaceSize | None:
        return _face_size(sizes, frame, dice, values, k)

    if references is not None:
        need: int | None = references
    else:  # only now: most frames have no die to measure
        need = 1 if pipsize.square_on(pad) else params.size_refs  # None: the learnt size only

    def against_learnt(k: int) -> tuple[float, bool] | None:
        mine = size(k) if learnt else None
        flat_side = None if mine is None else pipsize.flat_side_at(pad, mine.center_xy)
        if mine is None or not mine.consistent or flat_side is None:
            return None
        return (mine.side_px / flat_side, True)

    for i in want:
        unsure_alone = not evidence[i].touching and evidence[i].stacked >= params.size_gate
        near = (
            [j for j in flat if j != i and _distinct(dice[i], dice[j], params.duplicate)]
            if unsure_alone and need is not None
            else []
        )
        if not unsure_alone or need is None or len(near) < need:  # the learnt size alone
            out[i] = against_learnt(i)
            continue
        near.sort(key=lambda j: math.dist(dice[i].center_xy, dice[j].center_xy))
        near = near[: need + _SPARE_REFS]  # the nearest: enough to see them agree or not
        mine = size(i)
        if mine is None or not mine.consistent:
            continue
        others: list[FaceSize] = []
        for j in near:  # stop at the first disagreement: size_ratio would give None
            other = size(j)
            if other is None or not other.consistent:
                continue
            others.append(other)
            if not pipsize.sizes_agree([o.side_px for o in others], params.size_agree):
                break
        ratio = pipsize.size_ratio(mine, others, agree=params.size_agree, at_least=need)
        # no flat die measured well enough to compare with: the learnt size, if known
        out[i] = against_learnt(i) if ratio is None else (ratio, False)
    if learnt:
        out = _learnt_size_borne_out(out, evidence, params)
    return out


def _learnt_size_borne_out(
    cues: list[tuple[float, bool] | None], evidence: Sequence[Evidence], params: FlagParams
) -> list[tuple[float, bool] | None]:
    """``cues`` without the verdicts of a learnt size that this frame's dice do not bear out.

    The learnt size judges a die when another die of the frame, measured against it too,
    matches it (within ``FlagParams.size_agree``); when none does, the size is stale -- the
    bar brought out a new, larger set of dice, every one of which would look stacked -- and it
    judges nothing; a die with no other measured is judged by it only if the model gives
    STACKED ``FlagParams.size_gate_learnt`` or more."""
    ratios = {j: c[0] for j, c in enumerate(cues) if c is not None and c[1]}
    borne = {j for j, r in ratios.items() if abs(r - 1) <= params.size_agree}
    out = list(cues)
    for i in ratios:
        others = len(ratios) > 1
        stale = others and not borne.difference({i})
        unsure_alone = not others and evidence[i].stacked < params.size_gate_learnt
        if stale or unsure_alone:
            out[i] = None
    return out


_SPARE_REFS = 2
"""Flat dice measured for the size cue beyond the ``size_refs`` needed (time: ~0.5 ms each)."""


def _has_layout(value: int | None) -> bool:
    """Whether a face of this value has pips apart to measure (2-6)."""
    return value is not None and 2 <= value <= 6
