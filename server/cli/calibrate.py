"""``dicepad calibrate``: teach dicepad where the pad is and fix the camera's exposure.

Run it with the camera mounted and the pad empty. It opens the camera with ``relock`` (auto
exposure and white balance settle on the empty pad, then are locked and stored in
``camera.json``), takes the per-pixel median of a few frames (sensor noise and a passing
shadow drop out), finds the pad, and writes ``pad.json`` and ``calibration.jpg`` (the snapshot
with the pad outlined) into the data directory. The pad is found by its four corner markers
(:func:`vision.markers.find_pad_markers`, printed by ``dicepad markers``) when any is in view,
else by its colour (:func:`vision.pad.find_pad`); some but not all of the markers is an error
naming the missing ones, never a silent fall-back: the owner stuck them there because colour
does not find that pad.

It also reports how big a die looks on the pad, in frame px, and warns when the camera's
capture size makes dice too small to read well (under :data:`MIN_DIE_PX`): measured from the
dice when any lie flat on the pad at calibration (the bar's own dice, camera and lens: nothing
assumed), else estimated from the pad's long side and a standard 16 mm die (``--pad-mm``: the
pad's real length, 280 mm when not given). Dice in view come first because the estimate is
only as good as its two assumptions: a pad of 350 mm read as 280 makes dice 25 % larger than
they are, and bar dice run from 12 to 25 mm.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hardware.camera_settings import CameraSettings
    from hardware.frames import FrameSource
    from vision.reading import Pad

HELP = "find the pad and lock the camera's exposure (run with the pad empty)"

PAD_FILE = "pad.json"
SNAPSHOT_FILE = "calibration.jpg"

Method = Literal["markers", "colour"]
BY_MARKERS: Method = "markers"
BY_COLOUR: Method = "colour"
METHODS: dict[Method, str] = {
    BY_MARKERS: "its four corner markers",
    BY_COLOUR: "its colour (no corner markers seen)",
}
"""How the pad was found (``Calibration.method``) and how that reads in the printout."""


STANDARD_DIE_MM = 16.0
"""The side of a standard die, for the estimate from the pad's size."""

DEFAULT_PAD_MM = 280.0
"""The pad's long side assumed when ``--pad-mm`` is not given (``vision.synth``'s pad)."""

MIN_DIE_PX = 16.0
"""Under this top-face side (frame px) calibrate warns that dice are too small to read well.
From ``bench/bench_speed.py --only size``: 80 rendered scenes of flat 16 mm dice, each read at
11 capture sizes from 160 x 120 to 800 x 600 (the same view: dice of 7-50 px). Of the dice of
16-20 px 99.2 % are read right and 0.4 % wrong (a wrong number scored silently), of 20 px and
more all; of 14-16 px 95.5 % right and 1.8 % wrong, 12-14 px 90 % and 4.6 %, 10-12 px 79 % and
8.4 %, under 10 px 62 % and 17 %. Renders are the easy case: real dice need at least this."""


class CalibrationError(RuntimeError):
    """Calibration could not finish; the message says what to do about it."""


DieSource = Literal["dice", "pad"]


@dataclass(frozen=True)
class DieSize:
    """How big a die's top face looks on the pad: measured on the ``dice`` read flat on it, or
    estimated from the ``pad``'s long side (``pad_mm`` long) and a standard die."""

    side_px: float
    source: DieSource
    dice: int  # dice measured (0 for an estimate)
    pad_mm: float | None  # the pad's length the estimate assumed

    @property
    def too_small(self) -> bool:
        return self.side_px < MIN_DIE_PX

    def capture_for(self, frame_size: tuple[int, int]) -> tuple[int, int]:
        """The smallest capture size of the same view (the same aspect, sides rounded up to
        multiples of 16) at which dice are :data:`MIN_DIE_PX` or more."""
        k = MIN_DIE_PX / max(self.side_px, 1e-6)
        w, h = frame_size
        return (16 * math.ceil(w * k / 16), 16 * math.ceil(h * k / 16))

    def to_json(self) -> dict[str, Any]:
        return {
            "side_px": round(self.side_px, 1),
            "source": self.source,
            "dice": self.dice,
            "pad_mm": self.pad_mm,
            "min_px": MIN_DIE_PX,
            "too_small": self.too_small,
        }


