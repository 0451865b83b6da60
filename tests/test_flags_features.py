"""The flag model's inputs: batched judging, second looks, symmetries, cuts and features."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from flags_rig import ALARMS, view_of

from vision import synth
from vision.flags import Evidence, FlagParams, judge, load_model
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
from vision.reading import DieFlag


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
