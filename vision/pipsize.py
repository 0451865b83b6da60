"""How large a die's top face looks, to about a percent, measured from its pips.

Why: a die resting on another die is one die-height nearer a camera above the pad, so its top
face looks 4-8 % larger than the flat dice beside it (a 14-19 mm die, a camera 280-370 mm up),
and that is often all an overhead camera sees of a stack. The reader's located size cannot show
it: it boxes side faces and shadows too and spreads +-20 %. The pips can: they are on the top
face alone, at fixed places on it, so their layout scales exactly with the face.

How (values 2-6; a 1 has no spacing to measure):

1. the centre is where the local-contrast map is point-symmetric -- every standard face of 2-6
   pips is symmetric about the face centre, whatever its turn -- the peak of the map's
   autoconvolution (p90 error under 1 % of a side on renders; the reader's centre is off by
   ~10 % of a side, pulled towards side faces);
2. the scale and turn are where the value's pip layout fits the pips best, with the places a
   pip is *not* (the rest of the 3 x 3 grid) counted against it: a coarse search;
3. the scale is refined from the second moment of the pip ink about that centre, within the
   face, which is proportional to the face's side squared (clean renders: p10-p90 of the
   measured over the true side 0.995-1.008).

Three checks mark a measurement ``consistent`` (the fit and the moment agree, the ink is
centred, the layout is as wide as it is tall: a tilted face is foreshortened one way). Real
dice place their pips a little differently from one maker to the next; that scales every
value's moment alike, so sizes of dice of one set compare correctly.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import DieReading, FaceSize, Pad, Point

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

PIP_OFFSET = 0.26
"""Centre of a corner pip from the face centre along each axis, in sides (standard dice:
0.25-0.3; it cancels out when sizes of the same set are compared)."""
PIP_RADIUS = 0.095
"""Pip radius in sides."""

_LAYOUT: dict[int, tuple[tuple[int, int], ...]] = {
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
}
"""Pip places on the 3 x 3 grid of a face (u, v in units of ``PIP_OFFSET``)."""
_GRID = tuple((a, b) for a in (-1, 0, 1) for b in (-1, 0, 1))


def _moment(value: int, axis: int | None = None) -> float:
    """Mean squared distance of a face's pip ink from its centre, in sides squared: along one
    axis (0: u, 1: v) or in the plane (None), leaving out a centre pip (see ``_HOLE``).
    Uniform discs: a pip adds r^2/4 per axis."""
    pips = [p for p in _LAYOUT[value] if p != (0, 0)]
    q2 = PIP_OFFSET * PIP_OFFSET
    if axis is None:
        return sum((a * a + b * b) * q2 for a, b in pips) / len(pips) + PIP_RADIUS**2 / 2
    return sum((p[axis] ** 2) * q2 for p in pips) / len(pips) + PIP_RADIUS**2 / 4


_ASPECT = {v: math.sqrt(_moment(v, 0) / _moment(v, 1)) for v in (4, 5, 6)}
"""The spread of a flat face's pips along its long axis over its short one, of the faces whose
pips spread both ways (a 2's and a 3's lie on a line: a tilt along it does not show)."""


_SYM_PX = 48  # symmetry patch side, px
_SYM_SPAN = 2.0  # ... in located sides
_FIT_PX = 80  # fit patch side, px
_FIT_SPAN = 1.6  # ... in located sides
_SCALES = np.exp(np.linspace(math.log(0.55), math.log(1.5), 80)).astype(np.float32)
"""Face side over the located side, searched (the located side is 0.77-1.24 x the face's
from the 10th to the 90th percentile on renders, and up to 1.6 x for dice showing big side
faces)."""
_TURN_STEP = 3.0  # degrees
_AGREE = 0.05  # the moment's scale within this fraction of the fit's
_CENTRED = 0.03  # the pip ink's centroid within this many sides of the symmetry centre
_SQUARE = 0.04  # the layout's width over its height within this fraction of 1
_HOLE = 0.17  # ... and a centre pip within this: left out, as it weighs the moment only down
_DISC = 0.47  # the face's pips lie within this many sides of its centre (corner pips: 0.46)


def _warp(frame: U8, center: Point, px_per_side: float, out: int) -> U8:
    k = px_per_side
    half = (out - 1) / 2
    m = np.array([[k, 0.0, half - k * center[0]], [0.0, k, half - k * center[1]]])
    patch = cv2.warpAffine(
        frame, m, (out, out), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(patch, np.uint8)


def _coords(n: int, span: float) -> tuple[F32, F32]:
    """Pixel centres of an n x n patch of ``span`` sides, in sides from its centre (x, y)."""
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    c = (n - 1) / 2
    return (xx - c) / (n / span), (yy - c) / (n / span)


_SX, _SY = _coords(_SYM_PX, _SYM_SPAN)
_SYM_WINDOW = np.exp(-(_SX**2 + _SY**2) / (2 * 0.55**2)).astype(np.float32)
_FX, _FY = _coords(_FIT_PX, _FIT_SPAN)
_FR2 = _FX**2 + _FY**2
_FR2_FLAT = _FR2.reshape(-1)
_PLANES = np.stack([np.ones_like(_FX), _FX, _FY, _FX * _FX, _FY * _FY, _FX * _FY]).reshape(6, -1)
"""Per pixel of the fit patch: 1, x, y, x^2, y^2, xy (sides): one product gives the moments."""


_FACE_PX = np.flatnonzero(_FR2 < 0.25**2)
"""Fit-patch pixels (flat indices) surely on the face: its colour is their median."""
_PIPS_PX = np.flatnonzero(_FR2 < 0.4**2)
"""Fit-patch pixels where the pips are: their contrast with the face sets the ink scale."""
_ONES = np.ones((1, 3), np.float32)


def _norm(diff: F32) -> F32:
    """Each pixel's length over its three channels (OpenCV's calls: ~5x NumPy's here, and
    this runs for every die whose size is measured)."""
    h, w = diff.shape[:2]
    out: F32 = np.sqrt(cv2.transform(cv2.multiply(diff, diff), _ONES).reshape(h, w))
    return out


def _median(rows: F32) -> F32:
    """``np.median(rows, axis=1)`` by one partial sort (the same numbers, ~3x faster)."""
    k = rows.shape[1]
    if k % 2:
        out: F32 = np.partition(rows, k // 2, axis=1)[:, k // 2]
        return out
    p = np.partition(rows, [k // 2 - 1, k // 2], axis=1)
    mid: F32 = np.asarray((p[:, k // 2 - 1] + p[:, k // 2]) / 2, np.float32)
    return mid


def _percentile(values: F32, q: float) -> float:
    """``np.percentile(values, q)`` (linear) by one partial sort (the same number, ~6x faster)."""
    pos = q / 100 * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    p = np.partition(values, [lo, hi])
    return float(p[lo] + (p[hi] - p[lo]) * (pos - lo))


def _parabola(a: float, b: float, c: float) -> float:
    den = a - 2 * b + c
    return 0.0 if abs(den) < 1e-12 else 0.5 * (a - c) / den


def symmetry_centre(frame: U8, center_xy: Point, side_px: float) -> Point:
    """The point within 0.45 sides of ``center_xy`` about which the die's local contrast (pips,
    outline) is most nearly point-symmetric: the peak of the contrast map's autoconvolution,
    sub-pixel by a parabola through its neighbours."""
    k = _SYM_PX / (_SYM_SPAN * side_px)
    lab = cv2.cvtColor(_warp(frame, center_xy, k, _SYM_PX), cv2.COLOR_BGR2LAB).astype(np.float32)
    blur = cv2.GaussianBlur(lab, (0, 0), 0.15 * _SYM_PX / _SYM_SPAN)
    ink = _norm(np.asarray(cv2.subtract(lab, blur), np.float32)) * _SYM_WINDOW
    padded = np.zeros((2 * _SYM_PX, 2 * _SYM_PX), np.float32)  # no wrap-around
    padded[:_SYM_PX, :_SYM_PX] = ink
    f = cv2.dft(padded)  # OpenCV's: half the time of NumPy's here
    conv = cv2.idft(cv2.mulSpectrums(f, f, 0), flags=cv2.DFT_SCALE | cv2.DFT_REAL_OUTPUT)
    # ... the autoconvolution peaks at twice the centre
    lim = int(0.9 * _SYM_PX / _SYM_SPAN)
    mid = _SYM_PX - 1
    sub = conv[mid - lim : mid + lim + 1, mid - lim : mid + lim + 1]
    iy, ix = (int(i) for i in np.unravel_index(int(np.argmax(sub)), sub.shape))
    dy = _parabola(sub[iy - 1, ix], sub[iy, ix], sub[iy + 1, ix]) if 0 < iy < 2 * lim else 0.0
    dx = _parabola(sub[iy, ix - 1], sub[iy, ix], sub[iy, ix + 1]) if 0 < ix < 2 * lim else 0.0
    return (
        center_xy[0] + (ix + dx - lim) / 2.0 / k,
        center_xy[1] + (iy + dy - lim) / 2.0 / k,
    )


def face_size(
    frame: U8,
    center_xy: Point,
    side_px: float,
    value: int | None,
) -> FaceSize | None:
    """The top face of the die the reader located at ``center_xy`` (side ``side_px``) and read
    as ``value``, measured from its pips; None for a 1, an unread die or a face with no
    contrast."""
    if value not in _LAYOUT or side_px < 4:
        return None
    assert value is not None
    center = symmetry_centre(frame, center_xy, side_px)
    k = _FIT_PX / (_FIT_SPAN * side_px)
    lab = cv2.cvtColor(_warp(frame, center, k, _FIT_PX), cv2.COLOR_BGR2LAB).astype(np.float32)
    face = _median(lab.reshape(-1, 3)[_FACE_PX].T)
    dist = _norm(lab - face)
    contrast = _percentile(dist.reshape(-1)[_PIPS_PX], 97)
    if contrast < 8.0:  # no pips stand out
        return None
    ink = np.clip((dist - 0.35 * contrast) / (0.3 * contrast), 0.0, 1.0).astype(np.float32)
    # pips are small blobs: a band-pass keeps them and drops the pad around the die
    px = _FIT_PX / _FIT_SPAN
    spots = np.maximum(
        cv2.GaussianBlur(ink, (0, 0), 0.04 * px) - cv2.GaussianBlur(ink, (31, 31), 0.15 * px), 0.0
    )
    scale, turn = _fit_layout(spots, value)
    s = scale
    flat_ink = ink.reshape(-1)
    m = np.zeros(6, np.float32)
    for _ in range(2):  # the moment within the face, about the symmetry centre
        within = np.less(_FR2_FLAT, (_DISC * s) ** 2) & np.greater_equal(
            _FR2_FLAT, (_HOLE * s) ** 2
        )
        m = _PLANES @ (flat_ink * within)  # sums of w, w x, w y, w x^2, w y^2, w x y
        if m[0] < 1e-3:
            return None
        s = math.sqrt(float(m[3] + m[4]) / float(m[0]) / _moment(value, None))
    total, xx, yy, xy = float(m[0]), float(m[3]), float(m[4]), float(m[5])
    off = math.hypot(float(m[1]), float(m[2])) / total / s
    fits = abs(s / scale - 1) <= _AGREE and off <= _CENTRED
    consistent, squeeze = fits, None
    if value in _ASPECT:  # a face squeezed one way by a tilt
        root = math.hypot(xx - yy, 2 * xy)
        squeeze = math.sqrt((xx + yy + root) / max(xx + yy - root, 1e-9)) / _ASPECT[value]
        consistent = fits and abs(squeeze - 1) <= _SQUARE
    center_xy = (float(center[0]), float(center[1]))
    return FaceSize(side_px * s, center_xy, math.degrees(turn), consistent, squeeze, fits)


def _fit_layout(spots: F32, value: int) -> tuple[float, float]:
    """Scale (over the located side) and turn (radians) at which ``value``'s pip layout best
    fits ``spots``: mean response at its pips minus that at the grid's other places."""
    mx, my, weights, n_turns = _layout_maps(value)
    got = cv2.remap(spots, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=1)
    best = int(np.argmax(got @ weights))
    i, j = divmod(best, n_turns)
    return float(_SCALES[i]), math.radians(j * _TURN_STEP)


