"""``./run``, the README's two commands, setting up a machine: the system's ``python3`` and
``apt-get`` are the edges, faked on PATH (a stock Debian python3 whose ``-m venv`` fails for
want of ``python3-venv``, an apt-get that records what it was asked), so the script's own
logic runs for real without installing anything."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

FAKE_PYTHON3 = """#!/bin/sh
# A system python3 whose venv needs python3-venv (the marker apt-get leaves). A venv it makes
# holds stubs: a python that takes any pip command, a dicepad that says it ran.
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  echo "venv $3" >> "$FAKE_LOG"
  mkdir -p "$3/bin"
  if [ -n "$FAKE_VENV_ERROR" ]; then
    echo "$FAKE_VENV_ERROR" >&2
    exit 1
  fi
  if [ ! -f "$FAKE_ROOT/python3-venv" ]; then
    echo "The virtual environment was not created successfully because ensurepip is not" >&2
    echo "available. On Debian/Ubuntu systems, you need to install the python3-venv package" >&2
    exit 1
  fi
  printf '#!/bin/sh\\necho "pip $*" >> "$FAKE_LOG"\\n' > "$3/bin/python"
  printf '#!/bin/sh\\necho "dicepad ran: $*"\\n' > "$3/bin/dicepad"
  chmod +x "$3/bin/python" "$3/bin/dicepad"
  exit 0
fi
echo "python3 $*" >> "$FAKE_LOG"
"""

FAKE_APT = """#!/bin/sh
echo "apt-get $*" >> "$FAKE_LOG"
case "$*" in *install*python3-venv*) touch "$FAKE_ROOT/python3-venv" ;; esac
"""

FAKE_SUDO = """#!/bin/sh
exec "$@"
"""


def _fakes(tmp: Path, *, venv_ready: bool) -> dict[str, str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, text in (("python3", FAKE_PYTHON3), ("apt-get", FAKE_APT), ("sudo", FAKE_SUDO)):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if venv_ready:
        (tmp / "python3-venv").touch()
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "DICEPAD_VENV": str(tmp / "venv"),
        "FAKE_LOG": str(tmp / "log"),
        "FAKE_ROOT": str(tmp),
        "FAKE_VENV_ERROR": "",
    }


def _run(env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    assert BASH is not None
    done = subprocess.run(
        [BASH, str(REPO / "run"), "dicepad", "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    log = Path(env["FAKE_LOG"])
    return done, log.read_text().splitlines() if log.is_file() else []


def test_a_python_without_venv_gets_python3_venv_from_apt_and_the_venv_is_made(
    tmp_path: Path,
) -> None:
    done, log = _run(_fakes(tmp_path, venv_ready=False))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "dicepad ran: --version"
    venv = f"venv {tmp_path / 'venv'}"
    assert log.count(venv) == 2  # tried, failed, apt, tried again
    first, second = log.index(venv), len(log) - 1 - log[::-1].index(venv)
    apt = [i for i, line in enumerate(log) if line.startswith("apt-get install")]
    assert len(apt) == 1
    assert first < apt[0] < second
    assert "python3-venv" in log[apt[0]]
    assert any("-m pip install" in line for line in log[second:])  # then the project


def test_a_python_with_venv_installs_nothing_from_apt(tmp_path: Path) -> None:
    done, log = _run(_fakes(tmp_path, venv_ready=True))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "dicepad ran: --version"
    assert not [line for line in log if line.startswith("apt-get")]
    assert log.count(f"venv {tmp_path / 'venv'}") == 1


def test_a_venv_folder_that_was_there_is_never_removed(tmp_path: Path) -> None:
    """``DICEPAD_VENV`` may name a folder of the user's: a failed first try leaves it alone
    (only a folder the try itself created is cleared away)."""
    env = _fakes(tmp_path, venv_ready=False)
    mine = tmp_path / "venv" / "notes.txt"
    mine.parent.mkdir()
    mine.write_text("keep me")
    done, _ = _run(env)
    assert done.returncode == 0, done.stderr
    assert mine.read_text() == "keep me"


def test_a_venv_failure_apt_cannot_mend_is_shown_and_installs_nothing(tmp_path: Path) -> None:
    env = {**_fakes(tmp_path, venv_ready=True), "FAKE_VENV_ERROR": "Error: [Errno 28] No space"}
    done, log = _run(env)
    assert done.returncode == 1
    assert "No space" in done.stderr
    assert not [line for line in log if line.startswith("apt-get")]
    assert not (tmp_path / "venv").exists()  # the half-made folder this try created is gone
