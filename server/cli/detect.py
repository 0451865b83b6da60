"""``dicepad detect``: read the dice in photographs, one JSON object per image and line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HELP = "read the dice in photographs (one JSON line per image)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photo files (JPEG, PNG, ...)")
    parser.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per image and line: {"image", "dice": [{"value", "center", "size",'
        ' "colour", "confidence", "flags", "flag_confidence", "candidates", "why"}], "ms"}'
        " (default: one readable line per image)",
    )
    parser.add_argument(
        "--view",
        default="slanted",
        choices=("overhead", "slanted"),
        help="how the camera looked at the dice (default slanted, as most photos are): "
        "overhead uses the pad camera's lower cocked / stacked thresholds",
    )
    parser.add_argument(
        "--house",
        metavar="DIR",
        type=Path,
        help="read with the house model of DIR (``dicepad dice learn``): the house's own dice",
    )
    parser.add_argument(
        "--die-px",
        metavar="PX",
        type=float,
        help="the dice's size across in px, when every photo comes from one fixed camera (a"
        " pad's): the reader then looks for dice once, at that scale (default: it measures the"
        " dice in each photo first)",
    )
    parser.add_argument(
        "--annotate",
        metavar="DIR",
        type=Path,
        help="also write each image with its dice outlined and labelled into DIR",
    )


def run(args: argparse.Namespace) -> int:
    import cv2

    from vision.annotate import annotate
    from vision.detect import read_roll
    from vision.nets import load_nets
    from vision.params import DetectorParams, flags_for_view

    params = DetectorParams(flags=flags_for_view(args.view))
    if args.die_px is not None and not 4.0 <= args.die_px <= 4096.0:
        print(f"dicepad detect: --die-px {args.die_px:g}: a size of 4-4096 px", file=sys.stderr)
        return 2

    nets = load_nets()  # once, before any image is timed
    house = None
    if args.house is not None:
        from vision.house import HouseFolderError, house_model

        if not args.house.is_dir():
            print(f"dicepad detect: no house folder at {args.house}", file=sys.stderr)
            return 2
        try:
            house = house_model(args.house, nets.value)
        except (HouseFolderError, ValueError) as exc:
            print(f"dicepad detect: {exc}", file=sys.stderr)
            return 2
        if house is None:
            print(f"dicepad detect: {args.house} holds too few examples", file=sys.stderr)
            return 2
    failures = 0
    if args.annotate is not None:
        try:
            args.annotate.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"dicepad detect: cannot create {args.annotate}: {exc}", file=sys.stderr)
            return 2
    for name in args.images:
        path = Path(name)
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
        if frame is None:
            why = "no such file" if not path.exists() else "not a readable image"
            if args.json:
                print(json.dumps({"image": name, "error": why}), flush=True)
            print(f"dicepad detect: {name}: {why}", file=sys.stderr)
            failures += 1
            continue
        t0 = time.perf_counter()
        reading = read_roll(frame, params=params, house=house, die_px=args.die_px)
        ms = (time.perf_counter() - t0) * 1000
        dice = [{k: v for k, v in die.to_json().items() if k != "corners"} for die in reading.dice]
        if args.json:
            print(json.dumps({"image": name, "dice": dice, "ms": round(ms, 1)}), flush=True)
        else:
            print(f"{name}: {_summary(dice)}  ({len(dice)} dice, {ms:.1f} ms)", flush=True)
        if args.annotate is not None:
            out = args.annotate / (path.stem + ".png")
            if not cv2.imwrite(str(out), annotate(frame, reading)):
                print(f"dicepad detect: cannot write {out}", file=sys.stderr)
                failures += 1
    if failures:
        print(f"dicepad detect: {failures} of {len(args.images)} image(s) failed", file=sys.stderr)
    return 1 if failures else 0


def _summary(dice: list[dict[str, Any]]) -> str:
    """Values left to right, ``?`` when unreadable, flags in brackets: ``3 5[cocked] ? 6``."""
    parts = []
    for die in sorted(dice, key=lambda d: d["center"][0]):
        text = "?" if die["value"] is None else str(die["value"])
        if die["flags"]:
            text += "[" + ",".join(f for f in die["flags"] if f != "unreadable") + "]"
        parts.append(text.replace("[]", ""))
    return " ".join(parts) or "no dice"
