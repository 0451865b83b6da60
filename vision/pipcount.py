"""A second opinion on a die's value that fails differently from the value network: its pips
counted on the squared-up top face.

Why: the value network is wrong with conviction on dice unlike its training photos (measured
on a source nobody trained on: 9.8 % of dice read wrong, confidence up to 0.96). A count of
separate blobs of pip size, in a layout a die face can have, knows nothing of the training
photos: when it finds a clean face and disagrees, the reader asks instead of guessing. When
the face is not clean (glare, a logo, blur, pips of a side face in the cut) it has no opinion,
and the network's own confidence decides.

How: the face is cut square to its turn (``vision.face``), each pixel's colour distance to the
face's median colour (Lab) marks ink of either polarity -- dark pips on light dice, light on
dark, red on white -- thresholded at a fraction of its high percentile; connected blobs of a
pip's size are the pips. The face's own are the blobs nearest its centre up to a clear gap
(past it: a side face's pips, seen when the camera is not straight overhead, or a neighbour's),
and their layout must be a face's: symmetric about the face's centre, a pip at the centre
exactly for odd counts, a 2's or 3's on a diagonal, and blobs of one size. Counting past side
faces' pips took the faces counted, on photo sources the networks were not trained on, from 41
to 46 % (nellbyler_d6) and 37 to 57 % (matteop65_d6), 10 and 3 of them counted wrong (a
die asked about when the network disagrees); these rules were shaped looking at both sources.
A 4's or 5's corner pips need only be a square as a camera at a slant sees it (``_square_seen``,
chosen on ``vision.synth`` wide renders alone): of 1175 flat dice at the true place, counted
right 66.1 -> 67.4 %, counted wrong 35 -> 30 (jittered as a locator places them, 61.3 -> 62.6 %,
42 -> 31 wrong); the reader on rendered tables 98.57 -> 98.97 % right (clean), 97.74 -> 97.66 %
(blur, noise, JPEG), 97.93 -> 98.29 % (translucent), none wrong. A 6's middle pips need only
lie at the midpoints of two sides of such a square (``_six_seen``, on those renders alone): of
2461 flat dice on 600 fresh wide tables, counted right 66.3 -> 67.9 % (the 6s 208 -> 247 of
415), counted wrong 41 -> 40 (jittered 63.9 -> 65.2 %, 50 wrong either way); the reader on
rendered tables and on both photo sources held out of training read exactly as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.classify import die_patch

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

ENGULFED = 0.85
"""The share of the ring just outside a one-pip face (0.62-0.8 located sides) in the body's
colour above which the face is a pip of a bigger die, not a die."""
INK_FRACTIONS = (0.5, 0.65, 0.8, 0.9)
"""The fractions of the face's high ink percentile tried as the ink threshold, in turn (chosen
on ``vision.synth`` wide renders, no photo source: of 1020 flat dice on 300 wide tables,
counted 44 -> 58 %, counted wrong 3.3 -> 4.4 %; the lower levels 0.35 and 0.25 added little
there). Held out of training, nellbyler_d6 read 66.1 -> 70.5 % of its dice right, matteop65_d6
80.2 -> 85.0 %, each with one die more or fewer wrong."""
FACE_PX = 56  # the face cut is this many px a side ...
FACE_SPAN = 1.6  # ... over this many located face sides (the located side is off by up to 30 %)
_PX, _SPAN = FACE_PX, FACE_SPAN
_S = _PX / _SPAN  # px per located face side in the cut
PIP_AREA = math.pi * (0.095 * _S) ** 2  # a standard pip's area in the cut, px
_HALF = 0.5 * _PX - 0.5
_YY, _XX = np.mgrid[0:_PX, 0:_PX].astype(np.float32)
_U = (_XX - _HALF) / _S  # face coordinates, located sides from the centre
_V = (_YY - _HALF) / _S
_CORE = (np.abs(_U) < 0.3) & (np.abs(_V) < 0.3)  # face, whatever the located size's error
_ROWS, _COLS = np.nonzero(_CORE.any(axis=1))[0], np.nonzero(_CORE.any(axis=0))[0]
_CORE_AT = (slice(int(_ROWS[0]), int(_ROWS[-1]) + 1), slice(int(_COLS[0]), int(_COLS[-1]) + 1))
"""The core as slices (it is a square): a slice's elements in the mask's order, cheaper."""
assert np.count_nonzero(_CORE[_CORE_AT]) == np.count_nonzero(_CORE) == _CORE[_CORE_AT].size
_P98 = int(0.98 * (np.count_nonzero(_CORE) - 1))  # the 98th percentile's rank in the core
# the two middle ranks of the core (an even count): their mean is np.median's, 3x cheaper
_MIDDLE = (np.count_nonzero(_CORE) // 2 - 1, np.count_nonzero(_CORE) // 2)
assert np.count_nonzero(_CORE) % 2 == 0
_GAP = 1.3  # the next blob out from a face's pips lies this much further out ...
_EDGE = 0.45  # ... and at least this many located sides from the centre (past the face)
_SIZES = 2.6  # a face's biggest pip is at most this many times its smallest's area
_OFF = 0.3  # located sides the pips' centre may lie off the cut's (a slanted view centres the
# locator between the top face and the side faces it sees)
_REACH = (0.22, 0.6)  # located sides from their centre to the outermost pips (a face's corner
# pips are 0.38 of its side out; a located side runs large)
_SKEW = 20.0  # degrees a 2's or 3's pips may lie off the face's diagonal (the turn's error)
_RING = np.maximum(np.abs(_U), np.abs(_V)) >= 0.62  # just outside the located face
_DIAGONALS = 0.6  # a 4's or 5's shorter diagonal at least this share of its longer ...
_CROSSING = 65.0  # ... and the two crossing at this many degrees or more (``_square_seen``)
_EVEN = 2.0  # ... and its biggest pip at most this many times its smallest's area (a slant
# shrinks them alike; a blob twice another is two pips run together, of a 6's row)
_MIDPOINT = 0.2  # a 6's middle pip lies this share of its outer radius off a side's midpoint


@dataclass(frozen=True)
class PipCount:
    """What the pips say: ``value`` (1-6) when the face shows a clean layout, else None, and
    ``blobs``, the number of pip-sized blobs found (for diagnostics)."""

    value: int | None
    blobs: int
    contrast: float  # the ink's high percentile, Lab units: how much the pips stand out
    engulfed: bool = False  # one blob, and the body's colour all round past the face: a pip
    found: bool = False  # counted from the pips ``vision.pipfind`` found, not from the ink


def count_pips(
    frame: U8, center_xy: tuple[float, float], side_px: float, angle_deg: float
) -> PipCount:
    """Count the pips of the die whose top face (side ``side_px``, turned ``angle_deg``) is
    centred near ``center_xy`` in ``frame`` (BGR)."""
    return count_all(frame, [(center_xy, side_px, angle_deg)])[0]


def count_all(
    frame: U8, faces: Sequence[tuple[tuple[float, float], float, float]]
) -> list[PipCount]:
    """:func:`count_pips` for each ``(center_xy, side_px, angle_deg)`` of one frame, in order."""
    return count_cut(cut_faces(frame, faces))


def cut_faces(frame: U8, faces: Sequence[tuple[tuple[float, float], float, float]]) -> U8:
    """The faces ``(center_xy, side_px, angle_deg)`` of one frame cut square, ``FACE_PX`` a
    side over ``FACE_SPAN`` located sides, stacked into one tall image (``n * FACE_PX`` rows):
    what :func:`count_cut` counts, and ``vision.pipfind`` looks at again."""
    tall = np.empty((len(faces) * _PX, _PX, 3), np.uint8)
    for k, (center_xy, side_px, angle_deg) in enumerate(faces):
        tall[k * _PX : (k + 1) * _PX] = die_patch(
            frame, center_xy, side_px * _SPAN, _PX, angle_deg=angle_deg
        )
    return tall


def count_cut(tall: U8) -> list[PipCount]:
    """The counts of the faces :func:`cut_faces` stacked in ``tall``, in order.

    Their pixel work is done in one call per step (the per-die calls cost more in overhead
    than in arithmetic), each face's exactly as alone: the colour conversions are per pixel,
    the medians and percentiles per face, and the blur's rows between faces repeat each face's
    edge rows as the blur's own border does."""
    n = len(tall) // _PX
    return _count_tall(tall, n) if n else []


