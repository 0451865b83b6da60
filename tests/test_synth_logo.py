"""Logo aces: branded bar dice print a small picture on the 1 face instead of its pip. The
renderer must draw that picture (not a pip), keep every other face and the truth (still a 1),
and leave every seeded scene as it was: other models and tests depend on its random streams."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from hardware.demo import DemoSource
from vision import synth
from vision.synth import (
    LOGOS,
    STYLES,
    TRANSLUCENT_STYLES,
    Camera,
    DieLook,
    DieSpec,
    DieStyle,
    Lighting,
    PadStyle,
    Scene,
    Surface,
    render,
)

Image = npt.NDArray[np.uint8]
Corners = tuple[tuple[float, float], ...]

PLAIN = Scene(
    pad=PadStyle(colour=(40, 110, 30), texture=0.0),
    lighting=Lighting(azimuth_deg=0, elevation_deg=90, shadow=0.0, ambient=0.6),
    camera=Camera(height_mm=200.0),
)
WHITE = STYLES["white"]


def one_die(
    style: DieStyle,
    value: int = 1,
    xy_mm: tuple[float, float] = (10.0, -5.0),
    yaw_deg: float = 0.0,
    tilt_deg: float = 0.0,
    tilt_dir_deg: float = 0.0,
) -> Scene:
    spec = DieSpec(value, xy_mm, yaw_deg, tilt_deg, tilt_dir_deg, size_mm=20.0, style=style)
    return replace(PLAIN, dice=(spec,))


def one_wide_die(look: DieLook, value: int = 1, tilt: float = 30.0) -> synth.WideScene:
    spec = DieSpec(value, (10.0, -5.0), yaw_deg=20.0, size_mm=16.0)
    return synth.WideScene(
        dice=(synth.WideDie(spec, look),),
        view=synth.View(distance_mm=180.0, tilt_deg=tilt, azimuth_deg=30.0, roll_deg=10.0),
        table=Surface("felt", (40, 110, 30)),
        mat=None,
        props=(),
        lamps=(synth.Lamp((0.0, 0.0, 900.0), 0.5),),
        ambient=0.55,
    )


def face_mask(shape: tuple[int, ...], corners: Corners, shrink: float = 0.9) -> Image:
    """The top face (``corners``), shrunk towards its centre, as a 0/255 mask."""
    mask = np.zeros(shape[:2], np.uint8)
    quad = np.array(corners, np.float32)
    centre = quad.mean(axis=0)
    cv2.fillPoly(mask, [np.round(centre + (quad - centre) * shrink).astype(np.int32)], 255)
    return mask


def ink(image: Image, corners: Corners) -> Image:
    """The dark (pip or logo) pixels of a white die's top face, as a 0/1 mask."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return ((grey < 100) & (face_mask(image.shape, corners) > 0)).astype(np.uint8)


def blobs_and_roundness(mask: Image) -> tuple[int, float]:
    """How many blobs the ink makes, and the circularity (4 pi area / perimeter^2: a disc is
    1) of the largest one's outline."""
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    blobs = sum(1 for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 4)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    big = max(contours, key=cv2.contourArea)
    return blobs, 4 * math.pi * cv2.contourArea(big) / cv2.arcLength(big, True) ** 2


def assert_logo_not_pip(logo_ink: Image, pip_ink: Image) -> None:
    blobs, round_ = blobs_and_roundness(pip_ink)
    assert (blobs, round_ > 0.8) == (1, True)  # the plain ace: one round pip
    blobs, round_ = blobs_and_roundness(logo_ink)
    assert logo_ink.sum() >= 3 * pip_ink.sum()  # about 0.6 of the face, not a pip's 0.2
    assert blobs >= 2 or round_ < 0.6  # a ring with a letter, a crown and its bar, a star...


@pytest.mark.parametrize("yaw", [0.0, 33.0])
@pytest.mark.parametrize("logo", LOGOS)
def test_a_logo_ace_is_drawn_as_its_logo_and_still_reads_one(logo: str, yaw: float) -> None:
    plain = render(one_die(WHITE, yaw_deg=yaw))
    shot = render(one_die(replace(WHITE, logo=logo), yaw_deg=yaw))
    (truth,) = shot.truth.dice
    assert truth == plain.truth.dice[0]  # value 1, colour "white", the same face
    assert truth.value == 1
    assert_logo_not_pip(ink(shot.image, truth.corners_xy), ink(plain.image, truth.corners_xy))


@pytest.mark.parametrize("logo", LOGOS)
def test_the_other_faces_keep_their_pips(logo: str) -> None:
    """Straight under the camera only the top face shows: for 2-6 up, nothing changes; a die
    leaning away with its ace turned down changes nowhere either."""
    styled = replace(WHITE, logo=logo)
    for value in range(2, 7):
        plain = render(one_die(WHITE, value, (0.0, 0.0), yaw_deg=17.0))
        shot = render(one_die(styled, value, (0.0, 0.0), yaw_deg=17.0))
        assert np.array_equal(shot.image, plain.image), value
        assert shot.truth == plain.truth
    plain = render(one_die(WHITE, 6, (40.0, 25.0), tilt_deg=20.0, tilt_dir_deg=60.0))
    shot = render(one_die(styled, 6, (40.0, 25.0), tilt_deg=20.0, tilt_dir_deg=60.0))
    assert np.array_equal(shot.image, plain.image)


