"""The top face's size from its pips: precise enough to tell a die on a die (4-8 % larger)
from the flat dice beside it, from the reader's rough centre and size."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any, cast

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from settled_rolls import LOOK, flat_roll
from vision_drawing import draw_die, table

from vision import synth
from vision.detect import read_roll
from vision.flags import DieView, Evidence, FlagParams
from vision.flags.size import size_cues
from vision.params import DetectorParams
from vision.pipsize import face_size, size_ratio, square_on, symmetry_centre
from vision.reading import DieFlag, DieReading, FaceSize, Pad


def size_ratios(*args: Any, **kwargs: Any) -> list[float | None]:
    """The ratios of ``size_cues`` (leaving out whether each was against a learnt size)."""
    return [None if c is None else c[0] for c in size_cues(*args, **kwargs)]


NO_SIZE = DetectorParams(flags=FlagParams(size_ratio=0.0))


def by_value(dice: Iterable[DieReading]) -> dict[int, DieReading]:
    """The dice by their values: each must be read (a None among the values fails here)."""
    out: dict[int, DieReading] = {}
    for d in dice:
        assert d.value is not None, d
        out[d.value] = d
    return out


def drawn(value: int, side: float, angle: float, **colours: tuple[int, int, int]) -> np.ndarray:
    img = table(200, 200)
    draw_die(img, (100.0, 100.0), side, value, angle_deg=angle, **colours)
    return img


@pytest.mark.parametrize("value", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("angle", [0.0, 17.0, 38.0])
def test_two_sizes_of_a_face_compare_to_a_percent(value: int, angle: float) -> None:
    """The same face drawn 5 % larger measures 5 % larger (+-1 %), from a located centre off by
    a tenth of a side and a located size 20 % out -- what the reader gives."""
    sizes = []
    for side, wrong in ((40.0, 1.2), (42.0, 0.85)):
        img = drawn(value, side, angle)
        m = face_size(img, (100.0 + 0.1 * side, 100.0 - 0.07 * side), side * wrong, value)
        assert m is not None
        assert m.consistent
        assert math.dist(m.center_xy, (100.0, 100.0)) < 0.03 * side
        sizes.append(m.side_px)
    assert sizes[1] / sizes[0] == pytest.approx(42.0 / 40.0, abs=0.01)
    # drawn pips sit 0.27 sides out, the standard layout's 0.26: the absolute size is ~4 % over
    assert sizes[0] == pytest.approx(40.0, rel=0.06)


def test_light_pips_on_a_dark_die_measure_alike() -> None:
    dark = drawn(5, 40.0, 10.0, body=(30, 30, 30), pip=(240, 240, 240))
    light = drawn(5, 40.0, 10.0)
    a = face_size(dark, (103.0, 98.0), 46.0, 5)
    b = face_size(light, (103.0, 98.0), 46.0, 5)
    assert a is not None
    assert b is not None
    assert a.side_px == pytest.approx(b.side_px, rel=0.015)


def test_a_one_an_unread_die_and_an_empty_patch_have_no_size() -> None:
    img = drawn(1, 40.0, 0.0)
    assert face_size(img, (100.0, 100.0), 40.0, 1) is None
    assert face_size(drawn(4, 40.0, 0.0), (100.0, 100.0), 40.0, None) is None
    assert face_size(np.full((200, 200, 3), 128, np.uint8), (100.0, 100.0), 40.0, 4) is None


def test_the_centre_of_symmetry_is_the_face_centre() -> None:
    img = drawn(6, 44.0, 25.0)
    cx, cy = symmetry_centre(img, (112.0, 95.0), 50.0)
    assert math.dist((cx, cy), (100.0, 100.0)) < 1.0


def test_a_foreshortened_face_is_not_consistent() -> None:
    """A tilted die's face is squeezed one way: measured, but not to be compared."""
    img = drawn(4, 40.0, 0.0)
    squeezed = cv2.resize(img, (200, 170), interpolation=cv2.INTER_AREA)  # 15 % shorter
    squeezed = cv2.copyMakeBorder(squeezed, 15, 15, 0, 0, cv2.BORDER_REPLICATE)
    m = face_size(cast(npt.NDArray[np.uint8], squeezed), (100.0, 100.0), 40.0, 4)
    assert m is not None
    assert not m.consistent
    flat = face_size(img, (100.0, 100.0), 40.0, 4)
    assert flat is not None
    assert flat.consistent