def count_face(patch: U8) -> PipCount:
    """Count the pips of the face cut square at the centre of ``patch`` (BGR, ``FACE_PX`` a
    side, spanning ``FACE_SPAN`` located sides): what :func:`count_pips` does once cut."""
    return _count_tall(np.ascontiguousarray(patch), 1)[0]


def _count_tall(tall: U8, n: int) -> list[PipCount]:
    """The counts of ``n`` face cuts stacked in ``tall`` (BGR, ``n * FACE_PX`` rows).

    The ink is thresholded at half its high percentile; where that finds no clean face, at
    the other ``INK_FRACTIONS`` in turn (the first clean face counts, never a lone pip):
    pips that bleed into a dark rim or side face at one level stand apart at another, and
    faint or glossy pips break up at one and hold together at the next."""
    # Lab as three planes (channel, face, y, x): every step below runs on long contiguous
    # rows, half the time of the interleaved pixels' strided channels, the same arithmetic
    lab = np.stack(cv2.split(cv2.cvtColor(tall, cv2.COLOR_BGR2LAB))).astype(np.float32)
    planes = lab.reshape(3, n, _PX, _PX)
    core = np.partition(planes[:, :, _CORE_AT[0], _CORE_AT[1]].reshape(3, n, -1), _MIDDLE, axis=2)
    median = (core[:, :, _MIDDLE[0]] + core[:, :, _MIDDLE[1]]) * np.float32(0.5)
    planes -= median[:, :, None, None]  # the colour distance to the face's median colour ...
    np.multiply(planes, planes, out=planes)
    padded = np.empty((n, _PX + 2, _PX), np.float32)  # a row above and below each face ...
    inner = padded[:, 1:-1]
    np.add(planes[0], planes[1], out=inner)  # ... summed in channel order, L + a, then + b
    np.add(inner, planes[2], out=inner)
    np.sqrt(inner, out=inner)
    padded[:, 0], padded[:, -1] = padded[:, 2], padded[:, -3]  # ... as BORDER_REFLECT_101's
    blurred = cv2.GaussianBlur(padded.reshape(-1, _PX), (3, 3), 0.7)
    dist = blurred.reshape(n, _PX + 2, _PX)[:, 1:-1]
    highs = np.partition(dist[:, _CORE_AT[0], _CORE_AT[1]].reshape(n, -1), _P98, axis=1)
    return [
        _count_face(np.ascontiguousarray(d), float(h))
        for d, h in zip(dist, highs[:, _P98].tolist(), strict=True)
    ]


