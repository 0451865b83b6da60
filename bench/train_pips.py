"""Train the pip finder of ``vision.pipfind`` on ``vision.synth`` renders alone; export ONNX.

Requirements (training only; the reader runs the exported file on ONNX Runtime), the same
environment as ``bench/train_vision.py``:

    python3 -m venv /tmp/trainenv
    /tmp/trainenv/bin/pip install torch==2.13.0 numpy opencv-python-headless onnx onnxruntime

Usage:

    /tmp/trainenv/bin/python bench/train_pips.py [--scenes 3000 --seeds 1,2] [--out DIR]

It renders wide tables (``vision.synth.wide_scene``: every dice style, surface, lamp, slant and
camera fault), cuts each top face as ``vision.pipcount`` cuts it -- twice, at the place, size
and turn a locator gives (off by 0.08 of a side, 12 % and 6 degrees, as in the pip count's own
figures) -- and marks the centres of that face's pips, projected from the renderer's truth:
not the side faces' pips, not the pips a resin die shows through, not a neighbour's. The
network (a few dilated convolutions, the heat map at half the cut's resolution) learns them
with CenterNet's focal loss, every cut also turned, mirrored, its channels shuffled, inverted,
brightened and noised. Nothing of a photo: a photo source held out of the reader's training
is held out of this network too. ``--out`` gets ``pips.onnx`` in 8 bits (calibrated on renders,
``bench/quantize_models.py``) and ``fp32/pips.onnx``, the master.

The shipped network, the defaults: 6000 tables (seeds 1 and 2), 52530 cuts, 24 channels,
8 epochs, about 5 min to render and 15 to train on two cores (``--check``: see
``vision/pipfind.py``). Tried on the same renders, not shipped: 16 channels (1.4x faster a
die): the finder after the thresholds 73.9 % right at the true place and 68.5 % with a
locator's error, against 75.8 and 70.3 %, as many wrong; the cut shrunk to 40 px (1.6x
faster): as precise only at peaks of 0.7 and doubt at 0.1, and then 74.1 / 67.7 %. The finder
*before* the thresholds (its count where it has one) read more (76.9 / 71.4 %) and fewer
wrong (18 / 19 against 23 / 22), but it must then run on every die. Twice the tables (seeds
1-4, 105508 cuts): after the thresholds 77.9 / 72.2 % against 75.8 / 70.3 %, one more wrong,
but the reader on rendered tables asked 172 dice against 171 (and held out of training it read
no better: nellbyler_d6 one die more wrong each photo alone), so the 6000 tables stay.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
from quantize_models import quantize
from torch import nn

from vision import synth
from vision.classify import die_patch
from vision.nets import read_onnx
from vision.pipcount import FACE_PX, FACE_SPAN, PIP_AREA, count_cut, cut_faces, layout_value
from vision.pipfind import STRIDE, heat_maps, pips_of
from vision.synth.geometry import PIP_LAYOUTS

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]
GRID = FACE_PX // STRIDE
MAX_PIPS = 6
_SQUARE = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], np.float32)  # the truth's corners' order
_OFFSET = 0.52  # a pip's offset from the face's centre in half-sides (``vision.synth``'s)
JITTER = (0.08, 0.12, 6.0)  # a locator's error: place (sides), size (log), turn (degrees)


def samples(scenes: int, seed: int) -> tuple[U8, F32]:
    """Face cuts as ``vision.pipcount`` cuts them (n, FACE_PX, FACE_PX, 3) and their top
    face's pip centres in cut px (n, 6, 2; -100 where a face has fewer), two jittered cuts per
    flat, visible die."""
    rng, jr = np.random.default_rng(seed), np.random.default_rng(seed + 1000)
    cuts: list[U8] = []
    pips: list[F32] = []
    for _ in range(scenes):
        shot = synth.render_wide(synth.wide_scene(rng, size=(640, 480)), size=(640, 480), rng=rng)
        for d in shot.truth.dice:
            if d.tilt_deg >= 20 or d.visible < 0.9 or d.size_px < 10:
                continue
            corners = np.array(d.corners_xy, np.float32)
            (x0, y0), (x1, y1) = corners[0], corners[1]
            turn = (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0
            to_frame = cv2.getPerspectiveTransform(_SQUARE, corners)
            layout = np.array(PIP_LAYOUTS[d.value], np.float32) * _OFFSET
            at = cv2.perspectiveTransform(layout.reshape(-1, 1, 2), to_frame).reshape(-1, 2)
            for _ in range(2):
                side = d.size_px * math.exp(jr.normal(0, JITTER[1]))
                centre = (
                    d.center_xy[0] + jr.normal(0, JITTER[0]) * d.size_px,
                    d.center_xy[1] + jr.normal(0, JITTER[0]) * d.size_px,
                )
                angle = turn + jr.normal(0, JITTER[2])
                m = cv2.getRotationMatrix2D(centre, angle, FACE_PX / (side * FACE_SPAN))
                m[0, 2] += FACE_PX / 2.0 - centre[0]
                m[1, 2] += FACE_PX / 2.0 - centre[1]
                row = np.full((MAX_PIPS, 2), -100.0, np.float32)
                inside = [
                    p
                    for p in (at @ m[:, :2].T + m[:, 2]).tolist()
                    if -2 <= p[0] <= FACE_PX + 1 and -2 <= p[1] <= FACE_PX + 1
                ]
                row[: len(inside)] = inside
                cut = die_patch(shot.image, centre, side * FACE_SPAN, FACE_PX, angle_deg=angle)
                cuts.append(cut)
                pips.append(row)
    return np.array(cuts, np.uint8), np.array(pips, np.float32)


def _conv(i: int, o: int, stride: int = 1, dilation: int = 1) -> list[nn.Module]:
    return [
        nn.Conv2d(i, o, 3, stride, dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(o),
        nn.ReLU(inplace=True),
    ]


class PipNet(nn.Module):
    """Raw BGR pixels in (each cut normalised by the network itself, so a dark face and a lit
    one look alike), a pip-centre logit per cell of the half-resolution grid out. Dilations 2,
    4 and 8 let a cell see the whole face: which pips are its own, which a side face's."""

    def __init__(self, width: int = 24) -> None:
        super().__init__()
        self.norm = nn.InstanceNorm2d(3)
        self.body = nn.Sequential(
            *_conv(3, 16),
            *_conv(16, width, 2),
            *_conv(width, width),
            *_conv(width, width, 1, 2),
            *_conv(width, width, 1, 4),
            *_conv(width, width, 1, 8),
            *_conv(width, width),
        )
        self.head = nn.Conv2d(width, 1, 1)
        nn.init.constant_(self.head.bias, -4.0)  # pips are rare cells: start near "none"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(self.norm(x)))


