"""``judge``: the evidence on COCKED / STACKED for every die of a frame, the one call the reader
makes (``vision.detect``).

All dice of a frame are judged in one batched forward pass (:func:`judge`, :func:`judge_all`),
and the dice that pass could flag in a second, mirrored one whose verdicts are averaged in
(``vision.flags.network.SYMMETRIES``, :func:`second_look`). Given the dice's read values, the
cues measured from their pips are weighed too (``vision.flags.size``), and what they measured
is kept on the evidence (``Evidence.face``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from vision.flags.dice import DieView, _nearest, neighbours_of
from vision.flags.evidence import Evidence
from vision.flags.features import features_all
from vision.flags.network import SYMMETRIES, FlagModel, load_model
from vision.flags.params import FlagParams
from vision.flags.size import size_cues, squeeze_cues
from vision.reading import DieFlag, FaceSize, Pad

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]


def judge(
    frame: U8,
    dice: Sequence[DieView],
    *,
    values: Sequence[int | None] | None = None,
    pad: Pad | None = None,
    params: FlagParams = FlagParams(),
    model: FlagModel | None = None,
    pad_margin_px: float = 0.0,
) -> tuple[Evidence, ...]:
    """Evidence for every die of one frame (BGR), in the order given: one forward pass for all
    of them (per-die calls cost the network's fixed overhead once per die). With the dice's
    read ``values`` the size cue is weighed too (``vision.flags.size.size_cues``; the ``pad``
    tells whether the camera looks squarely down, and which dice are on it: within
    ``pad_margin_px`` of it, as OFF_PAD counts them)."""
    if not dice:
        return ()
    near = [
        neighbours_of(d, [o for j, o in enumerate(dice) if j != i], params.duplicate)
        for i, d in enumerate(dice)
    ]
    x = features_all(frame, dice, near, focal_frac=params.focal_frac)
    gaps = [_nearest(d, nb) for d, nb in zip(dice, near, strict=True)]
    touching = [g < params.stack_reach for g in gaps]
    p = second_look(model or load_model(), x, params, touching).tolist()
    evidence = tuple(Evidence(pc, ps, touching=t) for t, (pc, ps) in zip(touching, p, strict=True))
    if values is None:
        return evidence
    measured: dict[int, FaceSize | None] = {}  # each die's pips measured once
    if params.size_ratio > 0.0:
        cues = size_cues(
            frame,
            dice,
            values,
            evidence,
            params,
            pad=pad,
            measured=measured,
            pad_margin_px=pad_margin_px,
        )
        evidence = tuple(
            e if c is None else replace(e, size_ratio=c[0], size_learnt=c[1])
            for e, c in zip(evidence, cues, strict=True)
        )
    if params.squeeze > 0.0:
        squeezed = squeeze_cues(frame, dice, values, evidence, params, pad=pad, measured=measured)
        evidence = tuple(
            replace(e, squeezed=True) if q else e for e, q in zip(evidence, squeezed, strict=True)
        )
    return tuple(  # what was measured is kept: the pad service learns the flat size from it
        e if measured.get(i) is None else replace(e, face=measured[i])
        for i, e in enumerate(evidence)
    )


def second_look(
    model: FlagModel,
    x: F32,
    params: FlagParams = FlagParams(),
    touching: Sequence[bool] | None = None,
) -> F32:
    """The model's verdicts as the mean over ``SYMMETRIES``, where that mean can make a flag.

    A mean of two probabilities reaches a threshold t only if the first view's is at least
    2t - 1, so the other views are taken only for those dice (a flat die scores near 0). And a
    die whose first view is sure it is tilted (``FlagParams.cocked_sure``) is not looked at
    again for COCKED: its second view would have to fall under 2t - 0.95 (0.15) to undo the
    flag. Of the 1106 such dice in 250 scenes of each of ``bench/bench_synth.py``'s clean,
    degraded and tray sets and 120 photos of each real set, 19 would have been undone (the
    models before: 34 of 1150, 1 of 803); end to end, keeping the first view's flag catches 0.8
    / 0.1 / 1.2 points more of the tilted dice (clean, tray and open-pad renders; 0.16 point
    more flat open-pad dice and 0.5 point more of the nellbyler_d6 dice flagged, 0.5 point fewer
    tray stacks), and the second view goes to 6 % of the tray dice instead of 32 %, so the sure
    first view stands. The other dice keep their first view's verdicts. With ``touching``
    (per die: another die in reach) each die's STACKED threshold is the one that applies to
    it; without, the lower one."""
    p = model.predict(x, SYMMETRIES[:1])
    if len(SYMMETRIES) < 2:
        return p
    stacked: float | npt.NDArray[np.float64] = min(
        params.stacked_threshold, params.stacked_alone_threshold
    )
    if touching is not None:
        stacked = np.where(
            np.asarray(touching, bool), params.stacked_threshold, params.stacked_alone_threshold
        )
    cocked = p[:, 0]
    sure = max(params.cocked_sure, params.cocked_threshold)
    need = ((cocked >= 2 * params.cocked_threshold - 1) & (cocked < sure)) | (
        p[:, 1] >= 2 * stacked - 1
    )
    if need.any():
        rest = model.predict(x[need], SYMMETRIES[1:])
        k = len(SYMMETRIES)
        p[need] = (p[need] + (k - 1) * rest) / k
    return p


def judge_all(
    frame: U8,
    dice: Sequence[DieView],
    *,
    values: Sequence[int | None] | None = None,
    pad: Pad | None = None,
    params: FlagParams = FlagParams(),
    pad_margin_px: float = 0.0,
) -> tuple[frozenset[DieFlag], ...]:
    """COCKED / STACKED for every die of a frame, in order: :func:`judge`'s verdicts without the
    evidence (``vision.detect`` calls :func:`judge` itself, for the pips it measured too)."""
    judged = judge(frame, dice, values=values, pad=pad, params=params, pad_margin_px=pad_margin_px)
    return tuple(e.flags(params) for e in judged)
