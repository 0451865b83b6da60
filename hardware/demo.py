"""The demo camera: endless synthetic throws, so a newcomer sees the whole product without
hardware (``dicepad serve`` uses it by default).

Throws come from :func:`vision.synth.throw_sequence` and chain like a real game: a hand picks
up the dice left on the pad, throws them, they tumble and settle, a hand takes some away, and
the rest are thrown next. Now and then a die ends cocked (leaning) or sloppy (off the pad),
so the re-roll paths show too. Everything is seeded: the same seed gives the same evening.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from hardware.clock import REAL_CLOCK, Clock
from hardware.frames import Frame, FrameSource, make_frame
from hardware.pacing import Pacer
from vision import synth

log = logging.getLogger(__name__)


class DemoSource(FrameSource):
    """Synthetic throws of ``n_dice`` dice at ``fps`` (None: as fast as asked).

    ``cocked`` and ``sloppy`` are the chances that a throw leaves one die leaning or off the
    pad. ``markers_mm`` > 0 prints the corner markers of ``dicepad markers`` round the pad
    (``vision.synth.with_markers``), to rehearse a marked pad's calibration. ``logo`` (one of
    ``vision.synth.LOGOS``) throws branded house dice whose ace is that logo instead of a pip,
    as many bars' are, to rehearse reading them (the face is still a 1; off by default, and
    the throws are the same either way). :attr:`truth` is the ground truth of the last frame
    read (for tests and benchmarks).
    """

    kind = "demo"
    hint = "the synthetic camera failed, which is a bug: please report it"

    def __init__(
        self,
        *,
        seed: int = 0,
        fps: float | None = 30.0,
        size: tuple[int, int] = (640, 480),
        n_dice: int = 5,
        cocked: float = 0.12,
        sloppy: float = 0.08,
        markers_mm: float = 0.0,
        logo: str | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        if not 1 <= n_dice <= 10:
            raise ValueError("the demo throws 1-10 dice")
        if logo is not None and logo not in synth.LOGOS:
            raise ValueError(f"unknown logo {logo!r}; known: {', '.join(synth.LOGOS)}")
        if not (0 <= cocked <= 1 and 0 <= sloppy <= 1 and cocked + sloppy <= 1):
            raise ValueError("cocked and sloppy are chances that add up to at most 1")
        self.seed = seed
        self.size = size
        self.n_dice = n_dice
        self.cocked = cocked
        self.sloppy = sloppy
        self.markers_mm = markers_mm
        self.logo = logo
        self._fps = fps
        self._clock = clock
        self._pacer = Pacer(fps, clock)
        self._rng = np.random.default_rng(seed)
        self._throw = self._plan(None, ())
        self._index = 0
        self._seq = 0
        self.throws = 1
        """Throws started so far (the current one included)."""
        self.truth: synth.FrameTruth | None = None
        self.wanted: Callable[[], int | None] | None = None
        """Optional: how many dice the table waits for (the pad service sets it), so the next
        throw brings or leaves dice to match, as a player following the scoreboard would."""

    def describe(self) -> str:
        aces = f", {self.logo} aces" if self.logo is not None else ""
        return f"demo: synthetic throws, seed {self.seed} ({self.size[0]}×{self.size[1]}){aces}"

    def _plan(
        self, base: synth.Scene | None, before: tuple[synth.DieSpec, ...], n: int | None = None
    ) -> synth.ThrowSequence:
        if base is None and self.markers_mm > 0:
            table = synth.random_scene(self._rng, n_dice=0, size=self.size)
            base = synth.with_markers(table, self.markers_mm, self.size)
        throw = synth.throw_sequence(
            self._rng,
            base=base,
            n_dice=n or len(before) or self.n_dice,
            before=before,
            size=self.size,
            fps=self._fps or 30.0,
        )
        if self.logo is not None:  # draws nothing from the generator: the same throws
            throw = _with_logo(throw, self.logo)
        roll = float(self._rng.random())
        if roll < self.cocked + self.sloppy and throw.tumbles:
            throw = self._spoil(throw, sloppy=roll >= self.cocked)
        return throw

    def _spoil(self, throw: synth.ThrowSequence, *, sloppy: bool) -> synth.ThrowSequence:
        """Make one die of the throw land cocked (leaning ~25°) or just off the pad."""
        k = int(self._rng.integers(len(throw.tumbles)))
        tumble = throw.tumbles[k]
        final = tumble.final
        if sloppy:
            final = self._off_pad(throw.base, final)
        else:
            final = replace(
                final,
                tilt_deg=float(self._rng.uniform(18, 32)),
                tilt_dir_deg=float(self._rng.uniform(0, 360)),
            )
        tumbles = (*throw.tumbles[:k], replace(tumble, final=final), *throw.tumbles[k + 1 :])
        # a spoilt roll is re-thrown whole: nobody keeps dice from it
        return replace(throw, tumbles=tumbles, kept=(), takes=(), keep_hand=None)

    def _off_pad(self, base: synth.Scene, die: synth.DieSpec) -> synth.DieSpec:
        """``die`` moved just past the nearest pad edge where it stays in view (checked by
        rendering it alone); unchanged if no side has room."""
        pad = base.pad
        (cx, cy), (pw, ph) = pad.centre_mm, pad.size_mm
        x, y = die.xy_mm
        gap = 0.8 * die.size_mm
        sides = sorted(
            [
                (cx + pw / 2 - x, (cx + pw / 2 + gap, y)),
                (x - (cx - pw / 2), (cx - pw / 2 - gap, y)),
                (cy + ph / 2 - y, (x, cy + ph / 2 + gap)),
                (y - (cy - ph / 2), (x, cy - ph / 2 - gap)),
            ]
        )
        for _, xy in sides:
            moved = replace(die, xy_mm=xy)
            shot = synth.render(replace(base, dice=(moved,)), size=self.size, rng=self._rng)
            truth = shot.truth.dice[0]
            if not truth.on_pad and truth.visible > 0.95:
                return moved
        return die

    def _want(self) -> int | None:
        """How many dice the next throw should have, by :attr:`wanted` (None: as many as are
        left). A failing callback (a table ended while it looked) is only a missed hint: the
        camera must not fail with it, which would start the evening over."""
        if self.wanted is None:
            return None
        try:
            return self.wanted()
        except Exception:
            log.warning("demo camera: the dice wanted could not be asked", exc_info=True)
            return None

    def read(self, timeout: float) -> Frame:
        self._check_open()
        stamp = self._pacer.wait(timeout)
        if self._index >= len(self._throw):
            before = self._throw.remaining
            want = self._want()
            n = None
            if want is not None and want != len(before) and 1 <= want <= 10:
                before, n = before[:want], want  # extra dice are taken off, missing ones brought
            self._throw = self._plan(self._throw.base, before, n)
            self._index = 0
            self.throws += 1
        shot = self._throw.frame(self._index)
        self._index += 1
        self.truth = shot.truth
        frame = make_frame(shot.image, timestamp=stamp, seq=self._seq)
        self._seq += 1
        return frame

    def _release(self) -> None:
        self.truth = None


def _with_logo(throw: synth.ThrowSequence, logo: str) -> synth.ThrowSequence:
    """``throw`` with every thrown die's ace printed as ``logo`` (the dice picked up from the
    pad have it already: they are the last throw's)."""
    tumbles = tuple(
        replace(t, final=replace(t.final, style=replace(t.final.style, logo=logo)))
        for t in throw.tumbles
    )
    return replace(throw, tumbles=tumbles)
