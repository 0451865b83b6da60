"""Wide scenes (domain randomisation): their truth must be true and their domain as wide as
promised, or a reader trained on them learns a narrower world than bars have."""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

import cv2
import numpy as np
import pytest

import vision
from vision import synth
from vision.synth import DieLook, DieSpec, Surface
from vision.synth.props import PROPS
from vision.synth.styles import FINISHES, PIP_KINDS, PIP_SHAPES, random_look
from vision.synth.surfaces import SURFACES
from vision.synth.wide.scene import MAX_CAMERA_TILT_DEG, MAX_DIE_PX, MIN_DIE_PX

SIZE = (640, 480)


@cache
def shot(seed: int, size: tuple[int, int] = SIZE) -> tuple[synth.WideScene, synth.SceneImage]:
    rng = np.random.default_rng(seed)
    scene = synth.wide_scene(rng, size=size)
    return scene, synth.render_wide(scene, size=size, rng=rng)


SEEDS = range(24)


@pytest.mark.parametrize("seed", SEEDS)
def test_truth_is_consistent(seed: int) -> None:
    scene, s = shot(seed)
    w, h = SIZE
    assert s.image.shape == (h, w, 3)
    assert s.image.dtype == np.uint8
    assert s.truth.frame_size == SIZE
    assert len(s.truth.dice) == len(scene.dice)  # dice only: props have no truth
    assert 0.0 <= scene.view.tilt_deg <= MAX_CAMERA_TILT_DEG
    for d, die in zip(s.truth.dice, scene.dice, strict=True):
        x, y = d.center_xy
        assert 0 <= x < w
        assert 0 <= y < h
        assert d.value in range(1, 7)
        assert len(d.corners_xy) == 4
        assert 0.0 <= d.visible <= 1.0
        assert d.colour == die.look.name
        assert d.stacked == (die.spec.on_die is not None)
        assert not s.truth.hand_visible
        # a top face measures 14-120 px (a die on another one: up to a tenth more)
        assert MIN_DIE_PX - 0.5 <= d.size_px <= MAX_DIE_PX * (1.1 if d.stacked else 1.0) + 0.5
        quad = np.array(d.corners_xy)
        assert math.dist(quad.mean(axis=0), d.center_xy) < 0.2 * d.size_px


def test_a_flat_die_on_a_level_view_shows_the_value_it_was_given() -> None:
    """Without camera tilt or die tilt the face up is the spec's value, the top face a
    square of the projected size."""
    for seed in range(40):
        rng = np.random.default_rng(seed)
        scene = synth.wide_scene(rng, n_dice=3, max_camera_tilt_deg=0.0, cocked=0.0)
        s = synth.render_wide(scene, rng=rng)
        for d, die in zip(s.truth.dice, scene.dice, strict=True):
            if die.spec.tilt_deg == 0.0:
                assert d.value == die.spec.value
                sides = np.linalg.norm(
                    np.diff(np.array([*d.corners_xy, d.corners_xy[0]]), axis=0), axis=1
                )
                assert np.ptp(sides) < 1e-6 * d.size_px


def test_a_stacked_die_lies_on_its_base_and_hides_it() -> None:
    stacks = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        scene = synth.wide_scene(rng, n_dice=4, stacked=0.5, props=False)
        truth = synth.render_wide(scene, rng=rng).truth
        for d, die in zip(truth.dice, scene.dice, strict=True):
            if die.spec.on_die is None:
                continue
            stacks += 1
            base = truth.dice[die.spec.on_die]
            assert d.stacked
            assert not base.stacked
            assert d.size_px > base.size_px  # nearer the camera
            assert base.visible < 0.5  # mostly under the top die
            assert d.visible > 0.9
    assert stacks >= 5


def test_a_walled_trays_dice_lie_in_it() -> None:
    """A tray's walls stand between the dice and the table: its dice are on its floor, and a
    wall seen from outside hides what is just inside it (the truth's visible share)."""
    trays = 0
    for seed in range(120):
        rng = np.random.default_rng(seed)
        scene = synth.wide_scene(rng)
        if scene.mat is None or scene.mat.wall_mm <= 0:
            continue
        trays += 1
        truth = synth.render_wide(scene, rng=rng).truth
        assert all(d.on_pad for d in truth.dice)
    assert trays >= 10


