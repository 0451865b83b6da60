"""The synthetic renderer: its ground truth must be true, or every figure built on it is wrong."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision import synth
from vision.synth import Camera, Degrade, DieSpec, Lighting, PadStyle, Scene, render
from vision.synth.hands import _hand_in_frame

PLAIN = Scene(
    pad=PadStyle(colour=(40, 110, 30), texture=0.0),
    lighting=Lighting(azimuth_deg=0, elevation_deg=90, shadow=0.0, ambient=0.6),
    camera=Camera(height_mm=200.0),
)


def one_die(**kw: object) -> Scene:
    fields: dict[str, Any] = {"value": 1, "xy_mm": (0.0, 0.0), "size_mm": 20.0, **kw}
    spec = DieSpec(**fields)
    return Scene(dice=(spec,), pad=PLAIN.pad, lighting=PLAIN.lighting, camera=PLAIN.camera)


def count_pips(image: np.ndarray, corners: tuple[tuple[float, float], ...]) -> int:
    """Dark blobs inside the top face (white body, black pips)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    face = np.zeros_like(grey)
    quad = np.array(corners, np.float32)
    centre = quad.mean(axis=0)
    shrunk = centre + (quad - centre) * 0.9
    cv2.fillPoly(face, [np.round(shrunk).astype(np.int32)], 255)
    dark = ((grey < 100) & (face > 0)).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    return sum(1 for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 6)


@settings(max_examples=25, deadline=None)
@given(value=st.integers(1, 6), yaw=st.floats(0, 90), x=st.floats(-40, 40), y=st.floats(-30, 30))
def test_a_flat_die_shows_its_value_as_pips_on_a_square_top_face(
    value: int, yaw: float, x: float, y: float
) -> None:
    shot = render(one_die(value=value, yaw_deg=yaw, xy_mm=(x, y)))
    (truth,) = shot.truth.dice
    assert truth.value == value
    assert truth.tilt_deg == pytest.approx(0.0, abs=1e-6)
    assert count_pips(shot.image, truth.corners_xy) == value
    sides = [
        math.dist(a, b)
        for a, b in zip(truth.corners_xy, truth.corners_xy[1:] + truth.corners_xy[:1], strict=False)
    ]
    assert max(sides) - min(sides) < 1e-6  # a flat face is parallel to the image plane: a square
    assert truth.size_px == pytest.approx(sides[0])
    assert truth.on_pad
    assert not truth.stacked


@pytest.mark.parametrize("value", range(1, 7))
def test_opposite_faces_sum_to_seven(value: int) -> None:
    flipped = render(one_die(value=value, spin=(math.pi, 0.0, 0.0))).truth.dice[0]
    assert flipped.value == 7 - value


def test_the_centre_pixel_is_a_pip_only_on_odd_faces() -> None:
    for value in range(1, 7):
        shot = render(one_die(value=value))
        cx, cy = (round(c) for c in shot.truth.dice[0].center_xy)
        dark = int(shot.image[cy, cx].mean()) < 100
        assert dark == (value % 2 == 1), value


def test_tilt_foreshortens_the_top_face_and_is_reported() -> None:
    shot = render(one_die(value=4, tilt_deg=25.0, tilt_dir_deg=0.0))
    (truth,) = shot.truth.dice
    assert truth.value == 4
    assert truth.tilt_deg == pytest.approx(25.0, abs=1e-3)
    assert truth.cocked
    c = truth.corners_xy
    sides = sorted(math.dist(c[i], c[(i + 1) % 4]) for i in range(4))
    assert sides[0] / sides[-1] == pytest.approx(math.cos(math.radians(25)), abs=0.04)


def test_a_die_on_top_of_another_is_stacked_and_hides_it() -> None:
    base = DieSpec(2, (0.0, 0.0), size_mm=18.0)
    top = DieSpec(5, (1.0, 1.0), yaw_deg=30, lift_mm=18.0, size_mm=18.0, on_die=0)
    shot = render(
        Scene(dice=(base, top), pad=PLAIN.pad, lighting=PLAIN.lighting, camera=PLAIN.camera)
    )
    low, high = shot.truth.dice
    assert high.stacked
    assert not low.stacked
    assert high.size_px > low.size_px  # nearer the camera
    assert high.visible > 0.95
    assert low.visible < 0.3


def test_off_pad_truth_follows_the_pad_polygon() -> None:
    pad = PadStyle(size_mm=(100.0, 80.0), texture=0.0)
    scene = Scene(dice=(DieSpec(3, (0.0, 0.0)), DieSpec(3, (85.0, 0.0))), pad=pad)
    shot = render(scene)
    inside, outside = shot.truth.dice
    assert inside.on_pad
    assert not outside.on_pad
    assert shot.truth.pad.contains(inside.center_xy)
    assert len(shot.truth.pad.polygon) == 4


