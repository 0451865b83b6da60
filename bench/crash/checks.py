"""The checks after every kill: the database file's integrity (on a copy), every acknowledged
action in its log, every state its log's replay through the rules engine."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crash.client import Ledger
from crash.serve import DB_NAME, HarnessError, get
from scoring import games
from scoring.actions import action_from_json
from scoring.history import replay


@contextlib.contextmanager
def copy_of(db: Path) -> Iterator[Path]:
    """A throw-away copy of the database file and its WAL (not the ``-shm`` index).

    Checks run on the copy because closing the last connection to a WAL database checkpoints
    it: checking the original would hand the next server a tidied file instead of the one
    the crash left behind.
    """
    with tempfile.TemporaryDirectory(prefix="dicepad-check-") as tmp:
        copy = Path(tmp) / DB_NAME
        shutil.copyfile(db, copy)
        wal = db.with_name(f"{DB_NAME}-wal")
        if wal.exists():
            shutil.copyfile(wal, copy.with_name(f"{DB_NAME}-wal"))
        yield copy


def integrity(db: Path) -> str:
    """``PRAGMA integrity_check`` of (a copy of) a database nobody else has open."""
    with copy_of(db) as copy:
        conn = sqlite3.connect(copy, timeout=5)
        try:
            return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
        finally:
            conn.close()


def replayed_state(view: dict[str, Any], log: list[dict[str, Any]]) -> Any:
    """The table's state as the rules engine replays its log (independent of the server)."""
    game = games.find(view["game"])
    setup = view["setup"]
    if "teams" in setup:
        start = game.new(teams=setup["teams"], rules=view["rules"])
    else:
        start = game.new(players=setup["players"], rules=view["rules"])
    state = replay(game, start, [action_from_json(e["action"]) for e in log])
    return game.state_to_json(state)


def check_server(port: int, ledger: Ledger) -> int:
    """Every acknowledged action is there, and every state is its log's replay. Returns the
    number of log entries that were never acknowledged (cut mid-request, yet committed)."""
    unacknowledged = 0
    listed = {t["table"] for t in get(port, "/api/tables?limit=10000")}
    for table in ledger.tables:
        if table not in listed:
            raise HarnessError(f"table {table} was acknowledged but is gone")
        view = get(port, f"/api/tables/{table}")
        log = get(port, f"/api/tables/{table}/log")
        seqs = [e["seq"] for e in log]
        if seqs != list(range(1, len(log) + 1)) or view["seq"] != len(log):
            raise HarnessError(f"table {table}: log seqs {seqs[:5]}... vs seq {view['seq']}")
        acked = {a.seq: a.action for a in ledger.acks if a.table == table}
        for seq, action in acked.items():
            if seq > len(log) or log[seq - 1]["action"] != action:
                raise HarnessError(f"table {table}: acknowledged action {seq} {action} lost")
        unacknowledged += len(log) - len(acked)
        if replayed_state(view, log) != view["state"]:
            raise HarnessError(f"table {table}: the state is not the replay of its log")
    return unacknowledged
