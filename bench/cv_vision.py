"""K-fold cross-validation of the dice reader on the DEV photographs (run on demand; hours of CPU).

    .venv/bin/python bench/cv_vision.py --work /tmp/cv [--folds 5] [--jobs 2]
        [--train-python /tmp/trainenv/bin/python] [--set NAME=VALUE ...] [-- TRAIN ARGS...]

For each fold I of K it trains both networks with ``bench/train_vision.py --fold I/K`` (every
photo *not* in fold I, plus the synthetic renders) into ``WORK/fI`` — skipped when that folder
already holds both models, so an interrupted run resumes — then reads fold I's photos, which
that model never saw, and pools the counts of all folds: every DEV photo is scored exactly once,
by a model trained without it. This is the accuracy figure the issue asks for; the shipped
models (trained on every photo) cannot be scored honestly on these photos.

Training needs PyTorch (see ``bench/train_vision.py``); scoring needs only the project's venv.
Arguments after ``--`` go to every training run (e.g. ``-- --value-steps 6000``); ``--set``
overrides reader parameters when scoring (as in ``bench/bench_vision.py``) and must match what
the models were trained for (``locator_long_side_px``, ``crop_px``).
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import cv2  # noqa: E402
from bench_vision import (  # noqa: E402
    DATASETS,
    Score,
    default_datasets_dir,
    evaluate,
    in_fold,
    load_dataset,
    parse_overrides,
    report,
)

from vision.nets import LOCATOR_FILE, VALUE_FILE  # noqa: E402
from vision.params import DetectorParams  # noqa: E402


def trained(folder: Path) -> bool:
    return (folder / LOCATOR_FILE).is_file() and (folder / VALUE_FILE).is_file()


def train_fold(
    python: str, fold: int, folds: int, out: Path, datasets: Path, extra: Sequence[str]
) -> None:
    """One fold's training run (every photo not in fold ``fold``)."""
    train(python, f"fold {fold}", ["--fold", f"{fold}/{folds}"], out, datasets, extra)


def train(
    python: str, label: str, which: Sequence[str], out: Path, datasets: Path, extra: Sequence[str]
) -> None:
    """One training run of ``bench/train_vision.py`` with the photos ``which`` picks (its
    options), in its own process on one thread, its log beside the models; skipped when
    ``out`` already holds both models, so an interrupted run resumes."""
    if trained(out):
        print(f"{label}: models already in {out}", flush=True)
        return
    out.mkdir(parents=True, exist_ok=True)
    script = str(REPO / "bench" / "train_vision.py")
    cmd = [python, script, *which, "--out", str(out), "--datasets", str(datasets)]
    t0 = time.time()
    with (out / "train.log").open("w") as log:
        subprocess.run(
            [*cmd, "--threads", "1", *extra], stdout=log, stderr=subprocess.STDOUT, check=True
        )
    print(f"{label}: trained in {time.time() - t0:.0f} s", flush=True)


def merge(into: dict[str, Score], scores: dict[str, Score]) -> None:
    """Add one fold's counts to the pooled totals (every count added, every list extended)."""
    for name, s in scores.items():
        total = into.setdefault(name, Score())
        for f in dataclasses.fields(Score):
            mine, theirs = getattr(total, f.name), getattr(s, f.name)
            if isinstance(mine, dict):
                for key, n in theirs.items():
                    mine[key] = mine.get(key, 0) + n
            elif isinstance(mine, list):
                mine += theirs
            else:
                setattr(total, f.name, mine + theirs)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="folder for the fold models")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2, help="training runs at once (1 thread each)")
    ap.add_argument("--train-python", default="/tmp/trainenv/bin/python")
    ap.add_argument("--datasets", type=Path, default=default_datasets_dir())
    ap.add_argument("--score-only", action="store_true", help="never train; score what exists")
    ap.add_argument("--wrong", action="store_true", help="list the images not read exactly")
    ap.add_argument(
        "--errors", type=Path, help="write a sheet of the misread dice per data set here"
    )
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = ap.parse_args(argv)
    if args.folds < 2:
        raise SystemExit("--folds must be at least 2")
    folders = [args.work / f"f{i}" for i in range(args.folds)]
    if not args.score_only:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            runs = [
                pool.submit(train_fold, args.train_python, i, args.folds, f, args.datasets, extra)
                for i, f in enumerate(folders)
            ]
            for run in runs:
                run.result()
    cv2.setNumThreads(1)
    overrides = parse_overrides(args.set)
    pooled: dict[str, Score] = {}
    scored = 0
    for i, folder in enumerate(folders):
        if not trained(folder):
            print(f"fold {i}: no models in {folder}, left out", flush=True)
            continue
        params = DetectorParams(models_dir=str(folder), **overrides)
        images = [
            im
            for name in DATASETS
            for im in in_fold(load_dataset(args.datasets, name), (i, args.folds))
        ]
        scores = evaluate(images, params)
        for name, s in scores.items():
            m = s.summary()
            print(
                f"fold {i} {name}: {100 * m['value_accuracy']:.2f} % per die, "
                f"{100 * m['exact_roll_rate']:.2f} % exact ({m['images']} images)",
                flush=True,
            )
        merge(pooled, scores)
        scored += 1
    print(
        f"pooled over {scored} of {args.folds} folds "
        "(every photo read by a model that never saw it):"
    )
    report(pooled, show_wrong=args.wrong, errors=args.errors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
