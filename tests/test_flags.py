"""COCKED and STACKED on rendered dice whose tilt and support are known exactly."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vision import flags, synth
from vision.flags import DieView, Evidence, FlagParams, judge
from vision.reading import DieFlag
from vision.synth import DieTruth


def view_of(d: DieTruth) -> DieView:
    (x0, y0), (x1, y1) = d.corners_xy[0], d.corners_xy[1]
    angle = (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0
    return DieView(d.center_xy, d.size_px, angle)


def judged(seed: int, n: int, **kinds: float) -> list[tuple[DieTruth, Evidence]]:
    """Render ``n`` scenes and judge every visible die from its true geometry."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        shot = synth.render(synth.random_scene(rng, n_dice=4, **kinds), rng=rng)  # type: ignore[arg-type]
        seen = [d for d in shot.truth.dice if d.visible >= 0.5]
        out += list(zip(seen, judge(shot.image, [view_of(d) for d in seen]), strict=True))
    return out


def test_flat_dice_are_not_flagged() -> None:
    results = judged(100, 12)
    assert len(results) >= 40
    wrong = [e for _, e in results if e.flags()]
    assert len(wrong) <= 1


def test_dice_leaning_on_the_rail_are_cocked() -> None:
    results = judged(101, 12, cocked=1.0, min_tilt_deg=20.0)
    tilted = [e for d, e in results if d.tilt_deg >= 20]
    assert len(tilted) >= 30
    assert sum(DieFlag.COCKED in e.flags() for e in tilted) >= 0.9 * len(tilted)


def test_dice_on_other_dice_are_stacked() -> None:
    results = judged(102, 16, stacked=0.6)
    stacked = [e for d, e in results if d.stacked]
    assert len(stacked) >= 10
    assert sum(DieFlag.STACKED in e.flags() for e in stacked) >= 0.8 * len(stacked)


def test_overlapping_detections_flag_the_upper_die() -> None:
    frame = np.full((200, 200, 3), 90, np.uint8)
    upper = DieView((100.0, 100.0), 32.0, 0.0)
    lower = DieView((110.0, 104.0), 30.0, 0.0)
    far = DieView((30.0, 30.0), 30.0, 0.0)
    ev = judge(frame, [upper, lower, far])
    assert ev[0].overlapped
    assert DieFlag.STACKED in ev[0].flags()
    assert not ev[1].overlapped
    assert not ev[2].overlapped
    assert judge(frame, []) == ()


def test_the_detector_hook_judges_one_die_among_others() -> None:
    rng = np.random.default_rng(103)
    scene = synth.random_scene(rng, n_dice=3, cocked=1.0, min_tilt_deg=30.0)
    shot = synth.render(scene)
    views = [view_of(d) for d in shot.truth.dice]
    assert views
    marks = flags.die_flags(shot.image, views[0], views[1:])
    assert DieFlag.COCKED in marks
    assert marks <= {DieFlag.COCKED, DieFlag.STACKED}


def test_features_are_deterministic_and_sized() -> None:
    shot = synth.render(synth.random_scene(np.random.default_rng(5), n_dice=2))
    d = shot.truth.dice[0]
    v = view_of(d)
    a = flags.features(shot.image, v.center_xy, v.side_px, v.angle_deg)
    b = flags.features(shot.image, v.center_xy, v.side_px, v.angle_deg)
    assert a.shape == (flags.N_CHANNELS * flags.GRID * flags.GRID + flags.N_SCALARS,)
    assert np.array_equal(a, b)
    assert np.isfinite(a).all()


def test_thresholds_and_errors() -> None:
    ev = Evidence(cocked=0.75, stacked=0.2, overlapped=False)
    assert ev.flags() == {DieFlag.COCKED}
    assert ev.flags(FlagParams(cocked_threshold=0.8)) == frozenset()
    with pytest.raises(ValueError, match="focal_frac"):
        FlagParams(focal_frac=0)
    with pytest.raises(ValueError, match="cocked_threshold"):
        FlagParams(cocked_threshold=1.5)


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="train_flags"):
        flags.load_model(tmp_path / "nope.npz")
