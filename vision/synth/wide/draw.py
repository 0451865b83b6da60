"""Drawing a :class:`~vision.synth.wide.scene.WideScene`: the table and mat laid by one perspective
warp each, the props, the lamps' light (:mod:`~vision.synth.lighting`), the dice far to near
(:mod:`~vision.synth.wide.dice`), focus blur, white balance and the camera faults; with
ground truth measured from the same geometry.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import Pad
from vision.synth.degrade import _degrade
from vision.synth.geometry import (
    _FACES,
    _fix,
    _pose,
)
from vision.synth.lighting import _light, _table_glare
from vision.synth.model import DieTruth, Image, SceneImage, SceneTruth
from vision.synth.props import draw_prop
from vision.synth.surfaces import lay
from vision.synth.tray import Wall, walls
from vision.synth.view import _ViewProjector
from vision.synth.wide.dice import _draw_die, _shade, _top
from vision.synth.wide.scene import WideScene

Float = npt.NDArray[np.float32]


_SQUARE = np.array([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])


def _table(scene: WideScene, proj: _ViewProjector) -> tuple[Image, Pad]:
    """The unlit table, mat and props; and the pad (the mat, or the whole frame)."""
    size = (proj.w, proj.h)
    hom = proj.homography()
    img = lay(scene.table, hom, size, angle_deg=scene.table.seed % 360).copy()
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


def _paint_wall(img: Image, ids: Image, wall: Wall, scene: WideScene) -> None:
    """A tray wall and its rim, lit like a die's face (it hides what it covers)."""
    if scene.mat is None:
        return
    colour = np.array(scene.mat.border, np.float32)
    up = np.array([0.0, 0.0, 1.0])
    for poly, normal, k in ((wall.face, wall.normal, 1.0), (wall.rim, up, 1.1)):
        shade = _shade(scene, wall.at, normal) * k
        bgr = tuple(float(min(255.0, c)) for c in colour * shade)
        cv2.fillPoly(img, [_fix(poly)], bgr, cv2.LINE_AA, 4)
        cv2.fillPoly(ids, [_fix(poly)], 254, cv2.LINE_8, 4)


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
    img = _light(base, scene, proj, poses)
    _table_glare(img, scene, proj)
    ids = np.zeros((h, w), np.uint8)
    sides = walls(scene.mat, proj) if scene.mat is not None else []
    for wall in sides:  # inner faces: behind the dice
        if not wall.outer:
            _paint_wall(img, ids, wall, scene)
    order = sorted(range(len(poses)), key=lambda i: -float(proj.depth(poses[i].centre)))
    for i in order:
        _draw_die(img, ids, i, scene.dice[i], scene, proj)
    for wall in sides:  # outer faces: in front of the floor just inside them
        if wall.outer:
            _paint_wall(img, ids, wall, scene)
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
