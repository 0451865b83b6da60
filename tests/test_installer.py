"""systemd/install.sh in dry-run mode on this machine, with a Pi's files faked through its
DICEPAD_* overrides, and the NumPy/OpenCV rule (server/pi_install.py) for both releases.

Every command the installer could run to change the system (apt-get, useradd, systemctl, ...)
is shadowed on PATH by a recorder, so a dry run that ran anything is caught, not just trusted.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.version import Version

from server import pi_install
from server.pi_install import RELEASES, check_numpy_origin, numpy_plan, parse_version

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "systemd" / "install.sh"
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

CHANGERS = [
    "apt-get", "useradd", "usermod", "groupadd", "userdel", "systemctl", "journalctl",
    "install", "rm", "chmod", "mv", "pip", "tar", "mktemp",
]  # fmt: skip

FAKE_PYTHON = """#!/bin/sh
# The system python3 of a fake Pi: answers the installer's probes, runs pi_install.py for
# real, and records anything else (creating a venv must not happen in a dry run).
case "$1" in
  -c)
    case "$2" in
      *numpy*) [ -n "$FAKE_NUMPY" ] && echo "$FAKE_NUMPY" && exit 0; exit 1 ;;
      *version_info*) echo "$FAKE_PYTHON_MINOR"; exit 0 ;;
    esac ;;
  */pi_install.py) exec "$REAL_PYTHON" "$@" ;;
esac
echo "python3 $*" >>"$CALLS"
exit 0
"""

OS_RELEASE = """PRETTY_NAME="Debian GNU/Linux {n} ({codename})"
NAME="Debian GNU/Linux"
VERSION_ID="{n}"
VERSION_CODENAME={codename}
ID=debian
"""


FAKE_GETENT = """#!/bin/sh
# getent for a fake Pi: user dicepad exists when FAKE_USER is set, groups from FAKE_GROUPS.
case "$1" in
  passwd) [ "$2" = dicepad ] && [ -n "$FAKE_USER" ] && echo "dicepad:x:999:999::/:/bin/false" ;;
  group) for g in $FAKE_GROUPS; do [ "$g" = "$2" ] && echo "$g:x:44:" && exit 0; done; exit 2 ;;
