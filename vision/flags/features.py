"""What the flags network is shown of each die (``features_all``): one patch and a few numbers.

What it is shown is chosen so the cues of the issue are in view:

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

``bench/train_flags.py`` trains on exactly these rows: a change here is a retraining.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from vision.flags.dice import DieView, Neighbour
from vision.reading import Point

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

GRID = 40
"""Patch side in px as the model sees it."""

SPAN = 2.2
"""Patch side in top-face sides (the die, its side faces and what touches it)."""

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
