"""``bench/bench_speed.py``'s ``size`` section: dice read by their size in px, the same scenes
rendered at every capture width."""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from speed_bench.common import med, ms

SIZE_WIDTHS = (160, 192, 224, 256, 288, 320, 384, 448, 512, 640, 800)
"""Capture widths (4:3) the same scenes are rendered at: flat 16 mm dice come out 7-50 px."""


def section_size(n_scenes: int) -> None:
    """How well ``read_roll`` reads dice of each size in px, as the camera's capture size sets
    it: the same ``vision.synth`` scenes (flat 16 mm dice on the pad, clean and degraded)
    rendered at every width of ``SIZE_WIDTHS`` (a smaller capture of the same view: the dice
    take the same share of the frame, fewer pixels). A die is read right when a detection
    within half a side of it has its value; the figures per bin of true side px and the time
    per frame. ``dicepad calibrate`` warns under the size where they fall."""
    from vision import synth
    from vision.detect import read_roll

    bins = (6, 10, 12, 14, 16, 18, 20, 22, 24, 28, 32, 40, 56)
    right: dict[int, int] = defaultdict(int)
    total: dict[int, int] = defaultdict(int)
    asked: dict[int, int] = defaultdict(int)
    wrong: dict[int, int] = defaultdict(int)
    spent: dict[int, list[float]] = defaultdict(list)
    measured: list[float] = []  # the reader's size_px over the true side, dice read right
    for i in range(n_scenes):
        rng = np.random.default_rng(5000 + i)
        scene = synth.random_scene(rng, n_dice=int(rng.integers(3, 7)), die_mm=16.0)
        scene = synth.random_scene(
            rng, n_dice=len(scene.dice), die_mm=16.0, look=scene, degrade=bool(i % 2)
        )
        for width in SIZE_WIDTHS:
            shot = synth.render(scene, size=(width, width * 3 // 4), rng=np.random.default_rng(i))
            t = time.thread_time()
            dice = read_roll(shot.image).dice
            spent[width].append(time.thread_time() - t)
            for truth in shot.truth.dice:
                if truth.cocked or truth.stacked or not truth.on_pad or truth.visible < 0.9:
                    continue
                b = max(k for k in range(len(bins) - 1) if truth.size_px >= bins[k] or k == 0)
                total[b] += 1
                near = [
                    d
                    for d in dice
                    if np.hypot(*np.subtract(d.center_xy, truth.center_xy)) < truth.size_px / 2
                ]
                if any(d.value == truth.value for d in near):
                    right[b] += 1
                    measured.append(near[0].size_px / truth.size_px)
                elif any(d.value is not None for d in near):
                    wrong[b] += 1
                elif near:
                    asked[b] += 1
    print(f"\n== dice read by size in px: {n_scenes} scenes x {len(SIZE_WIDTHS)} capture widths")
    for b in sorted(total):
        n = total[b]
        print(
            f"  {bins[b]:3d}-{bins[b + 1]:3d} px  {n:4d} dice  right {right[b] / n:6.1%}  "
            f"wrong {wrong[b] / n:5.1%}  asked {asked[b] / n:5.1%}  "
            f"missed {(n - right[b] - wrong[b] - asked[b]) / n:5.1%}"
        )
    q = np.percentile(measured, [10, 50, 90])
    print(
        f"  the reader's size_px over the true side: median {q[1]:.2f} (p10 {q[0]:.2f}, "
        f"p90 {q[2]:.2f})"
    )
    for width in SIZE_WIDTHS:
        print(f"  capture {width}x{width * 3 // 4}: read_roll {ms(med(spent[width]))} a frame")
