"""Camera specs: parsed, refused with the reason, and opened from DICEPAD_CAMERA."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardware_sources_rig import write_images

from hardware.files import FilesSource
from hardware.frames import CameraUnavailableError
from hardware.sources import SourceOpener, SpecError, open_source, parse_spec

# -- specs ------------------------------------------------------------------------------------


def test_parse_spec_forms(tmp_path: Path) -> None:
    assert parse_spec("demo").kind == "demo"
    assert parse_spec("demo?seed=4&fps=15").options == {"seed": "4", "fps": "15"}
    assert parse_spec("picamera2").target == ""
    assert parse_spec("picamera2:1?mains=60").target == "1"
    assert (parse_spec("opencv:0").kind, parse_spec("opencv:0").target) == ("opencv", "0")
    assert parse_spec("/dev/video2").kind == "opencv"
    assert parse_spec(f"files:{tmp_path}?loop=no").kind == "files"
    assert parse_spec(str(tmp_path)).kind == "files"
    assert parse_spec("recorded.mp4").kind == "files"
    spec = parse_spec(f"faulty:stall@3s,garbage@10+5:files:{tmp_path}?fps=10")
    assert spec.kind == "faulty"
    assert spec.target == "stall@3s,garbage@10+5"
    assert spec.inner is not None
    assert spec.inner.kind == "files"
    assert spec.inner.options == {"fps": "10"}
    assert "ribbon" in parse_spec("picamera2").hint
    assert "rehearsal" in spec.hint
    assert "folder" in spec.hint


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ("webcam", "neither a camera kind"),
        ("files:", "needs a folder"),
        ("opencv", "needs a device"),
        ("demo?sede=3", "unknown option"),
        ("demo?seed", "key=value"),
        ("demo:3", "takes no argument"),
        ("picamera2:front", "camera number"),
        ("faulty:stall@3s", "faulty:PLAN:SPEC"),
        ("faulty:explode@3:demo", "bad fault"),
        ("faulty:stall@3:faulty:raise@1:demo", "wrap a real source"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        parse_spec(text)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("demo?fps=fast", "number"),
        ("demo?seed=1.5", "whole"),
        ("picamera2?mains=55", "50 or 60"),
        ("demo?markers=5", "10-35 mm"),
        ("demo?markers=45", "10-35 mm"),
        ("opencv:0?markers=30", "unknown option"),
        # float() accepts these: warmup=inf never finished opening, fps=nan failed every open
        ("picamera2?warmup=inf", "finite"),
        ("opencv:0?fps=nan", "finite"),
        ("demo?fps=-inf", "finite"),
        ("picamera2?width=0", "16-8192 px"),
        ("opencv:0?height=9000", "16-8192 px"),
    ],
)
def test_bad_option_values_fail_at_start_up(text: str, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        SourceOpener(text)


def test_open_source_reads_dicepad_camera(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_images(tmp_path, 2)
    monkeypatch.setenv("DICEPAD_CAMERA", f"files:{tmp_path}?fps=0&loop=no")
    with open_source() as src:
        assert isinstance(src, FilesSource)
        assert src.loop is False
        src.read(1.0)


def test_the_none_camera_cannot_be_opened() -> None:
    opener = SourceOpener("none")
    assert not opener.enabled
    with pytest.raises(CameraUnavailableError, match="no camera configured"):
        opener()


def test_missing_picamera2_is_a_clear_unavailable_error() -> None:
    try:
        import picamera2  # noqa: F401
    except ImportError:
        with pytest.raises(CameraUnavailableError, match="python3-picamera2"):
            open_source("picamera2")
    else:
        pytest.skip("picamera2 is installed here")
