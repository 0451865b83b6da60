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
import contextlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from scoring import games  # noqa: E402
from scoring.actions import action_from_json  # noqa: E402
from scoring.history import replay  # noqa: E402

PIN = "24680"
SERVE = "import sys; from server.cli import main; sys.exit(main())"
DB_NAME = "dicepad.sqlite3"
NEW_TABLE = {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}
#: A cycle that is legal from the start of team A's turn and comes back to it: A scores and
#: banks, B blows, A rolls and takes it back. The next action follows from the table's seq.
CYCLE: tuple[dict[str, Any], ...] = (
    {"type": "roll", "dice": [1, 1, 1, 5, 2, 3]},
    {"type": "keep", "dice": [1, 1, 1, 5]},
    {"type": "bank"},
    {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]},
    {"type": "roll", "dice": [5, 2, 3, 4, 6, 2]},
    {"type": "undo"},
)


#: a server's "listening on URL" line; its URL and port (the line may run on into a log line)
LISTENING = r"listening on (http://[\w.\[\]:-]+:(\d+))"


class HarnessError(AssertionError):
    """An acknowledged action went missing, a state differs from its replay, or the database
    is damaged: what this harness exists to catch."""


# -- the server process ------------------------------------------------------------------


class Serve:
    """One ``dicepad serve`` child on a free loopback port (no camera unless asked)."""

    def __init__(
        self,
        data: Path,
        log: Path,
        *,
        wait: bool = True,
        camera: str = "none",
        max_clients: int = 4,
    ) -> None:
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCHDOG_"))}
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", SERVE, "serve", "--host", "127.0.0.1", "--port", "0",
                 "--data", str(data), "--camera", camera, "--max-clients", str(max_clients)],
                cwd=REPO, env=env | {"DICEPAD_PIN": PIN}, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.port = self._wait_listening() if wait else 0

    def _wait_listening(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # stdout and stderr share the log: a line may run on into a log message
            found = re.search(LISTENING, self.log.read_text())
            if found:
                return int(found.group(2))
            if self.proc.poll() is not None:
                raise HarnessError(f"serve exited:\n{self.log.read_text()}")
            time.sleep(0.02)
        self.kill()
        raise HarnessError(f"serve did not start:\n{self.log.read_text()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)


def request(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """(status, decoded JSON); connection errors propagate (the server may be dead)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"X-Dicepad-Pin": PIN}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, json.loads(payload) if payload else None
    finally:
        conn.close()


def get(port: int, path: str) -> Any:
    status, body = request(port, "GET", path)
    if status != 200:
        raise HarnessError(f"GET {path}: {status} {body}")
    return body


# -- the client --------------------------------------------------------------------------


@dataclass(frozen=True)
class Ack:
    """An action the server acknowledged (2xx): it must survive every crash."""

    table: str
    seq: int
    action: dict[str, Any]


@dataclass
class Ledger:
    """What the client knows for sure, across every round."""

    tables: list[str] = field(default_factory=list)
    acks: list[Ack] = field(default_factory=list)
    cut_mid_request: int = 0  #: requests sent whose answer never came (the kill cut them)
    refused: int = 0  #: non-2xx answers (must stay 0: every action posted is legal)


class Poster(threading.Thread):
    """Posts the next legal action of the current table until the server dies."""

    def __init__(self, port: int, ledger: Ledger) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.ledger = ledger
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._loop()
        except (ConnectionError, http.client.HTTPException, OSError):
            pass  # the kill: expected
        except BaseException as exc:  # a harness bug or a server answer we did not expect
            self.error = exc

    def _loop(self) -> None:
        ledger = self.ledger
        table = ledger.tables[-1] if ledger.tables else None
        seq = get(self.port, f"/api/tables/{table}")["seq"] if table else 0
        over = table is None or get(self.port, f"/api/tables/{table}")["over"]
        while True:
            if over:
                status, body = self._post("/api/tables", NEW_TABLE)
                if status != 201:
                    raise HarnessError(f"new table refused: {status} {body}")
                table, seq, over = body["table"], 0, False
                ledger.tables.append(table)
                continue
            action = CYCLE[seq % len(CYCLE)]
            status, body = self._post(f"/api/tables/{table}/actions", action)
            if status == 201:
                ledger.acks.append(Ack(str(table), body["seq"], body["action"]))
                seq, over = body["seq"], body["table"]["over"]
            elif status == 409 and get(self.port, f"/api/tables/{table}")["over"]:
                over = True  # the game ended: start another
            else:
                ledger.refused += 1
                raise HarnessError(f"{action} refused: {status} {body}")

    def _post(self, path: str, body: Any) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.connect()
        except OSError:
            conn.close()
            raise
        sent = False
        try:
            data = json.dumps(body)
            headers = {"X-Dicepad-Pin": PIN, "Content-Type": "application/json"}
            conn.request("POST", path, body=data, headers=headers)
            sent = True
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read())
        except (ConnectionError, http.client.HTTPException, OSError):
            if sent:
                self.ledger.cut_mid_request += 1
            raise
        finally:
            conn.close()


# -- the checks --------------------------------------------------------------------------


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


# -- the kill loop -----------------------------------------------------------------------


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


# -- torn writes -------------------------------------------------------------------------

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