esac
"""


class FakePi:
    """A directory of fake facts (model, os-release, python3, users, an earlier install under
    ``fs``, the installer's DICEPAD_ROOT) and recorders for every command that changes things."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.calls = root / "calls.log"
        self.calls.touch()
        for name in CHANGERS:
            self._script(self.bin / name, f'#!/bin/sh\necho "{name} $*" >>"$CALLS"\nexit 0\n')
        self._script(self.bin / "getent", FAKE_GETENT)
        self.python = root / "python3"
        self._script(self.python, FAKE_PYTHON)
        self.model = root / "model"
        self.os_release = root / "os-release"
        self.release("bookworm")
        self.fs = root / "fs"
        self.fs.mkdir()
        self.user = False
        self.groups = "video gpio"
        self.python_minor = "3.11"

    def installed_earlier(self, *, python: str = "3.11.2", numpy_in_venv: bool = False) -> None:
        """What an earlier run of the installer left behind."""
        venv = self.fs / "opt/dicepad/venv"
        (venv / "bin").mkdir(parents=True)
        self._script(venv / "bin/python", "#!/bin/sh\nexit 0\n")
        (venv / "pyvenv.cfg").write_text(
            f"home = /usr/bin\ninclude-system-site-packages = true\nversion = {python}\n"
        )
        site = venv / f"lib/python{python.rsplit('.', 1)[0]}/site-packages"
        site.mkdir(parents=True)
        if numpy_in_venv:
            (site / "numpy").mkdir()
        (self.fs / "etc/dicepad").mkdir(parents=True)
        (self.fs / "etc/dicepad/dicepad.env").write_text("DICEPAD_PIN=2468\n")
        (self.fs / "etc/systemd/system").mkdir(parents=True)
        (self.fs / "etc/systemd/system/dicepad.service").write_text("[Service]\n")
        self.user = True

    @staticmethod
    def _script(path: Path, text: str) -> None:
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def board(self, model: str) -> None:
        self.model.write_bytes(model.encode() + b"\0")  # device-tree strings end in NUL

    def release(self, codename: str) -> None:
        numbers = {"bookworm": 12, "trixie": 13, "bullseye": 11}
        self.os_release.write_text(OS_RELEASE.format(codename=codename, n=numbers[codename]))

    def run(
        self, *args: str, numpy: str = "", root: bool | None = None
    ) -> subprocess.CompletedProcess[str]:
        """The installer with these facts; DICEPAD_ROOT=``fs`` by default in dry runs."""
        assert BASH is not None
        if root is None:
            root = "--dry-run" in args
        env = {
            "PATH": f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.root),
            "LC_ALL": "C",
            "CALLS": str(self.calls),
            "REAL_PYTHON": sys.executable,
            "FAKE_NUMPY": numpy,
            "FAKE_PYTHON_MINOR": self.python_minor,
            "FAKE_USER": "1" if self.user else "",
            "FAKE_GROUPS": self.groups,
            "DICEPAD_ROOT": str(self.fs) if root else "",
            "DICEPAD_PI_MODEL": str(self.model),
            "DICEPAD_OS_RELEASE": str(self.os_release),
            "DICEPAD_SYSTEM_PYTHON": str(self.python),
        }
        return subprocess.run(
            [BASH, str(SCRIPT), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    def changes(self) -> list[str]:
        return self.calls.read_text().splitlines()


@pytest.fixture
def pi(tmp_path: Path) -> FakePi:
    return FakePi(tmp_path)


def plan_lines(stdout: str) -> list[str]:
    """The commands of a dry run (lines starting with ``+``)."""
    return [line[2:] for line in stdout.splitlines() if line.startswith("+ ")]


# --- refusing ----------------------------------------------------------------------------------


def test_refuses_clearly_when_not_on_a_pi(pi: FakePi) -> None:
    for args in (["--dry-run"], []):
        result = pi.run(*args)  # no model file at all
        assert result.returncode != 0
        assert "this is not a Raspberry Pi" in result.stderr
        assert "--force" in result.stderr
        assert plan_lines(result.stdout) == []
    pi.board("Pine64 RockPro64 v2.1")
    result = pi.run("--dry-run")
    assert result.returncode != 0
    assert "not a Raspberry Pi" in result.stderr
    assert pi.changes() == []


def test_refuses_an_unsupported_release_unless_forced(pi: FakePi) -> None:
    pi.board("Raspberry Pi 4 Model B Rev 1.5")
    pi.release("bullseye")
    result = pi.run("--dry-run")
    assert result.returncode != 0
    assert "unsupported OS release 'bullseye'" in result.stderr
    forced = pi.run("--dry-run", "--force", numpy="1.19.5")
    assert forced.returncode == 0, forced.stderr
    assert "untested OS release 'bullseye'" in forced.stderr
    assert "numpy==1.19.5" in forced.stdout


def test_bad_options_are_refused_with_the_usage(pi: FakePi) -> None:
    result = pi.run("--dry-rn")
    assert result.returncode != 0
    assert "unknown option: --dry-rn" in result.stderr
    assert "--uninstall" in result.stderr  # the usage
    result = pi.run("--purge", "--dry-run")
    assert result.returncode != 0
    assert "--purge only goes with --uninstall" in result.stderr
    helped = pi.run("--help")
    assert helped.returncode == 0
    assert "--dry-run" in helped.stdout
    assert pi.changes() == []


# --- the plan ------------------------------------------------------------------------------------


def test_forced_dry_run_prints_the_full_plan_and_changes_nothing(pi: FakePi) -> None:
    result = pi.run("--force", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "not a Raspberry Pi" in result.stderr  # said, but forced
    plan = plan_lines(result.stdout)
    opt = f"{pi.fs}/opt/dicepad"
    expected_in_order = [
        "apt-get update",
        "env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
        "python3-venv python3-numpy python3-picamera2 python3-lgpio sqlite3",
        f"useradd --system --user-group --home-dir {pi.fs}/var/lib/dicepad --no-create-home "
        "--shell /usr/sbin/nologin --comment dicepad\\ scoreboard dicepad",
        "usermod --append --groups video\\,gpio dicepad",
        f"{pi.python} -m venv --system-site-packages {opt}/venv",
        f"write {opt}/constraints.txt (mode 0644):",
        f"rm -rf {opt}/src",
        f"env PIP_DISABLE_PIP_VERSION_CHECK=1 {opt}/venv/bin/python -m pip install "
        f"--upgrade --constraint {opt}/constraints.txt {opt}/src\\[pi\\]",
        f"{opt}/venv/bin/python {REPO}/server/pi_install.py check --numpy 1.24.2 "
        "cv2 onnxruntime picamera2 gpiozero server.cli",
        f"install -m 0600 {REPO}/systemd/dicepad.env {pi.fs}/etc/dicepad/dicepad.env",
        f"install -m 0644 {REPO}/systemd/dicepad.service "
        f"{pi.fs}/etc/systemd/system/dicepad.service",
        "systemctl daemon-reload",
        "systemctl enable dicepad.service",
        "systemctl restart dicepad.service",
    ]
    positions = [plan.index(step) for step in expected_in_order]  # ValueError names a missing one
    assert positions == sorted(positions)
    assert "    numpy==1.24.2" in result.stdout.splitlines()
    assert "    opencv-python-headless<4.12" in result.stdout.splitlines()
    assert "scoreboard's URL" in result.stdout
    (copy,) = [line for line in plan if line.startswith(f"tar -C {REPO} ")]
    # pip must not package a stale build/; the test venvs and root are not the program
    for leftover in (".git", ".venv", "build", ".venv-bookworm", ".trixie", ".trixie.log"):
        assert f"--exclude=./{leftover} " in copy
    assert copy.endswith(f"-cf - . | tar -C {opt}/src --no-same-owner -xf -")
    assert positions[6] < plan.index(copy) < positions[7]
    assert not any("groupadd" in line or "uninstall" in line for line in plan)
    assert pi.changes() == []


def test_an_update_keeps_the_user_the_settings_and_the_venv(pi: FakePi) -> None:
    pi.board("Raspberry Pi 5 Model B Rev 1.0")
    pi.installed_earlier()
    result = pi.run("--dry-run", numpy="1.24.2")
    assert result.returncode == 0, result.stderr
    plan = plan_lines(result.stdout)
    assert "    user dicepad exists" in result.stdout
    assert "    venv is current" in result.stdout
    assert f"    {pi.fs}/etc/dicepad/dicepad.env exists: kept" in result.stdout
    assert not any(word in line for line in plan for word in ("useradd", "-m venv", ".env"))
    assert not any("rm -rf" in line and line.endswith("/venv") for line in plan)
    assert any(" -m pip install --upgrade " in line for line in plan)
    assert plan[-1] == "systemctl restart dicepad.service"
    assert pi.changes() == []


def test_an_os_upgrade_rebuilds_the_venv_for_the_new_python(pi: FakePi) -> None:
    pi.board("Raspberry Pi 4 Model B Rev 1.5")
    pi.installed_earlier(python="3.11.2")
    pi.release("trixie")
    pi.python_minor = "3.13"
    result = pi.run("--dry-run", numpy="2.2.4")
    assert result.returncode == 0, result.stderr
    plan = plan_lines(result.stdout)
    venv = f"{pi.fs}/opt/dicepad/venv"
    rebuild = [f"rm -rf {venv}", f"{pi.python} -m venv --system-site-packages {venv}"]
    assert plan[plan.index(rebuild[0]) + 1] == rebuild[1]
    assert pi.changes() == []


def test_an_update_removes_a_numpy_that_pip_put_in_the_venv(pi: FakePi) -> None:
    pi.board("Raspberry Pi 4 Model B Rev 1.5")
    pi.installed_earlier(numpy_in_venv=True)
    result = pi.run("--dry-run", numpy="1.24.2")
    assert result.returncode == 0, result.stderr
    plan = plan_lines(result.stdout)
    repair = f"{pi.fs}/opt/dicepad/venv/bin/python -m pip uninstall -y numpy"
    install = next(i for i, line in enumerate(plan) if " -m pip install " in line)
    assert plan.index(repair) < install


def test_a_missing_gpio_group_is_created(pi: FakePi) -> None:
    pi.board("Raspberry Pi 4 Model B Rev 1.5")
    pi.groups = "video"
    result = pi.run("--dry-run", numpy="1.24.2")
    assert result.returncode == 0, result.stderr
    assert "groupadd --system gpio" in plan_lines(result.stdout)


def test_dicepad_root_is_refused_outside_a_dry_run(pi: FakePi) -> None:
    pi.board("Raspberry Pi 4 Model B Rev 1.5")
    result = pi.run(root=True)
    assert result.returncode != 0
    assert "DICEPAD_ROOT is only for dry runs" in result.stderr
    assert pi.changes() == []


def test_a_pi_is_detected_from_the_device_tree(pi: FakePi) -> None:
    pi.board("Raspberry Pi 5 Model B Rev 1.0")
    result = pi.run("--dry-run", numpy="1.24.2")
    assert result.returncode == 0, result.stderr
    assert "==> board: Raspberry Pi 5 Model B Rev 1.0" in result.stdout
    assert "==> OS: Raspberry Pi OS / Debian bookworm" in result.stdout
    assert "Debian NumPy 1.24.2 (found)" in result.stdout
    assert result.stderr == ""
    assert pi.changes() == []


def test_trixie_keeps_its_numpy_2_and_leaves_opencv_unbounded(pi: FakePi) -> None:
    pi.board("Raspberry Pi 4 Model B Rev 1.4")
    pi.release("trixie")
    result = pi.run("--dry-run", numpy="2.2.4")
    assert result.returncode == 0, result.stderr
    assert "    numpy==2.2.4" in result.stdout.splitlines()
    assert "opencv-python-headless<" not in result.stdout
    assert "check --numpy 2.2.4" in result.stdout
    assert pi.changes() == []


def test_print_constraints(pi: FakePi) -> None:
    pi.release("trixie")
    result = pi.run("--print-constraints")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "numpy==2.2.4"
    assert "assumed from the release" in result.stdout


def test_uninstall_keeps_the_data_unless_purged(pi: FakePi) -> None:
    pi.installed_earlier()
    kept = pi.run("--uninstall", "--dry-run")
    assert kept.returncode == 0, kept.stderr
    plan = plan_lines(kept.stdout)
    assert plan[:4] == [
        "systemctl disable --now dicepad.service",
        f"rm -f {pi.fs}/etc/systemd/system/dicepad.service",
        "systemctl daemon-reload",
        f"rm -rf {pi.fs}/opt/dicepad",
    ]
    assert f"kept the database in {pi.fs}/var/lib/dicepad" in kept.stdout
    assert not any("/var/lib/dicepad" in line or "userdel" in line for line in plan)
    purged = pi.run("--uninstall", "--purge", "--dry-run")
    assert purged.returncode == 0, purged.stderr
    plan = plan_lines(purged.stdout)
    assert f"rm -rf {pi.fs}/var/lib/dicepad {pi.fs}/etc/dicepad" in plan
    assert plan[-1] == "userdel dicepad"
    assert pi.changes() == []


@pytest.mark.parametrize(
    "script", [SCRIPT, REPO / "run", REPO / ".ci" / "run", REPO / ".ci" / "trixie"]
)
def test_script_is_shellcheck_clean(script: Path) -> None:
    """The installer, the two commands' scripts and CI's: bash syntax, and shellcheck when there."""
    assert BASH is not None
    syntax = subprocess.run([BASH, "-n", str(script)], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    result = subprocess.run(
        [shellcheck, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout


# --- the NumPy/OpenCV rule -------------------------------------------------------------------


def project_requirements() -> dict[str, Requirement]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    reqs = (Requirement(text) for text in data["project"]["dependencies"])
    return {req.name: req for req in reqs}


@pytest.mark.parametrize("found", [True, False])
def test_bookworm_pins_debian_numpy_1_and_an_opencv_built_for_it(found: bool) -> None:
    plan = numpy_plan("bookworm", "1.24.2" if found else None)
    assert plan.constraints == ("numpy==1.24.2", "opencv-python-headless<4.12")
    assert plan.assumed is not found
    assert "picamera2" in plan.reason


@pytest.mark.parametrize("found", [True, False])
def test_trixie_pins_debian_numpy_2_only(found: bool) -> None:
    plan = numpy_plan("trixie", "2.2.4" if found else None)
    assert plan.constraints == ("numpy==2.2.4",)
    assert plan.assumed is not found


@pytest.mark.parametrize("codename", sorted(RELEASES))
def test_each_release_gets_a_combination_the_project_accepts(codename: str) -> None:
    """The project's own requirements must admit the release's NumPy and the OpenCV bound,
    or the installer could never satisfy them on that release."""
    plan = numpy_plan(codename, None)
    pins = [Requirement(line) for line in plan.constraints]
    ours = project_requirements()
    numpy = Version(RELEASES[codename].numpy)
    assert numpy in ours["numpy"].specifier
    for pin in pins:
        if pin.name == "numpy":
            assert numpy in pin.specifier
        if pin.name == "opencv-python-headless":
            newest_for_numpy1 = Version("4.11.0.86")  # on PyPI; requires numpy>=1.23.5 on 3.11
            assert newest_for_numpy1 in pin.specifier
            assert newest_for_numpy1 in ours["opencv-python-headless"].specifier
            assert Version("4.12.0.88") not in pin.specifier  # requires numpy>=2


@given(
    major=st.integers(0, 4),
    minor=st.integers(0, 40),
    patch=st.integers(0, 20),
    codename=st.sampled_from(["bookworm", "trixie", "some-future-release"]),
)
def test_the_venv_never_gets_a_numpy_other_than_the_systems(
    major: int, minor: int, patch: int, codename: str
) -> None:
    version = f"{major}.{minor}.{patch}"
    plan = numpy_plan(codename, version)
    assert plan.constraints[0] == f"numpy=={version}"
    assert any(c.startswith("opencv-python-headless<") for c in plan.constraints) == (major < 2)
    for line in plan.constraints_file().splitlines():
        if not line.startswith("#"):
            Requirement(line)  # every line is something pip can read


def test_an_unknown_release_without_numpy_is_an_error() -> None:
    with pytest.raises(ValueError, match="python3-numpy"):
        numpy_plan("bullseye", None)


def test_parse_version() -> None:
    assert parse_version("1.24.2") == (1, 24, 2)
    assert parse_version("1:1.24.2-1+deb12u1") == (1, 24, 2)  # a Debian version
    assert parse_version("2.2.4rc1") == (2, 2, 4)
    with pytest.raises(ValueError, match="not a version"):
        parse_version("numpy")


def test_check_accepts_only_a_numpy_from_outside_the_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    system = "/usr/lib/python3/dist-packages/numpy/__init__.py"
    assert check_numpy_origin(system, str(venv), "1.24.2", "1.24.2").ok
    shadow = str(venv / "lib/python3.11/site-packages/numpy/__init__.py")
    result = check_numpy_origin(shadow, str(venv), "1.24.2", "2.4.6")
    assert not result.ok
    text = "\n".join(result.lines)
    assert "shadows Debian's" in text
    assert "expected the system NumPy 1.24.2" in text


def test_check_in_this_venv_finds_the_trap(capsys: pytest.CaptureFixture[str]) -> None:
    """The dev venv is not built with --system-site-packages: its NumPy is pip's, which the
    check must call out (it is exactly the Pi's failure), and a missing module is named. A venv
    built as the installer builds it (a Debian's NumPy, e.g. the suite run on trixie) must
    pass the NumPy check instead."""
    import numpy

    pip_numpy = Path(numpy.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
    code = pi_install.main(["check", "shlex", "dicepad_no_such_module"])
    out = capsys.readouterr().out
    assert code == 1
    assert ("shadows Debian's python3-numpy" in out) == pip_numpy
    assert f"numpy {numpy.__version__} from {Path(numpy.__file__).parent}" in out
    assert "shlex ok" in out
    assert "dicepad_no_such_module: FAIL: cannot import (ModuleNotFoundError" in out


def test_constraints_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert pi_install.main(["constraints", "--codename", "bookworm", "--numpy", "1.24.2"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("numpy==1.24.2\nopencv-python-headless<4.12\n")
    assert pi_install.main(["constraints", "--codename", "bullseye"]) == 2
    assert "install python3-numpy first" in capsys.readouterr().err