@functools.cache
def _layout_maps(value: int) -> tuple[F32, F32, F32, int]:
    """Where ``value``'s pips and the grid's other places fall in the fit patch at every
    searched scale and turn (remap maps, one row per scale-turn pair), the weights that make
    a row's mean response at pips minus that elsewhere, and the number of turns."""
    pips = _LAYOUT[value]
    rest = [g for g in _GRID if g not in pips]
    pts = np.array(pips + tuple(rest), np.float32) * PIP_OFFSET
    span = 180.0 if value in (2, 3, 6) else 90.0  # 4 and 5 repeat every quarter turn
    turns = np.radians(np.arange(0.0, span, _TURN_STEP)).astype(np.float32)
    cs, sn = np.cos(turns)[None, :, None], np.sin(turns)[None, :, None]
    sc = _SCALES[:, None, None]
    u = (pts[:, 0] * cs - pts[:, 1] * sn) * sc
    v = (pts[:, 0] * sn + pts[:, 1] * cs) * sc
    px, half = _FIT_PX / _FIT_SPAN, (_FIT_PX - 1) / 2
    mx = np.ascontiguousarray((u * px + half).reshape(-1, len(pts)), np.float32)
    my = np.ascontiguousarray((v * px + half).reshape(-1, len(pts)), np.float32)
    weights = np.array([1 / len(pips)] * len(pips) + [-1 / len(rest)] * len(rest), np.float32)
    for a in (mx, my, weights):
        a.setflags(write=False)
    return mx, my, weights, len(turns)


