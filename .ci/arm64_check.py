"""What ``.ci/arm64`` checks, in Python: stdlib only, so CI's x86 venv or any ``python3`` runs it.

    arm64_check.py compare X86.jsonl ARM.jsonl --label L   two ``dicepad detect --json`` outputs
    arm64_check.py game URL --script FILE --out OUT.json   a game through the HTTP API
    arm64_check.py same-game X86.json ARM.json --label L   the two games' end states
    arm64_check.py pip-failure LOG                         why the installer failed in the root
    arm64_check.py no-faccessat2 CMD...                    exec CMD, faccessat2 answered ENOSYS

Each prints what differs, one line each, and exits 1 on any difference (2 on bad input); on
success ``compare`` and ``same-game`` print one short line for the summary.
"""

from __future__ import annotations

import argparse
import ctypes
import http.client
import http.cookiejar
import json
import math
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CENTRE_PX = 0.5
"""Largest distance between the x86 and aarch64 centres of one die (the issue's target)."""
PIXELS = 0.5
"""Any other number above 1 (a die's size in px): the same tolerance as the centres."""
PROBABILITY = 0.02
"""Any number both readings give between 0 and 1 (confidences, flag and value probabilities):
the two builds' float kernels differ in the last bits, never by this much."""
IGNORED = frozenset({"ms"})
"""Keys left out: the reading's time, which the emulation slows by design."""


@dataclass
class Comparison:
    """The differences found (one readable line each) and the largest deviations seen."""

    problems: list[str] = field(default_factory=list)
    images: int = 0
    dice: int = 0
    max_centre: float = 0.0
    max_probability: float = 0.0


def _close(a: float, b: float) -> tuple[bool, str]:
    """Whether two numbers of a reading agree, and the tolerance applied."""
    if 0.0 <= a <= 1.0 and 0.0 <= b <= 1.0:
        return abs(a - b) <= PROBABILITY, f"±{PROBABILITY}"
    return abs(a - b) <= PIXELS, f"±{PIXELS}"


def _same(where: str, x86: Any, arm: Any, out: Comparison) -> None:
    """Compare two JSON values field by field; numbers within tolerance, the rest exactly.

    Generic on purpose: the reader's JSON grows fields (``candidates``) while this runs.
    """
    if isinstance(x86, bool) or isinstance(arm, bool) or x86 is None or arm is None:
        if x86 != arm:
            out.problems.append(f"{where}: x86 {x86!r}, arm64 {arm!r}")
        return
    if isinstance(x86, int) and isinstance(arm, int):
        if x86 != arm:
            out.problems.append(f"{where}: x86 {x86}, arm64 {arm}")
        return
    if isinstance(x86, int | float) and isinstance(arm, int | float):
        ok, tolerance = _close(float(x86), float(arm))
        if 0.0 <= x86 <= 1.0 and 0.0 <= arm <= 1.0:
            out.max_probability = max(out.max_probability, abs(x86 - arm))
        if not ok:
            out.problems.append(f"{where}: x86 {x86:.4f}, arm64 {arm:.4f} (allowed {tolerance})")
        return
    if isinstance(x86, dict) and isinstance(arm, dict):
        for key in sorted((set(x86) | set(arm)) - IGNORED):
            if key not in arm or key not in x86:
                side = "arm64" if key not in arm else "x86"
                out.problems.append(f"{where}: no {key!r} on {side}")
            elif key == "candidates":
                _same(f"{where} {key}", *_runner_ups_alike(x86[key], arm[key]), out)
            else:
                _same(f"{where} {key}", x86[key], arm[key], out)
        return
    if isinstance(x86, list) and isinstance(arm, list):
        if len(x86) != len(arm):
            out.problems.append(f"{where}: x86 {x86!r}, arm64 {arm!r}")
            return
        for i, (a, b) in enumerate(zip(x86, arm, strict=True)):
            _same(f"{where}[{i}]", a, b, out)
        return
    if x86 != arm:
        out.problems.append(f"{where}: x86 {x86!r}, arm64 {arm!r}")


def _runner_ups_alike(x86: Any, arm: Any) -> tuple[Any, Any]:
    """A die's ``candidates`` ([value, probability] pairs, best first) with the arm64 runner-up
    taken as x86's where both are under :data:`PROBABILITY`: which of several faces the
    network all but rules out comes second is the two builds' float noise, not a reading."""

    def pair(c: Any) -> bool:
        return isinstance(c, list) and len(c) == 2 and isinstance(c[1], int | float)

    if not (isinstance(x86, list) and isinstance(arm, list) and len(x86) == len(arm) == 2):
        return x86, arm
    if pair(x86[1]) and pair(arm[1]) and max(float(x86[1][1]), float(arm[1][1])) < PROBABILITY:
        return x86, [arm[0], [x86[1][0], arm[1][1]]]
    return x86, arm


