"""Leave-one-source-out: the dice reader on a photo source nothing of it was trained or tuned
on (run on demand; an hour or two of CPU).

    .venv/bin/python bench/loso_vision.py --work /tmp/loso [--jobs 2]
        [--train-python /tmp/trainenv/bin/python] [--set NAME=VALUE ...] [-- TRAIN ARGS...]

Every bar is a new source -- its own dice, felt, lamp and camera height -- so the figure that
says how the reader does at a bar is not cross-validation within a source (its held-out photos
share the dice and the light of the ones trained on) but this: for each DEV source S, both
networks are trained on the renders plus the *other* sources only (``bench/train_vision.py
--sources``) into ``WORK/without_S`` -- skipped when that folder already holds both models --
and every photo of S is read by them. Nothing of S chooses anything: the reader's thresholds
are ``DetectorParams``' defaults (round numbers, not fitted), or what ``--set`` says.

Per source it prints ``bench_vision``'s figures: per die right / wrong / asked / missed /
extra, per photo exact / asked / silently wrong, and the risk-coverage curve of the confidence;
with ``--curve`` every die is given a value with no second opinion (the network alone).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import cv2  # noqa: E402
from bench_vision import (  # noqa: E402
    CURVE_READER,
    DATASETS,
    camera_die_px,
    default_datasets_dir,
    evaluate,
    load_dataset,
    parse_overrides,
    report,
)
from cv_vision import train, trained  # noqa: E402

from vision.params import DetectorParams  # noqa: E402


def train_without(
    python: str, source: str, out: Path, datasets: Path, extra: Sequence[str]
) -> None:
    """Train both networks on the renders and every source but ``source``."""
    others = ",".join(s for s in DATASETS if s != source)
    train(python, f"without {source}", ["--sources", others], out, datasets, extra)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="folder for the models")
    ap.add_argument("--jobs", type=int, default=2, help="training runs at once (1 thread each)")
    ap.add_argument("--train-python", default="/tmp/trainenv/bin/python")
    ap.add_argument("--datasets", type=Path, default=default_datasets_dir())
    ap.add_argument("--score-only", action="store_true", help="never train; score what exists")
    ap.add_argument("--wrong", action="store_true", help="list the photos silently wrong")
    ap.add_argument(
        "--curve", action="store_true", help="every die given a value, no second opinion"
    )
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument(
        "--camera",
        choices=("photo", "fixed"),
        default="photo",
        help="photo: each photo on its own; fixed: the dice's size a first read of the source's"
        " photos found, given to every read (camera_die_px)",
    )
    args = ap.parse_args(argv)
    folders = {s: args.work / f"without_{s}" for s in DATASETS}
    if not args.score_only:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            runs = [
                pool.submit(train_without, args.train_python, s, f, args.datasets, extra)
                for s, f in folders.items()
            ]
            for run in runs:
                run.result()
    cv2.setNumThreads(1)
    overrides = parse_overrides(args.set)
    if args.curve:
        overrides |= CURVE_READER
    for source, folder in folders.items():
        if not trained(folder):
            print(f"without {source}: no models in {folder}: skipped", flush=True)
            continue
        params = DetectorParams(models_dir=str(folder), **overrides)
        images = load_dataset(args.datasets, source)
        die_px = camera_die_px(images, params) if args.camera == "fixed" else None
        print(f"# {source}, read by models trained without it ({folder}); dice size {die_px}")
        report(evaluate(images, params, die_px), show_wrong=args.wrong)
    return 0


if __name__ == "__main__":
    sys.exit(main())