def size_ratio(
    mine: FaceSize | None,
    references: Sequence[FaceSize | None],
    *,
    agree: float,
    at_least: int = 1,
) -> float | None:
    """``mine``'s side over the median side of the consistent ``references``; None when
    either is missing, when fewer than ``at_least`` references are consistent, or when they
    disagree by more than ``agree`` (largest over smallest, less 1): a camera at a slant,
    whose nearer dice look larger, or a reference that is itself not flat."""
    if mine is None or not mine.consistent:
        return None
    sides = [r.side_px for r in references if r is not None and r.consistent]
    if len(sides) < max(at_least, 1) or not sizes_agree(sides, agree):
        return None
    return mine.side_px / statistics.median(sides)


def sizes_agree(sides: Sequence[float], within: float) -> bool:
    """Whether the largest of ``sides`` is within ``within`` (a fraction) of the smallest."""
    return max(sides) <= (1 + within) * min(sides)


def _quad(pad: Pad) -> npt.NDArray[np.float32] | None:
    """The pad's outline as four corners (approximated when it has more), or None."""
    pts = np.asarray(pad.polygon, np.float32)
    if len(pts) != 4:
        hull = cv2.convexHull(pts)
        perimeter = cv2.arcLength(hull, True)
        quads = [cv2.approxPolyDP(hull, e * perimeter, True) for e in (0.01, 0.02, 0.04)]
        four = [q for q in quads if len(q) == 4]
        if not four:
            return None
        pts = np.asarray(four[0].reshape(4, 2), np.float32)
    if abs(cv2.contourArea(pts)) < 1.0:
        return None
    return pts


