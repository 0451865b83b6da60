"""What the pad service measures and what it shows of the camera (:class:`PadStatus`, the
base of :class:`~server.pad.service.PadService`): the calibrated pad scaled to each frame and
the flat die's size learnt from the settled rolls (kept in ``flat_dice.json``,
:mod:`server.flat_store`), the camera's real frame rate, the camera's status on every table
in play and in :class:`~server.health.Health`, and the loop's heartbeat.

Apart from the loop because these keep their own state (the flat samples, the pad read, the
frame period, the tables told about the camera) and change nothing in a game: the loop calls
them, and they call back only to ask which table is on the pad.
"""

from __future__ import annotations

import contextlib
import logging
import statistics
import threading
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from hardware.buttons import Buttons
from hardware.frames import Frame
from hardware.supervisor import CameraState, CameraStatus, CameraSupervisor
from server.flat_store import FLAT_FILE, PadKey, load_flat_samples, save_flat_samples
from server.health import Health
from server.pad.truth import source_truth
from server.table_values import UnknownTableError
from server.tables import TableService
from vision.reading import Pad, Reading
from vision.settle import SettleParams

log = logging.getLogger(__name__)

HEARTBEAT_S = 1.0  #: seconds between heartbeats to Health
HEARTBEAT_TTL_S = 20.0  #: a heartbeat older than this fails the ``pad`` health part
FLAT_SAMPLES = 60
"""Flat dice remembered for their size (``vision.pipsize.learned_side``): a dozen rolls."""
NEW_DICE = 0.02
"""A settled roll whose flat dice measure this much (a fraction) off the learnt size is taken
for another set of dice: the size is forgotten and learnt afresh (a single die of a set 5 %
larger, judged by the old size, would look like a die on a die). A flat die measures within
about 1.5 % of its true size."""
FLAT_RESAVE = 0.0025
"""``flat_dice.json`` is rewritten when the learnt size moves this much (a fraction: 0.1 px of a
40 px die) ...
"""
FLAT_RESAVE_ROLLS = 12
"""... or after this many measured rolls (the samples then have turned over), not after every
roll: a Pi's SD card wears with every write, and a restart that finds samples a few rolls old
learns the same size."""


