"""A settled roll of five flat dice under a fixed camera: what the pad service learns a flat
die's size from (``vision.pipsize.flat_samples``), shared by the vision and pad-service tests."""

from __future__ import annotations

from typing import Any

from vision import synth

LOOK: dict[str, Any] = {
    "pad": synth.PadStyle(size_mm=(280.0, 200.0), texture=0.5),
    "camera": synth.Camera(height_mm=320.0),
    "lighting": synth.Lighting(),
}
"""One camera over one pad (straight down: a flat die looks the same size anywhere on it)."""

SPOTS = ((2, -80, -40, 10), (3, 0, -50, 30), (4, 70, -30, 50), (5, -60, 40, 70), (6, 50, 50, 20))
"""Value, x and y (mm from the pad's centre) and turn (degrees) of each die."""


def flat_roll(die_mm: float = 16.0) -> synth.SceneImage:
    """Five white dice of ``die_mm`` lying flat, apart, on the pad of :data:`LOOK`."""
    style = synth.STYLES["white"]
    dice = tuple(
        synth.DieSpec(v, (float(x), float(y)), float(yaw), 0.0, 0.0, 0.0, die_mm, style)
        for v, x, y, yaw in SPOTS
    )
    return synth.render(synth.Scene(dice, **LOOK))
