"""Vision II benchmark on synthetic scenes (and the flags on real photos); run on demand.

    .venv/bin/python bench/bench_synth.py [--quick] [--only SECTION,...]  (sections below)

- renderer: ms per 640x480 frame (clean, degraded, throw frames with a hand) and the fps.
- reader: ``read_roll`` per-die accuracy on clean flat scenes and on blurred / noisy / JPEG ones
  (a die counts as right when a detection's centre is within half a side of it with its value).
- flags: COCKED recall for tilts >= 15 degrees, STACKED recall (split into dice on top of a
  die, the die below hidden, and dice leaning against one), flat (unstacked, on-pad) dice
  flagged COCKED / STACKED / either, rolls of only flat dice with a false flag, OFF_PAD of the
  flat dice off the pad (with the true pad; and how many of them the reader missed) -- once
  from the true geometry (the flags alone) and once end to end through ``read_roll`` (the
  figures the operating points in ``vision.flags.FlagParams`` are chosen on), with the cues
  geometry alone offers for a stack (is the die below or leaned on a detection of its own; is
  the die on top larger than the frame's other dice, against flat dice's spread), the tilted /
  stacked dice the reader saw only off their top face (a detection on the side face, which the
  recalls leave out) and whether they were flagged; and the time
  the flags add to ``read_roll`` (median, as a share of the reader alone). Scenes: clean, degraded,
  and "tray" (six dice, the flat ones side by side and touching).
- pad: ``find_pad``'s IoU with the true pad on renders of each pad style under an even light and
  a lamp at one side.
- settle: 200 chained rendered throws at 30 fps: throws with exactly one event, latency after
  rest, events during motion, ms per frame.
- learnt: STACKED on top of a die, all STACKED and flat dice flagged, with and without the flat
  die's size learnt from three settled rolls of the same camera and dice (as the pad service
  learns it).
- sheet: ``read_roll`` with the flags on nellbyler_d6 (a pad found in each photo) and
  matteop65_d6; an annotated contact sheet of every COCKED / STACKED die is written to
  bench/out/flags_nellbyler.jpg and bench/out/flags_matteop65.jpg; and the time the flags add
  to ``read_roll`` on those photos.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from vision import flags, synth  # noqa: E402
from vision.flags.dice import neighbours_of  # noqa: E402
from vision.pad import PadNotFoundError, find_pad  # noqa: E402
from vision.reading import JUDGED, DieFlag, DieReading, Pad, Reading  # noqa: E402
from vision.settle import SettleDetector  # noqa: E402
from vision.synth import DieTruth, SceneImage  # noqa: E402

OUT = REPO / "bench" / "out"
SIZE = (640, 480)


def ms(samples: Sequence[float]) -> str:
    s = sorted(samples)
    p90 = s[int(0.9 * (len(s) - 1))]
    return f"median {statistics.median(s) * 1000:.2f} ms, p90 {p90 * 1000:.2f} ms"


def reader() -> Callable[..., Reading] | None:
    """Vision I's ``read_roll`` if it and its models are there, else None (with the reason)."""
    try:
        from vision.detect import read_roll

        read_roll(np.zeros((64, 64, 3), np.uint8))
    except Exception as exc:  # any failure means: not available on this checkout
        print(f"  read_roll unavailable: {type(exc).__name__}: {exc}")
        return None
    return read_roll


def scenes(seed: int, n: int, **kinds: object) -> list[SceneImage]:
    rng = np.random.default_rng(seed)
    out, look = [], None
    for k in range(n):
        if k % 4 == 0:
            look = synth.random_scene(rng, n_dice=0)
        scene = synth.random_scene(rng, look=look, **kinds)  # type: ignore[arg-type]
        out.append(synth.render(scene, rng=rng))
    return out


def match(truth: Sequence[DieTruth], reading: Reading) -> list[tuple[DieTruth, int | None]]:
    """Each visible true die with the index of the detection on it (None when missed)."""
    taken: set[int] = set()
    out: list[tuple[DieTruth, int | None]] = []
    for d in truth:
        if d.visible < 0.5:
            continue
        best, best_dist = None, 0.5 * d.size_px
        for i, r in enumerate(reading.dice):
            dist = math.dist(d.center_xy, r.center_xy)
            if i not in taken and dist <= best_dist:
                best, best_dist = i, dist
        if best is not None:
            taken.add(best)
        out.append((d, best))
    return out


