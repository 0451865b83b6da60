"""The die size a locator learnt dice at, written into its ONNX file (run on demand, with the
training environment: ``onnx``).

    /tmp/trainenv/bin/python bench/locator_scale.py DIR [DIR ...] --sources A[,B] \
        [--synth 1600] [--seed 0] [--synth-share 0.5] [--wide 0.7]

``bench/train_vision.py`` stamps every locator it exports; this stamps a locator trained before
it did (``DIR/locator.onnx``, and ``DIR/fp32/locator.onnx`` where there is one), from the same
training mix rebuilt: the sources' labelled photos and the renders of that seed.

Why: a locator finds and sizes dice best at the sizes it was trained on, and the reader cannot
know a bar's camera height in advance. With the trained size in the file, ``read_roll`` scales
each frame so its dice come out at that size (``DetectorParams.locator_rescale``). The size is
the geometric mean of the training dice's axis-aligned extents at the locator's input size,
each die weighted as the training batches draw its table (``--synth-share`` of them renders,
the rest the photo sources in equal shares): a choice made from the training data alone, so a
held-out source (``bench/loso_vision.py``) chooses nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from vision.nets import LOCATOR_FILE, TRAINED_DIE_PX  # noqa: E402


def trained_die_px(
    by_set: Mapping[str, Sequence[object]], share: Mapping[str, float], side: int
) -> float:
    """The geometric mean of the dice's extents (``train_vision.Sample.dice[i].size``, frame
    px) scaled as the locator saw them (long side ``side``), each die weighted by its set's
    ``share`` of the batches over the set's number of tables."""
    total = weight = 0.0
    for name, samples in by_set.items():
        if not samples or share.get(name, 0.0) <= 0:
            continue
        w = share[name] / len(samples)
        for s in samples:
            h, wd = s.image.shape[:2]  # type: ignore[attr-defined]
            for d in s.dice:  # type: ignore[attr-defined]
                total += w * math.log(d.size * side / max(h, wd))
                weight += w
    if weight <= 0:
        raise ValueError("no labelled die in the training mix")
    return math.exp(total / weight)


def stamp(path: Path, die_px: float) -> None:
    """Write ``die_px`` into the ONNX file at ``path`` as ``vision.nets.TRAINED_DIE_PX``."""
    import onnx

    model = onnx.load(str(path))
    kept = [p for p in model.metadata_props if p.key != TRAINED_DIE_PX]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    model.metadata_props.add(key=TRAINED_DIE_PX, value=f"{die_px:.3f}")
    onnx.save(model, str(path))


def copy_metadata(src: Path, dst: Path) -> None:
    """``src``'s ONNX metadata onto ``dst`` (quantizing drops it)."""
    import onnx

    meta = {p.key: p.value for p in onnx.load(str(src)).metadata_props}
    model = onnx.load(str(dst))
    del model.metadata_props[:]
    for key, value in meta.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(dst))


def main(argv: Sequence[str] | None = None) -> int:
    sys.path.insert(0, str(REPO / "bench"))
    import train_vision as tv
    from bench_vision import DATASETS, default_datasets_dir, load_dataset

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="folders holding a locator.onnx")
    ap.add_argument("--sources", required=True, help="the photo sources it was trained on")
    ap.add_argument("--datasets", type=Path, default=default_datasets_dir())
    ap.add_argument("--synth", type=int, default=1600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synth-share", type=float, default=0.5)
    ap.add_argument("--wide", type=float, default=0.7)
    ap.add_argument("--see-through", type=float, default=0.0)
    ap.add_argument("--side", type=int, default=320, help="the locator's training long side")
    args = ap.parse_args(argv)
    sources = [s for s in args.sources.split(",") if s]
    if not sources or any(s not in DATASETS for s in sources):
        ap.error(f"--sources: name one or more of {', '.join(DATASETS)}")
    by_set: dict[str, list[object]] = {
        s: list(tv.to_samples(load_dataset(args.datasets, s))) for s in sources
    }
    by_set["synth"] = list(
        tv.synth_samples(
            args.synth, np.random.default_rng(args.seed + 1000), args.see_through, args.wide
        )
    )
    share = dict.fromkeys(sources, (1 - args.synth_share) / len(sources))
    share["synth"] = args.synth_share
    size = trained_die_px(by_set, share, args.side)
    for folder in args.dirs:
        for path in (folder / LOCATOR_FILE, folder / "fp32" / LOCATOR_FILE):
            if path.is_file():
                stamp(path, size)
                print(f"{path}: trained at {size:.2f} px")
    return 0


if __name__ == "__main__":
    sys.exit(main())
