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
folder again whenever its set's file changes under it (:data:`~server.pad.worker.POLL_S`):
``dicepad dice learn`` or ``forget`` on the running server's folder, or a damaged set repaired.

The teaching page (``/house/teach``, :mod:`server.pages.teach`) teaches on purpose: the pad
service hands over every throw the camera settles on, whatever table is on the pad or none
(:meth:`PadHouse.thrown`), and the latest :data:`THROWS_KEPT` are held, each die as the value
network saw it and as a crop of the raw frame a person can count the pips on. The PIN holder
confirms or corrects each die and :meth:`PadHouse.teach` adds them (origin ``learn``, ref
"page/<throw number>"; a throw is taught once); :meth:`PadHouse.forget` takes one bad example
out. How well the house model reads the examples it held back
(:func:`vision.house.learn.held_back`) is worked out on the worker after a fit while the page
is in use, and kept for the page (:meth:`PadHouse.progress`): a request never waits for it.

This module is the facade the pad service, the tables and the teaching page talk to, and the
views it holds for them; the values it hands over and the pairing are in
:mod:`server.pad.teaching`, the worker that keeps the set and fits its model (the base of
:class:`PadHouse`) in :mod:`server.pad.worker`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scoring.actions import Fix, Roll, Undo
from server.health import Health
from server.pad.teaching import Progress, SeenDie, Taught, TeachDie, TeachThrow, crop_of, pair
from server.pad.worker import HELD, Change, HouseWorker
from server.standing import Standing, last_roll
from vision.reading import DieReading, Reading

if TYPE_CHECKING:
    from vision.house import Example
    from vision.params import DetectorParams

HOUSE_DIR = "house"  #: the house folder in the data directory
ROLLS_KEPT = 64
"""Camera (and answered) rolls whose dice views are held for a fix to come: a fix corrects the
latest standing roll, so a handful per table is plenty."""
ASKED_KEPT = 16  #: tables whose open question's views are held
THROWS_KEPT = 8
"""Settled throws held for the teaching page: the one it shows, and those a phone may still
be answering while the camera settles on the next."""
RECENT_SHOWN = 12  #: the newest examples the teaching page lists, each with "remove"
RECENT_FOUND = 64  #: examples whose pictures the page may ask for (a page a little stale)
PAGE_REF = "page/"  #: the ref of an example the teaching page taught: "page/<throw number>"


@dataclass(frozen=True)
class _Offer:
    """What the next roll a thread logs on ``table`` was seen as (see :meth:`PadHouse.on_apply`)."""

    table: str
    dice: tuple[SeenDie, ...]
    origin: str  # "camera": held for a fix; "answer": taught at once


class PadHouse(HouseWorker):
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
        self._wall = wall
        self._book = threading.Lock()  # the views held for fixes and answers
        self._rolls: OrderedDict[tuple[str, int], tuple[SeenDie, ...]] = OrderedDict()
        self._asked: OrderedDict[str, tuple[int, tuple[SeenDie, ...]]] = OrderedDict()
        self._local = threading.local()
        self._throws: OrderedDict[int, TeachThrow] = OrderedDict()  # for the teaching page
        self._taught: set[int] = set()  # throws of those the page taught
        self._last_cut: tuple[tuple[DieReading, np.ndarray | None], ...] = ()
        super().__init__(folder, health=health, models_dir=models_dir, params=params, limit=limit)

    def watch(self, tables: Any) -> None:
        """Learn from ``tables``' fixes, answers and undos (``TableService.on_apply``)."""
        tables.on_apply(self.on_apply)

    # -- what the pad service hands over ----------------------------------------------------

    def dice(self, image: np.ndarray, dice: Sequence[DieReading]) -> tuple[SeenDie, ...]:
        """``dice`` as the reader saw them in the raw frame ``image``."""
        held = self._last_cut  # the settled throw's dice, cut once by :meth:`thrown`
        return tuple(SeenDie(d.value, self._cut(image, d, held)) for d in dice)

    def _cut(
        self,
        image: np.ndarray,
        die: DieReading,
        held: tuple[tuple[DieReading, np.ndarray | None], ...] = (),
    ) -> np.ndarray | None:
        """``die``'s view in the raw frame ``image``, as :meth:`thrown` cut it when it holds
        that very die, else cut now (None: it cannot be cut, and is simply not taught)."""
        from vision.house.views import die_view

        for seen, view in held:
            if seen is die:
                return view
        try:
            return die_view(image, die, self._params)
        except Exception:
            return None

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
        dice = []
        cuts = []
        for d in reading.dice:
            crop: bytes | None
            view = self._cut(image, d)
            cuts.append((d, view))
            try:
                crop = crop_of(image, d)
            except Exception:
                crop = None
            dice.append(TeachDie(d.value, tuple(d.candidates), view, crop))
        self._last_cut = tuple(cuts)  # a fix or an answer of this throw reuses them (:meth:`dice`)
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
        ticket = self._queue(Change("", None, tuple(add))) if add else 0
        return Taught(number, len(add), False, ticket)

    def forget(self, ids: Sequence[str]) -> int:
        """Take the examples named by ``ids`` out of the set (on the worker); its ticket for
        :meth:`wait_kept`."""
        return self._queue(Change("", None, (), tuple(ids)))

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
                self._queue(HELD)
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
            self._queue(Change(table, (taken, None)))

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
            self._queue(Change(table, drop, add))
