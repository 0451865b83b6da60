"""Whole throws as frame sequences: a hand picks up the dice left on the pad, throws, the dice
tumble and stop, and a hand takes the kept ones away; each frame with the settle detector's
truth (moving, hand in view, the rest frame).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.synth.draw import render
from vision.synth.geometry import _Projector
from vision.synth.hands import _hand_in_frame
from vision.synth.model import BGR, STYLES, DieSpec, Hand, Image, Scene, SceneTruth
from vision.synth.scenes import _inside_pad, random_scene


@dataclass(frozen=True)
class FrameTruth:
    """Per-frame truth of a throw: is anything moving, and when did everything come to rest.

    ``rest_index`` is the first frame from which no die moves and no hand is in view (the
    settle detector must fire once, soon after it); ``phase`` is one of ``before``, ``throw``,
    ``rest``, ``keep`` (a hand takes the kept dice away) and ``after``.
    """

    index: int
    moving: bool
    hand_visible: bool
    phase: str
    rest_index: int
    scene: SceneTruth


@dataclass(frozen=True)
class Frame:
    image: Image
    truth: FrameTruth


@dataclass(frozen=True)
class Tumble:
    """One thrown die's flight: from ``start_xy`` (mm) at ``start_frame`` it tumbles and hops
    for ``frames`` frames, then lies as ``final``. Public so scripted cameras can change where
    and how a die lands (``replace(tumble, final=...)``) without re-planning the throw."""

    final: DieSpec
    start_xy: tuple[float, float]
    start_frame: int
    frames: int
    axis: tuple[float, float, float]
    turns: float  # radians of spin left at release
    bounce_mm: float

    def at(self, i: int) -> tuple[DieSpec, bool]:
        k = i - self.start_frame
        if k >= self.frames:
            return self.final, False
        left = 1.0 - k / self.frames  # constant speed, then a crisp stop
        x = self.final.xy_mm[0] + (self.start_xy[0] - self.final.xy_mm[0]) * left
        y = self.final.xy_mm[1] + (self.start_xy[1] - self.final.xy_mm[1]) * left
        hop = self.bounce_mm * abs(math.sin(math.pi * 3 * (1 - left))) * left
        spin = tuple(a * self.turns * left for a in self.axis)
        return replace(
            self.final, xy_mm=(x, y), lift_mm=hop, spin=(spin[0], spin[1], spin[2])
        ), True


@dataclass(frozen=True)
class _HandPath:
    """A hand entering at ``points[0]`` (px, off-frame), visiting waypoints, leaving that way."""

    start_frame: int
    points: tuple[tuple[float, float], ...]  # entry, waypoints..., entry
    speed: float  # px per frame
    size_px: float
    colour: BGR

    def _legs(self) -> list[float]:
        return [math.dist(a, b) for a, b in zip(self.points, self.points[1:], strict=False)]

    @property
    def frames(self) -> int:
        return math.ceil(sum(self._legs()) / self.speed) + 1

    def arrival(self, waypoint: int) -> int:
        """Frame index at which the hand reaches ``points[waypoint]``."""
        return self.start_frame + math.ceil(sum(self._legs()[:waypoint]) / self.speed)

    def at(self, i: int) -> Hand | None:
        k = i - self.start_frame
        if k < 0 or k >= self.frames:
            return None
        d = k * self.speed
        for a, b in zip(self.points, self.points[1:], strict=False):
            leg = math.dist(a, b)
            if d <= leg:
                t = d / leg if leg else 0.0
                xy = (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
                break
            d -= leg
        else:
            xy = self.points[-1]
        entry = self.points[0]
        vx, vy = entry[0] - xy[0], entry[1] - xy[1]
        if math.hypot(vx, vy) < self.size_px and len(self.points) > 1:
            # at the entry point itself the arm still runs out of the frame, not across it
            vx, vy = entry[0] - self.points[1][0], entry[1] - self.points[1][1]
        arm = math.degrees(math.atan2(vy, vx))
        return Hand(xy, arm, self.size_px, self.colour)


@dataclass(frozen=True)
class ThrowSequence:
    """A planned throw; iterate it to render the frames (each with :class:`FrameTruth`)."""

    base: Scene
    size: tuple[int, int]
    fps: float
    before: tuple[DieSpec, ...]
    tumbles: tuple[Tumble, ...]
    throw_hand: _HandPath
    pickups: tuple[int, ...]  # frame at which each ``before`` die is picked up
    keep_hand: _HandPath | None
    kept: tuple[int, ...]  # indexes into the thrown dice taken away after the rest
    takes: tuple[int, ...]  # frame at which each kept die disappears
    rest_index: int
    keep_start: int
    n_frames: int
    drift: float  # exposure change per frame (slow lighting drift)
    seed: int = 0

    @property
    def remaining(self) -> tuple[DieSpec, ...]:
        """The dice left on the pad at the end: the ``before=`` of the next throw."""
        return tuple(t.final for i, t in enumerate(self.tumbles) if i not in self.kept)

    def scene_at(self, i: int) -> tuple[Scene, bool]:
        """The scene of frame ``i`` and whether any die is moving in it."""
        dice: list[DieSpec] = [d for d, t in zip(self.before, self.pickups, strict=True) if i < t]
        moving = False
        if i >= self.throw_hand.arrival(len(self.before) + 1):
            for k, tumble in enumerate(self.tumbles):
                if k in self.kept and i >= self.takes[self.kept.index(k)]:
                    continue
                spec, m = tumble.at(i)
                moving = moving or m
                dice.append(spec)
        dice = _renumber(dice)
        hands = tuple(
            h
            for h in (self.throw_hand.at(i), self.keep_hand.at(i) if self.keep_hand else None)
            if h
        )
        exposure = self.base.degrade.exposure * (1.0 + self.drift * i)
        scene = replace(
            self.base,
            dice=tuple(dice),
            hands=hands,
            degrade=replace(self.base.degrade, exposure=exposure),
        )
        return scene, moving

    def frame(self, i: int) -> Frame:
        scene, moving = self.scene_at(i)
        shot = render(scene, size=self.size, rng=np.random.default_rng((self.seed, i)))
        if i < self.throw_hand.start_frame:
            phase = "before"
        elif i < self.rest_index:
            phase = "throw"
        elif i < self.keep_start:
            phase = "rest"
        elif self.keep_hand is not None and i < self.keep_hand.start_frame + self.keep_hand.frames:
            phase = "keep"
        else:
            phase = "after"
        hand = shot.truth.hand_visible
        return Frame(
            shot.image, FrameTruth(i, moving or hand, hand, phase, self.rest_index, shot.truth)
        )

    def __len__(self) -> int:
        return self.n_frames

    def __iter__(self) -> Iterator[Frame]:
        for i in range(self.n_frames):
            yield self.frame(i)


def _renumber(dice: list[DieSpec]) -> list[DieSpec]:
    """Thrown dice land flat and apart, so no die rests on another within a sequence."""
    return [replace(d, on_die=None) if d.on_die is not None else d for d in dice]


def _edge_point(
    rng: np.random.Generator, size: tuple[int, int], hand: float
) -> tuple[float, float]:
    w, h = size
    side = int(rng.integers(4))
    t = float(rng.uniform(0.2, 0.8))
    out = hand * 1.6
    return [(t * w, h + out), (t * w, -out), (-out, t * h), (w + out, t * h)][side]


def throw_sequence(
    rng: np.random.Generator,
    *,
    base: Scene | None = None,
    n_dice: int | None = None,
    before: Sequence[DieSpec] = (),
    size: tuple[int, int] = (640, 480),
    fps: float = 30.0,
    keep: int | None = None,
    hold_s: float = 1.0,
    tail_s: float = 0.8,
    drift: float = 0.0,
) -> ThrowSequence:
    """Plan one throw: a hand comes in, picks up ``before`` (the dice left on the pad), throws
    ``n_dice`` (default: as many as it picked up, or 5), the dice tumble and stop, everything is
    still for ``hold_s``, then a hand takes ``keep`` of them away (random when None) and the pad is
    still for ``tail_s``. ``drift`` is the exposure change per frame (slow lighting drift).
    """
    if fps <= 0:
        raise ValueError("fps must be positive")
    scene = base if base is not None else random_scene(rng, n_dice=0, size=size)
    scene = replace(scene, dice=())
    proj = _Projector(scene.camera, size)
    w, h = size
    n = n_dice if n_dice is not None else (len(before) or 5)
    if n < 1:
        raise ValueError("a throw needs at least one die")
    scale = w / 640
    hand_px = float(rng.uniform(150, 190)) * scale
    skin = tuple(int(c) for c in rng.uniform([90, 120, 170], [150, 175, 230]))
    colour: BGR = (skin[0], skin[1], skin[2])
    speed = float(rng.uniform(900, 1400)) * scale / fps

    # Where the dice will land: flat, apart, on the pad.
    palette = list(STYLES.values())
    style = before[0].style if before else palette[int(rng.integers(len(palette)))]
    finals: list[DieSpec] = []
    pad = scene.pad
    size_mm = before[0].size_mm if before else float(rng.uniform(14, 19))
    for _ in range(n):
        for _try in range(300):
            xy = (
                pad.centre_mm[0] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[0],
                pad.centre_mm[1] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[1],
            )
            if _inside_pad(pad, xy, size_mm) and all(
                math.dist(xy, f.xy_mm) >= 1.7 * size_mm for f in finals
            ):
                finals.append(
                    DieSpec(
                        int(rng.integers(1, 7)),
                        xy,
                        float(rng.uniform(0, 90)),
                        0.0,
                        0.0,
                        0.0,
                        size_mm,
                        style,
                    )
                )
                break

    entry = _edge_point(rng, size, hand_px)
    pick_px = [tuple(proj(np.array([d.xy_mm[0], d.xy_mm[1], 0.0]))) for d in before]
    release_px = (float(rng.uniform(0.3, 0.7)) * w, float(rng.uniform(0.3, 0.7)) * h)
    start = int(rng.integers(4, 9))
    throw_hand = _HandPath(
        start,
        (entry, *((float(p[0]), float(p[1])) for p in pick_px), release_px, entry),
        speed,
        hand_px,
        colour,
    )
    pickups = tuple(throw_hand.arrival(k + 1) for k in range(len(before)))
    release = throw_hand.arrival(len(before) + 1)
    rx, ry = proj.ground_from_px(*release_px)
    tumbles = []
    for f in finals:
        frames = round(fps * float(rng.uniform(0.5, 1.2)))
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        tumbles.append(
            Tumble(
                f,
                (rx + float(rng.normal(0, 8)), ry + float(rng.normal(0, 8))),
                release,
                max(frames, 3),
                (float(axis[0]), float(axis[1]), float(axis[2])),
                float(rng.uniform(8, 20)),
                float(rng.uniform(5, 25)),
            )
        )
    stopped = max(t.start_frame + t.frames for t in tumbles)
    rest = next(
        i
        for i in range(max(stopped, release), max(stopped, release) + throw_hand.frames + 2)
        if (hand := throw_hand.at(i)) is None or not _hand_in_frame(hand, w, h)
    )
    keep_start = rest + max(1, round(hold_s * fps))
    k = int(rng.integers(0, len(tumbles))) if keep is None else keep
    if not 0 <= k <= len(tumbles):
        raise ValueError(f"keep must be within 0..{len(tumbles)}")
    kept = tuple(sorted(int(x) for x in rng.choice(len(tumbles), size=k, replace=False)))
    keep_hand = None
    takes: tuple[int, ...] = ()
    end = keep_start
    if kept:
        entry2 = _edge_point(rng, size, hand_px)
        pts = [
            tuple(float(c) for c in proj(np.array([*tumbles[i].final.xy_mm, 0.0]))) for i in kept
        ]
        keep_hand = _HandPath(
            keep_start, (entry2, *((p[0], p[1]) for p in pts), entry2), speed, hand_px, colour
        )
        takes = tuple(keep_hand.arrival(j + 1) for j in range(len(kept)))
        end = keep_start + keep_hand.frames
    n_frames = end + max(1, round(tail_s * fps))
    return ThrowSequence(
        base=scene,
        size=size,
        fps=fps,
        before=tuple(before),
        tumbles=tuple(tumbles),
        throw_hand=throw_hand,
        pickups=pickups,
        keep_hand=keep_hand,
        kept=kept,
        takes=takes,
        rest_index=rest,
        keep_start=keep_start,
        n_frames=n_frames,
        drift=drift,
        seed=int(rng.integers(1 << 31)),
    )
