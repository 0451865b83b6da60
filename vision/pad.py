"""The pad: where dice must land. Found once from a frame of the empty pad (or given in config),
kept as a polygon (:class:`vision.reading.Pad`) and a mask, saved as JSON.

Finding it is a colour-region problem, not an edge problem: felt, mats and tray floors are one
colour with fine texture, the table and the rail around them are another. So the frame is
reduced, smoothed past the texture, and every pixel is scored by its colour distance (CIELab,
lightness down-weighted so a light gradient does not split the pad) from the colour under the
image centre, where a mounted camera looks at the pad. Otsu's threshold separates pad from
not-pad; the region holding the centre, with holes filled (a die left on the pad), is the pad,
and its outline is simplified to a quadrilateral when it is one. A grey or black pad has only
lightness to go on, so a lamp at one side can push its bright or dark end out of it: when the
lightness over the pad found rises steeply across the frame (``TILT_MIN``), that plane is taken
out and the pad looked for again. On renders under a lamp making one side 40 % brighter and the
other 40 % darker, a black mat went from IoU 0.61-0.99 (5 of 12 under 0.95) to 0.98-0.99, a
grey felt from 0.81-0.99 (3 of 12) to 0.99; coloured pads are unchanged, and so are the
nellbyler_d6 tray photos' pads (``bench_synth --only pad``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import Pad

MIN_AREA_FRAC = 0.15
"""The smallest pad :func:`find_pad` accepts, as a share of the frame: a smaller region round
the centre is more likely a die or a stain than the pad (and its dice would be small)."""

WORK_WIDTH = 320
"""Pixels across the reduced frame the pad is searched in."""

LOG_SCALE = 100.0
"""Lab-units per unit of log-lightness (a 2x brightness step scores about 69)."""

TILT_MIN = 18.0
"""How much a grey pad's lightness must rise across the frame (log-lightness units, see
``LOG_SCALE``: a lamp making one side ~20 % brighter than the other) before :func:`find_pad`
takes the tilt out and looks again. Shallower tilts it finds the pad through anyway; the
tray photos of nellbyler_d6 tilt 2-8 units (at most 15), by shading towards the tray's walls
rather than a lamp, and the tilt taken out of them moved their outlines off the floor."""

GREY_CHROMA = 8.0
"""CIELab chroma below which a pad counts as grey/black: then lightness is all there is to go
on, so it keeps its full weight."""


class PadNotFoundError(ValueError):
    """No pad-like region surrounds the centre of the frame."""


def find_pad(
    frame: npt.NDArray[np.uint8],
    *,
    min_area_frac: float = MIN_AREA_FRAC,
    lightness_weight: float = 0.35,
) -> Pad:
    """Find the pad in a BGR frame of the (ideally empty) pad.

    ``min_area_frac`` is the smallest pad accepted, as a fraction of the frame;
    ``lightness_weight`` scales CIELab lightness against the two colour axes (lower tolerates
    stronger light gradients, but needs a pad that differs from the table in hue).
    Raises :class:`PadNotFoundError` when nothing pad-like surrounds the centre.
    """
    if frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"find_pad needs a BGR frame, got shape {frame.shape}")
    h, w = frame.shape[:2]
    scale = WORK_WIDTH / w
    small = cv2.resize(frame, (WORK_WIDTH, max(8, round(h * scale))), interpolation=cv2.INTER_AREA)
    sh, sw = small.shape[:2]
    small = cv2.bilateralFilter(cv2.medianBlur(small, 5), 7, 30, 5)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    # Lightness as a log: a light gradient multiplies brightness, so it shifts log-lightness
    # by the same small amount on a black mat as on a white one.
    lab[:, :, 0] = LOG_SCALE * np.log(lab[:, :, 0] + 8.0)
    cy, cx = sh // 2, sw // 2
    ref = _reference(_centre(lab, cx, cy))
    grey = float(np.hypot(ref[1] - 128, ref[2] - 128)) < GREY_CHROMA
    if not grey:
        lab[:, :, 0] *= lightness_weight  # a coloured pad: hue carries the boundary
    smallest = min_area_frac * sh * sw
    found = _outline(lab, cx, cy)
    if grey and found is not None:
        # a grey or black pad has only lightness to go on, and a lamp at one side tilts it:
        # take the tilt out, as measured over the pad just found, and look again
        flat, tilt = _untilted(lab, found[0])
        again = _outline(flat, cx, cy) if tilt >= TILT_MIN else None
        if again is not None and again[1] >= smallest:
            found = again
    if found is None:
        raise PadNotFoundError("no pad-coloured region at the centre of the frame")
    poly, area = found
    if area < smallest:
        raise PadNotFoundError(
            f"the region around the centre covers {area / (sh * sw):.0%} of the frame, "
            f"less than {min_area_frac:.0%}: is the camera looking at the pad?"
        )
    full = poly.astype(np.float64) / scale
    full[:, 0] = np.clip(full[:, 0], 0, w - 1)
    full[:, 1] = np.clip(full[:, 1], 0, h - 1)
    return Pad(tuple((float(x), float(y)) for x, y in full))


def _centre(lab: npt.NDArray[np.float32], cx: int, cy: int) -> npt.NDArray[np.float32]:
    """The middle fifth of the frame each way, where a mounted camera looks at the pad."""
    sh, sw = lab.shape[:2]
    return lab[cy - sh // 10 : cy + sh // 10 + 1, cx - sw // 10 : cx + sw // 10 + 1]


def _reference(patch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The pad's colour: the median of the centre patch (a die there is an outlier)."""
    return np.asarray(np.median(patch.reshape(-1, 3), axis=0), np.float32)


