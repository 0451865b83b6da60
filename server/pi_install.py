"""Which NumPy and OpenCV the Raspberry Pi venv gets, and a check that the choice worked.

The trap: apt's ``python3-picamera2`` (and its ``simplejpeg``) are compiled against Debian's
NumPy. The venv sees them through ``--system-site-packages``, but a pip NumPy of another ABI
installed into the venv shadows Debian's and the camera import dies with "numpy.dtype size
changed". Recent ``opencv-python-headless`` pulls NumPy 2.x, so on bookworm (NumPy 1.24) a plain
``pip install`` walks straight into it.

The rule: the venv never gets a NumPy of its own. pip is constrained to exactly the system's
NumPy (already installed, so pip installs nothing), which makes it pick an OpenCV whose
declared NumPy range includes it. On NumPy 1.x OpenCV is also bounded explicitly below 4.12:
``opencv-python-headless`` 4.12.0.88 is the first release requiring ``numpy>=2`` (checked in
the PyPI metadata), and 4.11.0.86 is built against NumPy 2.0, whose C API is backward
compatible, so it runs on 1.24. On NumPy 2.x (trixie ships 2.2) the pin alone is enough.

Stdlib only: ``systemd/install.sh`` runs this file with the system ``python3`` before the venv
exists (``python3 server/pi_install.py constraints ...``), and the venv's python runs
``check`` after the install.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Release:
    """A supported Raspberry Pi OS release and what its apt archive ships."""

    codename: str
    debian: int
    python: str
    numpy: str  #: ``python3-numpy``'s version, assumed in a dry run before apt installs it


RELEASES: dict[str, Release] = {
    "bookworm": Release("bookworm", 12, "3.11", "1.24.2"),
    "trixie": Release("trixie", 13, "3.13", "2.2.4"),
}

#: The first ``opencv-python-headless`` whose metadata requires ``numpy>=2``.
OPENCV_NUMPY2_ONLY = "4.12"

#: The ONNX Runtime every release gets (it runs the reader's networks, ``vision/nets.py``):
#: 1.32.0 has aarch64 wheels (manylinux_2_28: bookworm's glibc is 2.36) for Python 3.11 and
#: 3.13 and asks only ``numpy>=1.21.6``, so it installs beside bookworm's NumPy 1.24 and
#: trixie's 2.2 (checked with ``pip download --platform manylinux_2_28_aarch64`` for each).
ONNXRUNTIME_PIN = "onnxruntime==1.32.0"


@dataclass(frozen=True)
class NumpyPlan:
    """The pip constraints for the venv and the reason, printed by the installer."""

    numpy: str
    assumed: bool  #: True when the system NumPy was not installed yet (a dry run)
    constraints: tuple[str, ...]
    reason: str

    def constraints_file(self) -> str:
        header = [f"# {line}" for line in self.reason.splitlines()]
        return (
            "\n".join(
                [
                    "# written by systemd/install.sh (server/pi_install.py)",
                    "# the networks' runtime, with aarch64 wheels for this Python and NumPy:",
                    ONNXRUNTIME_PIN,
                    *header,
                    *self.constraints,
                ]
            )
            + "\n"
        )


def parse_version(text: str) -> tuple[int, ...]:
    """The leading numeric release of a version string: ``"1.24.2"`` → ``(1, 24, 2)``."""
    match = re.match(r"\s*(?:\d+:)?(\d+(?:\.\d+)*)", text)
    if match is None:
        raise ValueError(f"not a version number: {text!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def numpy_plan(codename: str, system_numpy: str | None) -> NumpyPlan:
    """The constraints for a release, from the system NumPy (or the release's, if absent)."""
    assumed = system_numpy is None
    if system_numpy is None:
        release = RELEASES.get(codename)
        if release is None:
            raise ValueError(
                f"no system NumPy found and no known default for release {codename!r}; "
                "install python3-numpy first"
            )
        system_numpy = release.numpy
    version = parse_version(system_numpy)
    where = "assumed from the release" if assumed else "found"
    pin = f"numpy=={system_numpy.strip()}"
    if version[0] < 2:
        return NumpyPlan(
            numpy=system_numpy,
            assumed=assumed,
            constraints=(pin, f"opencv-python-headless<{OPENCV_NUMPY2_ONLY}"),
            reason=(
                f"{codename}: Debian NumPy {system_numpy} ({where}) is 1.x, which apt's "
                "picamera2/simplejpeg are built against.\n"
                f"NumPy is pinned to it so pip never puts a NumPy 2 in the venv, and OpenCV "
                f"stays below {OPENCV_NUMPY2_ONLY}\n(the first release that requires "
                "numpy>=2; 4.11 is built against NumPy 2.0's backward-compatible C API)."
            ),
        )
    return NumpyPlan(
        numpy=system_numpy,
        assumed=assumed,
        constraints=(pin,),
        reason=(
            f"{codename}: Debian NumPy {system_numpy} ({where}) is 2.x; it is pinned so "
            "the venv keeps using it\nand pip picks the newest OpenCV whose NumPy range "
            "includes it."
        ),
    )


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    lines: tuple[str, ...]


def check_numpy_origin(
    numpy_file: str, venv_prefix: str, expected: str | None, found: str
) -> CheckResult:
    """Whether the NumPy the venv imports is the system's (outside the venv), as planned."""
    inside = Path(numpy_file).resolve().is_relative_to(Path(venv_prefix).resolve())
    lines = [f"numpy {found} from {Path(numpy_file).parent}"]
    ok = True
    if inside:
        ok = False
        lines.append(
            "  FAIL: this NumPy was installed into the venv by pip and shadows Debian's "
            "python3-numpy;\n  apt's picamera2 then fails ('numpy.dtype size changed' or "
            "'_ARRAY_API not found').\n  Re-run systemd/install.sh: it removes it."
        )
    if expected is not None and found != expected:
        ok = False
        lines.append(f"  FAIL: expected the system NumPy {expected}")
    return CheckResult(ok, tuple(lines))


def check_environment(expected_numpy: str | None, modules: Sequence[str]) -> CheckResult:
    """Import NumPy and each module in this interpreter; report where NumPy came from."""
    try:
        import numpy
    except Exception as exc:  # any import failure is the finding, never a crash
        return CheckResult(False, (f"numpy: cannot import ({exc})",))
    result = check_numpy_origin(numpy.__file__ or "", sys.prefix, expected_numpy, numpy.__version__)
    ok, lines = result.ok, list(result.lines)
    for name in modules:
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            ok = False
            lines.append(f"{name}: FAIL: cannot import ({type(exc).__name__}: {exc})")
        else:
            version = getattr(module, "__version__", None)
            lines.append(f"{name} {version} ok" if isinstance(version, str) else f"{name} ok")
    return CheckResult(ok, tuple(lines))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pi_install", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    constraints = sub.add_parser("constraints", help="print the pip constraints file")
    constraints.add_argument("--codename", required=True)
    constraints.add_argument(
        "--numpy", default=None, help="the system NumPy version (default: the release's)"
    )
    check = sub.add_parser("check", help="in the venv: is NumPy Debian's and do imports work?")
    check.add_argument("--numpy", default=None, help="the system NumPy version expected")
    check.add_argument("modules", nargs="*", default=["cv2"])
    args = parser.parse_args(argv)
    if args.command == "constraints":
        try:
            plan = numpy_plan(args.codename, args.numpy or None)
        except ValueError as exc:
            print(f"pi_install: {exc}", file=sys.stderr)
            return 2
        sys.stdout.write(plan.constraints_file())
        return 0
    result = check_environment(args.numpy or None, args.modules)
    print("\n".join(result.lines))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
