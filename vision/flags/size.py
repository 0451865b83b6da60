"""COCKED and STACKED: is a die flat on the pad, and is it on or against another die?

No public reader judges these and no public photo set labels them, so the judgement is learned
from :mod:`vision.synth` renders, whose ground truth is exact, by a small convolutional network
(``flags.onnx``, trained by ``bench/train_flags.py``; ONNX Runtime at run time, well under
a millisecond per die). What it is shown is chosen so the cues of the issue are in view:

- a patch cut around the die, **turned to the die's axes** (its own outline's, see
  :func:`_residual_turns`) **and scaled** so the top face is always the same size:
  foreshortening (a flat top face is a square seen from above, a tilted one a rectangle of
  aspect cos t), elliptical pips and side faces all land in the same place;
- its lightness and its colour distance from the **pad around it** (the patch border): side
  faces, shadows and a die below show up against the pad whatever its colour;
- the die's **offset from the image centre over the focal length**, in the die's axes: a flat
  die shows side faces towards the centre in proportion (perspective), so side faces are only
  evidence of tilt beyond that;
- the distance and direction of the **nearest other die**: a tilted die touching another rests
  against it;
- its top-face side over the median of the other dice's (log): a die on a die looks larger.

Three rules need no learning. Two detections whose centres are closer than half a side
(``FlagParams.duplicate``) are one die seen twice (the reader often finds a tilted die's top and
side face separately): neither is evidence of a stack, and they are not each other's neighbour.
And a die rests on or against *another* die: STACKED needs another (distinct) detection within
``FlagParams.stack_reach`` sides as well as the model's verdict -- unless the verdict is very
sure (``FlagParams.stacked_alone_threshold``): a die squarely on top of another hides it, and
the reader sees one die. What gives that stack away is in the patch (the die below peeking out
and showing side faces towards the image centre, a longer shadow) and in its **size against the
other dice** of the frame (it is nearer the camera; a scalar of the features). And a COCKED die
with another die in reach leans on it: STACKED too (``FlagParams.lean_is_stack``).

All dice of a frame are judged in one batched forward pass (:func:`judge`, :func:`judge_all`),
and the dice that pass could flag in a second, mirrored one whose verdicts are averaged in
(:data:`SYMMETRIES`, :func:`second_look`). The size scalar is weak: a die on a die is only
4-8 % nearer a camera 280-370 mm up, within the reader's spread of sides (the figures are in
``bench/bench_synth.py``'s stack cues). So the size is also measured properly, from the pips
(``vision.pipsize``, about 1 %), for the dice the model leaves unsure (:func:`size_cues`,
:meth:`Evidence.larger`): it adds 11-20 points to the rendered dice squarely on another
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
make it COCKED instead of STACKED (:meth:`Evidence.alone_stack`; the same re-roll, the right
word on the phone: open-pad tilted dice called COCKED 26 -> 32 %, called STACKED though on no
die 18.5 -> 16.5 %, every recall and false flag otherwise unchanged).

The operating points are chosen for the bar, where a false flag forces a re-roll of every die
just rolled while a missed one can still be called from the phone: at most 1 % of flat,
unstacked dice flagged, end to end through ``read_roll``, on renders of the product's camera
(straight above the pad; dice apart and side by side). The model learns from the reader's own
detections, and the reader often centres a steeply tilted die on the side face it shows (and
reads that face's value): such a detection is trained as the tilted die it is. With COCKED at
0.8, of the dice tilted 15 degrees or more 99.5 / 98.8 / 98.2 % are flagged on the clean,
degraded and tray scenes counting those detections (99.4 / 99.2 / 98.4 % of those centred on
their top face), with 0 / 0.18 / 0.77 % of flat dice flagged. (A model once trained to pass
off-face detections as flat caught only 84 / 88 / 84 %.) STACKED end to end: 89 / 85 / 91 %,
84 / 82 / 86 % of dice squarely on another. Every convolution of this model halves the patch
by its stride (24 / 32 / 48 channels: 1.4 M multiply-adds a die as run, see ``PLANES``, 0.06
ms), and it saw 32000 stack-rich scenes besides the 18000 others; the one before (its third
convolution pooled, 2.5 M, 16000 fewer scenes) caught 88 / 84 / 87 % of stacks and 82 / 82 /
82 % of dice squarely on another, at ``stacked_alone_threshold`` 0.995. What it cannot be
taught is the camera: real photos taken at a slant show flat dice's side faces as a tilt
would, and an oblique webcam's lone dice look like dice on dice. At these points nellbyler_d6's
phone photos have 7.7 % of dice flagged (some of them really leaning on the tray wall) and
matteop65_d6's webcam frames 16.5 % (the model before: 8.1 and 21.6 %). An install whose
camera looks in at a slant raises the thresholds (``vision.params.CAMERA_VIEWS``: COCKED 0.99,
STACKED 0.99 / 0.9999 keep the photo sets at 2.9 / 2.1 %, at 93-96 % of tilted and 78-82 %
of stacked renders). At a slant nearer dice look larger, too, so the size cue compares a die
with the flat dice beside it only where the pad shows the camera square on
(``vision.pipsize.square_on``); elsewhere only with the pad's learnt flat size, which carries
the pad's perspective (``FlagParams.size_refs`` lets an install ask for that many flat dice
that agree instead: two that agree can still both be farther than the die). With two, on the
photos the cue measured pips in 91 of the 169 nellbyler photos and flagged 6 dice, none of
them on a die, and the flags took 21 % of ``read_roll`` instead of 14 %.
``bench/bench_synth.py --only flags,sheet`` prints the figures.

Each flag says how sure it is (:meth:`Evidence.decisions`, ``DieReading.flag_confidence``):
the network's probability when its verdict raised it, else the precision on renders of the
rule that did (``FlagParams.*_confidence``). On the clean, degraded and tray renders the
network's COCKED at 0.99 or more was right 1341 / 1344 times, STACKED 152 / 152 (``bench_synth
--only flags``: "by confidence"); a COCKED die leaning on its neighbour is STACKED 8 times in
10 (the rest lean on the rail beside it): that flag says 0.8. Dice tilted alone in the open
pad, which the network takes for dice on hidden dice, are the exception: STACKED "alone" was
right 45 of 231 times there (the re-roll is right; the name is not).
"""

