"""COCKED and STACKED on rendered dice whose tilt and support are known exactly.

Flags force re-rolls in a bar, so the first tests are the safety ones: flat dice lying apart
are never flagged, neither from their true geometry nor end to end through ``read_roll``; two
detections of one die are never a stack."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import synth
from vision.detect import read_roll
from vision.flags import Cue, DieView, Evidence, FlagParams, judge, load_model
from vision.flags.dice import Neighbour, _nearest, neighbours_of
from vision.flags.features import (
    GRID,
    N_CHANNELS,
    N_SCALARS,
    SCALARS,
    _cut,
    _matrix,
    features,
    features_all,
)
from vision.flags.judging import judge_all, second_look
from vision.flags.network import PLANE_SCALARS, PLANES, SYMMETRIES, inputs, planes, symmetry
from vision.params import DetectorParams
from vision.reading import DieFlag, DieReading
from vision.synth import DieTruth

ALARMS = {DieFlag.COCKED, DieFlag.STACKED}

# Recall floors a little under what the shipped model and thresholds give on these seeds: the
# operating points favour no false flags, so recall is below 1 (bench_synth prints it).
COCKED_RECALL = 0.85  # measured 0.98 from the true geometry (seed 101; trained on the reader's)
COCKED_RECALL_READ = 0.9  # measured 1.0 (39 dice, off-face ones included) end to end (seed 105)
STACKED_RECALL = 0.75  # measured 0.90 from the true geometry (seed 102)


def view_of(d: DieTruth) -> DieView:
    (x0, y0), (x1, y1) = d.corners_xy[0], d.corners_xy[1]
    angle = (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0
    return DieView(d.center_xy, d.size_px, angle)


def shots(seed: int, n: int, **kinds: float) -> list[synth.SceneImage]:
    rng = np.random.default_rng(seed)
    return [
        synth.render(synth.random_scene(rng, n_dice=4, **kinds), rng=rng)  # type: ignore[arg-type]
        for _ in range(n)
    ]


def judged(seed: int, n: int, **kinds: float) -> list[tuple[DieTruth, Evidence]]:
    """Render ``n`` scenes and judge every visible die from its true geometry."""
    out = []
    for shot in shots(seed, n, **kinds):
        seen = [d for d in shot.truth.dice if d.visible >= 0.5]
        out += list(zip(seen, judge(shot.image, [view_of(d) for d in seen]), strict=True))
    return out


SIDE_FACE_REACH = 1.1
"""A tilted die the reader centred up to this many sides off its top face (on the side face it
shows) is still that die: its detection must carry the flag too."""


def read(seed: int, n: int, **kinds: float) -> list[tuple[DieTruth, frozenset[DieFlag]]]:
    """Render ``n`` scenes and read them with ``read_roll``: each true die with the flags of the
    detection on it (within half a side; for a tilted or stacked die, the nearest within
    ``SIDE_FACE_REACH`` sides), dice the reader missed left out."""
    out = []
    for shot in shots(seed, n, **kinds):
        dice = read_roll(shot.image).dice
        for d in shot.truth.dice:
            reach = SIDE_FACE_REACH if d.tilt_deg >= 10 or d.stacked else 0.5
            near = sorted(
                (math.dist(r.center_xy, d.center_xy), k)
                for k, r in enumerate(dice)
                if math.dist(r.center_xy, d.center_xy) < reach * d.size_px
            )
            if near:
                out.append((d, dice[near[0][1]].flags))
    return out


def test_flat_dice_apart_are_never_flagged() -> None:
    results = judged(100, 12)
    assert len(results) >= 40
    assert all(d.tilt_deg == 0 and not d.stacked for d, _ in results)
    assert [e for _, e in results if e.flags()] == []


def test_read_roll_flags_at_most_one_percent_of_flat_dice() -> None:
    # the operating point: flat dice near a wide-angle frame's corner show big side faces and
    # are the rare false COCKED (0-1 % on bench_synth's scenes, 2 of these 360)
    results = [r for seed in (104, 107, 108) for r in read(seed, 30)]
    assert len(results) >= 300
    assert all(d.tilt_deg == 0 and not d.stacked for d, _ in results)
    assert sum(bool(f & ALARMS) for _, f in results) <= 0.01 * len(results)


def test_dice_tilted_25_degrees_or_more_are_cocked() -> None:
    results = judged(101, 12, cocked=1.0, min_tilt_deg=25.0)
    tilted = [e for d, e in results if d.tilt_deg >= 25 and not d.stacked]
    assert len(tilted) >= 30
    assert sum(DieFlag.COCKED in e.flags() for e in tilted) >= COCKED_RECALL * len(tilted)


def test_dice_tilted_25_degrees_or_more_are_cocked_by_read_roll() -> None:
    results = read(105, 12, cocked=1.0, min_tilt_deg=25.0)
    tilted = [f for d, f in results if d.tilt_deg >= 25 and not d.stacked]
    assert len(tilted) >= 25
    assert sum(DieFlag.COCKED in f for f in tilted) >= COCKED_RECALL_READ * len(tilted)


def test_dice_tilted_in_the_open_are_cocked_by_their_squeezed_pips() -> None:
    """The model learnt tilted dice on the rail or on a die and misses many tilted in the open;
    a 4-6 it finds somewhat tilted whose pips' layout is squeezed one way is COCKED (the
    squeeze cue), only where the pad shows the camera square on, and never a flat die."""
    without = DetectorParams(flags=FlagParams(squeeze=0.0))
    gained = at_a_slant = 0
    for shot in shots(311, 10, cocked=1.0, cocked_anywhere=1.0, min_tilt_deg=20.0):
        pad = shot.truth.pad
        on, off = read_roll(shot.image, pad=pad), read_roll(shot.image, pad=pad, params=without)
        unknown = read_roll(shot.image)  # no pad: the camera may be at a slant
        assert [d.center_xy for d in on.dice] == [d.center_xy for d in off.dice]
        for a, b, c in zip(on.dice, off.dice, unknown.dice, strict=True):
            assert b.flags - {DieFlag.STACKED} <= a.flags  # the cue adds COCKED ...
            assert a.flags & ALARMS or not b.flags & ALARMS  # ... and unflags no die
            gained += DieFlag.COCKED in a.flags and DieFlag.COCKED not in b.flags
            at_a_slant += DieFlag.COCKED in c.flags and DieFlag.COCKED not in b.flags
    assert gained >= 2
    assert at_a_slant == 0
    for shot in shots(312, 8, cocked=0.0, stacked=0.0):
        views = [view_of(d) for d in shot.truth.dice if d.visible >= 0.5]
        values = [d.value for d in shot.truth.dice if d.visible >= 0.5]
        evidence = judge(shot.image, views, values=values, pad=shot.truth.pad)
        assert not any(e.squeezed for e in evidence)


def test_a_lone_die_taken_for_a_stack_with_squeezed_pips_is_cocked() -> None:
    """With no other die in reach, the model cannot tell a die squarely on a die it hides
    from a die tilted alone; a die on a die lies flat on it, so a 4-6 whose pips are squeezed
    one way is the tilted one: COCKED, not STACKED (the same re-roll, the right word for it).
    A die really on a die keeps its STACKED."""
    without = DetectorParams(flags=FlagParams(squeeze=0.0))
    switched = 0
    for shot in shots(314, 16, cocked=1.0, cocked_anywhere=1.0, min_tilt_deg=20.0):
        pad = shot.truth.pad
        on, off = read_roll(shot.image, pad=pad), read_roll(shot.image, pad=pad, params=without)
        for a, b in zip(on.dice, off.dice, strict=True):
            if DieFlag.STACKED in b.flags and DieFlag.STACKED not in a.flags:
                truth = min(shot.truth.dice, key=lambda d: math.dist(d.center_xy, a.center_xy))
                assert DieFlag.COCKED in a.flags
                assert truth.tilt_deg >= 20
                assert not truth.stacked
                switched += 1
    assert switched >= 2
    kept = 0
    for shot in shots(320, 8, stacked=1.0):
        pad = shot.truth.pad
        on, off = read_roll(shot.image, pad=pad), read_roll(shot.image, pad=pad, params=without)
        for a, b in zip(on.dice, off.dice, strict=True):
            truth = min(shot.truth.dice, key=lambda d: math.dist(d.center_xy, a.center_xy))
            if truth.stacked and DieFlag.STACKED in b.flags:
                assert DieFlag.STACKED in a.flags
                kept += 1
    assert kept >= 5


def test_read_roll_judges_with_the_operating_points_of_its_params() -> None:
    # an install whose camera looks in at a slant raises the thresholds (DetectorParams.flags)
    strict = DetectorParams(
        flags=FlagParams(
            cocked_threshold=0.999999,
            stacked_threshold=0.999999,
            stacked_alone_threshold=0.999999,
        )
    )
    usual = strict_count = 0
    for shot in shots(105, 4, cocked=1.0, min_tilt_deg=25.0):
        plain, wary = read_roll(shot.image), read_roll(shot.image, params=strict)
        assert [(d.value, d.center_xy) for d in plain.dice] == [
            (d.value, d.center_xy) for d in wary.dice
        ]
        usual += sum(DieFlag.COCKED in d.flags for d in plain.dice)
        strict_count += sum(DieFlag.COCKED in d.flags for d in wary.dice)
    assert usual >= 6
    assert strict_count < usual  # (many a die tilted 25 degrees is past any threshold: p = 1.0)


def test_dice_on_other_dice_are_stacked() -> None:
    results = judged(102, 16, stacked=0.6)
    stacked = [e for d, e in results if d.stacked]
    assert len(stacked) >= 10
    assert sum(DieFlag.STACKED in e.flags() for e in stacked) >= STACKED_RECALL * len(stacked)
    # and the model ranks them above nearly every flat die apart
    flat = judged(100, 12)
    assert np.median([e.stacked for e in stacked]) > np.quantile([e.stacked for _, e in flat], 0.9)


def test_two_detections_of_one_die_are_not_a_stack() -> None:
    # the reader often finds a die twice (a tilted die's top and side face): closer than half a
    # side, the pair is one die, not a die on a die, and neither is the other's neighbour
    for shot in shots(106, 6):
        for d in shot.truth.dice:
            v = view_of(d)
            for du, dv, grow in ((0.3, 0.1, 1.15), (-0.2, -0.35, 0.9), (0.0, 0.0, 1.0)):
                twin = DieView(
                    (v.center_xy[0] + du * v.side_px, v.center_xy[1] + dv * v.side_px),
                    v.side_px * grow,
                    v.angle_deg,
                )
                pair = judge(shot.image, [v, twin])
                assert DieFlag.STACKED not in pair[0].flags()
                assert not any(e.touching for e in pair)
                # each is judged as if the other were not there: the pair adds no evidence
                assert pair[0] == judge(shot.image, [v])[0]
                assert pair[1] == judge(shot.image, [twin])[0]


def test_reach_is_measured_between_distinct_dice() -> None:
    frame = np.full((200, 200, 3), 90, np.uint8)
    a = DieView((100.0, 100.0), 30.0, 0.0)
    over = DieView((100.0 + 0.7 * 30, 100.0), 30.0, 0.0)  # overlapping, not the same die
    beside = DieView((100.0, 100.0 + 1.3 * 30), 30.0, 0.0)  # touching
    far = DieView((100.0, 100.0 - 3 * 30), 30.0, 0.0)
    twin = DieView((100.0 - 3 * 30 + 0.3 * 30, 100.0 - 3 * 30), 30.0, 0.0)  # far, seen twice
    ev = judge(frame, [a, over, beside, far, twin])
    assert [e.touching for e in ev] == [True, True, True, False, False]
    assert judge(frame, []) == ()


def test_reach_is_counted_in_sides_of_the_larger_die() -> None:
    """Whether two dice touch does not depend on which of them is asked: the gap is counted in
    sides of the larger, so a die read small beside a large one touches it as the large one
    touches it (1.25 sides of the large die here, 2.5 of the small one's)."""
    frame = np.full((200, 200, 3), 90, np.uint8)
    big = DieView((70.0, 100.0), 40.0, 0.0)
    small = DieView((120.0, 100.0), 20.0, 0.0)
    assert [e.touching for e in judge(frame, [big, small])] == [True, True]
    assert [e.touching for e in judge(frame, [small, big])] == [True, True]


def test_a_lone_die_needs_a_surer_verdict_to_be_stacked() -> None:
    # a die squarely on another hides it, so a stack can be one detection; but with no other
    # die in reach the model must be surer than beside one
    p = FlagParams()
    between = (p.stacked_threshold + p.stacked_alone_threshold) / 2
    touching = Evidence(cocked=0.0, stacked=between, touching=True)
    alone = Evidence(cocked=0.0, stacked=between, touching=False)
    sure = Evidence(cocked=0.0, stacked=p.stacked_alone_threshold, touching=False)
    assert touching.flags() == {DieFlag.STACKED}
    assert alone.flags() == frozenset()
    assert sure.flags() == {DieFlag.STACKED}


def test_the_detector_hook_judges_every_die_of_a_frame_in_one_pass() -> None:
    rng = np.random.default_rng(103)
    scene = synth.random_scene(rng, n_dice=3, cocked=1.0, min_tilt_deg=30.0)
    shot = synth.render(scene)
    views = [view_of(d) for d in shot.truth.dice]
    assert views
    marks = judge_all(shot.image, views)
    together = judge(shot.image, views)
    assert marks == tuple(e.flags() for e in together)
    assert any(DieFlag.COCKED in m for m in marks)
    assert all(m <= ALARMS for m in marks)
    # batched or one at a time, the verdicts are the same
    for i, v in enumerate(views):
        alone = judge(shot.image, [v, *views[:i], *views[i + 1 :]])[0]
        assert alone.touching == together[i].touching
        assert alone.cocked == pytest.approx(together[i].cocked, abs=1e-5)
        assert alone.stacked == pytest.approx(together[i].stacked, abs=1e-5)
    assert judge_all(shot.image, []) == ()


def test_the_second_view_is_taken_only_where_it_can_make_a_flag() -> None:
    # the verdicts are the mean of two mirrored views; the second is skipped for dice whose first
    # view is too low for any mean to reach a threshold or sure of a tilt, and the flags are
    # the mean's
    rng = np.random.default_rng(109)
    model = load_model()
    rows, touching = [], []
    for kinds in ({"cocked": 1.0, "min_tilt_deg": 5.0}, {"stacked": 0.6}, {}):
        for _ in range(20):
            shot = synth.render(synth.random_scene(rng, n_dice=4, **kinds), rng=rng)  # type: ignore[arg-type]
            views = [view_of(d) for d in shot.truth.dice if d.visible >= 0.5]
            near = [
                neighbours_of(v, [o for j, o in enumerate(views) if j != i])
                for i, v in enumerate(views)
            ]
            rows.append(features_all(shot.image, views, near))
            touching += [
                _nearest(v, nb) < FlagParams().stack_reach
                for v, nb in zip(views, near, strict=True)
            ]
    x = np.vstack(rows)
    assert len(x) >= 40
    first = model.predict(x)
    mean = model.predict(x, SYMMETRIES)
    looked = second_look(model, x)
    assert not np.allclose(first, mean, atol=1e-3)  # the views do disagree
    again: np.ndarray = ~np.all(np.isclose(looked, first, atol=1e-6), axis=1)
    assert 0 < again.sum() < len(x)  # some dice, not all, got a second view

    def marks(p: np.ndarray) -> list[frozenset[DieFlag]]:
        return [
            Evidence(float(c), float(s), touching=t).flags()
            for (c, s), t in zip(p, touching, strict=True)
        ]

    p = FlagParams()
    sure_tilt = first[:, 0] >= max(p.cocked_sure, p.cocked_threshold)

    def only_sure_tilts_differ(p_looked: np.ndarray, seen_again: np.ndarray) -> None:
        # the flags are the mean's, but for a die whose first view is sure of a tilt: it keeps
        # that view's COCKED whatever a second view would have said
        for i, (got, want) in enumerate(zip(marks(p_looked), marks(mean), strict=True)):
            if got != want:
                assert sure_tilt[i]
                assert not seen_again[i]
                assert DieFlag.COCKED in got - want

    only_sure_tilts_differ(looked, again)
    assert any(marks(mean))  # and some of them are flags
    assert np.allclose(looked[again], mean[again], atol=1e-5)
    sure = sure_tilt & (first[:, 1] < 2 * p.stacked_threshold - 1)
    assert sure.any()
    assert not again[sure].any()  # sure of a tilt: one look
    # knowing which dice touch another, a lone die needs the lone threshold's mean: fewer looks
    told = second_look(model, x, touching=touching)
    again_told: np.ndarray = ~np.all(np.isclose(told, first, atol=1e-6), axis=1)
    only_sure_tilts_differ(told, again_told)
    assert not (again_told & ~again).any()
    # (the model is mostly sure of a stack or of none: a touching threshold far below the lone
    # one makes the lone dice that look again only because it is unknown common enough to see)
    low = FlagParams(stacked_threshold=0.6)
    unknown = ~np.isclose(second_look(model, x, low), first, atol=1e-6).all(axis=1)
    known = ~np.isclose(second_look(model, x, low, touching), first, atol=1e-6).all(axis=1)
    assert known.sum() < unknown.sum()
    assert not (known & ~unknown).any()


def test_a_mirrored_view_is_a_symmetry() -> None:
    shot = synth.render(synth.random_scene(np.random.default_rng(6), n_dice=3, cocked=0.5))
    views = [view_of(d) for d in shot.truth.dice]
    x = features_all(shot.image, views, [[] for _ in views])
    g = N_CHANNELS * GRID * GRID
    for k in range(8):
        y = symmetry(x, k)
        assert y.shape == x.shape
        assert np.array_equal(np.sort(y[:, :g]), np.sort(x[:, :g]))  # the same pixels, moved
        assert np.array_equal(np.abs(y[:, g:]).sum(axis=1), np.abs(x[:, g:]).sum(axis=1))
    mirrored = symmetry(x, 7)
    assert not np.allclose(mirrored, x)
    assert np.array_equal(symmetry(mirrored, 7), x)  # a mirror: twice is the identity


def test_batched_cuts_are_the_one_die_cuts() -> None:
    # the fast path (dice warped into one tall image, area-reduced and converted to Lab in one
    # call each) must be exactly the per-die cut the shipped model was trained on
    rng = np.random.default_rng(11)
    shot = synth.render(synth.random_scene(rng, n_dice=6, cocked=0.3), rng=rng)
    big = 2 * GRID
    cuts = [
        (d.center_xy, d.size_px * float(rng.uniform(0.8, 1.3)), view_of(d).angle_deg + 7.0)
        for d in shot.truth.dice
    ]
    cuts.append(((3.0, 2.0), 40.0, 31.0))  # at the frame's corner: the replicated border
    one_by_one = [
        cv2.cvtColor(
            cv2.resize(
                cv2.warpAffine(
                    shot.image,
                    _matrix(*cut),
                    (big, big),
                    flags=cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_REPLICATE,
                ),
                (GRID, GRID),
                interpolation=cv2.INTER_AREA,
            ),
            cv2.COLOR_BGR2LAB,
        )
        for cut in cuts
    ]
    planar = np.stack(one_by_one).transpose(0, 3, 1, 2).astype(np.float32)
    assert np.array_equal(_cut(shot.image, cuts), planar)


def test_a_dies_features_do_not_depend_on_the_dice_judged_with_it() -> None:
    # the pixel work is batched over a frame's dice: each row is still exactly that die's alone
    rng = np.random.default_rng(12)
    for _ in range(3):
        shot = synth.render(synth.random_scene(rng, n_dice=5, cocked=0.4, stacked=0.2), rng=rng)
        views = [view_of(d) for d in shot.truth.dice]
        near = [neighbours_of(v, views[:i] + views[i + 1 :]) for i, v in enumerate(views)]
        x = features_all(shot.image, views, near)
        for v, nb, row in zip(views, near, x, strict=True):
            alone = features(shot.image, v.center_xy, v.side_px, v.angle_deg, neighbours=nb)
            assert np.array_equal(row, alone)


def test_the_networks_input_for_several_views_is_each_mirrored_row() -> None:
    g = N_CHANNELS * GRID * GRID
    x = np.random.default_rng(13).normal(size=(3, g + N_SCALARS)).astype(np.float32)
    for k in range(8):
        p = planes(x, (k,))
        assert p.shape == (3, PLANES, GRID, GRID)
        y = symmetry(x, k)
        assert np.array_equal(p[:, :N_CHANNELS].reshape(3, -1), y[:, :g])
        consts = y[:, g:][:, list(PLANE_SCALARS)]
        assert np.array_equal(
            p[:, N_CHANNELS:],
            np.broadcast_to(consts[:, :, None, None], p[:, N_CHANNELS:].shape),
        )
    both = planes(x, (0, 7))
    assert np.array_equal(both, np.concatenate([planes(x), planes(symmetry(x, 7))]))


def test_the_shipped_networks_inputs_are_each_mirrored_row_taken_apart() -> None:
    """The deployed network takes the constant planes as one number each (see ``PLANES``)."""
    g = N_CHANNELS * GRID * GRID
    x = np.random.default_rng(14).normal(size=(4, g + N_SCALARS)).astype(np.float32)
    for views in ((0,), (3,), (0, 7)):
        image, scalars = inputs(x, views)
        assert image.shape == (4 * len(views), N_CHANNELS, GRID, GRID)
        y = np.concatenate([symmetry(x, k) for k in views])
        assert np.array_equal(image.reshape(len(y), -1), y[:, :g])
        assert np.array_equal(scalars, y[:, g:][:, list(PLANE_SCALARS)])


def test_features_are_deterministic_and_sized() -> None:
    shot = synth.render(synth.random_scene(np.random.default_rng(5), n_dice=2))
    d = shot.truth.dice[0]
    v = view_of(d)
    a = features(shot.image, v.center_xy, v.side_px, v.angle_deg)
    b = features(shot.image, v.center_xy, v.side_px, v.angle_deg)
    assert a.shape == (N_CHANNELS * GRID * GRID + N_SCALARS,)
    assert np.array_equal(a, b)
    assert np.isfinite(a).all()


def test_the_size_against_the_other_dice_is_a_feature() -> None:
    # a die on a die is nearer the camera and looks larger than the dice on the pad
    frame = np.full((200, 200, 3), 90, np.uint8)
    size = SCALARS.index("size") - N_SCALARS

    def size_of(side: float, others: list[float]) -> float:
        nbs = [Neighbour((20.0 + 40 * i, 20.0), s) for i, s in enumerate(others)]
        return float(features(frame, (100.0, 100.0), side, 0.0, neighbours=nbs)[size])

    assert size_of(30.0, []) == 0.0
    assert size_of(30.0, [30.0, 30.0]) == pytest.approx(0.0)
    assert size_of(33.0, [30.0, 29.0, 31.0]) == pytest.approx(math.log(1.1), abs=1e-6)
    assert size_of(100.0, [30.0]) == 0.5  # clipped: a misread size is not a stack by itself


def test_the_patch_is_turned_to_the_die_whatever_the_readers_guess() -> None:
    # the reader's turn is often far off on dark dice (pips outweigh the outline); the patch the
    # model sees is turned to the die's own outline, and the side re-derived for that turn
    rng = np.random.default_rng(7)
    styles = [synth.STYLES[c] for c in ("black", "blue", "red", "white")]
    g2 = GRID * GRID
    alike = []
    for _ in range(4):
        shot = synth.render(synth.random_scene(rng, n_dice=3, styles=styles), rng=rng)
        for d in shot.truth.dice:
            v = view_of(d)
            t = math.radians(v.angle_deg)
            extent = v.side_px * (abs(math.cos(t)) + abs(math.sin(t)))
            for guess in (v.angle_deg + 30.0, v.angle_deg - 12.0):
                g = math.radians(guess)
                side = extent / (abs(math.cos(g)) + abs(math.sin(g)))  # as a reader derives it
                a = features(shot.image, v.center_xy, v.side_px, v.angle_deg)[:g2]
                b = features(shot.image, v.center_xy, side, guess)[:g2]
                alike.append(float(np.corrcoef(a, b)[0, 1]))
    assert len(alike) >= 20
    assert min(alike) > 0.75  # an unturned patch 30 degrees off: about 0.4
    assert np.mean(np.array(alike) > 0.9) >= 0.9


def test_thresholds_and_errors() -> None:
    ev = Evidence(cocked=0.995, stacked=0.2, touching=False)
    assert ev.flags() == {DieFlag.COCKED}
    assert ev.flags(FlagParams(cocked_threshold=0.999)) == frozenset()
    with pytest.raises(ValueError, match="focal_frac"):
        FlagParams(focal_frac=0)
    with pytest.raises(ValueError, match="cocked_threshold"):
        FlagParams(cocked_threshold=1.5)
    with pytest.raises(ValueError, match="duplicate"):
        FlagParams(duplicate=1.7, stack_reach=1.6)
    with pytest.raises(ValueError, match="stacked_alone_threshold"):
        FlagParams(stacked_threshold=0.7, stacked_alone_threshold=0.6)
    with pytest.raises(ValueError, match="cocked_sure"):
        FlagParams(cocked_sure=0.0)


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="train_flags"):
        load_model(tmp_path / "nope.npz")


