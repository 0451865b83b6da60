"""COCKED and STACKED: is a die flat on the pad, and is it on or against another die?

No public reader judges these and no public photo set labels them, so the judgement is learned
from :mod:`vision.synth` renders, whose ground truth is exact, by a small convolutional network
(``flags.onnx``, trained by ``bench/train_flags.py``; OpenCV's ``dnn`` at run time, well under
a millisecond per die). What it is shown is chosen so the cues of the issue are in view:

- a patch cut around the die, **turned to the die's axes and scaled** so the top face is always
  the same size: foreshortening (a flat top face is a square seen from above, a tilted one a
  rectangle of aspect cos t), elliptical pips and side faces all land in the same place;
- its lightness and its colour distance from the **pad around it** (the patch border): side
  faces, shadows and a die below show up against the pad whatever its colour;
- the die's **offset from the image centre over the focal length**, in the die's axes: a flat
  die shows side faces towards the centre in proportion (perspective), so side faces are only
  evidence of tilt beyond that;
- the distance and direction of the **nearest other die**: a tilted die touching another rests
  against it.

Two rules need no learning. Two detections whose centres are closer than half a side
(``FlagParams.duplicate``) are one die seen twice (the reader often finds a tilted die's top and
side face separately): neither is evidence of a stack, and they are not each other's neighbour.
And a die can only rest on or against *another* die: STACKED needs another (distinct) detection
within ``FlagParams.stack_reach`` sides as well as the model's verdict.

The operating points are chosen for the bar, where a false flag forces a re-roll of every die
just rolled while a missed one can still be called from the phone: at most 1 % of flat,
unstacked dice flagged, end to end through ``read_roll``, on renders and on real photos
(``bench/bench_synth.py --only flags,sheet`` prints the figures).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import DieFlag, Point

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

GRID = 40
"""Patch side in px as the model sees it."""

SPAN = 2.2
"""Patch side in top-face sides (the die, its side faces and what touches it)."""

MODEL_PATH = Path(__file__).resolve().parent / "flags.onnx"

DUPLICATE = 0.5
"""Centre distance, in sides of the larger, under which two detections are one die seen twice."""


@dataclass(frozen=True)
class FlagParams:
    """Thresholds and the camera, in the units stated."""

    focal_frac: float = 1.0  # camera focal length / frame width (how much flat dice show sides)
    # operating points: <= 1 % of flat, unstacked dice flagged end to end (see the module doc)
    cocked_threshold: float = 0.8  # model probability from which a die is COCKED
    stacked_threshold: float = 0.6  # model probability from which a die is STACKED
    duplicate: float = DUPLICATE  # centre distance (sides) under which two detections are one die
    overlap: float = 0.85  # centre distance (sides) under which two distinct dice overlap
    stack_reach: float = 1.6  # another die must be this close (sides) for STACKED

    def __post_init__(self) -> None:
        if not self.focal_frac > 0:
            raise ValueError("focal_frac must be positive")
        for name in ("cocked_threshold", "stacked_threshold"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be within (0, 1)")
        if not 0.0 <= self.duplicate <= self.overlap <= self.stack_reach:
            raise ValueError("need 0 <= duplicate <= overlap <= stack_reach")


@dataclass(frozen=True)
class Neighbour:
    """Another die in the same frame: its centre and top-face side (frame px)."""

    center_xy: Point
    side_px: float


@dataclass(frozen=True)
class Evidence:
    """The verdicts on one die, as probabilities, and the flags they make."""

    cocked: float
    stacked: float
    overlapped: bool  # another distinct die is closer than ``FlagParams.overlap`` sides
    touching: bool = True  # another distinct die is within ``FlagParams.stack_reach`` sides

    def flags(self, params: FlagParams = FlagParams()) -> frozenset[DieFlag]:
        out = set()
        if self.cocked >= params.cocked_threshold:
            out.add(DieFlag.COCKED)
        if self.stacked >= params.stacked_threshold and self.touching:
            out.add(DieFlag.STACKED)
        return frozenset(out)


# --------------------------------------------------------------------------- features

_BORDER = np.zeros((GRID, GRID), bool)
_BORDER[:2, :] = _BORDER[-2:, :] = _BORDER[:, :2] = _BORDER[:, -2:] = True
N_CHANNELS = 3
N_SCALARS = 8


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
    return np.asarray(small, np.float32) / 255.0


def features(
    frame: U8,
    center_xy: Point,
    side_px: float,
    angle_deg: float,
    *,
    neighbours: Sequence[Neighbour] = (),
    focal_frac: float = 1.0,
) -> F32:
    """The model's input for one die: ``N_CHANNELS`` GRID x GRID channels (lightness and colour
    distance from the pad, and where a flat die would be; all die-aligned) and ``N_SCALARS``
    geometry numbers, as one float32 vector."""
    k = 2 * GRID / (SPAN * max(side_px, 1.0))  # warped at twice the size, then area-reduced
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    cx, cy = center_xy
    half = (2 * GRID - 1) / 2
    m = np.array(
        [
            [c * k, s * k, half - k * (c * cx + s * cy)],
            [-s * k, c * k, half - k * (-s * cx + c * cy)],
        ]
    )
    big = cv2.warpAffine(
        frame, m, (2 * GRID, 2 * GRID), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    patch = cv2.resize(big, (GRID, GRID), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(np.asarray(patch, np.uint8), cv2.COLOR_BGR2LAB).astype(np.float32)
    pad = np.median(lab[_BORDER], axis=0)
    light = (lab[:, :, 0] - pad[0]) / 64.0
    chroma = np.hypot(lab[:, :, 1] - pad[1], lab[:, :, 2] - pad[2]) / 32.0

    h, w = frame.shape[:2]
    f = focal_frac * w
    ex, ey = (cx - w / 2) / f, (cy - h / 2) / f
    eu, ev = ex * c + ey * s, -ex * s + ey * c
    near, nu, nv = 3.0, 0.0, 0.0
    for nb in neighbours:
        dx, dy = nb.center_xy[0] - cx, nb.center_xy[1] - cy
        d = math.hypot(dx, dy) / max(side_px, 1.0)
        if d < near:
            near = d
            nu, nv = (
                (dx * c + dy * s) / (d * side_px + 1e-9),
                (-dx * s + dy * c) / (d * side_px + 1e-9),
            )
    scalars = np.array(
        [eu, ev, abs(eu), abs(ev), abs(eu) + abs(ev), min(near, 3.0) / 3.0, nu, nv], np.float32
    )
    flat = expected_silhouette(eu, ev)
    return np.concatenate([light.ravel(), chroma.ravel(), flat.ravel(), scalars]).astype(np.float32)


# --------------------------------------------------------------------------- model

PLANES = N_CHANNELS + 5
"""Network input planes: the image channels, then eu, ev, nearness, nu, nv as constant planes."""


def planes(x: F32) -> F32:
    """Feature vectors (rows) as the network's N x PLANES x GRID x GRID input."""
    x = np.atleast_2d(x)
    n = len(x)
    g2 = GRID * GRID
    img = x[:, : N_CHANNELS * g2].reshape(n, N_CHANNELS, GRID, GRID)
    sc = x[:, N_CHANNELS * g2 :]
    consts = sc[:, [0, 1, 5, 6, 7]]  # eu, ev, nearness, nu, nv
    const_planes = np.broadcast_to(consts[:, :, None, None], (n, 5, GRID, GRID))
    return np.ascontiguousarray(np.concatenate([img, const_planes], axis=1), np.float32)


