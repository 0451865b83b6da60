"""The per-stage clock: ``read_roll`` with its stages and networks charged to a ``Clock`` (and
its networks swapped for others, for the runtime comparison)."""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from speed_bench.common import F32


@dataclass
class Clock:
    """Per-stage thread CPU time of one ``read_roll``: each wrapped call charges its stage
    (the outermost wrapped call wins), network calls also charge ``<stage> net``."""

    spent: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    stage: str | None = None
    calls: list[tuple[str, list[F32]]] | None = None  # record network inputs when a list

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **k: Any) -> Any:
            if self.stage is not None:
                return fn(*a, **k)
            self.stage = name
            t = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                self.spent[name] += time.thread_time() - t
                self.stage = None

        return timed

    def net(self, which: str, net: Any) -> Any:
        """``net`` (anything with ``run(*inputs)``) timed, as ``vision`` calls a network:
        ``run`` (the flags) or, through ``vision.nets.run``, ``setInput`` / ``forward``."""
        clock = self

        class Timed:
            def __init__(self) -> None:
                self.blobs: list[F32] = []
                self.metadata = getattr(net, "metadata", {})  # the locator's trained size

            def setInput(self, blob: F32, name: str = "") -> None:  # noqa: N802 (cv2's)
                self.blobs.append(blob)

            def forward(self) -> F32:
                blobs, self.blobs = self.blobs, []
                return self.run(*blobs)

            def run(self, *blobs: F32) -> F32:
                if clock.calls is not None:
                    clock.calls.append((which, [b.copy() for b in blobs]))
                t = time.thread_time()
                out = forward(net, blobs)
                clock.spent[f"{clock.stage or which} net"] += time.thread_time() - t
                return out

        return Timed()


def forward(net: Any, blobs: Sequence[F32]) -> F32:
    """One pass of a network with ``run(*inputs)``, or of a bare ``cv2.dnn.Net`` (a tree from
    before ``vision.nets.Net``: the bench times older commits too)."""
    if hasattr(net, "run"):
        out: F32 = net.run(*blobs)
        return out
    names = ("image", "scalars") if len(blobs) == 2 else ("",)
    for name, blob in zip(names, blobs, strict=True):
        net.setInput(blob, name)
    return np.asarray(net.forward(), np.float32)


@contextlib.contextmanager
def instrumented(clock: Clock, nets: dict[str, Any] | None = None) -> Iterator[None]:
    """``read_roll`` with its stages charged to ``clock`` and, with ``nets``, its three
    networks swapped for those (anything with ``run(*inputs)``: the runtime comparison)."""
    import vision.detect as detect
    import vision.flags as flags
    import vision.nets as vnets

    base = vnets.load_nets()
    model = flags.load_model()
    src = nets or {"locator": base.locator, "value": base.value, "flags": model._net}
    swapped = vnets.Nets(
        locator=clock.net("locator", src["locator"]), value=clock.net("value", src["value"])
    )
    saved: list[tuple[Any, str, Any]] = []

    def patch(obj: Any, name: str, new: Any) -> None:
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, new)

    def loaded(*_a: Any, **_k: Any) -> Any:
        return swapped

    patch(detect, "load_nets", loaded)
    patch(model, "_net", clock.net("flags", src["flags"]))
    stages = {"locate": "locator", "classify": "value", "judge": "flags"}
    stages |= dict.fromkeys(("unsure_ones", "undersized", "recentred"), "second looks")
    for name, stage in stages.items():  # the names vision.detect calls them by
        patch(detect, name, clock.wrap(stage, getattr(detect, name)))
    try:
        yield
    finally:
        for obj, name, old in reversed(saved):
            setattr(obj, name, old)
