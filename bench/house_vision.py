"""Vision IV: leave-one-source-out with enrolment -- a photo source nothing was trained on, with
k of its photos taught to a house model (run on demand; minutes).

    .venv/bin/python bench/house_vision.py --work /tmp/loso [--k 0,3,10,30] [--seed 7]
    .venv/bin/python bench/house_vision.py --work /tmp/loso --logos [--seeds 0,1,2,3,7]
    .venv/bin/python bench/house_vision.py --work /tmp/loso --plain [--seeds 0,1,2,3,4,5,6,7]

For each DEV source S the networks trained without S (``bench/loso_vision.py`` leaves them in
``WORK/without_S``; ``bench/embed_value.py`` gives an older value network its embedding) read
S. Its photos are shuffled (``--seed``); the first k are taught as ``dicepad dice learn``
teaches them (the base reader's dice matched to the labels) and the photos after the largest k
and after a third of the source -- the same photos for every k -- are read with the house
model. Per k it prints right / wrong / asked / missed / extra per die and exact / asked /
silently wrong per photo, and how long learning took (``--why``: the asked dice by why they
were asked, ``DieReading.why``). Then the dice not taught: the house model of S's taught third
reads the *other* source, against no house model, with the same networks (it must not read
them worse). ``--plain``: the same questions on renders of plain dice (a house taught one
style, reading that style and the others), so that a house rule can be judged without
looking at a photo source held out.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
from bench_vision import (  # noqa: E402
    DATASETS,
    LabelledImage,
    Score,
    default_datasets_dir,
    load_dataset,
    why_line,
)

from vision import synth  # noqa: E402
from vision.detect import read_roll  # noqa: E402
from vision.house import Example, HouseModel, HouseSet, fit  # noqa: E402
from vision.house.learn import Label, held_back, labelled_examples, learning_params  # noqa: E402
from vision.nets import U8, load_nets  # noqa: E402
from vision.params import DetectorParams  # noqa: E402
from vision.synth import STYLES  # noqa: E402


def frame_of(image: LabelledImage) -> U8:
    frame = cv2.imread(str(image.path), cv2.IMREAD_COLOR)
    if frame is None:
        raise SystemExit(f"cannot read {image.path}")
    return np.asarray(frame, dtype=np.uint8)


def teach(images: Sequence[LabelledImage], params: DetectorParams) -> HouseSet:
    """The house set ``dicepad dice learn`` makes of ``images``."""
    examples = []
    for image in images:
        frame = frame_of(image)
        reading = read_roll(frame, params=learning_params(params))
        labels = [Label(d.value, d.bbox) for d in image.dice]
        examples += labelled_examples(
            frame, reading.dice, labels, ref=image.name, added=0.0, params=params
        )
    return HouseSet().added(examples)


def score(
    images: Sequence[LabelledImage], params: DetectorParams, house: HouseModel | None
) -> Score:
    s = Score()
    for image in images:
        frame = frame_of(image)
        t0 = time.thread_time()
        reading = read_roll(frame, params=params, house=house)
        s.add(image, reading.dice, (time.thread_time() - t0) * 1000)
    return s


def line(name: str, s: Score) -> str:
    n, m = max(1, s.labelled), max(1, s.images)
    missed = s.labelled - s.found
    return (
        f"{name:>10}: per die ({s.labelled}) right {100 * s.right / n:5.1f} %  wrong"
        f" {100 * s.wrong / n:4.2f} % ({s.wrong})  asked {100 * s.asked / n:4.1f} %  missed"
        f" {100 * missed / n:4.1f} %  extra {s.extra} | per photo ({s.images}) exact"
        f" {100 * s.photo_exact / m:5.1f} %  asked {100 * s.photo_asked / m:5.1f} %  silent"
        f" {100 * s.photo_silent / m:4.2f} % ({s.photo_silent})  median"
        f" {sorted(s.ms)[len(s.ms) // 2]:.0f} ms"
    )


def logo_scenes(logo: str, count: int, seed: int) -> list[synth.SceneImage]:
    """``count`` rendered tables of house dice whose ace is ``logo``, half the dice aces."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        style = replace(STYLES[str(rng.choice(sorted(STYLES)))], logo=logo)
        scene = synth.random_scene(rng, n_dice=int(rng.integers(3, 7)), styles=[style])
        dice = tuple(replace(d, value=1) if k % 2 == 0 else d for k, d in enumerate(scene.dice))
        out.append(synth.render(replace(scene, dice=dice), rng=rng))
    return out


