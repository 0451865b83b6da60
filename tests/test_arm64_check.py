"""``.ci/arm64``, dicepad on the Pi's CPU under emulation: its checks and its hook in ``./run``.

A full emulated run takes many minutes (CI runs it through ``./run test``); here the script's
check logic (``.ci/arm64_check.py``) gets readings that differ the way an aarch64 build could,
and the install failure a pin without an aarch64 wheel gives, and must fail with a clear line.
"""

from __future__ import annotations

import http.server
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / ".ci" / "arm64"
BASH = shutil.which("bash")


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("arm64_check", REPO / ".ci" / "arm64_check.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["arm64_check"] = module
    spec.loader.exec_module(module)
    return module


checker = _load_checker()


def _die(x: float, y: float, value: int | None, **extra: Any) -> dict[str, Any]:
    die = {
        "value": value,
        "center": [x, y],
        "size": 31.5,
        "colour": "white",
        "confidence": 0.97,
        "flags": [],
        "flag_confidence": 0.99,
        "candidates": [{"value": value, "p": 0.97}, {"value": 6, "p": 0.02}],
    }
    return die | extra


def _reading(image: str, dice: list[dict[str, Any]], ms: float = 12.0) -> str:
    return json.dumps({"image": image, "dice": dice, "ms": ms})


X86 = [
    _reading("a/one.jpg", [_die(100.0, 80.0, 5), _die(220.0, 90.0, 2)]),
    _reading("b/two.jpg", [_die(50.0, 60.0, 3, flags=["cocked"])]),
]


def _compare(tmp_path: Path, arm: list[str], x86: list[str] | None = None) -> tuple[int, str, str]:
    (tmp_path / "x86.jsonl").write_text("\n".join(X86 if x86 is None else x86) + "\n")
    (tmp_path / "arm.jsonl").write_text("\n".join(arm) + "\n")
    done = subprocess.run(
        [sys.executable, str(REPO / ".ci" / "arm64_check.py"), "compare",
         str(tmp_path / "x86.jsonl"), str(tmp_path / "arm.jsonl"), "--label", "arm64 bookworm"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_the_same_readings_pass_with_one_summary_line(tmp_path: Path) -> None:
    """Float noise, another order of the dice and the time taken are no difference."""
    arm = [
        _reading("a/one.jpg", [_die(220.2, 89.9, 2), _die(100.0, 80.3, 5, confidence=0.9712)],
                 ms=950.0),
        X86[1],
    ]  # fmt: skip
    code, out, err = _compare(tmp_path, arm)
    assert code == 0, err
    assert err == ""
    assert out.startswith("detect 2 photos 3 dice as on x86 (centres within 0.3")


def test_a_runner_up_both_builds_all_but_rule_out_may_be_another_face(tmp_path: Path) -> None:
    """Which of two faces at 0.5 % and 0.8 % comes second is float noise; at 3 % it is not."""

    def with_runner_up(value: int, p: float) -> list[str]:
        sure = [[5, 0.97], [value, p]]
        return [
            _reading("a/one.jpg", [_die(100.0, 80.0, 5, candidates=sure), _die(220.0, 90.0, 2)]),
            X86[1],
        ]

    x86 = with_runner_up(2, 0.005)
    code, _, err = _compare(tmp_path, with_runner_up(3, 0.008), x86=x86)
    assert code == 0, err
    code, _, err = _compare(tmp_path, with_runner_up(3, 0.03), x86=with_runner_up(2, 0.03))
    assert code == 1
    assert "candidates[1][0]: x86 2, arm64 3" in err


@pytest.mark.parametrize(
    ("arm_one", "message"),
    [
        ([_die(100.0, 80.0, 6), _die(220.0, 90.0, 2)], "value: x86 5, arm64 6"),
        ([_die(100.0, 80.8, 5), _die(220.0, 90.0, 2)], "centres 0.80 px apart (allowed 0.5)"),
        ([_die(100.0, 80.0, 5, flags=["stacked"]), _die(220.0, 90.0, 2)],
         "flags: x86 [], arm64 ['stacked']"),
        ([_die(100.0, 80.0, 5, confidence=0.91), _die(220.0, 90.0, 2)],
         "confidence: x86 0.9700, arm64 0.9100 (allowed ±0.02)"),
        ([_die(100.0, 80.0, 5, size=32.4), _die(220.0, 90.0, 2)],
         "size: x86 31.5000, arm64 32.4000 (allowed ±0.5)"),
        ([_die(100.0, 80.0, 5, candidates=[{"value": 5, "p": 0.97}, {"value": 4, "p": 0.02}]),
          _die(220.0, 90.0, 2)], "candidates[1] value: x86 6, arm64 4"),
        ([_die(100.0, 80.0, 5)], "x86 die at (220.0, 90.0) value 2: arm64 has no such die"),
        ([_die(100.0, 80.0, 5), _die(220.0, 90.0, 2), _die(400.0, 300.0, 1)],
         "arm64 die at (400.0, 300.0) value 1: x86 has no such die"),
    ],
)  # fmt: skip
def test_an_aarch64_reading_that_differs_fails_and_says_where(
    tmp_path: Path, arm_one: list[dict[str, Any]], message: str
) -> None:
    code, out, err = _compare(tmp_path, [_reading("a/one.jpg", arm_one), X86[1]])
    assert code == 1
    lines = err.splitlines()
    assert all(line.startswith("arm64 bookworm: DIFFERS: a/one.jpg") for line in lines), err
    assert any(message in line for line in lines), err
    assert out.strip() == f"{len(lines)} differences"


def test_a_photo_read_on_one_side_only_fails(tmp_path: Path) -> None:
    code, _, err = _compare(tmp_path, [X86[0], _reading("c/three.jpg", [])])
    assert code == 1
    assert "b/two.jpg: no arm64 reading" in err
    assert "c/three.jpg: no x86 reading" in err


# The end of the installer's output in the arm64 root when a dependency pins a release that has
# x86-64 wheels and no aarch64 ones (shown once for real in the note: tensorflow-cpu).
PIP_NO_AARCH64 = """\
==> dicepad from /work/dicepad (copied to /opt/dicepad/src) into the venv
Processing /opt/dicepad/src
  Preparing metadata (pyproject.toml): finished with status 'done'
Requirement already satisfied: numpy>=1.24 in /usr/lib/python3/dist-packages (1.24.2)
ERROR: Could not find a version that satisfies the requirement tensorflow-cpu==2.15.0 \
(from dicepad) (from versions: none)
ERROR: No matching distribution found for tensorflow-cpu==2.15.0
"""


def test_a_pin_without_an_aarch64_wheel_is_named_in_one_clear_line(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text(PIP_NO_AARCH64)
    done = subprocess.run(
        [sys.executable, str(REPO / ".ci" / "arm64_check.py"), "pip-failure", str(log)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "pip found no aarch64 build of tensorflow-cpu==2.15.0 (the versions pip saw for "
        "aarch64: none): a dependency or pin that installs on x86 has no wheel for the Pi's "
        "CPU and Python"
    )


def test_a_failed_source_build_is_named_too() -> None:
    text = "Building wheel for fastlib (pyproject.toml): finished with status 'error'\n"
    text += "ERROR: Failed building wheel for fastlib\n"
    assert checker.pip_failure(text).startswith("pip had no aarch64 wheel of fastlib")


def test_the_games_compare_field_by_field() -> None:
    game = {"over": True, "outcome": {"winners": ["Bob"]}, "log": [{"type": "roll"}], "seq": 1}
    assert checker.compare_games(game, json.loads(json.dumps(game))) == []
    other = game | {"outcome": {"winners": ["Ann"]}}
    assert checker.compare_games(game, other) == ["game outcome winners[0]: x86 'Bob', arm64 'Ann'"]


class _Flaky(http.server.BaseHTTPRequestHandler):
    """A table over HTTP whose answers drop the way waitress's did under qemu-user (EFAULT on
    send): the 2nd action lands but its answer is lost; the 4th is lost before it lands; the
    first GET of the table is lost too."""

    seq = 0
    posts = 0
    gets = 0

    def _answer(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(201 if self.command == "POST" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        cls = type(self)
        cls.gets += 1
        if cls.gets == 1:
            self.close_connection = True
            return
        self._answer({"seq": cls.seq})

    def do_POST(self) -> None:
        cls = type(self)
        self.rfile.read(int(self.headers["Content-Length"]))
        cls.posts += 1
        if cls.posts == 4:
            self.close_connection = True
            return
        cls.seq += 1
        if cls.posts == 2:
            self.close_connection = True
            return
        self._answer({"seq": cls.seq})

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_dropped_answer_is_recovered_by_the_tables_seq_never_sent_twice() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        api = checker.Api(f"http://127.0.0.1:{server.server_address[1]}")
        seq = api.call("GET", "/api/tables/t")["seq"]  # its first answer is dropped
        for _ in range(5):
            seq = api.act("t", {"type": "roll"}, seq)
    finally:
        server.shutdown()
        server.server_close()
    assert (seq, _Flaky.seq) == (5, 5), "an action was lost or applied twice"
    assert api.dropped == 3
    assert _Flaky.posts == 6, "only the action that never landed is sent again"


# --- the script itself -----------------------------------------------------------------------


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_script_is_shellcheck_clean() -> None:
    assert BASH is not None
    syntax = subprocess.run([BASH, "-n", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    result = subprocess.run(
        [shellcheck, str(SCRIPT)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout


@pytest.mark.skipif(BASH is None or os.geteuid() != 0, reason="needs bash, as root")
def test_an_unknown_suite_is_refused_before_anything_is_built() -> None:
    assert BASH is not None
    done = subprocess.run(
        [BASH, str(SCRIPT), "jessie"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "unknown suite 'jessie' (bookworm or trixie)" in done.stderr


# --- ./run test's hook -----------------------------------------------------------------------

FAKE = """#!/bin/sh
echo "$(basename "$0") $*" >> "$FAKE_LOG"
"""
FAKE_ARM64 = FAKE + 'exit "${FAKE_ARM64_EXIT:-0}"\n'


def _run_test(tmp_path: Path, **env: str) -> tuple[int, list[str]]:
    """``./run test`` in a copy of the checkout's scripts, with stand-ins for the venv's python,
    apt-get and the two CI checks, which log what they were asked."""
    assert BASH is not None
    tree = tmp_path / "tree"
    (tree / ".ci").mkdir(parents=True)
    shutil.copy(REPO / "run", tree / "run")
    shutil.copy(REPO / "pyproject.toml", tree / "pyproject.toml")
    bin_dir = tmp_path / "bin"
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    bin_dir.mkdir()
    stand_ins = [tree / ".ci" / "arm64", tree / ".ci" / "trixie", venv / "bin" / "python"]
    stand_ins += [bin_dir / name for name in ("apt-get", "sudo", "chromium", "shellcheck")]
    for path in stand_ins:
        path.write_text(FAKE_ARM64 if path.name == "arm64" else FAKE)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (venv / ".dicepad-installed-dev").touch()
    log = tmp_path / "log"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CI", "DICEPAD_"))}
    full_env |= {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "DICEPAD_VENV": str(venv),
        "DICEPAD_PI_CHECK": "0",
        "DICEPAD_TRIXIE_CHECK": "0",
        "FAKE_LOG": str(log),
        **env,
    }
    done = subprocess.run(
        [BASH, str(tree / "run"), "test"], env=full_env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, log.read_text().splitlines() if log.is_file() else []


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize(
    ("env", "runs"),
    [({}, False), ({"CI": "true"}, True), ({"DICEPAD_ARM64_CHECK": "1"}, True),
     ({"CI": "true", "DICEPAD_ARM64_CHECK": "1"}, True),
     ({"CI": "true", "DICEPAD_ARM64_CHECK": "0"}, False)],
)  # fmt: skip
def test_run_test_runs_the_arm64_check_in_ci_or_when_asked(
    tmp_path: Path, env: dict[str, str], runs: bool
) -> None:
    code, log = _run_test(tmp_path, **env)
    assert code == 0
    assert ("arm64 " in log) is runs
    assert log[-1] == "python -m pytest"  # the suite itself still runs after it


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_a_failing_arm64_check_fails_run_test(tmp_path: Path) -> None:
    code, log = _run_test(tmp_path, DICEPAD_ARM64_CHECK="1", FAKE_ARM64_EXIT="1")
    assert code != 0
    assert "arm64 " in log
    assert "python -m pytest" not in log
