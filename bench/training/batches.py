"""Training batches and losses for the locator and the value network, and the fitting loop."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from training.augment import colour_jitter, drawn_patch, to_tensor
from training.config import CROP, CROP_PX, LOCATOR_SIDE, MARGIN, OFF_CENTRE, TURNED, P
from training.samples import LOGO_ACE, Sample
from vision.classify import cut_die, die_patch
from vision.nets import LOCATOR_STRIDE, NOT_A_DIE, SIZE_UNIT_PX


def locator_batch(
    samples: list[Sample], n: int, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    out_px = CROP // LOCATOR_STRIDE
    imgs, heats, regs, masks = [], [], [], []
    for _ in range(n):
        s = samples[int(rng.integers(len(samples)))]
        h, w = s.image.shape[:2]
        scale = LOCATOR_SIDE[0] / max(h, w) * math.exp(rng.uniform(-0.4, 0.4))
        angle = 90 * int(rng.integers(4)) + rng.uniform(-12, 12)
        if rng.random() < 0.7 and s.dice:
            d = s.dice[int(rng.integers(len(s.dice)))]
            fx, fy = d.cx + rng.normal(0, 40), d.cy + rng.normal(0, 40)
        else:
            fx, fy = rng.uniform(0, w), rng.uniform(0, h)
        m = cv2.getRotationMatrix2D((fx, fy), angle, scale)
        m[0, 2] += CROP / 2 - fx
        m[1, 2] += CROP / 2 - fy
        if rng.random() < 0.5:  # mirror
            m[0] = -m[0]
            m[0, 2] += CROP
        crop = cv2.warpAffine(
            s.image, m, (CROP, CROP), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_CONSTANT
        )
        imgs.append(colour_jitter(crop, rng, invert=0.1))
        heat = np.zeros((out_px, out_px), np.float32)
        reg = np.zeros((3, out_px, out_px), np.float32)
        mask = np.zeros((out_px, out_px), np.float32)
        yy, xx = np.mgrid[0:out_px, 0:out_px].astype(np.float32) + 0.5
        for d in s.dice:
            px, py = m @ np.array([d.cx, d.cy, 1.0])
            u, v = px / LOCATOR_STRIDE, py / LOCATOR_STRIDE
            size = d.size * scale
            if not (0 <= u < out_px and 0 <= v < out_px):
                continue
            sigma = max(0.6, size / LOCATOR_STRIDE / 6)
            heat = np.maximum(heat, np.exp(-((xx - u) ** 2 + (yy - v) ** 2) / (2 * sigma**2)))
            iu, iv = int(u), int(v)
            heat[iv, iu] = 1.0
            reg[:, iv, iu] = (u - iu, v - iv, math.log(size / SIZE_UNIT_PX))
            mask[iv, iu] = 1.0
        heats.append(heat)
        regs.append(reg)
        masks.append(mask)
    return (
        to_tensor(imgs),
        torch.from_numpy(np.stack(heats)),
        torch.from_numpy(np.stack(regs)),
        torch.from_numpy(np.stack(masks)),
    )


def locator_loss(
    y: torch.Tensor, heat: torch.Tensor, reg: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    p = torch.sigmoid(y[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 1.0).float()
    pos_loss = -torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = -torch.log(1 - p) * p**2 * (1 - heat) ** 4 * (1 - pos)
    npos = pos.sum().clamp(min=1)
    focal = (pos_loss.sum() + neg_loss.sum()) / npos
    l1 = (torch.abs(y[:, 1:] - reg) * mask[:, None]).sum() / npos
    return focal + l1


def value_batch(
    samples: list[Sample], n: int, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`value_patches` as the network's input and labels."""
    imgs, labels = value_patches(samples, n, rng)
    return to_tensor(imgs), torch.tensor(labels)


