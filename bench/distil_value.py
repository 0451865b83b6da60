"""Distil the teachers (``bench/train_lite0.py``) into the value network the reader runs.

Requirements: the training environment of ``bench/train_lite0.py``. Two steps:

    # patches as train_vision cuts them, each with the teachers' mean probabilities
    /tmp/trainenv/bin/python bench/distil_value.py pool --sources matteop65_d6 \\
        --locator DIR --teacher T1/teacher.pt [--teacher T2/teacher.pt] --out pool.npz
    # the value network (train_vision.ValueNet, unchanged) trained on them
    /tmp/trainenv/bin/python bench/distil_value.py train --pool pool.npz --locator DIR --out OUT

``train`` writes ``OUT/value.onnx`` (the value network's contract: logits and embedding) and
copies ``DIR/locator.onnx`` beside it; quantize with ``bench/quantize_models.py`` as ever.

Why: the teacher reads dice it never saw far better than the small network trained on the same
patches (see ``bench/train_lite0.py``), but costs five times the reading time. The small
network learns the teacher's whole distribution over the seven classes -- which faces a
die could be, how like "not a die" it looks -- on top of the labels (loss: ``1 - alpha`` of
``train_vision.value_loss`` on the label, ``alpha`` of the KL divergence to the teachers),
and runs as fast as before. The patches are drawn once into a pool (the teachers' forward pass
is the slow part); each batch then takes them in a random quarter turn and mirror, to which
their labels are indifferent.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import train_vision as tv  # noqa: E402
from bench_vision import DATASETS, default_datasets_dir  # noqa: E402
from train_lite0 import load_teacher, training_samples, write_value_net  # noqa: E402


def pool(args: argparse.Namespace) -> None:
    sources = [s for s in args.sources.split(",") if s]
    if not sources or any(s not in DATASETS for s in sources):
        raise SystemExit(f"--sources: name one or more of {', '.join(DATASETS)}")
    samples, weights = training_samples(sources, args.datasets, args.synth, args.seed, args.locator)
    teachers = [load_teacher(p) for p in args.teacher]
    rng = np.random.default_rng(args.seed)
    xs, ys, soft = [], [], []
    t0 = time.time()
    with torch.no_grad():
        for i in range(0, args.n, 256):
            drawn = [samples[j] for j in rng.choice(len(samples), size=64, p=weights)]
            imgs, labels = tv.value_patches(drawn, 256, rng)
            x = tv.to_tensor(imgs)
            p = torch.stack([F.softmax(t(x), 1) for t in teachers]).mean(0)
            xs.append(np.stack(imgs))
            ys.append(np.array(labels))
            soft.append(p.numpy().astype(np.float16))
            if i % 12800 == 0:
                print(f"pool {i}/{args.n} {time.time() - t0:.0f}s", flush=True)
    np.savez(args.out, x=np.concatenate(xs), y=np.concatenate(ys), soft=np.concatenate(soft))
    print("wrote", args.out, flush=True)


def train(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    data = np.load(args.pool)
    x = data["x"]
    y = torch.from_numpy(data["y"]).long()
    soft = torch.from_numpy(data["soft"].astype(np.float32))
    print("pool", x.shape, flush=True)

    def batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        idx = rng.integers(0, len(x), 96)
        xb = np.rot90(x[idx], int(rng.integers(4)), axes=(1, 2))
        if rng.random() < 0.5:
            xb = xb[:, :, ::-1]
        return tv.to_tensor(list(xb)), y[idx], soft[idx]

    def loss(out: torch.Tensor, label: torch.Tensor, taught: torch.Tensor) -> torch.Tensor:
        hard = tv.value_loss(out, label, hard=0.5)
        kl = F.kl_div(F.log_softmax(out, 1), taught, reduction="batchmean")
        return (1 - args.alpha) * hard + args.alpha * kl

    net = tv.ValueNet(args.width)
    tv.fit(net, batch, args.steps, 4e-3, loss, "student")
    args.out.mkdir(parents=True, exist_ok=True)
    write_value_net(tv.WithEmbedding(net), args.out, args.locator)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=["pool", "train"])
    ap.add_argument("--sources", default=",".join(DATASETS), help="pool: photo sources")
    ap.add_argument("--datasets", type=Path, default=default_datasets_dir())
    ap.add_argument("--locator", type=Path, required=True, help="folder with the locator.onnx")
    ap.add_argument("--teacher", type=Path, action="append", default=[], help="pool: teacher.pt")
    ap.add_argument("--n", type=int, default=60000, help="pool: patches")
    ap.add_argument("--synth", type=int, default=1600, help="pool: rendered tables")
    ap.add_argument("--pool", type=Path, help="train: the pool")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=8000)
    ap.add_argument("--width", type=int, default=24)
    ap.add_argument("--alpha", type=float, default=0.7, help="share of the teachers' word")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    torch.manual_seed(args.seed)
    if args.step == "pool":
        if not args.teacher:
            ap.error("pool: name one or more --teacher")
        pool(args)
    else:
        if args.pool is None:
            ap.error("train: name the --pool")
        train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
