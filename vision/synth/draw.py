"""Drawing a :class:`~vision.synth.model.Scene`: shadows, shaded dice (resin ones with their hidden
pips showing through), glare and hands on the cached background, then the camera faults; and
the ground truth measured from the same geometry, so the truth is what was drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import Pad
from vision.synth.background import _background
from vision.synth.degrade import _degrade
from vision.synth.geometry import (
    _CIRCLE,
    _CUBE,
    _FACES,
    _NORMAL,
    _OUTLINE,
    _PIP_R,
    _PIPS,
    _SQUARE,
    _fix,
    _pad_polygon_px,
    _Pose,
    _pose,
    _Projector,
)
from vision.synth.hands import _HAND_SHADOW_SIGMA, _hand_in_frame, _hand_polys, _hand_shadow_shift
from vision.synth.logos import logo_polys
from vision.synth.model import (
    BGR,
    DieSpec,
    DieTruth,
    Image,
    Lighting,
    Scene,
    SceneImage,
    SceneTruth,
    Vec,
)


def _light_vec(lighting: Lighting) -> Vec:
    az, el = math.radians(lighting.azimuth_deg), math.radians(lighting.elevation_deg)
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def _shade(colour: BGR, k: float, gain: npt.NDArray[np.float32]) -> tuple[float, ...]:
    return tuple(float(min(255.0, c * k * g)) for c, g in zip(colour, gain, strict=True))


@dataclass
class _DieDraw:
    index: int
    spec: DieSpec
    pose: _Pose
    top_value: int
    top_corners: npt.NDArray[np.float64]
    top_centre: npt.NDArray[np.float64]
    tilt_deg: float
    depth: float


def _die_draw(index: int, spec: DieSpec, proj: _Projector) -> _DieDraw:
    pose = _pose(spec)
    ups = {v: float((pose.rot @ n)[2]) for v, n in _NORMAL.items()}
    top = max(ups, key=lambda v: ups[v])
    _, n, u, v = next(f for f in _FACES if f[0] == top)
    n_, u_, v_ = (np.array(x, float) for x in (n, u, v))
    local = (n_ + _SQUARE[:, :1] * u_ + _SQUARE[:, 1:] * v_) * pose.half
    world = local @ pose.rot.T + pose.centre
    corners = proj(world)
    centre = proj(pose.rot @ n_ * pose.half + pose.centre)
    tilt = math.degrees(math.acos(max(-1.0, min(1.0, ups[top]))))
    cam = np.array([0.0, 0.0, proj.height])
    depth = float(np.linalg.norm(pose.centre - cam))
    return _DieDraw(index, spec, pose, top, corners, centre, tilt, depth)


def _draw_die(
    img: Image,
    ids: Image,
    d: _DieDraw,
    proj: _Projector,
    light: Vec,
    lighting: Lighting,
    gain: npt.NDArray[np.float32],
) -> None:
    """The visible faces' bodies, then (resin dice, ``DieStyle.see_through``) the hidden faces'
    pips showing through the body, then the visible faces' crisp pips."""
    cx, cy = (
        int(np.clip(d.top_centre[0], 0, proj.w - 1)),
        int(np.clip(d.top_centre[1], 0, proj.h - 1)),
    )
    g = gain[cy, cx]
    resin = d.spec.style.see_through > 0
    front = [(v, o, p, _light_factor(d, v, light, lighting)) for v, o, p in _face_polys(d, proj)]
    for value, outline, pips, k in front:
        cv2.fillPoly(img, [outline], _shade(d.spec.style.body, k, g), cv2.LINE_AA, 4)
        cv2.fillPoly(ids, [outline], d.index + 1 if value == d.top_value else 254, cv2.LINE_8, 4)
        if not resin:  # face by face: a face's edge pixels are shared with its neighbour's
            cv2.fillPoly(img, pips, _shade(d.spec.style.pips, k, g), cv2.LINE_AA, 4)
    if resin:
        _show_through(img, d, proj, [o for _, o, _, _ in front], g)
        for _, _, pips, k in front:
            cv2.fillPoly(img, pips, _shade(d.spec.style.pips, k, g), cv2.LINE_AA, 4)


def _light_factor(d: _DieDraw, value: int, light: Vec, lighting: Lighting) -> float:
    """How much light the face showing ``value`` gets (ambient plus its share of the light)."""
    n_ = d.pose.rot @ _NORMAL[value]
    return lighting.ambient + (1 - lighting.ambient) * max(0.0, float(np.dot(n_, light)))


