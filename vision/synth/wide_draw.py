"""Drawing a :class:`~vision.synth.wide.WideScene`: the table and mat laid by one perspective
warp each, the props, the lamps' light with hard shadows and contact shadows, glare on glossy
tables, the dice (rounded, bevelled, with their finish, pips and glare) far to near, focus
blur, and the camera faults; with ground truth measured from the same geometry.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import Pad
from vision.synth.degrade import _degrade
from vision.synth.geometry import (
    _CUBE,
    _D,
    _FACES,
    _NORMAL,
    _PIPS,
    _fix,
    _Pose,
    _pose,
    _rounded_square,
)
from vision.synth.model import DieTruth, Image, SceneImage, SceneTruth, Vec
from vision.synth.props import draw_prop, footprint_mm
from vision.synth.styles import DieLook, swirl
from vision.synth.surfaces import lay
from vision.synth.view import _ViewProjector
from vision.synth.wide import Lamp, WideDie, WideScene

_RING = np.array([(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 16, False)])
_SQUIRCLE = np.sign(_RING) * np.abs(_RING) ** 0.5  # |x|^4 + |y|^4 = 1: a square-ish pip
_SQUARE = np.array([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
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


def _light(scene: WideScene, proj: _ViewProjector, poses: list[_Pose]) -> Float:
    """Per-pixel BGR gain of the table: ambient plus each lamp (smooth, drawn at 1/8 scale),
    times the hard shadows (each lamp's share of the light, blocked) and the contact shadow
    under each die."""
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
    light = cv2.resize(total.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    solids = [(_CUBE * p.half) @ p.rot.T + p.centre for p in poses] + [
        np.column_stack([footprint_mm(q), np.full(len(footprint_mm(q)), q.height_mm)])
        for q in scene.props
        if q.height_mm >= 1.0
    ]
    if not solids:
        return np.asarray(light, np.float32)
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
        blurred = cv2.GaussianBlur(mask[y0:y1, x0:x1], (0, 0), soft).astype(np.float32) / 255
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
        blurred = cv2.GaussianBlur(ao[y0:y1, x0:x1], (0, 0), sigma).astype(np.float32) / 255
        dark[y0:y1, x0:x1] += 0.45 * blurred
    keep = np.clip(1.0 - dark, 0.0, 1.0)
    return np.asarray(light * keep[:, :, None], np.float32)


def _grow(box: Sequence[int], by: int, w: int, h: int) -> tuple[int, int, int, int]:
    x, y, bw, bh = box
    return max(0, x - by), max(0, y - by), min(w, x + bw + by), min(h, y + bh + by)


def _table(scene: WideScene, proj: _ViewProjector) -> tuple[Image, Pad]:
    """The unlit table, mat and props; and the pad (the mat, or the whole frame)."""
    size = (proj.w, proj.h)
    hom = proj.homography()
    img = lay(scene.table, hom, size).copy()
    frame = ((0.0, 0.0), (size[0] - 1.0, 0.0), (size[0] - 1.0, size[1] - 1.0), (0.0, size[1] - 1.0))
    pad = Pad(frame)
    if scene.mat is not None:
        m = scene.mat
        corners = proj(np.column_stack([m.corners_mm(), np.zeros(4)]))
        if m.border_mm > 0:
            rim = proj(np.column_stack([m.corners_mm(m.border_mm), np.zeros(4)]))
            cv2.fillPoly(img, [_fix(rim)], m.border, cv2.LINE_AA, 4)
        mask = np.zeros((proj.h, proj.w), np.uint8)
        cv2.fillPoly(mask, [_fix(corners)], 255, cv2.LINE_8, 4)
        x, y, bw, bh = cv2.boundingRect(mask)
        if bw > 0:
            shift = np.array([[1.0, 0.0, -x], [0.0, 1.0, -y], [0.0, 0.0, 1.0]])
            part = lay(m.surface, shift @ hom, (bw, bh), m.centre_mm, m.angle_deg)
            roi = img[y : y + bh, x : x + bw]
            cv2.copyTo(part, mask[y : y + bh, x : x + bw], roi)
        pad = Pad(tuple((float(x), float(y)) for x, y in corners))
    for prop in scene.props:
        draw_prop(img, prop, proj)
    return img, pad


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
    h, w = img.shape[:2]
    r = int(3 * radius) + 1
    x0, y0 = max(0, int(centre[0]) - r), max(0, int(centre[1]) - r)
    x1, y1 = min(w, int(centre[0]) + r + 1), min(h, int(centre[1]) + r + 1)
    if x1 <= x0 or y1 <= y0:
        return
    xs = np.arange(x0, x1, dtype=np.float32) - np.float32(centre[0])
    ys = np.arange(y0, y1, dtype=np.float32) - np.float32(centre[1])
    k = np.float32(-0.5 / radius**2)
    blob = np.exp(ys[:, None] ** 2 * k) * np.exp(xs[None, :] ** 2 * k) * np.float32(strength * 255)
    roi = img[y0:y1, x0:x1].astype(np.float32) + blob[:, :, None]
    img[y0:y1, x0:x1] = np.clip(roi, 0, 255).astype(np.uint8)


@dataclass
class _Face:
    value: int
    normal: Vec
    outline: npt.NDArray[np.float64]  # px
    inset: npt.NDArray[np.float64]  # px: the flat of the face inside the rounded edges
    pips: list[npt.NDArray[np.float64]]
    centre: Vec
    u: Vec
    v: Vec
    half: float


def _faces(pose: _Pose, look: DieLook, proj: _ViewProjector, facing: bool) -> list[_Face]:
    outline = _rounded_square(max(0.02, look.rounding), 5)
    inset = outline * (1.0 - 0.3 * look.rounding)
    shape = _SQUIRCLE if look.pip_shape == "square" else _RING
    out = []
    for value, n, u, v in _FACES:
        n_ = pose.rot @ np.array(n, float)
        fc = pose.centre + n_ * pose.half
        if (float(np.dot(n_, proj.eye - fc)) > 0) != facing:
            continue
        u_, v_ = pose.rot @ np.array(u, float), pose.rot @ np.array(v, float)
        r = look.pip_r * (look.one_r if value == 1 else 1.0)
        at = np.array(_PIPS[value]) * (look.pip_d / _D)
        pips = (at[:, None, :] + r * shape[None, :, :]).reshape(-1, 2)
        local = np.vstack([outline, inset, pips])  # one projection for the whole face
        world = fc + pose.half * (local[:, :1] * u_ + local[:, 1:] * v_)
        if not facing:  # seen through the resin: pulled towards the centre
            world = pose.centre + 0.8 * (world - pose.centre)
        px = proj(world)
        k = len(outline)
        n_pip = len(shape)
        out.append(
            _Face(
                value,
                n_,
                px[:k],
                px[k : 2 * k],
                [px[2 * k + i * n_pip : 2 * k + (i + 1) * n_pip] for i in range(len(at))],
                fc,
                u_,
                v_,
                pose.half,
            )
        )
    return out


def _mask(shape: tuple[int, int], polys: list[npt.NDArray[np.float64]], off: Vec) -> Float:
    m = np.zeros(shape, np.uint8)
    for p in polys:  # one call each: overlapping polygons in one call cancel out
        cv2.fillPoly(m, [_fix(p - off)], 255, cv2.LINE_AA, 4)
    return m.astype(np.float32) * np.float32(1 / 255)


def _shade(scene: WideScene, at: Vec, normal: Vec) -> Float:
    """BGR gain of a die face with ``normal`` at ``at``: ambient plus each lamp's share."""
    k = np.array(scene.ambient_colour, np.float32) * scene.ambient
    for lamp, e in zip(scene.lamps, _irradiance(scene.lamps, at[None, :]), strict=True):
        to = np.array(lamp.xyz_mm) - at
        to /= np.linalg.norm(to)
        k = k + float(e[0]) * min(2.0, max(0.0, float(normal @ to)) / max(to[2], 0.3)) * np.array(
            lamp.colour, np.float32
        )
    return k


def _draw_die(
    img: Image, ids: Image, index: int, die: WideDie, scene: WideScene, proj: _ViewProjector
) -> None:
    look = die.look
    pose = _pose(die.spec)
    front = _faces(pose, look, proj, True)
    allpts = np.vstack([f.outline for f in front])
    lo = np.maximum(np.floor(allpts.min(axis=0)).astype(int) - 3, 0)
    hi = np.minimum(np.ceil(allpts.max(axis=0)).astype(int) + 4, [proj.w, proj.h])
    if np.any(hi <= lo):
        return
    x0, y0 = int(lo[0]), int(lo[1])
    off = np.array([x0, y0], float)
    shape = (int(hi[1]) - y0, int(hi[0]) - x0)
    roi = img[y0 : int(hi[1]), x0 : int(hi[0])].astype(np.float32)
    body = np.array(look.body, np.float32)
    field: Float = np.broadcast_to(body, (*shape, 3)).astype(np.float32)
    if look.finish == "marbled":
        sw = swirl(look, *shape)[:, :, None]
        field = field + sw * (np.array(look.body2, np.float32) - body)
    elif look.finish == "metallic":  # a reflected room: a broad ramp across the die
        a = (look.seed % 360) * math.pi / 180
        ys, xs = np.mgrid[0 : shape[0], 0 : shape[1]].astype(np.float32)
        ramp = (xs * math.cos(a) + ys * math.sin(a)) / max(shape)
        field = field * (0.55 + 0.9 * ramp)[:, :, None]
    alpha = look.opacity
    centre = allpts.mean(axis=0)
    r2 = ((centre[0] - proj.w / 2) ** 2 + (centre[1] - proj.h / 2) ** 2) / (
        (proj.w / 2) ** 2 + (proj.h / 2) ** 2
    )
    vignette = np.float32(1.0 - scene.vignette * r2)  # as the table's light carries it
    shades = [_shade(scene, f.centre, f.normal) * vignette for f in front]
    if look.finish == "metallic":  # each face mirrors another part of the room
        shades = [
            k * (0.45 + 1.1 * ((look.seed * 7 + f.value * 13) % 17) / 16)
            for k, f in zip(shades, front, strict=True)
        ]
    hull = cv2.convexHull(allpts.astype(np.float32)).reshape(-1, 2).astype(np.float64)
    sil = _mask(shape, [hull], off)[:, :, None]
    # clear resin: the table shows through, tinted by the body (coloured glass)
    under = roi * np.minimum(body / 255 * 1.5, 1.2) * (1 - alpha) if alpha < 1 else None

    def paint(m: Float, colour: Float) -> None:
        nonlocal roi
        target = colour if under is None else alpha * colour + under
        roi += m * (target - roi)

    paint(sil, field * (np.mean(shades, axis=0) * 0.8))
    face_masks = []
    for f, k in zip(front, shades, strict=True):
        m = _mask(shape, [f.inset], off)[:, :, None]
        face_masks.append(m)
        paint(m, field * k)
    if look.see_through > 0:
        ghost = np.zeros(shape, np.uint8)
        for f in _faces(pose, look, proj, False):
            for p in f.pips:
                cv2.fillPoly(ghost, [_fix(p - off)], 255, cv2.LINE_AA, 4)
        side = float(np.linalg.norm(front[0].outline[0] - front[0].outline[5]))
        g = cv2.GaussianBlur(ghost, (0, 0), max(0.6, 0.05 * side)).astype(np.float32) / 255
        colour = np.array(look.pips, np.float32) * np.mean(shades, axis=0) * 0.7
        roi += (look.see_through * g * sil[:, :, 0])[:, :, None] * (colour - roi)
    for f, k, fm in zip(front, shades, face_masks, strict=True):
        pm = _mask(shape, f.pips, off)[:, :, None]
        colour = np.array(look.pips, np.float32) * k
        if look.pip_kind == "engraved":
            colour = colour * 0.8
        roi += pm * (colour - roi)
        if look.pip_kind == "engraved":  # the hole's wall shades its side nearest the light
            dx, dy = _light_dir_px(scene, proj, f)
            r = max(
                1, round(look.pip_r * float(np.linalg.norm(f.outline[0] - f.outline[5])) * 0.35)
            )
            shifted = np.roll(pm, (round(dy * r), round(dx * r)), axis=(0, 1))
            roi *= 1.0 - 0.5 * np.clip(pm - shifted, 0, 1)
        _face_glare(roi, fm, f, look, scene, proj, off)
    img[y0 : int(hi[1]), x0 : int(hi[0])] = np.clip(roi, 0, 255).astype(np.uint8)
    for f in front:
        cv2.fillPoly(
            ids, [_fix(f.outline)], index + 1 if f.value == _top(pose)[0] else 254, cv2.LINE_8, 4
        )


def _light_dir_px(scene: WideScene, proj: _ViewProjector, f: _Face) -> tuple[float, float]:
    """The direction (unit, px) in which the strongest lamp lies, seen on the face."""
    lamp = max(scene.lamps, key=lambda lp: lp.power)
    a = proj(f.centre[None, :])[0]
    to = np.array(lamp.xyz_mm) - f.centre
    b = proj((f.centre + 5 * to / np.linalg.norm(to))[None, :])[0]
    d = b - a
    n = float(np.linalg.norm(d)) or 1.0
    return float(d[0] / n), float(d[1] / n)


def _face_glare(
    roi: Float, fm: Float, f: _Face, look: DieLook, scene: WideScene, proj: _ViewProjector, off: Vec
) -> None:
    """Each lamp's reflection in a glossy face: a bright spot where the mirror image of the
    lamp is seen, kept on the face (a lamp just off it still lights its rounded edge)."""
    if look.gloss <= 0.02:
        return
    size = float(np.linalg.norm(f.outline[0] - f.outline[5])) / 2  # px, about half a side
    ys = xs = None
    for lamp in scene.lamps:
        lp = np.array(lamp.xyz_mm)
        mirror = lp - 2 * float((lp - f.centre) @ f.normal) * f.normal
        denom = float((mirror - proj.eye) @ f.normal)
        if abs(denom) < 1e-9:
            continue
        t = float((f.centre - proj.eye) @ f.normal) / denom
        q = proj.eye + t * (mirror - proj.eye) - f.centre
        local = np.array([q @ f.u, q @ f.v]) / f.half
        excess = max(0.0, float(np.max(np.abs(local))) - 0.8)
        if excess > 1.2:
            continue
        at = np.clip(local, -0.8, 0.8)
        spot = proj((f.centre + f.half * (at[0] * f.u + at[1] * f.v))[None, :])[0] - off
        strength = look.gloss * lamp.power * math.exp(-4 * excess**2) * 1.6
        radius = max(0.7, size * (0.12 + 0.3 * (1 - look.gloss)))
        if ys is None or xs is None:
            ys, xs = np.mgrid[0 : roi.shape[0], 0 : roi.shape[1]].astype(np.float32)
        blob = np.exp(-((xs - spot[0]) ** 2 + (ys - spot[1]) ** 2) / (2 * radius**2))
        roi += (strength * 255 * blob)[:, :, None] * fm


def _top(pose: _Pose) -> tuple[int, float]:
    ups = {v: float((pose.rot @ n)[2]) for v, n in _NORMAL.items()}
    top = max(ups, key=lambda v: ups[v])
    return top, math.degrees(math.acos(max(-1.0, min(1.0, ups[top]))))


def _defocus(img: Image, scene: WideScene, proj: _ViewProjector) -> Image:
    """Blur growing with the distance from the plane in focus (a tilted view is sharp in one
    band only)."""
    if scene.defocus <= 0:
        return img
    w, h = proj.w, proj.h
    gw, gh = w // 16 + 2, h // 16 + 2
    us, vs = np.meshgrid(np.linspace(0, w, gw), np.linspace(0, h, gh))
    depth = proj.depth(proj.to_plane(us, vs, 0.0))
    k = np.clip(np.abs(depth - scene.focus_at_mm) / scene.focus_mm, 0.0, 1.0).astype(np.float32)
    k = np.asarray(cv2.resize(k, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)
    blurred = cv2.GaussianBlur(img, (0, 0), scene.defocus)
    return np.asarray(cv2.blendLinear(blurred, img, k, 1.0 - k), np.uint8)


def _camera_colour(img: Image, scene: WideScene) -> Image:
    """The camera's white balance over the whole picture."""
    wb = np.array([*scene.white_balance, 0.0])
    return np.asarray(cv2.multiply(img, wb), np.uint8)


@functools.lru_cache(maxsize=4)
def _unit_noise(size: tuple[int, int]) -> Float:
    """Unit sensor noise, partly shared by the three channels (as a Bayer sensor's is); frames
    take random windows of it, scaled."""
    w, h = size
    rng = np.random.default_rng(4321)
    grain = rng.standard_normal((h + 64, w + 64, 3), dtype=np.float32) * np.float32(0.7)
    grain += rng.standard_normal((h + 64, w + 64, 1), dtype=np.float32) * np.float32(0.7)
    grain.flags.writeable = False
    return grain


def _sensor_noise(img: Image, sigma: float, rng: np.random.Generator) -> Image:
    if sigma <= 0:
        return img
    h, w = img.shape[:2]
    oy, ox = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    window = _unit_noise((w, h))[oy : oy + h, ox : ox + w]
    return np.asarray(cv2.scaleAdd(window, sigma, img.astype(np.float32)).clip(0, 255), np.uint8)


def render_wide(
    scene: WideScene,
    *,
    size: tuple[int, int] = (640, 480),
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> SceneImage:
    """Draw ``scene`` at ``size`` (width, height): the image and its ground truth (the same
    types as :func:`~vision.synth.draw.render`; props have none). ``rng`` (or ``seed``) only
    drives the sensor noise."""
    w, h = size
    if w < 32 or h < 32:
        raise ValueError(f"frame size {size} is too small")
    rng = rng if rng is not None else np.random.default_rng(seed)
    proj = _ViewProjector(scene.view, size)
    poses = [_pose(d.spec) for d in scene.dice]
    base, pad = _table(scene, proj)
    img = np.clip(base * _light(scene, proj, poses), 0, 255).astype(np.uint8)
    _table_glare(img, scene, proj)
    ids = np.zeros((h, w), np.uint8)
    order = sorted(range(len(poses)), key=lambda i: -float(proj.depth(poses[i].centre)))
    for i in order:
        _draw_die(img, ids, i, scene.dice[i], scene, proj)
    img = _defocus(img, scene, proj)
    if scene.white_balance != (1.0, 1.0, 1.0):
        img = _camera_colour(img, scene)
    img = _degrade(img, replace(scene.degrade, noise_sigma=0.0), rng)
    img = _sensor_noise(img, scene.degrade.noise_sigma, rng)
    counts = np.bincount(ids.ravel(), minlength=256)
    truth = []
    for i, (d, pose) in enumerate(zip(scene.dice, poses, strict=True)):
        value, tilt = _top(pose)
        _, n, u, v = next(f for f in _FACES if f[0] == value)
        n_, u_, v_ = (pose.rot @ np.array(x, float) for x in (n, u, v))
        quad = proj(pose.centre + pose.half * (n_ + _SQUARE[:, :1] * u_ + _SQUARE[:, 1:] * v_))
        c = proj((pose.centre + pose.half * n_)[None, :])[0]
        centre = (float(c[0]), float(c[1]))
        area = abs(float(cv2.contourArea(quad.astype(np.float32))))
        sides = np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1)
        truth.append(
            DieTruth(
                value=value,
                center_xy=centre,
                corners_xy=tuple((float(x), float(y)) for x, y in quad),
                size_px=float(np.mean(sides)),
                tilt_deg=round(tilt, 3),
                on_pad=pad.contains(centre),
                stacked=d.spec.on_die is not None,
                colour=d.look.name,
                visible=min(1.0, float(counts[i + 1]) / area) if area > 0 else 0.0,
            )
        )
    return SceneImage(img, SceneTruth(tuple(truth), pad, False, size))
