"""Fitting: the batches' symmetries and contrast, soft targets from trained models, and the
training loop (with the weights' moving average)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from flags_training.nets import Net
from vision.flags import FlagModel
from vision.flags.features import GRID, N_CHANNELS
from vision.flags.network import planes, symmetry


def augment(xb: np.ndarray, rng: np.random.Generator, contrast: float = 0.0) -> np.ndarray:
    """One random symmetry of the square (flip u, flip v, swap u/v) applied to a batch: a die
    and its perspective look the same mirrored, so this multiplies the data by eight. With
    ``contrast`` > 0 each die's lightness and colour contrast with the pad are also scaled by
    up to that share either way (real dice, pads and light differ more than the renders')."""
    n = len(xb)
    g2 = GRID * GRID
    img = xb[:, : N_CHANNELS * g2].reshape(n, N_CHANNELS, GRID, GRID)
    if contrast > 0:
        gains = np.ones((n, N_CHANNELS, 1, 1), np.float32)
        gains[:, :2, 0, 0] = rng.uniform(1 - contrast, 1 + contrast, (n, 2))
        img = img * gains
    sc = xb[:, N_CHANNELS * g2 :].copy()  # eu, ev, |eu|, |ev|, |eu|+|ev|, near, nu, nv
    if rng.random() < 0.5:
        img = img[:, :, :, ::-1]
        sc[:, [0, 6]] *= -1
    if rng.random() < 0.5:
        img = img[:, :, ::-1, :]
        sc[:, [1, 7]] *= -1
    if rng.random() < 0.5:
        img = img.transpose(0, 1, 3, 2)
        sc[:, [0, 1, 2, 3, 6, 7]] = sc[:, [1, 0, 3, 2, 7, 6]]
    return np.concatenate([img.reshape(n, -1), sc], axis=1)


def teach(paths: list[Path], x: np.ndarray) -> np.ndarray:
    """The mean verdict of trained flag models over the eight symmetries of every die: soft
    targets that are smoother than any one network (an ensemble a single net can learn)."""
    models = [FlagModel(p) for p in paths]
    out = np.zeros((len(x), 2), np.float32)
    for start in range(0, len(x), 2048):
        xb = x[start : start + 2048]
        out[start : start + len(xb)] = np.mean(
            [m.predict(symmetry(xb, k), views=(0,)) for m in models for k in range(8)], axis=0
        )
    return out


def train(
    x: np.ndarray,
    y: np.ndarray,
    *,
    epochs: int,
    seed: int,
    stacked_weight: float = 1.0,
    ema: float = 0.0,
    contrast: float = 0.0,
    widths: tuple[int, int, int] = (24, 32, 48),
    layout: str = "all-strided",
) -> torch.nn.Module:
    """The trained network; with ``ema`` > 0 the exponential moving average of its weights
    (decay ``ema`` per step), which averages out the last epochs' noise at no run-time cost."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = Net(widths, layout)
    averaged = [p.detach().clone() for p in net.parameters()] if ema > 0 else []
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=3e-3, total_steps=epochs * ((len(x) + 127) // 128)
    )
    # stacked dice are rare: weigh them up so the head commits rather than hedging near 0.5
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, stacked_weight]))
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(len(x))
        total = 0.0
        for start in range(0, len(x), 128):
            idx = order[start : start + 128]
            xb = torch.from_numpy(planes(augment(x[idx], rng, contrast)))
            yb = torch.from_numpy(y[idx])
            opt.zero_grad()
            loss = loss_fn(net(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            if averaged:
                with torch.no_grad():
                    for a, w in zip(averaged, net.parameters(), strict=True):
                        a.mul_(ema).add_(w.detach(), alpha=1.0 - ema)
            total += loss.item() * len(idx)
        if epoch % 5 == 0 or epoch == epochs - 1:
            print(f"epoch {epoch + 1}: loss {total / len(x):.4f}")
    if averaged:
        with torch.no_grad():
            for a, w in zip(averaged, net.parameters(), strict=True):
                w.copy_(a)
    net.eval()
    return net
