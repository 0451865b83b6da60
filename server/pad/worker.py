"""The house set's worker: the ONE thread that loads the set in ``DATA/house/``, saves the
changes queued to it, fits the house model and works out the held-back figure
(:class:`HouseWorker`, the base of :class:`~server.pad.house.PadHouse`; the rules it keeps are
in :mod:`server.pad.house`'s docstring).

Apart from the facade because it owns different state: the set, its model, the job queue and
the thread, where the facade owns the views held for fixes, answers and the teaching page. The
camera's thread and the phones' requests reach it only through :meth:`HouseWorker._queue`
(a :class:`Change`, :data:`LOAD` or :data:`HELD`), so a throw is never delayed by a fit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.health import Health

if TYPE_CHECKING:
    from vision.house import HouseModel, HouseSet
    from vision.house.learn import HeldBack
    from vision.nets import Net
    from vision.params import DetectorParams

log = logging.getLogger(__name__)

STOP_S = 10.0  #: how long ``stop`` waits for a fit under way
POLL_S = 10.0
"""How often the worker looks whether the set's file changed under it (``dicepad dice learn``
or ``forget`` on the running server's folder, a damaged set repaired): it is then read and
fitted again."""
WATCH_S = 1800.0
"""The held-back figure is worked out after each fit while the teaching page was opened
within this long: a bar that never opens it never pays for it."""


def _seq_of(ref: str, table: str) -> int | None:
    """The seq in ``ref`` when it names an event of ``table``."""
    name, _, seq = ref.rpartition("/")
    return int(seq) if name == table and seq.isdigit() else None


@dataclass(frozen=True)
class Change:
    """One change to the set: drop the fixes' and answers' examples of ``table`` whose seq
    lies in ``drop`` (from, below; None: no bound) and the examples named in ``remove``, then
    add ``add``."""

    table: str
    drop: tuple[int, int | None] | None
    add: tuple[Any, ...] = ()  # vision.house.Example
    remove: tuple[str, ...] = ()  # example ids


LOAD = object()
STOP = object()
HELD = object()  # work out the held-back figure of the set kept now


class HouseWorker:
    """The house set in ``folder`` and its model, kept by one worker thread (module docstring);
    :class:`~server.pad.house.PadHouse` is the whole of it.

    ``models_dir``: the reader's networks (None: the shipped ones); ``params``: the reader's
    (the patch each die is cut to); ``limit``: the most examples kept."""

    def __init__(
        self,
        folder: Path,
        *,
        health: Health | None = None,
        models_dir: str | None = None,
        params: DetectorParams | None = None,
        limit: int | None = None,
    ) -> None:
        from vision.house import MAX_EXAMPLES
        from vision.params import DetectorParams

        self.folder = Path(folder)
        self._health = health
        self._models_dir = models_dir
        self._params = params or DetectorParams()
        self._limit = MAX_EXAMPLES if limit is None else limit
        self._set: HouseSet | None = None  # None until loaded, and for good when damaged
        self._model: HouseModel | None = None
        self._net: Net | None = None
        self._problem: str | None = None
        self._stamp: tuple[int, int] | None = None  # the set's file as last read or written
        self._jobs: list[object] = []
        self._busy = 0  # jobs queued or under way
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._changes = 0  # changes queued ...
        self._kept = 0  # ... and handled by the worker (saved, or refused)
        self._watched = -1e18  # monotonic: when the teaching page last asked for progress
        self._held: tuple[HouseSet, HeldBack | None, str | None] | None = None
        self._held_queued = False
        self._queue(LOAD)

    # -- running ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker (it loads the set and its model first); idempotent."""
        with self._wake:
            if self._thread is not None or self._closed:
                return
            self._thread = threading.Thread(target=self._run, name="dicepad-house", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = STOP_S) -> None:
        """Stop the worker once the changes queued are kept; idempotent."""
        with self._wake:
            if self._closed:
                return
            self._closed = True
            self._jobs.append(STOP)
            self._busy += 1
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("the house worker did not stop within %.1f s", timeout)

    def wait(self, timeout: float = 60.0) -> bool:
        """Block until every queued change is kept and fitted (tests); False on timeout."""
        return self._await(lambda: not self._busy, timeout)

    def _await(self, done: Callable[[], bool], timeout: float) -> bool:
        """Block until ``done()`` (checked under the worker's lock, on each of its wake-ups);
        False on timeout or with no worker."""
        deadline = time.monotonic() + timeout
        with self._wake:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None:
                    return False
                self._wake.wait(left)
        return True

    @property
    def model(self) -> HouseModel | None:
        """The house model to read with now (None: none fitted, or not yet)."""
        return self._model

    # -- the worker ---------------------------------------------------------------------------

    def _queue(self, job: object) -> int:
        """Queue ``job`` for the worker; the ticket of the last change queued."""
        with self._wake:
            if self._closed:
                return self._changes
            if isinstance(job, Change):
                self._changes += 1
            self._jobs.append(job)
            self._busy += 1
            self._wake.notify_all()
            return self._changes

    def _run(self) -> None:
        with contextlib.suppress(AttributeError, OSError):  # Linux: this thread 10 nicer, so
            # a fit yields the CPU to the camera's thread and the phones' requests
            me = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + 10))
        while True:
            with self._wake:
                if not self._jobs:
                    self._wake.wait(POLL_S)
                jobs, self._jobs = self._jobs, []
            if not jobs:  # a quiet while: has someone changed the folder (dicepad dice)?
                jobs_here: list[object] = [LOAD] if self._stamp_now() != self._stamp else []
                try:
                    self._work(jobs_here)
                except Exception:
                    log.exception("house: the folder could not be read again")
                continue
            try:
                self._work([j for j in jobs if j is not STOP])
            except Exception:  # the worker outlives any one change's trouble
                log.exception("house: a change could not be kept")
            finally:
                with self._wake:
                    self._busy -= len(jobs)
                    self._wake.notify_all()
            if STOP in jobs:
                return

    def _work(self, jobs: list[object]) -> None:
        """Apply the queued changes at once: one save and one fit for a burst of them (on the
        set in the folder now: ``dicepad dice learn`` or ``forget`` may have changed it)."""
        changes = [j for j in jobs if isinstance(j, Change)]
        if HELD in jobs:
            with self._wake:
                self._held_queued = False
        try:
            stale = changes and self._stamp_now() != self._stamp
            loaded = (LOAD in jobs or bool(stale)) and self._load()
            if self._set is None:
                if changes:
                    log.warning("house: %d change(s) not kept: %s", len(changes), self._problem)
                return
            changed = False
            if changes:
                from vision.house import save_set

                house = self._set
                for change in changes:
                    house = self._changed(house, change)
                if house.digest() != self._set.digest():
                    save_set(self.folder, house)
                    self._set, self._stamp, changed = house, self._stamp_now(), True
                    log.info("house: %d examples kept in %s", len(house), self.folder)
        finally:  # kept, or never to be: whoever waits for them may go on
            if changes:
                with self._wake:
                    self._kept += len(changes)
                    self._wake.notify_all()
        if changed or loaded:
            self._fit()
        watched = time.monotonic() - self._watched < WATCH_S
        if HELD in jobs or ((changed or loaded) and watched):
            self._held_back()

    def _held_back(self) -> None:
        """Work out how well a house model reads the examples it held back, for the set kept
        now (the teaching page's figure); once per set."""
        from vision.house.learn import held_back

        house = self._set
        if house is None or (self._held is not None and self._held[0] is house):
            return
        try:
            back = held_back(  # the model fitted on this set has it already
                house, self._value_net(), floor=self._params.house_confidence, model=self._model
            )
        except Exception as exc:  # no models, an old value network: no figure
            self._held = (house, None, f"no held-back figure: {exc}")
            log.warning("house: %s", self._held[2])
            return
        self._held = (house, back, None)

    def _changed(self, house: HouseSet, change: Change) -> HouseSet:
        if change.remove:
            house = house.without(ids=change.remove)
        if change.drop is not None:
            low, below = change.drop
            gone = []
            for e in house.examples:
                seq = None if e.origin == "learn" else _seq_of(e.ref, change.table)
                if seq is not None and seq >= low and (below is None or seq < below):
                    gone.append(e.id)
            house = house.without(ids=gone)
        return house.added(change.add, limit=self._limit) if change.add else house

    def _load(self) -> bool:
        from vision.house import HouseFolderError, load_set

        self._stamp = self._stamp_now()  # read again only once the file changes
        try:
            self._set = load_set(self.folder)
        except HouseFolderError as exc:  # damaged: never the server's start
            self._set, self._model = None, None
            self._problem = (
                f"the house folder {self.folder} is damaged ({exc}): the camera reads without"
                " the house's dice, and fixes are not kept until it is repaired or moved away"
            )
            log.error("house: %s", self._problem)
            self._report()
            return False
        return True

    def _fit(self) -> None:
        """Fit the house model on the set kept (or take the cached fit) and swap it in."""
        from vision.house import house_model
        from vision.house.model import MIN_EXAMPLES

        assert self._set is not None
        model: HouseModel | None = None
        self._problem = None
        if len(self._set) >= MIN_EXAMPLES:
            try:
                model = house_model(self.folder, self._value_net())
            except Exception as exc:  # no models, an old value network: read without it
                self._problem = f"no house model: {exc}"
                log.warning("house: %s", self._problem)
        self._model = model
        self._report()

    def _stamp_now(self) -> tuple[int, int] | None:
        """When and how big the set's file is now (None: there is none)."""
        from vision.house.store import EXAMPLES_FILE

        try:
            st = (self.folder / EXAMPLES_FILE).stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def _value_net(self) -> Net:
        """The value network for fitting: its own session, so a fit never waits for the
        reader's lock nor holds it."""
        if self._net is None:
            from vision.nets import MODELS_DIR, VALUE_FILE, read_onnx

            folder = MODELS_DIR if self._models_dir is None else Path(self._models_dir)
            self._net = read_onnx(folder / VALUE_FILE)
        return self._net

    # -- what it says -------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """For ``GET /api/pad``: the set's size (examples, per face, not a die), whether a
        house model reads, and why not when something is wrong."""
        house, counts = self._set, None
        if house is not None:
            counts = house.counts()
        return {
            "examples": 0 if house is None else len(house),
            "per_face": {str(v): 0 if counts is None else counts[v] for v in range(1, 7)},
            "not_dice": 0 if counts is None else counts[0],
            "model": self._model is not None,
            "problem": self._problem,
        }

    def _report(self) -> None:
        if self._health is None:
            return
        if self._set is None:
            self._health.report("house", False, self._problem or "not loaded")
            return
        faces = self._set.counts()
        size = f"{len(self._set)} examples ({', '.join(f'{v}: {faces[v]}' for v in range(1, 7))})"
        if self._problem is not None:
            self._health.report("house", False, f"{size}; {self._problem}")
        elif self._model is None:
            self._health.report("house", True, f"{size}: too few to fit a house model yet")
        else:
            self._health.report("house", True, f"{size}: the camera reads with the house model")
