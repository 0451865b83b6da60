"""Corner markers: find the pad from four printed ArUco markers, and print them.

For a pad the colour finder (:func:`vision.pad.find_pad`) cannot tell from the table (a mat the
table's colour, a busy tablecloth), the owner prints four markers (``dicepad markers``), cuts
each out as a white card (the quiet zone the detector needs to see the black border) and sticks
it on the table or rail just *outside* its pad corner, the card's inner corner touching the
pad's: on the pad they would lie where dice land and confuse the dice reader.

A marker's inner corner is the one nearest the middle of the four markers, whichever way it was
stuck or the camera turned; the pad's corner is that corner pushed out across the quiet zone
through the marker's own homography (exact under perspective). The printed sheet and the
detector share :data:`QUIET_CELLS` and the dictionary, so they live together here; the size
the sheet is printed at does not matter (the quiet zone is a fixed fraction of a marker).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.pad import PadNotFoundError
from vision.reading import Pad

DICTIONARY = cv2.aruco.DICT_4X4_50
"""OpenCV's predefined dictionary: 4x4 bits, the biggest cells for a given marker size."""

CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")
"""The pad corner each marker id (0-3) is printed for, in order round the pad."""

MARKER_CELLS = 6
"""Cells across a marker: 4 data bits and a one-cell black border each side."""

QUIET_CELLS = 1
"""White cells round a marker on its card: the detector needs the black border on white."""

CARD_CELLS = MARKER_CELLS + 2 * QUIET_CELLS


def card_side_mm(marker_mm: float) -> float:
    """The side of a marker's card (the marker and its quiet zone), in mm."""
    return marker_mm * CARD_CELLS / MARKER_CELLS


UNIT_SQUARE = np.array([(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)])
"""A marker's (or card's) corners in its own units, in ArUco's order: the printed top-left
first, then clockwise."""
UNIT_SQUARE.flags.writeable = False

MM_PER_INCH = 25.4
A4_MM = (210.0, 297.0)
SHEET_DPI = 300
SHEET_MARGIN_MM = 12.0
"""Kept blank at the page's edges: most printers cannot print there."""

DEFAULT_MARKER_MM = 30.0
"""Marker side: about 60 px at a 640 px frame over a bar pad, far more than the detector needs."""

MIN_MARKER_MM = 10.0
"""Below this a hand cut and a print's blur eat a sizeable part of a cell."""

LABEL_MM = 3.5
"""Height of the printed text's capitals."""

LINE_SPACING = 1.4
"""Baseline to baseline, in capital heights."""

LABEL_GAP_LINES = 3
"""Room under a card for its label, in capital heights."""

LABEL_BASELINE_FRAC = 0.6
"""Where the label's baseline sits in that room (from the card down)."""

STROKE_FRAC = 0.12
"""Pen width of the text, in capital heights."""

FONT = cv2.FONT_HERSHEY_SIMPLEX

INSTRUCTIONS = (
    "dicepad pad corner markers ({mm:.0f} mm). Cut each out along its grey outline and",
    "stick it on the table just OUTSIDE its corner of the pad, with the corner that points",
    "to the middle of this page touching the pad's corner. Keep them off the pad, where",
    "dice land. Then run: dicepad calibrate",
)

PAPER = 255
INK = 0
CUT_LINE_GREY = 150
"""The cut outline, light enough not to be taken for a marker's border."""

CUT_LINE_MM = 0.3


class PadMarkersError(PadNotFoundError):
    """Some but not all of the four corner markers were seen, or one was seen twice; the
    message names them. Not a reason to fall back on the colour finder: the owner put the
    markers there because colour does not work on that pad."""


@dataclass(frozen=True)
class MarkerParams:
    """Tuning of OpenCV's ArUco detector (its own parameter names in brackets)."""

    min_perimeter_frac: float = 0.03
    """Smallest marker outline as a fraction of the frame's larger side (minMarkerPerimeterRate)."""
    refine_window_px: int = 5
    """Half-side of the sub-pixel corner search window, frame px (cornerRefinementWinSize)."""
    refine_iterations: int = 30
    """Most refinement steps per corner (cornerRefinementMaxIterations)."""
    refine_accuracy_px: float = 0.01
    """Stop refining once a corner moves less than this, frame px (cornerRefinementMinAccuracy)."""