def _outline(
    lab: npt.NDArray[np.float32], cx: int, cy: int
) -> tuple[npt.NDArray[np.float32], float] | None:
    """The pad's simplified outline (a quadrilateral when one is found) and its area, in the
    reduced frame's pixels, or None when no region surrounds the centre."""
    patch = _centre(lab, cx, cy)
    ref = _reference(patch)
    dist = np.linalg.norm(lab - ref, axis=2)
    d8 = np.clip(dist * 4, 0, 255).astype(np.uint8)  # quarter-unit steps for Otsu
    otsu, _ = cv2.threshold(d8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    spread = float(np.percentile(np.linalg.norm(patch - ref, axis=2), 75))  # dice are outliers
    # Pad versus the rest (Otsu), but never wider than the pad's own texture allows (a rail a
    # little darker than a black mat is not the mat) -- unless only Otsu's wider level gives a
    # four-sided region (a tray floor shaded towards its walls).
    tight = float(np.clip(min(otsu / 4, max(10.0, 4.0 * spread)), 6.0, 40.0))
    wide = float(np.clip(otsu / 4, 6.0, 40.0))
    found = [_region(dist, level, cx, cy) for level in dict.fromkeys((tight, wide))]
    outlines = [o for o in found if o is not None]
    if not outlines:
        return None
    polys = [(_simplify(o), float(cv2.contourArea(o))) for o in outlines]
    quads = [pa for pa in polys if len(pa[0]) == 4]
    return quads[0] if quads else polys[0]


def _untilted(
    lab: npt.NDArray[np.float32], poly: npt.NDArray[np.float32]
) -> tuple[npt.NDArray[np.float32], float]:
    """``lab`` with the plane that best fits the lightness inside ``poly`` (a pad of one
    colour lit from one side) taken out, level at the frame's centre; and how much that plane
    rises across the frame (log-lightness units, see ``TILT_MIN``)."""
    sh, sw = lab.shape[:2]
    inside = np.zeros((sh, sw), np.uint8)
    cv2.fillPoly(inside, [np.round(poly).astype(np.int32).reshape(-1, 1, 2)], 1)
    inside = np.asarray(cv2.erode(inside, np.ones((5, 5), np.uint8)), np.uint8)
    ys, xs = np.nonzero(inside)
    if len(xs) < 100:
        return lab, 0.0
    xc, yc = (xs - sw / 2.0) / sw, (ys - sh / 2.0) / sh
    a = np.column_stack([np.ones_like(xc), xc, yc])
    coef, *_ = np.linalg.lstsq(a, lab[ys, xs, 0].astype(np.float64), rcond=None)
    gx = (np.arange(sw, dtype=np.float32) - sw / 2.0) / sw
    gy = (np.arange(sh, dtype=np.float32) - sh / 2.0) / sh
    out = lab.copy()
    out[:, :, 0] -= np.float32(coef[1]) * gx[None, :] + np.float32(coef[2]) * gy[:, None]
    return out, float(np.hypot(coef[1], coef[2]))


def _region(
    dist: npt.NDArray[np.float32], level: float, cx: int, cy: int
) -> npt.NDArray[np.int32] | None:
    """Outline of the connected region within ``level`` of the pad colour around the centre."""
    near = (dist <= level).astype(np.uint8)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    near = np.asarray(cv2.morphologyEx(near, cv2.MORPH_OPEN, kernel), np.uint8)
    _, labels = cv2.connectedComponents(near, connectivity=4)
    centre_label = _label_near_centre(np.asarray(labels, np.int32), cx, cy)
    if centre_label == 0:
        return None
    region = (labels == centre_label).astype(np.uint8)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return np.asarray(max(contours, key=cv2.contourArea), np.int32)


def _label_near_centre(labels: npt.NDArray[np.int32], cx: int, cy: int) -> int:
    """The most common non-zero label in a small window at the centre (a die may sit there)."""
    h, w = labels.shape
    r = max(2, min(h, w) // 12)
    win = labels[max(0, cy - r) : cy + r + 1, max(0, cx - r) : cx + r + 1].ravel()
    win = win[win > 0]
    if win.size == 0:
        return 0
    return int(np.bincount(win).argmax())


def _simplify(outline: npt.NDArray[np.int32]) -> npt.NDArray[np.float32]:
    """A quadrilateral when the hull is one (within 2 % of its perimeter), else the hull."""
    hull = cv2.convexHull(outline)
    perimeter = cv2.arcLength(hull, True)
    for eps in (0.01, 0.02, 0.03):
        approx = cv2.approxPolyDP(hull, eps * perimeter, True)
        if len(approx) == 4:
            quad = np.asarray(approx.reshape(4, 2), np.int32)
            return np.asarray(_refine_quad(outline, quad), np.float32)
    approx = cv2.approxPolyDP(hull, 0.005 * perimeter, True)
    return np.asarray(approx.reshape(-1, 2), np.float32)


def _refine_quad(
    outline: npt.NDArray[np.int32], quad: npt.NDArray[np.int32]
) -> npt.NDArray[np.float64]:
    """Fit a line to the outline points along each side and intersect neighbours: corners
    clipped by morphology or by a die come back where the pad's edges meet."""
    pts = outline.reshape(-1, 2).astype(np.float64)
    q = quad.astype(np.float64)
    lines = []
    for i in range(4):
        a, b = q[i], q[(i + 1) % 4]
        ab = b - a
        length = float(np.hypot(*ab))
        if length < 1:
            return q
        n = np.array([-ab[1], ab[0]]) / length
        t = (pts - a) @ ab / length**2
        d = np.abs((pts - a) @ n)
        near = pts[(t > 0.1) & (t < 0.9) & (d < 3 + 0.02 * length)]
        if len(near) < 5:
            lines.append((a, ab / length))
            continue
        vx, vy, x0, y0 = cv2.fitLine(near.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], float), np.array([vx, vy], float)))
    corners = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        m = np.column_stack([d1, -d2])
        if abs(np.linalg.det(m)) < 1e-9:
            return q
        s, _ = np.linalg.solve(m, p2 - p1)
        corners.append(p1 + s * d1)
    return np.array(corners)