def test_a_cocked_die_touching_another_leans_on_it() -> None:
    """STACKED is "on or against another die": tilt plus a die in reach is a lean on it, whatever
    the stacked head says; alone, or not tilted, it is not."""
    p = FlagParams()
    leaning = Evidence(cocked=p.cocked_threshold, stacked=0.0, touching=True)
    on_rail = Evidence(cocked=p.cocked_threshold, stacked=0.0, touching=False)
    beside = Evidence(cocked=p.cocked_threshold - 0.01, stacked=0.0, touching=True)
    assert leaning.flags() == {DieFlag.COCKED, DieFlag.STACKED}
    assert leaning.flags(FlagParams(lean_is_stack=False)) == {DieFlag.COCKED}
    assert on_rail.flags() == {DieFlag.COCKED}
    assert beside.flags() == frozenset()


def test_a_die_with_squeezed_pips_touching_another_leans_on_it() -> None:
    """COCKED by its squeezed pips is COCKED like the model's: with another die in reach the
    die leans on it, so it is STACKED as well (by the lean, at the lean's confidence)."""
    p = FlagParams()
    squeezed = Evidence(cocked=0.3, stacked=0.1, touching=True, squeezed=True)
    assert squeezed.flags(p) == {DieFlag.COCKED, DieFlag.STACKED}
    assert [(d.flag, d.cue) for d in squeezed.decisions(p)] == [
        (DieFlag.COCKED, Cue.SQUEEZE),
        (DieFlag.STACKED, Cue.LEAN),
    ]
    assert squeezed.flags(FlagParams(lean_is_stack=False)) == {DieFlag.COCKED}
    alone = Evidence(cocked=0.3, stacked=0.1, touching=False, squeezed=True)
    assert alone.flags(p) == {DieFlag.COCKED}


