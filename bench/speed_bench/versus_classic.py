"""``bench/bench_speed.py``'s ``classic`` section: ``read_roll`` against the classic pipeline,
side by side, then per stage."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from speed_bench.clock import Clock, instrumented
from speed_bench.common import DATASETS, med, ms, timed

STAGES = ("locator", "value", "second looks", "flags", "rest")


def section_classic(photos: list[tuple[str, Path, np.ndarray]], rounds: int) -> None:
    from classic import Classic

    from vision.detect import read_roll

    peers = {name: Classic(px) for name, px in DATASETS.items()}
    for _, _, image in photos[:3]:  # load the networks, warm the caches
        read_roll(image)
    # the classic pipeline is told each set's die size, as a fixed camera knows it; read_roll
    # is told what a fixed camera learns (vision.locate.DieSizeMemory): the median size its
    # own reads of the set found
    found: dict[str, list[float]] = defaultdict(list)
    for name, _, image in photos:
        size = getattr(read_roll(image), "located_die_px", None)  # older trees: none
        if size is not None:
            found[name].append(size)
    sizes = {name: med(v) for name, v in found.items()}
    fixed = ("die_px" in read_roll.__code__.co_varnames) and bool(sizes)

    def fixed_camera(name: str, image: np.ndarray) -> Any:
        return read_roll(image, die_px=sizes.get(name)) if fixed else read_roll(image)

    kinds = ("read_roll", "alone", "classic")
    cpu: dict[str, list[list[float]]] = {k: [[] for _ in photos] for k in kinds}
    wall: dict[str, list[list[float]]] = {k: [[] for _ in photos] for k in kinds}
    stages: list[dict[str, float]] = []
    for r in range(rounds):
        for i, (name, _, image) in enumerate(photos):
            clock = Clock()
            order = kinds[(i + r) % 3 :] + kinds[: (i + r) % 3]
            for what in order:
                if what == "read_roll":
                    with instrumented(clock):
                        c, w = timed(fixed_camera, name, image)
                    if r == 0:
                        stages.append(dict(clock.spent) | {"total": c})
                elif what == "alone":
                    with instrumented(Clock()):  # as timed as the fixed camera's read
                        c, w = timed(read_roll, image)
                else:
                    c, w = timed(peers[name], image)
                cpu[what][i].append(c)
                wall[what][i].append(w)
    rr = [med(t) for t in cpu["read_roll"]]
    cl = [med(t) for t in cpu["classic"]]
    alone = [med(t) for t in cpu["alone"]]
    ratios = [a / b for a, b in zip(rr, cl, strict=True)]
    print(f"\n== read_roll vs classic: {len(photos)} DEV photos x {rounds} rounds, one thread")
    told = ", ".join(f"{n} {v:.0f} px" for n, v in sizes.items()) if fixed else "not known"
    print(f"  (read_roll as a fixed camera reads, the dice's size learnt: {told})")

    def per_set(times: list[float]) -> None:
        for name in DATASETS:
            idx = [i for i, p in enumerate(photos) if p[0] == name]
            print(
                f"  {name:13s} read_roll {ms(med([times[i] for i in idx]))}   classic "
                f"{ms(med([cl[i] for i in idx]))}   ratio (median per photo) "
                f"{med([times[i] / cl[i] for i in idx]):.2f}"
            )

    per_set(rr)
    print(
        f"  {'all':13s} read_roll {ms(med(rr))}   classic {ms(med(cl))}   "
        f"ratio of medians {med(rr) / med(cl):.2f}   median per-photo ratio {med(ratios):.2f}"
    )
    print(
        f"  (wall: read_roll {ms(med([med(t) for t in wall['read_roll']]))}, classic "
        f"{ms(med([med(t) for t in wall['classic']]))})"
    )
    print("  each photo on its own (its dice's size measured first, no camera to learn it):")
    per_set(alone)
    own = med([a / b for a, b in zip(alone, cl, strict=True)])
    print(f"  {'all':13s} median per-photo ratio {own:.2f}")
    print("\n== read_roll per stage (thread CPU, median over photos; share of the mean total)")
    total_mean = statistics.fmean(s["total"] for s in stages)
    for stage in STAGES:
        if stage == "rest":
            vals = [s["total"] - sum(s.get(x, 0.0) for x in STAGES[:-1]) for s in stages]
            net = [0.0 for _ in stages]
        else:
            vals = [s.get(stage, 0.0) for s in stages]
            net = [s.get(f"{stage} net", 0.0) for s in stages]
        print(
            f"  {stage:13s} {ms(med(vals))}  (mean {ms(statistics.fmean(vals))}, "
            f"{statistics.fmean(vals) / total_mean:5.1%})   of it network "
            f"{ms(statistics.fmean(net))} mean"
        )
    nets_mean = statistics.fmean(sum(v for k, v in s.items() if k.endswith(" net")) for s in stages)
    print(
        f"  {'total':13s} {ms(med([s['total'] for s in stages]))}  (mean {ms(total_mean)}); "
        f"networks {nets_mean / total_mean:.0%} of it"
    )
