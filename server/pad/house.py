"""Every fix teaches: the house set of a running dicepad (``DATA/house/``, :mod:`vision.house`).

When a table accepts a ``fix`` of a camera roll, or a one-tap answer to the pad's question about
unsure dice, the dice of that throw join the house set with the values the player gave, each as
the value network saw it: its :func:`~vision.house.views.die_view` cut from the *raw* camera
frame (the kept JPEG has the reading drawn on it). The pad service hands over those views when
it logs a roll or asks about a throw (:meth:`PadHouse.dice`, :meth:`PadHouse.offering`,
:meth:`PadHouse.asking`); the views of the latest :data:`ROLLS_KEPT` camera rolls and of each
table's open question are held in memory, no more.

Which die gets which value (:func:`pair`): the values the reader gave that the player's dice
keep pair with their dice; the values left over pair with the dice left over only when that
cannot be a guess -- as many dice as values, and one die left or every value left the same.
Otherwise those dice are not taught.

The examples of a fix or an answer carry ``ref`` "<table>/<seq of that event>". What a later
event makes untrue goes: a second fix of the same roll replaces the first one's examples (and
an answer's), and an ``undo`` that takes back a roll takes back every example taught about it
(their refs are that roll's seq or later: fixes come after their roll). The set is bounded
(``vision.house.MAX_EXAMPLES``, the oldest go) and lives in a folder, so it survives restarts.

All the work on the set -- loading it, saving it, fitting the house model -- happens on ONE
worker thread: the camera's thread and the phones' requests only queue a change, so a throw is
never delayed by a fit, and the reader takes the newest model (:attr:`PadHouse.model`) at each
throw once it is ready. A damaged house folder never fails the start: it is logged, the
``house`` health part says why, the reader runs without a house model, and the folder is left
as it is (nothing is taught into it) for a person to repair or move away. The worker reads the
folder again whenever its set's file changes under it (:data:`POLL_S`): ``dicepad dice learn``
or ``forget`` on the running server's folder, or a damaged set repaired.

The teaching page (``/house/teach``, :mod:`server.pages.teach`) teaches on purpose: the pad
service hands over every throw the camera settles on, whatever table is on the pad or none
(:meth:`PadHouse.thrown`), and the latest :data:`THROWS_KEPT` are held, each die as the value
network saw it and as a crop of the raw frame a person can count the pips on. The PIN holder
confirms or corrects each die and :meth:`PadHouse.teach` adds them (origin ``learn``, ref
"page/<throw number>"; a throw is taught once); :meth:`PadHouse.forget` takes one bad example
out. How well the house model reads the examples it held back
(:func:`vision.house.learn.held_back`) is worked out on the worker after a fit while the page
is in use, and kept for the page (:meth:`PadHouse.progress`): a request never waits for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from scoring.actions import Fix, Roll, Undo
from server.health import Health
from server.pad.decide import split_standing
from server.standing import Standing, last_roll
from vision.reading import DieReading, Reading

if TYPE_CHECKING:
    from vision.house import Example, HouseModel, HouseSet
    from vision.house.learn import HeldBack
    from vision.nets import Net
    from vision.params import DetectorParams

log = logging.getLogger(__name__)

HOUSE_DIR = "house"  #: the house folder in the data directory
ROLLS_KEPT = 64
"""Camera (and answered) rolls whose dice views are held for a fix to come: a fix corrects the
latest standing roll, so a handful per table is plenty."""
ASKED_KEPT = 16  #: tables whose open question's views are held
STOP_S = 10.0  #: how long ``stop`` waits for a fit under way
POLL_S = 10.0
"""How often the worker looks whether the set's file changed under it (``dicepad dice learn``
or ``forget`` on the running server's folder, a damaged set repaired): it is then read and
fitted again."""
THROWS_KEPT = 8
"""Settled throws held for the teaching page: the one it shows, and those a phone may still
be answering while the camera settles on the next."""
CROP_PX = 128  #: a die's crop on the teaching page (JPEG, square): pips a person can count
CROP_SIDES = 1.8  #: ... cut this many of the die's sides wide around it from the raw frame
CROP_QUALITY = 90
RECENT_SHOWN = 12  #: the newest examples the teaching page lists, each with "remove"
RECENT_FOUND = 64  #: examples whose pictures the page may ask for (a page a little stale)
WATCH_S = 1800.0
"""The held-back figure is worked out after each fit while the teaching page was opened
within this long: a bar that never opens it never pays for it."""
PAGE_REF = "page/"  #: the ref of an example the teaching page taught: "page/<throw number>"


@dataclass(frozen=True)
class SeenDie:
    """One die of a throw as the reader saw it: the value it gave (None: asked) and the patch
    the value network was shown (None: it could not be cut)."""

    value: int | None
    view: np.ndarray | None


@dataclass(frozen=True)
class TeachDie:
    """One die of a settled throw for the teaching page: the reader's value (None: asked),
    its two best guesses, the patch the value network was shown (None: it could not be cut:
    not taught) and its crop of the raw frame (JPEG; None: none could be cut)."""

    guess: int | None
    candidates: tuple[tuple[int, float], ...]
    view: np.ndarray | None
    crop: bytes | None


@dataclass(frozen=True)
class TeachThrow:
    """A settled throw held for the teaching page; ``number`` names it (unique over
    restarts: the wall clock's milliseconds), ``at`` is when it settled (wall clock)."""

    number: int
    at: float
    dice: tuple[TeachDie, ...]


@dataclass(frozen=True)
class Taught:
    """What :meth:`PadHouse.teach` did with a throw: ``examples`` queued, or nothing because
    the throw was ``before`` taught. ``ticket`` is for :meth:`PadHouse.wait_kept`."""

    number: int
    examples: int
    before: bool
    ticket: int = 0


@dataclass(frozen=True)
class Progress:
    """What the teaching page shows of the set: examples per value (0: not a die), whether the
    camera reads with a house model, the held-back figure (None: too few examples to hold any
    back, or not worked out: ``held_state``), the newest examples."""

    examples: int
    per_value: dict[int, int]
    model: bool
    problem: str | None
    held: HeldBack | None
    held_state: str  # "ready", "working" (being worked out), "failed"
    held_problem: str | None
    recent: tuple[Example, ...] = field(default=())


def crop_of(image: np.ndarray, die: DieReading, *, px: int = CROP_PX) -> bytes:
    """A square JPEG of ``px`` around ``die`` cut from ``image``, :data:`CROP_SIDES` of its
    sides wide (past the frame's edge, the edge's pixels repeated)."""
    side = max(8, round(CROP_SIDES * max(die.size_px, 4.0)))
    centre = (float(die.center_xy[0]), float(die.center_xy[1]))
    patch = cv2.getRectSubPix(image, (side, side), centre)
    shrink = cv2.INTER_AREA if side > px else cv2.INTER_CUBIC
    patch = cv2.resize(patch, (px, px), interpolation=shrink)
    ok, buf = cv2.imencode(".jpg", patch, [cv2.IMWRITE_JPEG_QUALITY, CROP_QUALITY])
    if not ok:
        raise ValueError("the crop could not be encoded")
    return bytes(buf)


def pair(read: Sequence[int | None], given: Sequence[int]) -> list[int | None]:
    """The value the player's dice ``given`` teach each die the reader ``read`` (None: not
    taught). A value the reader gave pairs with its die when the player kept at least as many
    of it as the reader saw; the remaining dice take the remaining values only when there are
    as many dice as values in all and the remaining values are all the same (one die left and
    one value left among them): never a guess."""
    out: list[int | None] = [None] * len(read)
    left = Counter(given)
    by_value: dict[int, list[int]] = {}
    for i, value in enumerate(read):
        if value is not None:
            by_value.setdefault(value, []).append(i)
    rest = [i for i, value in enumerate(read) if value is None]
    for value, dice in by_value.items():
        if left[value] >= len(dice):
            for i in dice:
                out[i] = value
            left[value] -= len(dice)
        else:  # the reader saw more of it than the player kept: which one was wrong?
            rest.extend(dice)
    values = list(left.elements())
    if rest and len(read) == len(given) and len(set(values)) == 1:
        for i in rest:
            out[i] = values[0]
    return out


def thrown_dice(reading: Reading, standing: Sequence[DieReading]) -> tuple[DieReading, ...]:
    """The dice of ``reading`` that were thrown (those left standing on the pad for a re-roll
    the service logged are not), in the order :func:`~server.pad.decide.decide` reads them."""
    if standing:
        split = split_standing(reading.dice, standing)
        if split is not None:
            return split[0]
    return reading.dice


def _seq_of(ref: str, table: str) -> int | None:
    """The seq in ``ref`` when it names an event of ``table``."""
    name, _, seq = ref.rpartition("/")
    return int(seq) if name == table and seq.isdigit() else None


@dataclass(frozen=True)
class _Change:
    """One change to the set: drop the fixes' and answers' examples of ``table`` whose seq
    lies in ``drop`` (from, below; None: no bound) and the examples named in ``remove``, then
    add ``add``."""

    table: str
    drop: tuple[int, int | None] | None
    add: tuple[Any, ...] = ()  # vision.house.Example
    remove: tuple[str, ...] = ()  # example ids


@dataclass(frozen=True)
class _Offer:
    """What the next roll a thread logs on ``table`` was seen as (see :meth:`PadHouse.on_apply`)."""

    table: str
    dice: tuple[SeenDie, ...]
    origin: str  # "camera": held for a fix; "answer": taught at once


_LOAD = object()
_STOP = object()
_HELD = object()  # work out the held-back figure of the set kept now


class PadHouse:
    """The house set in ``folder`` and its model, kept by one worker thread (module docstring).

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
        wall: Callable[[], float] = time.time,
    ) -> None:
        from vision.house import MAX_EXAMPLES
        from vision.params import DetectorParams

        self.folder = Path(folder)
        self._health = health
        self._models_dir = models_dir
        self._params = params or DetectorParams()
        self._limit = MAX_EXAMPLES if limit is None else limit
        self._wall = wall
        self._set: HouseSet | None = None  # None until loaded, and for good when damaged
        self._model: HouseModel | None = None
        self._net: Net | None = None
        self._problem: str | None = None
        self._stamp: tuple[int, int] | None = None  # the set's file as last read or written
        self._book = threading.Lock()  # the views held for fixes and answers
        self._rolls: OrderedDict[tuple[str, int], tuple[SeenDie, ...]] = OrderedDict()
        self._asked: OrderedDict[str, tuple[int, tuple[SeenDie, ...]]] = OrderedDict()
        self._local = threading.local()
        self._jobs: list[object] = []
        self._busy = 0  # jobs queued or under way
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._throws: OrderedDict[int, TeachThrow] = OrderedDict()  # for the teaching page
        self._taught: set[int] = set()  # throws of those the page taught
        self._changes = 0  # changes queued ...
        self._kept = 0  # ... and handled by the worker (saved, or refused)
        self._watched = -1e18  # monotonic: when the teaching page last asked for progress
        self._held: tuple[HouseSet, HeldBack | None, str | None] | None = None
        self._held_queued = False
        self._queue(_LOAD)

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
            self._jobs.append(_STOP)
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

    def watch(self, tables: Any) -> None:
        """Learn from ``tables``' fixes, answers and undos (``TableService.on_apply``)."""
        tables.on_apply(self.on_apply)

    # -- what the pad service hands over ----------------------------------------------------

    def dice(self, image: np.ndarray, dice: Sequence[DieReading]) -> tuple[SeenDie, ...]:
        """``dice`` as the reader saw them in the raw frame ``image``."""
        from vision.house.views import die_view

        out = []
        for d in dice:
            try:
                view: np.ndarray | None = die_view(image, d, self._params)
            except Exception:  # a die that cannot be cut is simply not taught
                view = None
            out.append(SeenDie(d.value, view))
        return tuple(out)

    @contextlib.contextmanager
    def offering(self, table: str, dice: tuple[SeenDie, ...]) -> Iterator[None]:
        """The roll this thread logs on ``table`` meanwhile is of ``dice`` (held for a fix)."""
        with self._offer(_Offer(table, dice, "camera")):
            yield

    def asking(self, table: str, throw: int | None, dice: tuple[SeenDie, ...]) -> None:
        """The pad asks ``table`` about its throw number ``throw`` of ``dice`` (None: it asks
        nothing now; a question asked before is gone)."""
        with self._book:
            self._asked.pop(table, None)
            if throw is not None:
                self._asked[table] = (throw, dice)
                while len(self._asked) > ASKED_KEPT:
                    self._asked.popitem(last=False)

    @contextlib.contextmanager
    def answering(self, table: str, throw: object) -> Iterator[None]:
        """The roll this thread logs on ``table`` meanwhile answers the pad's question about
        throw number ``throw`` (the notice's ``throw``): its dice are taught."""
        with self._book:
            asked = self._asked.get(table)
        if asked is None or asked[0] != throw:  # another throw's question (or none held)
            yield
            return
        with self._offer(_Offer(table, asked[1], "answer")):
            yield

    @contextlib.contextmanager
    def _offer(self, offer: _Offer) -> Iterator[None]:
        self._local.offer = offer
        try:
            yield
        finally:
            self._local.offer = None

    # -- the teaching page -------------------------------------------------------------------

    def thrown(self, image: np.ndarray, reading: Reading) -> None:
        """The camera settled on ``reading`` of the raw frame ``image`` (whatever table is on
        the pad, or none): held for the teaching page. Never raises: a die that cannot be cut
        is shown or taught without it."""
        from vision.house.views import die_view

        dice = []
        for d in reading.dice:
            view: np.ndarray | None
            crop: bytes | None
            try:
                view = die_view(image, d, self._params)
            except Exception:
                view = None
            try:
                crop = crop_of(image, d)
            except Exception:
                crop = None
            dice.append(TeachDie(d.value, tuple(d.candidates), view, crop))
        now = self._wall()
        with self._book:
            last = next(reversed(self._throws), 0)
            number = max(last + 1, int(now * 1000))
            self._throws[number] = TeachThrow(number, now, tuple(dice))
            while len(self._throws) > THROWS_KEPT:
                gone, _ = self._throws.popitem(last=False)
                self._taught.discard(gone)

    def latest(self) -> tuple[TeachThrow | None, bool]:
        """The latest throw held for the teaching page (None: none yet), and whether the page
        taught it already."""
        with self._book:
            if not self._throws:
                return None, False
            throw = next(reversed(self._throws.values()))
            return throw, throw.number in self._taught

    def held_throw(self, number: int) -> TeachThrow | None:
        """The throw ``number`` if it is still held."""
        with self._book:
            return self._throws.get(number)

    def teach(self, number: int, picks: Mapping[int, int | None]) -> Taught | None:
        """Teach the dice of throw ``number`` with the values picked per die index (0: not a
        die; None: left out); a die not in ``picks`` takes the reader's value, and one with
        none is left out, as is one whose view could not be cut. None: the throw is no longer
        held. A throw is taught once: a second call adds nothing (``before``)."""
        from vision.house import NOT_A_DIE, Example

        now = self._wall()
        with self._book:
            throw = self._throws.get(number)
            if throw is None:
                return None
            if number in self._taught:
                return Taught(number, 0, True)
            add = []
            for i, die in enumerate(throw.dice):
                value = picks.get(i, die.guess)
                if value is None or die.view is None or not NOT_A_DIE <= value <= 6:
                    continue
                add.append(Example(die.view, value, "learn", f"{PAGE_REF}{number}", now))
            if add:
                self._taught.add(number)
        ticket = self._queue(_Change("", None, tuple(add))) if add else 0
        return Taught(number, len(add), False, ticket)

    def forget(self, ids: Sequence[str]) -> int:
        """Take the examples named by ``ids`` out of the set (on the worker); its ticket for
        :meth:`wait_kept`."""
        return self._queue(_Change("", None, (), tuple(ids)))

    def wait_kept(self, ticket: int, timeout: float) -> bool:
        """Block until the change with ``ticket`` (and every one before it) is kept in the set
        (saved, not necessarily fitted): the teaching page shows what it just did. False on
        timeout (the worker is busy fitting: the page says so)."""
        return self._await(lambda: self._kept >= ticket, timeout)

    @property
    def keeping(self) -> bool:
        """Changes are queued that the set does not hold yet."""
        with self._wake:
            return self._kept < self._changes

    def progress(self) -> Progress:
        """For the teaching page: the set kept now and the held-back figure last worked out
        (quick: the figure itself is the worker's, :meth:`_held_back`). Marks the page as in
        use, and queues the figure when the set changed since it was worked out."""
        self._watched = time.monotonic()
        house, held = self._set, self._held
        fresh = held is not None and house is not None and held[0] is house
        if house is not None and not fresh:
            with self._wake:
                queue, self._held_queued = not self._held_queued, True
            if queue:
                self._queue(_HELD)
        counts = house.counts() if house is not None else dict.fromkeys(range(7), 0)
        if held is not None and held[2] is not None and fresh:
            state = "failed"
        else:
            state = "ready" if fresh else "working"
        examples = () if house is None else house.examples[-RECENT_SHOWN:][::-1]
        return Progress(
            examples=0 if house is None else len(house),
            per_value=counts,
            model=self._model is not None,
            problem=self._problem,
            held=None if held is None else held[1],
            held_state=state,
            held_problem=None if held is None else held[2],
            recent=tuple(examples),
        )

    def example(self, example_id: str) -> Example | None:
        """One of the newest examples by id (the teaching page's pictures of them)."""
        house = self._set
        if house is None:
            return None
        for e in reversed(house.examples[-RECENT_FOUND:]):
            if e.id == example_id:
                return e
        return None

    @property
    def ready(self) -> bool:
        """The set is loaded and sound: the page may teach into it."""
        return self._set is not None

    # -- what the tables tell ---------------------------------------------------------------

    def on_apply(
        self, table: str, entry: Standing, before: tuple[Standing, ...], source: str
    ) -> None:
        """An action was accepted (``TableService.on_apply``, the table's lock held): note a
        roll's views, queue what a fix, an answer or an undo changes. Quick, never blocks."""
        action = entry.action
        if isinstance(action, Roll):
            offer: _Offer | None = getattr(self._local, "offer", None)
            if offer is None or offer.table != table:
                return
            self._local.offer = None  # one roll per offer
            self._hold(table, entry.seq, offer.dice)
            if offer.origin == "answer":
                self._teach(table, entry.seq, offer.dice, action.dice, "answer", None)
        elif isinstance(action, Fix):
            roll = last_roll(list(before))
            if roll is None:
                return
            with self._book:
                seen = self._rolls.get((table, roll.seq))
            self._teach(table, entry.seq, seen or (), action.dice, "fix", roll.seq)
        elif isinstance(action, Undo) and before and isinstance(before[-1].action, Roll):
            taken = before[-1].seq
            with self._book:
                for key in [k for k in self._rolls if k[0] == table and k[1] >= taken]:
                    del self._rolls[key]
            self._queue(_Change(table, (taken, None)))

    def _hold(self, table: str, seq: int, dice: tuple[SeenDie, ...]) -> None:
        with self._book:
            self._rolls[(table, seq)] = dice
            while len(self._rolls) > ROLLS_KEPT:
                self._rolls.popitem(last=False)

    def _teach(
        self,
        table: str,
        seq: int,
        seen: tuple[SeenDie, ...],
        given: Sequence[int],
        origin: str,
        replacing: int | None,
    ) -> None:
        """Queue the examples event ``seq`` teaches about ``seen``; a fix of the roll at seq
        ``replacing`` first takes out what that roll was taught before (its answer, an earlier
        fix)."""
        from vision.house import Example

        ref, now = f"{table}/{seq}", self._wall()
        values = pair([d.value for d in seen], given)
        add = tuple(
            Example(d.view, v, origin, ref, now)
            for d, v in zip(seen, values, strict=True)
            if v is not None and d.view is not None
        )
        drop = None if replacing is None else (replacing, seq)
        if add or drop is not None:
            self._queue(_Change(table, drop, add))

    # -- the worker ---------------------------------------------------------------------------

    def _queue(self, job: object) -> int:
        """Queue ``job`` for the worker; the ticket of the last change queued."""
        with self._wake:
            if self._closed:
                return self._changes
            if isinstance(job, _Change):
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
                jobs_here: list[object] = [_LOAD] if self._stamp_now() != self._stamp else []
                try:
                    self._work(jobs_here)
                except Exception:
                    log.exception("house: the folder could not be read again")
                continue
            try:
                self._work([j for j in jobs if j is not _STOP])
            except Exception:  # the worker outlives any one change's trouble
                log.exception("house: a change could not be kept")
            finally:
                with self._wake:
                    self._busy -= len(jobs)
                    self._wake.notify_all()
            if _STOP in jobs:
                return

    def _work(self, jobs: list[object]) -> None:
        """Apply the queued changes at once: one save and one fit for a burst of them (on the
        set in the folder now: ``dicepad dice learn`` or ``forget`` may have changed it)."""
        changes = [j for j in jobs if isinstance(j, _Change)]
        if _HELD in jobs:
            with self._wake:
                self._held_queued = False
        try:
            stale = changes and self._stamp_now() != self._stamp
            loaded = (_LOAD in jobs or bool(stale)) and self._load()
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
        if _HELD in jobs or ((changed or loaded) and watched):
            self._held_back()

    def _held_back(self) -> None:
        """Work out how well a house model reads the examples it held back, for the set kept
        now (the teaching page's figure); once per set."""
        from vision.house.learn import held_back

        house = self._set
        if house is None or (self._held is not None and self._held[0] is house):
            return
        try:
            back = held_back(house, self._value_net(), floor=self._params.house_confidence)
        except Exception as exc:  # no models, an old value network: no figure
            self._held = (house, None, f"no held-back figure: {exc}")
            log.warning("house: %s", self._held[2])
            return
        self._held = (house, back, None)

    def _changed(self, house: HouseSet, change: _Change) -> HouseSet:
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
