"""The lamps' light on a wide scene's table: each lamp's fall-off (drawn at 1/8 scale, it
varies slowly), the hard shadows of dice and props from each lamp (a penumbra as wide as
the lamp is big), the contact shadow under each die, the vignette, and each lamp's glare in
a glossy table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import Pad
from vision.synth.geometry import (
    _CUBE,
    _fix,
    _Pose,
)
from vision.synth.model import Image, Vec
from vision.synth.props import footprint_mm
from vision.synth.view import _ViewProjector
from vision.synth.wide.scene import Lamp, WideScene

Float = npt.NDArray[np.float32]


def _irradiance(lamps: tuple[Lamp, ...], pts: Vec) -> list[npt.NDArray[np.float64]]:
    """Each lamp's light on the table at ``pts`` (..., 3), 1 = its power at the target."""
    out = []
    for lamp in lamps:
        lp = np.array(lamp.xyz_mm)
        d0 = float(np.linalg.norm(lp))
        d = np.linalg.norm(lp - pts, axis=-1)
        cos_in = (lp[2] - pts[..., 2]) / d
        out.append(lamp.power * (cos_in / (lp[2] / d0)) * (d0 / d) ** 2)
    return out


def _cast(lamp: Lamp, pts: Vec) -> Vec:
    """Where ``pts`` (N, 3) throw their shadow on the table, lit by ``lamp``."""
    lp = np.array(lamp.xyz_mm)
    t = lp[2] / np.maximum(lp[2] - pts[:, 2], 1e-3)
    out: Vec = lp + (pts - lp) * t[:, None]
    return out


_GAIN = 80.0  # the light's gain is carried in uint8 as gain x 80 (up to 3.2, steps of 1.25 %)


