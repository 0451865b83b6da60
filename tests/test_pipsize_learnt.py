"""The pad's learnt flat die size: learnt from settled rolls, and judging dice by it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np
import pytest
from pipsize_rig import on_top_scene as _on_top_scene
from settled_rolls import LOOK, flat_roll

from vision import synth
from vision.detect import read_roll
from vision.flags import DieView, Evidence, FlagParams
from vision.flags.size import size_cues
from vision.params import DetectorParams
from vision.pipsize import face_size
from vision.reading import DieFlag, DieReading, FaceSize, Pad


def by_value(dice: Iterable[DieReading]) -> dict[int, DieReading]:
    """The dice by their values: each must be read (a None among the values fails here)."""
    out: dict[int, DieReading] = {}
    for d in dice:
        assert d.value is not None, d
        out[d.value] = d
    return out


def test_only_flat_dice_measured_well_teach_the_pad_its_size() -> None:
    """The pad learns a flat die's size from settled rolls: a flagged die (on a die it looks
    larger, tilted smaller) and a face whose pips did not lay out squarely must not enter it,
    even when the flags measured them already (``DieReading.face``)."""
    from vision.pipsize import flat_samples

    pad = Pad(((100.0, 80.0), (540.0, 80.0), (540.0, 400.0), (100.0, 400.0)))
    blank = np.zeros((480, 640, 3), np.uint8)  # nothing to measure again: only .face counts
    face = FaceSize(40.0, (320.0, 240.0), 0.0, True)
    flat = DieReading(4, (320.0, 240.0), (), 40.0, "white", 0.9, face=face)
    assert flat_samples(blank, [flat], pad) == [pytest.approx(40.0)]
    stacked = dataclasses.replace(flat, flags=frozenset({DieFlag.STACKED}))
    skewed = dataclasses.replace(flat, face=dataclasses.replace(face, consistent=False))
    assert flat_samples(blank, [stacked, skewed], pad) == []


def flat_roll_samples() -> list[float]:
    """The flat dice of one settled roll of five white 16 mm dice, measured and carried to the
    pad's centre, as the pad service collects them."""
    from vision.pipsize import flat_samples

    shot = flat_roll()
    reading = read_roll(shot.image, pad=shot.truth.pad)
    samples = flat_samples(shot.image, reading.dice, shot.truth.pad)
    assert len(samples) == 5
    truth = shot.truth.dice[0].size_px  # the camera looks straight down: all alike
    assert all(abs(s / truth - 1) < 0.025 for s in samples)
    return samples


def test_a_learnt_side_needs_enough_samples_that_agree() -> None:
    from vision.pipsize import learned_side

    assert learned_side([40.0] * 7) is None  # too few
    assert learned_side([40.0, 40.2, 39.9, 40.1] * 2) == pytest.approx(40.05)
    assert learned_side([40.0] * 9 + [45.0]) == pytest.approx(40.0)  # an outlier in ten
    assert learned_side([40.0] * 6 + [42.0] * 6) is None  # another set of dice came in


def test_a_die_carried_to_the_pads_centre_and_back_keeps_its_size() -> None:
    from vision.pipsize import at_centre, flat_side_at

    slant = Pad(((100.0, 120.0), (540.0, 120.0), (600.0, 420.0), (40.0, 420.0)))  # a trapezoid
    near, far = (320.0, 400.0), (320.0, 140.0)
    assert at_centre(slant, near, 30.0) < 30.0 < at_centre(slant, far, 30.0)  # type: ignore[operator]
    side = at_centre(slant, near, 30.0)
    learnt = dataclasses.replace(slant, flat_side_px=side)
    assert flat_side_at(learnt, near) == pytest.approx(30.0)
    assert flat_side_at(slant, near) is None  # nothing learnt
    with pytest.raises(ValueError, match="flat_side_px"):
        Pad(slant.polygon, flat_side_px=0.0)