from __future__ import annotations

import functools
import math
import statistics
import threading
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, replace
from enum import StrEnum
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision import pipsize
from vision.nets import ModelDamagedError, ModelMissingError, read_onnx
from vision.reading import DieFlag, FaceSize, Pad, Point

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

GRID = 40
"""Patch side in px as the model sees it."""

SPAN = 2.2
"""Patch side in top-face sides (the die, its side faces and what touches it)."""

MODEL_PATH = Path(__file__).resolve().parent.parent / "flags.onnx"

DUPLICATE = 0.5
"""Centre distance, in sides of the larger, under which two detections are one die seen twice."""


_RULE_CONFIDENCES = (
    "alone_confidence",
    "squeeze_confidence",
    "lean_confidence",
    "size_confidence",
    "size_learnt_confidence",
)


@dataclass(frozen=True)
class FlagParams:
    """Thresholds and the camera, in the units stated."""

    focal_frac: float = 1.0  # camera focal length / frame width (how much flat dice show sides)
    # operating points: <= 1 % of flat, unstacked dice flagged end to end (see the module doc)
    cocked_threshold: float = 0.8  # model probability from which a die is COCKED
    cocked_sure: float = 0.95  # first view COCKED with no second look (if >= cocked_threshold)
    stacked_threshold: float = 0.95  # probability from which a die touching another is STACKED
    stacked_alone_threshold: float = 0.99  # ... and from which it is STACKED with no die in reach
    duplicate: float = DUPLICATE  # centre distance (sides) under which two detections are one die
    stack_reach: float = 1.6  # another die within this many sides makes a die "touching"
    lean_is_stack: bool = True  # a COCKED die touching another leans on it: STACKED as well
    # the size cue (Evidence.larger, size_cues); size_ratio 0 turns it off
    size_ratio: float = 1.03  # top face this much larger than the flat dice's: on a die ...
    size_ratio_max: float = 1.15  # ... up to this (more is a misjudged die to compare with)
    size_gate: float = 0.3  # ... if the model gives STACKED at least this probability
    # ... or this much over the pad's learnt flat size (0: off), when another die of the frame
    # bears that size out or, with no other die measured, the model gives STACKED this much
    size_ratio_learnt: float = 1.035
    size_gate_learnt: float = 0.05
    size_agree: float = 0.03  # the flat dice compared with agree in size within this fraction
    size_refs: int | None = None  # ... one when the pad shows the camera square on; else
    # this many (None: none, only the pad's learnt flat size; see the module doc)
    # the squeeze cue (Evidence.squeezed, squeeze_cues); squeeze 0 turns it off
    squeeze: float = 0.06  # a 4-6's pips this much wider than tall (over a flat face's): tilted
    squeeze_gate: float = 0.2  # ... if the model gives COCKED at least this probability
    # how sure a flag raised by a rule is (Evidence.decisions): the rule's precision on the
    # clean, degraded and tray renders, with and without a learnt size (bench_synth --only
    # flags,learnt: "right, per cue"), rounded down where the count is small
    alone_confidence: float = 0.95  # 158 / 160 right (dice tilted alone in the open: 45 / 231)
    squeeze_confidence: float = 0.95  # 45 / 45 (39 of them tilted in the open pad)
    lean_confidence: float = 0.8  # 293 / 369: the rest lean on the rail beside a die (COCKED)
    size_confidence: float = 0.95  # 38 / 38
    size_learnt_confidence: float = 0.9  # 10 / 10

    def __post_init__(self) -> None:
        if not self.focal_frac > 0:
            raise ValueError("focal_frac must be positive")
        for name in ("cocked_threshold", "stacked_threshold", "stacked_alone_threshold"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be within (0, 1)")
        if not 0.0 < self.cocked_sure <= 1.0:
            raise ValueError("cocked_sure must be within (0, 1]")
        if self.stacked_alone_threshold < self.stacked_threshold:
            raise ValueError("stacked_alone_threshold must be >= stacked_threshold")
        if not 0.0 <= self.duplicate <= self.stack_reach:
            raise ValueError("need 0 <= duplicate <= stack_reach")
        if self.size_ratio != 0.0 and not 1.0 < self.size_ratio < 2.0:
            raise ValueError("size_ratio must be 0 (off) or within (1, 2)")
        if self.size_ratio_max <= self.size_ratio:
            raise ValueError("size_ratio_max must exceed size_ratio")
        if self.size_ratio_learnt != 0.0 and not (
            self.size_ratio <= self.size_ratio_learnt < self.size_ratio_max
        ):
            raise ValueError("size_ratio_learnt must be 0 or within [size_ratio, size_ratio_max)")
        if not (0.0 <= self.size_gate < 1.0 and 0.0 <= self.size_gate_learnt < 1.0):
            raise ValueError("size_gate and size_gate_learnt must be within [0, 1)")
        if not 0.0 < self.size_agree < 0.5:
            raise ValueError("size_agree must be within (0, 0.5)")
        if self.size_refs is not None and self.size_refs < 1:
            raise ValueError("size_refs must be None or at least 1")
        if not (0.0 <= self.squeeze < 0.5 and 0.0 <= self.squeeze_gate < 1.0):
            raise ValueError("squeeze must be within [0, 0.5) and squeeze_gate within [0, 1)")
        for name in _RULE_CONFIDENCES:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1]")