def _light(base: Image, scene: WideScene, proj: _ViewProjector, poses: list[_Pose]) -> Image:
    """The table ``base`` lit: ambient plus each lamp (smooth, drawn at 1/8 scale), times the
    hard shadows (each lamp's share of the light, blocked) and the contact shadow under each
    die. In uint8 OpenCV passes: this is the bulk of a frame's pixels."""
    w, h = proj.w, proj.h
    gw, gh = w // 8 + 2, h // 8 + 2
    us, vs = np.meshgrid(np.linspace(0, w, gw), np.linspace(0, h, gh))
    ground = proj.to_plane(us, vs, 0.0)
    parts = [
        e[:, :, None] * np.array(lamp.colour)
        for lamp, e in zip(scene.lamps, _irradiance(scene.lamps, ground), strict=True)
    ]
    total = np.array(scene.ambient_colour) * scene.ambient + sum(parts, np.zeros((gh, gw, 3)))
    if scene.vignette > 0:  # the lens darkens the corners (of the table, the dice too below)
        r2 = ((us - w / 2) ** 2 + (vs - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
        total = total * (1.0 - scene.vignette * r2)[:, :, None]
    gain = np.clip(total * _GAIN, 0, 255).astype(np.uint8)
    lit = cv2.multiply(
        base, cv2.resize(gain, (w, h), interpolation=cv2.INTER_LINEAR), scale=1 / _GAIN
    )
    solids = [(_CUBE * p.half) @ p.rot.T + p.centre for p in poses] + [
        np.column_stack([footprint_mm(q), np.full(len(footprint_mm(q)), q.height_mm)])
        for q in scene.props
        if q.height_mm >= 1.0
    ]
    if scene.mat is not None and scene.mat.wall_mm > 0:  # a tray's walls shade its floor
        c, z = scene.mat.corners_mm(), scene.mat.wall_mm
        for i in range(4):
            a, b = c[i], c[(i + 1) % 4]
            solids.append(np.array([[*a, 0.0], [*b, 0.0], [*b, z], [*a, z]]))
    if not solids:
        return np.asarray(lit, np.uint8)
    dark = np.zeros((h, w), np.float32)  # blocked fraction of the light
    poses_half = poses[0].half if poses else 8.0
    for lamp, part in zip(scene.lamps, parts, strict=True):
        share = float(part.mean() / total.mean())  # varies slowly: one figure a lamp
        mask = np.zeros((h, w), np.uint8)
        for pts in solids:
            shade = proj(np.column_stack([_cast(lamp, pts)[:, :2], np.zeros(len(pts))]))
            hull = cv2.convexHull(shade.astype(np.float32)).reshape(-1, 2).astype(np.float64)
            cv2.fillPoly(mask, [_fix(hull)], 255, cv2.LINE_AA, 4)
        box = cv2.boundingRect(mask)
        if box[2] == 0:
            continue
        # the penumbra: the lamp's size seen past a die's height, in pixels
        px_mm = proj.f / max(proj.eye[2], 1.0)
        soft = min(6.0, max(0.5, lamp.radius_mm * 2 * poses_half / lamp.xyz_mm[2] * px_mm))
        x0, y0, x1, y1 = _grow(box, int(3 * soft) + 2, w, h)
        blurred = _soft(mask[y0:y1, x0:x1], soft).astype(np.float32) / 255
        dark[y0:y1, x0:x1] += blurred * share
    if poses:  # contact shadows: the light under and right beside a die is blocked
        ao = np.zeros((h, w), np.uint8)
        for p in poses:
            foot = proj(np.column_stack([_CUBE[:4, :2] * p.half * 1.1 + p.centre[:2], np.zeros(4)]))
            hull = cv2.convexHull(foot.astype(np.float32)).reshape(-1, 2).astype(np.float64)
            cv2.fillPoly(ao, [_fix(hull)], 255, cv2.LINE_AA, 4)
        side = proj.f * 2 * poses[0].half / max(proj.eye[2], 1.0)
        sigma = max(1.0, 0.12 * side)
        x0, y0, x1, y1 = _grow(cv2.boundingRect(ao), int(3 * sigma) + 2, w, h)
        blurred = _soft(ao[y0:y1, x0:x1], sigma).astype(np.float32) / 255
        dark[y0:y1, x0:x1] += 0.45 * blurred
    keep = (255 * np.clip(1.0 - dark, 0.0, 1.0)).astype(np.uint8)
    return np.asarray(cv2.multiply(lit, cv2.merge([keep, keep, keep]), scale=1 / 255), np.uint8)


def _soft(mask: Image, sigma: float) -> Image:
    """``mask`` blurred about as a Gaussian of ``sigma`` would (two box passes: their cost does
    not grow with the blur, and shadows are broad)."""
    k = max(1, round(math.sqrt(6 * sigma * sigma + 1))) | 1
    once = cv2.blur(mask, (k, k))
    return np.asarray(cv2.blur(once, (k, k)), np.uint8)


def _grow(box: Sequence[int], by: int, w: int, h: int) -> tuple[int, int, int, int]:
    x, y, bw, bh = box
    return max(0, x - by), max(0, y - by), min(w, x + bw + by), min(h, y + bh + by)


def _table_glare(img: Image, scene: WideScene, proj: _ViewProjector) -> None:
    """Each lamp's mirror image in a shiny table or board: a broad bright spot."""
    for lamp in scene.lamps:
        mirror = np.array([lamp.xyz_mm[0], lamp.xyz_mm[1], -lamp.xyz_mm[2]])
        t = proj.eye[2] / (proj.eye[2] - mirror[2])
        spot = proj.eye + t * (mirror - proj.eye)
        gloss = scene.table.gloss
        if scene.mat is not None:
            u, v = proj(spot[None, :])[0]
            if Pad(
                tuple(map(tuple, proj(np.column_stack([scene.mat.corners_mm(), np.zeros(4)]))))
            ).contains((float(u), float(v))):
                gloss = scene.mat.surface.gloss
        if gloss > 0.02:
            radius = proj.w * (0.04 + 0.1 * lamp.radius_mm / 120)
            _spot(img, proj(spot[None, :])[0], radius, min(0.9, gloss * lamp.power * 1.5))


def _spot(img: Image, centre: npt.NDArray[np.float64], radius: float, strength: float) -> None:
    """Add a soft round highlight (a Gaussian, drawn out to 3 sigma so it has no edge)."""
    at = gaussian_window(img.shape, centre, radius)
    if at is None:
        return
    win, blob = at
    roi = img[win].astype(np.float32) + (blob * np.float32(strength * 255))[:, :, None]
    img[win] = np.clip(roi, 0, 255).astype(np.uint8)


def gaussian_window(
    shape: tuple[int, ...], centre: npt.NDArray[np.float64], radius: float
) -> tuple[tuple[slice, slice], npt.NDArray[np.float32]] | None:
    """The window of an image of ``shape`` around ``centre`` (px) out to 3 sigma, and a
    Gaussian of sigma ``radius`` px over it, 1 at its peak (None: the window misses the
    image). A spot drawn so has no edge, at the cost of its window alone."""
    h, w = shape[:2]
    r = int(3 * radius) + 1
    x0, y0 = max(0, int(centre[0]) - r), max(0, int(centre[1]) - r)
    x1, y1 = min(w, int(centre[0]) + r + 1), min(h, int(centre[1]) + r + 1)
    if x1 <= x0 or y1 <= y0:
        return None
    xs = np.arange(x0, x1, dtype=np.float32) - np.float32(centre[0])
    ys = np.arange(y0, y1, dtype=np.float32) - np.float32(centre[1])
    k = np.float32(-0.5 / radius**2)
    return (slice(y0, y1), slice(x0, x1)), np.exp(ys[:, None] ** 2 * k) * np.exp(
        xs[None, :] ** 2 * k
    )