def view_of(d: DieTruth, rng: np.random.Generator | None = None) -> flags.DieView:
    (x0, y0), (x1, y1) = d.corners_xy[0], d.corners_xy[1]
    angle = (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0
    if rng is None:
        return flags.DieView(d.center_xy, d.size_px, angle)
    j = rng.normal(0, 0.04, 2) * d.size_px
    return flags.DieView(
        (d.center_xy[0] + float(j[0]), d.center_xy[1] + float(j[1])),
        d.size_px * float(rng.uniform(0.93, 1.08)),
        angle + float(rng.normal(0, 2)),
    )


# --------------------------------------------------------------------------- sections


def bench_renderer(quick: bool) -> None:
    print("renderer (640x480)")
    rng = np.random.default_rng(1)
    n = 40 if quick else 200
    for label, degrade in (("clean, 6 dice", False), ("degraded, 6 dice", True)):
        scene = synth.random_scene(rng, n_dice=6, degrade=degrade)
        synth.render(scene, rng=rng)  # draw the cached background once, as a camera would
        times = []
        for _ in range(n):
            t = time.perf_counter()
            synth.render(scene, rng=rng)
            times.append(time.perf_counter() - t)
        print(f"  {label}: {ms(times)} -> {1 / statistics.median(times):.0f} fps")
    seq = synth.throw_sequence(rng, n_dice=5)
    times = []
    for i in range(len(seq)):
        t = time.perf_counter()
        seq.frame(i)
        times.append(time.perf_counter() - t)
    print(
        f"  throw frames (hand, tumbling dice): {ms(times)}"
        f" -> {1 / statistics.median(times):.0f} fps"
    )


def bench_reader(quick: bool) -> None:
    print("reader on synthetic scenes")
    read_roll = reader()
    if read_roll is None:
        return
    n = 40 if quick else 1000
    resin = (*synth.STYLES.values(), *synth.TRANSLUCENT_STYLES.values())
    for label, seed, kinds in (
        ("clean flat", 10, {"degrade": False}),
        ("blur/noise/JPEG", 11, {"degrade": True}),
        # not a target: resin dice whose far pips show through, as in nellbyler_d6
        ("translucent resin dice among them, clean", 12, {"degrade": False, "styles": resin}),
    ):
        right = wrong = asked = total = extra = 0
        for shot in scenes(seed, n, n_dice=None, **kinds):
            reading = read_roll(shot.image)
            pairs = match(shot.truth.dice, reading)
            total += len(pairs)
            read = [(d.value, reading.dice[i].value) for d, i in pairs if i is not None]
            right += sum(v == r for v, r in read)
            asked += sum(r is None for _, r in read)
            wrong += sum(r is not None and r != v for v, r in read)
            extra += len(reading.dice) - sum(i is not None for _, i in pairs)
        print(
            f"  {label}: {right}/{total} dice right = {right / max(total, 1):.4f}"
            f" ({wrong} wrong, {asked} asked), {extra} extra"
        )


def flag_rates(results: Sequence[tuple[DieTruth, frozenset[DieFlag]]]) -> None:
    """Recall and false flags. "Flat" is flat, unstacked and on the pad: in a bar any flag on
    such a die is a false alarm that forces a re-roll, so the COCKED-or-STACKED rate is the
    figure to keep under 1 %."""
    steep = [f for d, f in results if d.tilt_deg >= 15 and not d.stacked]
    flat = [f for d, f in results if d.tilt_deg == 0 and not d.stacked and d.on_pad]
    stacked = [f for d, f in results if d.stacked]
    on_top = [f for d, f in results if d.stacked and d.tilt_deg < 10]  # the die below hidden
    leaning = [f for d, f in results if d.stacked and d.tilt_deg >= 10]  # against another die
    plain = [f for d, f in results if not d.stacked]

    def rate(xs: Sequence[frozenset[DieFlag]], *flags: DieFlag) -> str:
        k = sum(bool(f & set(flags)) for f in xs)
        return f"{k}/{len(xs)} = {k / max(len(xs), 1):.4f}"

    print(f"    COCKED recall, tilt >= 15 deg:  {rate(steep, DieFlag.COCKED)}")
    print(f"    tilted flagged (either flag):   {rate(steep, DieFlag.COCKED, DieFlag.STACKED)}")
    print(f"    STACKED recall:                 {rate(stacked, DieFlag.STACKED)}")
    print(f"      on top of a die:              {rate(on_top, DieFlag.STACKED)}")
    print(f"      leaning against a die:        {rate(leaning, DieFlag.STACKED)}")
    print(f"    stacked flagged (either flag):  {rate(stacked, DieFlag.STACKED, DieFlag.COCKED)}")
    print(f"    flat dice flagged COCKED:       {rate(flat, DieFlag.COCKED)}")
    print(f"    flat dice flagged STACKED:      {rate(flat, DieFlag.STACKED)}")
    print(f"    flat dice flagged (either):     {rate(flat, DieFlag.COCKED, DieFlag.STACKED)}")
    print(f"    not-stacked dice flagged STACKED: {rate(plain, DieFlag.STACKED)}")


def flag_time(
    image: np.ndarray, reading: Reading, pad: Pad | None
) -> tuple[float, tuple[flags.Evidence, ...]]:
    """Seconds ``vision.flags`` takes on a frame read by ``read_roll``: what the flags add to
    it (the hook ``vision.detect`` calls, with the same views, values and pad; so with the
    size cue, which measures pips in some frames only); and its evidence on each die."""
    views = [flags.DieView(r.center_xy, r.size_px, top_angle(r)) for r in reading.dice]
    values = [r.value for r in reading.dice]
    t = time.perf_counter()
    evidence = flags.judge(image, views, values=values, pad=pad)
    return time.perf_counter() - t, evidence


def flag_right(d: DieTruth, flag: DieFlag) -> bool:
    """Whether a COCKED / STACKED flag on true die ``d`` is right (COCKED: 10 degrees)."""
    return d.cocked if flag is DieFlag.COCKED else d.stacked


CONFIDENCE_BINS = (0.0, 0.8, 0.9, 0.95, 0.99, 1.0001)


def print_confidence(
    judged: Sequence[tuple[DieTruth, DieReading, flags.Evidence]],
) -> None:
    """Is a flag's confidence (``DieReading.flag_confidence``) what it claims? Per bin of
    confidence, how many flags were right; and per cue (``flags.Evidence.decisions``, judged
    again on the reading's dice: ``disagree`` counts the dice where that differs from
    read_roll's flags), how often the dice it flagged were flagged rightly -- the precision
    the rules' confidences (``FlagParams.*_confidence``) are set to."""
    for flag in (DieFlag.COCKED, DieFlag.STACKED):
        row = []
        for lo, hi in itertools.pairwise(CONFIDENCE_BINS):
            hits = [
                flag_right(d, flag)
                for d, r, _ in judged
                if (c := r.flag_sure(flag)) is not None and lo <= c < hi
            ]
            if hits:
                row.append(f"[{lo:.2f},{min(hi, 1):.2f}) {sum(hits)}/{len(hits)}")
        print(f"    {flag.value} flags right, by confidence: {'; '.join(row) or 'none'}")
    cues: dict[tuple[DieFlag, flags.Cue], list[bool]] = {}
    disagree = 0
    for d, r, e in judged:
        disagree += e.flags() != r.flags & JUDGED
        for k in e.decisions():
            cues.setdefault((k.flag, k.cue), []).append(flag_right(d, k.flag))
    parts = [
        f"{f.value} by {c.value} {sum(v)}/{len(v)} = {sum(v) / len(v):.3f}"
        for (f, c), v in sorted(cues.items())
    ]
    print(f"    right, per cue: {'; '.join(parts)} ({disagree} dice judged otherwise)")


def top_angle(r: DieReading) -> float:
    """A reading's turn in [-45, 45) degrees, from its first top-face edge."""
    (x0, y0), (x1, y1) = r.corners_xy[0], r.corners_xy[1]
    return (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0


def added(reads: Sequence[float], judged: Sequence[float]) -> str:
    """The flags' median time as a share of ``read_roll``'s median time without them (and
    the same of the means: the size cue costs some frames only)."""
    share = statistics.median(judged) / max(
        statistics.median(reads) - statistics.median(judged), 1e-9
    )
    mean = statistics.fmean(judged) / max(statistics.fmean(reads) - statistics.fmean(judged), 1e-9)
    return (
        f"read_roll {ms(reads)}; flags {ms(judged)} = +{share:.1%} over the reader alone"
        f" (means: +{mean:.1%})"
    )


def bench_flags(quick: bool) -> None:
    print("flags on synthetic scenes")
    n = 60 if quick else 400
    kinds = {"n_dice": None, "cocked": 0.3, "stacked": 0.15, "off_pad": 0.15, "max_tilt_deg": 40.0}
    sets = {
        "clean": scenes(20, n, degrade=False, **kinds),
        "degraded": scenes(21, n, degrade=True, **kinds),
        # flat dice side by side, touching, as in a tray (a die beside another is not on it)
        "tray": scenes(22, n, degrade=False, **{**kinds, "n_dice": 6, "spacing": 1.0}),
        # dice tilted anywhere in the open pad, any way (on a crumb, a coin, a fold of the felt)
        "open pad": scenes(23, n, degrade=False, **{**kinds, "cocked_anywhere": 1.0}),
    }
    rng = np.random.default_rng(3)
    for label, shots in sets.items():
        results, times = [], []
        for shot in shots:
            seen = [d for d in shot.truth.dice if d.visible >= 0.5]
            t = time.perf_counter()
            views = [view_of(d, rng) for d in seen]
            values = [d.value for d in seen]
            ev = flags.judge(shot.image, views, values=values, pad=shot.truth.pad)
            times.append(time.perf_counter() - t)
            results += [(d, e.flags()) for d, e in zip(seen, ev, strict=True)]
        print(
            f"  from the true geometry (jittered), {label}: {len(results)} dice,"
            f" judge {ms(times)} per frame"
        )
        flag_rates(results)
    read_roll = reader()
    if read_roll is None:
        return
    for label, shots in sets.items():
        results, missed, reads, judged = [], 0, [], []
        side_seen: list[tuple[DieTruth, frozenset[DieFlag]]] = []
        cues: list[tuple[DieTruth, tuple[bool, float]]] = []
        off = off_right = off_missed = calm = calm_flagged = 0
        stacks: list[tuple[bool, bool]] = []  # per stacked die: flagged, throw miscounted
        sure: list[tuple[DieTruth, DieReading, flags.Evidence]] = []
        for shot in shots:
            t = time.perf_counter()
            reading = read_roll(shot.image, pad=shot.truth.pad)
            reads.append(time.perf_counter() - t)
            seconds, evidence = flag_time(shot.image, reading, shot.truth.pad)
            judged.append(seconds)
            if all(d.tilt_deg == 0 and not d.stacked for d in shot.truth.dice):
                calm += 1  # a roll with nothing to flag: any COCKED / STACKED is a false re-roll
                calm_flagged += any(
                    r.flags & {DieFlag.COCKED, DieFlag.STACKED} for r in reading.dice
                )
            pairs = match(shot.truth.dice, reading)
            spare = set(range(len(reading.dice))) - {i for _, i in pairs}
            miscounted = len(reading.dice) != len(shot.truth.dice)
            for d, i in pairs:
                if d.stacked:
                    at = i if i is not None else off_face(d, reading, spare)
                    marks = reading.dice[at].flags if at is not None else frozenset()
                    stacks.append((bool(marks & {DieFlag.COCKED, DieFlag.STACKED}), miscounted))
                # a sloppy die lies flat off the pad; a die leaning on the rail can have its
                # top-face centre a pixel past the pad's edge: that is COCKED's business
                sloppy = not d.on_pad and d.tilt_deg == 0
                if i is None:
                    missed += 1
                    off_missed += sloppy
                    aside = off_face(d, reading, spare)
                    if aside is not None:
                        spare.discard(aside)
                        side_seen.append((d, reading.dice[aside].flags))
                    continue
                results.append((d, reading.dice[i].flags))
                sure.append((d, reading.dice[i], evidence[i]))
                if d.stacked or (d.tilt_deg == 0 and d.on_pad):
                    cues.append((d, stack_cues(reading, i)))
                if sloppy:
                    off += 1
                    off_right += DieFlag.OFF_PAD in reading.dice[i].flags
        print(
            f"  end to end through read_roll, {label}: {len(results)} dice matched, {missed} missed"
        )
        flag_rates(results)
        print_off_face(results, side_seen)
        print(
            f"    OFF_PAD recall (true pad):      {off_right}/{off} = {off_right / max(off, 1):.4f}"
            f" of the sloppy dice read; {off_missed} more not found by the reader"
        )
        print(
            f"    rolls of flat dice with a COCKED/STACKED flag: {calm_flagged}/{calm}"
            f" = {calm_flagged / max(calm, 1):.4f}"
        )
        print_confidence(sure)
        print_stack_cues(cues)
        print_stacks_at_the_pad(stacks)
        print(f"    {added(reads, judged)}")


def print_stacks_at_the_pad(stacks: Sequence[tuple[bool, bool]]) -> None:
    """What a stack costs at the bar: the pad service takes a throw of a known number of dice
    only with that many dice read (a die hidden under another leaves one fewer: "re-roll"), so
    a stacked die goes unnoticed only when it is not flagged *and* its throw reads the right
    count. (Not on a throw after a keep: there the count tells the keep, see
    ``server.pad.decide``.)"""
    n = len(stacks)
    flagged = sum(f for f, _ in stacks)
    caught = sum(f or m for f, m in stacks)
    print(
        f"    stacked dice flagged COCKED/STACKED: {flagged}/{n}; flagged or their throw"
        f" miscounted (asked again on a throw of known count): {caught}/{n}"
        f" = {caught / max(n, 1):.4f}"
    )


SIDE_FACE_REACH = 1.1
"""A tilted or stacked die the reader centred this far (in sides) from its top face, on the
side face it shows, is still that die (``bench/train_flags.py`` labels it so)."""


def off_face(d: DieTruth, reading: Reading, spare: set[int]) -> int | None:
    """The unmatched detection on tilted or stacked die ``d``'s side face, if any: the reader
    saw the die but centred it off its top face (and read the side face's value)."""
    if d.tilt_deg < 10 and not d.stacked:
        return None
    near = [
        (math.dist(d.center_xy, reading.dice[j].center_xy), j)
        for j in spare
        if math.dist(d.center_xy, reading.dice[j].center_xy) < SIDE_FACE_REACH * d.size_px
    ]
    return min(near)[1] if near else None


def print_off_face(
    results: Sequence[tuple[DieTruth, frozenset[DieFlag]]],
    side_seen: Sequence[tuple[DieTruth, frozenset[DieFlag]]],
) -> None:
    """The tilted / stacked dice the reader saw only off their top face: the recalls above
    leave them out (no detection on the top face), yet an unflagged one is a die read with a
    side face's value, silently. Then the COCKED-or-STACKED recall of every die tilted 15
    degrees or more, on its top face or off it."""
    flagged = sum(bool(f & {DieFlag.COCKED, DieFlag.STACKED}) for _, f in side_seen)
    print(
        f"    tilted/stacked dice seen only off their top face: {len(side_seen)},"
        f" flagged (either) {flagged}"
    )
    steep = [f for d, f in [*results, *side_seen] if d.tilt_deg >= 15 and not d.stacked]
    k = sum(bool(f & {DieFlag.COCKED, DieFlag.STACKED}) for f in steep)
    print(
        f"    tilted >= 15 deg, on or off the top face, flagged (either): {k}/{len(steep)}"
        f" = {k / max(len(steep), 1):.4f}"
    )


def stack_cues(reading: Reading, i: int) -> tuple[bool, float]:
    """What geometry alone says of detection ``i``: whether another (distinct) detection is in
    ``FlagParams.stack_reach`` (the die below or leaned on, found by the reader), and its side
    over the median of the other detections' (nan alone): a die on a die is nearer the camera."""
    p = flags.FlagParams()
    r = reading.dice[i]
    view = flags.DieView(r.center_xy, r.size_px, 0.0)
    others = [
        flags.DieView(o.center_xy, o.size_px, 0.0) for j, o in enumerate(reading.dice) if j != i
    ]
    near = neighbours_of(view, others, p.duplicate)
    reach = any(
        math.dist(r.center_xy, o.center_xy) < p.stack_reach * max(r.size_px, o.side_px)
        for o in near
    )
    size = r.size_px / statistics.median(o.side_px for o in others) if others else math.nan
    return reach, size


def print_stack_cues(cues: Sequence[tuple[DieTruth, tuple[bool, float]]]) -> None:
    """Why stacks are missed: is the die below (or leaned on) a detection of its own, and does
    the die on top look larger than the other dice (against flat dice's spread)?"""

    def line(label: str, group: Sequence[tuple[bool, float]]) -> str:
        sizes = sorted(x for _, x in group if not math.isnan(x))
        reach = sum(r for r, _ in group)
        spread = (
            f"size / others' median {statistics.median(sizes):.2f}"
            f" (p90 {sizes[int(0.9 * (len(sizes) - 1))]:.2f})"
            if sizes
            else "no size to compare"
        )
        return f"      {label}: another detection in reach {reach}/{len(group)}; {spread}"

    on_top = [c for d, c in cues if d.stacked and d.tilt_deg < 10]
    leaning = [c for d, c in cues if d.stacked and d.tilt_deg >= 10]
    flat = [c for d, c in cues if not d.stacked]
    print("    stack cues from the reader's geometry:")
    for label, group in (("on top", on_top), ("leaning", leaning), ("flat", flat)):
        if group:
            print(line(label, group))


def bench_pad(quick: bool) -> None:
    """``find_pad`` on renders of each pad style of ``vision.synth`` (felts, leather, a black
    rubber mat, a grey felt) under a lamp at one side, from any direction: IoU with the true
    pad per style and light gradient (0 = even light; 0.4 = one side 40 % brighter than the
    middle, the other 40 % darker)."""
    from dataclasses import replace

    from vision.pad import polygon_iou
    from vision.synth.scenes import _PADS

    print("find_pad on renders of the empty pad, by pad colour (BGR) and light gradient")
    seeds = range(20, 24 if quick else 32)
    for colour, rail, table in _PADS:
        row = []
        for gradient in (0.0, 0.25, 0.4):
            ious = []
            for seed in seeds:
                base = synth.random_scene(np.random.default_rng(seed), n_dice=0)
                look = replace(
                    base.pad, colour=colour, rail_colour=rail, table_colour=table, texture=0.5
                )
                lamp = replace(
                    base.lighting, gradient=gradient, gradient_dir_deg=float(25 * seed % 360)
                )
                shot = synth.render(replace(base, pad=look, lighting=lamp, degrade=synth.Degrade()))
                try:
                    ious.append(polygon_iou(find_pad(shot.image), shot.truth.pad))
                except PadNotFoundError:
                    ious.append(0.0)
            low = sum(i < 0.95 for i in ious)
            row.append(
                f"{gradient:.2f}: median {statistics.median(ious):.3f}, min {min(ious):.3f},"
                f" {low}/{len(ious)} under 0.95"
            )
        print(f"  {colour}  " + ";  ".join(row))


def bench_settle(quick: bool) -> None:
    print("settle detection on chained rendered throws (30 fps)")
    n = 40 if quick else 200
    rng = np.random.default_rng(7)
    fps = 30.0
    det = SettleDetector()
    exact = during = 0
    latencies, times_full, frames = [], [], 0
    before: tuple[synth.DieSpec, ...] = ()
    base = synth.random_scene(rng, n_dice=0, degrade=True)
    for k in range(n):
        if not before and k % 10 == 0:
            base = synth.random_scene(rng, n_dice=0, degrade=bool(rng.random() < 0.5))
        seq = synth.throw_sequence(
            rng,
            base=base,
            before=before,
            n_dice=None if before else int(rng.integers(1, 7)),
            fps=fps,
            drift=float(rng.uniform(-0.002, 0.002)),
        )
        events = []
        for i in range(len(seq)):
            frame = seq.frame(i)
            t = time.perf_counter()
            event = det.feed(frame.image)
            times_full.append(time.perf_counter() - t)
            frames += 1
            if event is not None:
                events.append(i)
                during += frame.truth.moving
        if len(events) == 1 and events[0] >= seq.rest_index:
            exact += 1
            latencies.append((events[0] - seq.rest_index) / fps * 1000)
        before = seq.remaining
    grey = np.asarray(
        cv2.resize(
            cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY), (160, 120), interpolation=cv2.INTER_AREA
        ),
        np.uint8,
    )
    times_grey = []
    for _ in range(300):
        t = time.perf_counter()
        det.feed(grey)
        times_grey.append(time.perf_counter() - t)
    print(f"  {n} throws, {frames} frames: exactly one event after rest in {exact}/{n}")
    if latencies:
        print(
            f"  latency after rest: median {statistics.median(latencies):.0f} ms,"
            f" max {max(latencies):.0f} ms"
        )
    print(f"  events while something moved: {during}")
    print(
        f"  per frame, 640x480 BGR in: {ms(times_full)}; 160x120 grey preview in: {ms(times_grey)}"
    )


def labelled_reading(image: np.ndarray, boxes: list[dict[str, Any]], pad: Pad | None) -> Reading:
    """A ``Reading`` built from the photo's labels (value, box) with the flags judged on it: the
    flags' view of a photo when the reader itself is not available."""
    from vision.face import face_angle, face_side, square_corners

    views = []
    for box in boxes:
        x, y, w, h = box["bbox"]
        centre = (x + w / 2, y + h / 2)
        crop = image[int(y) : int(y + h), int(x) : int(x + w)]
        angle = face_angle(crop) if crop.size else 0.0
        views.append(flags.DieView(centre, 0.9 * face_side(max(w, h), angle), angle))
    dice = []
    for box, view, ev in zip(boxes, views, flags.judge(image, views), strict=True):
        marks = set(ev.flags())
        if pad is not None and not pad.contains(view.center_xy):
            marks.add(DieFlag.OFF_PAD)
        corners = square_corners(view.center_xy, view.side_px, view.angle_deg)
        dice.append(
            DieReading(
                box["value"], view.center_xy, corners, view.side_px, "?", 1.0, frozenset(marks)
            )
        )
    return Reading(tuple(dice), (image.shape[1], image.shape[0]))


def without_dice(image: np.ndarray, boxes: list[dict[str, Any]]) -> np.ndarray:
    """The photo with its labelled dice (and their shadows) inpainted from the pad around."""
    mask = np.zeros(image.shape[:2], np.uint8)
    for box in boxes:
        x, y, w, h = (int(v) for v in box["bbox"])
        grow = max(w, h) // 4
        cv2.rectangle(mask, (x - grow, y - grow), (x + w + grow, y + h + grow), 255, -1)
    return np.asarray(cv2.inpaint(image, mask, 5, cv2.INPAINT_TELEA), np.uint8)


def bench_sheet(quick: bool) -> None:
    for name, tray in (("nellbyler_d6", True), ("matteop65_d6", False)):
        sheet_of(name, tray, quick)


def sheet_of(name: str, tray: bool, quick: bool) -> None:
    """Flags on one real photo set, where nearly every die lies flat and alone: every COCKED /
    STACKED is a false alarm or a die leaning on the tray wall (an upper bound on false flags;
    the contact sheet shows which)."""
    print(f"flags on {name} (real photos)")
    shared = os.environ.get("DICEPAD_SHARED")
    folder = (Path(shared) if shared else REPO.parent / "shared") / "datasets" / name
    if not folder.is_dir():
        print(f"  skipped: {folder} not found")
        return
    read_roll = reader()
    if read_roll is None:
        print("  using the labelled boxes as the reader's geometry instead")
    labels = json.loads((folder / "labels.json").read_text())
    from vision.annotate import annotate, contact_sheet

    paths = sorted(folder.glob("*.jpg"))[: 40 if quick else None]
    counts = dict.fromkeys(DieFlag, 0)
    tiles, dice, no_pad, either = [], 0, 0, 0
    reads: list[float] = []
    judged: list[float] = []
    for path in paths:
        image = cv2.imread(str(path))
        if image is None:
            raise SystemExit(f"cannot read {path}")
        pad = None
        if tray:
            try:  # find_pad wants the empty pad: paint the labelled dice out first
                pad = find_pad(without_dice(image, labels[path.name]["dice"]))
            except PadNotFoundError:
                no_pad += 1
        if read_roll is not None:
            t = time.perf_counter()
            reading = read_roll(image, pad=pad)
            reads.append(time.perf_counter() - t)
            judged.append(flag_time(image, reading, pad)[0])
        else:
            reading = labelled_reading(image, labels[path.name]["dice"], pad)
        dice += len(reading.dice)
        marked = annotate(image, reading)
        if pad is not None:
            cv2.polylines(marked, [np.asarray(pad.polygon, np.int32)], True, (255, 200, 0), 1)
        for die in reading.dice:
            for f in die.flags:
                counts[f] += 1
            if die.flags & {DieFlag.COCKED, DieFlag.STACKED}:
                either += 1  # a die leaning on another has both: count it once
                r = int(max(40, 2.2 * die.size_px))
                x, y = (int(v) for v in die.center_xy)
                crop = cv2.copyMakeBorder(marked, r, r, r, r, cv2.BORDER_CONSTANT)[
                    y : y + 2 * r, x : x + 2 * r
                ]
                tile = cv2.resize(crop, (160, 160))
                cv2.putText(
                    tile,
                    path.stem[-6:],
                    (3, 155),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    0.35,
                    (255, 255, 255),
                    1,
                )
                tiles.append(tile)
    print(
        f"  {len(paths)} photos, {dice} dice read"
        + (f", pad not found in {no_pad}" if tray else "")
    )
    print("  flags: " + ", ".join(f"{f.value} {n}" for f, n in counts.items()))
    if reads:
        print(f"  {added(reads, judged)}")
    print(
        f"  dice flagged COCKED or STACKED: {either}/{dice} = {either / max(dice, 1):.4f}"
        " (upper bound on false flags)"
    )
    if tiles:
        sheet = contact_sheet(tiles, cols=8)
        OUT.mkdir(parents=True, exist_ok=True)
        out = OUT / f"flags_{name.split('_')[0]}.jpg"
        cv2.imwrite(str(out), sheet, [cv2.IMWRITE_JPEG_QUALITY, 85])
        print(f"  contact sheet: {out} ({len(tiles)} tiles)")


def bench_learnt(quick: bool) -> None:
    """STACKED with and without the flat die's size the pad service learns from settled rolls
    (``vision.pipsize.learned_side``): per camera and set of dice (one look, one die size),
    three settled rolls of five flat dice are measured, then four scenes are judged with the
    pad that knows the size and without it."""
    from dataclasses import replace

    from vision import pipsize

    print("STACKED with a flat size learnt from three settled rolls of the same camera and dice")
    read_roll = reader()
    if read_roll is None:
        return
    kinds: dict[str, Any] = {
        "n_dice": None,
        "cocked": 0.3,
        "stacked": 0.15,
        "off_pad": 0.15,
        "max_tilt_deg": 40.0,
    }
    sets: dict[str, tuple[int, dict[str, Any]]] = {
        "clean": (40, {"degrade": False}),
        "degraded": (41, {"degrade": True}),
        "tray": (42, {"degrade": False, "n_dice": 6, "spacing": 1.0}),
    }
    groups = 15 if quick else 100
    for label, (seed, extra) in sets.items():
        rng = np.random.default_rng(seed)
        counts = dict.fromkeys(("learnt",), 0)
        tally: dict[str, list[int]] = {}
        times: dict[str, list[float]] = {}
        sure: list[tuple[DieTruth, DieReading, flags.Evidence]] = []
        for _ in range(groups):
            look = synth.random_scene(rng, n_dice=0)
            die_mm = float(rng.uniform(14, 19))
            samples: list[float] = []
            for _ in range(3):
                cal = synth.render(
                    synth.random_scene(
                        rng, look=look, die_mm=die_mm, n_dice=5, degrade=extra["degrade"]
                    ),
                    rng=rng,
                )
                dice = read_roll(cal.image, pad=cal.truth.pad).dice
                samples += pipsize.flat_samples(cal.image, dice, cal.truth.pad)
            side = pipsize.learned_side(samples)
            counts["learnt"] += side is not None
            for _ in range(4):
                scene = synth.random_scene(rng, look=look, die_mm=die_mm, **{**kinds, **extra})
                shot = synth.render(scene, rng=rng)
                pad = shot.truth.pad
                for tag, p in (("without", pad), ("with", replace(pad, flat_side_px=side))):
                    t0 = time.perf_counter()
                    reading = read_roll(shot.image, pad=p)
                    if side is not None:  # the same frames both ways
                        times.setdefault(tag, []).append(time.perf_counter() - t0)
                    # the flags judged again, for their cues: only where the size is learnt
                    again = tag == "with" and side is not None
                    evidence = flag_time(shot.image, reading, p)[1] if again else ()
                    for d, i in match(shot.truth.dice, reading):
                        if i is None:
                            continue
                        f = reading.dice[i].flags
                        if evidence:
                            sure.append((d, reading.dice[i], evidence[i]))
                        for what, mine, hit in (
                            ("on top", d.stacked and d.tilt_deg < 10, DieFlag.STACKED in f),
                            ("stacked", d.stacked, DieFlag.STACKED in f),
                            (
                                "flat flagged",
                                d.tilt_deg == 0 and not d.stacked and d.on_pad,
                                bool(f & {DieFlag.COCKED, DieFlag.STACKED}),
                            ),
                            ("not stacked, STACKED", not d.stacked, DieFlag.STACKED in f),
                        ):
                            if mine:
                                t = tally.setdefault(f"{tag} {what}", [0, 0])
                                t[0] += hit
                                t[1] += 1
        print(f"  {label}: size learnt for {counts['learnt']} of {groups} cameras")
        for what in ("on top", "stacked", "flat flagged", "not stacked, STACKED"):
            line = []
            for tag in ("without", "with"):
                k, n = tally.get(f"{tag} {what}", [0, 0])
                line.append(f"{tag} {k}/{n} = {k / max(n, 1):.4f}")
            print(f"    {what:13s} " + ";  ".join(line))
        if times.get("with"):
            ratios = [w / o for w, o in zip(times["with"], times["without"], strict=True)]
            print(
                f"    read_roll where the size is learnt: without {ms(times['without'])},"
                f" with {ms(times['with'])}; with / without per frame, median"
                f" {statistics.median(ratios):.3f}"
            )
        print("    with the size learnt:")
        print_confidence(sure)


SECTIONS = {
    "renderer": bench_renderer,
    "reader": bench_reader,
    "flags": bench_flags,
    "learnt": bench_learnt,
    "settle": bench_settle,
    "pad": bench_pad,
    "sheet": bench_sheet,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer scenes, rough figures")
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    for name in args.only.split(","):
        if name not in SECTIONS:
            ap.error(f"unknown section {name!r}; choose from {', '.join(SECTIONS)}")
        t = time.perf_counter()
        SECTIONS[name](args.quick)
        print(f"  ({time.perf_counter() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
