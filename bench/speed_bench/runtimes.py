"""``bench/bench_speed.py``'s ``runtimes`` section: the three networks under OpenCV's ``dnn``
and under ONNX Runtime, per call and end to end."""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from speed_bench.clock import Clock, instrumented
from speed_bench.common import F32, med, ms, timed


class DnnNet:
    """A network on OpenCV's ``dnn`` (its classic engine, where OpenCV 5 has two: the faster
    here), run like ``vision.nets.Net``: ``run(*inputs)`` in the model's input order."""

    runtime = "cv2.dnn"

    def __init__(self, path: Path, inputs: Sequence[str], first: str) -> None:
        classic = getattr(cv2.dnn, "ENGINE_CLASSIC", None)
        self.net = (
            cv2.dnn.readNetFromONNX(str(path))
            if classic is None
            else cv2.dnn.readNetFromONNX(str(path), engine=classic)
        )
        self.inputs = tuple(inputs)
        self.first = first  # the model's first output: a bare forward() gives dnn's last

    def run(self, *blobs: F32) -> F32:
        for name, blob in zip(self.inputs, blobs, strict=True):
            self.net.setInput(blob, name)
        return np.asarray(self.net.forward(self.first), np.float32)


def ort_net(path: Path) -> Any:
    """The network as the reader runs it (``vision.nets.Net``: ONNX Runtime, one thread)."""
    from vision.nets import Net

    return Net(path)


def section_runtimes(photos: list[tuple[str, Path, np.ndarray]], rounds: int) -> None:
    import vision.flags as flags
    import vision.nets as vnets
    from vision.detect import read_roll

    paths = {
        "locator": vnets.MODELS_DIR / vnets.LOCATOR_FILE,
        "value": vnets.MODELS_DIR / vnets.VALUE_FILE,
        "flags": flags.MODEL_PATH,
    }
    ort = {k: ort_net(p) for k, p in paths.items()}
    runtimes: dict[str, dict[str, Any]] = {
        "cv2.dnn": {k: DnnNet(p, ort[k].inputs, ort[k].outputs[0]) for k, p in paths.items()},
        "onnxruntime": ort,
    }
    # the inputs read_roll gives each network on these photos
    clock = Clock(calls=[])
    with instrumented(clock):
        for _, _, image in photos:
            read_roll(image)
    calls = clock.calls or []
    print(
        f"\n== networks: cv2.dnn {cv2.__version__} vs onnxruntime "
        f"{__import__('onnxruntime').__version__}, NumPy {np.__version__}, "
        f"Python {sys.version.split()[0]}: {len(calls)} calls from {len(photos)} photos"
    )
    for which, blobs in calls[:20]:  # warm both
        for rt in runtimes.values():
            rt[which].run(*blobs)
    per: dict[str, dict[str, list[float]]] = {w: defaultdict(list) for w in paths}
    worst = 0.0
    for r in range(rounds):
        for j, (which, blobs) in enumerate(calls):
            names = list(runtimes) if (j + r) % 2 == 0 else list(reversed(runtimes))
            outs = {}
            for name in names:
                t = time.thread_time()
                outs[name] = runtimes[name][which].run(*blobs)
                per[which][name].append(time.thread_time() - t)
            worst = max(worst, float(np.abs(outs["cv2.dnn"] - outs["onnxruntime"]).max()))
    for which in paths:
        d, o = per[which]["cv2.dnn"], per[which]["onnxruntime"]
        ratio = [a / b for a, b in zip(o, d, strict=True)]
        n = len(d) // rounds
        print(
            f"  {which:8s} {n:4d} calls  dnn {ms(med(d))}  ort {ms(med(o))} per call (median); "
            f"sum per photo dnn {ms(sum(d) / rounds / len(photos))} ort "
            f"{ms(sum(o) / rounds / len(photos))}; ort/dnn median per call {med(ratio):.2f}"
        )
    print(f"  largest output difference between the runtimes: {worst:.2e}")
    # end to end, interleaved photo by photo
    e2e: dict[str, list[list[float]]] = {k: [[] for _ in photos] for k in runtimes}
    for r in range(rounds):
        for i, (_, _, image) in enumerate(photos):
            names = list(runtimes) if (i + r) % 2 == 0 else list(reversed(runtimes))
            for name in names:
                with instrumented(Clock(), runtimes[name]):
                    c, _ = timed(read_roll, image)
                e2e[name][i].append(c)
    d = [med(t) for t in e2e["cv2.dnn"]]
    o = [med(t) for t in e2e["onnxruntime"]]
    print(
        f"  read_roll end to end: dnn {ms(med(d))}  ort {ms(med(o))}  ort/dnn median per "
        f"photo {med([b / a for a, b in zip(d, o, strict=True)]):.2f}"
    )