def pad_mask(pad: Pad, size: tuple[int, int], *, margin: float = 0.0) -> npt.NDArray[np.uint8]:
    """A ``size`` (width, height) uint8 mask, 255 inside ``pad`` (grown by ``margin`` px)."""
    w, h = size
    mask = np.zeros((h, w), np.uint8)
    poly = np.round(np.array(pad.polygon) * 16).astype(np.int32)
    cv2.fillPoly(mask, [poly], 255, cv2.LINE_8, 4)
    if margin > 0:
        k = 2 * round(margin) + 1
        mask = np.asarray(
            cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))), np.uint8
        )
    return mask


def scale_pad(pad: Pad, from_size: tuple[int, int], to_size: tuple[int, int]) -> Pad:
    """The same pad in a frame of another resolution (same camera, same field of view), its
    learnt flat die's size too. Sizes must be positive: a zero or negative one would divide by
    zero or mirror the pad silently."""
    if min(*from_size, *to_size) <= 0:
        raise ValueError(f"frame sizes must be positive, not {from_size} -> {to_size}")
    sx, sy = to_size[0] / from_size[0], to_size[1] / from_size[1]
    side = None if pad.flat_side_px is None else pad.flat_side_px * math.sqrt(sx * sy)
    return Pad(tuple((x * sx, y * sy) for x, y in pad.polygon), side)


def save_pad(
    pad: Pad, path: Path, *, frame_size: tuple[int, int], found_by: str | None = None
) -> None:
    """Write ``pad`` as JSON with the frame size it was found in and, when given, how it was
    found (``found_by``: for whoever opens the file later; reading ignores it), atomically:
    a crash leaves the old file."""
    data = {**pad.to_json(), "frame_size": [int(frame_size[0]), int(frame_size[1])]}
    if found_by is not None:
        data["found_by"] = found_by
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_pad(path: Path, *, frame_size: tuple[int, int] | None = None) -> Pad:
    """Read a pad saved by :func:`save_pad` (or written by hand: ``{"polygon": [[x, y], ...]}``),
    scaled to ``frame_size`` when the file records another. Errors name the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object with a 'polygon'")
    try:
        pad = Pad.from_json(data)
        saved = data.get("frame_size")
        if frame_size is not None and saved is not None:
            if not (isinstance(saved, list) and len(saved) == 2):
                raise ValueError("frame_size must be [width, height]")
            pad = scale_pad(pad, (int(saved[0]), int(saved[1])), frame_size)
    except (TypeError, IndexError, ValueError) as exc:
        raise ValueError(f"{path}: bad pad ({exc})") from exc
    return pad


def polygon_iou(a: Pad, b: Pad) -> float:
    """Intersection over union of two pads' polygons (for tests and benchmarks)."""
    pa = np.array(a.polygon, np.float32)
    pb = np.array(b.polygon, np.float32)
    ha, hb = cv2.convexHull(pa), cv2.convexHull(pb)
    inter, _ = cv2.intersectConvexConvex(ha, hb)
    union = cv2.contourArea(ha) + cv2.contourArea(hb) - inter
    return float(inter / union) if union > 0 else 0.0
