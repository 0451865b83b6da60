"""A wide scene's die drawn into its frame: a rounded, bevelled body of its finish (clear
resin tinted over the table, marbled, metallic), the far pips seen through clear resin, the
pips (round or square-ish, painted or engraved with a shaded wall) and the lamps' glare on
its faces; all in a box around the die, so a die costs what its size costs.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.geometry import (
    _D,
    _FACES,
    _NORMAL,
    _PIPS,
    _fix,
    _Pose,
    _pose,
    _rounded_square,
)
from vision.synth.lighting import _irradiance, gaussian_window
from vision.synth.logos import logo_polys
from vision.synth.model import Image, Vec
from vision.synth.styles import DieLook, swirl
from vision.synth.view import _ViewProjector
from vision.synth.wide.scene import WideDie, WideScene

Float = npt.NDArray[np.float32]


_RING = np.array([(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 16, False)])


_SQUIRCLE = np.sign(_RING) * np.abs(_RING) ** 0.5  # |x|^4 + |y|^4 = 1: a square-ish pip


@dataclass(frozen=True)
class _Face:
    """One face of a die as drawn: its value, world normal and axes, and its outline, flat
    and pips in pixels (a logo ace's ``pips`` are its logo's polygons: ``logo``, filled in one
    call so that their holes stay open)."""

    value: int
    normal: Vec
    outline: npt.NDArray[np.float64]  # px
    inset: npt.NDArray[np.float64]  # px: the flat of the face inside the rounded edges
    pips: list[npt.NDArray[np.float64]]
    centre: Vec
    u: Vec
    v: Vec
    half: float
    logo: bool = False


def _faces(pose: _Pose, look: DieLook, proj: _ViewProjector, facing: bool) -> list[_Face]:
    """The faces turned towards the camera (``facing``) or away from it (their pips pulled
    towards the centre, as clear resin's refraction shows them)."""
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
        logo = value == 1 and look.logo is not None
        if logo:
            polys = logo_polys(str(look.logo))
            sizes = [len(p) for p in polys]
            pips = np.vstack(polys)
        else:
            r = look.pip_r * (look.one_r if value == 1 else 1.0)
            at = np.array(_PIPS[value]) * (look.pip_d / _D)
            pips = (at[:, None, :] + r * shape[None, :, :]).reshape(-1, 2)
            sizes = [len(shape)] * len(at)
        local = np.vstack([outline, inset, pips])  # one projection for the whole face
        world = fc + pose.half * (local[:, :1] * u_ + local[:, 1:] * v_)
        if not facing:  # seen through the resin: pulled towards the centre
            world = pose.centre + 0.8 * (world - pose.centre)
        px = proj(world)
        k = len(outline)
        ends = 2 * k + np.cumsum([0, *sizes])
        out.append(
            _Face(
                value,
                n_,
                px[:k],
                px[k : 2 * k],
                [px[a:b] for a, b in itertools.pairwise(ends)],
                fc,
                u_,
                v_,
                pose.half,
                logo,
            )
        )
    return out


def _mask(
    shape: tuple[int, int],
    polys: list[npt.NDArray[np.float64]],
    off: Vec,
    *,
    together: bool = False,
) -> Float:
    """Anti-aliased coverage (0-1) of ``polys`` (px, less ``off``) in a box of ``shape``; filled
    ``together`` (one call: a polygon inside another cuts a hole, as a logo's do) or each alone."""
    m = np.zeros(shape, np.uint8)
    for group in [polys] if together else [[p] for p in polys]:  # apart: overlaps would cancel
        cv2.fillPoly(m, [_fix(p - off) for p in group], 255, cv2.LINE_AA, 4)
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
    """Draw ``die`` into ``img`` over what is there, and its faces into ``ids`` (its top face
    as ``index + 1``, the others 254: what is left of them measures what a reader can see)."""
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
    field: Float = body  # a plain body is one colour; a marbled or metal one varies
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
            for group in [f.pips] if f.logo else [[p] for p in f.pips]:
                cv2.fillPoly(ghost, [_fix(p - off) for p in group], 255, cv2.LINE_AA, 4)
        side = float(np.linalg.norm(front[0].outline[0] - front[0].outline[5]))
        g = cv2.GaussianBlur(ghost, (0, 0), max(0.6, 0.05 * side)).astype(np.float32) / 255
        colour = np.array(look.pips, np.float32) * np.mean(shades, axis=0) * 0.7
        roi += (look.see_through * g * sil[:, :, 0])[:, :, None] * (colour - roi)
    for f, k, fm in zip(front, shades, face_masks, strict=True):
        pm = _mask(shape, f.pips, off, together=f.logo)[:, :, None]
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
        # bright, but short of wiping out a pip: the label must stay what the picture shows
        strength = min(0.55, look.gloss * lamp.power * math.exp(-4 * excess**2) * 1.6)
        _add_spot(roi, fm, spot, max(0.7, size * (0.12 + 0.3 * (1 - look.gloss))), strength)
    if look.gloss > SHARP_GLOSS:
        # a lamp's hard reflection where the face is not quite flat (a dent, the rounding
        # toward an edge): a white dot a pip's size or less, anywhere on half the faces
        pick = np.random.default_rng([look.seed, f.value, *(abs(f.centre[:2]) * 100).astype(int)])
        if pick.random() < 0.5:
            at = pick.uniform(-0.85, 0.85, 2)
            dot = proj((f.centre + f.half * (at[0] * f.u + at[1] * f.v))[None, :])[0] - off
            radius = max(0.5, size * float(pick.uniform(*SHARP_SIZE)))
            _add_spot(roi, fm, dot, radius, float(pick.uniform(0.6, 0.95)))


SHARP_GLOSS = 0.35
"""Faces glossier than this may show a lamp's hard reflection: a white dot a pip's size or
less that shiny dice in photos show (a dark die's looks like one more pip) and a soft sheen
alone does not teach the networks or the pip count."""
SHARP_SIZE = (0.04, 0.09)  # the hard reflection's sigma, half face sides


def _add_spot(roi: Float, fm: Float, spot: Vec, radius: float, strength: float) -> None:
    """Add a Gaussian spot of ``radius`` px (sigma) and ``strength`` (of full white) at
    ``spot`` (roi px), on the face mask ``fm`` only."""
    at = gaussian_window(roi.shape, spot, radius)
    if at is not None:
        win, blob = at
        roi[win] += (np.float32(strength * 255) * blob)[:, :, None] * fm[win]


def _top(pose: _Pose) -> tuple[int, float]:
    """The value most up and the tilt of that face from the table (degrees)."""
    ups = {v: float((pose.rot @ n)[2]) for v, n in _NORMAL.items()}
    top = max(ups, key=lambda v: ups[v])
    return top, math.degrees(math.acos(max(-1.0, min(1.0, ups[top]))))