def test_size_ratio_compares_with_consistent_references_that_agree() -> None:
    def fs(side: float, ok: bool = True) -> FaceSize:
        return FaceSize(side, (0.0, 0.0), 0.0, ok)

    assert size_ratio(fs(42.0), [fs(40.0), fs(40.4), fs(40.8)], agree=0.03) == 42 / 40.4
    assert size_ratio(fs(42.0), [fs(40.0), fs(50.0, ok=False), None], agree=0.03) == 42 / 40
    assert size_ratio(fs(42.0), [fs(40.0), fs(41.6)], agree=0.03) is None  # a slant, or not flat
    assert size_ratio(fs(42.0), [fs(40.0)], agree=0.03, at_least=2) is None
    assert size_ratio(fs(42.0, ok=False), [fs(40.0)], agree=0.03) is None
    assert size_ratio(None, [fs(40.0)], agree=0.03) is None
    assert size_ratio(fs(42.0), [None, fs(40.0, ok=False)], agree=0.03) is None


def test_a_pad_seen_square_on_is_a_parallelogram() -> None:
    """From above, a rectangular pad stays a rectangle (turned or not); from a slant its far
    edge is shorter, and a die there looks smaller."""
    assert square_on(Pad(((100.0, 80.0), (540.0, 80.0), (540.0, 400.0), (100.0, 400.0))))
    turned = [
        (320 + 200 * math.cos(a) - 150 * math.sin(a), 240 + 200 * math.sin(a) + 150 * math.cos(a))
        for a in (0.3, 0.3 + math.pi / 2, 0.3 + math.pi, 0.3 + 3 * math.pi / 2)
    ]
    assert square_on(Pad(tuple(turned)))
    assert not square_on(Pad(((160.0, 80.0), (480.0, 80.0), (560.0, 400.0), (80.0, 400.0))))
    assert not square_on(None)
    assert not square_on(Pad(((0.0, 0.0), (10.0, 0.0), (5.0, 9.0))))  # not a quadrilateral


def test_a_slight_slant_is_not_square_on() -> None:
    """A far edge about 5 % shorter than the near one makes a die at a far corner look 7 %
    smaller than at a near one -- as much as a die on a die -- so the pad is not square on; an
    outline a pixel off a rectangle is."""
    assert not square_on(Pad(((110.0, 80.0), (530.0, 80.0), (540.0, 400.0), (100.0, 400.0))))
    assert square_on(Pad(((101.0, 80.0), (539.0, 80.0), (540.0, 400.0), (100.0, 400.0))))


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


FLAT = (
    (4, (-60.0, -35.0), 10.0),
    (5, (55.0, -40.0), 33.0),
    (6, (-50.0, 40.0), 5.0),
    (2, (60.0, 35.0), 70.0),
)


def _on_top_scene(flat: int = 4) -> synth.SceneImage:
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


def test_a_die_on_a_die_looks_larger_than_the_flat_dice() -> None:
    shot = _on_top_scene()
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    sizes = [face_size(shot.image, d.center_xy, d.size_px * 1.1, d.value) for d in seen]
    flat = [m.side_px for m, d in zip(sizes, seen, strict=False) if m is not None and not d.stacked]
    top = [m.side_px for m, d in zip(sizes, seen, strict=False) if m is not None and d.stacked]
    assert len(flat) == 4
    assert len(top) == 1
    assert max(flat) / min(flat) < 1.02
    assert top[0] / float(np.median(flat)) > 1.05  # truly 1.070; FlagParams.size_ratio 1.03


def test_the_size_cue_flags_a_die_the_model_leaves_unsure() -> None:
    """``size_ratios`` measures the gated die against the unflagged ones (the pad shows the
    camera square on); the flag needs both the size and the model's gate, and
    ``size_ratio=0`` turns the cue off."""
    shot = _on_top_scene()
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    unsure = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=False) for d in seen]
    ratios = size_ratios(shot.image, views, [d.value for d in seen], unsure, pad=shot.truth.pad)
    i = next(k for k, d in enumerate(seen) if d.stacked)
    ratio = ratios[i]
    assert ratio is not None
    assert ratio > FlagParams().size_ratio
    assert all(r is None for k, r in enumerate(ratios) if k != i)  # only the gated die measured
    e = Evidence(0.0, 0.5, touching=False, size_ratio=ratio)
    assert DieFlag.STACKED in e.flags()
    assert DieFlag.STACKED not in e.flags(FlagParams(size_ratio=0.0))
    assert DieFlag.STACKED not in Evidence(0.0, 0.2, touching=False, size_ratio=ratios[i]).flags()
    assert DieFlag.STACKED not in Evidence(0.0, 0.5, touching=False, size_ratio=1.01).flags()
    assert (
        DieFlag.STACKED not in Evidence(0.0, 0.5, touching=False, size_ratio=1.25).flags()
    )  # see larger


