"""Vision II benchmark on synthetic scenes (and the flags on real photos); run on demand.

    .venv/bin/python bench/bench_synth.py [--quick] [--only SECTION,...]  (sections below)

- renderer: ms per 640x480 frame (clean, degraded, throw frames with a hand) and the fps.
- reader: ``read_roll`` per-die accuracy on clean flat scenes and on blurred / noisy / JPEG ones
  (a die counts as right when a detection's centre is within half a side of it with its value).
- flags: COCKED recall for tilts >= 15 degrees, STACKED recall (split into dice on top of a
  die, the die below hidden, and dice leaning against one), flat (unstacked, on-pad) dice
  flagged COCKED / STACKED / either, rolls of only flat dice with a false flag, OFF_PAD of the
  flat dice off the pad (with the true pad; and how many of them the reader missed) -- once
  from the true geometry (the flags alone) and once end to end through ``read_roll`` (the
  figures the operating points in ``vision.flags.FlagParams`` are chosen on), with the cues
  geometry alone offers for a stack (is the die below or leaned on a detection of its own; is
  the die on top larger than the frame's other dice, against flat dice's spread), the tilted /
  stacked dice the reader saw only off their top face (a detection on the side face, which the
  recalls leave out) and whether they were flagged; and the time
  the flags add to ``read_roll`` (median, as a share of the reader alone). Scenes: clean, degraded,
  and "tray" (six dice, the flat ones side by side and touching).
- pad: ``find_pad``'s IoU with the true pad on renders of each pad style under an even light and
  a lamp at one side.
- settle: 200 chained rendered throws at 30 fps: throws with exactly one event, latency after
  rest, events during motion, ms per frame.
- learnt: STACKED on top of a die, all STACKED and flat dice flagged, with and without the flat
  die's size learnt from three settled rolls of the same camera and dice (as the pad service
  learns it).
- sheet: ``read_roll`` with the flags on nellbyler_d6 (a pad found in each photo) and
  matteop65_d6; an annotated contact sheet of every COCKED / STACKED die is written to
  bench/out/flags_nellbyler.jpg and bench/out/flags_matteop65.jpg; and the time the flags add
  to ``read_roll`` on those photos.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from synth_bench.common import match, ms, reader, scenes  # noqa: E402
from synth_bench.flag_sections import bench_flags, bench_learnt  # noqa: E402
from synth_bench.sheet import bench_sheet  # noqa: E402

from vision import synth  # noqa: E402
from vision.pad import PadNotFoundError, find_pad  # noqa: E402
from vision.settle import SettleDetector  # noqa: E402


def bench_renderer(quick: bool) -> None:
    print("renderer (640x480)")
    rng = np.random.default_rng(1)
    n = 40 if quick else 200
    for label, degrade in (("clean, 6 dice", False), ("degraded, 6 dice", True)):
        scene = synth.random_scene(rng, n_dice=6, degrade=degrade)
        synth.render(scene, rng=rng)  # draw the cached background once, as a camera would
        times = []
        for _ in range(n):
            t = time.perf_counter()
            synth.render(scene, rng=rng)
            times.append(time.perf_counter() - t)
        print(f"  {label}: {ms(times)} -> {1 / statistics.median(times):.0f} fps")
    seq = synth.throw_sequence(rng, n_dice=5)
    times = []
    for i in range(len(seq)):
        t = time.perf_counter()
        seq.frame(i)
        times.append(time.perf_counter() - t)
    print(
        f"  throw frames (hand, tumbling dice): {ms(times)}"
        f" -> {1 / statistics.median(times):.0f} fps"
    )


def bench_reader(quick: bool) -> None:
    print("reader on synthetic scenes")
    read_roll = reader()
    if read_roll is None:
        return
    n = 40 if quick else 1000
    resin = (*synth.STYLES.values(), *synth.TRANSLUCENT_STYLES.values())
    for label, seed, kinds in (
        ("clean flat", 10, {"degrade": False}),
        ("blur/noise/JPEG", 11, {"degrade": True}),
        # not a target: resin dice whose far pips show through, as in nellbyler_d6
        ("translucent resin dice among them, clean", 12, {"degrade": False, "styles": resin}),
    ):
        right = wrong = asked = total = extra = 0
        for shot in scenes(seed, n, n_dice=None, **kinds):
            reading = read_roll(shot.image)
            pairs = match(shot.truth.dice, reading)
            total += len(pairs)
            read = [(d.value, reading.dice[i].value) for d, i in pairs if i is not None]
            right += sum(v == r for v, r in read)
            asked += sum(r is None for _, r in read)
            wrong += sum(r is not None and r != v for v, r in read)
            extra += len(reading.dice) - sum(i is not None for _, i in pairs)
        print(
            f"  {label}: {right}/{total} dice right = {right / max(total, 1):.4f}"
            f" ({wrong} wrong, {asked} asked), {extra} extra"
        )


def bench_pad(quick: bool) -> None:
    """``find_pad`` on renders of each pad style of ``vision.synth`` (felts, leather, a black
    rubber mat, a grey felt) under a lamp at one side, from any direction: IoU with the true
    pad per style and light gradient (0 = even light; 0.4 = one side 40 % brighter than the
    middle, the other 40 % darker)."""
    from dataclasses import replace

    from vision.pad import polygon_iou
    from vision.synth.scenes import _PADS

    print("find_pad on renders of the empty pad, by pad colour (BGR) and light gradient")
    seeds = range(20, 24 if quick else 32)
    for colour, rail, table in _PADS:
        row = []
        for gradient in (0.0, 0.25, 0.4):
            ious = []
            for seed in seeds:
                base = synth.random_scene(np.random.default_rng(seed), n_dice=0)
                look = replace(
                    base.pad, colour=colour, rail_colour=rail, table_colour=table, texture=0.5
                )
                lamp = replace(
                    base.lighting, gradient=gradient, gradient_dir_deg=float(25 * seed % 360)
                )
                shot = synth.render(replace(base, pad=look, lighting=lamp, degrade=synth.Degrade()))
                try:
                    ious.append(polygon_iou(find_pad(shot.image), shot.truth.pad))
                except PadNotFoundError:
                    ious.append(0.0)
            low = sum(i < 0.95 for i in ious)
            row.append(
                f"{gradient:.2f}: median {statistics.median(ious):.3f}, min {min(ious):.3f},"
                f" {low}/{len(ious)} under 0.95"
            )
        print(f"  {colour}  " + ";  ".join(row))


def bench_settle(quick: bool) -> None:
    print("settle detection on chained rendered throws (30 fps)")
    n = 40 if quick else 200
    rng = np.random.default_rng(7)
    fps = 30.0
    det = SettleDetector()
    exact = during = 0
    latencies, times_full, frames = [], [], 0
    before: tuple[synth.DieSpec, ...] = ()
    base = synth.random_scene(rng, n_dice=0, degrade=True)
    for k in range(n):
        if not before and k % 10 == 0:
            base = synth.random_scene(rng, n_dice=0, degrade=bool(rng.random() < 0.5))
        seq = synth.throw_sequence(
            rng,
            base=base,
            before=before,
            n_dice=None if before else int(rng.integers(1, 7)),
            fps=fps,
            drift=float(rng.uniform(-0.002, 0.002)),
        )
        events = []
        for i in range(len(seq)):
            frame = seq.frame(i)
            t = time.perf_counter()
            event = det.feed(frame.image)
            times_full.append(time.perf_counter() - t)
            frames += 1
            if event is not None:
                events.append(i)
                during += frame.truth.moving
        if len(events) == 1 and events[0] >= seq.rest_index:
            exact += 1
            latencies.append((events[0] - seq.rest_index) / fps * 1000)
        before = seq.remaining
    grey = np.asarray(
        cv2.resize(
            cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY), (160, 120), interpolation=cv2.INTER_AREA
        ),
        np.uint8,
    )
    times_grey = []
    for _ in range(300):
        t = time.perf_counter()
        det.feed(grey)
        times_grey.append(time.perf_counter() - t)
    print(f"  {n} throws, {frames} frames: exactly one event after rest in {exact}/{n}")
    if latencies:
        print(
            f"  latency after rest: median {statistics.median(latencies):.0f} ms,"
            f" max {max(latencies):.0f} ms"
        )
    print(f"  events while something moved: {during}")
    print(
        f"  per frame, 640x480 BGR in: {ms(times_full)}; 160x120 grey preview in: {ms(times_grey)}"
    )


SECTIONS = {
    "renderer": bench_renderer,
    "reader": bench_reader,
    "flags": bench_flags,
    "learnt": bench_learnt,
    "settle": bench_settle,
    "pad": bench_pad,
    "sheet": bench_sheet,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer scenes, rough figures")
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    for name in args.only.split(","):
        if name not in SECTIONS:
            ap.error(f"unknown section {name!r}; choose from {', '.join(SECTIONS)}")
        t = time.perf_counter()
        SECTIONS[name](args.quick)
        print(f"  ({time.perf_counter() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
