"""``bench/bench_synth.py``'s ``sheet`` section: the flags on the real photo sets, with a
contact sheet of every COCKED / STACKED die."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from synth_bench.common import OUT, REPO, reader
from synth_bench.flag_stats import added, flag_time
from vision import flags
from vision.pad import PadNotFoundError, find_pad
from vision.reading import DieFlag, DieReading, Pad, Reading


def labelled_reading(image: np.ndarray, boxes: list[dict[str, Any]], pad: Pad | None) -> Reading:
    """A ``Reading`` built from the photo's labels (value, box) with the flags judged on it: the
    flags' view of a photo when the reader itself is not available."""
    from vision.face import face_angle, face_side, square_corners

    views = []
    for box in boxes:
        x, y, w, h = box["bbox"]
        centre = (x + w / 2, y + h / 2)
        crop = image[int(y) : int(y + h), int(x) : int(x + w)]
        angle = face_angle(crop) if crop.size else 0.0
        views.append(flags.DieView(centre, 0.9 * face_side(max(w, h), angle), angle))
    dice = []
    for box, view, ev in zip(boxes, views, flags.judge(image, views), strict=True):
        marks = set(ev.flags())
        if pad is not None and not pad.contains(view.center_xy):
            marks.add(DieFlag.OFF_PAD)
        corners = square_corners(view.center_xy, view.side_px, view.angle_deg)
        dice.append(
            DieReading(
                box["value"], view.center_xy, corners, view.side_px, "?", 1.0, frozenset(marks)
            )
        )
    return Reading(tuple(dice), (image.shape[1], image.shape[0]))


def without_dice(image: np.ndarray, boxes: list[dict[str, Any]]) -> np.ndarray:
    """The photo with its labelled dice (and their shadows) inpainted from the pad around."""
    mask = np.zeros(image.shape[:2], np.uint8)
    for box in boxes:
        x, y, w, h = (int(v) for v in box["bbox"])
        grow = max(w, h) // 4
        cv2.rectangle(mask, (x - grow, y - grow), (x + w + grow, y + h + grow), 255, -1)
    return np.asarray(cv2.inpaint(image, mask, 5, cv2.INPAINT_TELEA), np.uint8)


def bench_sheet(quick: bool) -> None:
    for name, tray in (("nellbyler_d6", True), ("matteop65_d6", False)):
        sheet_of(name, tray, quick)


def sheet_of(name: str, tray: bool, quick: bool) -> None:
    """Flags on one real photo set, where nearly every die lies flat and alone: every COCKED /
    STACKED is a false alarm or a die leaning on the tray wall (an upper bound on false flags;
    the contact sheet shows which)."""
    print(f"flags on {name} (real photos)")
    shared = os.environ.get("DICEPAD_SHARED")
    folder = (Path(shared) if shared else REPO.parent / "shared") / "datasets" / name
    if not folder.is_dir():
        print(f"  skipped: {folder} not found")
        return
    read_roll = reader()
    if read_roll is None:
        print("  using the labelled boxes as the reader's geometry instead")
    labels = json.loads((folder / "labels.json").read_text())
    from vision.annotate import annotate, contact_sheet

    paths = sorted(folder.glob("*.jpg"))[: 40 if quick else None]
    counts = dict.fromkeys(DieFlag, 0)
    tiles, dice, no_pad, either = [], 0, 0, 0
    reads: list[float] = []
    judged: list[float] = []
    for path in paths:
        image = cv2.imread(str(path))
        if image is None:
            raise SystemExit(f"cannot read {path}")
        pad = None
        if tray:
            try:  # find_pad wants the empty pad: paint the labelled dice out first
                pad = find_pad(without_dice(image, labels[path.name]["dice"]))
            except PadNotFoundError:
                no_pad += 1
        if read_roll is not None:
            t = time.perf_counter()
            reading = read_roll(image, pad=pad)
            reads.append(time.perf_counter() - t)
            judged.append(flag_time(image, reading, pad)[0])
        else:
            reading = labelled_reading(image, labels[path.name]["dice"], pad)
        dice += len(reading.dice)
        marked = annotate(image, reading)
        if pad is not None:
            cv2.polylines(marked, [np.asarray(pad.polygon, np.int32)], True, (255, 200, 0), 1)
        for die in reading.dice:
            for f in die.flags:
                counts[f] += 1
            if die.flags & {DieFlag.COCKED, DieFlag.STACKED}:
                either += 1  # a die leaning on another has both: count it once
                r = int(max(40, 2.2 * die.size_px))
                x, y = (int(v) for v in die.center_xy)
                crop = cv2.copyMakeBorder(marked, r, r, r, r, cv2.BORDER_CONSTANT)[
                    y : y + 2 * r, x : x + 2 * r
                ]
                tile = cv2.resize(crop, (160, 160))
                cv2.putText(
                    tile,
                    path.stem[-6:],
                    (3, 155),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    0.35,
                    (255, 255, 255),
                    1,
                )
                tiles.append(tile)
    print(
        f"  {len(paths)} photos, {dice} dice read"
        + (f", pad not found in {no_pad}" if tray else "")
    )
    print("  flags: " + ", ".join(f"{f.value} {n}" for f, n in counts.items()))
    if reads:
        print(f"  {added(reads, judged)}")
    print(
        f"  dice flagged COCKED or STACKED: {either}/{dice} = {either / max(dice, 1):.4f}"
        " (upper bound on false flags)"
    )
    if tiles:
        sheet = contact_sheet(tiles, cols=8)
        OUT.mkdir(parents=True, exist_ok=True)
        out = OUT / f"flags_{name.split('_')[0]}.jpg"
        cv2.imwrite(str(out), sheet, [cv2.IMWRITE_JPEG_QUALITY, 85])
        print(f"  contact sheet: {out} ({len(tiles)} tiles)")
