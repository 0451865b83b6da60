"""Settle detection on rendered throws: exactly one event per throw, soon after rest, never
while something moves, and nothing for noise, lighting drift, a resting hand or kept dice
being taken away."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vision import synth
from vision.settle import SettleDetector, SettleParams, SettleState, step
from vision.synth import Degrade, DieSpec, Hand, Scene, render

SIZE = (320, 240)
NOISY = Degrade(noise_sigma=4.0, jpeg_quality=70, blur_sigma=0.5)


def latency_window(params: SettleParams) -> int:
    return round(0.3 * params.fps)  # the 300 ms target


def test_chained_throws_settle_exactly_once_each() -> None:
    rng = np.random.default_rng(21)
    base = replace(synth.random_scene(rng, n_dice=0, size=SIZE), degrade=NOISY)
    det = SettleDetector()
    before: tuple[DieSpec, ...] = ()
    for keep in (2, 0, 1):
        seq = synth.throw_sequence(
            rng, base=base, before=before, n_dice=None if before else 5, size=SIZE, keep=keep
        )
        events = [f.truth.index for f in seq if det.feed(f.image) is not None]
        assert len(events) == 1, (keep, events, seq.rest_index)
        assert seq.rest_index <= events[0] <= seq.rest_index + latency_window(det.params)
        before = seq.remaining


def test_no_event_while_anything_moves() -> None:
    rng = np.random.default_rng(4)
    seq = synth.throw_sequence(rng, n_dice=6, size=SIZE, keep=3)
    state = SettleState()
    for frame in seq:
        state, event = step(state, frame.image)
        if event is not None:
            assert not frame.truth.moving
            assert frame.truth.phase == "rest"


def still_scene(seed: int = 5) -> Scene:
    rng = np.random.default_rng(seed)
    return replace(synth.random_scene(rng, n_dice=4, size=SIZE), degrade=NOISY)


def test_camera_noise_and_slow_lighting_drift_never_settle() -> None:
    scene = still_scene()
    det = SettleDetector()
    rng = np.random.default_rng(0)
    for i in range(90):
        exposure = 1.0 + 0.005 * i  # +45 % over three seconds
        frame = render(
            replace(scene, degrade=replace(NOISY, exposure=exposure)), size=SIZE, rng=rng
        )
        assert det.feed(frame.image) is None


def test_a_sudden_lighting_change_does_not_settle() -> None:
    scene = still_scene()
    det = SettleDetector()
    rng = np.random.default_rng(1)
    for i in range(40):
        exposure = 1.0 if i < 10 else 0.6
        frame = render(
            replace(scene, degrade=replace(NOISY, exposure=exposure)), size=SIZE, rng=rng
        )
        assert det.feed(frame.image) is None


def test_a_hand_resting_in_view_holds_the_event_until_it_leaves() -> None:
    scene = still_scene(8)
    empty = replace(scene, dice=())
    rng = np.random.default_rng(2)
    det = SettleDetector()
    w, h = SIZE
    frames: list[Scene] = [empty] * 5
    path = [(w / 2, h + 80 - k * 20) for k in range(10)]  # the hand comes in from below
    frames += [replace(empty, hands=(Hand(p, 90.0, 90.0),)) for p in path]
    resting = replace(scene, hands=(Hand(path[-1], 90.0, 90.0),))  # dice thrown, hand stays
    frames += [resting] * 30
    frames += [replace(scene, hands=(Hand(p, 90.0, 90.0),)) for p in reversed(path)]
    frames += [scene] * 15
    shots = [render(s, size=SIZE, rng=rng) for s in frames]
    events = [i for i, shot in enumerate(shots) if det.feed(shot.image)]
    rest = 1 + max(i for i, shot in enumerate(shots) if shot.truth.hand_visible)
    assert rest > len(frames) - 15 - 3  # the hand really stayed until the end
    assert events == [rest + det.params.still_frames]


def test_taking_kept_dice_away_is_not_a_throw() -> None:
    scene = still_scene(9)
    rng = np.random.default_rng(3)
    det = SettleDetector()
    w, _ = SIZE
    kept = render(scene, size=SIZE).truth.dice[0].center_xy
    path = [(w + 60 + (kept[0] - w - 60) * k / 8, kept[1]) for k in range(9)]
    frames = [scene] * 10
    frames += [replace(scene, hands=(Hand(p, 0.0, 90.0),)) for p in path]
    gone = replace(scene, dice=scene.dice[1:])
    frames += [replace(gone, hands=(Hand(p, 0.0, 90.0),)) for p in reversed(path)]
    frames += [gone] * 20
    assert not [i for i, s in enumerate(frames) if det.feed(render(s, size=SIZE, rng=rng).image)]


def test_step_is_pure_and_accepts_grey_previews() -> None:
    scene = render(still_scene()).image
    grey = scene[:, :, 1].copy()
    state = SettleState()
    s1, _ = step(state, grey)
    s2, _ = step(state, grey)
    assert state == SettleState()  # the input state is untouched
    assert s1.index == s2.index == 0
    with pytest.raises(ValueError, match="grey or BGR"):
        step(state, np.zeros((2, 2, 2, 2), np.uint8))


@given(fps=st.floats(5, 120), still_ms=st.floats(20, 2000))
def test_the_still_window_covers_still_ms(fps: float, still_ms: float) -> None:
    p = SettleParams(fps=fps, still_ms=still_ms)
    assert p.still_frames / fps * 1000 >= still_ms - 1e-6
    assert (p.still_frames - 1) / fps * 1000 < still_ms or p.still_frames == 1


def test_bad_params_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        SettleParams(fps=0)
    with pytest.raises(ValueError, match="positive"):
        SettleParams(still_ms=0)  # no stillness at all would settle on every pause
    with pytest.raises(ValueError, match="work_width"):
        SettleParams(work_width=8)
    with pytest.raises(ValueError, match="relight_frac"):
        SettleParams(relight_frac=1.5)
    with pytest.raises(ValueError, match="odd"):
        SettleParams(background_px=30)


@pytest.mark.parametrize(("side", "arm_deg"), [("left", 180.0), ("top", 270.0), ("right", 0.0)])
def test_a_hand_resting_in_from_any_edge_holds_the_event(side: str, arm_deg: float) -> None:
    """An arm can reach the pad across any edge of the frame, not only the bottom one: resting
    in view it touches that edge, and the event must wait until it has gone."""
    scene = still_scene(8)
    empty = replace(scene, dice=())
    rng = np.random.default_rng(12)
    det = SettleDetector()
    w, h = SIZE
    starts = {"left": (-80.0, h / 2), "top": (w / 2, -80.0), "right": (w + 80.0, h / 2)}
    steps = {"left": (20.0, 0.0), "top": (0.0, 20.0), "right": (-20.0, 0.0)}
    (x0, y0), (dx, dy) = starts[side], steps[side]
    path = [(x0 + k * dx, y0 + k * dy) for k in range(10)]
    frames: list[Scene] = [empty] * 5
    frames += [replace(empty, hands=(Hand(p, arm_deg, 90.0),)) for p in path]
    frames += [replace(scene, hands=(Hand(path[-1], arm_deg, 90.0),))] * 30  # dice thrown
    frames += [replace(scene, hands=(Hand(p, arm_deg, 90.0),)) for p in reversed(path)]
    frames += [scene] * 15
    shots = [render(s, size=SIZE, rng=rng) for s in frames]
    events = [i for i, shot in enumerate(shots) if det.feed(shot.image)]
    rest = 1 + max(i for i, shot in enumerate(shots) if shot.truth.hand_visible)
    assert rest > len(frames) - 15 - 3  # the hand really stayed in view until it left
    assert len(events) == 1
    # (the truth counts a hand in view while its shadow, grown by a margin, may reach the
    # frame: at these edges its last such frame already shows nothing, so the rest may start
    # a frame early)
    assert rest - 1 <= events[0] - det.params.still_frames <= rest


def test_an_exposure_step_as_the_dice_land_still_settles_once() -> None:
    """Auto exposure reacts to the hand leaving: the rest frame can be a quarter darker than
    the scene before the throw. That is one gain over the whole frame, divided out before the
    scenes are compared, so the landed dice still make one event (not a "lighting change")."""
    rng = np.random.default_rng(31)
    base = replace(synth.random_scene(rng, n_dice=0, size=SIZE), degrade=NOISY)
    seq = synth.throw_sequence(rng, base=base, n_dice=4, size=SIZE, keep=0)
    det = SettleDetector()
    events = []
    for i, frame in enumerate(seq):
        image = frame.image
        if i >= seq.rest_index - 1:
            image = np.clip(image * 0.75, 0, 255).astype(np.uint8)
        if det.feed(image) is not None:
            events.append(i)
    assert len(events) == 1
    assert seq.rest_index <= events[0] <= seq.rest_index + latency_window(det.params)


def test_a_lamp_switched_on_at_one_side_is_not_a_throw_and_does_not_block_the_next() -> None:
    """Light from one side (a lamp, a door) changes most of the frame unevenly, so no gain
    explains it: it is a lighting change, the detector takes the new scene as its baseline,
    and the next throw settles once (taken for an arm at the border instead, the old baseline
    would hold every later event back)."""
    rng = np.random.default_rng(32)
    scene = replace(synth.random_scene(rng, n_dice=0, size=SIZE), degrade=NOISY)
    lit = replace(scene, lighting=replace(scene.lighting, gradient=0.8, gradient_dir_deg=0.0))
    images = [render(scene, size=SIZE, rng=rng).image for _ in range(8)]
    images += [render(lit, size=SIZE, rng=rng).image for _ in range(12)]
    seq = synth.throw_sequence(rng, base=lit, n_dice=4, size=SIZE, keep=0)
    images += [frame.image for frame in seq]
    det = SettleDetector()
    events = [i for i, image in enumerate(images) if det.feed(image) is not None]
    rest = 20 + seq.rest_index
    assert len(events) == 1
    assert rest <= events[0] <= rest + latency_window(det.params)


def test_a_preview_of_another_shape_starts_afresh() -> None:
    """A camera reconfigured mid-stream (another aspect ratio, so another working image) must
    not break the frame loop: the detector starts again from that frame, and the next throw
    settles once."""
    det = SettleDetector()
    still = render(still_scene(), size=SIZE).image
    for _ in range(3):
        assert det.feed(still) is None
    rng = np.random.default_rng(33)
    seq = synth.throw_sequence(rng, n_dice=3, size=(320, 180), keep=0)
    events = [f.truth.index for f in seq if det.feed(f.image) is not None]
    assert len(events) == 1
    assert seq.rest_index <= events[0] <= seq.rest_index + latency_window(det.params)
