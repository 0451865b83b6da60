"""Crash safety at CI size: a real ``dicepad serve`` SIGKILLed 10 times at random moments
(mostly mid-request, sometimes during start-up), and power cuts modelled as torn writes.

The full run (``./run bench crash_harness``, 50+ kills) is the same code.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from crash_harness import (
    Ack,
    HarnessError,
    Ledger,
    Serve,
    check_server,
    kill_loop,
    torn_write_check,
)

pytestmark = pytest.mark.slow


def test_ten_sigkills_lose_no_acknowledged_action(tmp_path: Path) -> None:
    report = kill_loop(tmp_path, kills=10, seed=20261122, max_delay=0.4)
    assert report.kills == 10
    # the client really was posting between the kills: about one a kill at the least (a machine
    # busy with two training runs acknowledged exactly 20, which "more than 20" failed)
    assert report.acknowledged >= report.kills
    assert report.cut_mid_request >= 1  # and at least one kill landed mid-request
    assert report.tables >= 1

    # The check has teeth: an acknowledged action that is not in the log is caught.
    server = Serve(tmp_path / "data", tmp_path / "teeth.log")
    try:
        assert check_server(server.port, report.ledger) == report.landed_unacknowledged
        last = report.ledger.acks[-1]
        forged = Ack(last.table, last.seq + 1000, {"type": "bank"})
        lying = replace(report.ledger, acks=[*report.ledger.acks, forged])
        with pytest.raises(HarnessError, match="lost"):
            check_server(server.port, lying)
        with pytest.raises(HarnessError, match="gone"):
            check_server(server.port, Ledger(tables=["zzzzzz"]))
    finally:
        server.kill()


def test_torn_writes_never_leave_an_unreadable_database(tmp_path: Path) -> None:
    report = torn_write_check(tmp_path, seed=7, variants=4)
    # 4 cuts, 4 garbled tails, 4 appended tails, and a torn main-file page
    assert report.variants == 13
    assert report.served == 2
    assert report.last_write_kept + report.last_write_lost == report.variants
    assert report.cut_before_ack_detected  # a lost acknowledged commit would be caught