def test_rendering_is_deterministic_for_a_seed_and_noise_varies_between_seeds() -> None:
    scene = synth.random_scene(np.random.default_rng(7), n_dice=4, degrade=True)
    a = render(scene, seed=1).image
    b = render(scene, seed=1).image
    c = render(scene, seed=2).image
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (480, 640, 3)
    assert a.dtype == np.uint8


def test_random_scenes_honour_the_requested_kinds() -> None:
    rng = np.random.default_rng(11)
    for _ in range(5):
        off = render(synth.random_scene(rng, n_dice=3, off_pad=1.0)).truth
        assert off.dice
        assert not any(d.on_pad for d in off.dice)
        cocked = render(synth.random_scene(rng, n_dice=3, cocked=1.0, min_tilt_deg=15)).truth
        assert cocked.dice
        assert all(d.tilt_deg >= 15 - 1e-6 and d.on_pad for d in cocked.dice)
        flat = render(synth.random_scene(rng, n_dice=6)).truth
        assert flat.dice
        assert all(d.tilt_deg == 0 and d.on_pad and not d.stacked for d in flat.dice)
        stacked = render(synth.random_scene(rng, n_dice=4, stacked=0.7)).truth
        assert any(d.stacked for d in stacked.dice) or len(stacked.dice) == 1


def test_dice_in_a_tray_touch_but_never_overlap() -> None:
    rng = np.random.default_rng(12)
    closest = []
    for _ in range(6):
        scene = synth.random_scene(rng, n_dice=6, spacing=1.0)
        shot = render(scene)
        assert all(d.tilt_deg == 0 and not d.stacked for d in shot.truth.dice)
        # no die hides any part of another's top face
        assert all(d.visible > 0.97 for d in shot.truth.dice)
        for i, a in enumerate(scene.dice):
            for b in scene.dice[i + 1 :]:
                closest.append(math.dist(a.xy_mm, b.xy_mm) / a.size_mm)
                # footprints apart: no corner of one inside the other
                for p, q in ((a, b), (b, a)):
                    yaw = math.radians(q.yaw_deg)
                    for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                        cx = p.xy_mm[0] + 0.5 * p.size_mm * (
                            sx * math.cos(math.radians(p.yaw_deg))
                            - sy * math.sin(math.radians(p.yaw_deg))
                        )
                        cy = p.xy_mm[1] + 0.5 * p.size_mm * (
                            sx * math.sin(math.radians(p.yaw_deg))
                            + sy * math.cos(math.radians(p.yaw_deg))
                        )
                        du, dv = cx - q.xy_mm[0], cy - q.xy_mm[1]
                        u = du * math.cos(yaw) + dv * math.sin(yaw)
                        v = -du * math.sin(yaw) + dv * math.cos(yaw)
                        assert max(abs(u), abs(v)) > 0.5 * q.size_mm
    assert sum(c < 1.45 for c in closest) >= 8  # side by side, as in a tray
    with pytest.raises(ValueError, match="spacing"):
        synth.random_scene(rng, spacing=0.5)