def corner_name(marker_id: int) -> str:
    """``"top-left"`` for marker 0, and so on round the pad."""
    return CORNER_NAMES[marker_id]


def card_cells(marker_id: int) -> npt.NDArray[np.bool_]:
    """The card of marker ``marker_id`` as a ``CARD_CELLS`` square grid, True where ink goes:
    the marker's cells inside a white quiet zone (for the sheet and for rendered scenes)."""
    if marker_id not in range(len(CORNER_NAMES)):
        raise ValueError(f"corner markers are 0-{len(CORNER_NAMES) - 1}, not {marker_id!r}")
    bits = cv2.aruco.generateImageMarker(_dictionary(), marker_id, MARKER_CELLS, borderBits=1)
    cells = np.zeros((CARD_CELLS, CARD_CELLS), bool)
    inner = slice(QUIET_CELLS, QUIET_CELLS + MARKER_CELLS)
    cells[inner, inner] = np.asarray(bits) < PAPER // 2
    return cells


def detect_markers(
    frame: npt.NDArray[np.uint8], *, params: MarkerParams = MarkerParams()
) -> dict[int, npt.NDArray[np.float64]]:
    """The corner markers in a BGR or grey frame: id -> its four corners (4 x 2, frame px, in
    the marker's own order: its printed top-left first, then clockwise). Other ids of the
    dictionary are ignored; a corner marker seen twice raises :class:`PadMarkersError`."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    detector = cv2.aruco.ArucoDetector(_dictionary(), _detector_parameters(params))
    corners, ids, _ = detector.detectMarkers(grey)
    if ids is None:
        return {}
    found = [
        (int(i), np.asarray(c, np.float64).reshape(4, 2))
        for i, c in zip(ids.ravel(), corners, strict=True)
    ]
    ours = [(i, c) for i, c in found if i in range(len(CORNER_NAMES))]
    twice = sorted(i for i, n in Counter(i for i, _ in ours).items() if n > 1)
    if twice:
        names = _listed(twice)
        raise PadMarkersError(
            f"{names} seen more than once: stick one of each, and take spare prints out of view."
        )
    return dict(ours)


def find_pad_markers(
    frame: npt.NDArray[np.uint8], *, params: MarkerParams = MarkerParams()
) -> Pad | None:
    """The pad framed by the four corner markers in a BGR frame of the (empty) pad.

    ``None`` when no corner marker is in view (find the pad by its colour then); raises
    :class:`PadMarkersError` naming the missing corners when only some are, or when the four
    do not frame a pad. The polygon runs clockwise on screen from marker 0's corner.
    """
    markers = detect_markers(frame, params=params)
    if not markers:
        return None
    missing = [i for i in range(len(CORNER_NAMES)) if i not in markers]
    if missing:
        verb = "is it" if len(missing) == 1 else "are they"
        raise PadMarkersError(f"{_listed(missing)} not found: {verb} covered or out of view?")
    middle = np.mean([c.mean(axis=0) for c in markers.values()], axis=0)
    corners = {i: _pad_corner(c, middle) for i, c in markers.items()}
    # clockwise on screen (y down) by angle round the middle: a simple polygon even when a
    # marker was stuck at the wrong corner or the camera is turned
    order = sorted(corners, key=lambda i: _angle(corners[i] - middle))
    start = order.index(0)
    order = order[start:] + order[:start]
    poly = np.array([corners[i] for i in order], np.float32)
    if not cv2.isContourConvex(poly) or cv2.contourArea(poly) <= _markers_area(markers):
        raise PadMarkersError(
            "the four markers do not frame a pad: stick each just outside its own corner, "
            "touching it."
        )
    return Pad(tuple((float(x), float(y)) for x, y in poly))


def _pad_corner(
    corners: npt.NDArray[np.float64], middle: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """The card's corner that points into the pad: the marker corner nearest ``middle``,
    pushed out by the quiet zone along the marker's own axes."""
    unit = UNIT_SQUARE
    inner = int(np.argmin(np.linalg.norm(corners - middle, axis=1)))
    quiet = QUIET_CELLS / MARKER_CELLS
    target = unit[inner] + quiet * (2 * unit[inner] - 1)
    homography = cv2.getPerspectiveTransform(unit.astype(np.float32), corners.astype(np.float32))
    out = cv2.perspectiveTransform(target.reshape(1, 1, 2), homography)
    return np.asarray(out, np.float64).reshape(2)


