"""``dicepad dice``: teach the reader the house's own dice from labelled photos, and look after
the set (``vision.house``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HELP = "teach the reader the house's dice (learn / show / forget)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    learn = sub.add_parser(
        "learn",
        help="add the dice of labelled photos to the house set and fit the house model",
        description="Read each photo, match the dice found to its labels and keep them (and"
        " what was found where no die is labelled, as not a die) in the house set in --out;"
        " then fit the house model and say how well it reads the photos it held back.",
    )
    learn.add_argument("images", nargs="+", metavar="IMAGE", help="photo files")
    learn.add_argument("--out", type=Path, required=True, metavar="DIR", help="house folder")
    learn.add_argument(
        "--labels",
        type=Path,
        required=True,
        metavar="LABELS.json",
        help='{"photo.jpg": {"dice": [{"value": 1-6, "bbox": [x, y, w, h]}]}} (keyed by file'
        " name, as in ../shared/datasets)",
    )
    show = sub.add_parser("show", help="what the house set holds and how well it reads")
    show.add_argument("folder", type=Path, metavar="DIR", help="house folder")
    show.add_argument("--json", action="store_true", help="one JSON object")
    forget = sub.add_parser("forget", help="remove examples from the house set")
    forget.add_argument("folder", type=Path, metavar="DIR", help="house folder")
    what = forget.add_mutually_exclusive_group(required=True)
    what.add_argument("--id", action="append", default=[], help="an example's id (repeatable)")
    what.add_argument("--ref", help="every example from this photo or table/seq")
    what.add_argument("--all", action="store_true", help="every example")


def run(args: argparse.Namespace) -> int:
    from vision.house import HouseFolderError

    try:
        if args.action == "learn":
            return _learn(args)
        if args.action == "show":
            return _show(args)
        return _forget(args)
    except (HouseFolderError, ValueError) as exc:
        print(f"dicepad dice {args.action}: {exc}", file=sys.stderr)
        return 2


def _learn(args: argparse.Namespace) -> int:
    import cv2

    from vision.detect import as_bgr, read_roll
    from vision.house import house_model, load_set, save_set
    from vision.house.learn import labelled_examples as examples_of
    from vision.house.learn import learning_params, parse_labels
    from vision.nets import load_nets
    from vision.params import DetectorParams

    try:
        labels = json.loads(args.labels.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the labels {args.labels}: {exc}") from exc
    if not isinstance(labels, dict):
        raise ValueError(f"{args.labels}: a JSON object keyed by photo file name")
    params = DetectorParams()
    t0 = time.perf_counter()
    house = load_set(args.out)
    new, failures = [], 0
    for name in args.images:
        path = Path(name)
        entry = labels.get(path.name)
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
        if frame is None or entry is None:
            why = "not a readable image" if entry is not None else f"no labels in {args.labels}"
            print(f"dicepad dice learn: {name}: {why}", file=sys.stderr)
            failures += 1
            continue
        image = as_bgr(frame)
        reading = read_roll(image, params=learning_params(params))
        got = examples_of(
            image,
            reading.dice,
            parse_labels(entry),
            ref=path.name,
            added=time.time(),
            params=params,
        )
        new += got
        print(
            f"{path.name}: {sum(e.value != 0 for e in got)} dice, "
            f"{sum(e.value == 0 for e in got)} not dice",
            flush=True,
        )
    house = house.added(new)
    save_set(args.out, house)
    model = house_model(args.out, load_nets().value)
    print(f"learnt in {time.perf_counter() - t0:.1f} s")
    _report(args.out, as_json=False)
    if model is None:
        print("too few examples to fit a house model yet: teach more photos")
    return 1 if failures else 0


def _show(args: argparse.Namespace) -> int:
    if not args.folder.is_dir():
        raise ValueError(f"no house folder at {args.folder}")
    _report(args.folder, as_json=args.json)
    return 0


def _report(folder: Path, *, as_json: bool) -> None:
    from vision.house import house_model, load_set
    from vision.house.learn import held_back
    from vision.house.model import MIN_HELD_BACK
    from vision.nets import load_nets
    from vision.params import DetectorParams

    house, net = load_set(folder), load_nets().value
    floor = DetectorParams().house_confidence
    model = house_model(folder, net) if floor is None else None  # fitted with its figure
    back = held_back(house, net, floor=floor, model=model)
    counts = house.counts()
    origins = {o: sum(e.origin == o for e in house.examples) for o in ("learn", "fix", "answer")}
    if as_json:
        print(
            json.dumps(
                {
                    "examples": len(house),
                    "per_value": {str(v): n for v, n in counts.items()},
                    "origins": origins,
                    "held_back": None
                    if back is None
                    else {
                        "right": back.right,
                        "wrong": back.wrong,
                        "asked": back.asked,
                        "floor": back.floor,
                    },
                }
            )
        )
        return
    faces = "  ".join(f"{v}: {counts[v]}" for v in range(1, 7))
    print(f"{folder}: {len(house)} examples -- per face {faces}; not a die: {counts[0]}")
    print("  from " + ", ".join(f"{o} {n}" for o, n in origins.items()))
    if back is None:
        print("  held back: too few photos to hold any back")
    else:
        n = max(1, back.dice)
        print(
            f"  held back (fitted without their photo): {back.dice} dice, right"
            f" {100 * back.right / n:.1f} %, wrong {100 * back.wrong / n:.1f} % ({back.wrong}),"
            f" asked {100 * back.asked / n:.1f} % (a value given from {back.floor:.2f} sure)"
        )
        if floor is None and back.dice < MIN_HELD_BACK:
            print(
                f"  (0.99 until {MIN_HELD_BACK} dice are held back: fewer cannot show a wrong"
                " rate under 0.2 %)"
            )


def _forget(args: argparse.Namespace) -> int:
    from vision.house import load_set, save_set

    house = load_set(args.folder)
    if args.all:
        kept = house.without(ids=[e.id for e in house.examples])
    elif args.ref:
        kept = house.without(ref=args.ref)
    else:
        unknown = set(args.id) - {e.id for e in house.examples}
        if unknown:
            raise ValueError(f"no example {', '.join(sorted(unknown))} in {args.folder}")
        kept = house.without(ids=args.id)
    save_set(args.folder, kept)
    print(f"forgot {len(house) - len(kept)} example(s); {len(kept)} left")
    return 0