@dataclass(frozen=True)
class Neighbour:
    """Another die in the same frame: its centre and top-face side (frame px)."""

    center_xy: Point
    side_px: float


class Cue(StrEnum):
    """What raised a flag: the model's verdict, or one of the rules beside it."""

    MODEL = "model"  # the flags network's probability reached its threshold
    ALONE = "alone"  # ... its sure STACKED with no die in reach: on a die it hides
    SQUEEZE = "squeeze"  # a 4-6's pips squeezed one way, as by a tilt (COCKED)
    LEAN = "lean"  # COCKED with another die in reach: leaning on it (STACKED)
    SIZE = "size"  # larger than the flat dice beside it (STACKED)
    SIZE_LEARNT = "size-learnt"  # larger than the pad's learnt flat size (STACKED)


@dataclass(frozen=True)
class Decision:
    """One cue raising one flag, and how sure it is (0-1)."""

    flag: DieFlag
    cue: Cue
    confidence: float


@dataclass(frozen=True)
class Evidence:
    """The verdicts on one die, as probabilities, and the flags they make.

    A die tilted enough to be COCKED with another die in reach is leaning on it, so it is
    STACKED as well (``FlagParams.lean_is_stack``): on renders it adds a tenth of the dice
    leaning on a die to STACKED (with the previous model: 63 -> 72 %) at no cost to flat dice,
    whose flags it cannot change (it needs COCKED first); the games treat the two flags alike
    (RULES.md D-16, Y16, B16)."""

    cocked: float
    stacked: float
    _: KW_ONLY  # the cues by name: they are many, and a positional one could shift silently
    touching: bool = True  # another distinct die is within ``FlagParams.stack_reach`` sides
    size_ratio: float | None = None  # top face over the flat dice's, from the pips (or unknown)
    size_learnt: bool = False  # ... over the pad's learnt flat size (no flat die to compare)
    squeezed: bool = False  # the pips' layout is squeezed one way, as by a tilt (squeeze_cues)
    face: FaceSize | None = None  # the top face measured from its pips, when a cue measured it

    def decisions(self, params: FlagParams = FlagParams()) -> tuple[Decision, ...]:
        """Every cue that raises a flag on this die, with how sure it is: the model's own
        probability, or a rule's precision measured on renders (``FlagParams.*_confidence``).
        A flag raised by several cues is as sure as the surest (:meth:`confidence`)."""
        out = []
        if self.cocked >= params.cocked_threshold:
            out.append(Decision(DieFlag.COCKED, Cue.MODEL, self.cocked))
        if self.squeezed:
            out.append(Decision(DieFlag.COCKED, Cue.SQUEEZE, params.squeeze_confidence))
        cocked = bool(out)
        if self.touching and self.stacked >= params.stacked_threshold:
            out.append(Decision(DieFlag.STACKED, Cue.MODEL, self.stacked))
        if self.alone_stack(params) and not self.squeezed:
            out.append(Decision(DieFlag.STACKED, Cue.ALONE, params.alone_confidence))
        if params.lean_is_stack and self.touching and cocked:
            out.append(Decision(DieFlag.STACKED, Cue.LEAN, params.lean_confidence))
        if self.larger(params):
            if self.size_learnt:
                out.append(
                    Decision(DieFlag.STACKED, Cue.SIZE_LEARNT, params.size_learnt_confidence)
                )
            else:
                out.append(Decision(DieFlag.STACKED, Cue.SIZE, params.size_confidence))
        return tuple(out)

    def flags(self, params: FlagParams = FlagParams()) -> frozenset[DieFlag]:
        return frozenset(d.flag for d in self.decisions(params))

    def confidence(self, flag: DieFlag, params: FlagParams = FlagParams()) -> float | None:
        """How sure the flag is, in [0, 1] (the surest of the cues raising it), or None when
        no cue raises it."""
        return max((d.confidence for d in self.decisions(params) if d.flag is flag), default=None)

    def alone_stack(self, params: FlagParams = FlagParams()) -> bool:
        """The model is very sure of a stack with no other die in reach: a die squarely on a
        die it hides -- or a die tilted alone, which looks the same to it; a squeezed pip
        layout tells the tilt (a die lying on a die lies flat on it), so then it is COCKED."""
        return not self.touching and self.stacked >= params.stacked_alone_threshold

    def larger(self, params: FlagParams = FlagParams()) -> bool:
        """The size cue: the die's top face, measured from its pips (``vision.pipsize``), is
        ``FlagParams.size_ratio`` times the flat dice's or more -- nearer the camera, so on a
        die -- and the model does not rule a stack out (``FlagParams.size_gate``). A die on a
        die is one die nearer a camera many dice up: 4-8 % larger for the product's, so a
        ratio past ``FlagParams.size_ratio_max`` says a die compared with was not flat (a
        tilted 2 the model missed looks 20 % small), not that this one is stacked. Neither
        cue alone is enough at the bar's false-flag budget against the dice of the frame;
        together they catch most dice squarely on another that the model alone misses (see
        :func:`size_cues`). Against the pad's learnt flat size (``size_learnt``) no gate is
        needed, only ``FlagParams.size_ratio_learnt``: no neighbour that may itself be
        misjudged enters, and the learnt size is the median of many flat dice (that the frame's
        other dice bear it out, or that the model gives a lone die some chance of a stack, is
        checked where it is measured: :func:`_learnt_size_borne_out`). Measured
        against it, the flat dice of 2 x 100 cameras' renders (clean / degraded / tray, each
        camera's size learnt from three rolls) came out at most 1.024 / 1.030 / 1.024 times it
        (1001 / 586 / 1507 dice), and 12 of the 13 dice squarely on a die that the model and
        the gated cue missed, and whose pips measured well, at 1.047-1.072 (one at 1.025)."""
        if not (
            params.size_ratio > 0.0
            and self.size_ratio is not None
            and self.size_ratio <= params.size_ratio_max
        ):
            return False
        if self.size_learnt:
            return 0.0 < params.size_ratio_learnt <= self.size_ratio
        return self.size_ratio >= params.size_ratio and self.stacked >= params.size_gate


