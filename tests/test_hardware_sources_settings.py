"""Locked camera settings: flicker-safe exposure, the picamera2 lock, the saved file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hardware.camera_settings import (
    CameraSettings,
    flicker_period_us,
    flicker_safe_exposure_us,
    load_settings,
    save_settings,
)
from hardware.picamera2_source import locked_controls, settings_from_metadata

# -- locked camera settings -------------------------------------------------------------------


def test_flicker_safe_exposure() -> None:
    assert flicker_period_us(50) == 10_000
    assert flicker_period_us(60) == 8_333
    assert flicker_safe_exposure_us(23_000, 10_000) == 20_000
    assert flicker_safe_exposure_us(26_000, 10_000) == 30_000
    assert flicker_safe_exposure_us(4_000, 10_000) == 4_000  # too short to be flicker-free
    with pytest.raises(ValueError, match="50 or 60"):
        flicker_period_us(55)


def test_picamera2_lock_keeps_brightness_and_freezes_auto_modes() -> None:
    meta = {"ExposureTime": 26_000, "AnalogueGain": 2.0, "ColourGains": (1.8, 1.5)}
    s = settings_from_metadata(meta, mains_hz=50)
    assert s.exposure == 30_000
    assert s.exposure * (s.gain or 0) == pytest.approx(26_000 * 2.0, rel=1e-3)
    controls = locked_controls(s)
    assert controls["AeEnable"] is False
    assert controls["AwbEnable"] is False
    assert controls["ExposureTime"] == 30_000
    assert controls["ColourGains"] == (1.8, 1.5)


def test_camera_settings_round_trip_and_damage(tmp_path: Path) -> None:
    path = tmp_path / "data" / "camera.json"
    s = CameraSettings("picamera2", 20_000.0, 1.5, (1.8, 1.4), None, 10_000)
    save_settings(path, s)
    assert load_settings(path, "picamera2") == s
    assert load_settings(path, "opencv") is None  # another camera's values are not used
    assert json.loads(path.read_text())["colour_gains"] == [1.8, 1.4]
    path.write_text("{not json")
    assert load_settings(path, "picamera2") is None
    path.write_text('{"backend": "picamera2"}')
    assert load_settings(path, "picamera2") is None
    assert load_settings(tmp_path / "absent.json", "picamera2") is None