_GY, _GX = np.mgrid[0:GRID, 0:GRID].astype(np.float32)


def targets(pips: F32, sigma: float = 1.0) -> F32:
    """CenterNet heat maps (n, 1, GRID, GRID): a Gaussian per pip, exactly 1 at its cell."""
    heat = np.zeros((len(pips), GRID, GRID), np.float32)
    cells = (pips + 0.5) / STRIDE - 0.5
    for k in range(MAX_PIPS):
        cx, cy = cells[:, k, 0], cells[:, k, 1]
        real = pips[:, k, 0] > -50
        g = np.exp(
            -((_GX - cx[:, None, None]) ** 2 + (_GY - cy[:, None, None]) ** 2) / (2 * sigma**2)
        )
        g[~real] = 0.0
        ix, iy = np.round(cx).astype(int), np.round(cy).astype(int)
        on = real & (ix >= 0) & (ix < GRID) & (iy >= 0) & (iy < GRID)
        g[np.nonzero(on)[0], iy[on], ix[on]] = 1.0
        heat = np.maximum(heat, g)
    return heat[:, None]


def augment(cuts: U8, pips: F32, rng: np.random.Generator) -> tuple[F32, F32]:
    """Each cut turned, maybe mirrored (its pips with it), channels shuffled, maybe inverted,
    its brightness, contrast and noise varied."""
    out = np.empty(cuts.shape, np.float32)
    pips = pips.copy()
    for i in range(len(cuts)):
        img = cuts[i].astype(np.float32)
        p = pips[i]
        real = p[:, 0] > -50
        turns, mirrored = int(rng.integers(4)), rng.random() < 0.5
        if mirrored:
            img = img[:, ::-1]
            p[real, 0] = FACE_PX - 1 - p[real, 0]
        for _ in range(turns):  # a quarter turn: (x, y) -> (y, side - 1 - x)
            img = np.rot90(img)
            x = p[real, 0].copy()
            p[real, 0] = p[real, 1]
            p[real, 1] = FACE_PX - 1 - x
        img = img[:, :, rng.permutation(3)]
        if rng.random() < 0.3:
            img = 255.0 - img
        img = img * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
        out[i] = img + rng.normal(0, rng.uniform(0, 8), img.shape)
    return np.clip(out, 0, 255), pips


