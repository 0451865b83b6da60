"""``bench/bench_speed.py --check``: this tree's readings against another revision's, which a
speed change must leave as they were."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from speed_bench.common import REPO, renders

READER = r"""
import json, sys
import cv2, numpy as np
sys.path.insert(0, sys.argv[1])
cv2.setNumThreads(1)
from vision.detect import read_roll
out = []
for path in sys.stdin.read().split("\n"):
    if path:
        image = np.load(path) if path.endswith(".npy") else cv2.imread(path)
        out.append(read_roll(image).to_json())
print(json.dumps(out))
"""


def readings(tree: Path, frames: Sequence[Path]) -> list[Any]:
    """The readings (JSON) of ``frames`` by the ``vision`` package under ``tree``."""
    done = subprocess.run(
        [sys.executable, "-c", READER, str(tree)],
        input="\n".join(str(f) for f in frames),
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    )
    result: list[Any] = json.loads(done.stdout)
    return result


def check(rev: str, photos: list[tuple[str, Path]], n_renders: int) -> int:
    """Readings of this tree against those of ``rev``: a git revision of this checkout, or a
    folder holding another tree's ``vision/``."""
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(rev)
        if not (old / "vision").is_dir():
            old = Path(tmp) / "old"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", rev, "vision"], cwd=REPO, capture_output=True, check=True
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(old, filter="data")
        frames = [p for _, p in photos]
        for i, image in enumerate(renders(n_renders)):
            frames.append(Path(tmp) / f"render{i}.npy")
            np.save(frames[-1], image)
        before, after = readings(old, frames), readings(REPO, frames)
    core = ("value", "flags", "center")
    bad = 0  # frames whose dice differ in value, flags or centre (or in number)
    other: dict[str, int] = defaultdict(int)  # dice differing only elsewhere, per field
    dice = 0
    for frame, a, b in zip(frames, before, after, strict=True):
        dice += len(a["dice"])
        if len(a["dice"]) != len(b["dice"]) or any(
            x[k] != y[k] for x, y in zip(a["dice"], b["dice"], strict=True) for k in core
        ):
            bad += 1
            print(f"  differs: {frame.name}\n    {rev}: {a}\n    now: {b}")
            continue
        for x, y in zip(a["dice"], b["dice"], strict=True):
            for k in x:
                if x[k] != y[k]:
                    other[k] += 1
    print(
        f"check against {rev}: {len(frames)} frames ({len(photos)} DEV photos, {n_renders} "
        f"renders), {dice} dice: "
        + (
            f"{bad} frames differ in a value, flag or centre"
            if bad
            else "values, flags and centres identical"
        )
        + "".join(f"; {n} dice differ in {k}" for k, n in sorted(other.items()))
    )
    return 1 if bad else 0
