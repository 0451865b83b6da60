"""What ``bench_vision.py`` prints and draws beside its figures: a sheet of the dice it read
wrong, and how fast this host is (its times mean little without)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.annotate import contact_sheet

if TYPE_CHECKING:
    from bench_vision import Score


def error_sheet(score: Score, path: Path, *, tile: int = 96, cols: int = 10) -> None:
    """Write every die not read right as a tile (twice its label box, "truth>read" on it;
    "-" = missed or unreadable) into one PNG, to see what the reader gets wrong."""
    tiles = []
    for image_path, label, read in score.wrong_dice:
        frame = cv2.imread(str(image_path), cv2.IMREAD_COLOR)
        if frame is None:
            raise SystemExit(f"cannot read {image_path}")
        side = 2 * max(label.bbox[2], label.bbox[3], 15.0)
        (cx, cy), k = label.center, tile / side
        m = np.array([[k, 0, tile / 2 - cx * k], [0, k, tile / 2 - cy * k]])
        crop = cv2.warpAffine(frame, m, (tile, tile), borderMode=cv2.BORDER_CONSTANT)
        text = f"{label.value}>{'-' if read is None else read}"
        cv2.putText(crop, text, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3)
        cv2.putText(crop, text, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1)
        tiles.append(crop)
    if not tiles:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), contact_sheet(tiles, cols))
    print(f"wrote {path} ({len(score.wrong_dice)} dice)")


def host_reference(runs: int = 15) -> str:
    """Two fixed workloads timed like the frames (this thread's CPU time, median): the ms per
    frame are only comparable between machines alongside these. Sessions have run on hosts
    2.3x apart (the same reader: 8-9 and 20 ms a nellbyler_d6 frame)."""
    image = np.random.default_rng(0).integers(0, 256, (640, 640, 3), dtype=np.uint8)

    def python() -> None:
        total = 0
        for i in range(1_000_000):
            total += i

    def opencv() -> None:
        for _ in range(10):
            cv2.GaussianBlur(image, (7, 7), 0)

    def median_ms(work: Callable[[], None]) -> float:
        times = []
        for _ in range(runs):
            t = time.thread_time()
            work()
            times.append(time.thread_time() - t)
        return 1000 * statistics.median(times)

    return (
        f"host reference: Python 1M additions {median_ms(python):.1f} ms,"
        f" OpenCV 10 blurs of 640x640 {median_ms(opencv):.1f} ms"
    )