def focal(logits: torch.Tensor, heat: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss per pip."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    peak = heat.eq(1).float()
    pos = -torch.log(p) * (1 - p) ** 2 * peak
    neg = -torch.log(1 - p) * p**2 * (1 - heat) ** 4 * (1 - peak)
    return (pos.sum() + neg.sum()) / peak.sum().clamp(min=1)


def train(cuts: U8, pips: F32, *, width: int, epochs: int, batch: int = 128) -> PipNet:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = PipNet(width)
    per_epoch = len(cuts) // batch
    opt = torch.optim.AdamW(net.parameters(), 2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, 2e-3, total_steps=epochs * per_epoch, pct_start=0.1
    )
    order = np.arange(len(cuts))
    t0 = time.perf_counter()
    for epoch in range(epochs):
        rng.shuffle(order)
        net.train()
        total = 0.0
        for b in range(per_epoch):
            j = order[b * batch : (b + 1) * batch]
            x, p = augment(cuts[j], pips[j], rng)
            loss = focal(
                net(torch.from_numpy(x.transpose(0, 3, 1, 2).copy())), torch.from_numpy(targets(p))
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.item())
        print(
            f"epoch {epoch}: loss {total / per_epoch:.4f}  {time.perf_counter() - t0:.0f} s",
            flush=True,
        )
    net.eval()
    return net


def export(net: PipNet, out: Path, calibration: U8) -> None:
    """``out/fp32/pips.onnx`` (the master) and ``out/pips.onnx`` in 8 bits but its last layer."""
    master = out / "fp32" / "pips.onnx"
    master.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        net,
        torch.zeros(1, 3, FACE_PX, FACE_PX),
        str(master),
        input_names=["x"],
        output_names=["heat"],
        dynamic_axes={"x": {0: "n"}, "heat": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    blobs = [
        np.ascontiguousarray(calibration[i : i + 32].astype(np.float32).transpose(0, 3, 1, 2))
        for i in range(0, len(calibration), 32)
    ]
    quantize(master, out / "pips.onnx", blobs)


def check(model: Path, tables: int, seed: int) -> None:
    """Counts of flat dice on fresh wide tables, cut where a locator would: the ink
    thresholds (``vision.pipcount``), the pip finder alone, and the finder where the
    thresholds find no face (as the reader uses it)."""
    net = read_onnx(model)
    rng, jr = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    tally = {k: [0, 0, 0] for k in ("thresholds", "finder", "finder after them")}
    for _ in range(tables):
        shot = synth.render_wide(synth.wide_scene(rng, size=(640, 480)), size=(640, 480), rng=rng)
        for d in shot.truth.dice:
            if d.tilt_deg >= 10 or d.visible < 0.95 or d.stacked:
                continue
            (x0, y0), (x1, y1) = d.corners_xy[0], d.corners_xy[1]
            turn = (
                (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0 + jr.normal(0, 6)
            )
            side = d.size_px * math.exp(jr.normal(0, 0.12))
            centre = (
                d.center_xy[0] + jr.normal(0, 0.08) * d.size_px,
                d.center_xy[1] + jr.normal(0, 0.08) * d.size_px,
            )
            cut = cut_faces(shot.image, [(centre, side, turn)])  # one cut, both count on it
            counted = count_cut(cut)[0]
            found = pips_of(heat_maps(net, [cut])[0])
            by_finder = (
                None if found is None else layout_value([(u, v, PIP_AREA) for u, v in found])
            )
            after = counted.value
            if after is None and not counted.engulfed:
                after = by_finder
            for name, value in zip(tally, (counted.value, by_finder, after), strict=True):
                tally[name][0 if value == d.value else 2 if value is None else 1] += 1
    for name, (right, wrong, none) in tally.items():
        n = max(1, right + wrong + none)
        print(
            f"{name:>18}: {n} flat dice, right {100 * right / n:.1f} %  wrong"
            f" {100 * wrong / n:.2f} % ({wrong})  no count {100 * none / n:.1f} %"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--scenes", type=int, default=3000, help="wide tables per seed")
    ap.add_argument("--seeds", default="1,2", help="comma-separated: a set of tables each")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--width", type=int, default=24, help="channels of the inner convolutions")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "vision" / "models"
    )
    ap.add_argument("--check", type=Path, help="only count fresh renders with this pips.onnx")
    ap.add_argument("--tables", type=int, default=300, help="fresh wide tables for --check")
    args = ap.parse_args()
    torch.set_num_threads(max(1, args.threads))
    if args.check:
        check(args.check, args.tables, seed=6)
        return 0
    t0 = time.perf_counter()
    seeds = [int(v) for v in args.seeds.split(",")]
    sets = [samples(args.scenes, seed) for seed in seeds]
    cuts = np.concatenate([c for c, _ in sets])
    pips = np.concatenate([p for _, p in sets])
    took = time.perf_counter() - t0
    print(f"{len(cuts)} cuts from {args.scenes * len(seeds)} tables in {took:.0f} s", flush=True)
    net = train(cuts, pips, width=args.width, epochs=args.epochs)
    export(net, args.out, cuts[::13][:2000])  # calibration: every 13th cut of the first set
    print(f"saved {args.out / 'pips.onnx'}")
    check(args.out / "pips.onnx", args.tables, seed=6)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