def _face_polys(
    d: _DieDraw, proj: _Projector, *, facing: bool = True
) -> list[tuple[int, npt.NDArray[np.int32], list[npt.NDArray[np.int32]]]]:
    """(value, outline, pips) of each face turned towards the camera (``facing``)
    or away from it; a hidden face's pips are drawn a little towards the die's centre, as the
    resin's refraction pulls them. A logo die's 1 face has its logo's polygons as its pips
    (filled in one call, so that its holes stay open)."""
    pose = d.pose
    cam = np.array([0.0, 0.0, proj.height])
    logo = d.spec.style.logo
    out = []
    for value, n, u, v in _FACES:
        n_ = pose.rot @ np.array(n, float)
        fc = pose.centre + n_ * pose.half
        if (float(np.dot(n_, cam - fc)) > 0) != facing:
            continue
        u_, v_ = pose.rot @ np.array(u, float), pose.rot @ np.array(v, float)
        outline = _fix(proj(fc + pose.half * (_OUTLINE[:, :1] * u_ + _OUTLINE[:, 1:] * v_)))
        if value == 1 and logo is not None:
            shapes = [p[:, :1] * u_ + p[:, 1:] * v_ for p in logo_polys(logo)]
        else:
            shapes = [
                (a + _PIP_R * _CIRCLE[:, :1]) * u_ + (b + _PIP_R * _CIRCLE[:, 1:]) * v_
                for a, b in _PIPS[value]
            ]
        pips = []
        for ring in shapes:
            pts = fc + pose.half * ring
            if not facing:  # seen through the resin: pulled towards the centre
                pts = pose.centre + 0.8 * (pts - pose.centre)
            pips.append(_fix(proj(pts)))
        out.append((value, outline, pips))
    return out


