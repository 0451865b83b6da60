"""Torn writes: a power cut in the middle of a write, modelled on the database's bytes (the
WAL's tail cut, garbled or overrun, a main-file page torn in a checkpoint)."""

from __future__ import annotations

import contextlib
import random
import shutil
import signal
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crash.checks import copy_of, integrity
from crash.serve import CYCLE, DB_NAME, NEW_TABLE, HarnessError, Serve, get, request

WAL_HEADER = 32

FRAME_HEADER = 24


def wal_pages(wal: bytes) -> tuple[int, list[int]]:
    """(page size, the page number of each frame) of a WAL file's bytes."""
    page_size = int.from_bytes(wal[8:12], "big")
    frame = FRAME_HEADER + page_size
    count = (len(wal) - WAL_HEADER) // frame
    pages = [
        int.from_bytes(wal[WAL_HEADER + i * frame : WAL_HEADER + i * frame + 4], "big")
        for i in range(count)
    ]
    return page_size, pages


def read_log(db: Path) -> list[tuple[str, int, str]]:
    """Every event (table, seq, payload), straight from (a copy of) the file."""
    with copy_of(db) as copy:
        conn = sqlite3.connect(copy, timeout=5)
        try:
            rows = conn.execute("SELECT table_id, seq, payload FROM events ORDER BY table_id, seq")
            return [(str(t), int(s), str(p)) for t, s, p in rows]
        finally:
            conn.close()


@contextlib.contextmanager
def crafted(work: Path, name: str, main: bytes, wal: bytes) -> Iterator[Path]:
    """A data directory holding exactly these bytes (no ``-shm``: after a power cut the
    shared-memory index is gone, and SQLite rebuilds it from the WAL)."""
    d = work / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    (d / DB_NAME).write_bytes(main)
    (d / f"{DB_NAME}-wal").write_bytes(wal)
    try:
        yield d / DB_NAME
    finally:
        shutil.rmtree(d, ignore_errors=True)


@dataclass
class TornReport:
    variants: int = 0
    last_write_kept: int = 0
    last_write_lost: int = 0
    served: int = 0
    #: the check has teeth: a WAL cut inside the ACKNOWLEDGED part (what a missing fsync
    #: would leave after a power cut) is seen as lost events
    cut_before_ack_detected: bool = False

    def lines(self) -> list[str]:
        return [
            f"torn-write variants opened: {self.variants} (the write in flight kept in "
            f"{self.last_write_kept}, lost in {self.last_write_lost}; never anything older)",
            f"of which started as a real `dicepad serve` and read through the API: {self.served}",
        ]


def _post_actions(port: int, table: str, count: int, start_seq: int) -> None:
    for i in range(count):
        action = CYCLE[(start_seq + i) % len(CYCLE)]
        status, body = request(port, "POST", f"/api/tables/{table}/actions", action)
        if status != 201:
            raise HarnessError(f"torn-write set-up: {action} refused: {status} {body}")