def test_deterministic_per_seed() -> None:
    a = synth.wide_scene(np.random.default_rng(7))
    b = synth.wide_scene(np.random.default_rng(7))
    assert a == b
    one = synth.render_wide(a, rng=np.random.default_rng(1))
    two = synth.render_wide(b, rng=np.random.default_rng(1))
    assert np.array_equal(one.image, two.image)
    assert one.truth == two.truth
    other = synth.wide_scene(np.random.default_rng(8))
    assert other != a


def test_render_wide_does_not_touch_the_callers_scene_or_the_old_renderer() -> None:
    """The old scenes draw what they drew: a wide render in between changes nothing."""
    rng = np.random.default_rng(3)
    old = synth.random_scene(rng, n_dice=4, degrade=True)
    before = synth.render(old, rng=np.random.default_rng(0)).image
    shot(0)
    after = synth.render(old, rng=np.random.default_rng(0)).image
    assert np.array_equal(before, after)


def test_distractors_are_drawn_and_have_no_truth() -> None:
    kinds: Counter[str] = Counter()
    for seed in SEEDS:
        scene, s = shot(seed)
        assert len(s.truth.dice) == len(scene.dice)
        for p in scene.props:
            kinds[p.kind] += 1
            # no die sits on a prop: a die found there is an extra detection
            assert all(math.dist(p.xy_mm, d.spec.xy_mm) > p.radius_mm * 0.7 for d in scene.dice)
    assert sum(kinds.values()) >= len(SEEDS)  # most tables have some
    assert set(kinds) == set(PROPS)
    mats = [shot(seed)[0].mat for seed in SEEDS]
    dotted = [m for m in mats if m and m.surface.kind in ("dotted", "board", "printed")]
    assert dotted  # dots printed on mats and boards: the reader's worst extras


def test_every_style_family_is_reachable() -> None:
    rng = np.random.default_rng(0)
    looks = [random_look(rng) for _ in range(400)]
    assert {k.finish for k in looks} == set(FINISHES)
    assert {k.pip_shape for k in looks} == set(PIP_SHAPES)
    assert {k.pip_kind for k in looks} == set(PIP_KINDS)
    assert {k.dark_pips for k in looks} == {True, False}  # dark on light and light on dark
    assert min(k.rounding for k in looks) < 0.1 < 0.4 < max(k.rounding for k in looks)
    assert any(k.one_r > 1.4 for k in looks)  # the big one-pip
    assert all(k.see_through > 0 for k in looks if k.finish in ("translucent", "smoky"))
    for finish in FINISHES:
        assert random_look(rng, finish).finish == finish


def test_the_scene_domain_is_wide() -> None:
    rng = np.random.default_rng(1)
    scenes = [synth.wide_scene(rng) for _ in range(150)]
    surfaces = {s.table.kind for s in scenes} | {s.mat.surface.kind for s in scenes if s.mat}
    assert surfaces == set(SURFACES)
    tilts = [s.view.tilt_deg for s in scenes]
    assert min(tilts) < 5
    assert max(tilts) > 35
    assert max(tilts) <= MAX_CAMERA_TILT_DEG
    assert {len(s.lamps) for s in scenes} == {1, 2, 3}
    assert any(s.defocus > 0 for s in scenes)
    assert any(s.degrade.jpeg_quality for s in scenes)
    dice = [d for seed in SEEDS for d in shot(seed)[1].truth.dice]
    assert any(d.visible < 0.9 for d in dice)  # some at the frame's edge, partly out of it
    sizes = [d.size_px for d in dice]
    assert min(sizes) < 25
    assert max(sizes) > 70


def test_options_are_checked() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="max_camera_tilt_deg"):
        synth.wide_scene(rng, max_camera_tilt_deg=60)
    with pytest.raises(ValueError, match="finishes"):
        synth.wide_scene(rng, finishes=("glass",))
    only = synth.wide_scene(rng, finishes=("metallic",), n_dice=4)
    assert {d.look.finish for d in only.dice} == {"metallic"}


def test_other_frame_sizes() -> None:
    _scene, s = shot(5, (640, 640))
    assert s.image.shape == (640, 640, 3)
    for d in s.truth.dice:
        assert 0 <= d.center_xy[0] < 640
        assert 0 <= d.center_xy[1] < 640


