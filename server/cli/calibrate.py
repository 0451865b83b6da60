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
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
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


class CalibrationError(RuntimeError):
    """Calibration could not finish; the message says what to do about it."""


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
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def calibrate(source: FrameSource, data_dir: Path, *, frames: int = 7) -> Calibration:
    """Capture the empty pad from an open ``source``, find the pad and save it.

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
    return Calibration(pad, method, (w, h), area, settings, pad_file, snapshot, source.describe())


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
            result = calibrate(source, data_dir, frames=args.frames)
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
    if result.settings is not None:
        s = result.settings
        gains = "" if s.gain is None else f", gain {s.gain:g}"
        print(f"exposure locked: {s.exposure:g}{gains} (stored in {data_dir / 'camera.json'})")
    else:
        print("exposure: nothing to lock for this source")
    print(f"saved {result.pad_file} and {result.snapshot_file} (check the yellow outline)")
    return 0
