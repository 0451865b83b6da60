"""Scripted throws: a synthetic camera that plays a planned evening of dice, die by die.

The demo camera throws at random; rehearsing the pad service (tests, the benchmark, a bar
trying a new house rule) needs throws with chosen values, a chosen die cocked or off the pad,
chosen dice taken away as a keep, and dice left standing while one is re-thrown. A
:class:`ThrowScript` is that world: each :class:`ThrowPlan` is rendered by
:func:`vision.synth.throw_sequence` (hand, tumble, rest, keep hand) with the plan's values
and faults put onto the landing dice, and the dice not picked up drawn where they stand.

The world advances one frame per frame read, and lives apart from the camera that watches it:
:class:`ScriptedSource` objects opened on one script (a reconnect after a fault) carry on where
the last one stopped, as a real pad would still be there after a cable is re-seated.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from hardware.clock import REAL_CLOCK, Clock
from hardware.frames import EndOfStreamError, Frame, FrameSource, make_frame
from hardware.pacing import Pacer
from vision import synth

COCKED_TILT_DEG = 25.0
"""Tilt given to a die the plan marks cocked (leaning on the rail or another die)."""


@dataclass(frozen=True)
class ThrowPlan:
    """One throw. ``values`` land in order; ``cocked`` and ``off_pad`` index into them;
    ``keep`` are the landed dice a hand then takes away (kept or farmed). ``rethrow`` indexes
    the dice on the pad before the throw that are picked up and thrown (None: all of them);
    the others stay where they are."""

    values: tuple[int, ...]
    cocked: tuple[int, ...] = ()
    off_pad: tuple[int, ...] = ()
    keep: tuple[int, ...] = ()
    rethrow: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        n = len(self.values)
        if not 1 <= n <= 10:
            raise ValueError("a throw has 1-10 dice")
        for name in ("cocked", "off_pad", "keep"):
            if any(not 0 <= i < n for i in getattr(self, name)):
                raise ValueError(f"{name} indexes the {n} dice thrown")


def default_scene() -> synth.Scene:
    """A calm, well-lit pad with room around it in view (so an off-pad die is still seen)."""
    return synth.Scene(
        pad=synth.PadStyle(size_mm=(230.0, 150.0)),
        lighting=synth.Lighting(azimuth_deg=40.0, elevation_deg=75.0, ambient=0.5),
    )


@dataclass(frozen=True)
class _Throw:
    seq: synth.ThrowSequence
    standing: tuple[synth.DieSpec, ...]


class ThrowScript:
    """The world of a scripted evening: plays ``plans`` in order, then (``idle``) shows the
    still pad for ever, or ends (``EndOfStreamError`` to the camera). Thread-safe."""

    def __init__(
        self,
        plans: Sequence[ThrowPlan],
        *,
        seed: int = 0,
        size: tuple[int, int] = (640, 480),
        fps: float = 30.0,
        scene: synth.Scene | None = None,
        idle: bool = True,
        lead_in: int = 10,
    ) -> None:
        self.plans = tuple(plans)
        self.size = size
        self.fps = fps
        self.idle = idle
        self._rng = np.random.default_rng(seed)
        self._base = scene if scene is not None else default_scene()
        self._lock = threading.Lock()
        self._pad: tuple[synth.DieSpec, ...] = ()  # dice lying on the pad between throws
        self._throw: _Throw | None = None
        self._next_plan = 0
        self._index = 0
        self._lead_in = lead_in  # still frames of the empty pad before the first throw
        self._still: tuple[np.ndarray, synth.FrameTruth] | None = None
        self.frames = 0
        """Frames delivered so far."""
        self.rest_frames: list[int] = []
        """For each throw, the frame number (counted in :attr:`frames`) at which every die has
        come to rest and no hand is in view (the settle detector's "truth")."""

    @property
    def finished(self) -> bool:
        """Every planned throw has been played to its end."""
        with self._lock:
            return self._throw is None and self._next_plan >= len(self.plans)

    def next_frame(self) -> tuple[np.ndarray, synth.FrameTruth]:
        """The next frame of the world and its truth; ``EndOfStreamError`` when over."""
        with self._lock:
            if self._lead_in > 0:
                self._lead_in -= 1
                return self._deliver(self._still_frame())
            if self._throw is None and self._next_plan < len(self.plans):
                self._throw = self._plan(self.plans[self._next_plan])
                self._next_plan += 1
                self._index = 0
                self.rest_frames.append(self.frames + self._throw.seq.rest_index)
            throw = self._throw
            if throw is None:
                if not self.idle:
                    raise EndOfStreamError("the script has no more throws")
                return self._deliver(self._still_frame())
            shot = self._render(throw, self._index)
            self._index += 1
            if self._index >= len(throw.seq):
                self._pad = (*throw.standing, *throw.seq.remaining)
                self._throw = None
                self._still = None
            return self._deliver(shot)

    def _deliver(
        self, shot: tuple[np.ndarray, synth.FrameTruth]
    ) -> tuple[np.ndarray, synth.FrameTruth]:
        self.frames += 1
        return shot

    def _still_frame(self) -> tuple[np.ndarray, synth.FrameTruth]:
        if self._still is None:
            scene = replace(self._base, dice=self._pad)
            shot = synth.render(scene, size=self.size, rng=np.random.default_rng(self.frames))
            truth = synth.FrameTruth(0, False, False, "after", 0, shot.truth)
            self._still = (shot.image, truth)
        return self._still

    def _render(self, throw: _Throw, i: int) -> tuple[np.ndarray, synth.FrameTruth]:
        seq = throw.seq
        scene, moving = seq.scene_at(i)
        scene = replace(scene, dice=(*throw.standing, *scene.dice))
        shot = synth.render(scene, size=self.size, rng=np.random.default_rng((seq.seed, i)))
        hand = shot.truth.hand_visible
        phase = "throw" if i < seq.rest_index else "rest" if i < seq.keep_start else "keep"
        return shot.image, synth.FrameTruth(
            i, moving or hand, hand, phase, seq.rest_index, shot.truth
        )

    def _plan(self, plan: ThrowPlan) -> _Throw:
        pad = self._pad
        picked_ix = range(len(pad)) if plan.rethrow is None else plan.rethrow
        picked = tuple(pad[i] for i in picked_ix)
        standing = tuple(d for i, d in enumerate(pad) if i not in picked_ix)
        for _ in range(100):  # until nothing lands on a die left standing
            seq = synth.throw_sequence(
                self._rng,
                base=self._base,
                n_dice=len(plan.values),
                before=picked,
                size=self.size,
                fps=self.fps,
                keep=len(plan.keep),
                hold_s=0.6,
                tail_s=0.5,
            )
            tumbles = self._land(seq, plan)
            if all(
                math.dist(t.final.xy_mm, s.xy_mm) >= 2.0 * s.size_mm
                for t in tumbles
                for s in standing
            ):
                return _Throw(replace(seq, tumbles=tumbles), standing)
        raise ValueError("no room on the pad for this throw")

    def _land(self, seq: synth.ThrowSequence, plan: ThrowPlan) -> tuple[synth.Tumble, ...]:
        """The plan's values and faults on the sequence's landing dice; the plan's kept dice go
        where the sequence's keep hand reaches."""
        n = len(plan.values)
        order = [i for i in range(n) if i not in plan.keep]
        slots = [i for i in range(n) if i not in seq.kept]
        assign = dict(zip(seq.kept, plan.keep, strict=True)) | dict(zip(slots, order, strict=True))
        pad = self._base.pad
        out = []
        for k, tumble in enumerate(seq.tumbles):
            j = assign[k]
            final = replace(tumble.final, value=plan.values[j])
            if j in plan.cocked:
                final = replace(final, tilt_deg=COCKED_TILT_DEG, tilt_dir_deg=30.0 + 70.0 * j)
            if j in plan.off_pad:
                half_w = pad.size_mm[0] / 2 + pad.rail_mm + final.size_mm
                final = replace(final, xy_mm=(pad.centre_mm[0] + half_w, final.xy_mm[1]))
            out.append(replace(tumble, final=final))
        return tuple(out)


class ScriptedSource(FrameSource):
    """A camera watching a :class:`ThrowScript` at ``fps`` (None: as fast as asked).
    :attr:`truth` is the truth of the last frame read, like the demo camera's."""

    kind = "script"
    hint = "the scripted camera failed, which is a bug: please report it"

    def __init__(
        self, script: ThrowScript, *, fps: float | None = 30.0, clock: Clock = REAL_CLOCK
    ) -> None:
        self.script = script
        self._pacer = Pacer(fps, clock)
        self._seq = 0
        self.truth: synth.FrameTruth | None = None
        self.rest_stamps: list[float] = []
        """Capture times of the frames in which a throw's dice came to rest."""

    def read(self, timeout: float) -> Frame:
        self._check_open()
        stamp = self._pacer.wait(timeout)
        image, truth = self.script.next_frame()
        self.truth = truth
        if self.script.frames - 1 in self.script.rest_frames:
            self.rest_stamps.append(stamp)
        frame = make_frame(image.copy(), timestamp=stamp, seq=self._seq)
        self._seq += 1
        return frame

    def describe(self) -> str:
        return f"script: {len(self.script.plans)} planned throws"

    def _release(self) -> None:
        self.truth = None