def torn_write_check(work: Path, *, seed: int, variants: int = 12) -> TornReport:
    """Model a power cut in the middle of a write, in the three places it can tear.

    1. Session one writes actions and stops cleanly (SQLite checkpoints into the main file).
    2. Session two writes more (acknowledged) and is SIGKILLed: the "before" image, main file
       plus WAL, every frame committed.
    3. Session three writes ONE more action (the write in flight) and is SIGKILLed: its bytes
       are the WAL's tail beyond the "before" image.

    Then: the WAL cut at random points inside that tail, the tail overwritten with garbage,
    random bytes appended after the last commit, and a main-file page torn as if a checkpoint
    were interrupted (its good copy is still in the WAL). Each must open with
    ``integrity_check`` ok and every event of the "before" image intact; the write in flight
    may be there or not.
    """
    rng = random.Random(seed)
    data = work / "torn-data"
    db = data / DB_NAME
    wal_path = data / f"{DB_NAME}-wal"
    server = Serve(data, work / "torn-1.log")
    try:
        _, table = request(server.port, "POST", "/api/tables", NEW_TABLE)
        table_id = table["table"]
        _post_actions(server.port, table_id, 12, 0)
    finally:
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=30)
    server = Serve(data, work / "torn-2.log")
    try:
        _post_actions(server.port, table_id, 6, 12)
    finally:
        server.kill()
    before_main, before_wal = db.read_bytes(), wal_path.read_bytes()
    before_log = read_log(db)
    server = Serve(data, work / "torn-3.log")
    try:
        _post_actions(server.port, table_id, 1, 18)
    finally:
        server.kill()
    after_main, after_wal = db.read_bytes(), wal_path.read_bytes()
    if after_main != before_main or after_wal[: len(before_wal)] != before_wal:
        raise HarnessError("the WAL was reset or checkpointed between the sessions")
    if len(after_wal) <= len(before_wal):
        raise HarnessError("the write in flight left no bytes in the WAL")
    page_size, pages = wal_pages(after_wal)
    frame = FRAME_HEADER + page_size
    lo, hi = len(before_wal), len(after_wal)

    cases: list[tuple[str, bytes, bytes]] = []
    for i in range(variants):
        cut = rng.randrange(lo, hi)
        if i % 3 == 0:  # exactly on a frame boundary: whole frames, no commit frame
            cut = lo + ((cut - lo) // frame) * frame
        cases.append((f"cut{i}", after_main, after_wal[:cut]))
        garbled = bytearray(after_wal[:cut])
        for _ in range(rng.randint(1, 64)):
            if len(garbled) > lo:
                garbled[rng.randrange(lo, len(garbled))] ^= rng.randrange(1, 256)
        cases.append((f"garbled{i}", after_main, bytes(garbled)))
        cases.append((f"appended{i}", after_main, after_wal + rng.randbytes(rng.randrange(frame))))
    main_pages = len(after_main) // page_size
    in_both = sorted({p for p in pages[: (lo - WAL_HEADER) // frame] if p <= main_pages})
    if in_both:  # a checkpoint torn while copying page p back: the WAL still has it
        p = in_both[-1]
        torn = bytearray(after_main)
        start = (p - 1) * page_size
        torn[start + page_size // 2 : start + page_size] = rng.randbytes(page_size // 2)
        cases.append(("torn-main-page", bytes(torn), after_wal))

    report = TornReport()
    before_set = set(before_log)
    # Cut whole frames off the acknowledged part, the latest first, until a cut loses an event:
    # the last frames may hold only derived rows written after the last action (the players'
    # worker), which no event needs; a cut into the events must then be seen as lost ones.
    for cut in range(lo - frame, WAL_HEADER - 1, -frame):
        with crafted(work, "cut-acknowledged", after_main, after_wal[:cut]) as path:
            if not before_set <= set(read_log(path)):
                report.cut_before_ack_detected = True
                break
    for name, main, wal in cases:
        with crafted(work, name, main, wal) as path:
            result = integrity(path)
            if result != "ok":
                raise HarnessError(f"{name}: integrity_check says {result}")
            log = read_log(path)
            if not before_set <= set(log):
                raise HarnessError(f"{name}: an acknowledged event is missing")
            extra = len(log) - len(before_log)
            if extra not in (0, 1):
                raise HarnessError(f"{name}: {extra} events beyond the last acknowledged one")
            report.variants += 1
            report.last_write_kept += extra
            report.last_write_lost += 1 - extra
        if name in ("garbled0", "torn-main-page"):
            with crafted(work, name, main, wal) as path:
                server = Serve(path.parent, work / f"torn-{name}.log")
                try:
                    got = get(server.port, f"/api/tables/{table_id}/log")
                    if len(got) < 18:
                        raise HarnessError(f"{name}: the API shows {len(got)} events")
                    report.served += 1
                finally:
                    server.kill()
    return report
