"""Pad service latency and idle cost: ``./run bench bench_pad_service [--throws N] [--idle S]``.

Real time, real clock, the loop on its own thread, a real table on a temporary SQLite store:

- latency: from the capture of the frame in which a throw's dice come to rest (the renderer's
  truth) to the ``roll`` being in the log. It splits into the stillness window the settle
  detector waits (``still_ms``; the frames are only known to be still once they have been
  still) and the processing (read the dice, decide, JPEG, append, broadcast);
- idle: the CPU share of one core the whole loop (camera frames at 30 fps, settle detector,
  heartbeats) costs while the pad is still and nobody throws.

Each throw is a Bolo BOLO (no scoring die), so every throw is exactly one ``roll`` action for
the next player. Dice are read by the vision reader when its models are installed, else by the
renderer's ground truth (said in the output): the latter measures the service alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from hardware.clock import REAL_CLOCK
from hardware.frames import FrameSource
from server.feed.hub import Feed
from server.health import Health
from server.pad.reading import Reader, vision_reader
from server.pad.script import ScriptedSource, ThrowPlan, ThrowScript
from server.pad.service import PadService
from server.pad.truth import reading_from_truth, source_truth
from server.store import Store
from server.tables import TableService
from vision.reading import Pad, Reading

MODELS = Path(__file__).resolve().parent.parent / "vision" / "models"
BOLO = (2, 2, 3, 4, 6)  # no scoring die: every throw is a roll for the next player


def _service(
    data: Path, script: ThrowScript, fps: float, use_vision: bool
) -> tuple[PadService, TableService, list[ScriptedSource], Store]:
    store = Store(data / "bench.sqlite3")
    feed = Feed()
    tables = TableService(store, feed, clock=lambda: datetime.now(UTC))
    tables.load()
    sources: list[ScriptedSource] = []

    def opener() -> FrameSource:
        src = ScriptedSource(script, fps=fps, clock=REAL_CLOCK)
        sources.append(src)
        return src

    holder: list[PadService] = []

    def truth(image: np.ndarray, pad: Pad | None) -> Reading:
        scene = source_truth(holder[0].supervisor.source)
        assert scene is not None
        return reading_from_truth(scene)

    reader: Reader = vision_reader() if use_vision else truth
    health = Health(store, feed, monotonic=time.monotonic)
    svc = PadService(tables, opener, health=health, reader=reader)
    holder.append(svc)
    return svc, tables, sources, store


def latency(throws: int, fps: float, size: tuple[int, int], use_vision: bool) -> None:
    plans = [ThrowPlan(BOLO) for _ in range(throws)]
    script = ThrowScript(plans, seed=11, size=size, fps=fps, idle=True, lead_in=int(fps))
    with tempfile.TemporaryDirectory() as tmp:
        svc, tables, sources, store = _service(Path(tmp), script, fps, use_vision)
        players = [f"P{i}" for i in range(throws + 1)]
        table = tables.create("bolo", players=players)["table"]
        svc.start()
        deadline = time.monotonic() + throws * 20 + 30
        while len(tables.log(table)) < throws and time.monotonic() < deadline:
            time.sleep(0.05)
        svc.stop()
        done = list(svc.throws)
        rests = [s for src in sources for s in src.rest_stamps]
        store.close()
    if len(done) != throws or len(rests) != throws:
        print(f"only {len(done)} of {throws} throws settled ({len(rests)} came to rest)")
        return
    total = [t.done_at - r for t, r in zip(done, rests, strict=True)]
    still = [t.frame_at - r for t, r in zip(done, rests, strict=True)]
    work = [t.done_at - t.frame_at for t in done]
    ms = 1000.0
    print(
        f"latency, rest frame -> roll in the log ({throws} throws, {size[0]}x{size[1]} "
        f"at {fps:g} fps, reader: {'vision' if use_vision else 'ground truth'}):"
    )
    p90 = statistics.quantiles(total, n=10)[-1] if len(total) > 1 else total[0]
    print(
        f"  median {statistics.median(total) * ms:6.1f} ms   p90 {p90 * ms:6.1f} ms   "
        f"max {max(total) * ms:6.1f} ms   (target <= 300 ms; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(
        f"  stillness window median {statistics.median(still) * ms:6.1f} ms"
        f" ({statistics.median(still) / statistics.median(total):.0%} of it); "
        f"processing median {statistics.median(work) * ms:5.1f} ms, max {max(work) * ms:5.1f} ms"
    )


def idle(seconds: float, fps: float, size: tuple[int, int]) -> None:
    script = ThrowScript([], seed=1, size=size, fps=fps, idle=True)
    with tempfile.TemporaryDirectory() as tmp:
        svc, tables, _, store = _service(Path(tmp), script, fps, use_vision=False)
        tables.create("bolo", players=["Ann", "Bob"])
        svc.start()
        time.sleep(1.0)  # camera open, first frames
        frames0 = svc.status_json()["frames"]
        wall0, cpu0 = time.perf_counter(), time.process_time()
        time.sleep(seconds)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        frames = svc.status_json()["frames"] - frames0
        svc.stop()
        store.close()
    print(
        f"idle loop ({size[0]}x{size[1]} at {fps:g} fps, still pad, {seconds:g} s): "
        f"{frames / wall:5.1f} frames/s, CPU {cpu / wall:6.1%} of one core "
        f"({cpu / max(frames, 1) * 1000:.2f} ms per frame, frame delivery included)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--throws", type=int, default=8)
    parser.add_argument("--idle", type=float, default=10.0, metavar="SECONDS")
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument(
        "--truth", action="store_true", help="read the renderer's truth even if models exist"
    )
    args = parser.parse_args()
    size = (args.width, args.height)
    use_vision = (MODELS / "locator.onnx").is_file() and not args.truth
    latency(args.throws, args.fps, size, use_vision)
    idle(args.idle, args.fps, size)


if __name__ == "__main__":
    main()