@pytest.mark.parametrize(
    "value",
    [
        2,
        *(
            pytest.param(
                v,
                marks=pytest.mark.xfail(
                    strict=True,
                    reason="known gap since the 8-bit networks: the locator sizes this die 1.5 %"
                    " smaller, over a face it already sizes 1.4x large, and its pips' fit and"
                    " moment then disagree past pipsize._AGREE: the face is not measured, so"
                    " the learnt size cannot judge it (the 32-bit locator's size let it; the"
                    " locator trained 9000 steps does for a 5)",
                ),
            )
            for v in (4,)
        ),
        5,
    ],
)
def test_a_lone_die_on_another_is_told_by_the_pads_learnt_flat_size(value: int) -> None:
    """The die below is hidden (the top die sits squarely on it, turned alike) and no flat die
    lies beside: the model alone passes it; the flat size the pad learnt from earlier rolls
    shows it one die nearer. A lone flat die is not flagged by the same size. (Turned 15
    degrees from the die below, whose corners then show, the model alone catches a 2 and a 6;
    a 6 here is not measured, so not compared, nor flagged.)"""
    from vision.pipsize import learned_side

    side = learned_side(flat_roll_samples() * 2)
    assert side is not None
    style = synth.STYLES["white"]
    for yaw in (15.0, 40.0):  # a lone flat die: not flagged by the learnt size
        flat = synth.DieSpec(value, (21.0, 9.0), yaw, 0.0, 0.0, 0.0, 16.0, style)
        lone = synth.render(synth.Scene((flat,), **LOOK))
        pad = dataclasses.replace(lone.truth.pad, flat_side_px=side)
        (die,) = read_roll(lone.image, pad=pad).dice
        assert not die.flags
    below = synth.DieSpec(1, (20.0, 10.0), 0.0, 0.0, 0.0, 0.0, 16.0, style)
    on_top = synth.DieSpec(value, (20.0, 10.0), 0.0, 1.0, 0.0, 16.0, 16.0, style, on_die=0)
    shot = synth.render(synth.Scene((below, on_top), **LOOK))
    pad = shot.truth.pad
    (alone,) = read_roll(shot.image, pad=pad).dice
    (learnt,) = read_roll(shot.image, pad=dataclasses.replace(pad, flat_side_px=side)).dice
    assert not alone.flags & {DieFlag.STACKED, DieFlag.COCKED}  # the model alone: passed
    assert DieFlag.STACKED in learnt.flags


@pytest.mark.xfail(
    strict=True,
    reason="known gap since the networks trained mostly on renders (session 21): the locator"
    " misses the 2 on a die beside another, and the flags model flags the flat 3 beside the"
    " 5; a flags model retrained on the 9000-step locator's geometry (2026-11-28) does too",
)
def test_a_die_on_a_die_beside_another_is_told_by_the_learnt_size_alone() -> None:
    """A die squarely on another, touching a flat die: the model passes it and, touching, the
    dice of the frame are not compared (a die beside another is the model's to judge). The
    pad's learnt flat size needs no neighbour: measured against it, the die is one die nearer
    (``FlagParams.size_ratio_learnt``), and the flat die beside it is not flagged."""
    from vision.pipsize import learned_side

    side = learned_side(flat_roll_samples() * 2)
    assert side is not None
    style = synth.STYLES["white"]
    without = DetectorParams(flags=FlagParams(size_ratio_learnt=0.0))
    for value in (2, 5):
        below = synth.DieSpec(1, (20.0, 10.0), 0.0, 0.0, 0.0, 0.0, 16.0, style)
        on_top = synth.DieSpec(value, (20.0, 10.0), 30.0, 1.0, 0.0, 16.0, 16.0, style, on_die=0)
        beside = synth.DieSpec(3, (38.0, 12.0), 5.0, 0.0, 0.0, 0.0, 16.0, style)
        shot = synth.render(synth.Scene((below, on_top, beside), **LOOK))
        pad = dataclasses.replace(shot.truth.pad, flat_side_px=side)
        for params, caught in ((DetectorParams(), True), (without, False)):
            dice = by_value(read_roll(shot.image, pad=pad, params=params).dice)
            assert sorted(dice) == sorted((value, 3))
            assert (DieFlag.STACKED in dice[value].flags) is caught
            assert not dice[3].flags


