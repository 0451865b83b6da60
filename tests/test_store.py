"""The SQLite event store: schema and migration, append-only log, crash safety."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.rows import EventRow, RecordRow, TableRow
from server.schema import MIGRATIONS, SCHEMA_VERSION
from server.store import Store, StoreError

REPO = Path(__file__).resolve().parent.parent


def _table(store: Store, table_id: str = "t1") -> TableRow:
    row = TableRow(table_id, "bolo", {"players": ["Ann", "Bob"]}, {}, "2026-01-01T20:00:00")
    assert store.create_table(row)
    return row


def _event(seq: int, table_id: str = "t1", dice: tuple[int, ...] = (1, 1, 1, 5, 2)) -> EventRow:
    return EventRow(
        table_id,
        seq,
        f"2026-01-01T20:{seq:02d}:00",
        "phone",
        "roll",
        {"type": "roll", "dice": list(dice)},
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "d.sqlite3")
    yield s
    s.close()


def test_schema_is_created_with_wal_full_sync_and_foreign_keys(store: Store) -> None:
    assert store.schema_version == SCHEMA_VERSION
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    assert store._query("PRAGMA synchronous")[0][0] == 2  # FULL
    assert store._query("PRAGMA foreign_keys")[0][0] == 1
    assert store.integrity_check() == "ok"


def test_reopen_does_not_migrate_twice_and_keeps_data(tmp_path: Path) -> None:
    s = Store(tmp_path / "d.sqlite3")
    _table(s)
    s.append(_event(1))
    s.close()
    again = Store(tmp_path / "d.sqlite3")
    assert again.schema_version == SCHEMA_VERSION
    assert [e.seq for e in again.events("t1")] == [1]
    assert again.table("t1") is not None
    again.close()


def test_hides_made_before_they_kept_the_record_s_words_still_hide_it(tmp_path: Path) -> None:
    """A database from before hides kept what the record said: its hides are filled in from
    the records at the upgrade, so the record stays hidden, and a hide whose record is gone
    still matches by id alone."""
    db = sqlite3.connect(tmp_path / "dicepad.db")
    for statement in (s for migration in MIGRATIONS[:3] for s in migration):
        db.execute(statement)
    db.execute("PRAGMA user_version = 3")
    db.execute("INSERT INTO tables VALUES ('t1', 'bolo', '{}', '{}', '2026-11-01T20:00:00Z', NULL)")
    db.execute(
        "INSERT INTO records VALUES ('t1.4.0', 't1', 4, 'bolo', 'roll', 'Ann', 3000,"
        " '[1, 1, 1, 1, 1]', 'five aces', '2026-11-01T20:01:00Z', NULL)"
    )
    db.execute("INSERT INTO hidden_records VALUES ('t1.4.0', '2026-11-01T20:02:00Z')")
    db.execute("INSERT INTO hidden_records VALUES ('t1.9.0', '2026-11-01T20:03:00Z')")
    db.commit()
    db.close()
    store = Store(tmp_path / "dicepad.db")
    try:
        (row,) = store.records(include_hidden=True)
        assert row.hidden
        assert store.records() == []
        look = sqlite3.connect(tmp_path / "dicepad.db")
        try:
            kept = look.execute(
                "SELECT id, kind, player, points, dice FROM hidden_records ORDER BY id"
            ).fetchall()
        finally:
            look.close()
        assert kept == [
            ("t1.4.0", "roll", "Ann", 3000, "[1, 1, 1, 1, 1]"),
            ("t1.9.0", None, None, None, None),
        ]
    finally:
        store.close()


def test_a_newer_database_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="newer than this dicepad"):
        Store(path)


def test_a_file_that_is_not_a_database_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    path.write_bytes(b"this is not a database, it is a shopping list" * 100)
    with pytest.raises(StoreError, match="cannot use the database"):
        Store(path)


def test_the_log_is_append_only(store: Store) -> None:
    _table(store)
    store.append(_event(1))
    with pytest.raises(sqlite3.IntegrityError):
        store.append(_event(1, dice=(6, 6, 6, 6, 6)))  # a taken seq never overwrites
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store._db.execute("UPDATE events SET payload = '{}'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store._db.execute("DELETE FROM events")
    assert [e.payload["dice"] for e in store.events("t1")] == [[1, 1, 1, 5, 2]]


def test_an_event_needs_its_table_and_a_known_source(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.append(_event(1, table_id="nope"))
    _table(store)
    with pytest.raises(ValueError, match="source"):
        store.append(EventRow("t1", 1, "x", "telepathy", "bank", {"type": "bank"}))


def test_append_is_one_transaction_with_its_snapshot_and_records(store: Store) -> None:
    _table(store)
    rec = RecordRow("t1.1.0", "t1", 1, "bolo", "roll", "Ann", 5000, (6,) * 5, "five 6s", "x", 1)
    store.append(_event(1), snapshot=b"\xff\xd8\xffjpeg", records=[rec])
    # A failing append (duplicate record id) leaves nothing behind: no event, no snapshot.
    with pytest.raises(sqlite3.IntegrityError):
        store.append(_event(2), snapshot=b"\xff\xd8\xffjpeg2", records=[rec])
    assert [e.seq for e in store.events("t1")] == [1]
    assert store.events("t1")[0].snapshot
    assert store.snapshot("t1", 1) == b"\xff\xd8\xffjpeg"
    assert store.snapshot("t1", 2) is None


def test_records_queries_hiding_and_rebuild(store: Store) -> None:
    _table(store)
    store.append(_event(1))
    rows = [
        RecordRow("t1.1.0", "t1", 1, "bolo", "roll", "Ann", 5000, (6,) * 5, "a", "2026-01-01"),
        RecordRow("t1.1.1", "t1", 1, "bolo", "high_roller", "Ann", 5000, (6,) * 5, "b", "x"),
        RecordRow("t1.1.2", "t1", 1, "bolo", "roll", "Bob", 9000, (1,) * 5, "c", "2026-01-02"),
    ]
    store.rederive({"t1": rows})
    assert [r.id for r in store.records(game="bolo", kind="roll")] == ["t1.1.2", "t1.1.0"]
    assert [r.id for r in store.records(min_points=6000)] == ["t1.1.2"]
    store.set_hidden("t1.1.2", True, "now")
    assert [r.id for r in store.records(kind="roll")] == ["t1.1.0"]
    hidden = store.records(kind="roll", include_hidden=True)
    assert [(r.id, r.hidden) for r in hidden] == [("t1.1.2", True), ("t1.1.0", False)]
    store.rederive({"t1": rows})  # a rebuild keeps the PIN holder's decision
    assert [r.id for r in store.records(kind="roll")] == ["t1.1.0"]
    store.set_hidden("t1.1.2", False, "now")
    assert len(store.records(kind="roll")) == 2


def _copy_crashed(store: Store, dest: Path) -> Path:
    """What a power cut leaves: the database and its WAL as they are on disk right now."""
    dest.mkdir()
    for suffix in ("", "-wal"):
        src = Path(str(store.path) + suffix)
        if src.exists():
            shutil.copyfile(src, dest / (src.name))
    return dest / store.path.name


@pytest.mark.parametrize("damage", ["truncate", "garble"])
def test_a_torn_last_write_loses_only_that_write(tmp_path: Path, damage: str) -> None:
    live = Store(tmp_path / "d.sqlite3")
    _table(live)
    for seq in range(1, 21):
        live.append(_event(seq))
    crashed = _copy_crashed(live, tmp_path / "crash")
    live.close()
    wal = Path(str(crashed) + "-wal")
    size = wal.stat().st_size
    assert size > 0
    with wal.open("r+b") as f:
        if damage == "truncate":  # the last frame only half written
            f.truncate(size - 2000)
        else:  # the tail is noise: checksums no longer match
            f.seek(size - 1500)
            f.write(os.urandom(1500))
    reopened = Store(crashed)
    assert reopened.integrity_check() == "ok"
    seqs = [e.seq for e in reopened.events("t1")]
    assert seqs == list(range(1, len(seqs) + 1))  # a prefix of the log, nothing scrambled
    assert 15 <= len(seqs) < 20
    reopened.append(_event(len(seqs) + 1))  # and it takes new writes
    reopened.close()


WRITER = """
import sys
from server.rows import EventRow, TableRow
from server.store import Store
s = Store(sys.argv[1])
s.create_table(TableRow("t1", "bolo", {"players": ["A"]}, {}, "x"))
seq = 0
while True:
    seq += 1
    s.append(EventRow("t1", seq, "x", "camera", "roll", {"type": "roll", "dice": [seq % 6 + 1]}))
    if seq == 50:
        print("going", flush=True)
"""


def test_a_writer_killed_mid_stream_leaves_a_readable_prefix(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "going"
        time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    store = Store(path)
    assert store.integrity_check() == "ok"
    seqs = [e.seq for e in store.events("t1")]
    assert len(seqs) >= 50
    assert seqs == list(range(1, len(seqs) + 1))
    assert all(e.payload["dice"] == [e.seq % 6 + 1] for e in store.events("t1"))
    store.close()