def test_a_learnt_size_turned_off_judges_nothing() -> None:
    """``size_ratio_learnt`` 0 turns the learnt-size cue off: a die measured against the pad's
    learnt flat size is not STACKED by it, however large it measured; the cue against the flat
    dice beside it is not affected."""
    learnt = Evidence(0.0, 0.0, touching=True, size_ratio=1.06, size_learnt=True)
    assert learnt.flags() == {DieFlag.STACKED}
    assert learnt.flags(FlagParams(size_ratio_learnt=0.0)) == frozenset()
    beside = Evidence(0.0, 0.5, touching=False, size_ratio=1.06)
    assert beside.flags(FlagParams(size_ratio_learnt=0.0)) == {DieFlag.STACKED}


def test_a_flag_confidence_is_a_probability() -> None:
    """A reading cannot say a flag is more than certain, or less than not at all."""
    cocked = frozenset({DieFlag.COCKED})
    for sure in (-0.1, 1.5):
        with pytest.raises(ValueError, match="flag confidence"):
            DieReading(
                4, (0.0, 0.0), (), 20.0, "white", 0.9, cocked, None, ((DieFlag.COCKED, sure),)
            )
    die = DieReading(4, (0.0, 0.0), (), 20.0, "white", 0.9, cocked, None, ((DieFlag.COCKED, 1.0),))
    assert die.flag_sure(DieFlag.COCKED) == 1.0