def _count_face(dist: F32, high: float) -> PipCount:
    """One face's count from its ink distance ``dist`` and the high percentile ``high``."""
    if high < 14.0:  # nothing stands out from the body: no pips to count
        return PipCount(None, 0, high)
    first = _count_at(dist, high, INK_FRACTIONS[0])
    if first.value is not None or first.engulfed:
        return first
    for fraction in INK_FRACTIONS[1:]:
        again = _count_at(dist, high, fraction)
        if again.value is not None and again.value > 1:
            return again
    return first


def _count_at(dist: F32, high: float, fraction: float) -> PipCount:
    """The face's count with ink where ``dist`` exceeds ``fraction`` of ``high``."""
    ink = np.greater(dist, np.float32(fraction * high)).view(np.uint8)  # 0 / 1, no copy
    n, labels, stats, cents = cv2.connectedComponentsWithStatsWithAlgorithm(
        ink,
        8,
        cv2.CV_32S,
        cv2.CCL_GRANA,  # the default's labels and stats, 1.4x faster
    )
    blobs: list[tuple[float, float, float]] = []
    kept = [0]
    rows, centres = stats.tolist(), cents.tolist()  # Python numbers: no NumPy scalar per look
    for k in range(1, n):
        # left, top, width, height, area: a blob reaches the cut's edge (the pad, other dice,
        # side faces) exactly when its bounding box does -- no scan of the label image's edges
        x, y, w, h, area = rows[k]
        if x == 0 or y == 0 or x + w == _PX or y + h == _PX or area < 0.12 * PIP_AREA:
            continue  # reaches the cut's edge, or speckle
        if area < 0.45 * w * h or max(w, h) > 2.2 * min(w, h):
            continue  # a streak (marbling, an edge's highlight), not a round pip
        u = (centres[k][0] - _HALF) / _S
        v = (centres[k][1] - _HALF) / _S
        blobs.append((u, v, float(area)))
        kept.append(k)
    is_kept = np.zeros(n, bool)
    is_kept[kept] = True
    stray = int(np.count_nonzero(~is_kept[labels[_CORE_AT]]))
    if stray > 0.6 * PIP_AREA:  # ink on the face that is no pip: marbling, glare, a logo
        return PipCount(None, len(blobs), high)
    value = layout_value(blobs)
    if value == 1 and float(np.mean(dist[_RING] < 0.3 * high)) >= ENGULFED:
        # a lone blob whose "face" goes on past the located size in the body's colour: the
        # locator took a pip of a bigger die for a die (a 2 or 4 read as 1, unasked)
        return PipCount(None, len(blobs), high, engulfed=True)
    return PipCount(value, len(blobs), high)


