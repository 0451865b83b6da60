"""Photometric augmentation, the networks' input tensors, and drawn dice patches (pip
layouts on colour pairs the photos lack)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import torch

from training.config import CROP_PX, GHOSTS, MARBLED, MARGIN, TURNED, P
from vision.nets import PIXEL_MEAN, PIXEL_SCALE
from vision.synth.geometry import PIP_LAYOUTS


def colour_jitter(
    img: np.ndarray, rng: np.random.Generator, *, invert: float, mild: bool = False
) -> np.ndarray:
    """Photometric augmentation of a BGR uint8 image; ``mild`` for die patches, whose 4-6 px
    pips a strong blur or a coarse JPEG would erase (the value would no longer be the label)."""
    out = img
    if rng.random() < 0.6:  # hue rotation and saturation
        hsv = cv2.cvtColor(out, cv2.COLOR_BGR2HSV).astype(np.int16)
        hsv[..., 0] = (hsv[..., 0] + int(rng.integers(0, 180))) % 180
        hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.5, 1.4), 0, 255)
        out = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)
    f: np.ndarray = out.astype(np.float32)
    if rng.random() < 0.3:  # per-channel gain (white balance)
        f *= rng.uniform(0.8, 1.2, size=3).astype(np.float32)
    f = (f - 128) * rng.uniform(0.6, 1.3) + 128 + rng.uniform(-45, 45)
    f = np.clip(f, 0, 255)
    if rng.random() < 0.3:
        f = 255 * (f / 255) ** rng.uniform(0.6, 1.6)
    if rng.random() < 0.1:
        f[...] = f.mean(axis=2, keepdims=True)
    if rng.random() < invert:
        f = 255 - f
    if rng.random() < 0.3:
        f += rng.normal(0, rng.uniform(1, 5 if mild else 10), f.shape).astype(np.float32)
    out = np.clip(f, 0, 255).astype(np.uint8)
    r = rng.random()
    if r < (0.15 if mild else 0.25):
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.3, 0.8 if mild else 1.3))
    elif r < (0.25 if mild else 0.4):
        k = 3 if mild else int(rng.integers(3, 8))
        kernel: np.ndarray = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1 / k
        m = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
        kernel = cv2.warpAffine(kernel, m, (k, k))
        out = cv2.filter2D(out, -1, kernel / max(kernel.sum(), 1e-6))
    if rng.random() < (0.25 if mild else 0.35):
        q = int(rng.integers(50 if mild else 25, 95))
        decoded = cv2.imdecode(cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])[1], 1)
        if decoded is None:
            raise RuntimeError("JPEG round trip of an augmented image failed")
        out = decoded
    return out


def to_tensor(imgs: list[np.ndarray]) -> torch.Tensor:
    a = np.stack(imgs).astype(np.float32)
    a = (a - PIXEL_MEAN) * PIXEL_SCALE
    return torch.from_numpy(a.transpose(0, 3, 1, 2).copy())


def marble(
    px: int, base: tuple[int, int, int], vein: tuple[int, int, int], rng: np.random.Generator
) -> np.ndarray:
    """A ``px`` square of marbled resin: bands of ``vein`` bent by smooth noise through ``base``
    (a turbulence-warped sine, the classic procedural marble)."""
    noise = cv2.resize(
        rng.normal(size=(5, 5)).astype(np.float32), (px, px), interpolation=cv2.INTER_CUBIC
    )
    yy, xx = np.mgrid[0:px, 0:px].astype(np.float32) / px
    a = rng.uniform(0, math.pi)
    bands = np.sin(
        2 * math.pi * rng.uniform(1.5, 4) * (xx * math.cos(a) + yy * math.sin(a))
        + rng.uniform(1.5, 4) * noise
    )
    weight = np.clip((bands - rng.uniform(0.5, 0.85)) * rng.uniform(4, 10), 0, 1)[..., None]
    out: np.ndarray = (
        np.asarray(base, np.float32) * (1 - weight) + np.asarray(vein, np.float32) * weight
    )
    return out


def drawn_patch(value: int, rng: np.random.Generator) -> np.ndarray:
    """A synthetic die patch: random body, pip and table colours, turn, size and a shaded side
    face, so the value network also learns pip layouts on colour pairs the photos lack."""
    k, out = 4, CROP_PX[0]
    big = out * k

    def colour() -> tuple[int, int, int]:
        hsv = np.array(
            [[[rng.integers(0, 180), rng.integers(0, 256), rng.integers(20, 256)]]], np.uint8
        )
        blue, green, red = (int(v) for v in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])
        return (blue, green, red)

    # a marbled resin body: veins through a base colour, pips as little brighter than the base
    # as the dark dice with dark red pips the photos' misreads are (no draw at 0: older streams)
    marbled = MARBLED[0] > 0 and rng.random() < MARBLED[0]
    body = colour()
    pip = colour()
    swirl = colour() if MARBLED[0] > 0 else body  # no draw at 0: older streams
    vein = (
        int(0.4 * body[0] + 0.6 * swirl[0]),
        int(0.4 * body[1] + 0.6 * swirl[1]),
        int(0.4 * body[2] + 0.6 * swirl[2]),
    )
    while abs(sum(pip) - sum(body)) < (120 if marbled else 150) or (
        marbled and abs(sum(pip) - sum(vein)) < 90
    ):
        pip = colour()
    img = np.empty((big, big, 3), np.uint8)
    img[...] = colour()
    if TURNED[0]:  # as cut_die shows a die: squared up (to a few degrees), filling the patch
        side = big / MARGIN[0] * rng.uniform(0.72, 0.98)
        a = math.radians(90 * int(rng.integers(4)) + rng.normal(0, 3))
    else:
        side = big / P.crop_scale * rng.uniform(0.6, 0.85)
        a = math.radians(rng.uniform(0, 360))
    c, si = math.cos(a), math.sin(a)
    cx = cy = big / 2 + rng.normal(0, 0.03 * big)

    def at(dx: float, dy: float) -> tuple[int, int]:
        return (round(cx + dx * c - dy * si), round(cy + dx * si + dy * c))

    half, r = side / 2, side * rng.uniform(0.05, 0.18)
    if rng.random() < 0.5:  # a side face seen in perspective, darker than the top
        shift = side * rng.uniform(0.1, 0.3)
        quad = [at(-half, -half), at(half, -half), at(half, half + shift), at(-half, half + shift)]
        dark = tuple(int(v * rng.uniform(0.5, 0.8)) for v in body)
        cv2.fillPoly(img, [np.array(quad, np.int32)], dark, cv2.LINE_AA)
    outline = []
    corners = (
        (half - r, half - r),
        (-(half - r), half - r),
        (-(half - r), -(half - r)),
        (half - r, -(half - r)),
    )
    for q, (ox, oy) in enumerate(corners):
        for t in range(0, 91, 15):
            ang = math.radians(90 * q + t)
            outline.append(at(ox + r * math.cos(ang), oy + r * math.sin(ang)))
    if marbled:
        mask = np.zeros((big, big), np.uint8)
        cv2.fillPoly(mask, [np.array(outline, np.int32)], 255, cv2.LINE_AA)
        alpha = (mask.astype(np.float32) / 255)[..., None]
        under = img.astype(np.float32) * (1 - alpha)
        img[...] = (under + marble(big, body, vein, rng) * alpha).astype(np.uint8)
    else:
        cv2.fillPoly(img, [np.array(outline, np.int32)], body, cv2.LINE_AA)
    spacing, radius = rng.uniform(0.24, 0.3), rng.uniform(0.065, 0.1)
    if GHOSTS[0] > 0 and rng.random() < GHOSTS[0]:
        # a translucent body: the bottom face's pips (7 - value) show through, dimmer, blurred
        # and a little off (parallax), as on the smoky dice the photos' misreads are
        ghost = np.zeros((big, big), np.float32)
        dx, dy = rng.normal(0, 0.05 * side, 2)
        scale = rng.uniform(0.8, 1.0)
        quarter = int(rng.integers(2))
        for px, py in PIP_LAYOUTS[7 - value]:
            gx, gy = (py, -px) if quarter else (px, py)
            centre = at(gx * spacing * side * scale + dx, gy * spacing * side * scale + dy)
            cv2.circle(ghost, centre, round(radius * side * scale), 1.0, -1, cv2.LINE_AA)
        soft = cv2.GaussianBlur(ghost, (0, 0), radius * side * rng.uniform(0.2, 0.6))
        inside = np.zeros((big, big), np.uint8)
        cv2.fillPoly(inside, [np.array(outline, np.int32)], 255)
        weight = (soft * (inside > 0) * rng.uniform(0.2, 0.6))[..., None]
        img[...] = (img * (1 - weight) + np.asarray(pip, np.float32) * weight).astype(np.uint8)
    for px, py in PIP_LAYOUTS[value]:
        cv2.circle(
            img,
            at(px * spacing * side, py * spacing * side),
            round(radius * side),
            pip,
            -1,
            cv2.LINE_AA,
        )
    return np.ascontiguousarray(cv2.resize(img, (out, out), interpolation=cv2.INTER_AREA))
