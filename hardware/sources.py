"""Choose a frame source from a spec string (``--camera`` or ``DICEPAD_CAMERA``).

Specs::

    demo[?seed=7&fps=30&markers=30]      endless synthetic throws (the default); markers=MM
                                         prints corner markers round the pad
    picamera2[:N][?fps=30&mains=50]      the Raspberry Pi camera N (default 0)
    opencv:N | opencv:/dev/videoN | /dev/videoN   a V4L2 webcam
    files:DIR | files:VIDEO | DIR | VIDEO [?fps=30&loop=no]   replay images or a video
    faulty:PLAN:SPEC                     SPEC with injected faults (see hardware.faulty)
    none                                 no camera: the table runs on manual entry

Options after ``?`` are ``key=value`` pairs joined by ``&``; unknown keys are an error, so a
typo is caught at start-up rather than silently ignored. :class:`SourceOpener` is what the
supervisor calls to (re)open a source: it parses once and keeps state that must survive a
reconnect (a fault plan's timeline).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from hardware.camera_settings import SETTINGS_FILE
from hardware.clock import REAL_CLOCK, Clock
from hardware.faulty import FaultPlan, FaultySource, parse_faults
from hardware.files import IMAGE_SUFFIXES, VIDEO_SUFFIXES, FilesSource
from hardware.frames import CameraUnavailableError, FrameSource

ENV_VAR = "DICEPAD_CAMERA"
DEFAULT_SPEC = "demo"

DEMO_MARKERS_MAX_MM = 35.0
"""The largest corner markers the demo prints: its random cameras see 210-370 mm of table,
and the pad (shrunk to fit, ``vision.synth.with_markers``) must keep a useful size."""

KINDS = ("demo", "picamera2", "opencv", "files", "faulty", "none")

_OPTIONS: Mapping[str, frozenset[str]] = {
    "demo": frozenset({"seed", "fps", "width", "height", "markers"}),
    "picamera2": frozenset({"fps", "width", "height", "mains", "warmup", "lock"}),
    "opencv": frozenset({"fps", "width", "height", "warmup", "lock"}),
    "files": frozenset({"fps", "loop"}),
    "faulty": frozenset(),
    "none": frozenset(),
}

HINTS: Mapping[str, str] = {
    "demo": "the synthetic camera failed, which is a bug: please report it",
    "picamera2": "check the camera ribbon cable (both ends seated, contacts the right way round) "
    "and that no other program is using the camera",
    "opencv": "check the USB cable and that no other program is using the webcam",
    "files": "check that the folder or video exists and holds readable images",
    "faulty": "an injected fault (a rehearsal, not a real camera problem)",
    "none": "no camera configured (--camera none)",
}


class SpecError(ValueError):
    """A camera spec that cannot be understood; the message says what was expected."""


@dataclass(frozen=True)
class SourceSpec:
    """A parsed spec: the backend ``kind``, its ``target`` (device, path, camera number …),
    ``options`` and, for ``faulty``, the fault plan text and the ``inner`` spec."""

    kind: str
    target: str = ""
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    inner: SourceSpec | None = None
    text: str = ""

    @property
    def hint(self) -> str:
        """The likely cause to show when this source stops delivering frames."""
        if self.inner is not None and self.inner.kind != "demo":
            return f"{HINTS[self.kind]}; if it happens for real: {self.inner.hint}"
        return HINTS[self.kind]

    def __str__(self) -> str:
        return self.text


def parse_spec(text: str) -> SourceSpec:
    """Parse a camera spec (see the module docstring); :class:`SpecError` when malformed."""
    spec = text.strip()
    if not spec:
        raise SpecError("empty camera spec; try demo, picamera2, opencv:0 or files:DIR")
    if spec.startswith("faulty:"):
        plan, sep, inner = spec[len("faulty:") :].partition(":")
        if not sep or not inner:
            raise SpecError(f"{spec!r}: expected faulty:PLAN:SPEC, e.g. faulty:stall@3s:demo")
        try:
            parse_faults(plan)
        except ValueError as exc:
            raise SpecError(f"{spec!r}: {exc}") from exc
        inner_spec = parse_spec(inner)
        if inner_spec.kind in ("faulty", "none"):
            raise SpecError(f"{spec!r}: faults wrap a real source, not {inner_spec.kind}")
        return SourceSpec("faulty", target=plan, inner=inner_spec, text=spec)
    head, _, query = spec.partition("?")
    options = _parse_options(spec, query)
    kind, sep, target = head.partition(":")
    if not sep and kind not in KINDS:  # a bare path
        kind, target = _kind_of_path(head), head
    if kind not in KINDS:
        raise SpecError(f"{spec!r}: unknown camera {kind!r}; expected one of {', '.join(KINDS)}")
    unknown = set(options) - _OPTIONS[kind]
    if unknown:
        allowed = ", ".join(sorted(_OPTIONS[kind])) or "none"
        raise SpecError(
            f"{spec!r}: unknown option(s) {', '.join(sorted(unknown))} for {kind} "
            f"(allowed: {allowed})"
        )
    if kind == "files" and not target:
        raise SpecError(f"{spec!r}: files needs a folder or video, e.g. files:/data/evening")
    if kind == "opencv" and not target:
        raise SpecError(f"{spec!r}: opencv needs a device, e.g. opencv:0 or opencv:/dev/video0")
    if kind == "picamera2" and target and not target.isdigit():
        raise SpecError(f"{spec!r}: picamera2 takes a camera number, e.g. picamera2:1")
    if kind in ("demo", "none") and target:
        raise SpecError(f"{spec!r}: {kind} takes no argument")
    return SourceSpec(kind, target=target, options=MappingProxyType(options), text=spec)


def _parse_options(spec: str, query: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            raise SpecError(f"{spec!r}: options are key=value joined by &, got {item!r}")
        options[key.strip().lower()] = value.strip()
    return options


def _kind_of_path(text: str) -> str:
    if text.startswith("/dev/video"):
        return "opencv"
    path = Path(text).expanduser()
    if path.is_dir() or path.suffix.lower() in IMAGE_SUFFIXES | VIDEO_SUFFIXES:
        return "files"
    raise SpecError(
        f"{text!r} is neither a camera kind ({', '.join(KINDS)}) nor an existing folder or "
        "video file"
    )


def _float(spec: SourceSpec, key: str, default: float | None) -> float | None:
    raw = spec.options.get(key)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SpecError(f"{spec.text!r}: {key} must be a number, got {raw!r}") from None
    if not math.isfinite(value):  # float() takes nan/inf: warmup=inf would warm up for ever
        raise SpecError(f"{spec.text!r}: {key} must be a finite number, got {raw!r}")
    if value < 0:
        raise SpecError(f"{spec.text!r}: {key} must not be negative")
    return value


def _int(spec: SourceSpec, key: str, default: int) -> int:
    value = _float(spec, key, float(default))
    assert value is not None
    if not value.is_integer():
        raise SpecError(f"{spec.text!r}: {key} must be a whole number")
    return int(value)


def _bool(spec: SourceSpec, key: str, default: bool) -> bool:
    raw = spec.options.get(key)
    if raw is None:
        return default
    if raw.lower() in ("1", "yes", "true", "on"):
        return True
    if raw.lower() in ("0", "no", "false", "off"):
        return False
    raise SpecError(f"{spec.text!r}: {key} must be yes or no, got {raw!r}")


FRAME_PX_MIN, FRAME_PX_MAX = 16, 8192
"""The frame sizes a camera spec may ask for (a Pi HQ camera's full frame is 4056 x 3040)."""


def validate_spec(spec: SourceSpec) -> None:
    """Check option values without opening anything (so bad specs fail at start-up)."""
    for key in ("fps", "warmup"):
        _float(spec, key, None)
    for key in ("seed", "width", "height"):
        if key in spec.options:
            _int(spec, key, 0)
    for key in ("width", "height"):  # a zero size passed here and failed every open
        if key in spec.options and not FRAME_PX_MIN <= _int(spec, key, 0) <= FRAME_PX_MAX:
            raise SpecError(f"{spec.text!r}: {key} must be {FRAME_PX_MIN}-{FRAME_PX_MAX} px")
    for key in ("loop", "lock"):
        _bool(spec, key, True)
    if "mains" in spec.options and _int(spec, "mains", 50) not in (50, 60):
        raise SpecError(f"{spec.text!r}: mains must be 50 or 60 (Hz)")
    markers = _float(spec, "markers", None)
    if markers is not None and markers != 0 and not 10 <= markers <= DEMO_MARKERS_MAX_MM:
        raise SpecError(
            f"{spec.text!r}: markers is the printed markers' side, 10-{DEMO_MARKERS_MAX_MM:g} mm"
            " (0: none); the demo pad must fit inside them in view"
        )
    if spec.inner is not None:
        validate_spec(spec.inner)


class SourceOpener:
    """Opens the source a spec names, again and again (the supervisor reconnects with it).

    ``data_dir`` is where camera backends keep their locked settings (``camera.json``);
    ``relock`` makes them warm up and lock again instead of reusing stored values (calibration).
    """

    def __init__(
        self,
        spec: str | SourceSpec,
        *,
        clock: Clock = REAL_CLOCK,
        data_dir: Path | None = None,
        relock: bool = False,
    ) -> None:
        self.spec = parse_spec(spec) if isinstance(spec, str) else spec
        validate_spec(self.spec)
        self.clock = clock
        self.data_dir = data_dir
        self.relock = relock
        self.plan: FaultPlan | None = None
        if self.spec.kind == "faulty":
            self.plan = FaultPlan(self.spec.target, clock=clock)

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def hint(self) -> str:
        return self.spec.hint

    @property
    def enabled(self) -> bool:
        """False for ``none``: there is no camera to wait for."""
        return self.spec.kind != "none"

    def __call__(self) -> FrameSource:
        """A freshly opened source; :class:`CameraUnavailableError` when it cannot be opened."""
        return self._open(self.spec)

    def _open(self, spec: SourceSpec) -> FrameSource:
        settings_file = None if self.data_dir is None else self.data_dir / SETTINGS_FILE
        size = (_int(spec, "width", 1280), _int(spec, "height", 720))
        if spec.kind == "none":
            raise CameraUnavailableError("no camera configured (--camera none)")
        if spec.kind == "faulty":
            assert spec.inner is not None
            assert self.plan is not None
            if self.plan.vanished() > 0:  # still "unplugged": do not even open the real thing
                raise CameraUnavailableError(
                    f"camera vanished (injected fault), back in {self.plan.vanished():.1f} s"
                )
            return FaultySource(self._open(spec.inner), self.plan)
        if spec.kind == "files":
            fps = _float(spec, "fps", 30.0)
            return FilesSource(
                spec.target,
                fps=fps or None,
                loop=_bool(spec, "loop", True),
                clock=self.clock,
            )
        if spec.kind == "demo":
            from hardware.demo import DemoSource

            return DemoSource(
                seed=_int(spec, "seed", 0),
                fps=_float(spec, "fps", 30.0) or None,
                size=(_int(spec, "width", 640), _int(spec, "height", 480)),
                markers_mm=_float(spec, "markers", 0.0) or 0.0,
                clock=self.clock,
            )
        if spec.kind == "opencv":
            from hardware.opencv_source import OpenCVSource

            device: int | str = int(spec.target) if spec.target.isdigit() else spec.target
            return OpenCVSource(
                device,
                width=size[0],
                height=size[1],
                fps=_float(spec, "fps", 30.0) or 30.0,
                warmup_s=_float(spec, "warmup", 1.5) or 0.0,
                lock_exposure=_bool(spec, "lock", True),
                settings_file=settings_file,
                relock=self.relock,
                clock=self.clock,
            )
        if spec.kind == "picamera2":
            from hardware.picamera2_source import Picamera2Source

            return Picamera2Source(
                camera_num=int(spec.target or 0),
                size=size,
                fps=_float(spec, "fps", 30.0) or 30.0,
                mains_hz=_int(spec, "mains", 50),
                warmup_s=_float(spec, "warmup", 1.0) or 0.0,
                lock_exposure=_bool(spec, "lock", True),
                settings_file=settings_file,
                relock=self.relock,
                clock=self.clock,
            )
        raise SpecError(f"unknown camera kind {spec.kind!r}")  # pragma: no cover (parse checks)

    def __repr__(self) -> str:
        return f"SourceOpener({self.spec.text!r})"


def spec_from_env(default: str = DEFAULT_SPEC) -> str:
    """The camera spec from ``DICEPAD_CAMERA``, else ``default``."""
    return os.environ.get(ENV_VAR, "").strip() or default


def open_source(
    spec: str | None = None,
    *,
    clock: Clock = REAL_CLOCK,
    data_dir: Path | None = None,
    relock: bool = False,
) -> FrameSource:
    """Open the source ``spec`` names (default: ``DICEPAD_CAMERA``, else the demo camera)."""
    text = spec if spec is not None else spec_from_env()
    return SourceOpener(text, clock=clock, data_dir=data_dir, relock=relock)()