# --------------------------------------------------------------------------- features

_BORDER = np.zeros((GRID, GRID), bool)
_BORDER[:2, :] = _BORDER[-2:, :] = _BORDER[:, :2] = _BORDER[:, -2:] = True
N_CHANNELS = 3
N_SCALARS = 9
SCALARS = ("eu", "ev", "|eu|", "|ev|", "|eu|+|ev|", "near", "nu", "nv", "size")
"""The scalar features after the image channels (see :func:`features`)."""


@functools.lru_cache(maxsize=4096)
def _silhouette(eu_q: int, ev_q: int) -> F32:
    """:func:`expected_silhouette` at offsets quantised to 1/200 (cached: it is per die)."""
    return expected_silhouette(eu_q / 200.0, ev_q / 200.0)


def expected_silhouette(eu: float, ev: float) -> F32:
    """Where a *flat* die at perspective offset (eu, ev) covers the patch: the hull of its top
    face and of its bottom face, which sits ``e`` sides towards the image centre and a little
    smaller. Side faces beyond this are evidence of tilt or of a die below."""
    k = GRID / SPAN * 4  # 4x for sub-pixel edges, reduced below
    half = (GRID * 4 - 1) / 2
    top = [(u * 0.5, v * 0.5) for u, v in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    bottom = [(u * 0.95 - 0.95 * eu, v * 0.95 - 0.95 * ev) for u, v in top]
    pts = np.array([(half + u * k, half + v * k) for u, v in top + bottom], np.float32)
    hull = cv2.convexHull(pts)
    big = np.zeros((GRID * 4, GRID * 4), np.uint8)
    cv2.fillConvexPoly(big, np.round(hull * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    small = cv2.resize(big, (GRID, GRID), interpolation=cv2.INTER_AREA)
    out: F32 = np.asarray(small, np.float32) / 255.0
    out.setflags(write=False)
    return out


_YY, _XX = np.mgrid[0:GRID, 0:GRID].astype(np.float32) - (GRID - 1) / 2
_RING = np.exp(-(((np.hypot(_XX, _YY) / (GRID / SPAN) - 0.6) / 0.25) ** 2)).astype(np.float32)
_RING[_BORDER] = 0.0  # the patches are filtered stacked: see _residual_turns
"""Weights of the turn estimate: the die's outline (0.5-0.7 sides out), not its pips or the
dice around it; nothing on the patch border."""

RETURN_DEG = 3.0
"""A die whose outline is turned more than this from the reader's guess is cut out again."""


def _matrix(center_xy: Point, side_px: float, angle_deg: float) -> npt.NDArray[np.float64]:
    """The affine map from the frame to the die's patch of ``SPAN`` sides at twice GRID."""
    k = 2 * GRID / (SPAN * side_px)  # warped at twice the size, then area-reduced
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    cx, cy = center_xy
    half = (2 * GRID - 1) / 2
    return np.array(
        [
            [c * k, s * k, half - k * (c * cx + s * cy)],
            [-s * k, c * k, half - k * (-s * cx + c * cy)],
        ]
    )


def _cut(frame: U8, cuts: Sequence[tuple[Point, float, float]]) -> F32:
    """The GRID x GRID Lab patches of ``SPAN`` sides around each (centre, side, turn), turned
    to the die's axes, as one N x 3 x GRID x GRID float32 array (planes: the arithmetic below
    runs on long contiguous rows). Each die is warped at twice the size into one tall image,
    which is area-reduced and converted to Lab in one call each: a 2:1 area reduction averages
    2x2 blocks and Lab is per pixel, so this is exactly the per-die result at fewer calls."""
    n, big = len(cuts), 2 * GRID
    tall = np.empty((n * big, big, *frame.shape[2:]), frame.dtype)  # written in place below
    for k, (center_xy, side_px, angle_deg) in enumerate(cuts):
        cv2.warpAffine(
            frame,
            _matrix(center_xy, side_px, angle_deg),
            (big, big),
            dst=tall[k * big : (k + 1) * big],
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )
    small = np.asarray(cv2.resize(tall, (GRID, n * GRID), interpolation=cv2.INTER_AREA), np.uint8)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    return lab.reshape(n, GRID, GRID, 3).transpose(0, 3, 1, 2).astype(np.float32)


def _pads(labs: F32) -> F32:
    """The pad's Lab colour around each die: the (upper) median of its patch border."""
    border = labs[:, :, _BORDER]
    mid = border.shape[2] // 2  # the element a sort would put there, without the sort
    return np.asarray(np.partition(border, mid, axis=2)[:, :, mid], np.float32)


def _residual_turns(d: F32) -> list[float | None]:
    """How far (degrees, [-45, 45)) the die in each die-aligned patch is still turned, or None
    when nothing there stands out from the pad.

    The reader's turn comes from the grey value patch, where a dark die's white pips outweigh
    its outline (a third of renders are off by over 10 degrees). Here the die is a blob of
    "not pad" (Lab distance from the pad, saturated, so pips and body are alike) and the
    4-fold gradient direction along its outline gives the turn (p90 error ~3 degrees). The
    patches are filtered as one tall image; the ring's zero border keeps them apart. ``d`` is
    the patches' Lab minus their pad's (see :func:`_pads`)."""
    sq = d * d  # the sum in channel order, as np.einsum("nijc,nijc->nij") adds it
    blob = np.minimum(np.sqrt(sq[:, 0] + sq[:, 1] + sq[:, 2]), 60.0).reshape(-1, GRID)
    gx = cv2.Sobel(blob, cv2.CV_32F, 1, 0, ksize=3).reshape(-1, GRID, GRID)
    gy = cv2.Sobel(blob, cv2.CV_32F, 0, 1, ksize=3).reshape(-1, GRID, GRID)
    # |g|^2 e^{4i phi} = (gx + i gy)^4 / |g|^2, in real arithmetic, weighted by the ring
    xx, yy = gx * gx, gy * gy
    w = _RING / (xx + yy + 1e-6)
    diff = xx - yy
    re = np.sum((diff * diff - 4.0 * xx * yy) * w, axis=(1, 2))
    im = np.sum(4.0 * gx * gy * diff * w, axis=(1, 2))
    return [
        None
        if abs(r) + abs(i) < 1e-3
        else (math.degrees(math.atan2(i, r)) / 4.0 + 45.0) % 90.0 - 45.0
        for r, i in zip(re.tolist(), im.tolist(), strict=True)
    ]


def _extent_factor(angle_deg: float) -> float:
    """Axis-aligned extent of a square turned by ``angle_deg``, in sides."""
    a = math.radians(angle_deg)
    return abs(math.cos(a)) + abs(math.sin(a))


def features(
    frame: U8,
    center_xy: Point,
    side_px: float,
    angle_deg: float,
    *,
    neighbours: Sequence[Neighbour] = (),
    focal_frac: float = 1.0,
) -> F32:
    """The model's input for one die (see :func:`features_all`), as one float32 vector."""
    view = DieView(center_xy, side_px, angle_deg)
    row: F32 = features_all(frame, [view], [neighbours], focal_frac=focal_frac)[0]
    return row


def features_all(
    frame: U8,
    dice: Sequence[DieView],
    neighbours: Sequence[Sequence[Neighbour]],
    *,
    focal_frac: float = 1.0,
) -> F32:
    """The model's input for each die (rows): ``N_CHANNELS`` GRID x GRID channels (lightness
    and colour distance from the pad, and where a flat die would be; all die-aligned) and the
    ``N_SCALARS`` numbers named in ``SCALARS``. A die's ``angle_deg`` is a first guess of its
    turn: the patch is turned to the die's own outline, and ``side_px`` (which a reader derives
    from the die's axis-aligned extent and that guess) re-derived for it. The pixel work is
    done for all dice at once (per-die calls cost more in overhead than in arithmetic)."""
    n = len(dice)
    if n == 0:
        return np.zeros((0, N_CHANNELS * GRID * GRID + N_SCALARS), np.float32)
    labs = _cut(frame, [(d.center_xy, max(d.side_px, 1.0), d.angle_deg) for d in dice])
    pads = _pads(labs)
    labs -= pads[:, :, None, None]  # from here on, Lab against the pad around the die
    turned, again = [], []
    for k, (d, turn) in enumerate(zip(dice, _residual_turns(labs), strict=True)):
        side, angle = max(d.side_px, 1.0), d.angle_deg
        if turn is not None and abs(turn) > RETURN_DEG:
            side *= _extent_factor(angle) / _extent_factor(angle + turn)
            angle += turn
            again.append(k)
        turned.append((side, angle))
    if again:  # most of the reader's turns are close enough: cut those dice out again only
        redo = _cut(frame, [(dice[k].center_xy, *turned[k]) for k in again])
        labs[again] = redo - pads[again][:, :, None, None]  # the pad around is the same
    g2 = GRID * GRID
    out = np.empty((n, N_CHANNELS * g2 + N_SCALARS), np.float32)
    img = out[:, : N_CHANNELS * g2].reshape(n, N_CHANNELS, GRID, GRID)
    np.divide(labs[:, 0], 64.0, out=img[:, 0])
    np.hypot(labs[:, 1], labs[:, 2], out=img[:, 1])
    img[:, 1] /= 32.0
    h, w = frame.shape[:2]
    f = focal_frac * w
    rows = []
    for k, (d, nbs, (side, angle)) in enumerate(zip(dice, neighbours, turned, strict=True)):
        a = math.radians(angle)
        c, s = math.cos(a), math.sin(a)
        cx, cy = d.center_xy
        ex, ey = (cx - w / 2) / f, (cy - h / 2) / f
        eu, ev = ex * c + ey * s, -ex * s + ey * c
        near, nu, nv = 3.0, 0.0, 0.0
        for nb in nbs:
            dx, dy = nb.center_xy[0] - cx, nb.center_xy[1] - cy
            dist = math.hypot(dx, dy)
            if dist < near * side:
                near = dist / side
                nu, nv = (dx * c + dy * s) / (dist + 1e-9), (-dx * s + dy * c) / (dist + 1e-9)
        size = 0.0  # no other die: no size to compare with
        if nbs:  # the reader's sides against the reader's sides
            others = statistics.median(max(nb.side_px, 1.0) for nb in nbs)
            size = min(max(math.log(max(d.side_px, 1.0) / others), -0.5), 0.5)
        rows.append((eu, ev, abs(eu), abs(ev), abs(eu) + abs(ev), near / 3.0, nu, nv, size))
        img[k, 2] = _silhouette(round(eu * 200), round(ev * 200))
    out[:, 3 * g2 :] = rows
    return out


# --------------------------------------------------------------------------- model

PLANE_SCALARS = (0, 1, 5, 6, 7, 8)
"""Which scalars the network gets, as constant planes: eu, ev, near, nu, nv, size."""
PLANES = N_CHANNELS + len(PLANE_SCALARS)
"""The network as trained takes the image channels, then the ``PLANE_SCALARS`` as constant
planes (:func:`planes`). As shipped it takes them apart (:func:`inputs`): a convolution of a
constant plane is the constant times a fixed map, so ``bench/train_flags.py`` exports the first
convolution on the image channels plus a per-die sum of those maps (``Deployed``; the same
verdicts to float rounding: the model before ran in 0.096 ms a die so instead of 0.109)."""


SYMMETRIES = (0, 7)
"""The views of a die whose verdicts are averaged (see :func:`symmetry`): as cut out, and
mirrored about its anti-diagonal. A die and its perspective look the same mirrored, and the
network was trained on all eight mirrorings, so two views are two opinions: their mean misses
fewer tilted and stacked dice at the same share of false flags (and raises fewer on real
photos). :func:`judge` takes the second view only where it can change a flag."""


def symmetry(x: F32, k: int) -> F32:
    """Feature rows with symmetry ``k`` of the square applied (bits: 1 flips u, 2 flips v,
    4 swaps u and v, in that order): the image channels and the direction scalars alike."""
    x = np.atleast_2d(x)
    n = len(x)
    g2 = GRID * GRID
    img = _mirrored(x[:, : N_CHANNELS * g2].reshape(n, N_CHANNELS, GRID, GRID), k)
    sc = _mirrored_scalars(x[:, N_CHANNELS * g2 :], k)
    out: F32 = np.concatenate([img.reshape(n, -1), sc], axis=1, dtype=np.float32)
    return out


def _mirrored(img: F32, k: int) -> F32:
    """N x C x GRID x GRID images with symmetry ``k`` applied (a view: no pixel is copied)."""
    if k & 1:
        img = img[:, :, :, ::-1]
    if k & 2:
        img = img[:, :, ::-1, :]
    if k & 4:
        img = img.transpose(0, 1, 3, 2)
    return img


def _mirrored_scalars(sc: F32, k: int) -> F32:
    """The ``SCALARS`` rows with symmetry ``k`` applied (a copy): directions flip and swap."""
    sc = sc.copy()  # eu, ev, |eu|, |ev|, |eu|+|ev|, near, nu, nv, size
    if k & 1:
        sc[:, [0, 6]] *= -1
    if k & 2:
        sc[:, [1, 7]] *= -1
    if k & 4:
        sc[:, [0, 1, 2, 3, 6, 7]] = sc[:, [1, 0, 3, 2, 7, 6]]
    return sc


def planes(x: F32, views: Sequence[int] = (0,)) -> F32:
    """Feature vectors (rows) as the trained network's N x PLANES x GRID x GRID input: the
    :func:`inputs` with the scalars spread into constant planes (training's form; run time
    keeps them apart). With several ``views`` (symmetries, see :func:`symmetry`), all rows in
    the first view, then all in the next, ..."""
    image, scalars = inputs(x, views)
    out: F32 = np.empty((len(image), PLANES, GRID, GRID), np.float32)
    out[:, :N_CHANNELS] = image
    out[:, N_CHANNELS:] = scalars[:, :, None, None]
    return out


def inputs(x: F32, views: Sequence[int] = (0,)) -> tuple[F32, F32]:
    """Feature rows as the shipped network's two inputs: the image channels (N x N_CHANNELS x
    GRID x GRID) and the ``PLANE_SCALARS`` (N x 6); with several ``views``, all rows in the
    first view, then all in the next, ... Written straight into the two arrays: the same
    numbers as ``inputs(symmetry(x, k))`` without the intermediate copies (a frame's input is
    ~20 KB per die and view)."""
    x = np.atleast_2d(x)
    n = len(x)
    g2 = GRID * GRID
    img = x[:, : N_CHANNELS * g2].reshape(n, N_CHANNELS, GRID, GRID)
    image: F32 = np.empty((len(views) * n, N_CHANNELS, GRID, GRID), np.float32)
    scalars: F32 = np.empty((len(views) * n, len(PLANE_SCALARS)), np.float32)
    for j, k in enumerate(views):
        image[j * n : (j + 1) * n] = _mirrored(img, k)
        scalars[j * n : (j + 1) * n] = _mirrored_scalars(x[:, N_CHANNELS * g2 :], k)[
            :, list(PLANE_SCALARS)
        ]
    return image, scalars


class FlagModel:
    """The trained network (ONNX, run by ``vision.nets``): :func:`inputs` in, N x 2 logits
    (cocked, stacked) out."""

    def __init__(self, path: Path) -> None:
        try:
            self._net = read_onnx(path)
        except (ModelMissingError, ModelDamagedError) as exc:
            raise RuntimeError(
                f"flag model {path} is missing or damaged; run bench/train_flags.py ({exc})"
            ) from exc
        self._lock = threading.Lock()  # one reader at a time, as the dice networks
        self.path = path

    def predict(self, x: F32, views: Sequence[int] = (0,)) -> F32:
        """Rows of features in, rows of (p_cocked, p_stacked) out: the mean over the ``views``
        (symmetries, see :func:`symmetry`) of each die, all in one forward pass."""
        x = np.atleast_2d(x)
        n = len(x)
        if n == 0:
            return np.zeros((0, 2), np.float32)
        image, scalars = inputs(x, views)
        with self._lock:
            logits = self._net.run(image, scalars).reshape(-1, 2)
        p = 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))
        if len(views) == 1:  # a mean of one
            return np.asarray(p, np.float32)
        return np.asarray(p.reshape(len(views), n, 2).mean(axis=0), np.float32)


@functools.lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> FlagModel:
    """The trained model (cached). A missing or broken file is an error naming it."""
    if not path.is_file():
        raise RuntimeError(f"flag model {path} is missing; run bench/train_flags.py")
    return FlagModel(path)


# --------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class DieView:
    """What the reader knows of one die: centre, top-face side and turn (frame px, degrees).
    The side is taken to be derived from the die's axis-aligned extent and the turn (as
    ``vision.face.face_side`` does), so :func:`features` can re-derive it for a better turn."""

    center_xy: Point
    side_px: float
    angle_deg: float


def neighbours_of(
    die: DieView, others: Sequence[DieView], duplicate: float = DUPLICATE
) -> list[Neighbour]:
    """The other dice as the model's neighbours, leaving out detections of this same die (a
    die cannot rest on or against itself; the model was trained without them)."""
    return [Neighbour(o.center_xy, o.side_px) for o in others if _distinct(die, o, duplicate)]


def _distinct(die: DieView, other: DieView, duplicate: float) -> bool:
    """Whether ``other`` is another die, not a second detection of ``die``."""
    return math.dist(die.center_xy, other.center_xy) >= duplicate * max(die.side_px, other.side_px)


def _nearest(die: DieView, others: Sequence[Neighbour]) -> float:
    """The centre distance from ``die`` to the nearest of ``others``, in sides of the larger of
    the two (infinite when there is none)."""
    return min(
        (math.dist(die.center_xy, o.center_xy) / max(die.side_px, o.side_px, 1e-9) for o in others),
        default=math.inf,
    )


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
    read ``values`` the size cue is weighed too (:func:`size_cues`; the ``pad`` tells whether
    the camera looks squarely down, and which dice are on it: within ``pad_margin_px`` of it,
    as OFF_PAD counts them)."""
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
