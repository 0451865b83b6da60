"""The flag figures ``bench/bench_synth.py`` prints: recalls and false flags, what a flag's
confidence is worth, the dice seen off their top face, the stack cues and what a stack costs
at the pad, and the time the flags add to the reader."""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Sequence

import numpy as np

from synth_bench.common import ms
from vision import flags
from vision.flags.dice import neighbours_of
from vision.reading import JUDGED, DieFlag, DieReading, Pad, Reading
from vision.synth import DieTruth


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