def _sizes_at(pad: Pad, points: npt.NDArray[np.float32]) -> npt.NDArray[np.float64] | None:
    """How large a die looks at each frame point, up to a common factor: the local scale of
    the frame-to-pad homography (a die's linear size goes as w^(3/2), w its projective
    denominator; neither the pad's size nor its aspect enters). None without a quadrilateral."""
    quad = _quad(pad)
    if quad is None:
        return None
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    h = cv2.getPerspectiveTransform(quad, unit)
    return np.asarray(np.abs(points @ h[2, :2] + h[2, 2]) ** 1.5, np.float64)


def square_on(pad: Pad | None, tolerance: float = 0.03) -> bool:
    """Whether the camera looks squarely down on the ``pad`` (a quadrilateral): a die anywhere
    on it would look the same size, within ``tolerance``. A camera at a slant sees the pad as
    a trapezoid, the nearer edge longer. Unknown (no pad, not four corners): False."""
    if pad is None:
        return False
    quad = _quad(pad)
    w = None if quad is None else _sizes_at(pad, quad)
    return w is not None and bool(float(w.max()) <= (1 + tolerance) * float(w.min()))


def _centre(pad: Pad) -> Point:
    xs, ys = zip(*pad.polygon, strict=True)
    return (statistics.fmean(xs), statistics.fmean(ys))


