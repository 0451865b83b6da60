"""Frame-source throughput and CPU cost: ``./run bench bench_sources [--seconds S]``.

For the demo (synthetic) camera and the files replay (JPEG folder) it reports:

- unpaced: the highest frame rate the source can deliver (median ms per frame), i.e. headroom;
- paced at 30 fps in real time: the CPU share of one core spent producing frames, i.e. what the
  source costs the Pi while the table idles.

Numbers depend on the machine; run it on the Pi to size a deployment.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2

from hardware.demo import DemoSource
from hardware.files import FilesSource
from hardware.frames import FrameSource

Factory = Callable[[float | None], FrameSource]


def unpaced(factory: Factory, frames: int) -> tuple[float, float]:
    """(median ms per frame, frames per second) reading as fast as possible."""
    with factory(None) as src:
        src.read(1.0)  # warm caches
        times = []
        for _ in range(frames):
            t = time.perf_counter()
            src.read(1.0)
            times.append(time.perf_counter() - t)
    med = statistics.median(times)
    return med * 1000, 1 / med


def paced(factory: Factory, fps: float, seconds: float) -> tuple[float, float]:
    """(delivered frames per second, CPU share of one core) at ``fps`` in real time."""
    with factory(fps) as src:
        src.read(1.0)
        n = 0
        wall0, cpu0 = time.perf_counter(), time.process_time()
        while time.perf_counter() - wall0 < seconds:
            src.read(1.0)
            n += 1
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
    return n / wall, cpu / wall


def record_folder(folder: Path, size: tuple[int, int], n: int) -> Path:
    """``n`` demo frames saved as JPEG: a stand-in for a recorded evening."""
    with DemoSource(seed=1, fps=None, size=size) as demo:
        for i in range(n):
            cv2.imwrite(str(folder / f"{i:05d}.jpg"), demo.read(1.0).image)
    return folder


def demo_factory(size: tuple[int, int]) -> Factory:
    """The demo camera at ``size``, seed 1, at the frame rate the factory is given."""

    def make(fps: float | None) -> FrameSource:
        return DemoSource(seed=1, fps=fps, size=size)

    return make


def files_factory(folder: Path) -> Factory:
    """A files replay of ``folder`` at the frame rate the factory is given."""

    def make(fps: float | None) -> FrameSource:
        return FilesSource(folder, fps=fps)

    return make


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="real-time run per source")
    ap.add_argument("--frames", type=int, default=150, help="frames for the unpaced run")
    ap.add_argument("--fps", type=float, default=30.0)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        sources: list[tuple[str, Factory]] = []
        for size in ((640, 480), (1280, 720)):
            label = f"{size[0]}x{size[1]}"
            sources.append((f"demo {label}", demo_factory(size)))
            folder = Path(tmp) / label
            folder.mkdir()
            record_folder(folder, size, 60)
            sources.append((f"files {label} JPEG", files_factory(folder)))

        print(
            f"{'source':<24}{'ms/frame':>10}{'max fps':>10}{'fps @' + str(int(args.fps)):>10}"
            f"{'CPU %':>8}"
        )
        for name, factory in sources:
            ms, top = unpaced(factory, args.frames)
            got, share = paced(factory, args.fps, args.seconds)
            print(f"{name:<24}{ms:>10.2f}{top:>10.0f}{got:>10.1f}{share * 100:>8.1f}")
        print("(ms/frame: median, unpaced; CPU %: one core, paced in real time, incl. the")
        print(" grey preview every frame carries)")


if __name__ == "__main__":
    main()
