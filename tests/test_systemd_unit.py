"""systemd/dicepad.service: ``systemd-analyze verify`` and ``security`` on the real file, and
whether NumPy, OpenCV and the server survive the unit's ``MemoryDenyWriteExecute=yes``."""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
UNIT = REPO / "systemd" / "dicepad.service"
EXEC = "/opt/dicepad/venv/bin/dicepad"
SECURITY_THRESHOLD = 2.5  # systemd calls < 5 "OK"; the unit scores about 1.7

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def unit_text() -> str:
    return UNIT.read_text()


def directives(section: str) -> dict[str, list[str]]:
    """``{key: [values...]}`` of one section (keys may repeat, as systemd allows)."""
    found: dict[str, list[str]] = {}
    current = None
    for raw in unit_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            continue
        if current == section:
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def runnable_copy(tmp_path: Path) -> Path:
    """The unit with ExecStart pointed at a binary that exists here (nothing else changed)."""
    text = unit_text()
    assert text.count(EXEC) == 1
    copy = tmp_path / "dicepad.service"
    copy.write_text(text.replace(EXEC, "/bin/true"))
    return copy


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    env = {**os.environ, "SYSTEMD_LOG_COLOR": "0", "SYSTEMD_PAGER": "", "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        [ANALYZE, *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )


@needs_analyze
def test_unit_verifies_cleanly(tmp_path: Path) -> None:
    result = analyze("verify", str(runnable_copy(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert (result.stdout + result.stderr).strip() == ""


@needs_analyze
def test_the_only_complaint_about_the_real_unit_is_the_missing_install(tmp_path: Path) -> None:
    """Here /opt/dicepad does not exist; on a Pi the installer puts the binary there."""
    result = analyze("verify", str(UNIT))
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    if os.access(EXEC, os.X_OK):  # a Pi with dicepad installed
        assert lines == []
    else:
        missing = f"dicepad.service: Command {EXEC} is not executable: No such file or directory"
        assert lines == [missing]


@needs_analyze
def test_security_exposure_is_low(tmp_path: Path) -> None:
    result = analyze("security", "--offline=true", "--no-pager", str(runnable_copy(tmp_path)))
    match = re.search(
        r"Overall exposure level for dicepad\.service: (\d+\.\d+) (\w+)", result.stdout
    )
    assert match, result.stdout + result.stderr
    score = float(match.group(1))
    print(f"systemd-analyze security: {score} {match.group(2)}")
    assert score < SECURITY_THRESHOLD, result.stdout


def test_service_contract() -> None:
    unit, service = directives("Unit"), directives("Service")
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    assert service["Restart"] == ["on-failure"]
    for key in ("WatchdogSec", "RestartSec"):
        assert service[key], key
    for key in ("StartLimitIntervalSec", "StartLimitBurst"):
        assert unit[key], key
    assert service["User"] == ["dicepad"]
    assert service["SupplementaryGroups"] == ["video gpio"]
    assert service["StateDirectory"] == ["dicepad"]
    assert service["EnvironmentFile"] == ["-/etc/dicepad/dicepad.env"]
    (exec_start,) = service["ExecStart"]
    assert exec_start.startswith(f"{EXEC} serve ")
    assert "--data /var/lib/dicepad" in exec_start
    for flag in ("--host", "--port", "--camera"):
        name = "DICEPAD_" + flag.strip("-").upper()
        assert f"{flag} ${{{name}}}" in exec_start
        assert any(v.startswith(f"{name}=") for v in service["Environment"]), name
    assert "PrivateDevices" not in service, "PrivateDevices= hides the camera"
    assert service["DevicePolicy"] == ["closed"]
    allowed = {v.split()[0] for v in service["DeviceAllow"]}
    assert {"char-video4linux", "char-media", "char-dma_heap", "char-gpiochip"} <= allowed
    assert service["ProtectSystem"] == ["strict"]
    assert service["NoNewPrivileges"] == ["yes"]
    assert service["CapabilityBoundingSet"] == [""]
    # an allow list; the coach warm-up thread lowers its own priority (server/coach_warm.py)
    filters = service["SystemCallFilter"]
    assert filters[0] == "@system-service"
    assert filters.index("setpriority") > filters.index("~@privileged @resources")
    assert directives("Install")["WantedBy"] == ["multi-user.target"]


def test_installer_installs_this_unit_where_the_docs_say() -> None:
    script = (REPO / "systemd" / "install.sh").read_text()
    assert 'unit_dst="$root/etc/systemd/system/dicepad.service"' in script
    assert 'venv="$prefix/venv"' in script
    assert 'prefix="$root/opt/dicepad"' in script
    assert 'root="${DICEPAD_ROOT:-}"' in script  # empty unless a test sets it (dry runs only)


# --- MemoryDenyWriteExecute=yes ----------------------------------------------------------------
# systemd 252 (bookworm) enforces it with a seccomp filter: mmap with PROT_WRITE|PROT_EXEC,
# mprotect/pkey_mprotect adding PROT_EXEC and shmat with SHM_EXEC fail with EPERM. The same
# filter is installed here in a child process before it imports anything, so a library that
# needs writable code (a JIT, text relocations, an executable stack) fails the same way.

_SYSCALLS = {  # machine: (AUDIT_ARCH, mmap, mprotect, pkey_mprotect, shmat)
    "x86_64": (0xC000003E, 9, 10, 329, 30),
    "aarch64": (0xC00000B7, 222, 226, 288, 196),
}

MDWE_PRELUDE = textwrap.dedent(
    """
    import ctypes, struct
    ARCH, MMAP, MPROTECT, PKEY_MPROTECT, SHMAT = {numbers}
    PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000
    ALLOW, EPERM = 0x7FFF0000, 0x00050000 | 1
    LD, JEQ, AND, RET = 0x20, 0x15, 0x54, 0x06
    ARG2 = 16 + 2 * 8  # seccomp_data.args[2], low 32 bits (little endian)
    prog = [
        (LD, 0, 0, 4), (JEQ, 1, 0, ARCH), (RET, 0, 0, ALLOW),
        (LD, 0, 0, 0),
        (JEQ, 4, 0, MMAP), (JEQ, 6, 0, MPROTECT), (JEQ, 5, 0, PKEY_MPROTECT),
        (JEQ, 7, 0, SHMAT), (RET, 0, 0, ALLOW),
        (LD, 0, 0, ARG2), (AND, 0, 0, PROT_WRITE | PROT_EXEC),
        (JEQ, 7, 8, PROT_WRITE | PROT_EXEC),
        (LD, 0, 0, ARG2), (AND, 0, 0, PROT_EXEC), (JEQ, 4, 5, PROT_EXEC),
        (LD, 0, 0, ARG2), (AND, 0, 0, SHM_EXEC), (JEQ, 1, 2, SHM_EXEC),
        (RET, 0, 0, ALLOW),
        (RET, 0, 0, EPERM), (RET, 0, 0, ALLOW),
    ]
    code = b"".join(struct.pack("HBBI", *insn) for insn in prog)
    buf = ctypes.create_string_buffer(code)
    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = Prog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        raise SystemExit("seccomp: errno %d" % ctypes.get_errno())
    import mmap
    try:
        mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except PermissionError:
        pass
    else:
        raise SystemExit("the W^X filter is not in force")
    """
)


def mdwe_prelude() -> str:
    numbers = _SYSCALLS.get(platform.machine())
    if sys.platform != "linux" or numbers is None:
        pytest.skip(f"no seccomp emulation of MemoryDenyWriteExecute for {platform.machine()}")
    # the filter's jump offsets above are hand-counted: keep the table and program together
    return MDWE_PRELUDE.format(numbers=numbers)


def run_under_mdwe(body: str, *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    script = mdwe_prelude() + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        check=False,
    )


def test_the_emulated_filter_refuses_writable_code() -> None:
    """The check can fail: a ctypes write-then-execute, which a JIT does, is refused."""
    result = run_under_mdwe(
        """
        import ctypes, mmap
        m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        libc = ctypes.CDLL(None, use_errno=True)
        rc = libc.mprotect(ctypes.c_void_p(addr), 4096, mmap.PROT_READ | mmap.PROT_EXEC)
        print("mprotect", rc, ctypes.get_errno())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["mprotect", "-1", "1"]  # EPERM


def test_numpy_opencv_and_the_web_stack_work_without_writable_code() -> None:
    result = run_under_mdwe(
        """
        import ctypes, sqlite3
        import numpy as np
        import cv2
        rng = np.random.default_rng(1)
        a = rng.random((60, 60)) + 60 * np.eye(60)
        assert np.allclose(np.linalg.inv(a) @ a, np.eye(60), atol=1e-9)
        np.fft.rfft2(a)
        img = np.full((240, 320, 3), 40, np.uint8)
        cv2.circle(img, (160, 120), 40, (230, 230, 230), -1)
        gray = cv2.cvtColor(cv2.GaussianBlur(img, (5, 5), 0), cv2.COLOR_BGR2GRAY)
        _, bw = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
        contours, _ = cv2.findContours(bw, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        assert len(contours) == 1
        circles = cv2.HoughCircles(gray, cv2.HOUGH_GRADIENT, dp=1.5, minDist=50,
                                   param2=20, minRadius=30, maxRadius=50)
        assert circles is not None
        m = cv2.getPerspectiveTransform(
            np.float32([[0, 0], [319, 0], [319, 239], [0, 239]]),
            np.float32([[10, 5], [300, 10], [315, 230], [5, 235]]))
        cv2.warpPerspective(img, m, (320, 240))
        ok, jpeg = cv2.imencode(".jpg", img)
        assert ok and cv2.imdecode(jpeg, cv2.IMREAD_COLOR).shape == img.shape
        callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)
        assert callback(41) == 42  # libffi closures: static trampolines, no W+X page
        sqlite3.connect(":memory:").execute("select 1")
        import flask, waitress, segno, platformdirs, gpiozero  # noqa
        import importlib, importlib.util
        from server.cli import COMMANDS
        for module in COMMANDS.values():  # every sub-command written so far
            if importlib.util.find_spec(module) is not None:
                importlib.import_module(module)
        print("ok", np.__version__, cv2.__version__)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.skipif(
    importlib.util.find_spec("server.cli.serve") is None,
    reason="server/cli/serve.py (the server's issue) not there yet",
)
def test_serve_with_the_demo_camera_runs_without_writable_code(tmp_path: Path) -> None:
    """The whole service (demo camera → vision → scoring → web) for a few seconds under W^X."""
    sock_path = tmp_path / "notify"
    port = free_port()
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(sock_path))
        sock.settimeout(60)
        body = f"""
        import os, sys
        os.environ.update(NOTIFY_SOCKET={str(sock_path)!r}, WATCHDOG_USEC="1000000")
        from server.cli import main
        sys.exit(main(["serve", "--host", "127.0.0.1", "--port", "{port}",
                       "--data", {str(tmp_path / "data")!r}, "--camera", "demo"]))
        """
        script = mdwe_prelude() + textwrap.dedent(body)
        log = tmp_path / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c", script], cwd=REPO, stdout=out, stderr=subprocess.STDOUT
            )
            try:
                messages: list[str] = []
                while sum("WATCHDOG=1" in m for m in messages) < 4:
                    messages.append(sock.recv(65536).decode())
                assert any(m.startswith("READY=1") for m in messages)
                proc.terminate()
                assert proc.wait(timeout=20) == 0, log.read_text()
            except (TimeoutError, AssertionError):
                print(log.read_text())
                raise
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