class PadStatus:
    """The pad's measurements and the camera's status, for :class:`~server.pad.service.PadService`
    (module docstring). Its state is set in the service's ``__init__``; what it reads of the
    service is declared here too."""

    # the service's parts it reads
    tables: TableService
    health: Health | None
    supervisor: CameraSupervisor
    pad_file: Path | None
    settle_params: SettleParams
    _buttons: Buttons | None
    _frames: int
    # its own state
    _camera: CameraStatus
    _shown: set[str]
    _showing: threading.Lock
    _last_beat: float
    _pad: Pad | None
    _flat_samples: deque[float]
    _flat_saved: float | None
    _flat_rolls: int
    _pad_key: PadKey | None
    _period: float | None
    _last_stamp: float | None

    def _on_pad(self, in_play: list[dict[str, Any]]) -> str | None:
        raise NotImplementedError  # the service's: which table is on the pad

    # -- camera status and health -------------------------------------------------------------

    def _status(self, status: CameraStatus) -> None:
        self._camera = status
        if self.health is not None:
            ok = status.ok or status.state is CameraState.DISABLED
            self.health.report("camera", ok, status.message)
        if self._buttons is not None:
            self._buttons.show_status(status.ok)
        self._show_camera()

    def _show_camera(self) -> None:
        """``pad.camera`` and ``pad.on_pad`` (is it this table the camera reads) on every
        table in play and the one on the pad (new tables get them within a couple of
        seconds). A table that has left them since (over, idle) is told once that it is not
        on the pad; idle tables are not touched after that (nor woken)."""
        with self._showing:
            body = self._camera.to_json()
            try:
                in_play = self.tables.in_play()
                on_pad = self._on_pad(in_play)
            except Exception:  # the store is closing (shutdown)
                return
            shown = [s["table"] for s in in_play]
            if on_pad is not None and on_pad not in shown:
                shown.append(on_pad)  # an idle table put on the pad: it is about to be played
            for table in shown:
                with contextlib.suppress(UnknownTableError):
                    self.tables.set_pad(table, "camera", body)
                    self.tables.set_pad(table, "on_pad", table == on_pad)
            for table in self._shown.difference(shown):
                with contextlib.suppress(UnknownTableError):
                    self.tables.set_pad(table, "on_pad", False)
            self._shown = set(shown)

    def _heartbeat(self, now: float) -> None:
        self._last_beat = now
        if self.health is None:
            return
        cam = self._camera
        detail = f"pad loop running: {self._frames} frames, camera {cam.state.value}"
        self.health.report("pad", True, detail, critical=True, ttl=HEARTBEAT_TTL_S)

    # -- the pad and the frame rate -----------------------------------------------------------

    def _with_flat_size(self, pad: Pad | None) -> Pad | None:
        """``pad`` with the flat die's size learnt from the last settled rolls, once known."""
        if pad is None:
            return None
        from vision.pipsize import learned_side

        side = learned_side(self._flat_samples)
        return pad if side is None else replace(pad, flat_side_px=side)

    def _learn_flat_size(self, image: np.ndarray, reading: Reading, pad: Pad | None) -> None:
        """Measure the flat dice of a settled roll from their pips: on a fixed camera a flat
        die always looks the same size at a given place, so a die squarely on another -- one
        die nearer, 4-8 % larger -- can be told even when it is the only die in view
        (``vision.flags.size.size_cues``). A failure here costs the sample, never the throw."""
        try:
            from vision.pipsize import flat_samples, learned_side

            new = flat_samples(image, reading.dice, pad)
            if not new:
                return
            known = learned_side(self._flat_samples)
            if known is not None and abs(statistics.median(new) / known - 1) > NEW_DICE:
                self._flat_samples.clear()  # other dice: the old size must not judge them
            self._flat_samples.extend(new)
            self._flat_rolls += 1
            side = learned_side(self._flat_samples)
            if self.pad_file is not None and self._pad_key is not None and self._flat_due(side):
                path = self.pad_file.with_name(FLAT_FILE)  # kept over a restart
                save_flat_samples(path, self._pad_key, list(self._flat_samples))
                self._flat_saved, self._flat_rolls = side, 0
        except Exception:  # a measurement is a bonus: the throw has been read
            log.exception("pad service: the flat dice could not be measured or kept")

    def _flat_due(self, side: float | None) -> bool:
        """Whether ``flat_dice.json`` is worth rewriting now that the learnt size is ``side``:
        a restart must not restore a size the service no longer holds (learnt, forgotten for
        other dice, or moved by ``FLAT_RESAVE``), and samples should not grow older than
        ``FLAT_RESAVE_ROLLS`` rolls; other rolls leave the file alone."""
        saved = self._flat_saved
        if (side is None) != (saved is None):
            return True
        if side is not None and saved is not None and abs(side / saved - 1) > FLAT_RESAVE:
            return True
        return self._flat_rolls >= FLAT_RESAVE_ROLLS

    def _pad_for(self, frame: Frame) -> Pad | None:
        """The calibrated pad scaled to this frame (re-read when ``pad.json`` changes); on a
        synthetic camera without one, the rendered pad."""
        path = self.pad_file
        if path is not None:
            try:
                mtime = path.stat().st_mtime
            except OSError:
                mtime = None
            if mtime is not None:
                key = (mtime, frame.size)
                if key != self._pad_key:
                    from vision.pad import load_pad
                    from vision.pipsize import learned_side

                    self._pad = load_pad(path, frame_size=frame.size)
                    self._pad_key = key
                    self._flat_samples.clear()  # another pad or frame size: sizes differ
                    saved = load_flat_samples(path.with_name(FLAT_FILE), key, FLAT_SAMPLES)
                    self._flat_samples.extend(saved)  # ... unless measured on this one before
                    self._flat_saved, self._flat_rolls = learned_side(saved), 0
                return self._pad
        truth = source_truth(self.supervisor.source)
        return None if truth is None else truth.pad

    def _track_rate(self, stamp: float) -> None:
        """Keep the settle detector's ``fps`` near the camera's real rate, so ``still_ms``
        means milliseconds whatever the camera delivers."""
        last, self._last_stamp = self._last_stamp, stamp
        if last is None or not 0 < stamp - last < 1.0:
            return
        gap = stamp - last
        self._period = gap if self._period is None else 0.9 * self._period + 0.1 * gap
        fps = 1.0 / self._period
        if abs(fps - self.settle_params.fps) > 0.2 * self.settle_params.fps:
            self.settle_params = replace(self.settle_params, fps=round(fps, 1))