RAIL = (-126.0, 0.0)
"""Where a 17 mm die leaning 36 degrees outwards rests on the rail of a 280 mm pad (its left
edge at x = -140 mm): the spot of ``vision.synth.random_scene``'s cocked dice."""


def test_a_tilted_die_read_off_its_top_face_is_still_flagged() -> None:
    """A die leaning 36 degrees on the rail shows a big side face, and the reader centres it
    there and reads that face's value: the detection is still the tilted die, and a re-roll is
    owed. (The model once learnt such detections as flat dice and passed every one of these
    five; on bench_synth's random scenes it now flags 96-100 % of them. Not all: a 1, or a die
    turned square to the rail, can still pass, and so can a die tilted as much in the open pad,
    50 mm from the rail: there the model passes the 3 and the 5.) The networks trained mostly
    on renders centre one of the five on its top face: flagged as well."""
    pad = synth.PadStyle(size_mm=(280.0, 200.0))
    off_face = 0
    for value in (2, 3, 4, 5, 6):
        style = synth.STYLES["white"]
        spec = synth.DieSpec(value, RAIL, 25.0, 36.0, 180.0, 0.0, 17.0, style)
        shot = synth.render(synth.Scene((spec,), pad, synth.Camera(), synth.Lighting()))
        (truth,) = shot.truth.dice
        (die,) = read_roll(shot.image, pad=shot.truth.pad).dice
        off_face += math.dist(die.center_xy, truth.center_xy) >= 0.5 * truth.size_px
        assert die.flags & ALARMS
    assert off_face >= 4  # the case in point: read off its top face