def layout_value(blobs: list[tuple[float, float, float]]) -> int | None:
    """The face value of blobs at face coordinates ``(u, v, area)``, or None when they hold
    no face's pips cleanly.

    The face's pips are the blobs nearest its centre, up to a gap: pips of the side faces
    beside it (seen whenever the camera is not straight overhead) and of dice alongside lie
    past the face's edge, well out beyond its own outer pips. So the first ``k`` blobs by
    distance from the centre are tried, most first, and taken when they make a face and the
    next blob out lies past that face's pips by a clear gap."""
    order = sorted(blobs, key=lambda b: math.hypot(b[0], b[1]))
    if sum(1 for u, v, _ in order if math.hypot(u, v) < 0.75) == 1:
        return _face_value(order[:1])  # a 1 only where no other blob is near: a pip of a 2
        # the locator centred on looks like a 1 with a side face's pip beside it
    for k in range(min(6, len(order)), 1, -1):
        face = order[:k]
        value = _face_value(face)
        if value is None:
            continue
        if k < len(order):
            reach = max(math.hypot(u, v) for u, v, _ in face)
            if math.hypot(order[k][0], order[k][1]) < max(_GAP * reach, _EDGE):
                continue
        return value
    return None


def _face_value(near: list[tuple[float, float, float]]) -> int | None:
    """The value of blobs that are all of one face: of one size, symmetric about their
    centre (which is near the cut's), a pip at the centre exactly for odd counts, as far
    apart as a face's pips; else None."""
    if len(near) == 1:
        u, v, a = near[0]
        return 1 if math.hypot(u, v) < 0.2 and a <= 6 * PIP_AREA else None
    areas = sorted(a for _, _, a in near)
    if areas[-1] > _SIZES * areas[0] or areas[-1] > 4.0 * PIP_AREA:
        return None
    n = len(near)
    cu = sum(u for u, _, _ in near) / n
    cv = sum(v for _, v, _ in near) / n
    if math.hypot(cu, cv) > _OFF:
        return None
    rel = [(u - cu, v - cv) for u, v, _ in near]
    radii = [math.hypot(x, y) for x, y in rel]
    big = max(radii)
    if not _REACH[0] <= big <= _REACH[1]:
        return None
    central = [r for r in radii if r < 0.3 * big]
    if len(central) != n % 2:  # odd faces have a pip at the centre, even ones none
        return None
    outer = [(x, y) for (x, y), r in zip(rel, radii, strict=True) if r >= 0.3 * big]
    if n <= 3 and any(abs(math.degrees(math.atan2(y, x)) % 90 - 45) > _SKEW for x, y in outer):
        return None  # a 2's or 3's outer pips lie on a diagonal; a row of a 6 along an edge
    for x, y in outer:  # each pair through the centre
        if min(math.hypot(x + q, y + w) for q, w in outer) > 0.25 * big:
            return None
    ring = sorted(r for r in radii if r >= 0.3 * big)
    if n == 6:
        if not _six_seen(outer, big):  # two rows of three
            return None
    elif n >= 4:
        if not _square_seen(outer) or areas[-1] > _EVEN * areas[0]:  # 4, 5: a square's
            return None  # corners, pips of one size
    elif ring[0] < 0.8 * big:  # 2, 3: the outer pips on the corners
        return None
    return n


