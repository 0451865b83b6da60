"""Training samples: the labelled photos, rendered tables, and the locator's hits mined on
them (what the value network is really shown)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
from bench_vision import LabelledImage

from training.config import LOCATOR_SIDE, MINE_RADIUS, PIP_BOX_TO_DIE
from vision import synth
from vision.locate import locate
from vision.nets import LOCATOR_FILE, NOT_A_DIE

LOGO_ACE = 0
"""The label of a rendered die whose ace is a logo (``synth_samples``' ``logos``): a die for
the locator, and for the value network a face it is to call "not a die", so that a logo it
was never shown is asked about (``DetectorParams.unknown_peak``), not read as a number. A
house model taught the logo reads it as 1."""


@dataclass
class Die:
    cx: float
    cy: float
    size: float  # axis-aligned die extent, frame px
    value: int


@dataclass
class Sample:
    name: str
    image: np.ndarray
    dice: list[Die]
    located: list[Die] = field(default_factory=list)  # locator hits on a die (its value)
    false_hits: list[Die] = field(default_factory=list)  # locator hits on no die (value 0)


def mine(samples: list[Sample], models_dir: Path) -> None:
    """Run the trained locator exactly as the reader does and keep its hits: those on a labelled
    die teach the value network the crops it will really get, the rest (ruler holes, dice-like
    blobs) are its hard "not a die" examples."""
    net = cv2.dnn.readNetFromONNX(str(models_dir / LOCATOR_FILE))
    hits = misses = 0
    for s in samples:
        found = locate(s.image, net, long_side_px=LOCATOR_SIDE[0], threshold=0.1)
        for c in found:
            near = min(
                s.dice,
                key=lambda d: math.hypot(c.center_xy[0] - d.cx, c.center_xy[1] - d.cy),
                default=None,
            )
            dist = (
                math.inf
                if near is None
                else math.hypot(c.center_xy[0] - near.cx, c.center_xy[1] - near.cy)
            )
            if near is not None and dist < MINE_RADIUS[0] * near.size:
                if near.value == LOGO_ACE:  # a face the network is to take for no die
                    s.false_hits.append(Die(*c.center_xy, c.size_px, NOT_A_DIE))
                    misses += 1
                    continue
                if near.value < 1:  # a die whose face is not a label (see synth_samples)
                    continue
                s.located.append(Die(*c.center_xy, c.size_px, near.value))
                hits += 1
            elif near is None or dist > 0.5 * near.size:
                s.false_hits.append(Die(*c.center_xy, c.size_px, NOT_A_DIE))
                misses += 1
    print(f"mined {hits} located dice and {misses} false hits", flush=True)


def to_samples(images: list[LabelledImage]) -> list[Sample]:
    out = []
    for im in images:
        frame = cv2.imread(str(im.path), cv2.IMREAD_COLOR)
        if frame is None:
            raise SystemExit(f"cannot read {im.path}")
        sides = [max(d.bbox[2], d.bbox[3]) for d in im.dice]
        if im.dataset == "matteop65_d6":
            big = [s for s, d in zip(sides, im.dice, strict=True) if d.value >= 2]
            die = statistics.median(big) / PIP_BOX_TO_DIE if big else max(60.0, *sides)
            sides = [die] * len(sides)
        # what the photo shows: a label that plainly contradicts its photo would teach the
        # network to misread that die wherever else it appears (bench_vision.DISPUTED_LABELS)
        shown = [d.shown(im.dataset, im.name) for d in im.dice]
        dice = [Die(*d.center, s, v) for d, s, v in zip(im.dice, sides, shown, strict=True)]
        out.append(Sample(im.name, frame, dice))
    return out


def synth_samples(
    n: int,
    rng: np.random.Generator,
    see_through: float = 0.0,
    wide: float = 0.0,
    *,
    logos: Sequence[str] = (),
    logo_share: float = 0.0,
) -> list[Sample]:
    """``n`` rendered tables (``vision.synth``: every body/pip colour pair of its styles, flat,
    leaning, stacked and off-pad dice, blur, noise, JPEG, glare) with exact truth. A die's size
    is its top face's axis-aligned extent, as the photos' boxes measure it; dice tilted 20
    degrees or more, or mostly hidden, train the locator but carry no value label (value 0 is
    never used for them: -1 marks "a die, face not a label"). A ``see_through`` share of the
    tables also draws from ``synth.TRANSLUCENT_STYLES`` (resin dice whose far pips show); a
    ``wide`` share are ``synth.wide_scene`` tables instead (domain randomisation: any die look,
    surface, distractor, lamp and camera tilt), whose dice under 16 px carry no value label.
    A ``logo_share`` of the other tables are of dice whose ace is one of ``logos``
    (``synth.LOGOS``), each such ace labelled :data:`LOGO_ACE`."""
    out = []
    resin = list(synth.STYLES.values()) + list(synth.TRANSLUCENT_STYLES.values())
    for i in range(n):
        # drawn only when asked for, so the default stream stays the shipped models' one
        styles = resin if see_through > 0 and rng.random() < see_through else None
        size = (640, 480) if rng.random() < 0.6 else (640, 640)
        if wide > 0 and rng.random() < wide:
            out.append(_wide_sample(f"wide-{i}", rng, size))
            continue
        logo = None
        if logos and logo_share > 0 and rng.random() < logo_share:
            logo = str(rng.choice(list(logos)))
            styles = [replace(st, logo=logo) for st in synth.STYLES.values()]
        scene = synth.random_scene(
            rng,
            n_dice=int(rng.integers(1, 11)),
            size=size,
            cocked=0.1,
            stacked=0.05,
            off_pad=0.1,
            degrade=bool(rng.random() < 0.6),
            styles=styles,
        )
        shot = synth.render(scene, size=size, rng=rng)
        dice = _labelled(shot.truth.dice, min_px=0.0)
        if logo is not None:
            dice = [replace(d, value=LOGO_ACE) if d.value == 1 else d for d in dice]
        out.append(Sample(f"synth-{i}", shot.image, dice))
    return out


def _wide_sample(name: str, rng: np.random.Generator, size: tuple[int, int]) -> Sample:
    """One ``synth.wide_scene`` table as a training sample (labels as in ``synth_samples``)."""
    shot = synth.render_wide(synth.wide_scene(rng, size=size), size=size, rng=rng)
    return Sample(name, shot.image, _labelled(shot.truth.dice, min_px=16.0))


def _labelled(truth: Sequence[synth.DieTruth], *, min_px: float) -> list[Die]:
    """The dice of a render that teach the locator (half visible or more), each sized by its
    top face's axis-aligned extent; a value label only on dice flat (under 20 degrees), all
    but fully visible and ``min_px`` or more a side (-1: "a die, face not a label")."""
    dice = []
    for d in truth:
        if d.visible < 0.5:
            continue
        xs = [c[0] for c in d.corners_xy]
        ys = [c[1] for c in d.corners_xy]
        extent = max(max(xs) - min(xs), max(ys) - min(ys))
        sure = d.tilt_deg < 20 and d.visible >= 0.9 and d.size_px >= min_px
        dice.append(Die(d.center_xy[0], d.center_xy[1], extent, d.value if sure else -1))
    return dice