def test_each_flag_is_as_sure_as_the_surest_cue_raising_it() -> None:
    """The model's flags carry its probability; a rule's flags its configured precision; a
    flag raised twice the larger of the two; a flag not raised no confidence."""
    p = FlagParams(
        squeeze_confidence=0.71,
        lean_confidence=0.72,
        size_confidence=0.73,
        size_learnt_confidence=0.74,
    )
    by_model = Evidence(cocked=0.93, stacked=0.1, touching=False)
    assert by_model.confidence(DieFlag.COCKED, p) == pytest.approx(0.93)
    assert by_model.confidence(DieFlag.STACKED, p) is None
    squeezed = Evidence(cocked=0.3, stacked=0.1, touching=False, squeezed=True)
    assert squeezed.confidence(DieFlag.COCKED, p) == pytest.approx(0.71)
    both = Evidence(cocked=0.85, stacked=0.1, touching=False, squeezed=True)
    assert both.confidence(DieFlag.COCKED, p) == pytest.approx(0.85)
    assert [(d.flag, d.cue) for d in both.decisions(p)] == [
        (DieFlag.COCKED, Cue.MODEL),
        (DieFlag.COCKED, Cue.SQUEEZE),
    ]
    leaning = Evidence(cocked=0.9, stacked=0.2, touching=True)
    assert leaning.confidence(DieFlag.STACKED, p) == pytest.approx(0.72)
    sure_stack = Evidence(cocked=0.9, stacked=0.97, touching=True)
    assert sure_stack.confidence(DieFlag.STACKED, p) == pytest.approx(0.97)
    alone = Evidence(cocked=0.0, stacked=0.999, touching=False)
    assert alone.confidence(DieFlag.STACKED, FlagParams(alone_confidence=0.7)) == 0.7
    larger = Evidence(cocked=0.0, stacked=0.5, touching=False, size_ratio=1.06)
    assert larger.confidence(DieFlag.STACKED, p) == pytest.approx(0.73)
    learnt = Evidence(0.0, 0.0, touching=True, size_ratio=1.06, size_learnt=True)
    assert learnt.confidence(DieFlag.STACKED, p) == pytest.approx(0.74)
    with pytest.raises(ValueError, match="lean_confidence"):
        FlagParams(lean_confidence=1.2)