def _angle(v: npt.NDArray[np.float64]) -> float:
    return float(np.arctan2(v[1], v[0]))


def _markers_area(markers: dict[int, npt.NDArray[np.float64]]) -> float:
    return float(sum(abs(cv2.contourArea(c.astype(np.float32))) for c in markers.values()))


def _listed(ids: list[int]) -> str:
    """``marker 2 (bottom-right)`` or ``markers 1 (top-right) and 2 (bottom-right)``."""
    named = [f"{i} ({corner_name(i)})" for i in ids]
    if len(named) == 1:
        return f"marker {named[0]}"
    return f"markers {', '.join(named[:-1])} and {named[-1]}"


def _dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(DICTIONARY)


def _detector_parameters(params: MarkerParams) -> cv2.aruco.DetectorParameters:
    p = cv2.aruco.DetectorParameters()
    p.minMarkerPerimeterRate = params.min_perimeter_frac
    p.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    p.cornerRefinementWinSize = params.refine_window_px
    p.cornerRefinementMaxIterations = params.refine_iterations
    p.cornerRefinementMinAccuracy = params.refine_accuracy_px
    return p


def marker_sheet(
    *, marker_mm: float = DEFAULT_MARKER_MM, dpi: int = SHEET_DPI
) -> npt.NDArray[np.uint8]:
    """An A4 page (grey image at ``dpi``) with the four corner markers of side ``marker_mm``,
    laid out as they go round the pad, each on a card with a cut outline and a label, under
    lines of instructions. Raises ValueError when the markers do not fit on the page."""
    px_per_mm = dpi / MM_PER_INCH
    cell = round(marker_mm * px_per_mm / MARKER_CELLS)  # whole pixels: crisp cells
    card = cell * CARD_CELLS
    page_w, page_h = (round(mm * px_per_mm) for mm in A4_MM)
    margin = round(SHEET_MARGIN_MM * px_per_mm)
    line = round(LABEL_MM * px_per_mm)
    scale = _font_scale(line)
    thick = max(1, round(line * STROKE_FRAC))
    text_h = round(len(INSTRUCTIONS) * LINE_SPACING * line)
    slot_w = (page_w - 2 * margin) // 2
    slot_h = (page_h - 2 * margin - text_h) // 2
    below = LABEL_GAP_LINES * line  # room for a card's label
    largest = int(min(slot_w, slot_h - below) / px_per_mm * MARKER_CELLS / CARD_CELLS)
    if not MIN_MARKER_MM <= marker_mm <= largest:
        raise ValueError(
            f"a marker side of {marker_mm:g} mm does not fit on A4: use {MIN_MARKER_MM:g}-"
            f"{largest} mm"
        )
    page = np.full((page_h, page_w), PAPER, np.uint8)
    side_mm = MARKER_CELLS * cell / px_per_mm
    for k, text in enumerate(INSTRUCTIONS):
        y = margin + line + round(k * LINE_SPACING * line)
        cv2.putText(page, text.format(mm=side_mm), (margin, y), FONT, scale, INK, thick)
    cut = max(1, round(CUT_LINE_MM * px_per_mm))
    for marker_id, name in enumerate(CORNER_NAMES):
        col, row = int("right" in name), int("bottom" in name)
        x0 = margin + col * slot_w + (slot_w - card) // 2
        y0 = margin + text_h + row * slot_h + (slot_h - card - below) // 2
        ink = np.kron(card_cells(marker_id), np.ones((cell, cell), bool))
        page[y0 : y0 + card, x0 : x0 + card] = np.where(ink, INK, PAPER)
        outline = ((x0 - cut, y0 - cut), (x0 + card + cut - 1, y0 + card + cut - 1))
        cv2.rectangle(page, *outline, CUT_LINE_GREY, cut)  # outside the card: cut it away
        label = f"dicepad pad corner {marker_id} - {name}"
        (width, _), _ = cv2.getTextSize(label, FONT, scale, thick)
        at = (x0 + (card - width) // 2, y0 + card + round(below * LABEL_BASELINE_FRAC))
        cv2.putText(page, label, at, FONT, scale, INK, thick)
    return page


def _font_scale(height_px: float) -> float:
    """The scale of :data:`FONT` whose capitals are ``height_px`` tall."""
    (_, base), _ = cv2.getTextSize("H", FONT, 1.0, 1)
    return float(height_px / base)
