"""The fixed samples ``bench/bench_speed.py`` reads (DEV photos, renders), one thread, and
the timing helpers every section prints with."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent.parent

DATASETS = {"nellbyler_d6": 36, "matteop65_d6": 60}
"""DEV photo sets and the die size in px the classic pipeline is given for each."""

F32 = np.ndarray


def shared_dir() -> Path:
    shared = os.environ.get("DICEPAD_SHARED")
    return Path(shared) if shared else REPO.parent / "shared"


def sample_photos(every: int) -> list[tuple[str, Path]]:
    """Every ``every``-th DEV photo of each set (sorted by name): a fixed sample."""
    out = []
    for name in DATASETS:
        paths = sorted((shared_dir() / "datasets" / name).glob("*.jpg"))
        out += [(name, p) for p in paths[::every]]
    return out


def renders(n: int) -> list[np.ndarray]:
    """``n`` fixed ``vision.synth`` scenes, alternately clean and degraded (640 x 480)."""
    from vision import synth

    out = []
    for i in range(n):
        rng = np.random.default_rng(1000 + i)
        scene = synth.random_scene(rng, degrade=bool(i % 2), cocked=0.1, stacked=0.1)
        out.append(synth.render(scene, size=(640, 480), rng=rng).image)
    return out


def one_thread() -> None:
    cv2.setNumThreads(1)
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

        threadpool_limits(1)


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, float]:
    """(thread CPU s, wall s) of one call."""
    w, t = time.perf_counter(), time.thread_time()
    fn(*args)
    return time.thread_time() - t, time.perf_counter() - w


def med(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def ms(x: float) -> str:
    return f"{1000 * x:6.2f} ms"