def test_a_new_larger_set_of_dice_is_not_taken_for_stacks() -> None:
    """The bar brings out dice 6 % larger than the size the pad learnt: every one of them
    measures as large as a die on a die. No flat die of the frame bears the learnt size out,
    so it judges no die on its own (the pad service then learns the new size)."""
    from vision.pipsize import learned_side

    side = learned_side(flat_roll_samples() * 2)
    assert side is not None
    big = flat_roll(17.0)
    pad = dataclasses.replace(big.truth.pad, flat_side_px=side)
    dice = read_roll(big.image, pad=pad).dice
    assert len(dice) == 5
    larger = FlagParams().size_ratio_learnt
    assert all(d.face is not None and d.face.side_px > larger * side for d in dice)
    assert not any(d.flags for d in dice)


def test_the_pad_service_reuses_the_sizes_the_flags_measured() -> None:
    """With a learnt flat size the flags measure every flat die's pips; the reading keeps
    those measurements, so the flat dice of a settled roll are not measured twice (here: the
    samples come out the same from a blank frame)."""
    from vision.pipsize import flat_samples, learned_side

    shot = flat_roll()
    pad = shot.truth.pad
    first = read_roll(shot.image, pad=pad)
    assert all(d.face is None for d in first.dice)  # nothing to compare with: nothing measured
    side = learned_side(flat_samples(shot.image, first.dice, pad) * 2)
    assert side is not None
    reading = read_roll(shot.image, pad=dataclasses.replace(pad, flat_side_px=side))
    assert all(d.face is not None and d.face.consistent for d in reading.dice)
    blank = np.zeros_like(shot.image)
    assert flat_samples(blank, reading.dice, pad) == flat_samples(shot.image, first.dice, pad)
    assert flat_samples(blank, first.dice, pad) == []


def test_a_die_on_a_die_falls_back_on_the_learnt_size_when_no_flat_die_measures_well() -> None:
    """One flat die lies beside the die on a die, but its pips cannot be measured against the
    layout it was read as (here a 4 read as 6): there is no flat die to compare with, so the
    flat size the pad learnt from earlier rolls speaks instead; without one, nothing does."""
    from vision.pipsize import flat_samples, learned_side

    shot = _on_top_scene(flat=1)
    pad = shot.truth.pad
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    unsure = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=False) for d in seen]
    i = next(k for k, d in enumerate(seen) if d.stacked)
    (flat,) = [d for d in read_roll(shot.image, pad=pad).dice if d.value == 4]
    side = learned_side(flat_samples(shot.image, [flat], pad) * 8)  # earlier rolls, same dice
    assert side is not None
    learnt = dataclasses.replace(pad, flat_side_px=side)
    right = [d.value for d in seen]
    misread = [6 if k != i else d.value for k, d in enumerate(seen)]
    (_, by_flat_die) = size_cues(shot.image, views, right, unsure, pad=pad)
    assert by_flat_die is not None
    assert by_flat_die[1] is False  # measured against the flat die when it can be
    assert size_cues(shot.image, views, misread, unsure, pad=pad)[i] is None
    cue = size_cues(shot.image, views, misread, unsure, pad=learnt)[i]
    assert cue is not None
    assert cue[1] is True
    assert cue[0] > FlagParams().size_ratio
    assert cue[0] == pytest.approx(by_flat_die[0], abs=0.01)


def _lone_flat_die() -> tuple[synth.SceneImage, DieView, FaceSize]:
    """One flat white 4 on the pad of ``LOOK``, seen as the reader would, and its measured face."""
    style = synth.STYLES["white"]
    spec = synth.DieSpec(4, (30.0, -20.0), 15.0, 0.0, 0.0, 0.0, 16.0, style)
    shot = synth.render(synth.Scene((spec,), **LOOK))
    (truth,) = shot.truth.dice
    view = DieView(truth.center_xy, truth.size_px, 0.0)
    face = face_size(shot.image, view.center_xy, view.side_px, 4)
    assert face is not None
    assert face.consistent
    return shot, view, face