@pytest.mark.slow
def test_the_shipped_reader_reads_plain_wide_dice() -> None:
    """The renders are dice, not noise: the shipped reader (trained on two photo sets and the
    old renders) finds most flat, opaque, fully visible dice of wide scenes seen at up to 20
    degrees, and reads most of those it answers for right. Measured on 60 scenes (seeds
    5000-5059) when this was written: 88 % found, 64 % read right, 3 % wrong, 20 % asked
    (74.6 % right, 0 % asked, with the reader before its confidence was raised). The bounds
    are loose on purpose: the wide domain is meant to be harder than what it learnt."""
    found = right = wrong = total = 0
    for seed in range(5000, 5012):
        rng = np.random.default_rng(seed)
        scene = synth.wide_scene(rng, finishes=("opaque",), max_camera_tilt_deg=20, cocked=0.0)
        s = synth.render_wide(scene, rng=rng)
        reading = vision.read_roll(s.image)
        for d in s.truth.dice:
            if d.visible < 0.9 or d.tilt_deg >= 10:
                continue
            total += 1
            near = [
                r for r in reading.dice if math.dist(r.center_xy, d.center_xy) < 0.5 * d.size_px
            ]
            found += bool(near)
            right += any(r.value == d.value for r in near)
            wrong += any(r.value not in (None, d.value) for r in near)
    assert total >= 30
    assert found / total >= 0.6
    assert right / total >= 0.35
    assert wrong / total <= 0.2


def count_dark_blobs(image: np.ndarray, corners: tuple[tuple[float, float], ...]) -> int:
    """Dark blobs inside the (slightly shrunk) top face: a white die's pips."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    face = np.zeros_like(grey)
    quad = np.array(corners, np.float32)
    centre = quad.mean(axis=0)
    cv2.fillPoly(face, [np.round(centre + (quad - centre) * 0.9).astype(np.int32)], 255)
    dark = ((grey < 100) & (face > 0)).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    return sum(1 for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 4)


@pytest.mark.parametrize("tilt", [0.0, 25.0, 45.0])
@pytest.mark.parametrize("value", range(1, 7))
def test_the_truth_is_what_was_drawn(value: int, tilt: float) -> None:
    """A white die with black pips, seen at any camera tilt: the truth's top face holds as many
    pips as its value says, and its centre is on the die's white body or a pip."""
    look = DieLook("white", pip_r=0.2, rounding=0.2, gloss=0.0)
    spec = DieSpec(value, (10.0, -5.0), yaw_deg=20.0, size_mm=16.0)
    scene = synth.WideScene(
        dice=(synth.WideDie(spec, look),),
        view=synth.View(distance_mm=180.0, tilt_deg=tilt, azimuth_deg=30.0, roll_deg=10.0),
        table=Surface("felt", (40, 110, 30)),
        mat=None,
        props=(),
        lamps=(synth.Lamp((0.0, 0.0, 900.0), 0.5),),
        ambient=0.55,
    )
    s = synth.render_wide(scene)
    (d,) = s.truth.dice
    assert d.value == value
    assert count_dark_blobs(s.image, d.corners_xy) == value
    x, y = map(round, d.center_xy)
    b, g, r = (int(c) for c in s.image[y, x])
    assert abs(b - g) < 20
    assert abs(g - r) < 20


def test_a_wide_view_never_sees_past_the_horizon() -> None:
    """A wide lens at the steepest slant once saw past the horizon: the frame's corner rays
    met the table 1e8 mm away, the mat sized to the view overflowed OpenCV's fixed point, and
    the render was garbage (seed 1001's 441st training table)."""
    from vision.synth.view import _ViewProjector
    from vision.synth.wide.scene import HORIZON_MARGIN_DEG, MAX_CAMERA_TILT_DEG, _random_view

    w, h = 640, 640
    steepest = 0.0
    for seed in range(3000):
        view = _random_view(np.random.default_rng(seed), 16.0, (w, h), MAX_CAMERA_TILT_DEG)
        corner = math.degrees(math.atan(math.hypot(w, h) / (2 * view.focal_frac * w)))
        steepest = max(steepest, view.tilt_deg + corner)
        ground = _ViewProjector(view, (w, h)).to_plane(
            np.array([0, w, w, 0]), np.array([0, 0, h, h])
        )
        assert np.all(np.abs(ground[:, :2]) < 100 * view.distance_mm), (seed, view)
    assert 85.0 < steepest <= HORIZON_MARGIN_DEG  # the slant still reaches the margin
