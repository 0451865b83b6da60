"""The kill loop: start, post, SIGKILL, check, restart, check, ``kills`` times."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from crash.checks import check_server, integrity
from crash.client import Ledger, Poster
from crash.serve import DB_NAME, HarnessError, Serve


@dataclass
class Report:
    kills: int = 0
    kills_during_startup: int = 0
    acknowledged: int = 0
    cut_mid_request: int = 0
    landed_unacknowledged: int = 0
    tables: int = 0
    restart_s: list[float] = field(default_factory=list)
    ledger: Ledger = field(default_factory=Ledger)

    def lines(self) -> list[str]:
        restart = sorted(self.restart_s)
        median = restart[len(restart) // 2] if restart else 0.0
        return [
            f"SIGKILLs survived: {self.kills} ({self.kills_during_startup} during start-up)",
            f"requests cut mid-flight by the kill: {self.cut_mid_request}"
            f" (of which committed but never acknowledged: {self.landed_unacknowledged})",
            f"acknowledged actions, all present after every restart: {self.acknowledged}"
            f" on {self.tables} tables",
            f"restart to listening: median {median:.2f} s, max {max(restart, default=0):.2f} s",
            "every restart: integrity_check ok, state == replay of the log",
        ]


def kill_loop(
    work: Path,
    *,
    kills: int,
    seed: int,
    max_delay: float = 0.6,
    startup_kill_share: float = 0.15,
) -> Report:
    """``kills`` rounds of start, post, SIGKILL, check, restart, check."""
    rng = random.Random(seed)
    data = work / "data"
    report = Report()
    ledger = report.ledger
    for round_no in range(kills):
        log = work / f"serve-{round_no}.log"
        if round_no and rng.random() < startup_kill_share:
            server = Serve(data, log, wait=False)  # killed while replaying the logs
            time.sleep(rng.uniform(0.0, 1.0))
            server.kill()
            report.kills_during_startup += 1
        else:
            t0 = time.monotonic()
            server = Serve(data, log)
            report.restart_s.append(time.monotonic() - t0)
            if round_no:
                report.landed_unacknowledged = check_server(server.port, ledger)
            poster = Poster(server.port, ledger)
            poster.start()
            time.sleep(rng.uniform(0.05, max_delay))
            server.kill()
            poster.join(timeout=30)
            if poster.error is not None:
                raise HarnessError(f"round {round_no}: {poster.error!r}") from poster.error
        report.kills += 1
        result = integrity(data / DB_NAME)
        if result != "ok":
            raise HarnessError(f"round {round_no}: integrity_check says {result}")
    server = Serve(data, work / "serve-final.log")
    try:
        report.landed_unacknowledged = check_server(server.port, ledger)
    finally:
        server.kill()
    report.acknowledged = len(ledger.acks)
    report.cut_mid_request = ledger.cut_mid_request
    report.tables = len(ledger.tables)
    if ledger.refused:
        raise HarnessError(f"{ledger.refused} legal actions were refused")
    return report
