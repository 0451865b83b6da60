"""Warm the coach's Farkle policies in the background, so a scoreboard hint is a lookup.

A hint for You Blew It or Bolo needs the solved policies of the table's rule set (about a
second of CPU here, more on a Pi). At server start :func:`start_coach_warmup` queues every
Farkle rule set in play, and each game's default rules, on one daemon thread that loads them
from ``<data dir>/coach`` or solves and saves them there
(:func:`scoring.coach.solver_cache.warm`); a table created later with other rules is queued
the same way. Idle tables are left out: reading their rules would wake (replay) every game
ever abandoned, and the rare one taken up again is solved on demand. Nothing ever waits for
this thread: a hint asked before its policy is warm is solved by the request itself, exactly
as without a warm-up (the coach memoises per process).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask

from scoring import games
from scoring.coach.farkle import GAMES, standard_specs
from scoring.coach.solver import FarkleSpec, Policy
from scoring.coach.solver_cache import path_for, warm
from scoring.errors import RulesError
from scoring.rules import parse_rules
from server.health import Health
from server.services import dicepad

log = logging.getLogger(__name__)

COACH_DIR = "coach"  #: under the data directory
#: the warm-up thread's niceness above the server's: on a Pi's few cores the pad loop and
#: the phones' requests come first (Linux schedules each thread on its own)
NICE = 10
EXTENSION = "dicepad_coach"

Warm = Callable[[Path, Iterable[FarkleSpec]], list[Policy]]
"""``scoring.coach.solver_cache.warm``'s shape: load or solve-and-save each spec."""


@dataclass(frozen=True)
class WarmStats:
    """What the warm-up has done so far (``GET /api/health`` shows it as ``coach``)."""

    loaded: int = 0  #: policies read back from disk
    saved: int = 0  #: policies solved (or found in this process's memory) and saved
    failed: int = 0  #: rule sets whose warm-up raised (logged; hints solve on demand)
    pending: int = 0  #: rule sets queued or in progress
    seconds: float = 0.0  #: time spent warming

    def text(self) -> str:
        done = (
            f"{self.loaded} loaded from disk, {self.saved} solved and saved in {self.seconds:.1f} s"
        )
        if self.failed:
            done += f", {self.failed} rule sets failed"
        return f"coach policies: {done}" + (f"; {self.pending} queued" if self.pending else "")


class CoachWarmer:
    """One background thread loading or solving the Farkle policies of the rule sets asked
    for; :meth:`request` never blocks on it."""

    def __init__(
        self, directory: Path, *, health: Health | None = None, warm_specs: Warm = warm
    ) -> None:
        self.directory = Path(directory)
        self._health = health
        self._warm = warm_specs
        self._queue: queue.Queue[tuple[FarkleSpec, ...] | None] = queue.Queue()
        self._seen: set[tuple[FarkleSpec, ...]] = set()
        self._warmed: set[FarkleSpec] = set()  # only the warm-up thread touches it
        self._lock = threading.Condition()
        self._stats = WarmStats()
        self._thread: threading.Thread | None = None

    @property
    def stats(self) -> WarmStats:
        with self._lock:
            return self._stats

    def request(self, game_name: str, rules: Mapping[str, Any] | None = None) -> bool:
        """Queue the policies a table of ``game_name`` under ``rules`` (JSON house rules)
        needs. False when there is nothing to do: not a Farkle game, rules already asked
        for, or rules that do not parse (the table itself would refuse them)."""
        if game_name not in GAMES:
            return False
        game = games.find(game_name)
        try:
            parsed = parse_rules(game.rules_type, rules, game.rules_prefix)
        except (RulesError, ValueError) as exc:
            log.warning("coach warm-up: %s rules not understood: %s", game_name, exc)
            return False
        specs = tuple(standard_specs(parsed))
        with self._lock:
            if specs in self._seen:
                return False
            self._seen.add(specs)
            self._update(pending=self._stats.pending + 1)
        self._queue.put(specs)
        return True

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the coach warm-up is already running")
        self._thread = threading.Thread(target=self._run, name="dicepad-coach", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the rule set in progress (solving one cannot be interrupted)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until nothing is queued (tests and benchmarks; never a request)."""
        with self._lock:
            return self._lock.wait_for(lambda: self._stats.pending == 0, timeout)

    @property
    def native_id(self) -> int | None:
        """The warm-up thread's id for the OS (None before :meth:`start`)."""
        return None if self._thread is None else self._thread.native_id

    def _run(self) -> None:
        with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + NICE)
        while (specs := self._queue.get()) is not None:
            loaded = saved = failed = 0
            started = time.perf_counter()
            try:
                for spec in specs:
                    if spec in self._warmed:  # rule sets share policies (same minimum)
                        continue
                    before = _file_identity(path_for(self.directory, spec))
                    self._warm(self.directory, [spec])
                    after = _file_identity(path_for(self.directory, spec))
                    if before is not None and before == after:
                        loaded += 1
                    else:
                        saved += 1
                    self._warmed.add(spec)
            except Exception:  # the coach is advisory: a failed warm-up only costs time later
                log.exception("coach warm-up failed")
                failed = 1
            spent = time.perf_counter() - started
            with self._lock:
                s = self._stats
                self._update(
                    loaded=s.loaded + loaded,
                    saved=s.saved + saved,
                    failed=s.failed + failed,
                    pending=s.pending - 1,
                    seconds=s.seconds + spent,
                )

    def _update(self, **changes: Any) -> None:
        """Replace the stats (lock held), tell Health and wake :meth:`wait`."""
        s = self._stats
        self._stats = WarmStats(**{**s.__dict__, **changes})
        if self._health is not None:
            self._health.report("coach", self._stats.failed == 0, self._stats.text())
        self._lock.notify_all()


def _file_identity(path: Path) -> tuple[int, int] | None:
    """Inode and modification time: a policy saved again gets a new file (atomic rename)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def start_coach_warmup(app: Flask, *, warm_specs: Warm = warm) -> CoachWarmer:
    """Warm every Farkle rule set of ``app``'s tables in play and each game's defaults, then
    every table created from now on; the warmer is ``app.extensions["dicepad_coach"]``."""
    parts = dicepad(app)
    warmer = CoachWarmer(
        parts.config.data_dir / COACH_DIR, health=parts.health, warm_specs=warm_specs
    )
    app.extensions[EXTENSION] = warmer
    for name in GAMES:
        warmer.request(name)
    for table in parts.tables.in_play():
        warmer.request(table["game"], parts.tables.view(table["table"])["rules"])
    parts.tables.on_create(lambda view: warmer.request(view["game"], view["rules"]))
    warmer.start()
    return warmer
