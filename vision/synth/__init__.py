"""Synthetic dice scenes with ground truth: the test bed for the reader, the flags and the
settle detector, and the picture source of the demo camera.

No public photo set labels cocked, stacked or off-pad dice, so dicepad renders its own. The
renderer is pure NumPy + OpenCV and fast (a few ms per 640x480 frame): 3-D cubes with rounded
corners and the standard pip layout (opposite faces sum to 7) are projected through a pinhole
camera looking straight down at a pad, faces are shaded by one directional light, dice cast soft
shadows, and the frame can be degraded (blur, motion blur, noise, JPEG, glare, exposure).

World units are millimetres: ``x`` right, ``y`` down the image, ``z`` up towards the camera,
origin on the table under the camera. The camera sits ``Camera.height_mm`` above the origin.

API (all value types are frozen dataclasses; every random choice comes from the caller's
``numpy.random.Generator`` so a seed reproduces a scene exactly)::

    scene = Scene(dice=(DieSpec(5, (0, 0)), DieSpec(3, (40, 10), yaw_deg=30, tilt_deg=20)))
    shot = render(scene, size=(640, 480), rng=np.random.default_rng(1))
    shot.image                      # BGR uint8, shape (480, 640, 3)
    shot.truth.dice[1].value        # 3 (the face most up)
    shot.truth.dice[1].tilt_deg     # 20.0: cocked
    shot.truth.pad                  # vision.reading.Pad: the pad polygon in pixels

    scene = random_scene(rng, n_dice=5, cocked=0.2, stacked=0.1, off_pad=0.1, degrade=True)

    for frame in throw_sequence(rng, base=scene, n_dice=5):   # hand, tumble, rest, keep
        frame.image, frame.truth.moving, frame.truth.rest_index

``throw_sequence`` returns a :class:`ThrowSequence`; its ``remaining`` (the dice left on the pad
after the kept ones were taken) is the ``before=`` of the next throw, so throws chain forever
for a demo camera.

The package re-exports that API; its modules, each with one job:

- :mod:`~vision.synth.model`: the value types, the die palettes and the ground truth;
- :mod:`~vision.synth.logos`: the logos branded dice print on their ace instead of a pip
  (``DieStyle(logo="star")``; never chosen at random);
- :mod:`~vision.synth.geometry`: faces and pips, a die's pose, the pinhole projection;
- :mod:`~vision.synth.background`: the empty lit pad (cached);
- :mod:`~vision.synth.hands`: where a hand and its shadow fall;
- :mod:`~vision.synth.degrade`: camera faults on a finished frame;
- :mod:`~vision.synth.draw`: a scene drawn (:func:`render`), with its ground truth;
- :mod:`~vision.synth.scenes`: random scenes and random bad cameras;
- :mod:`~vision.synth.throws`: whole throws as frame sequences.

Wide scenes (domain randomisation, for training on renders rather than photo sets)::

    scene = wide_scene(rng, size=(640, 480))      # any die look, surface, lamp, camera tilt
    shot = render_wide(scene, size=(640, 480), rng=rng)   # SceneImage, same truth types

- :mod:`~vision.synth.styles`: die looks (finishes, pips, rounding);
- :mod:`~vision.synth.surfaces`: felt, wood, stone, printed mats and dotted boards;
- :mod:`~vision.synth.props`: coins, caps, ring marks, score cards (no truth);
- :mod:`~vision.synth.view`: a camera tilted up to 45 degrees;
- :mod:`~vision.synth.wide.scene`: the random wide scene; :mod:`~vision.synth.wide.draw`: its
  render, with :mod:`~vision.synth.lighting` (lamps, shadows, glare) and
  :mod:`~vision.synth.wide.dice`.
"""

from vision.synth.draw import render
from vision.synth.geometry import orientation
from vision.synth.logos import LOGOS
from vision.synth.model import (
    STYLES,
    TRANSLUCENT_STYLES,
    Camera,
    Degrade,
    DieSpec,
    DieStyle,
    DieTruth,
    Hand,
    Lighting,
    PadStyle,
    Scene,
    SceneImage,
    SceneTruth,
)
from vision.synth.props import Prop
from vision.synth.scenes import random_degrade, random_scene, with_markers
from vision.synth.styles import DieLook
from vision.synth.surfaces import Mat, Surface
from vision.synth.throws import Frame, FrameTruth, ThrowSequence, Tumble, throw_sequence
from vision.synth.view import View
from vision.synth.wide.draw import render_wide
from vision.synth.wide.scene import Lamp, WideDie, WideScene, wide_scene

__all__ = [
    "LOGOS",
    "STYLES",
    "TRANSLUCENT_STYLES",
    "Camera",
    "Degrade",
    "DieLook",
    "DieSpec",
    "DieStyle",
    "DieTruth",
    "Frame",
    "FrameTruth",
    "Hand",
    "Lamp",
    "Lighting",
    "Mat",
    "PadStyle",
    "Prop",
    "Scene",
    "SceneImage",
    "SceneTruth",
    "Surface",
    "ThrowSequence",
    "Tumble",
    "View",
    "WideDie",
    "WideScene",
    "orientation",
    "random_degrade",
    "random_scene",
    "render",
    "render_wide",
    "throw_sequence",
    "wide_scene",
    "with_markers",
]
