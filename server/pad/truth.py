"""Read a synthetic frame from the renderer's ground truth instead of the dice reader.

The demo camera and scripted throws (:mod:`server.pad.script`) know exactly what they drew.
Turning that truth into a :class:`~vision.reading.Reading` lets the pad service run, be tested
and be benchmarked on its own (its decisions, its settle timing, its faults), separately from
the reader's accuracy, and keeps the demo working on an install whose vision models are
missing. It is never used with a real camera: :func:`source_truth` only finds truth on
synthetic sources.
"""

from __future__ import annotations

from typing import Any

from vision.reading import DieFlag, DieReading, Pad, Reading
from vision.synth import DieTruth, SceneTruth

COCKED_DEG = 10.0
"""Tilt from which a die counts as cocked (the threshold the vision benchmarks use)."""

MIN_VISIBLE = 0.3
"""A die whose top face is less visible than this (under a hand) is not reported."""


def die_from_truth(die: DieTruth, pad: Pad) -> DieReading:
    """One die as a perfect reader would report it."""
    flags = set()
    if die.tilt_deg >= COCKED_DEG:
        flags.add(DieFlag.COCKED)
    if die.stacked:
        flags.add(DieFlag.STACKED)
    if not die.on_pad:
        flags.add(DieFlag.OFF_PAD)
    return DieReading(
        value=die.value,
        center_xy=die.center_xy,
        corners_xy=die.corners_xy,
        size_px=die.size_px,
        colour=die.colour,
        confidence=1.0,
        flags=frozenset(flags),
        flag_confidence=tuple((f, 1.0) for f in sorted(flags - {DieFlag.OFF_PAD})),
    )


def reading_from_truth(scene: SceneTruth) -> Reading:
    """Every visible die of a rendered scene, ordered like :func:`vision.detect.read_roll`."""
    dice = [die_from_truth(d, scene.pad) for d in scene.dice if d.visible >= MIN_VISIBLE]
    dice.sort(key=lambda d: (d.center_xy[1], d.center_xy[0]))
    return Reading(tuple(dice), scene.frame_size)


def source_truth(source: Any) -> SceneTruth | None:
    """The scene truth of the frame ``source`` delivered last, if it is synthetic (a demo or
    scripted source, possibly inside a fault injector); None for real cameras."""
    for _ in range(4):  # unwrap FaultySource and friends
        if source is None:
            return None
        truth = getattr(source, "truth", None)
        scene = getattr(truth, "scene", None)
        if isinstance(scene, SceneTruth):
            return scene
        source = getattr(source, "inner", None)
    return None