def _six_seen(outer: list[tuple[float, float]], big: float) -> bool:
    """Whether six points, paired through their centre, are a 6's two rows of three as a
    camera at a slant sees them: one pair (the middle pips) lies at the midpoints
    (``_MIDPOINT`` of the outermost radius ``big``) of two sides of a square seen
    (:func:`_square_seen`) that the other four make. A slant keeps midpoints, and nothing
    else: the rule before (the middle pips at least 0.55 of the corners' radius, the corners
    alike) refused a 6 turned across a slant, whose corners' radii differ as a rhombus's
    diagonals do -- chosen on ``vision.synth`` wide renders alone (see the module's note)."""
    for m in outer:
        partner = min(outer, key=lambda p: math.hypot(m[0] + p[0], m[1] + p[1]))
        corners = [p for p in outer if p is not m and p is not partner]
        if (
            len(corners) == 4
            and _square_seen(corners)
            and any(
                math.hypot(0.5 * (a[0] + b[0]) - m[0], 0.5 * (a[1] + b[1]) - m[1])
                <= _MIDPOINT * big
                for i, a in enumerate(corners)
                for b in corners[i + 1 :]
            )
        ):
            return True
    return False


def _square_seen(outer: list[tuple[float, float]]) -> bool:
    """Whether four points, paired through their centre, are a square's corners as a camera
    at a slant sees them: a parallelogram (the pairs make it one) whose diagonals are of like
    length (``_DIAGONALS``) and cross at a wide angle (``_CROSSING``). A square seen at up to
    45 degrees from overhead keeps its diagonals within 0.71 of each other and crossing at 70
    degrees or more, while a 6's middle pair and a corner pair, the four a 6 shows when its
    other corners are lost, cross at 45 (55 at that slant). Equal radii alone (the rule
    before) refused a 4 or 5 turned across the slant (a rhombus: its diagonals foreshortened
    unequally) and took any rectangle, however thin."""
    if len(outer) != 4:
        return False
    a = outer[0]
    partner = min(outer[1:], key=lambda p: math.hypot(a[0] + p[0], a[1] + p[1]))
    b = next(p for p in outer[1:] if p is not partner)
    la, lb = math.hypot(*a), math.hypot(*b)
    if min(la, lb) < _DIAGONALS * max(la, lb):
        return False
    cosine = abs(a[0] * b[0] + a[1] * b[1]) / (la * lb)
    return math.degrees(math.acos(min(1.0, cosine))) >= _CROSSING