def test_the_learnt_size_judges_a_lone_die_only_on_the_pad_and_not_against_the_model() -> None:
    """A lone die 6 % over the pad's learnt flat size, with no other die measured to bear the
    size out: the size alone judges it only if the model gives it some chance of a stack
    (``FlagParams.size_gate_learnt``: a stale size would flag every die of a new, larger set
    one by one), and a die off the pad is not measured (it is re-rolled as it is)."""
    from vision.pipsize import at_centre

    shot, view, face = _lone_flat_die()
    pad = shot.truth.pad
    side = at_centre(pad, face.center_xy, face.side_px)
    assert side is not None
    learnt = dataclasses.replace(pad, flat_side_px=side / 1.06)
    gate = FlagParams().size_gate_learnt

    def cue(stacked: float, on: Pad) -> tuple[float, bool] | None:
        (c,) = size_cues(shot.image, [view], [4], [Evidence(0.0, stacked, touching=False)], pad=on)
        return c

    some_chance = cue(2 * gate, learnt)
    assert some_chance is not None
    assert some_chance[1] is True
    assert some_chance[0] == pytest.approx(1.06, abs=0.005)
    assert cue(gate / 2, learnt) is None  # the model rules a stack out: the size alone does not
    xs = [x for x, _ in pad.polygon]
    shift = max(xs) - min(xs) + 3 * face.side_px  # the same pad, moved clear of the die
    off = dataclasses.replace(learnt, polygon=tuple((x + shift, y) for x, y in pad.polygon))
    assert not off.contains(view.center_xy)
    assert cue(2 * gate, off) is None


def test_a_die_within_the_off_pad_margin_is_measured_as_on_the_pad() -> None:
    """A die whose centre lies just past the pad's edge but within the reader's off-pad margin
    is not OFF_PAD, so the learnt size judges it like any die on the pad (``judge``'s
    ``pad_margin_px``, which ``read_roll`` sets to ``DetectorParams.off_pad_margin_px``)."""
    from vision.pipsize import at_centre

    shot, view, face = _lone_flat_die()
    (cx, cy), r = view.center_xy, 300.0
    edge = cx - 3.0  # the die's centre is 3 px past the pad's right edge
    square = Pad(((edge - r, cy - r), (edge, cy - r), (edge, cy + r), (edge - r, cy + r)))
    side = at_centre(square, face.center_xy, face.side_px)
    assert side is not None
    pad = dataclasses.replace(square, flat_side_px=side / 1.06)
    assert not pad.contains(view.center_xy)

    def cue(margin: float) -> tuple[float, bool] | None:
        lone = [Evidence(0.0, 0.1, touching=False)]  # a stack not ruled out, under size_gate
        (c,) = size_cues(shot.image, [view], [4], lone, pad=pad, pad_margin_px=margin)
        return c

    assert cue(0.0) is None
    within = cue(5.0)
    assert within is not None
    assert within[1] is True
    assert within[0] == pytest.approx(1.06, abs=0.005)


def test_a_die_touching_another_is_measured_against_the_learnt_size_not_its_neighbours() -> None:
    """A die beside another is the model's to judge against the dice around it, so the size
    cue does not compare it with them (a neighbour may itself be misjudged); once the pad has
    learnt the flat size it is measured against that (``size_learnt``), like every die flagged
    neither."""
    from vision.pipsize import at_centre, learned_side

    shot = _on_top_scene(flat=2)
    pad = shot.truth.pad
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    values = [d.value for d in seen]
    i = next(k for k, d in enumerate(seen) if d.stacked)
    flat = [
        face_size(shot.image, v.center_xy, v.side_px, d.value)
        for v, d in zip(views, seen, strict=True)
    ]
    samples = [
        at_centre(pad, f.center_xy, f.side_px)
        for k, f in enumerate(flat)
        if k != i and f is not None and f.consistent
    ]
    side = learned_side([s for s in samples if s is not None] * 4)
    assert side is not None
    learnt = dataclasses.replace(pad, flat_side_px=side)
    touching = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=True) for d in seen]
    cues = size_cues(shot.image, views, values, touching, pad=learnt)
    on_top = cues[i]
    assert on_top is not None
    assert on_top[1] is True  # against the learnt size
    assert on_top[0] > FlagParams().size_ratio_learnt
    assert size_cues(shot.image, views, values, touching, pad=pad) == [None] * len(seen)
