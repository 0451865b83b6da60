"""Crash harness: SIGKILL a real ``dicepad serve`` at random moments and prove nothing is lost.

Each round starts ``dicepad serve`` on 127.0.0.1 against one data directory that lives for the
whole run, lets a client thread post actions as fast as the server takes them (so most kills
land while a request is in flight), and SIGKILLs the server after a random delay; now and then
the kill lands during start-up instead (while the logs are replayed and the record wall is
rebuilt). After every kill, before the restart:

- ``PRAGMA integrity_check`` on the database file is ``ok``;

and after the restart, for every table the client ever touched:

- every ACKNOWLEDGED action (a 2xx reached the client) is in the log at the seq it was given;
- the log is 1..n without gaps, and the table's seq is n;
- the table's state equals an independent replay of its log through the rules engine
  (:func:`scoring.history.replay`, not the server's own code).

:func:`torn_write_check` then models a power cut during a write (torn WAL tail, garbage after
the last commit, a torn main-file page during a checkpoint): the database always opens and only
the unacknowledged write can be missing.

    ./run bench crash_harness [--kills 50] [--seed N] [--max-delay 0.6]

``tests/test_crash_safety.py`` runs the same code at CI size.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from crash.checks import check_server, replayed_state  # noqa: E402
from crash.client import Ack, Ledger  # noqa: E402
from crash.kill_loop import kill_loop  # noqa: E402
from crash.serve import HarnessError, Serve, get, request  # noqa: E402
from crash.torn import torn_write_check  # noqa: E402

__all__ = [  # what tests/test_crash_safety.py, test_camera_faults_e2e.py and bench_load.py use
    "Ack",
    "HarnessError",
    "Ledger",
    "Serve",
    "check_server",
    "get",
    "kill_loop",
    "replayed_state",
    "request",
    "torn_write_check",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=50, help="SIGKILL rounds (default 50)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument("--max-delay", type=float, default=0.6, help="longest run before a kill")
    parser.add_argument("--variants", type=int, default=12, help="torn-write cut points")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}", flush=True)
    with tempfile.TemporaryDirectory(prefix="dicepad-crash-") as tmp:
        t0 = time.monotonic()
        report = kill_loop(Path(tmp), kills=args.kills, seed=seed, max_delay=args.max_delay)
        for line in report.lines():
            print(line)
        torn = torn_write_check(Path(tmp), seed=seed, variants=args.variants)
        for line in torn.lines():
            print(line)
        print(f"total {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
