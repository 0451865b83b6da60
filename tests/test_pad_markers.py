"""Corner markers (:mod:`vision.markers`): the pad framed by four printed markers on rendered
tables whatever way the camera is turned, where the colour finder fails too; a covered or
repeated marker named; none in view falls back to the colour finder; the printed sheet decodes;
``dicepad markers`` writes it; ``dicepad calibrate`` uses them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from hardware.clock import ManualClock
from hardware.demo import DemoSource
from hardware.files import FilesSource
from server.cli import main
from server.cli.calibrate import CalibrationError, calibrate
from vision import synth
from vision.markers import (
    DICTIONARY,
    PadMarkersError,
    detect_markers,
    find_pad_markers,
    marker_sheet,
)
from vision.pad import PadNotFoundError, find_pad, polygon_iou
from vision.reading import Pad
from vision.synth import Camera, Degrade, DieSpec, Lighting, PadStyle, Scene

MARKER_MM = 30.0
TOLERANCE_PX = 2.0  # a true pad corner to the found one
PAD = PadStyle(size_mm=(180.0, 120.0), markers_mm=MARKER_MM)  # with its markers, in view
CAMERA = Camera(height_mm=450.0)
WOOD = (60, 90, 130)  # the renderer's default table
CLEAN = Degrade()
BLUR = Degrade(blur_sigma=1.0, noise_sigma=5.0, jpeg_quality=60)
SLANT = np.array([[0.9, 0.12, 30.0], [-0.05, 1.0, 10.0], [4e-4, 3e-4, 1.0]])
"""A homography standing in for a camera looking in at a slant (the renderer's looks down)."""


def shot_of(pad: PadStyle = PAD, degrade: Degrade = CLEAN) -> synth.SceneImage:
    scene = Scene(
        dice=(DieSpec(4, (10.0, 5.0)),),
        pad=pad,
        camera=CAMERA,
        lighting=Lighting(gradient=0.2),
        degrade=degrade,
    )
    return synth.render(scene)


def corner_errors(found: Pad, truth: Pad) -> list[float]:
    """Distance from each true corner to the found corner nearest it (each found corner the
    nearest of exactly one: no corner left out or counted twice)."""
    f, t = np.array(found.polygon), np.array(truth.polygon)
    assert f.shape == t.shape == (4, 2)
    dist = np.linalg.norm(f[:, None] - t[None], axis=2)
    nearest = dist.argmin(axis=0)
    assert sorted(nearest) == [0, 1, 2, 3]
    return [float(dist[nearest[k], k]) for k in range(4)]


def assert_simple_quad(pad: Pad) -> None:
    poly = np.array(pad.polygon, np.float32)
    assert len(poly) == 4
    assert cv2.isContourConvex(poly)


def covered(image: npt.NDArray[np.uint8], *ids: int) -> npt.NDArray[np.uint8]:
    """``image`` with a table-coloured patch over each marker in ``ids`` (a beer mat on it)."""
    out = image.copy()
    markers = detect_markers(image)
    for i in ids:
        quad = markers[i]
        grown = quad.mean(axis=0) + 1.6 * (quad - quad.mean(axis=0))
        cv2.fillConvexPoly(out, np.round(grown).astype(np.int32), WOOD)
    return out


@pytest.mark.parametrize(
    ("angle_deg", "centre_mm", "degrade"),
    [
        (0.0, (0.0, 0.0), CLEAN),
        (17.0, (10.0, -8.0), BLUR),
        (-35.0, (0.0, 0.0), CLEAN),
        (90.0, (-12.0, 6.0), BLUR),
        (160.0, (15.0, 10.0), CLEAN),
    ],
)
def test_the_markers_frame_the_true_pad_whatever_the_turn(
    angle_deg: float, centre_mm: tuple[float, float], degrade: Degrade
) -> None:
    shot = shot_of(replace(PAD, angle_deg=angle_deg, centre_mm=centre_mm), degrade)
    pad = find_pad_markers(shot.image)
    assert pad is not None
    assert_simple_quad(pad)
    assert max(corner_errors(pad, shot.truth.pad)) < TOLERANCE_PX


def test_the_markers_frame_the_pad_seen_at_a_slant() -> None:
    shot = shot_of(replace(PAD, angle_deg=25.0))
    w, h = shot.truth.frame_size
    image = cast(
        npt.NDArray[np.uint8],
        cv2.warpPerspective(shot.image, SLANT, (w, h), flags=cv2.INTER_LINEAR),
    )
    truth = cv2.perspectiveTransform(np.array([shot.truth.pad.polygon]), SLANT)[0]
    pad = find_pad_markers(image)
    assert pad is not None
    assert_simple_quad(pad)
    assert max(corner_errors(pad, Pad(tuple(map(tuple, truth))))) < TOLERANCE_PX


def test_a_pad_the_colour_of_the_table_is_found_by_its_markers_only() -> None:
    shot = shot_of(replace(PAD, angle_deg=8.0, colour=WOOD, rail_colour=WOOD, table_colour=WOOD))
    try:
        by_colour: Pad | None = find_pad(shot.image)
    except PadNotFoundError:
        by_colour = None
    assert by_colour is None or polygon_iou(by_colour, shot.truth.pad) < 0.5
    pad = find_pad_markers(shot.image)
    assert pad is not None
    assert max(corner_errors(pad, shot.truth.pad)) < TOLERANCE_PX


def test_a_covered_marker_is_named() -> None:
    image = shot_of().image
    with pytest.raises(
        PadMarkersError, match=r"^marker 2 \(bottom-right\) not found: is it covered or out of view"
    ):
        find_pad_markers(covered(image, 2))
    with pytest.raises(
        PadMarkersError, match=r"^markers 0 \(top-left\) and 3 \(bottom-left\) not found: are they"
    ):
        find_pad_markers(covered(image, 0, 3))
    assert issubclass(PadMarkersError, PadNotFoundError)


def test_a_marker_seen_twice_is_an_error() -> None:
    sheet = cv2.resize(marker_sheet(), None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    with pytest.raises(PadMarkersError, match=r"3 \(bottom-left\) seen more than once"):
        find_pad_markers(np.hstack([sheet, sheet]))


@pytest.mark.parametrize("angle_deg", [90.0, 160.0, -35.0])
def test_the_polygon_runs_clockwise_from_marker_0s_corner(angle_deg: float) -> None:
    """The pad keeps its own corners whichever way the camera is turned, as
    ``find_pad_markers`` promises: the polygon starts at marker 0's corner and runs clockwise on
    screen through markers 1, 2 and 3 (the corner errors above do not look at the order)."""
    shot = shot_of(replace(PAD, angle_deg=angle_deg))
    pad = find_pad_markers(shot.image)
    assert pad is not None
    centres = {i: c.mean(axis=0) for i, c in detect_markers(shot.image).items()}
    for k, corner in enumerate(pad.polygon):
        assert min(centres, key=lambda i: float(np.linalg.norm(centres[i] - corner))) == k
    xs, ys = np.array(pad.polygon).T
    assert float(np.dot(xs, np.roll(ys, -1)) - np.dot(ys, np.roll(xs, -1))) > 0  # y down


def test_other_markers_of_the_dictionary_are_ignored() -> None:
    """A marker of the same dictionary that is no corner marker (a spare sheet's neighbour, a
    game's own tag) lying on the table changes nothing: only ids 0-3 frame the pad."""
    shot = shot_of()
    image = shot.image.copy()
    stray = cv2.aruco.generateImageMarker(
        cv2.aruco.getPredefinedDictionary(DICTIONARY), 7, 42, borderBits=1
    )
    card = np.full((58, 58), 255, np.uint8)
    card[8:50, 8:50] = stray
    image[31:89, 291:349] = card[:, :, None]  # on the table above the pad, between markers
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    _, ids, _ = cv2.aruco.ArucoDetector(dictionary).detectMarkers(image)
    assert 7 in ids.ravel()  # in view, and decoded
    assert sorted(detect_markers(image)) == [0, 1, 2, 3]
    pad = find_pad_markers(image)
    assert pad is not None
    assert max(corner_errors(pad, shot.truth.pad)) < TOLERANCE_PX


def test_no_markers_in_view_is_none() -> None:
    shot = shot_of(replace(PAD, markers_mm=0.0))
    assert find_pad_markers(shot.image) is None


def test_markers_change_only_the_table_around_the_corners() -> None:
    with_markers, without = shot_of(), shot_of(replace(PAD, markers_mm=0.0))
    assert not np.array_equal(with_markers.image, without.image)  # not a cached background
    pad_px = np.round(np.array(without.truth.pad.polygon)).astype(np.int32)
    inside = np.zeros(without.image.shape[:2], np.uint8)
    cv2.fillConvexPoly(inside, pad_px, 1)
    # the cards touch the pad's corners
    inside = cast(npt.NDArray[np.uint8], cv2.erode(inside, np.ones((5, 5), np.uint8)))
    assert np.array_equal(with_markers.image[inside > 0], without.image[inside > 0])


@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_the_printed_sheet_decodes(scale: float) -> None:
    sheet = marker_sheet(marker_mm=MARKER_MM)
    assert sheet.shape == (3508, 2480)  # A4 at 300 dpi
    photo = cast(
        npt.NDArray[np.uint8],
        cv2.resize(sheet, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA),
    )
    assert sorted(detect_markers(photo)) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="does not fit on A4"):
        marker_sheet(marker_mm=100.0)


def test_cli_writes_the_sheet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "markers.png"
    assert main(["markers", "--out", str(out), "--size-mm", "25"]) == 0
    assert "top-left" in capsys.readouterr().out
    page = cv2.imread(str(out), cv2.IMREAD_GRAYSCALE)
    assert page is not None
    assert sorted(detect_markers(cast(npt.NDArray[np.uint8], page))) == [0, 1, 2, 3]
    assert b"pHYs" in out.read_bytes()[:64]  # its print size
    assert main(["markers", "--out", str(out), "--size-mm", "200"]) == 2
    assert "does not fit" in capsys.readouterr().err


def frames_in(folder: Path, image: npt.NDArray[np.uint8]) -> Path:
    folder.mkdir(parents=True)
    cv2.imwrite(str(folder / "0.png"), image)
    return folder


def test_calibrate_finds_the_pad_by_its_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shot = shot_of(replace(PAD, colour=WOOD, rail_colour=WOOD, table_colour=WOOD))
    folder = frames_in(tmp_path / "imgs", shot.image)
    with FilesSource(folder, fps=None, clock=ManualClock()) as src:
        result = calibrate(src, tmp_path / "data", frames=1)
    assert result.method == "markers"
    assert max(corner_errors(result.pad, shot.truth.pad)) < TOLERANCE_PX
    assert json.loads(result.pad_file.read_text())["found_by"] == "markers"
    assert result.pad_area < 0.15  # smaller than the colour finder takes: taken, with a word
    code = main(["calibrate", "--camera", f"files:{folder}?fps=0", "--data", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "found by its four corner markers" in out
    assert "warning: the pad fills only" in out


def test_calibrate_falls_back_on_the_colour_without_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shot = shot_of(replace(PAD, markers_mm=0.0, size_mm=(280.0, 200.0)))  # big enough for it
    folder = frames_in(tmp_path / "imgs", shot.image)
    with FilesSource(folder, fps=None, clock=ManualClock()) as src:
        result = calibrate(src, tmp_path / "data", frames=1)
    assert result.method == "colour"
    assert polygon_iou(result.pad, shot.truth.pad) > 0.9
    code = main(
        ["calibrate", "--camera", f"files:{folder}?fps=0", "--data", str(tmp_path), "--json"]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out)["method"] == "colour"
    assert json.loads(result.pad_file.read_text())["found_by"] == "colour"
    code = main(["calibrate", "--camera", f"files:{folder}?fps=0", "--data", str(tmp_path)])
    assert code == 0
    assert "warning" not in capsys.readouterr().out  # this pad fills enough of the view


def test_the_demo_camera_prints_markers_and_calibrate_finds_its_pad_by_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "demo?seed=5&fps=0&markers=25"
    assert main(["calibrate", "--camera", spec, "--data", str(tmp_path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["method"] == "markers"
    with DemoSource(seed=5, fps=None, markers_mm=25.0, clock=ManualClock()) as src:
        src.read(1.0)
        assert src.truth is not None
        truth = src.truth.scene.pad
    assert max(corner_errors(Pad.from_json(found["pad"]), truth)) < TOLERANCE_PX
    # without markers the same demo table is found by its colour
    assert main(["calibrate", "--camera", "demo?seed=5&fps=0", "--data", str(tmp_path)]) == 0
    assert "found by its colour" in capsys.readouterr().out


@pytest.mark.parametrize("seed", range(4))
def test_with_markers_keeps_the_cards_in_view_and_the_pad_within_them(seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = synth.random_scene(rng, n_dice=0)
    scene = synth.with_markers(table, 30.0)
    assert scene.pad.markers_mm == 30.0
    assert scene.pad.size_mm[0] <= table.pad.size_mm[0]
    assert scene.pad.size_mm[1] <= table.pad.size_mm[1]
    shot = synth.render(scene)
    assert sorted(detect_markers(shot.image)) == [0, 1, 2, 3]
    found = find_pad_markers(shot.image)
    assert found is not None
    assert max(corner_errors(found, shot.truth.pad)) < TOLERANCE_PX
    with pytest.raises(ValueError, match="too little of the view"):
        synth.with_markers(table, 80.0)


def test_calibrate_refuses_a_partial_set_of_markers(tmp_path: Path) -> None:
    folder = frames_in(tmp_path / "imgs", covered(shot_of().image, 1))
    data = tmp_path / "data"
    with (
        FilesSource(folder, fps=None, clock=ManualClock()) as src,
        pytest.raises(CalibrationError, match=r"marker 1 \(top-right\) not found"),
    ):
        calibrate(src, data, frames=1)
    assert not (data / "pad.json").exists()
    assert (data / "calibration.jpg").exists()