def _show_through(
    img: Image,
    d: _DieDraw,
    proj: _Projector,
    outlines: list[npt.NDArray[np.int32]],
    g: npt.NDArray[np.float32],
) -> None:
    """The hidden faces' pips of a resin die, blurred and dimmed, inside its visible outline."""
    allpts = np.vstack(outlines).reshape(-1, 2)
    x0, y0 = np.maximum(allpts.min(axis=0) // 16 - 2, 0)
    x1, y1 = np.minimum(allpts.max(axis=0) // 16 + 3, [proj.w, proj.h])
    if x1 <= x0 or y1 <= y0:
        return
    shift = np.array([x0, y0], np.int32) * 16
    body = np.zeros((y1 - y0, x1 - x0), np.uint8)
    ghost = np.zeros_like(body)
    cv2.fillPoly(body, [o - shift for o in outlines], 255, cv2.LINE_AA, 4)
    for _, _, pips in _face_polys(d, proj, facing=False):
        cv2.fillPoly(ghost, [p - shift for p in pips], 255, cv2.LINE_AA, 4)
    side = float(np.linalg.norm(d.top_corners[1] - d.top_corners[0]))
    blurred = cv2.GaussianBlur(ghost, (0, 0), max(0.6, 0.06 * side))
    alpha = d.spec.style.see_through * (
        blurred.astype(np.float32) * body.astype(np.float32) / (255.0 * 255.0)
    )
    colour = np.array(_shade(d.spec.style.pips, 0.75, g), np.float32)
    region = img[y0:y1, x0:x1].astype(np.float32)
    region += alpha[:, :, None] * (colour - region)
    img[y0:y1, x0:x1] = np.clip(region, 0, 255).astype(np.uint8)


def _shadow_poly(d: _DieDraw, proj: _Projector, light: Vec) -> npt.NDArray[np.int32]:
    pts = (_CUBE * d.pose.half) @ d.pose.rot.T + d.pose.centre
    lz = max(light[2], 0.2)
    ground = pts[:, :2] - pts[:, 2:3] * (light[:2] / lz)
    px = proj(np.column_stack([ground, np.zeros(len(ground))])).astype(np.float32)
    hull = cv2.convexHull(px)
    return _fix(hull.reshape(-1, 2).astype(np.float64))


def _glare(img: Image, centre: npt.NDArray[np.float64], radius: float, strength: float) -> None:
    h, w = img.shape[:2]
    r = max(2, int(radius * 2))
    x0, y0 = int(centre[0]) - r, int(centre[1]) - r
    x1, y1 = x0 + 2 * r + 1, y0 + 2 * r + 1
    if x1 <= 0 or y1 <= 0 or x0 >= w or y0 >= h:
        return
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    spot = (
        strength * 255 * np.exp(-((xs - centre[0]) ** 2 + (ys - centre[1]) ** 2) / (2 * radius**2))
    )
    cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    roi = img[cy0:cy1, cx0:cx1].astype(np.float32)
    roi += spot[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0, None]
    img[cy0:cy1, cx0:cx1] = np.clip(roi, 0, 255).astype(np.uint8)


def render(
    scene: Scene,
    *,
    size: tuple[int, int] = (640, 480),
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> SceneImage:
    """Draw ``scene`` at ``size`` (width, height) and return the image with its ground truth.

    ``rng`` (or ``seed``) only drives the per-frame noise; the scene itself is deterministic.
    """
    w, h = size
    if w < 32 or h < 32:
        raise ValueError(f"frame size {size} is too small")
    rng = rng if rng is not None else np.random.default_rng(seed)
    proj = _Projector(scene.camera, size)
    bg, gain = _background(scene.pad, scene.camera, scene.lighting, size)
    img = bg.copy()
    ids = np.zeros((h, w), np.uint8)
    light = _light_vec(scene.lighting)
    draws = [
        _die_draw(
            i,
            d,
            proj,
        )
        for i, d in enumerate(scene.dice)
    ]

    if draws and scene.lighting.shadow > 0:
        _darken(
            img, [_shadow_poly(d, proj, light) for d in draws], scene.lighting.shadow, 2.0 * w / 640
        )
    for d in sorted(draws, key=lambda d: -d.depth):
        _draw_die(img, ids, d, proj, light, scene.lighting, gain)
        if scene.lighting.glare > 0:
            side = float(np.linalg.norm(d.top_corners[1] - d.top_corners[0]))
            off = -_light_vec(scene.lighting)[:2] * side * 0.15
            _glare(img, d.top_centre + off, side * 0.18, scene.lighting.glare)
    for hand in scene.hands:
        polys, _ = _hand_polys(hand, w, h)
        shift = _hand_shadow_shift(hand)
        _darken(img, [p + shift for p in polys], 0.5, _HAND_SHADOW_SIGMA * w / 640)
        g = gain[int(np.clip(hand.xy_px[1], 0, h - 1)), int(np.clip(hand.xy_px[0], 0, w - 1))]
        for p in polys:  # one call each: overlapping polygons in one call cancel out
            cv2.fillPoly(img, [p], _shade(hand.colour, 0.95, g), cv2.LINE_AA, 4)
            cv2.fillPoly(ids, [p], 255, cv2.LINE_8, 4)
    img = _degrade(img, scene.degrade, rng)

    counts = np.bincount(ids.ravel(), minlength=256)
    pad_px = _pad_polygon_px(scene.pad, proj)
    pad = Pad(tuple((float(x), float(y)) for x, y in pad_px))
    truth = []
    for d in draws:
        area = abs(float(cv2.contourArea(d.top_corners.astype(np.float32))))
        corners = tuple((float(x), float(y)) for x, y in d.top_corners)
        sides = np.linalg.norm(d.top_corners - np.roll(d.top_corners, 1, axis=0), axis=1)
        centre = (float(d.top_centre[0]), float(d.top_centre[1]))
        truth.append(
            DieTruth(
                value=d.top_value,
                center_xy=centre,
                corners_xy=corners,
                size_px=float(np.mean(sides)),
                tilt_deg=round(d.tilt_deg, 3),
                on_pad=pad.contains(centre),
                stacked=d.spec.on_die is not None,
                colour=d.spec.style.name,
                visible=min(1.0, float(counts[d.index + 1]) / area) if area > 0 else 0.0,
            )
        )
    in_view = bool(counts[255] > 0) or any(_hand_in_frame(hd, w, h) for hd in scene.hands)
    return SceneImage(img, SceneTruth(tuple(truth), pad, in_view, size))


def _darken(img: Image, polys: list[npt.NDArray[np.int32]], strength: float, sigma: float) -> None:
    """Multiply ``img`` by a soft shadow of ``polys`` (work only inside their bounding box)."""
    h, w = img.shape[:2]
    pts = np.concatenate([p.reshape(-1, 2) for p in polys]) / 16
    pad = int(3 * sigma) + 2
    x0, y0 = max(0, int(pts[:, 0].min()) - pad), max(0, int(pts[:, 1].min()) - pad)
    x1, y1 = min(w, int(pts[:, 0].max()) + pad + 1), min(h, int(pts[:, 1].max()) + pad + 1)
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    off = np.array([[x0 * 16, y0 * 16]], np.int32)
    for p in polys:  # one call each: overlapping polygons in one call cancel out
        cv2.fillPoly(mask, [p.reshape(-1, 2) - off], 255, cv2.LINE_AA, 4)
    mask = cv2.GaussianBlur(mask, (0, 0), sigma)
    keep = 255 - cv2.multiply(mask, np.full_like(mask, round(strength * 255)), scale=1 / 255)
    roi = img[y0:y1, x0:x1]
    img[y0:y1, x0:x1] = cv2.multiply(roi, cv2.merge([keep, keep, keep]), scale=1 / 255)
