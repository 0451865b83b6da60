"""The locator shown dice at the size it was trained at: its trained size in the model file, the
scale a frame is read at, and a fixed camera's memory of its dice's size."""

from __future__ import annotations

import numpy as np
import pytest
from vision_drawing import draw_die, table

from vision.detect import read_roll
from vision.locate import (
    Candidate,
    DieSizeMemory,
    located_die_px,
    rescaled,
    scaled_long_side,
)
from vision.nets import (
    LOCATOR_FILE,
    MODELS_DIR,
    TRAINED_DIE_PX,
    ModelDamagedError,
    Nets,
    load_nets,
    read_onnx,
)
from vision.params import DetectorParams


def test_the_shipped_locator_says_the_size_it_was_trained_at() -> None:
    size = load_nets().trained_die_px
    assert size is not None
    assert 15.0 < size < 35.0


def test_a_locator_file_that_does_not_say_is_read_at_the_fixed_size() -> None:
    """An older locator file, without the size in its metadata (or with nonsense there): no
    trained size, so ``read_roll`` looks once at ``locator_long_side_px`` as with the rescale
    off; a size that is no number is a damaged model."""
    shipped = load_nets()
    locator = read_onnx(MODELS_DIR / LOCATOR_FILE)
    nets = Nets(locator=locator, value=shipped.value)
    assert nets.trained_die_px == shipped.trained_die_px
    locator.metadata = {}
    assert nets.trained_die_px is None
    locator.metadata = {TRAINED_DIE_PX: "1e9"}
    assert nets.trained_die_px is None
    locator.metadata = {TRAINED_DIE_PX: "big"}
    with pytest.raises(ModelDamagedError, match=TRAINED_DIE_PX):
        _ = nets.trained_die_px


def test_the_frame_is_scaled_so_dice_come_out_at_the_trained_size() -> None:
    assert scaled_long_side((480, 640, 3), 60.0, 24.0, (160, 960)) == 256
    assert scaled_long_side((640, 640), 30.0, 24.0, (160, 960)) == 512
    assert scaled_long_side((3024, 4032), 20.0, 24.0, (160, 960)) == 960  # bounded
    assert scaled_long_side((480, 640), 400.0, 24.0, (160, 960)) == 160
    assert scaled_long_side((480, 640), 45.0, 24.0, (160, 960)) % 8 == 0
    assert not rescaled(320, 336, 0.1)
    assert rescaled(320, 256, 0.1)
    assert rescaled(320, 360, 0.1)


def test_the_dice_size_is_the_median_of_the_sure_peaks() -> None:
    def c(size: float, score: float) -> Candidate:
        return Candidate((0.0, 0.0), size, score)

    found = [c(30, 0.9), c(34, 0.8), c(90, 0.7), c(8, 0.35), c(5, 0.25)]
    assert located_die_px(found, strong=0.6, weak=0.3) == 34.0
    assert located_die_px([c(8, 0.35), c(12, 0.4)], strong=0.6, weak=0.3) == 10.0
    assert located_die_px([c(8, 0.25)], strong=0.6, weak=0.3) is None


def test_a_size_given_reads_as_the_size_measured_does() -> None:
    """``die_px`` saves the first look: given what the first look of a frame measures, the
    reading is the same, and says it was scaled for that size."""
    img = table(640, 480, (70, 110, 60))
    for i, value in enumerate((3, 4, 1, 6)):
        draw_die(img, (110.0 + 140 * i, 200.0 + 60 * (i % 2)), 84.0, value, angle_deg=12.0 * i)
    auto = read_roll(img)
    assert auto.located_die_px is not None
    given = read_roll(img, die_px=auto.located_die_px)
    assert given.located_die_px == auto.located_die_px
    assert [d.to_json() for d in given.dice] == [d.to_json() for d in auto.dice]
    assert [d.value for d in sorted(auto.dice, key=lambda d: d.center_xy[0])] == [3, 4, 1, 6]
    for bad in (0.0, -3.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="die_px"):
            read_roll(img, die_px=bad)


def test_bad_scale_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="locator sides"):
        DetectorParams(locator_min_side_px=500, locator_max_side_px=400)
    with pytest.raises(ValueError, match="locator_rescale_tolerance"):
        DetectorParams(locator_rescale_tolerance=1.5)


def test_a_fixed_camera_learns_its_dice_size_and_measures_again_now_and_then() -> None:
    memory = DieSizeMemory(keep=5, every=4, need=2)
    shape = (480, 640, 3)
    asked = []
    for measured in (40.0, 44.0, 42.0, 41.0, 43.0, 45.0, 60.0, 61.0, 62.0):
        given = memory.die_px(shape)
        asked.append(given)
        memory.learn(given, measured if given is None else given)
    # two reads measure, then it is given the median; every 4th read measures again
    assert asked[:2] == [None, None]
    assert asked[2] == 42.0
    assert asked[3] is None
    assert asked[7] is None
    # a read given the size echoes it: never learnt, so the median moves only on measurements
    assert asked[4] == pytest.approx(float(np.median([40.0, 44.0, 41.0])))
    assert memory.die_px((720, 1280, 3)) is None  # another frame size starts afresh
    with pytest.raises(ValueError, match="keep"):
        DieSizeMemory(keep=2, need=3)
