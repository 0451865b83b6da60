"""Shared helpers of the pad service tests (``test_pad_*.py``): readings built by hand, a
recorded throw script, and the rig -- real games, a real TableService on a temporary SQLite
store, the real settle detector, and a scripted synthetic pad (:mod:`server.pad.script`) on
the ManualClock, so minutes of camera trouble run in milliseconds. Dice are read from the
renderer's ground truth (:mod:`server.pad.truth`), or by the vision reader."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from server_app import ticking_clock

from hardware.clock import ManualClock
from hardware.faulty import FaultPlan, FaultySource
from hardware.frames import FrameSource
from hardware.supervisor import Backoff, CameraState
from scoring import games
from server.feed.hub import Feed
from server.health import Health
from server.pad.decide import Decision
from server.pad.reading import vision_reader
from server.pad.script import ScriptedSource, ThrowPlan, ThrowScript
from server.pad.service import PadService
from server.pad.truth import reading_from_truth, source_truth
from server.store import Store
from server.tables import TableService
from vision.reading import DieFlag, DieReading, Pad, Reading

MODELS = Path(__file__).resolve().parent.parent / "vision" / "models"
SMALL = (320, 240)  # frames for the truth-read tests: the decisions do not need pixels
FPS = 15.0
PIN = "2468"
CLOCK_START = datetime(2026, 11, 21, 20, 0, tzinfo=UTC)

# the faults' short script: played many times, so the rig replays it from memory
SHORT = [ThrowPlan((1, 3, 3, 4, 6), keep=(0,)), ThrowPlan((5, 2, 3, 6))]


# -- helpers ------------------------------------------------------------------------------


def die(
    value: int | None, x: float = 0.0, y: float = 100.0, *flags: DieFlag, size: float = 20.0
) -> DieReading:
    f = set(flags) | ({DieFlag.UNREADABLE} if value is None else set())
    return DieReading(value, (x, y), (), size, "white", 0.9, frozenset(f))


def reading(*values: int | None, flags: dict[int, tuple[DieFlag, ...]] | None = None) -> Reading:
    flags = flags or {}
    dice = tuple(die(v, 40.0 * i, 100.0, *flags.get(i, ())) for i, v in enumerate(values))
    return Reading(dice, (640, 480))


class RecordedScript(ThrowScript):
    """A :class:`ThrowScript` played once per test session and replayed from memory after
    (the rendering is the slow part; the frames and their truth are the same)."""

    _cache: ClassVar[dict[tuple[Any, ...], tuple[list[Any], list[int], int]]] = {}

    def __init__(self, plans: list[ThrowPlan], **kw: Any) -> None:
        super().__init__(plans, **kw)
        key = (tuple(plans), tuple(sorted(kw.items())))
        if key not in self._cache:
            live = ThrowScript(plans, **kw)
            frames = []
            while not live.finished:
                frames.append(live.next_frame())
            frames.append(live.next_frame())  # the still pad after the last throw
            self._cache[key] = (frames, list(live.rest_frames), len(frames) - 1)
        self._frames, rests, self._played = self._cache[key]
        self._rests = rests

    @property
    def finished(self) -> bool:
        return self.frames >= self._played

    def next_frame(self) -> tuple[np.ndarray, Any]:
        shot = self._frames[min(self.frames, len(self._frames) - 1)]
        for rest in self._rests:
            if rest == self.frames and rest not in self.rest_frames:
                self.rest_frames.append(rest)
        self.frames += 1
        image, truth = shot
        return image, truth


def applied(game_name: str, state: Any, decision: Decision) -> Any:
    game = games.find(game_name)
    for action in decision.actions:
        state = game.apply(state, action)
    return state


class Rig:
    """A table service on a temporary store, a scripted pad, and the pad service watching it."""

    def __init__(
        self,
        tmp: Path,
        plans: list[ThrowPlan],
        *,
        faults: str | None = None,
        size: tuple[int, int] = SMALL,
        reader: str = "truth",
        seed: int = 3,
        lead_in: int = 10,
    ) -> None:
        self.store = Store(tmp / "pad.sqlite3")
        self.feed = Feed(max_clients=10, queue_size=10_000)
        self.tables = TableService(self.store, self.feed, clock=ticking_clock(CLOCK_START))
        self.tables.load()
        self.health = Health(self.store, self.feed, monotonic=time.monotonic)
        self.clock = ManualClock()
        kind = RecordedScript if plans == SHORT else ThrowScript  # SHORT is played many times
        self.script = kind(plans, seed=seed, size=size, fps=FPS, lead_in=lead_in)
        self.plan = None if faults is None else FaultPlan(faults, clock=self.clock)
        self.opened = 0
        self.service = PadService(
            self.tables,
            self._open,
            health=self.health,
            clock=self.clock,
            reader=self._truth if reader == "truth" else vision_reader(),
            backoff=Backoff(initial=0.5, maximum=2.0),
        )
        self.states: list[CameraState] = []

    def _open(self) -> FrameSource:
        self.opened += 1
        inner = ScriptedSource(self.script, fps=FPS, clock=self.clock)
        if self.plan is None:
            return inner
        return FaultySource(inner, self.plan)

    def _truth(self, image: np.ndarray, pad: Pad | None) -> Reading:
        truth = source_truth(self.service.supervisor.source)
        assert truth is not None
        return reading_from_truth(truth)

    def run(self, *, extra: int = 30, limit: int = 3000) -> None:
        """Step until the script has played out (plus ``extra`` still frames)."""
        for _ in range(limit):
            self.service.step()
            self.states.append(self.service.supervisor.status.state)
            if self.script.finished:
                break
        else:
            raise AssertionError("the script did not finish")
        self.service.pump(extra)

    def log(self, table: str) -> list[tuple[str, str, tuple[int, ...], bool]]:
        return [
            (
                e["source"],
                e["action"]["type"],
                tuple(sorted(e["action"].get("dice", ()))),
                e["snapshot"],
            )
            for e in self.tables.log(table)
        ]

    def close(self) -> None:
        self.service.stop()
        self.store.close()


@pytest.fixture(name="rigs")  # imported by the tests that use it
def fixture_rigs(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(plans: list[ThrowPlan], **kw: Any) -> Rig:
        where = tmp_path / f"rig{len(made)}"
        where.mkdir()
        rig = Rig(where, plans, **kw)
        made.append(rig)
        return rig

    yield make
    for rig in made:
        rig.close()
