"""Locked camera settings (exposure, gain, white balance, anti-flicker), persisted as JSON.

Auto-exposure and auto-white-balance drift as hands and dice cross the pad, which changes pip
contrast between frames; so each camera backend lets them settle on the empty pad, then locks
them and stores the values here. Later starts reuse the stored values (dice may already be on
the pad), and ``dicepad calibrate`` re-locks them.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SETTINGS_FILE = "camera.json"
"""File name of the locked settings inside the data directory."""


def flicker_period_us(mains_hz: int) -> int:
    """Period of lamp flicker under ``mains_hz`` mains: lights pulse at twice the mains rate."""
    if mains_hz not in (50, 60):
        raise ValueError(f"mains frequency must be 50 or 60 Hz (got {mains_hz})")
    return round(1_000_000 / (2 * mains_hz))


def flicker_safe_exposure_us(exposure_us: float, period_us: int) -> int:
    """Round an exposure to a whole number of flicker periods, so every frame integrates the
    same amount of light and no banding rolls through the image. Exposures shorter than one
    period cannot be made flicker-free and are left alone."""
    if exposure_us < period_us:
        return max(1, round(exposure_us))
    return period_us * max(1, round(exposure_us / period_us))


@dataclass(frozen=True)
class CameraSettings:
    """Values a backend locked after warm-up. Units are the backend's own: picamera2 uses
    microseconds and linear gains; OpenCV/V4L2 uses the driver's exposure units."""

    backend: str
    exposure: float
    gain: float | None = None
    colour_gains: tuple[float, float] | None = None  # picamera2 (red, blue)
    white_balance_k: float | None = None  # V4L2 colour temperature
    flicker_period_us: int | None = None

    def to_json(self) -> dict[str, Any]:
        obj = asdict(self)
        if self.colour_gains is not None:
            obj["colour_gains"] = list(self.colour_gains)
        return obj

    @classmethod
    def from_json(cls, obj: object) -> CameraSettings:
        if not isinstance(obj, dict):
            raise ValueError("camera settings must be a JSON object")
        try:
            gains = obj.get("colour_gains")
            return cls(
                backend=str(obj["backend"]),
                exposure=float(obj["exposure"]),
                gain=None if obj.get("gain") is None else float(obj["gain"]),
                colour_gains=None if gains is None else (float(gains[0]), float(gains[1])),
                white_balance_k=(
                    None if obj.get("white_balance_k") is None else float(obj["white_balance_k"])
                ),
                flicker_period_us=(
                    None if obj.get("flicker_period_us") is None else int(obj["flicker_period_us"])
                ),
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"bad camera settings: {exc!r}") from exc


def load_settings(path: Path, backend: str) -> CameraSettings | None:
    """The settings stored for ``backend``, or None (missing, unreadable or another backend's;
    a damaged file is logged, never fatal: the camera then simply warms up again)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("cannot read camera settings %s: %s", path, exc)
        return None
    try:
        settings = CameraSettings.from_json(json.loads(text))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        log.warning("ignoring damaged camera settings %s: %s", path, exc)
        return None
    return settings if settings.backend == backend else None


def save_settings(path: Path, settings: CameraSettings) -> None:
    """Write atomically (temp file + rename) so a power cut never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".camera-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(settings.to_json(), fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
