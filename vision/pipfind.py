"""The pips found by a small network, where the pip count's ink thresholds find no clean face.

Why: the pip count (``vision.pipcount``) is the second opinion that fails differently from the
value network, and it has none on a third of the dice: a face shaded from one side, pips run
into the rim by blur, glare or a side face's pips joined to its own make no clean blobs at any
ink level. A network shown only ``vision.synth`` renders -- never a photo, so a source held
out of the reader's training is held out of this one too -- finds the top face's pip centres
on the same squared-up cut (``bench/train_pips.py``): a heat map, one peak per pip, that learns
to pass over side faces' pips, shading, glare and the pips a resin die shows through. Its
peaks are counted by the pip count's own layout rules (``vision.pipcount.layout_value``), so
it only ever gives a value whose pips make a face.

On 300 fresh ``vision.synth`` wide tables (1191 flat dice, each cut with a locator's error;
``bench/train_pips.py --check``) the thresholds count 63.6 % right and 1.85 % wrong; the
finder alone 55.1 % and 0.08 % (one die); the finder where the thresholds find no face, as the
reader uses it, 70.8 % right and not one die more wrong (at the true place: 66.1 -> 75.8 %).
It runs only there, and only for a die the value network is at least
``DetectorParams.agreed_value_confidence`` sure of (below that the die is asked about whatever
its pips say): a count that agrees lets an unsure network answer, one that disagrees asks.
Held out of training (``bench/bench_vision.py``, networks trained without the source; the
finder never saw a photo), nellbyler_d6 88.4 -> 88.7 % of dice right and 0.70 -> 0.52 % wrong
(as a fixed camera 88.6 -> 88.9 % and 0.52 -> 0.44 %, photos exact 53.8 -> 56.2 %, silently
wrong 3 -> 2), matteop65_d6 96.9 -> 97.0 % right, 0.12 % wrong either way; a third of
nellbyler_d6 taught to a house, 0.41 -> 0.27 % of the rest wrong. It costs 0.3 ms a die
looked at (8 bits; ``read_roll`` about 5 % longer on these photos).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.nets import F32, MODELS_DIR, U8, ModelMissingError, Net, read_onnx
from vision.pipcount import FACE_PX, FACE_SPAN, PIP_AREA, PipCount, layout_value

MODEL_FILE = "pips.onnx"
"""The pip finder's file, in the models folder (``bench/train_pips.py --out``)."""

STRIDE = 2  # cut px per heat-map cell
FOUND = 0.5
"""A heat-map peak this probable is a pip."""
DOUBT = 0.15
"""A peak between this and :data:`FOUND` on the face (``_FACE`` located sides from its centre)
leaves the face uncounted: the network is not sure what is a pip there. Both chosen on renders
(``bench/train_pips.py``)."""
_FACE = 0.55  # located sides from the centre: the face (past it, a neighbour or the pad)
_HALF = 0.5 * FACE_PX - 0.5
_PER_SIDE = FACE_PX / FACE_SPAN  # cut px per located face side


@functools.lru_cache(maxsize=4)
def load_finder(models_dir: str | None = None) -> Net:
    """The pip finder in ``models_dir``, else the shipped one: it learnt renders alone, so the
    networks of a photo source held out (``bench/loso_vision.py``) share it."""
    for folder in ([Path(models_dir)] if models_dir else []) + [MODELS_DIR]:
        if (folder / MODEL_FILE).is_file():
            return read_onnx(folder / MODEL_FILE)
    raise ModelMissingError(f"pip finder not found: {MODELS_DIR / MODEL_FILE}")


def heat_maps(net: Net, cuts: Sequence[U8]) -> F32:
    """The probability of a pip's centre per cell, (n, FACE_PX / STRIDE, same), for face cuts
    (BGR, ``FACE_PX`` a side, spanning ``FACE_SPAN`` located sides, as ``vision.pipcount``
    cuts them). The network normalises each cut itself: it takes the raw pixels."""
    blob = np.ascontiguousarray(np.stack(cuts).astype(np.float32).transpose(0, 3, 1, 2))
    logits = net.run(blob)[:, 0]
    out: F32 = (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
    return out


def pips_of(heat: F32) -> list[tuple[float, float]] | None:
    """The pip centres of one heat map in face coordinates (located sides from the cut's
    centre), or None when a peak on the face is neither clearly a pip nor clearly not."""
    grid = heat.shape[0]
    top = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    found: list[tuple[float, float]] = []
    for y, x in np.argwhere((heat >= top) & (heat > DOUBT)).tolist():
        y0, y1, x0, x1 = max(0, y - 1), min(grid, y + 2), max(0, x - 1), min(grid, x + 2)
        w = heat[y0:y1, x0:x1]
        yy, xx = np.mgrid[y0:y1, x0:x1]
        cy = float((w * yy).sum() / w.sum())
        cx = float((w * xx).sum() / w.sum())
        u = ((cx + 0.5) * STRIDE - 0.5 - _HALF) / _PER_SIDE
        v = ((cy + 0.5) * STRIDE - 0.5 - _HALF) / _PER_SIDE
        if heat[y, x] > FOUND:
            found.append((u, v))
        elif max(abs(u), abs(v)) < _FACE:
            return None
    return found


def with_found(
    net: Net, cuts: U8, counts: Sequence[PipCount | None], wanted: Sequence[bool]
) -> list[PipCount | None]:
    """``counts`` with the pips found where the thresholds had no clean face (value None, not
    engulfed) and the die is ``wanted``: one batched pass over those faces' cuts, as
    ``vision.pipcount.cut_faces`` stacked them for the count."""
    todo = [
        k
        for k, (c, w) in enumerate(zip(counts, wanted, strict=True))
        if w and c is not None and c.value is None and not c.engulfed
    ]
    out = list(counts)
    if not todo:
        return out
    faces = [cuts[k * FACE_PX : (k + 1) * FACE_PX] for k in todo]
    for k, heat in zip(todo, heat_maps(net, faces), strict=True):
        pips = pips_of(heat)
        value = None if pips is None else layout_value([(u, v, PIP_AREA) for u, v in pips])
        before = counts[k]
        if value is not None and before is not None:
            out[k] = PipCount(value, len(pips or ()), before.contrast, found=True)
    return out