def _to_centre(pad: Pad, points: Sequence[Point]) -> list[float] | None:
    """For each point, how much larger a die looks at the pad's centre than there (None when
    the pad is not a quadrilateral); one homography for all the points."""
    w = _sizes_at(pad, np.array([*points, _centre(pad)], np.float32))
    return None if w is None else [float(w[-1] / x) for x in w[:-1]]


def at_centre(pad: Pad, xy: Point, side_px: float) -> float | None:
    """``side_px`` measured at ``xy`` as the same face would look at the pad's centre (None
    when the pad is not a quadrilateral)."""
    k = _to_centre(pad, [xy])
    return None if k is None else side_px * k[0]


def flat_side_at(pad: Pad | None, xy: Point) -> float | None:
    """How large a flat die's top face looks at ``xy``: the pad's learnt ``flat_side_px`` (at
    its centre) carried there; None when unknown."""
    if pad is None or pad.flat_side_px is None:
        return None
    k = _to_centre(pad, [xy])
    return None if k is None else pad.flat_side_px / k[0]


def flat_samples(frame: U8, dice: Sequence[DieReading], pad: Pad | None) -> list[float]:
    """The top faces of the dice of a settled roll that lie flat -- read 2-6, no flag, a
    consistent pip layout -- measured (``face_size``; a die the flags measured already,
    ``DieReading.face``, is not measured again) and carried to the pad's centre
    (``at_centre``): samples for :func:`learned_side`. Needs a quadrilateral pad."""
    if pad is None or _quad(pad) is None:
        return []
    faces = []
    for d in dice:
        if d.flags or d.value is None or not 2 <= d.value <= 6:
            continue
        size = d.face if d.face is not None else face_size(frame, d.center_xy, d.size_px, d.value)
        if size is not None and size.consistent:
            faces.append(size)
    k = _to_centre(pad, [f.center_xy for f in faces]) if faces else None
    return [] if k is None else [f.side_px * x for f, x in zip(faces, k, strict=True)]


def learned_side(
    samples: Sequence[float], *, at_least: int = 8, agree: float = 0.03
) -> float | None:
    """A flat die's side at the pad's centre from recent :func:`flat_samples`: their median,
    once there are ``at_least`` and the middle 80 % of them agree within ``agree`` (largest
    over smallest, less 1). Else None: too few, or the dice changed (another set, another
    size), and the old size must not judge the new dice."""
    if len(samples) < at_least:
        return None
    xs = sorted(samples)
    cut = len(xs) // 10
    middle = xs[cut : len(xs) - cut]
    if not sizes_agree(middle, agree):
        return None
    return statistics.median(xs)
