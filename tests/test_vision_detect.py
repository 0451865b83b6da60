"""``read_roll`` on scenes drawn with known truth: values, geometry, colour, flags, bad input."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from vision_drawing import draw_die, table

from vision.detect import read_roll
from vision.params import DetectorParams
from vision.reading import DieFlag, Pad, Reading

Scene = tuple[np.ndarray, list[tuple[tuple[float, float], int]]]


def _scene(body: tuple[int, int, int], pip: tuple[int, int, int], side: float) -> Scene:
    """Six dice, one of each value, turned variously, on a 640 x 480 table."""
    img = table(640, 480, (70, 110, 60))
    truth = []
    for i, value in enumerate((3, 6, 1, 5, 2, 4)):
        center = (90.0 + 90 * i, 140.0 + 200 * (i % 2))
        draw_die(img, center, side, value, angle_deg=17 * i - 30, body=body, pip=pip)
        truth.append((center, value))
    return img, truth


def _values_by_position(
    reading: Reading, truth: list[tuple[tuple[float, float], int]]
) -> list[int | None]:
    out = []
    for (tx, ty), _ in truth:
        near = [
            d for d in reading.dice if math.hypot(d.center_xy[0] - tx, d.center_xy[1] - ty) < 15
        ]
        out.append(near[0].value if len(near) == 1 else None)
    return out


SCENES = [
    ((235, 235, 235), (20, 20, 20), 44, "white"),
    ((30, 30, 30), (240, 240, 240), 52, "black"),
    ((40, 40, 200), (245, 245, 245), 40, "red"),
]


@pytest.mark.parametrize(("body", "pip", "side", "colour"), SCENES)
def test_reads_every_drawn_die(
    body: tuple[int, int, int], pip: tuple[int, int, int], side: float, colour: str
) -> None:
    img, truth = _scene(body, pip, side)
    reading = read_roll(img)
    assert _values_by_position(reading, truth) == [v for _, v in truth]
    assert reading.frame_size == (640, 480)
    for die in reading.dice:
        assert die.colour == colour
        assert len(die.corners_xy) == 4
        assert 0.0 <= die.confidence <= 1.0
        assert DieFlag.UNREADABLE not in die.flags
        assert DieFlag.OFF_PAD not in die.flags


@pytest.mark.parametrize(("body", "pip", "side", "colour"), SCENES)
def test_nothing_extra_on_drawn_scenes(
    body: tuple[int, int, int], pip: tuple[int, int, int], side: float, colour: str
) -> None:
    img, truth = _scene(body, pip, side)
    reading = read_roll(img)
    assert len(reading.dice) == len(truth)


@pytest.mark.parametrize(("body", "pip", "side", "colour"), SCENES)
def test_size_of_drawn_dice(
    body: tuple[int, int, int], pip: tuple[int, int, int], side: float, colour: str
) -> None:
    img, _ = _scene(body, pip, side)
    for die in read_roll(img).dice:
        assert die.size_px == pytest.approx(side, rel=0.3)


def test_the_locator_shown_dice_at_its_trained_size_measures_them_right() -> None:
    """The white dice of 44 px: a fixed camera that knows its dice's size (``die_px``) shows
    them to the locator at the size it was trained at -- another scale than the first look's
    320 px, so other sizes -- and every die is sized within 30 %, as at 320 px. (Read on its
    own, the photo's dice are within the locator's trained range, so
    ``locator_rescale_tolerance`` spares it the second look. The locator trained 3000 steps
    sized one of these dice 36 % over at 320 px.) The locator's size sets the cuts the value
    network and pips read."""
    img, _ = _scene(*SCENES[0][:3])
    first = read_roll(img)
    assert first.located_die_px is not None
    assert all(0.7 < d.size_px / 44 < 1.3 for d in first.dice)
    fixed = read_roll(img, die_px=first.located_die_px)
    assert len(fixed.dice) == 6
    assert all(0.7 < d.size_px / 44 < 1.3 for d in fixed.dice)
    assert [d.size_px for d in fixed.dice] != [d.size_px for d in first.dice]
    unscaled = read_roll(
        img, die_px=first.located_die_px, params=DetectorParams(locator_rescale=False)
    )
    assert [d.to_json() for d in unscaled.dice] == [d.to_json() for d in first.dice]


def test_empty_table_has_no_dice() -> None:
    reading = read_roll(table(640, 480, (70, 110, 60)))
    assert reading.dice == ()
    assert reading.clean


def test_grey_and_bgra_frames_are_accepted() -> None:
    img, truth = _scene((235, 235, 235), (20, 20, 20), 44)
    grey = img.mean(axis=2).astype(np.uint8)
    assert len(read_roll(grey).dice) == len(truth)
    bgra = np.dstack([img, np.full(img.shape[:2], 255, np.uint8)])
    assert len(read_roll(bgra).dice) == len(truth)


def test_off_pad_dice_are_flagged() -> None:
    img, truth = _scene((235, 235, 235), (20, 20, 20), 44)
    pad = Pad(((0.0, 0.0), (300.0, 0.0), (300.0, 480.0), (0.0, 480.0)))
    reading = read_roll(img, pad=pad)
    off = {d.value for d in reading.flagged(DieFlag.OFF_PAD)}
    on = {d.value for d in reading.dice if DieFlag.OFF_PAD not in d.flags}
    assert on == {v for (x, _), v in truth if x < 300}
    assert off == {v for (x, _), v in truth if x >= 300}
    assert reading.values == tuple(sorted(v for v in on if v is not None))  # (all are, above)


def test_unsure_values_are_unreadable_not_guessed() -> None:
    img, _ = _scene((235, 235, 235), (20, 20, 20), 44)
    reading = read_roll(
        img, params=DetectorParams(min_value_confidence=1.0, agreed_value_confidence=1.0)
    )
    assert reading.dice
    for die in reading.dice:
        assert die.value is None
        assert DieFlag.UNREADABLE in die.flags
    assert reading.values == ()


def test_measured_flags_carry_no_confidence() -> None:
    """Only the judged flags (COCKED, STACKED) say how sure they are: OFF_PAD and UNREADABLE
    are measured (the pad's outline, the value's confidence), so a die carrying only those
    carries no flag confidence, in the reading or its JSON."""
    img, _ = _scene((235, 235, 235), (20, 20, 20), 44)
    pad = Pad(((0.0, 0.0), (300.0, 0.0), (300.0, 480.0), (0.0, 480.0)))
    reading = read_roll(
        img, pad=pad, params=DetectorParams(min_value_confidence=1.0, agreed_value_confidence=1.0)
    )
    assert reading.flagged(DieFlag.OFF_PAD)
    for die in reading.dice:
        assert DieFlag.UNREADABLE in die.flags
        assert die.flag_confidence == ()
        assert die.flag_sure(DieFlag.OFF_PAD) is None
        assert die.to_json()["flag_confidence"] == {}


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        (np.zeros((480, 640, 3), np.float32), ValueError),
        (np.zeros((480, 640, 2), np.uint8), ValueError),
        (np.zeros((4, 4, 3), np.uint8), ValueError),
        ([[0, 0], [0, 0]], TypeError),
    ],
)
def test_bad_frames_raise_clear_errors(frame: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        read_roll(frame)  # type: ignore[arg-type]


def test_params_are_validated() -> None:
    with pytest.raises(ValueError, match="peak_threshold"):
        DetectorParams(peak_threshold=1.5)
    with pytest.raises(ValueError, match="locator_long_side_px"):
        DetectorParams(locator_long_side_px=10)


def test_missing_model_folder_is_a_clear_error(tmp_path: object) -> None:
    img, _ = _scene((235, 235, 235), (20, 20, 20), 44)
    with pytest.raises(FileNotFoundError, match=r"locator\.onnx"):
        read_roll(img, params=DetectorParams(models_dir=str(tmp_path)))


def test_more_views_read_the_same_values() -> None:
    img, truth = _scene((235, 235, 235), (20, 20, 20), 44)
    reading = read_roll(img, params=DetectorParams(value_views=4))
    assert _values_by_position(reading, truth) == [v for _, v in truth]
    with pytest.raises(ValueError, match="value_views"):
        DetectorParams(value_views=3)
    with pytest.raises(ValueError, match="relook_views"):
        DetectorParams(relook_views=3)


def test_a_second_peak_on_a_pip_of_a_two_is_not_a_die() -> None:
    """The locator can put a second, weaker peak on a pip of a 2; cut out alone that pip is a
    clean 1. It is dropped; a 1 a side away, a 1 stronger than the 2, and a 1 inside a 4 (a
    cocked 1 whose side face is the stronger detection) are kept."""
    from vision.classify import ValueGuess
    from vision.detect import DieGeometry, _without_pips_of_other_dice
    from vision.locate import Candidate

    def die(value: int, xy: tuple[float, float], score: float, side: float = 40.0) -> DieGeometry:
        patch = np.zeros((32, 32, 3), np.uint8)
        corners = ((0.0, 0.0),) * 4
        guess = ValueGuess(value, 0.95, 0.01)
        return DieGeometry(Candidate(xy, 1.3 * side, score), patch, 0.0, side, corners, guess)

    two = die(2, (100.0, 100.0), 0.7)
    pip = die(1, (112.0, 88.0), 0.4)  # 0.42 sides from the 2's centre
    beside = die(1, (145.0, 100.0), 0.4)  # 1.1 sides away: another die
    stronger = die(1, (112.0, 88.0), 0.9)
    assert _without_pips_of_other_dice([two, pip, beside], 0.6) == [two, beside]
    # the reach is in the 2's sides: a peak on its pip is boxed pip-sized, not die-sized
    small = die(1, (112.0, 88.0), 0.4, side=12.0)
    assert _without_pips_of_other_dice([two, small], 0.6) == [two]
    assert _without_pips_of_other_dice([two, stronger], 0.6) == [two, stronger]
    assert _without_pips_of_other_dice([two, pip], 0.0) == [two, pip]
    four = die(4, (100.0, 100.0), 0.7)
    assert _without_pips_of_other_dice([four, pip], 0.6) == [four, pip]
    with pytest.raises(ValueError, match="pip_reach"):
        DetectorParams(pip_reach=1.0)


def test_a_strong_peak_tolerates_a_hesitant_value_network() -> None:
    """Where the locator is sure of a die centre the value network's "not a die" must be
    higher to drop it: strong peaks, ordinary and faint ones each have their own limit."""
    p = DetectorParams(
        peak_threshold=0.3,
        faint_peak_not_die=0.05,
        reject_not_die=0.25,
        strong_peak_threshold=0.6,
        strong_peak_not_die=0.4,
    )
    assert p.not_die_limit(0.2) == 0.05
    assert p.not_die_limit(0.3) == p.not_die_limit(0.59) == 0.25
    assert p.not_die_limit(0.6) == p.not_die_limit(0.99) == 0.4
    assert DetectorParams(strong_peak_threshold=1.0).not_die_limit(0.99) == 0.25  # off
    # never stricter than an ordinary peak
    assert DetectorParams(strong_peak_not_die=0.1).not_die_limit(0.9) == 0.25
    with pytest.raises(ValueError, match="strong_peak_not_die"):
        DetectorParams(strong_peak_not_die=1.5)


def test_a_peak_sure_enough_is_kept_as_a_die_the_network_does_not_know() -> None:
    """Past ``unknown_peak`` a candidate the value network would drop is a die it does not
    know (asked about); below it, or within the network's limit, it is not one."""
    p = DetectorParams(strong_peak_threshold=0.6, strong_peak_not_die=0.4, unknown_peak=0.8)
    assert p.unknown(0.8, 0.41)
    assert p.unknown(0.99, 0.99)
    assert not p.unknown(0.79, 0.99)  # a weaker peak the network rejects is dropped
    assert not p.unknown(0.9, 0.4)  # within the limit: a die like any other
    assert not DetectorParams(unknown_peak=1.0).unknown(1.0, 0.9)  # off
    with pytest.raises(ValueError, match="unknown_peak"):
        DetectorParams(unknown_peak=-0.1)