def logos(seeds: Sequence[int]) -> None:
    """Logo aces untaught, then taught from 20 aces (and the other faces of those tables):
    per logo, summed over ``seeds`` (each its own taught tables and test tables)."""
    params = DetectorParams()
    net = load_nets().value
    for logo in synth.LOGOS:
        before = np.zeros(6, int)
        after = np.zeros(6, int)
        aces_taught = 0
        for seed in seeds:
            examples: list[Example] = []
            for n, shot in enumerate(logo_scenes(logo, 8, seed)):
                reading = read_roll(shot.image, params=learning_params(params))
                labels = [Label(t.value, _box(t)) for t in shot.truth.dice]
                # a table's name, not id(shot): the held-back folds go by it, and an address
                # differs from run to run (the floor fitted, and the figures, with it)
                examples += labelled_examples(
                    shot.image, reading.dice, labels, ref=f"{logo}-{n}", added=0.0, params=params
                )
            aces_taught += sum(e.value == 1 for e in examples)
            model = fit(HouseSet().added(examples), net)
            test = logo_scenes(logo, 30, seed + 1)
            before += read_dice(test, params, None, only=1)
            after += read_dice(test, params, model, only=1)
        a, one, other, asked, missed, extra = before.tolist()
        print(
            f"{logo:>8} untaught: {a} aces, read as 1 {one}, as another number {other},"
            f" asked {asked}, missed {missed}; extra readings {extra}"
        )
        a, one, other, asked, missed, extra = after.tolist()
        print(
            f"{logo:>8} taught ({aces_taught / len(seeds):.0f} aces): read as 1"
            f" {100 * one / max(1, a):.1f} %, as another number {other}, asked {asked},"
            f" missed {missed}; extra readings {extra}"
        )