def _centre(die: dict[str, Any]) -> tuple[float, float]:
    x, y = die["center"]
    return float(x), float(y)


def _pairs(
    x86: list[dict[str, Any]], arm: list[dict[str, Any]]
) -> tuple[list[tuple[dict[str, Any], dict[str, Any], float]], list[dict[str, Any]], list[Any]]:
    """Each x86 die with the nearest unused arm64 die (closest pairs first); the leftovers."""
    candidates = sorted(
        (math.dist(_centre(a), _centre(b)), i, j)
        for i, a in enumerate(x86)
        for j, b in enumerate(arm)
    )
    used_x, used_a, pairs = set(), set(), []
    for distance, i, j in candidates:
        if i not in used_x and j not in used_a:
            used_x.add(i)
            used_a.add(j)
            pairs.append((x86[i], arm[j], distance))
    pairs.sort(key=lambda p: _centre(p[0]))
    return (
        pairs,
        [d for i, d in enumerate(x86) if i not in used_x],
        [d for j, d in enumerate(arm) if j not in used_a],
    )


def _die_name(die: dict[str, Any]) -> str:
    x, y = _centre(die)
    return f"die at ({x:.1f}, {y:.1f}) value {die.get('value')}"


def compare_readings(x86_lines: Sequence[str], arm_lines: Sequence[str]) -> Comparison:
    """Compare ``dicepad detect --json`` outputs of the same photos, image by image."""
    out = Comparison()
    x86 = {r["image"]: r for r in (json.loads(line) for line in x86_lines if line.strip())}
    arm = {r["image"]: r for r in (json.loads(line) for line in arm_lines if line.strip())}
    for image in sorted(set(x86) - set(arm)):
        out.problems.append(f"{image}: no arm64 reading")
    for image in sorted(set(arm) - set(x86)):
        out.problems.append(f"{image}: no x86 reading")
    for image in sorted(set(x86) & set(arm)):
        out.images += 1
        a, b = x86[image], arm[image]
        if "error" in a or "error" in b:
            out.problems.append(
                f"{image}: x86 {a.get('error', 'read')}, arm64 {b.get('error', 'read')}"
            )
            continue
        rest_a = {k: v for k, v in a.items() if k not in {"dice", "image"}}
        rest_b = {k: v for k, v in b.items() if k not in {"dice", "image"}}
        _same(image, rest_a, rest_b, out)
        pairs, only_x86, only_arm = _pairs(a["dice"], b["dice"])
        out.dice += len(a["dice"])
        for die in only_x86:
            out.problems.append(f"{image}: x86 {_die_name(die)}: arm64 has no such die")
        for die in only_arm:
            out.problems.append(f"{image}: arm64 {_die_name(die)}: x86 has no such die")
        for one, other, distance in pairs:
            where = f"{image} {_die_name(one)}"
            out.max_centre = max(out.max_centre, distance)
            if distance > CENTRE_PX:
                out.problems.append(
                    f"{where}: centres {distance:.2f} px apart (allowed {CENTRE_PX})"
                )
            _same(
                where,
                {k: v for k, v in one.items() if k != "center"},
                {k: v for k, v in other.items() if k != "center"},
                out,
            )
    return out


# --- a game through the HTTP API ---------------------------------------------------------------


DROPPED = (http.client.RemoteDisconnected, ConnectionResetError)
"""How a dropped answer shows. Under qemu-user 7.2 waitress's send() now and then fails with
EFAULT (``OSError: [Errno 14] Bad address``, an emulation fault: CI's run of 2026-11-28, the
bookworm root) and closes the connection unanswered; a Pi's kernel does not do that. The
client recovers as a phone would, and the count is printed, so a real fault still shows."""
TRIES = 3