def die_size(still: npt.NDArray[np.uint8], pad: Pad, *, pad_mm: float | None = None) -> DieSize:
    """The die size on ``pad`` in ``still``: the median top-face side of the dice read flat on
    the pad (a value, no flag), if any; else the pad's long side (its minimum-area rectangle's)
    over ``pad_mm`` (:data:`DEFAULT_PAD_MM` when None) times :data:`STANDARD_DIE_MM`."""
    import cv2
    import numpy as np

    from vision.detect import read_roll

    flat = [d.size_px for d in read_roll(still, pad=pad).dice if d.scorable]
    if flat:
        return DieSize(float(statistics.median(flat)), "dice", len(flat), None)
    length = DEFAULT_PAD_MM if pad_mm is None else pad_mm
    (_, _), (w, h), _ = cv2.minAreaRect(np.asarray(pad.polygon, np.float32))
    return DieSize(max(w, h) * STANDARD_DIE_MM / length, "pad", 0, length)


@dataclass(frozen=True)
class Calibration:
    """What a calibration found and where it was saved."""

    pad: Pad
    method: Method  # how the pad was found
    frame_size: tuple[int, int]
    pad_area: float  # fraction of the frame
    settings: CameraSettings | None  # None for sources without exposure (files, demo)
    pad_file: Path
    snapshot_file: Path
    source: str
    die: DieSize | None = None  # how big a die looks on the pad

    def to_json(self) -> dict[str, Any]:
        return {
            "pad": self.pad.to_json(),
            "method": self.method,
            "frame_size": list(self.frame_size),
            "pad_area": round(self.pad_area, 3),
            "camera": None if self.settings is None else self.settings.to_json(),
            "pad_file": str(self.pad_file),
            "snapshot_file": str(self.snapshot_file),
            "source": self.source,
            "die": None if self.die is None else self.die.to_json(),
        }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--camera",
        default=None,
        metavar="SPEC",
        help="picamera2 | opencv:N | files:DIR | demo (default: $DICEPAD_CAMERA or demo)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        metavar="DIR",
        help="where pad.json and camera.json go (default: $DICEPAD_DATA, else the per-user "
        "data directory)",
    )
    parser.add_argument(
        "--frames", type=int, default=7, metavar="N", help="frames to combine (default 7)"
    )
    parser.add_argument(
        "--pad-mm",
        type=float,
        default=None,
        metavar="MM",
        help="the pad's long side in mm, for the die size when no dice lie on the pad "
        f"(default {DEFAULT_PAD_MM:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def calibrate(
    source: FrameSource, data_dir: Path, *, frames: int = 7, pad_mm: float | None = None
) -> Calibration:
    """Capture the empty pad from an open ``source``, find the pad and save it, and size a die
    on it (:func:`die_size`: from the dice on the pad, if any, else from its ``pad_mm``).

    Raises :class:`CalibrationError` (nothing is written then, except the snapshot, which
    helps to see what the camera saw).
    """
    import cv2
    import numpy as np

    from hardware.frames import CameraError
    from vision.markers import PadMarkersError, find_pad_markers
    from vision.pad import PadNotFoundError, find_pad, save_pad

    if frames < 1:
        raise CalibrationError("--frames must be at least 1")
    if pad_mm is not None and not STANDARD_DIE_MM < pad_mm <= 5000:
        raise CalibrationError(
            f"--pad-mm must be over {STANDARD_DIE_MM:g} (a die) and at most 5000"
        )
    images = []
    try:
        for _ in range(frames):
            images.append(source.read(timeout=5.0).image)
    except CameraError as exc:
        raise CalibrationError(f"the camera stopped delivering frames: {exc}") from exc
    if any(im.shape != images[0].shape for im in images):
        raise CalibrationError("the frame size changed while capturing; try again")
    still = np.median(np.stack(images), axis=0).astype(np.uint8)
    h, w = still.shape[:2]
    data_dir.mkdir(parents=True, exist_ok=True)
    snapshot = data_dir / SNAPSHOT_FILE
    try:
        pad = find_pad_markers(still)
        method: Method = BY_MARKERS
        if pad is None:
            pad = find_pad(still)
            method = BY_COLOUR
    except PadMarkersError as exc:
        cv2.imwrite(str(snapshot), still)
        raise CalibrationError(
            f"could not find the pad by its corner markers: {exc} Put all four in view (or take "
            f"them all away to find the pad by its colour). What the camera saw: {snapshot}"
        ) from exc
    except PadNotFoundError as exc:
        cv2.imwrite(str(snapshot), still)
        raise CalibrationError(
            f"could not find the pad ({exc}); make sure the empty pad fills the middle of the "
            f"view and differs in colour from the table, or print corner markers (dicepad "
            f"markers). What the camera saw: {snapshot}"
        ) from exc
    outlined = still.copy()
    poly = np.round(np.array(pad.polygon)).astype(np.int32)
    cv2.polylines(outlined, [poly], True, (0, 255, 255), max(2, w // 320), cv2.LINE_AA)
    cv2.imwrite(str(snapshot), outlined)
    pad_file = data_dir / PAD_FILE
    save_pad(pad, pad_file, frame_size=(w, h), found_by=method)
    area = float(cv2.contourArea(poly.astype(np.float32))) / (w * h)
    settings: CameraSettings | None = getattr(source, "settings", None)
    die = die_size(still, pad, pad_mm=pad_mm)
    return Calibration(
        pad, method, (w, h), area, settings, pad_file, snapshot, source.describe(), die
    )


def run(args: argparse.Namespace) -> int:
    from hardware.frames import CameraError
    from hardware.sources import SourceOpener, SpecError, spec_from_env
    from server.config import default_data_dir

    data_dir: Path = args.data if args.data is not None else default_data_dir()
    spec = args.camera if args.camera is not None else spec_from_env()
    try:
        opener = SourceOpener(spec, data_dir=data_dir, relock=True)
    except SpecError as exc:
        print(f"dicepad calibrate: {exc}", file=sys.stderr)
        return 2
    if not opener.enabled:
        print("dicepad calibrate: --camera none has nothing to calibrate", file=sys.stderr)
        return 2
    if not args.json:
        print(f"calibrating {spec}: keep the pad empty and the lights as they are at play…")
    try:
        with opener() as source:
            result = calibrate(source, data_dir, frames=args.frames, pad_mm=args.pad_mm)
    except (CameraError, CalibrationError) as exc:
        print(f"dicepad calibrate: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    corners = ", ".join(f"({x:.0f}, {y:.0f})" for x, y in result.pad.polygon)
    print(f"pad found: {len(result.pad.polygon)} corners {corners}")
    w, h = result.frame_size
    print(
        f"           {result.pad_area:.0%} of the {w}×{h} view, found by {METHODS[result.method]}"
    )
    from vision.pad import MIN_AREA_FRAC

    # the colour finder refuses a pad this small; one found by its markers is taken (the
    # owner put them there), with a word: its dice are small in the frame
    if result.pad_area < MIN_AREA_FRAC:
        print(
            f"warning: the pad fills only {result.pad_area:.0%} of the view: the dice will be "
            f"small in the frame and harder to read; mount the camera closer or lower, so the "
            f"pad fills most of the view"
        )
    if result.die is not None:
        for line in die_lines(result.die, result.frame_size):
            print(line)
    if result.settings is not None:
        s = result.settings
        gains = "" if s.gain is None else f", gain {s.gain:g}"
        print(f"exposure locked: {s.exposure:g}{gains} (stored in {data_dir / 'camera.json'})")
    else:
        print("exposure: nothing to lock for this source")
    print(f"saved {result.pad_file} and {result.snapshot_file} (check the yellow outline)")
    return 0


def die_lines(die: DieSize, frame_size: tuple[int, int]) -> list[str]:
    """What calibrate prints about the die size (and its warning)."""
    w, h = frame_size
    if die.source == "dice":
        lines = [
            f"die size: {die.side_px:.0f} px a side at {w}×{h}, measured on "
            f"{die.dice} {'die' if die.dice == 1 else 'dice'} on the pad"
        ]
    else:
        lines = [
            f"die size: about {die.side_px:.0f} px a side at {w}×{h}, estimated for a "
            f"{STANDARD_DIE_MM:g} mm die on a pad {die.pad_mm:g} mm long (no dice on the pad; "
            f"--pad-mm sets its length, or leave a few dice on the pad to measure them)"
        ]
    if die.too_small:
        cw, ch = die.capture_for(frame_size)
        lines.append(
            f"warning: dice of {die.side_px:.0f} px are too small to read well (under "
            f"{MIN_DIE_PX:g} px more are misread or missed): capture at least {cw}×{ch} "
            f"(the camera's width and height, e.g. --camera 'picamera2?width={cw}&height={ch}'), "
            f"or mount the camera lower"
        )
    return lines