def value_patches(
    samples: list[Sample], n: int, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[int]]:
    """Patches as the reader cuts them (uint8 BGR) and their labels: 75 % dice (a third of
    them where the locator put them), 25 % not dice (locator false hits, near misses beside a
    die, anywhere)."""
    imgs: list[np.ndarray] = []
    labels: list[int] = []
    while len(imgs) < n:
        if rng.random() < 0.15:
            value = int(rng.integers(1, 7))
            imgs.append(colour_jitter(drawn_patch(value, rng), rng, invert=0.0, mild=True))
            labels.append(value)
            continue
        s = samples[int(rng.integers(len(samples)))]
        if not s.dice:
            continue
        d = s.dice[int(rng.integers(len(s.dice)))]
        r = rng.random()
        if d.value < 1 and d.value != LOGO_ACE and r < 0.75:  # no value label (steep, hidden)
            continue
        if r < 0.25 and s.located:
            d = s.located[int(rng.integers(len(s.located)))]
        if r < 0.75:
            jitter = 0.03 if r < 0.25 else 0.06
            if OFF_CENTRE[0] > 0 and rng.random() < OFF_CENTRE[0]:  # no draw at 0 (older streams)
                jitter = 0.15  # as far off as the locator strays on a die with big side faces
            cx = d.cx + rng.normal(0, jitter * d.size)
            cy = d.cy + rng.normal(0, jitter * d.size)
            # a logo ace is a die's face, drawn as "not a die" (never among the located: mined
            # as a false hit)
            label = NOT_A_DIE if d.value == LOGO_ACE else d.value
        else:
            h, w = s.image.shape[:2]
            if r < 0.85 and s.false_hits:
                d = s.false_hits[int(rng.integers(len(s.false_hits)))]
                cx = d.cx + rng.normal(0, 0.05 * d.size)
                cy = d.cy + rng.normal(0, 0.05 * d.size)
            elif r < 0.93:  # near miss: beside a die
                a = rng.uniform(0, 2 * math.pi)
                dist = rng.uniform(0.55, 1.1) * d.size
                cx, cy = d.cx + dist * math.cos(a), d.cy + dist * math.sin(a)
            else:  # anywhere
                cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            near = min(
                (math.hypot(cx - e.cx, cy - e.cy) / e.size for e in s.dice if e.value != LOGO_ACE),
                default=math.inf,
            )
            if near < 0.5:
                continue
            label = NOT_A_DIE
        size = d.size * math.exp(rng.uniform(-0.15, 0.15))
        if TURNED[0]:  # exactly the reader's cut, then any quarter turn
            cut = cut_die(
                s.image,
                (cx, cy),
                size * P.crop_scale,
                CROP_PX[0],
                turned=True,
                margin=MARGIN[0],
            )
            patch = np.rot90(cut.view, int(rng.integers(4)))
        else:
            patch = die_patch(
                s.image, (cx, cy), size * P.crop_scale, CROP_PX[0], angle_deg=rng.uniform(0, 360)
            )
        if rng.random() < 0.5:
            patch = patch[:, ::-1]
        imgs.append(colour_jitter(np.ascontiguousarray(patch), rng, invert=0.15, mild=True))
        labels.append(label)
    return imgs, labels


# ----------------------------------------------------------------------------- training


def value_loss(y: torch.Tensor, t: torch.Tensor, *, hard: float) -> torch.Tensor:
    """Cross-entropy; with ``hard`` > 0 the hardest half of the batch counts extra, so rare
    dice (dark translucent bodies, dim pips) are not averaged away by the many easy ones."""
    each = F.cross_entropy(y, t, label_smoothing=0.05, reduction="none")
    if hard <= 0:
        return each.mean()
    top = each.topk(max(1, len(each) // 2)).values.mean()
    return (1 - hard) * each.mean() + hard * top


def fit(
    model: nn.Module,
    batches: Callable[[], tuple[torch.Tensor, ...]],
    steps: int,
    lr: float,
    loss_fn: Callable[..., torch.Tensor],
    log: str,
    device: str = "cpu",
) -> None:
    """Train ``model`` in place for ``steps`` batches on ``device``, leaving it on the CPU in
    evaluation mode for export. The batches are drawn on the CPU either way; on a GPU the next
    one is drawn while the network steps (one thread draws them in order, so the same seed
    draws the same batches), on the CPU in turn, as the two cores are busy stepping."""
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    model.train()
    t0, running = time.time(), 0.0
    ahead = ThreadPoolExecutor(1)
    queued = [ahead.submit(batches)] if device != "cpu" else []
    for step in range(steps):
        if queued:  # the next batch is drawn while this one steps
            drawn = queued.pop().result()
            if step + 1 < steps:
                queued.append(ahead.submit(batches))
        else:
            drawn = batches()
        inputs = [t.to(device) for t in drawn]
        loss = loss_fn(model(inputs[0]), *inputs[1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        running = 0.98 * running + 0.02 * loss.item() if step else loss.item()
        if step % 200 == 0 or step == steps - 1:
            print(
                f"{log} step {step}/{steps} loss {running:.4f} {time.time() - t0:.0f}s", flush=True
            )
    ahead.shutdown()
    model.to("cpu")
    model.eval()
