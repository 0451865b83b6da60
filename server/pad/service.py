"""The pad service: from a live camera to game actions, on its own thread.

One loop: :class:`~hardware.supervisor.CameraSupervisor` frames (it survives stalls, errors,
garbage and unplugged cameras) -> :mod:`vision.settle` on the small grey preview -> on the one
"settled" frame of a throw: the dice reader -> :func:`server.pad.decide.decide` for the table
on the pad -> :meth:`TableService.apply` with ``source="camera"`` and the frame's JPEG (encoded
once, each die outlined in the colour of what was read, a flagged one labelled with its flags
and how sure they are: ``vision.annotate``; the phone shows it with a re-roll or a roll to
check) on the roll.
Notices ("cocked dice: re-roll 1 die", "check the roll on the phone") go to the table's
``pad.notice``; the camera's status to ``pad.camera`` of every table in play (and
the one on the pad) and to :class:`~server.health.Health`. The bank/undo buttons act on the
table on the pad with ``source="button"``; the LED shows whether the camera is reading.
With a :class:`~server.pad.house.PadHouse` the dice of each logged roll and of each question
asked are handed to it as the value network saw them in the raw frame: a fix or an answer
teaches them to the house set, whose model the reader then reads with. Every settled throw,
with a table on the pad or none, is handed to it too, for the teaching page (``/house/teach``).

Which table is on the pad: the one assigned (``assign``, the admin's pick on a phone, ``POST
/api/pad``; kept in the database, so a restart keeps it) while its game is not over, idle or
not (the pick is how an abandoned game is taken up again at the pad); otherwise the table in
play (:meth:`TableService.in_play`: not over, not idle) with the most recent action (a new
table counts from its creation). Idle tables are left alone, so the work per camera change or
throw does not grow with every game ever abandoned at the bar.

The systemd watchdog is fed only while this loop turns: it reports a ``pad`` heartbeat (a
critical health part with a time-to-live), so a camera driver that hangs inside a read stops
the watchdog, while a camera that is merely away (reconnecting, manual entry meanwhile) does
not restart the server. ``--camera none`` runs no pad service at all.

This module is the loop, its decisions and which table is on the pad; what it reads a frame
with and keeps of a throw is :mod:`server.pad.reading`, and what it measures of the pad and
shows of the camera (the flat die's size, the frame rate, the camera's status, the heartbeat)
is :mod:`server.pad.status` (the base of :class:`PadService`).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hardware.buttons import ButtonConfig, ButtonEvent, Buttons, open_buttons
from hardware.clock import REAL_CLOCK, Clock
from hardware.demo import DemoSource
from hardware.frames import Frame
from hardware.supervisor import Backoff, CameraSupervisor, Opener
from scoring.actions import Action, Bank, Roll, Stand, Undo
from scoring.errors import IllegalActionError
from server.flat_store import PadKey
from server.health import Health
from server.pad.decide import Decision, Notice, NoticeKind, decide, dice_wanted
from server.pad.house import PadHouse
from server.pad.reading import Reader, Throw, encode_snapshot, truth_reader, vision_reader
from server.pad.status import FLAT_SAMPLES, HEARTBEAT_S, PadStatus
from server.pad.teaching import thrown_dice
from server.pad.truth import reading_from_truth, source_truth
from server.store import Store
from server.table_values import UnknownTableError
from server.tables import TableService
from vision.annotate import annotate
from vision.reading import Pad, Reading
from vision.settle import SettleParams, SettleState, step

log = logging.getLogger(__name__)

PAD_FILE = "pad.json"
PAD_TABLE = "pad_table"
"""settings row: the table a phone put on the pad ("" for none), so a restart keeps it."""
EXTENSION = "dicepad_pad"  #: the running service in ``app.extensions`` (``server.pad.api.attach``)
DEFAULT_SETTLE = SettleParams()
#: notices shown with the photo of the throw (``/api/pad/snapshot/<table>``): the table must
#: check what the camera saw, and no logged roll carries that photo
PHOTO_NOTICES = frozenset(
    {NoticeKind.CONFIRM, NoticeKind.KEEP, NoticeKind.COUNT, NoticeKind.REFUSED, NoticeKind.MISSING}
)
DEFAULT_BACKOFF = Backoff()


@dataclass(frozen=True)
class _Standing:
    """Dice the service left on the pad for a re-roll it logged, valid at log ``seq``."""

    seq: int
    decision: Decision


class PadService(PadStatus):
    """The camera-to-actions loop for one dicepad (see the module docstring).

    ``opener`` opens the camera (a :class:`~hardware.sources.SourceOpener`); ``reader`` reads
    dice (default: the vision reader); with ``truth_fallback`` a synthetic camera is read from
    the renderer's truth when the reader's models are missing; ``pad_file`` is the calibrated
    pad (re-read when it changes); ``clock`` drives the supervisor and the timings.
    ``step``/``pump`` run the loop in the caller's thread (tests, benchmarks);
    ``start``/``stop`` run it on its own.
    """

    def __init__(
        self,
        tables: TableService,
        opener: Opener | None,
        *,
        health: Health | None = None,
        clock: Clock = REAL_CLOCK,
        reader: Reader | None = None,
        truth_fallback: bool = True,
        pad_file: Path | None = None,
        settle: SettleParams = DEFAULT_SETTLE,
        stall_after: float = 5.0,
        backoff: Backoff = DEFAULT_BACKOFF,
        buttons: ButtonConfig | None = None,
        pin_factory: Any = None,
        history: int = 50,
        settings: Store | None = None,
        house: PadHouse | None = None,
    ) -> None:
        """``settings``: where the table put on the pad is kept over a restart (none: only
        in memory); ``house``: the house set that fixes and answers teach (started and
        stopped with the loop)."""
        self.tables = tables
        self.house = house
        if house is not None:
            house.watch(tables)
        self._settings = settings
        self.health = health
        self.clock = clock
        self._reader = reader or vision_reader()
        self._truth_fallback = truth_fallback
        self.pad_file = pad_file
        self.settle_params = settle
        self.supervisor = CameraSupervisor(
            opener, clock=clock, stall_after=stall_after, backoff=backoff, on_status=self._status
        )
        self._button_config = buttons
        self._pin_factory = pin_factory
        self._buttons: Buttons | None = None
        self._settle = SettleState()
        self._lock = threading.RLock()  # one decision or button press at a time
        self._assigned: str | None = self._remembered_table()
        self._standing: dict[str, _Standing] = {}
        self._pending: dict[str, bytes] = {}  # table -> JPEG of a throw awaiting the phone
        self._photos = itertools.count(1)  # numbers each notice's photo (see _notice)
        self._said_no_table = False  # the last throw found no table: said once (log noise)
        self._pad: Pad | None = None
        self._flat_samples: deque[float] = deque(maxlen=FLAT_SAMPLES)
        self._flat_saved: float | None = None  # the learnt size flat_dice.json holds
        self._flat_rolls = 0  # rolls measured since it was written
        self._pad_key: PadKey | None = None
        self._camera = self.supervisor.status
        self._shown: set[str] = set()  # the tables last told about the camera
        self._showing = threading.Lock()  # the loop and a phone's pick may show at once
        self._last_beat = -1e9
        self._last_camera_sync = -1e9
        self._frames = 0
        self._period: float | None = None
        self._last_stamp: float | None = None
        self.throws: deque[Throw] = deque(maxlen=history)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- running ----------------------------------------------------------------------------

    def start(self) -> None:
        """Run the loop on a daemon thread and open the buttons (if any are configured)."""
        if self._thread is not None:
            raise RuntimeError("the pad service is already running")
        if self.house is not None:
            self.house.start()
        if self._button_config is not None:
            self._buttons = open_buttons(
                self._button_config, self.press, pin_factory=self._pin_factory
            )
            if self._buttons is not None:
                self._buttons.show_status(self._camera.ok)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="dicepad-pad", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop, close the camera and the buttons; idempotent."""
        self._stop.set()
        self.supervisor.close()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("the pad loop did not stop within %.1f s", timeout)
        if self._buttons is not None:
            self._buttons.close()
            self._buttons = None
        if self.house is not None:
            self.house.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        log.info("pad service started")
        while not self._stop.is_set():
            try:
                self.step()
            except Exception:  # the loop must outlive any one frame's trouble
                log.exception("pad service: a frame failed")
                time.sleep(0.05)  # no hot loop if something keeps failing
        log.info("pad service stopped")

    def step(self, timeout: float = 0.5) -> Throw | None:
        """Read one frame (or time out) and process it; the loop's body."""
        frame = self.supervisor.read(timeout)
        now = self.clock.now()
        if now - self._last_beat >= HEARTBEAT_S:
            self._heartbeat(now)
        if now - self._last_camera_sync >= 2.0:
            self._last_camera_sync = now
            self._show_camera()
        if frame is None:
            return None
        self._guide_demo()
        return self.process(frame)

    def pump(self, frames: int, *, timeout: float = 0.5) -> list[Throw]:
        """Run ``frames`` loop steps in the calling thread; the throws they produced."""
        out = []
        for _ in range(frames):
            throw = self.step(timeout)
            if throw is not None:
                out.append(throw)
        return out

    # -- one frame ----------------------------------------------------------------------------

    def process(self, frame: Frame) -> Throw | None:
        """Feed one frame to the settle detector; on a settled frame, read and decide."""
        self._frames += 1
        self._track_rate(frame.timestamp)
        grey = frame.lores if frame.lores is not None else frame.image
        self._settle, event = step(self._settle, grey, self.settle_params)
        if event is None:
            return None
        return self.settled(frame)

    def settled(self, frame: Frame) -> Throw:
        """The dice of a throw are at rest in ``frame``: one decision for the table on the pad."""
        table: str | None = None
        reading: Reading | None = None
        try:
            table = self.table_on_pad()
            reading = self._read(frame)
            if self.house is not None:  # the teaching page shows it, table or none
                self.house.thrown(frame.image, reading)
            with self._lock:
                table = self.table_on_pad()  # a button may have ended a game meanwhile
                if table is None:  # said once, not at every throw of a demo camera
                    level = logging.DEBUG if self._said_no_table else logging.INFO
                    log.log(level, "a throw settled but no table is open: ignored")
                    self._said_no_table = True
                    return self._record(frame, None, reading, None)
                self._said_no_table = False
                return self._decide_and_apply(frame, table, reading)
        except Exception as exc:  # a reader or store failure loses this throw, not the loop
            log.exception("pad service: the settled frame could not be handled")
            if table is not None:
                text = f"the camera could not read this throw ({exc}): enter it on the phone"
                self._notice(table, Notice(NoticeKind.CONFIRM, text))
            return self._record(frame, table, reading, None, error=str(exc))

    def _read(self, frame: Frame) -> Reading:
        truth = source_truth(self.supervisor.source)
        try:
            pad = self._with_flat_size(self._pad_for(frame))
            reading = self._reader(frame.image, pad)
            self._learn_flat_size(frame.image, reading, pad)
            return reading
        except (FileNotFoundError, ImportError):
            if not self._truth_fallback or truth is None:
                raise
            log.warning("vision models missing: the synthetic camera's ground truth is read")
            self._reader = truth_reader(self)
            return reading_from_truth(truth)

    def _decide_and_apply(self, frame: Frame, table: str, reading: Reading) -> Throw:
        tables = self.tables
        game = tables.game_of(table)
        for _ in range(3):  # decide again if a phone acted while we decided
            view = tables.view(table)
            state = game.state_from_json(view["state"])
            left = self._standing.get(table)
            standing = left.decision.standing if left and left.seq == view["seq"] else ()
            decision = decide(game, state, reading, standing=standing)
            if tables.view(table)["seq"] == view["seq"]:
                break
        jpeg: bytes | None = None
        rolls = any(isinstance(a, Roll) for a in decision.actions)
        needs_photo = decision.notice is not None and (
            decision.notice.kind in PHOTO_NOTICES
            # a re-roll whose roll is not logged (unreadable dice): the pad photo is the proof
            or (decision.notice.kind is NoticeKind.REROLL and not rolls)
        )
        if needs_photo or rolls:  # what the camera saw, with what it read drawn on it
            jpeg = encode_snapshot(annotate(frame.image, reading, label_all=False))
        notice = decision.notice
        asks = notice is not None and notice.wanted > 0 and needs_photo and jpeg is not None
        house = self.house
        seen = (  # the dice as the value network saw them, for a fix or an answer to teach
            house.dice(frame.image, thrown_dice(reading, standing))
            if house is not None and (rolls or asks)
            else ()
        )
        applied: list[int] = []
        error: str | None = None
        snap = jpeg
        offer = house.offering(table, seen) if house and seen else contextlib.nullcontext()
        with offer:  # the roll logged here is of these dice
            for action in decision.actions:
                try:
                    entry = tables.apply(
                        table,
                        action,
                        source="camera",
                        snapshot=snap if isinstance(action, Roll) else None,
                    )
                except IllegalActionError as exc:  # the table moved on meanwhile (a phone)
                    error = str(exc)
                    text = f"the camera's {action.type} was refused: {exc}"
                    decision = replace(decision, notice=Notice(NoticeKind.REFUSED, text))
                    break
                applied.append(int(entry.entry["seq"]))
                if isinstance(action, Roll):
                    snap = None  # one roll per throw keeps the photo
        if applied or error is not None:
            self._standing.pop(table, None)
        if decision.standing and error is None:
            self._standing[table] = _Standing(tables.view(table)["seq"], decision)
        self._pending.pop(table, None)
        throw = None
        if decision.notice is not None:
            if jpeg is not None and needs_photo:
                self._pending[table] = jpeg
            body = self._notice(table, decision.notice, photo=needs_photo and jpeg is not None)
            throw = body.get("throw") if asks else None
        if house is not None:  # the question a one-tap answer may teach about, if any
            house.asking(table, throw, seen)
        return self._record(frame, table, reading, decision, tuple(applied), error)

    def _record(
        self,
        frame: Frame,
        table: str | None,
        reading: Reading | None,
        decision: Decision | None,
        applied: tuple[int, ...] = (),
        error: str | None = None,
    ) -> Throw:
        throw = Throw(
            frame.seq, frame.timestamp, self.clock.now(), table, reading, decision, applied, error
        )
        self.throws.append(throw)
        return throw

    def _notice(self, table: str, notice: Notice, *, photo: bool = False) -> dict[str, Any]:
        body = notice.to_json()
        if photo:  # numbered: two throws read alike are still two notices, two photos
            body["snapshot"] = f"/api/pad/snapshot/{table}"
            body["throw"] = next(self._photos)
        with contextlib.suppress(UnknownTableError):  # deleted meanwhile
            self.tables.set_pad(table, "notice", body)
        return body

    def pending_snapshot(self, table: str) -> bytes | None:
        """The JPEG of the throw a table is asked to confirm, if any."""
        return self._pending.get(table)

    def _guide_demo(self) -> None:
        """Let the demo camera throw as many dice as the table on the pad waits for."""
        source = self.supervisor.source
        demo = getattr(source, "inner", source)
        if isinstance(demo, DemoSource) and demo.wanted is None:
            demo.wanted = self.dice_wanted

    def dice_wanted(self) -> int | None:
        """How many dice the table on the pad waits for (:func:`~server.pad.decide.dice_wanted`)."""
        table = self.table_on_pad()
        if table is None:
            return None
        game = self.tables.game_of(table)
        return dice_wanted(game, game.state_from_json(self.tables.view(table)["state"]))

    # -- which table --------------------------------------------------------------------------

    def assign(self, table: str | None) -> None:
        """Put ``table`` on the pad (None: back to the most recently active open table).
        Kept in ``settings`` before it takes effect: after a power cut the next throw must
        not land on whichever other table was acted on last."""
        if table is not None and table not in self.tables:
            raise UnknownTableError(f"no table {table!r}")
        with self._lock:
            if self._settings is not None:
                self._settings.set_settings({PAD_TABLE: table or ""})
            self._assigned = table
        self._show_camera()  # every scoreboard learns which table is on the pad now

    def _remembered_table(self) -> str | None:
        """The table put on the pad before the last stop, if it is still a table."""
        table = self._settings.setting(PAD_TABLE) if self._settings is not None else None
        return table if table and table in self.tables else None

    @property
    def assigned(self) -> str | None:
        return self._assigned

    def table_on_pad(self) -> str | None:
        """The assigned table while its game is not over, else the table in play acted on
        most recently."""
        return self._on_pad(self.tables.in_play())

    def _on_pad(self, in_play: list[dict[str, Any]]) -> str | None:
        assigned = self._assigned
        if assigned is not None:
            with contextlib.suppress(UnknownTableError):  # left out since it was assigned
                if not self.tables.summary(assigned)["over"]:
                    return assigned
        return in_play[0]["table"] if in_play else None

    # -- buttons ------------------------------------------------------------------------------

    def press(self, event: ButtonEvent) -> None:
        """A physical button: bank (stand in Bar Dice) or undo for the table on the pad."""
        with self._lock:
            table = self.table_on_pad()
            if table is None:
                log.info("button %s pressed but no table is open", event)
                return
            action: Action
            if event is ButtonEvent.UNDO:
                action = Undo()
            elif self.tables.game_of(table).name == "bar-dice":
                action = Stand()
            else:
                action = Bank()
            try:
                self.tables.apply(table, action, source="button")
            except IllegalActionError as exc:
                self._notice(table, Notice(NoticeKind.REFUSED, f"{event} button: {exc}"))

    def status_json(self) -> dict[str, Any]:
        """For ``GET /api/pad``: the camera, the table on the pad, the flat die's size learnt
        from the settled rolls (frame px at the pad's centre; null until known), the house
        set's size (``PadHouse.status``; null without one), the last throws."""
        from vision.pipsize import learned_side

        side = learned_side(self._flat_samples)
        source = self.supervisor.source  # once: the camera thread may drop it between two reads
        return {
            "running": self.running,
            "camera": self._camera.to_json(),
            "source": None if source is None else source.describe(),
            "assigned": self._assigned,
            "table": self.table_on_pad(),
            "frames": self._frames,
            "fps": round(self.settle_params.fps, 1),
            "flat_die_px": None if side is None else round(side, 2),
            "house": None if self.house is None else self.house.status(),
            "throws": [t.to_json() for t in list(self.throws)[-10:]],
        }