def test_read_roll_says_how_sure_each_flag_is() -> None:
    """A reading's COCKED / STACKED carry a confidence in the reading and its JSON; a die
    flagged neither carries none, and a reading cannot claim a confidence for a flag it lacks."""
    sure: list[float] = []
    for shot in shots(105, 6, cocked=1.0, min_tilt_deg=25.0):
        for die in read_roll(shot.image).dice:
            judged = die.flags & ALARMS
            assert {f for f, _ in die.flag_confidence} == judged
            assert set(die.to_json()["flag_confidence"]) == {f.value for f in judged}
            sure += [c for _, c in die.flag_confidence]
            if DieFlag.COCKED in judged:
                assert die.flag_sure(DieFlag.COCKED) is not None
    assert len(sure) >= 5
    assert all(0.5 <= c <= 1.0 for c in sure)
    die = read_roll(shots(105, 1, cocked=1.0, min_tilt_deg=25.0)[0].image).dice[0]
    with pytest.raises(ValueError, match="flag confidence"):
        replace(die, flags=frozenset(), flag_confidence=((DieFlag.COCKED, 0.9),))


def test_the_cues_raise_exactly_the_flags_the_rules_state() -> None:
    """``Evidence.flags`` (read off ``decisions``) against the rules as the module states them,
    on every combination of a grid of probabilities (thresholds, their edges, NaN), neighbours,
    sizes, a learnt size and squeezed pips, under several operating points; and every flag
    raised has a confidence in [0, 1]."""

    def stated(e: Evidence, p: FlagParams) -> frozenset[DieFlag]:
        cocked = e.cocked >= p.cocked_threshold or e.squeezed
        stacked = (
            (e.touching and e.stacked >= p.stacked_threshold)
            or (e.alone_stack(p) and not e.squeezed)
            or (p.lean_is_stack and e.touching and cocked)
            or e.larger(p)
        )
        return frozenset({DieFlag.COCKED} if cocked else set()) | (
            {DieFlag.STACKED} if stacked else set()
        )

    probs = [0.0, 0.05, 0.3, 0.79, 0.8, 0.95, 0.99, 1.0, float("nan")]
    ratios = [None, 1.0, 1.03, 1.035, 1.06, 1.2, float("nan")]
    points = [
        FlagParams(),
        FlagParams(lean_is_stack=False),
        FlagParams(size_ratio=0.0, size_ratio_learnt=0.0),
        FlagParams(size_gate=0.0),
    ]
    n = 0
    for p in points:
        for c, st, touching, r, learnt, squeezed in itertools.product(
            probs, probs, (False, True), ratios, (False, True), (False, True)
        ):
            e = Evidence(
                c, st, touching=touching, size_ratio=r, size_learnt=learnt, squeezed=squeezed
            )
            flagged = e.flags(p)
            assert flagged == stated(e, p), (e, p)
            for flag in flagged:
                sure = e.confidence(flag, p)
                assert sure is not None, (e, flag)
                assert 0.0 <= sure <= 1.0, (e, flag, sure)
            n += 1
    assert n == 4 * 9 * 9 * 2 * 7 * 2 * 2


def test_a_reading_names_each_judged_flag_once_and_never_rounds_up_to_certain() -> None:
    cocked = frozenset({DieFlag.COCKED, DieFlag.OFF_PAD})
    base = DieReading(4, (0.0, 0.0), (), 20.0, "white", 0.9, cocked)
    for bad in (
        ((DieFlag.COCKED, 0.6), (DieFlag.COCKED, 0.1)),  # named twice
        ((DieFlag.OFF_PAD, 1.0),),  # measured, not judged
        ((DieFlag.STACKED, 0.9),),  # not carried
    ):
        with pytest.raises(ValueError, match="flag confidence"):
            replace(base, flag_confidence=bad)
    near = replace(base, flag_confidence=((DieFlag.COCKED, 0.9996),))
    assert near.to_json()["flag_confidence"] == {"cocked": 0.999}
    sure = replace(base, flag_confidence=((DieFlag.COCKED, 1.0),))
    assert sure.to_json()["flag_confidence"] == {"cocked": 1.0}
