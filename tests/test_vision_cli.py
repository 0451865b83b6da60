"""``dicepad detect``: JSON lines, readable lines, annotation files, bad images."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from vision_drawing import draw_die, table

from server.cli import main
from vision.annotate import contact_sheet
from vision.synth import SceneImage


@pytest.fixture(scope="module")
def photo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    img = table(640, 480, (70, 110, 60))
    for i, value in enumerate((2, 5, 6)):
        draw_die(img, (150.0 + 170 * i, 240.0), 46, value, angle_deg=20 * i)
    path = tmp_path_factory.mktemp("photos") / "roll.png"
    cv2.imwrite(str(path), img)
    return path


def test_json_line_per_image(photo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--json", str(photo), str(photo)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    obj = json.loads(lines[0])
    assert obj["image"] == str(photo)
    assert isinstance(obj["ms"], float)
    assert sorted(d["value"] for d in obj["dice"]) == [2, 5, 6]
    for die in obj["dice"]:
        assert set(die) == {
            "value",
            "center",
            "size",
            "colour",
            "confidence",
            "flags",
            "flag_confidence",
            "candidates",
            "why",
        }
        assert die["why"] in {"agreed", "sure", "house"}  # read, and said how
        assert die["flag_confidence"] == {}
        assert die["colour"] == "white"
        assert die["flags"] == []


def test_readable_line(photo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", str(photo)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{photo}: 2 5 6  (3 dice, ")


def test_bad_images_fail_at_the_end_and_the_rest_are_read(
    photo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not a jpeg")
    code = main(["detect", "--json", str(tmp_path / "missing.jpg"), str(junk), str(photo)])
    assert code == 1
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert [line.get("error") for line in lines] == ["no such file", "not a readable image", None]
    assert len(lines[2]["dice"]) == 3
    assert "junk.jpg: not a readable image" in captured.err
    assert "2 of 3 image(s) failed" in captured.err


def test_annotate_writes_outlined_copies(
    photo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ann"
    assert main(["detect", "--annotate", str(out), str(photo)]) == 0
    written = cv2.imread(str(out / "roll.png"))
    original = cv2.imread(str(photo))
    assert written is not None
    assert original is not None
    assert written.shape == original.shape
    changed = (cv2.absdiff(written, original).max(axis=2) > 40).sum()
    assert changed > 3 * 4 * 40  # three outlines at least
    capsys.readouterr()


def test_a_contact_sheet_lays_tiles_in_rows_and_pads_the_last() -> None:
    tiles = [np.full((4, 5, 3), k * 20, np.uint8) for k in range(1, 6)]
    sheet = contact_sheet(tiles, cols=2)
    assert sheet.shape == (12, 10, 3)  # three rows of two
    assert sheet[0, 5, 0] == 40  # in reading order
    assert sheet[4, 0, 0] == 60
    assert not sheet[8:, 5:].any()  # the missing sixth tile is black
    with pytest.raises(ValueError, match="at least one tile"):
        contact_sheet([])


def leaning_die(tmp_path: Path) -> tuple[Path, SceneImage]:
    """A white 2 tilted 20 degrees 20 mm in from the rail, which the model finds tilted but
    not beyond doubt: the overhead operating points flag it COCKED, the slanted ones (0.99)
    do not (with the Pi's bookworm pins too)."""
    from vision import synth

    pad = synth.PadStyle(size_mm=(280.0, 200.0))
    spec = synth.DieSpec(2, (-120.0, 0.0), 25.0, 20.0, 180.0, 0.0, 17.0, synth.STYLES["white"])
    shot = synth.render(synth.Scene((spec,), pad, synth.Camera(), synth.Lighting()))
    path = tmp_path / "leaning.png"
    cv2.imwrite(str(path), shot.image)
    return path, shot


def test_the_camera_view_picks_the_flags_operating_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from server.config import Config
    from server.pad.reading import vision_reader
    from vision.params import CAMERA_VIEWS, flags_for_view

    path, shot = leaning_die(tmp_path)
    flags = {}
    for view in ("overhead", "slanted"):
        assert main(["detect", "--json", "--view", view, str(path)]) == 0
        (die,) = json.loads(capsys.readouterr().out)["dice"]
        flags[view] = set(die["flags"]) - {"unreadable"}  # a leaning die may be asked about
        (read,) = vision_reader(view=view)(shot.image, None).dice
        assert {f.value for f in read.flags} - {"unreadable"} == flags[view]
    assert flags["overhead"] == {"cocked"}
    assert flags["slanted"] == set()
    assert flags_for_view("slanted") is CAMERA_VIEWS["slanted"]
    with pytest.raises(ValueError, match="overhead, slanted"):
        vision_reader(view="sideways")
    env = {"DICEPAD_CAMERA_VIEW": "slanted", "DICEPAD_DATA": str(tmp_path)}
    assert Config.from_environ(environ=env).camera_view == "slanted"
    assert Config.from_environ(environ=env, camera_view="overhead").camera_view == "overhead"
    assert Config.from_environ(environ={"DICEPAD_DATA": str(tmp_path)}).camera_view == "overhead"
    with pytest.raises(ValueError, match="unknown camera view 'sideways'"):
        Config.from_environ(environ={**env, "DICEPAD_CAMERA_VIEW": "sideways"})


def test_a_fixed_cameras_die_size_reads_the_dice_at_that_scale(
    photo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--die-px``: every photo from one camera whose dice are that size across. The dice of
    the drawn photo are read as before; a size of nothing is refused before any photo is read."""
    assert main(["detect", "--json", "--die-px", "60", str(photo)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert sorted(d["value"] for d in json.loads(line)["dice"]) == [2, 5, 6]
    assert main(["detect", "--die-px", "0", str(photo)]) == 2
    assert "--die-px" in capsys.readouterr().err