def test_size_cue_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="size_ratio"):
        FlagParams(size_ratio=0.99)
    with pytest.raises(ValueError, match="size_ratio_max"):
        FlagParams(size_ratio_max=1.02)
    with pytest.raises(ValueError, match="size_gate"):
        FlagParams(size_gate=1.0)
    with pytest.raises(ValueError, match="size_agree"):
        FlagParams(size_agree=0.0)
    with pytest.raises(ValueError, match="size_refs"):
        FlagParams(size_refs=0)
    # the learnt size's ratio lies between the neighbours' ratio and the misjudged-die limit
    with pytest.raises(ValueError, match="size_ratio_learnt"):
        FlagParams(size_ratio_learnt=1.01)
    with pytest.raises(ValueError, match="size_ratio_learnt"):
        FlagParams(size_ratio_learnt=1.2)
    assert FlagParams(size_ratio_learnt=0.0).size_ratio_learnt == 0.0
    with pytest.raises(ValueError, match="squeeze"):
        FlagParams(squeeze=0.5)
    with pytest.raises(ValueError, match="squeeze_gate"):
        FlagParams(squeeze_gate=1.0)
    assert FlagParams(size_ratio=0.0).size_ratio == 0.0


def test_one_flat_die_to_compare_with_is_enough_only_with_the_camera_square_on() -> None:
    """A slanted camera's perspective cannot be told from a stack: the flat dice beside a die
    are compared with only when the pad shows the camera square above it (the renders'
    overhead camera does), or when asked for (``references``, ``FlagParams.size_refs``)."""
    shot = _on_top_scene(flat=1)
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    assert len(seen) == 2
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    unsure = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=False) for d in seen]
    values = [d.value for d in seen]
    i = next(k for k, d in enumerate(seen) if d.stacked)
    assert size_ratios(shot.image, views, values, unsure)[i] is None
    one = size_ratios(shot.image, views, values, unsure, references=1)[i]
    assert one is not None
    assert one > FlagParams().size_ratio
    assert square_on(shot.truth.pad)


def test_at_a_slant_the_flat_dice_beside_a_die_are_not_compared_with_by_default() -> None:
    """Two flat dice that agree in size can both lie farther from a slanted camera than the
    die compared with them: with no pad showing the camera square on, only an install that
    asks for it (``FlagParams.size_refs``) compares them (on the slanted photo sets the cue
    flagged 6 dice, none of them on a die)."""
    shot = _on_top_scene(flat=2)
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    unsure = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=False) for d in seen]
    values = [d.value for d in seen]
    i = next(k for k, d in enumerate(seen) if d.stacked)
    assert size_ratios(shot.image, views, values, unsure)[i] is None
    asked = size_ratios(shot.image, views, values, unsure, FlagParams(size_refs=2))[i]
    assert asked is not None
    assert size_ratios(shot.image, views, values, unsure, pad=shot.truth.pad)[i] == asked


def test_read_roll_flags_the_die_on_a_die_by_its_size() -> None:
    """End to end: the die squarely on another is STACKED through the size cue (the model
    alone leaves it unflagged), nothing else is; with one flat die to compare with, only a
    pad seen square on lets the cue speak."""

    def stacked(shot: synth.SceneImage, **kw: Any) -> list[int | None]:
        reading = read_roll(shot.image, **kw)
        return [d.value for d in reading.dice if DieFlag.STACKED in d.flags]

    shot = _on_top_scene(flat=2)
    assert stacked(shot, pad=shot.truth.pad) == [5]
    assert stacked(shot, pad=shot.truth.pad, params=NO_SIZE) == []
    lone = _on_top_scene(flat=1)
    assert stacked(lone, pad=lone.truth.pad) == [5]
    assert stacked(lone) == []  # no pad: the camera may be at a slant


# --------------------------------------------------------------------------- a learnt flat size


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
                    " the learnt size cannot judge it (the 32-bit locator's size let it)",
                ),
            )
            for v in (4, 5)
        ),
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
    " misses the 2 on a die beside another, and the flags model, trained on the earlier"
    " locator's geometry, flags the flat 3 beside the 5; retrain it (bench/train_flags.py)",
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
