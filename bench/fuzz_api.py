"""Hostile-input fuzzing at scale: ``tests/test_fuzz_api.py`` with thousands of examples.

Runs the property test in a pytest child with ``DICEPAD_FUZZ_EXAMPLES`` raised, then prints
what was thrown and what came back: requests sent, statuses, routes hit, and how many
well-formed actions the rules engine accepted (201) or refused (409).

    ./run bench fuzz_api [--examples 5000] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5000, help="Hypothesis examples")
    parser.add_argument("--seed", type=int, default=None, help="Hypothesis seed")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dicepad-fuzz-") as tmp:
        report = Path(tmp) / "report.json"
        env = os.environ | {
            "DICEPAD_FUZZ_EXAMPLES": str(args.examples),
            "DICEPAD_FUZZ_REPORT": str(report),
        }
        cmd = [sys.executable, "-m", "pytest", "tests/test_fuzz_api.py", "-q", "-x",
               "-p", "no:cacheprovider"]  # fmt: skip
        if args.seed is not None:
            cmd.append(f"--hypothesis-seed={args.seed}")
        t0 = time.monotonic()
        code = subprocess.call(cmd, cwd=REPO, env=env)
        elapsed = time.monotonic() - t0
        if not report.exists():
            print("no report: the fuzz test did not finish", file=sys.stderr)
            return code or 1
        figures = json.loads(report.read_text())
    print(f"requests fuzzed: {figures['requests']} in {elapsed:.0f} s")
    print(f"statuses: {figures['statuses']}")
    server_errors = sum(n for s, n in figures["statuses"].items() if int(s) >= 500)
    print(f"5xx answers: {server_errors}")
    print(
        f"well-formed actions with the PIN: {figures['accepted_actions']} accepted (201), "
        f"{figures['refused_actions']} refused by the rules (409)"
    )
    print("routes hit:")
    for route, n in sorted(figures["routes"].items(), key=lambda kv: -kv[1]):
        print(f"  {n:6d}  {route}")
    print("PASS" if code == 0 else f"FAIL (pytest exit {code})")
    return code


if __name__ == "__main__":
    sys.exit(main())
