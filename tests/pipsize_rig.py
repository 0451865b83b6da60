"""Shared helpers of the pip-size tests (``test_pipsize*.py``): a die squarely on another
among flat dice, straight under the camera."""

from __future__ import annotations

import dataclasses

import numpy as np

from vision import synth

FLAT = (
    (4, (-60.0, -35.0), 10.0),
    (5, (55.0, -40.0), 33.0),
    (6, (-50.0, 40.0), 5.0),
    (2, (60.0, 35.0), 70.0),
)


def on_top_scene(flat: int = 4) -> synth.SceneImage:
    """``flat`` flat dice apart and one squarely on another, straight under the camera."""
    style = synth.STYLES["white"]
    specs = [
        synth.DieSpec(v, xy, yaw, size_mm=16.0, style=style)
        for v, xy, yaw in (*FLAT[:flat], (3, (0.0, 0.0), 0.0))
    ]
    # turned 10 degrees from the die below: at 20 and 35 the networks trained mostly on renders
    # flag the stack on the model's word alone, and the size cue would not be needed to see it
    specs.append(synth.DieSpec(5, (1.0, -1.0), 10.0, lift_mm=16.0, style=style, on_die=flat))
    look = synth.random_scene(np.random.default_rng(7), n_dice=0)
    camera = synth.Camera(height_mm=260.0)  # the low end: a stack 7 % larger, clear of noise
    scene = dataclasses.replace(look, dice=tuple(specs), degrade=synth.Degrade(), camera=camera)
    return synth.render(scene, rng=np.random.default_rng(8))
