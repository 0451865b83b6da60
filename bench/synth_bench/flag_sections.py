"""``bench/bench_synth.py``'s flag sections on renders: ``flags`` (from the true geometry and
end to end through ``read_roll``) and ``learnt`` (STACKED with the flat size learnt)."""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from synth_bench.common import match, ms, reader, scenes, view_of
from synth_bench.flag_stats import (
    added,
    flag_rates,
    flag_time,
    off_face,
    print_confidence,
    print_off_face,
    print_stack_cues,
    print_stacks_at_the_pad,
    stack_cues,
)
from vision import flags, synth
from vision.reading import DieFlag, DieReading
from vision.synth import DieTruth


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