class FlagModel:
    """The trained network (ONNX, run by OpenCV's ``dnn``): N x PLANES x GRID x GRID in,
    N x 2 logits (cocked, stacked) out."""

    def __init__(self, path: Path) -> None:
        try:
            self._net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as exc:
            raise RuntimeError(
                f"flag model {path} is missing or damaged; run bench/train_flags.py ({exc})"
            ) from exc
        self._lock = threading.Lock()  # a cv2.dnn.Net is stateful
        self.path = path

    def predict(self, x: F32) -> F32:
        """Rows of features in, rows of (p_cocked, p_stacked) out."""
        with self._lock:
            self._net.setInput(planes(x))
            logits = np.asarray(self._net.forward(), np.float32).reshape(-1, 2)
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30))), np.float32)


@functools.lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> FlagModel:
    """The trained model (cached). A missing or broken file is an error naming it."""
    if not path.is_file():
        raise RuntimeError(f"flag model {path} is missing; run bench/train_flags.py")
    return FlagModel(path)


# --------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class DieView:
    """What the reader knows of one die: centre, top-face side and turn (frame px, degrees)."""

    center_xy: Point
    side_px: float
    angle_deg: float


def neighbours_of(
    die: DieView, others: Sequence[DieView], duplicate: float = DUPLICATE
) -> list[Neighbour]:
    """The other dice as the model's neighbours, leaving out detections of this same die (a
    die cannot rest on or against itself; the model was trained without them)."""
    return [
        Neighbour(o.center_xy, o.side_px)
        for o in others
        if math.dist(die.center_xy, o.center_xy) >= duplicate * max(die.side_px, o.side_px)
    ]


def _within(die: DieView, others: Sequence[Neighbour], sides: float) -> bool:
    """Whether one of ``others`` has its centre within ``sides`` sides (of the larger) of die."""
    return any(
        math.dist(die.center_xy, o.center_xy) < sides * max(die.side_px, o.side_px) for o in others
    )


def evidence_of(
    frame: U8,
    die: DieView,
    others: Sequence[DieView] = (),
    *,
    params: FlagParams = FlagParams(),
    model: FlagModel | None = None,
) -> Evidence:
    """The verdicts on ``die`` of ``frame`` (BGR) given the other dice found in it."""
    near = neighbours_of(die, others, params.duplicate)
    x = features(
        frame,
        die.center_xy,
        die.side_px,
        die.angle_deg,
        neighbours=near,
        focal_frac=params.focal_frac,
    )
    p = (model or load_model()).predict(x)[0]
    return Evidence(
        float(p[0]),
        float(p[1]),
        overlapped=_within(die, near, params.overlap),
        touching=_within(die, near, params.stack_reach),
    )


def judge(
    frame: U8,
    dice: Sequence[DieView],
    *,
    params: FlagParams = FlagParams(),
    model: FlagModel | None = None,
) -> tuple[Evidence, ...]:
    """Evidence for every die of one frame (BGR), in the order given."""
    return tuple(
        evidence_of(frame, d, [o for j, o in enumerate(dice) if j != i], params=params, model=model)
        for i, d in enumerate(dice)
    )


def die_flags(
    frame: U8, die: DieView, others: Sequence[DieView], *, params: FlagParams = FlagParams()
) -> frozenset[DieFlag]:
    """COCKED / STACKED for one die: the hook ``vision.detect`` calls for each die it found."""
    return evidence_of(frame, die, others, params=params).flags(params)