def test_a_resin_die_shows_its_logo_through_the_body() -> None:
    """Clear resin shows the far faces' pips: with the ace turned down, its logo shows (blurred)
    where a plain die's single pip would, and only inside the die."""
    resin = TRANSLUCENT_STYLES["smoke-white"]
    plain = render(one_die(resin, 6, (0.0, 0.0)))
    shot = render(one_die(replace(resin, logo="crown"), 6, (0.0, 0.0)))
    diff = np.abs(shot.image.astype(int) - plain.image.astype(int)).max(axis=2)
    (truth,) = shot.truth.dice
    assert truth.value == 6
    assert diff.max() > 8
    assert diff[face_mask(diff.shape, truth.corners_xy, 1.2) == 0].max() == 0


@pytest.mark.parametrize("tilt", [0.0, 30.0])
@pytest.mark.parametrize("logo", LOGOS)
def test_the_wide_renderer_draws_logo_aces_too(logo: str, tilt: float) -> None:
    look = DieLook("white", pip_r=0.2, rounding=0.2, gloss=0.0)
    plain = synth.render_wide(one_wide_die(look, tilt=tilt))
    shot = synth.render_wide(one_wide_die(replace(look, logo=logo), tilt=tilt))
    (truth,) = shot.truth.dice
    assert truth == plain.truth.dice[0]
    assert truth.value == 1
    assert_logo_not_pip(ink(shot.image, truth.corners_xy), ink(plain.image, truth.corners_xy))
    # the ace turned down: nothing of it shows on an opaque die
    down = synth.render_wide(one_wide_die(replace(look, logo=logo), 6, tilt))
    assert np.array_equal(down.image, synth.render_wide(one_wide_die(look, 6, tilt)).image)


def test_a_clear_wide_die_shows_its_logo_through() -> None:
    look = DieLook(
        "blue", "translucent", (160, 95, 35), (160, 95, 35), (235, 235, 235), see_through=0.6
    )
    plain = synth.render_wide(one_wide_die(look, 6, 0.0))
    shot = synth.render_wide(one_wide_die(replace(look, logo="ring-b"), 6, 0.0))
    assert shot.truth == plain.truth
    assert not np.array_equal(shot.image, plain.image)


def test_unknown_logos_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown logo"):
        DieStyle("white", (236, 238, 240), (25, 25, 25), logo="smiley")
    with pytest.raises(ValueError, match="unknown logo"):
        DieLook("white", logo="smiley")
    with pytest.raises(ValueError, match="unknown logo"):
        DemoSource(logo="smiley")


def no_logo(style: DieStyle) -> DieStyle:
    return replace(style, logo=None)


@pytest.mark.parametrize("seed", range(6))
def test_seeded_random_scenes_are_plain_dice_as_before(seed: int) -> None:
    """Random scenes, throws and wide looks never choose a logo, and a seeded scene renders as
    the same scene with ``logo=None`` spelled out for every die."""
    rng = np.random.default_rng(seed)
    scene = synth.random_scene(rng, n_dice=5, cocked=0.2, stacked=0.1, off_pad=0.1, degrade=True)
    assert all(d.style.logo is None for d in scene.dice)
    explicit = replace(scene, dice=tuple(replace(d, style=no_logo(d.style)) for d in scene.dice))
    assert np.array_equal(render(scene, seed=seed).image, render(explicit, seed=seed).image)

    resin = synth.random_scene(rng, n_dice=4, styles=list(TRANSLUCENT_STYLES.values()))
    explicit = replace(resin, dice=tuple(replace(d, style=no_logo(d.style)) for d in resin.dice))
    assert np.array_equal(render(resin).image, render(explicit).image)

    wide = synth.wide_scene(rng, size=(320, 240))
    assert all(d.look.logo is None and d.spec.style.logo is None for d in wide.dice)
    plain_looks = tuple(replace(d, look=replace(d.look, logo=None)) for d in wide.dice)
    a = synth.render_wide(wide, size=(320, 240), seed=seed).image
    b = synth.render_wide(replace(wide, dice=plain_looks), size=(320, 240), seed=seed).image
    assert np.array_equal(a, b)

    throw = synth.throw_sequence(rng, n_dice=3)
    assert all(t.final.style.logo is None for t in throw.tumbles)


def test_the_demo_camera_can_throw_logo_aces() -> None:
    """The same seed throws the same evening with or without logo aces (the same truth, frame
    by frame); at rest, every die showing 1 shows the logo, and no other die changes."""
    plain = DemoSource(seed=1, fps=None)
    branded = DemoSource(seed=1, fps=None, logo="star")
    assert "star aces" in branded.describe()
    assert "aces" not in plain.describe()
    aces = others = 0
    try:
        for _ in range(400):
            a, b = branded.read(1.0), plain.read(1.0)
            assert branded.truth == plain.truth
            truth = branded.truth
            assert truth is not None
            if truth.phase != "rest":
                continue
            diff = np.abs(a.image.astype(int) - b.image.astype(int)).max(axis=2) > 40
            for die in truth.scene.dice:
                face = face_mask(diff.shape, die.corners_xy, 0.85) > 0
                if die.value == 1:
                    aces += 1
                    assert diff[face].mean() > 0.05  # the star, far more than a pip's disc
                else:
                    others += 1
                    assert not diff[face].any()
            if aces >= 2 and others >= 2:
                break
    finally:
        plain.close()
        branded.close()
    assert aces >= 2
    assert others >= 2
