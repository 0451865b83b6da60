"""The flat die's size, learnt by the pad service from the flat dice of settled rolls, kept
beside pad.json, and forgotten for other dice or a recalibrated pad."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from pad_rig import (
    Rig,
    fixture_rigs,  # noqa: F401 (the rigs fixture)
)

from server.pad.reading import vision_reader
from server.pad.service import PadService
from vision.reading import Pad, Reading

# -- the flat die's size, learnt from settled rolls ---------------------------------------


def recording_reader(pads: list[Pad | None]) -> Callable[[np.ndarray, Pad | None], Reading]:
    """The real reader, noting in ``pads`` the pad it is handed for each throw."""
    real = vision_reader()

    def reader(image: np.ndarray, pad: Pad | None) -> Reading:
        pads.append(pad)
        return real(image, pad)

    return reader


def test_the_flat_dice_of_settled_rolls_teach_the_pad_their_size(
    rigs: Callable[..., Rig], tmp_path: Path
) -> None:
    """Each settled throw's flat dice are measured; once enough agree, the reader gets the pad
    with that size (a lone die on another is then told by its size); other dice, or
    recalibrating the pad, make it forget the size."""
    from settled_rolls import flat_roll

    from hardware.frames import Frame
    from vision.pad import save_pad

    rig = rigs([])
    shot = flat_roll()
    size = (shot.image.shape[1], shot.image.shape[0])
    pad_file = tmp_path / "pad.json"
    save_pad(shot.truth.pad, pad_file, frame_size=size)
    pads: list[Pad | None] = []
    svc = PadService(rig.tables, None, reader=recording_reader(pads), pad_file=pad_file)
    frame = Frame(shot.image, 0.0, 0)
    for _ in range(3):
        svc._read(frame)
    assert [p is not None and p.flat_side_px is not None for p in pads] == [False, False, True]
    assert pads[2] is not None
    assert pads[2].flat_side_px == pytest.approx(shot.truth.dice[0].size_px, rel=0.02)
    # the bar brings out a set of dice 6 % larger: its first roll makes the old size forgotten
    big = flat_roll(17.0)
    for _ in range(3):
        svc._read(Frame(big.image, 1.0, 1))
    learnt = [p.flat_side_px if p is not None else None for p in pads[3:]]
    assert learnt[0] == pytest.approx(shot.truth.dice[0].size_px, rel=0.02)  # judged by the old
    assert learnt[1] is None  # forgotten; five of the new dice are not yet enough
    assert learnt[2] == pytest.approx(big.truth.dice[0].size_px, rel=0.02)
    assert svc.status_json()["flat_die_px"] == pytest.approx(big.truth.dice[0].size_px, rel=0.02)
    save_pad(shot.truth.pad, pad_file, frame_size=size)  # recalibrated: forget the size
    os.utime(pad_file, (time.time() + 5, time.time() + 5))
    svc._read(frame)
    assert pads[6] is not None
    assert pads[6].flat_side_px is None
    assert svc.status_json()["flat_die_px"] is None


def test_the_flat_size_file_is_written_when_it_matters_not_every_roll(
    rigs: Callable[..., Rig], tmp_path: Path
) -> None:
    """An SD card wears with every write: the samples are written when the learnt size is new,
    gone or moved, and otherwise every FLAT_RESAVE_ROLLS rolls; a set of other dice is written
    at once, so a restart never judges them by the old size."""
    from settled_rolls import flat_roll

    from hardware.frames import Frame
    from server.flat_store import FLAT_FILE
    from server.pad.status import FLAT_RESAVE_ROLLS
    from vision.pad import save_pad

    rig = rigs([])
    shot = flat_roll()
    size = (shot.image.shape[1], shot.image.shape[0])
    pad_file = tmp_path / "pad.json"
    save_pad(shot.truth.pad, pad_file, frame_size=size)
    flat_file = tmp_path / FLAT_FILE
    svc = PadService(rig.tables, None, reader=vision_reader(), pad_file=pad_file)
    writes: list[int] = []
    last = None
    for k in range(1, 2 * FLAT_RESAVE_ROLLS + 3):
        svc._read(Frame(shot.image, 0.0, k))
        stat = flat_file.stat() if flat_file.is_file() else None  # written: a new file
        seen = None if stat is None else (stat.st_ino, stat.st_mtime_ns)
        if seen != last:
            writes.append(k)
            last = seen
    learnt = svc.status_json()["flat_die_px"]
    assert learnt is not None
    first = writes[0]  # the roll whose samples made the size known
    assert writes == [first, first + FLAT_RESAVE_ROLLS, first + 2 * FLAT_RESAVE_ROLLS]
    # a set of dice 10 % larger: the old size is forgotten, and so is the file's
    svc._read(Frame(flat_roll(die_mm=17.6).image, 0.0, 99))
    assert svc.status_json()["flat_die_px"] is None
    assert min(json.loads(flat_file.read_text(encoding="utf-8"))["samples"]) > 1.05 * learnt
    pads: list[Pad | None] = []
    restarted = PadService(rig.tables, None, reader=recording_reader(pads), pad_file=pad_file)
    restarted._read(Frame(shot.image, 0.0, 0))
    assert pads[0] is not None
    assert pads[0].flat_side_px is None


def test_the_learnt_flat_size_outlives_a_restart(
    rigs: Callable[..., Rig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The samples are kept beside pad.json: a restarted service judges its first throw by the
    size already learnt, for the same calibration and frame size only; a damaged file is
    reported and ignored."""
    from settled_rolls import flat_roll

    from hardware.frames import Frame
    from server.flat_store import FLAT_FILE
    from vision.pad import save_pad

    rig = rigs([])
    shot = flat_roll()
    size = (shot.image.shape[1], shot.image.shape[0])
    pad_file = tmp_path / "pad.json"
    save_pad(shot.truth.pad, pad_file, frame_size=size)
    frame = Frame(shot.image, 0.0, 0)
    first = PadService(rig.tables, None, reader=vision_reader(), pad_file=pad_file)
    for _ in range(2):
        first._read(frame)
    learnt = first.status_json()["flat_die_px"]
    assert learnt == pytest.approx(shot.truth.dice[0].size_px, rel=0.02)
    assert (tmp_path / FLAT_FILE).is_file()

    def restarted() -> list[Pad | None]:
        pads: list[Pad | None] = []
        svc = PadService(rig.tables, None, reader=recording_reader(pads), pad_file=pad_file)
        svc._read(frame)
        return pads

    (pad,) = restarted()
    assert pad is not None
    assert pad.flat_side_px == pytest.approx(learnt, abs=0.01)  # no roll needed
    # a frame of another size (another camera mode): nothing to reuse
    half = cast(npt.NDArray[np.uint8], cv2.resize(shot.image, (size[0] // 2, size[1] // 2)))
    svc = PadService(rig.tables, None, reader=vision_reader(), pad_file=pad_file)
    svc._read(Frame(half, 0.0, 0))
    assert svc.status_json()["flat_die_px"] is None
    # damaged: reported, ignored, and replaced by the next measurements
    (tmp_path / FLAT_FILE).write_text('{"pad_mtime": "soon", "samples": [-1]}', encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        (pad,) = restarted()
    assert pad is not None
    assert pad.flat_side_px is None
    assert "damaged" in caplog.text
    # recalibrated: the old samples belong to another pad
    for _ in range(2):
        first._read(frame)
    save_pad(shot.truth.pad, pad_file, frame_size=size)
    os.utime(pad_file, (time.time() + 5, time.time() + 5))
    (pad,) = restarted()
    assert pad is not None
    assert pad.flat_side_px is None