def plain_scenes(styles: Sequence[str], count: int, seed: int) -> list[synth.SceneImage]:
    """``count`` rendered tables of plain dice (pips on every face), each of one of ``styles``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        style = STYLES[str(rng.choice(sorted(styles)))]
        scene = synth.random_scene(rng, n_dice=int(rng.integers(3, 7)), styles=[style])
        out.append(synth.render(scene, rng=rng))
    return out


def read_dice(
    shots: Sequence[synth.SceneImage],
    params: DetectorParams,
    house: HouseModel | None,
    only: int | None = None,
) -> npt.NDArray[np.int_]:
    """(dice, right, wrong, asked, missed, extra readings) over ``shots``, of every value or
    ``only`` one: missed is no reading there at all (the locator did not find it, or the value
    network took it for no die and no house model rescued it), and the pad then asks about the
    throw's count instead. Extra counts readings near no die of the table (any value): a house
    that rescues what the value network rejects must not rescue the felt."""
    out = np.zeros(6, int)
    for shot in shots:
        reading = read_roll(shot.image, params=params, house=house)
        out[5] += sum(
            all(math.dist(d.center_xy, t.center_xy) >= 0.5 * t.size_px for t in shot.truth.dice)
            for d in reading.dice
        )
        for truth in shot.truth.dice:
            if only is not None and truth.value != only:
                continue
            near = [
                d
                for d in reading.dice
                if math.dist(d.center_xy, truth.center_xy) < 0.5 * truth.size_px
            ]
            value = near[0].value if near else None
            out[0] += 1
            out[1] += value == truth.value
            out[2] += value is not None and value != truth.value
            out[3] += bool(near) and value is None
            out[4] += not near
    return out


def plain(seeds: Sequence[int]) -> None:
    """Plain dice on renders, so that a house rule can be checked without a photo: per seed a
    house taught 8 tables of one dice style (the seed's, in turn), then 30 more tables of that
    style (taught) and 30 of the other styles (not taught), each read with and without it."""
    params = DetectorParams()
    net = load_nets().value
    names = sorted(STYLES)
    totals = {k: np.zeros(6, int) for k in ("taught", "taught+house", "other", "other+house")}
    for seed in seeds:
        style = names[seed % len(names)]
        examples: list[Example] = []
        for n, shot in enumerate(plain_scenes([style], 8, seed)):
            reading = read_roll(shot.image, params=learning_params(params))
            labels = [Label(t.value, _box(t)) for t in shot.truth.dice]
            examples += labelled_examples(
                shot.image, reading.dice, labels, ref=f"{style}-{n}", added=0.0, params=params
            )
        model = fit(HouseSet().added(examples), net)
        taught = plain_scenes([style], 30, seed + 1)
        other = plain_scenes([n for n in names if n != style], 30, seed + 2)
        totals["taught"] += read_dice(taught, params, None)
        totals["taught+house"] += read_dice(taught, params, model)
        totals["other"] += read_dice(other, params, None)
        totals["other+house"] += read_dice(other, params, model)
    for name, (dice, right, wrong, asked, missed, extra) in totals.items():
        print(
            f"{name:>13}: {dice} dice, right {100 * right / max(1, dice):.2f} %,"
            f" wrong {wrong}, asked {asked}, missed {missed}; extra readings {extra}"
        )


def _box(t: synth.DieTruth) -> tuple[float, float, float, float]:
    xs = [x for x, _ in t.corners_xy]
    ys = [y for _, y in t.corners_xy]
    return (min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="folder of without_S models")
    ap.add_argument("--datasets", type=Path, default=default_datasets_dir())
    ap.add_argument("--k", default="0,3,10,30", help="photos taught, comma-separated")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--seeds",
        help="--logos, --plain: comma-separated seeds, each its own tables (default: --seed)",
    )
    ap.add_argument("--only", help="one source")
    ap.add_argument("--logos", action="store_true", help="only the logo aces (renders)")
    ap.add_argument("--plain", action="store_true", help="only plain dice taught (renders)")
    ap.add_argument("--why", action="store_true", help="why each k's asked dice were asked")
    args = ap.parse_args(argv)
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed]
    if args.logos:
        logos(seeds)
        return 0
    if args.plain:
        plain(seeds)
        return 0
    ks = sorted({int(k) for k in args.k.split(",")})
    sources = {s: load_dataset(args.datasets, s) for s in DATASETS}
    for source, images in sources.items():
        if args.only and source != args.only:
            continue
        params = DetectorParams(models_dir=str(args.work / f"without_{source}"))
        net = load_nets(params.models_dir).value
        order = list(images)
        random.Random(args.seed).shuffle(order)
        third = len(order) // 3
        rest = order[max(max(ks), third) :]
        print(f"== {source}: networks trained without it; {len(rest)} photos read")
        for k in [*ks, third]:
            t0 = time.perf_counter()
            house = teach(order[:k], params)
            model = fit(house, net)
            took = time.perf_counter() - t0
            counts = house.counts()
            scored = score(rest, params, model)
            print(
                line(f"k={k}", scored)
                + f"  | learnt {len(house)} examples ({counts[0]} not dice) in {took:.1f} s"
            )
            if args.why:
                print("            " + why_line(scored))
            if k == third:
                back = held_back(house, net, floor=params.house_confidence, model=model)
                if back is not None:
                    print(
                        f"  held back within the taught: right {back.right}/{back.dice},"
                        f" wrong {back.wrong}, asked {back.asked}; the house model's floor"
                        f" {model.floor if model else None}"
                    )
                for other, other_images in sources.items():
                    if other != source:
                        print(f"  dice not taught ({other}, read by the same networks):")
                        print("  " + line("no house", score(other_images, params, None)))
                        print("  " + line("house", score(other_images, params, model)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