def test_a_die_the_locator_is_sure_of_is_read_though_the_value_network_hesitates() -> None:
    """A die showing 1 on a rendered table (a wide scene: any die look, surface and light): the
    locator is sure of it, the value network's first look hesitates over "not a die" (a lone
    pip is what a die's pip taken for a die looks like too). The strong peak keeps it, and the
    looks after read it a sure 1; without the rule it is lost. (The real nellbyler_d6 die this
    test read before, the value network on ImageNet's Lite0 no longer hesitates over.)"""
    from vision import synth

    rng = np.random.default_rng(394)  # found by a search over seeds, as 326 was before
    shot = synth.render_wide(synth.wide_scene(rng, size=(640, 480)), size=(640, 480), rng=rng)
    ones = [t for t in shot.truth.dice if t.value == 1 and t.visible > 0.9]

    def read_there(params: DetectorParams) -> list[list[int | None]]:
        """The values read within 0.4 sides of each 1 of the table."""
        reading = read_roll(shot.image, params=params)
        return [
            [d.value for d in reading.dice if math.dist(d.center_xy, t.center_xy) < 0.4 * t.size_px]
            for t in ones
        ]

    # the scale it was found at; no die kept as one the network does not know, which would
    # keep this die too (``unknown_peak``)
    alone = DetectorParams(locator_rescale=False, unknown_peak=1.0)
    kept = read_there(alone)
    lost = read_there(replace(alone, strong_peak_threshold=1.0))
    rescued = [i for i, (k, gone) in enumerate(zip(kept, lost, strict=True)) if k != gone]
    assert len(rescued) == 1
    assert (kept[rescued[0]], lost[rescued[0]]) == ([1], [])