class Api:
    """A scorekeeper's phone: logs in with the PIN once, then acts with the session cookie."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        self.dropped = 0
        """Connections closed without an answer, each retried or checked (see DROPPED)."""

    def call(
        self, method: str, path: str, body: Any = None, *, timeout: float = 120, again: bool = True
    ) -> Any:
        """One request, sent again if its connection drops (``again``): every call the check
        makes may be, but a game's action (:meth:`act`) -- a GET changes nothing, a login or
        the pad's table set twice is set once, and a table created twice leaves an empty one
        that nothing compares."""
        for attempt in range(TRIES if again else 1):
            try:
                return self._once(method, path, body, timeout)
            except DROPPED:
                self.dropped += 1
                if attempt == TRIES - 1 or not again:
                    raise
                time.sleep(1)
        raise AssertionError("unreachable")

    def _once(self, method: str, path: str, body: Any, timeout: float) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with self.opener.open(request, timeout=timeout) as response:
            return json.loads(response.read())

    def act(self, table: str, action: Any, seq: int) -> int:
        """POST one action at ``seq``; the table's seq after it (every action, an undo too,
        advances it by one). If the connection drops, the seq tells whether the action landed:
        one step on means it did; none means send it again."""
        try:
            return int(
                self.call("POST", f"/api/tables/{table}/actions", action, again=False)["seq"]
            )
        except DROPPED:
            pass
        now = int(self.call("GET", f"/api/tables/{table}")["seq"])
        if now == seq + 1:
            return now
        if now != seq:
            raise RuntimeError(f"table {table} moved from seq {seq} to {now} on one action")
        return int(self.call("POST", f"/api/tables/{table}/actions", action, again=False)["seq"])

    def status(self, method: str, path: str, body: Any = None) -> int:
        try:
            self.call(method, path, body)
        except urllib.error.HTTPError as exc:
            return exc.code
        return 200


def wait_for_camera(api: Api, timeout: float) -> dict[str, Any]:
    """``GET /api/pad`` until the camera is live and the pad service has read frames."""
    deadline = time.monotonic() + timeout
    pad: dict[str, Any] = {}
    while time.monotonic() < deadline:
        pad = api.call("GET", "/api/pad")
        camera = pad.get("camera") or {}
        if pad.get("running") and camera.get("state") == "live" and pad.get("frames", 0) >= 2:
            return pad
        time.sleep(2)
    raise RuntimeError(f"the demo camera did not go live in {timeout:.0f} s: {pad}")


def play(api: Api, pin: str, game: str, players: list[str], actions: list[Any]) -> dict[str, Any]:
    """Log in, play ``actions`` at a new table, and return what must not depend on the CPU."""
    health = api.call("GET", "/api/health")
    if api.status("POST", "/api/tables", {"game": game, "players": players}) != 401:
        raise RuntimeError("a table was created without the PIN")
    if api.status("POST", "/api/login", {"pin": pin + "0"}) != 403:
        raise RuntimeError("a wrong PIN was not refused with 403")
    api.call("POST", "/api/login", {"pin": pin})
    # the camera's throws go to a table of their own, not into the scripted game
    camera_table = api.call("POST", "/api/tables", {"game": game, "players": ["Cam", "Era"]})
    api.call("POST", "/api/pad", {"table": camera_table["table"]})
    table = api.call("POST", "/api/tables", {"game": game, "players": players})["table"]
    seq = int(api.call("GET", f"/api/tables/{table}")["seq"])
    for action in actions:
        seq = api.act(table, action, seq)
    view = api.call("GET", f"/api/tables/{table}")
    log = api.call("GET", f"/api/tables/{table}/log")
    return {
        "health_ok": health.get("ok"),
        "over": view.get("over"),
        "outcome": view.get("outcome"),
        "seq": view.get("seq"),
        "state": view.get("state"),
        "log": [entry.get("action") for entry in log],
        "records": len(api.call("GET", f"/api/records?table={table}")),
    }


def compare_games(x86: dict[str, Any], arm: dict[str, Any]) -> list[str]:
    out = Comparison()
    _same("game", x86, arm, out)
    return out.problems


def pip_failure(text: str) -> str:
    """One clear line from the output of a failed install in the arm64 root."""
    missing = re.findall(r"No matching distribution found for (\S+)", text)
    if missing:
        found = re.findall(r"from versions: ([^)]*)\)", text)
        versions = f" (the versions pip saw for aarch64: {found[-1]})" if found else ""
        return (
            f"pip found no aarch64 build of {', '.join(missing)}{versions}: a dependency or pin "
            "that installs on x86 has no wheel for the Pi's CPU and Python"
        )
    if "Failed building wheel" in text or "Failed to build" in text:
        built = re.findall(r"Failed (?:building wheel for|to build) (\S+)", text)
        return (
            f"pip had no aarch64 wheel of {', '.join(built) or 'a package'} and could not build "
            "it from source (a Pi would try for hours)"
        )
    errors = [line.strip() for line in text.splitlines() if re.search(r"error|fail", line, re.I)]
    return errors[-1] if errors else "the installer failed (its output is above)"


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


def exec_without_faccessat2(command: Sequence[str]) -> None:
    """Run ``command`` (proot) with the x86-64 ``faccessat2`` syscall failing with ENOSYS.

    proot 5.1 (bookworm's) does not know that syscall (Linux 5.8), so it passes the guest's
    path through untranslated: qemu turns every aarch64 ``access()`` and bash ``[ -r ]`` /
    ``[ -x ]`` into it, which then looks at the host's file of that name, not the root's. glibc
    falls back to the old ``faccessat``, which proot translates, when the kernel says ENOSYS; a
    seccomp filter (inherited by proot and qemu) says so.
    """
    load, jump_eq, ret = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET
    audit_arch_x86_64, faccessat2, enosys = 0xC000003E, 439, 38
    program = [
        (load, 0, 0, 4),  # seccomp_data.arch
        (jump_eq, 0, 3, audit_arch_x86_64),
        (load, 0, 0, 0),  # seccomp_data.nr
        (jump_eq, 0, 1, faccessat2),
        (ret, 0, 0, 0x00050000 | enosys),  # SECCOMP_RET_ERRNO
        (ret, 0, 0, 0x7FFF0000),  # SECCOMP_RET_ALLOW
    ]
    filters = (_SockFilter * len(program))(*(_SockFilter(*line) for line in program))
    fprog = _SockFprog(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0 or libc.prctl(
        pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0
    ):
        raise OSError(ctypes.get_errno(), "cannot install the seccomp filter")
    os.execvp(command[0], list(command))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="arm64_check", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser("compare")
    cmp.add_argument("x86", type=Path)
    cmp.add_argument("arm", type=Path)
    cmp.add_argument("--label", default="arm64")
    game = sub.add_parser("game")
    game.add_argument("url")
    game.add_argument("--pin", required=True)
    game.add_argument("--script", type=Path, required=True, help="one JSON action a line")
    game.add_argument("--game", default="bar-dice")
    game.add_argument("--players", default="Ann,Bob,Cy,Dee")
    game.add_argument("--camera-timeout", type=float, default=300)
    game.add_argument("--out", type=Path, required=True)
    same = sub.add_parser("same-game")
    same.add_argument("x86", type=Path)
    same.add_argument("arm", type=Path)
    same.add_argument("--label", default="arm64")
    why = sub.add_parser("pip-failure")
    why.add_argument("log", type=Path)
    nofa = sub.add_parser("no-faccessat2")
    nofa.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    if args.command == "no-faccessat2":
        exec_without_faccessat2(args.cmd)

    if args.command == "compare":
        result = compare_readings(
            args.x86.read_text().splitlines(), args.arm.read_text().splitlines()
        )
        if result.images == 0:
            print(f"{args.label}: FAIL: no photo was read on both sides", file=sys.stderr)
            return 1
        for problem in result.problems:
            print(f"{args.label}: DIFFERS: {problem}", file=sys.stderr)
        print(
            f"{len(result.problems)} differences" if result.problems else
            f"detect {result.images} photos {result.dice} dice as on x86 "
            f"(centres within {result.max_centre:.3f} px, probabilities "
            f"{result.max_probability:.4f})"
        )  # fmt: skip
        return 1 if result.problems else 0
    if args.command == "game":
        api = Api(args.url)
        actions = [json.loads(x) for x in args.script.read_text().splitlines() if x.strip()]
        wait_for_camera(api, args.camera_timeout)
        summary = play(api, args.pin, args.game, args.players.split(","), actions)
        if api.dropped:
            print(
                f"game: {api.dropped} connection(s) dropped unanswered and recovered (see DROPPED)",
                file=sys.stderr,
            )
        args.out.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        return 0
    if args.command == "same-game":
        x86, arm = (json.loads(p.read_text()) for p in (args.x86, args.arm))
        problems = compare_games(x86, arm)
        for problem in problems:
            print(f"{args.label}: DIFFERS: {problem}", file=sys.stderr)
        if not problems:
            print(f"served a game of {len(arm['log'])} actions (over: {arm['over']}) as on x86")
        return 1 if problems else 0
    print(pip_failure(args.log.read_text(errors="replace")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
