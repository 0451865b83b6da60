"""The thresholds of COCKED and STACKED (``FlagParams``) and the measurements they were chosen on.

They travel in ``vision.params.DetectorParams.flags``; ``vision.params.CAMERA_VIEWS`` holds the
set for a camera that looks in at a slant. Every number here was set on renders end to end, so
this module keeps the record of why each is where it is.

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
by its stride (24 / 32 / 48 channels: 1.4 M multiply-adds a die as run, see
``vision.flags.network.PLANES``, 0.06 ms), and it saw 32000 stack-rich scenes besides the
18000 others; the one before (its third convolution pooled, 2.5 M, 16000 fewer scenes) caught
88 / 84 / 87 % of stacks and 82 / 82 / 82 % of dice squarely on another, at
``stacked_alone_threshold`` 0.995. What it cannot be
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
"""

from __future__ import annotations

from dataclasses import dataclass

from vision.flags.dice import DUPLICATE

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
