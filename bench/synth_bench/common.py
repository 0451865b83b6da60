"""What the sections of ``bench/bench_synth.py`` share: the rendered scenes, the reader (when
its models are there), the matching of its detections to the renderer's truth, the timings."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from vision import flags, synth
from vision.reading import Reading
from vision.synth import DieTruth, SceneImage

REPO = Path(__file__).resolve().parent.parent.parent

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