def test_cocked_dice_can_tilt_anywhere_any_way() -> None:
    rng = np.random.default_rng(13)
    inside, ways = 0, set()
    for _ in range(5):
        scene = synth.random_scene(rng, n_dice=4, cocked=1.0, cocked_anywhere=1.0)
        truth = render(scene).truth
        assert truth.dice
        assert all(15 - 1e-6 <= d.tilt_deg <= 40 + 1e-6 and d.on_pad for d in truth.dice)
        half_w, half_h = scene.pad.size_mm[0] / 2, scene.pad.size_mm[1] / 2
        for d in scene.dice:
            x, y = d.xy_mm[0] - scene.pad.centre_mm[0], d.xy_mm[1] - scene.pad.centre_mm[1]
            inside += abs(x) < half_w - 2 * d.size_mm and abs(y) < half_h - 2 * d.size_mm
            ways.add(int(d.tilt_dir_deg // 45))
    assert inside >= 5  # away from the rail, not leaning on it
    assert len(ways) >= 5  # and leaning every which way, not just outwards
    with pytest.raises(ValueError, match="cocked_anywhere"):
        synth.random_scene(rng, cocked_anywhere=1.5)


def test_degradations_apply() -> None:
    scene = one_die(value=6)
    clean = render(scene).image
    jpeg = render(Scene(**{**scene.__dict__, "degrade": Degrade(jpeg_quality=30)})).image
    dark = render(Scene(**{**scene.__dict__, "degrade": Degrade(exposure=0.5)})).image
    blurred = render(
        Scene(**{**scene.__dict__, "degrade": Degrade(blur_sigma=2, motion_px=5)})
    ).image
    assert jpeg.shape == clean.shape
    assert not np.array_equal(jpeg, clean)
    assert dark.mean() == pytest.approx(clean.mean() * 0.5, rel=0.05)
    lap = [
        cv2.Laplacian(cv2.cvtColor(i, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var()
        for i in (clean, blurred)
    ]
    assert lap[1] < lap[0] / 3


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="1-6"):
        DieSpec(7, (0.0, 0.0))
    with pytest.raises(ValueError, match="exceed"):
        synth.random_scene(np.random.default_rng(0), cocked=0.7, off_pad=0.6)
    with pytest.raises(ValueError, match="too small"):
        render(Scene(), size=(8, 8))


def test_a_throw_moves_then_rests_then_a_hand_takes_the_kept_dice() -> None:
    rng = np.random.default_rng(3)
    seq = synth.throw_sequence(rng, n_dice=4, keep=2, size=(320, 240))
    frames = list(seq)
    assert len(frames) == len(seq)
    rest = seq.rest_index
    assert frames[rest - 1].truth.moving
    assert not any(f.truth.moving for f in frames[rest : seq.keep_start])
    assert {f.truth.phase for f in frames} == {"before", "throw", "rest", "keep", "after"}
    assert any(f.truth.hand_visible for f in frames[seq.keep_start :])
    assert len(frames[rest].truth.scene.dice) == 4
    assert len(frames[-1].truth.scene.dice) == 2
    assert not frames[-1].truth.moving
    # the dice at rest are flat, on the pad, and match the plan's remaining dice
    assert all(d.tilt_deg == 0 and d.on_pad for d in frames[rest].truth.scene.dice)
    nxt = synth.throw_sequence(rng, before=seq.remaining, size=(320, 240), keep=0)
    first = nxt.frame(0).truth.scene
    assert len(first.dice) == 2
    assert len(nxt.frame(nxt.rest_index).truth.scene.dice) == 2


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_no_hand_is_in_view_between_rest_and_the_keep_hand(seed: int) -> None:
    seq = synth.throw_sequence(np.random.default_rng(seed), n_dice=3, size=(320, 240))
    w, h = seq.size
    for i in range(seq.rest_index, seq.keep_start):
        hand = seq.throw_hand.at(i)
        assert hand is None or not _hand_in_frame(hand, w, h), i
        assert not seq.scene_at(i)[1]


def test_a_scripted_camera_can_change_where_a_thrown_die_lands() -> None:
    # Tumble is public so the demo camera and the pad script can reshape a planned throw
    seq = synth.throw_sequence(np.random.default_rng(4), n_dice=2, keep=0, size=(320, 240))
    assert all(isinstance(t, synth.Tumble) for t in seq.tumbles)
    first = seq.tumbles[0]
    cocked = replace(first, final=replace(first.final, value=6, tilt_deg=30.0))
    changed = replace(seq, tumbles=(cocked, *seq.tumbles[1:]))
    rest = changed.frame(changed.rest_index).truth.scene.dice
    assert sorted(d.tilt_deg > 25 for d in rest) == [False, True]
    assert cocked.at(cocked.start_frame)[1]  # still tumbling when it leaves the hand
    assert cocked.at(cocked.start_frame + cocked.frames) == (cocked.final, False)


def test_a_resin_die_shows_its_far_pips_faintly_through_the_body() -> None:
    """A translucent 2 lies on its 5: the 5's centre pip shows through the top face's centre,
    dimmer than the 2's own pips; the same die in opaque resin shows plain body there."""
    resin = synth.TRANSLUCENT_STYLES["smoke-white"]
    opaque = replace(resin, see_through=0.0)
    grey = {}
    for style in (resin, opaque):
        shot = render(one_die(value=2, style=style))
        (truth,) = shot.truth.dice
        assert truth.value == 2
        assert truth.colour == "black"
        g = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY).astype(int)
        cx, cy = (round(c) for c in truth.center_xy)
        (x0, y0), (x2, y2) = truth.corners_xy[0], truth.corners_xy[2]
        pip = (round(x0 + 0.24 * (x2 - x0)), round(y0 + 0.24 * (y2 - y0)))  # a top-face pip
        grey[style.see_through > 0] = (int(g[cy, cx]), int(g[pip[1], pip[0]]))
    (ghost, own), (body, own_opaque) = grey[True], grey[False]
    assert ghost > body + 15  # the far pip shows ...
    assert own > ghost + 60  # ... dimly beside the top face's own pips,
    assert own == pytest.approx(own_opaque, abs=3)  # which stay as crisp as an opaque die's
