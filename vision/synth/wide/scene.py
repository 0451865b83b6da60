"""Wide scenes: domain randomisation for training a reader on renders rather than on photo sets.

Every bar is a new source: its own dice, felt, lamp and camera. :func:`wide_scene` draws a
random table from a domain wider than any bar -- die looks (:mod:`styles`), surfaces with
printed dots, mats, boards and walled trays (:mod:`surfaces`, :mod:`tray`), props that are not
dice (:mod:`props`), one to three lamps with hard shadows and glare, a camera tilted up to 45
degrees, dice of 14-120 px (flat, cocked, stacked, touching, cut by the frame's edge), focus
blur, white balance, vignette, noise and JPEG -- and
:func:`~vision.synth.wide.draw.render_wide` draws it with the same ground truth as
:func:`~vision.synth.draw.render` (only dice have truth).

Every choice comes from the caller's generator in a fixed order: a seed is a scene.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.synth.geometry import _CUBE, _pose
from vision.synth.model import BGR, Degrade, DieSpec, DieStyle
from vision.synth.props import Prop, random_prop
from vision.synth.scenes import _apart
from vision.synth.styles import FINISHES, DieLook, random_look
from vision.synth.surfaces import Mat, Surface, random_surface
from vision.synth.tray import inside
from vision.synth.view import View, _ViewProjector

MIN_DIE_PX, MAX_DIE_PX = 14.0, 120.0
MAX_CAMERA_TILT_DEG = 45.0
_NO_FAULTS = Degrade()


def _grey(v: int) -> BGR:
    return (v, v, v)


def _wall_colour(rng: np.random.Generator) -> BGR:
    """Wood, black, grey or white plastic: what trays are made of."""
    walls: tuple[BGR, ...] = (
        (40, 80, 130),
        (30, 50, 90),
        (30, 30, 32),
        (120, 120, 120),
        (225, 225, 225),
    )
    c = walls[int(rng.integers(len(walls)))]
    f = float(rng.uniform(0.85, 1.15))
    return (min(255, int(c[0] * f)), min(255, int(c[1] * f)), min(255, int(c[2] * f)))


@dataclass(frozen=True)
class Lamp:
    """A small light above the table: position (mm), its light on the table under the camera's
    target (1 = full exposure there), colour (BGR gains) and size (mm: shadow softness)."""

    xyz_mm: tuple[float, float, float]
    power: float
    colour: tuple[float, float, float] = (1.0, 1.0, 1.0)
    radius_mm: float = 20.0


@dataclass(frozen=True)
class WideDie:
    """A die and its look (``spec.style`` carries the plain colours and name)."""

    spec: DieSpec
    look: DieLook


@dataclass(frozen=True)
class WideScene:
    """A table from the wide domain. ``ambient`` is the light that is not the lamps (and lights
    shadows); ``defocus`` the blur (px sigma) of what lies ``focus_mm`` off the focal plane,
    growing with the distance; ``white_balance`` the camera's colour error (BGR gains, a
    tungsten bar is orange); ``vignette`` the darkening of the frame's corners; ``degrade``
    the camera faults applied last."""

    dice: tuple[WideDie, ...]
    view: View
    table: Surface
    mat: Mat | None
    props: tuple[Prop, ...]
    lamps: tuple[Lamp, ...]
    ambient: float = 0.4
    ambient_colour: tuple[float, float, float] = (1.0, 1.0, 1.0)
    defocus: float = 0.0
    focus_mm: float = 100.0
    focus_at_mm: float = 400.0
    degrade: Degrade = _NO_FAULTS
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0)
    vignette: float = 0.0


def _die_px(spec: DieSpec, proj: _ViewProjector) -> tuple[float, np.ndarray]:
    """Mean projected side of a die's top (its four highest corners: the top face at any tilt
    under 45 degrees), in px, and its cube's corners in pixels."""
    pose = _pose(spec)
    pts = (_CUBE * pose.half) @ pose.rot.T + pose.centre
    px = proj(pts)
    top = pts[:, 2] > pts[:, 2].mean()
    quad = px[top]
    order = np.argsort(np.arctan2(quad[:, 1] - quad[:, 1].mean(), quad[:, 0] - quad[:, 0].mean()))
    quad = quad[order]
    if len(quad) != 4:
        return 0.0, px
    side = float(np.mean(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1)))
    return side, px


def _random_count(rng: np.random.Generator) -> int:
    """1-10 dice; a few tables with none at all (nothing there is a die)."""
    return 0 if rng.random() < 0.04 else int(rng.integers(1, 11))


def _stack(
    rng: np.random.Generator, dice: list[WideDie], die: WideDie, proj: _ViewProjector
) -> WideDie | None:
    """``die`` put on a flat die that has none on it, a little off centre and askew, if there
    is one and the stack stays in the frame."""
    bases = [
        i
        for i, d in enumerate(dice)
        if not d.spec.tilt_deg and not d.spec.lift_mm and all(o.spec.on_die != i for o in dice)
    ]
    if not bases:
        return None
    bi = bases[int(rng.integers(len(bases)))]
    base = dice[bi].spec
    off = rng.uniform(-0.15, 0.15, 2) * base.size_mm
    spec = replace(
        die.spec,
        xy_mm=(base.xy_mm[0] + float(off[0]), base.xy_mm[1] + float(off[1])),
        tilt_deg=float(rng.uniform(0, 3)),
        lift_mm=base.size_mm,
        on_die=bi,
    )
    side, corners = _die_px(spec, proj)
    if not (MIN_DIE_PX <= side <= MAX_DIE_PX * 1.1 and corners.min() >= 0):
        return None
    if corners[:, 0].max() > proj.w - 1 or corners[:, 1].max() > proj.h - 1:
        return None
    return replace(die, spec=spec)


HORIZON_MARGIN_DEG = 89.0
"""The most a frame corner's ray may be off straight down (degrees): the table fills the frame."""


def _random_view(
    rng: np.random.Generator, die_mm: float, size: tuple[int, int], max_tilt: float
) -> View:
    tilt = float(
        rng.uniform(0, min(8.0, max_tilt)) if rng.random() < 0.35 else rng.uniform(0, max_tilt)
    )
    focal = float(rng.uniform(0.65, 1.3))
    # every pixel's ray meets the table short of the horizon: a wide lens at the steepest
    # slant saw past it (a frame corner 91 degrees off straight down), and the mat sized to
    # the view came out 1e8 mm across
    corner = math.degrees(math.atan(math.hypot(*size) / (2 * focal * size[0])))
    tilt = min(tilt, HORIZON_MARGIN_DEG - corner)
    target_px = math.exp(float(rng.uniform(math.log(17), math.log(100))))
    distance = focal * size[0] * die_mm / target_px
    return View(
        distance_mm=distance,
        tilt_deg=tilt,
        azimuth_deg=float(rng.uniform(0, 360)),
        roll_deg=float(rng.uniform(0, 360)),
        focal_frac=focal,
        target_mm=(0.0, 0.0),
    )


def _random_lamps(rng: np.random.Generator, distance: float) -> tuple[tuple[Lamp, ...], float]:
    n = int(rng.choice([1, 1, 2, 2, 3]))
    ambient = float(rng.uniform(0.12, 0.6))
    share = rng.dirichlet(np.ones(n)) * (1.05 - ambient)
    lamps = []
    for k in range(n):
        height = float(rng.uniform(0.8, 4.0)) * max(distance, 300.0)
        reach = height * float(rng.uniform(0.0, 1.1))
        az = float(rng.uniform(0, 2 * math.pi))
        warm = float(rng.uniform(-0.12, 0.12))
        lamps.append(
            Lamp(
                (reach * math.cos(az), reach * math.sin(az), height),
                float(share[k]),
                (1.0 - warm, 1.0, 1.0 + warm),
                float(rng.uniform(5, 120)),
            )
        )
    return tuple(lamps), ambient


def _random_degrade(rng: np.random.Generator, die_px: float) -> Degrade:
    """Camera faults that leave the pips of a ``die_px`` die there to be read: blur at most
    6 % of a side, and JPEG no coarser than small dice survive."""
    blur_cap = 0.06 * die_px
    floor = int(30 + max(0.0, 40.0 - die_px) * 1.5)
    return Degrade(
        blur_sigma=min(blur_cap, float(rng.choice([0.0, rng.uniform(0.3, 1.3)]))),
        motion_px=float(rng.choice([0.0, 0.0, 0.0, rng.uniform(1.0, 4.0)])),
        motion_dir_deg=float(rng.uniform(0, 180)),
        noise_sigma=float(rng.uniform(1.0, 9.0)),
        jpeg_quality=max(floor, int(rng.integers(30, 96))) if rng.random() < 0.8 else None,
        exposure=float(rng.uniform(0.75, 1.25)),
    )


def wide_scene(
    rng: np.random.Generator,
    size: tuple[int, int] = (640, 480),
    *,
    n_dice: int | None = None,
    finishes: Sequence[str] = FINISHES,
    max_camera_tilt_deg: float = MAX_CAMERA_TILT_DEG,
    cocked: float = 0.12,
    stacked: float = 0.04,
    props: bool = True,
) -> WideScene:
    """A random table from the wide domain (see the module doc); ``finishes`` limits the dice's
    bodies, ``cocked`` is the share of dice tilted 10-40 degrees on something, ``props``
    whether non-dice lie about. Dice's top faces measure 14-120 px and lie inside the frame."""
    if not 0.0 <= max_camera_tilt_deg <= MAX_CAMERA_TILT_DEG:
        raise ValueError(f"max_camera_tilt_deg must be within 0..{MAX_CAMERA_TILT_DEG:g}")
    if not finishes or any(f not in FINISHES for f in finishes):
        raise ValueError(f"finishes must be some of {FINISHES}")
    w, h = size
    die_mm = float(rng.choice([12.0, 14.0, 16.0, 16.0, 19.0, 22.0, 25.0])) * float(
        rng.uniform(0.95, 1.05)
    )
    view = _random_view(rng, die_mm, size, max_camera_tilt_deg)
    proj = _ViewProjector(view, size)
    mm_px = view.distance_mm / (view.focal_frac * w)
    table = random_surface(rng, die_mm, mm_per_px=mm_px)
    mat = None
    ground = proj.to_plane(np.array([0, w, w, 0, w / 2]), np.array([0, 0, h, h, h / 2]))
    span = float(np.linalg.norm(ground[0] - ground[2]))
    if rng.random() < 0.65:
        mat_surface = random_surface(
            rng,
            die_mm,
            str(rng.choice(["felt", "felt", "printed", "dotted", "board", "leather"])),
            mm_per_px=mm_px,
        )
        side = float(rng.uniform(0.45, 1.3)) * span
        mat = Mat(
            mat_surface,
            (side, side * float(rng.uniform(0.6, 1.0))),
            (float(rng.normal(0, 0.12)) * span, float(rng.normal(0, 0.12)) * span),
            float(rng.uniform(0, 360)),
            _grey(int(rng.integers(10, 120))),
            float(rng.choice([0.0, rng.uniform(3, 20)])),
        )
        if rng.random() < 0.3:  # a tray: walls as high as one to two dice, a rim on top
            mat = replace(
                mat,
                border=_wall_colour(rng),
                border_mm=float(rng.uniform(4, 15)),
                wall_mm=float(rng.uniform(0.6, 2.2)) * die_mm,
                size_mm=(mat.size_mm[0] * 0.8, mat.size_mm[1] * 0.8),
            )
    mode = rng.random()  # one set, two sets, or all mixed
    sets = [random_look(rng, str(rng.choice(list(finishes)))) for _ in range(2)]
    n = n_dice if n_dice is not None else _random_count(rng)
    if n < 0:
        raise ValueError("n_dice must be >= 0")
    dice: list[WideDie] = []
    die_px = view.focal_frac * w * die_mm / view.distance_mm  # a die's side at the target
    for _ in range(n):
        if mode < 0.45:
            look = sets[0]
        elif mode < 0.7:
            look = sets[int(rng.integers(2))]
        else:
            look = random_look(rng, str(rng.choice(list(finishes))))
        value = int(rng.integers(1, 7))
        yaw = float(rng.uniform(0, 90))
        pose_kind = rng.random()
        tilt = (
            float(rng.uniform(10, 40))
            if pose_kind < cocked
            else float(rng.uniform(0.5, 6))
            if pose_kind < cocked + 0.1
            else 0.0
        )
        tdir = float(rng.uniform(0, 360))
        style = DieStyle(look.name, look.body, look.pips, look.see_through)
        cut = rng.random() < 0.12  # at the frame's edge, partly out of the picture
        if rng.random() < stacked:  # on top of a flat die (the STACKED flag's case)
            top = _stack(
                rng,
                dice,
                WideDie(DieSpec(value, (0, 0), yaw, 0, tdir, 0, die_mm, style), look),
                proj,
            )
            if top is not None:
                dice.append(top)
                continue
        for _try in range(60):
            if dice and rng.random() < 0.3:  # beside another die, as thrown dice come to rest
                near = dice[int(rng.integers(len(dice)))].spec
                ang = float(rng.uniform(0, 2 * math.pi))
                dist = float(rng.uniform(1.05, 1.6)) * die_mm
                xy = (near.xy_mm[0] + dist * math.cos(ang), near.xy_mm[1] + dist * math.sin(ang))
            else:
                u, v = rng.uniform(0.04 * w, 0.96 * w), rng.uniform(0.04 * h, 0.96 * h)
                if cut:  # its top's centre a third to a half of a side in from an edge
                    k = float(rng.uniform(0.3, 0.5)) * die_px
                    u, v = [(k, v), (w - 1 - k, v), (u, k), (u, h - 1 - k)][int(rng.integers(4))]
                p = proj.to_plane(u, v, die_mm)
                xy = (float(p[0]), float(p[1]))
            spec = DieSpec(value, xy, yaw, tilt, tdir, 0.0, die_mm, style)
            if mat is not None and mat.wall_mm > 0 and not inside(mat, xy, 0.9 * die_mm):
                continue  # a walled tray's dice are in it
            if not all(
                _apart(xy, yaw, d.spec) if not tilt else math.dist(xy, d.spec.xy_mm) >= 1.6 * die_mm
                for d in dice
            ):
                continue
            px_side, corners = _die_px(spec, proj)
            if not MIN_DIE_PX <= px_side <= MAX_DIE_PX:
                continue
            lo, hi = corners.min(axis=0), corners.max(axis=0)
            if cut:  # its top's centre stays in the frame, a quarter side in
                cu, cv = proj(np.array([xy[0], xy[1], die_mm]))
                m = 0.25 * px_side
                if not (m <= cu <= w - 1 - m and m <= cv <= h - 1 - m):
                    continue
            elif lo[0] < 0 or lo[1] < 0 or hi[0] > w - 1 or hi[1] > h - 1:
                continue
            dice.append(WideDie(spec, look))
            break
    placed: list[Prop] = []
    if props:
        for _ in range(int(rng.choice([0, 1, 2, 3, 4, 6], p=[0.25, 0.2, 0.2, 0.15, 0.1, 0.1]))):
            for _try in range(20):
                p = proj.to_plane(rng.uniform(0, w), rng.uniform(0, h), 0.0)
                xy = (float(p[0]), float(p[1]))
                prop = random_prop(rng, xy, die_mm)
                clear = prop.radius_mm * (0.7 if prop.kind == "card" else 1.0) + die_mm
                if all(math.dist(xy, d.spec.xy_mm) > clear for d in dice) and all(
                    math.dist(xy, q.xy_mm) > prop.radius_mm + q.radius_mm for q in placed
                ):
                    placed.append(prop)
                    break
    lamps, ambient = _random_lamps(rng, view.distance_mm)
    cast = rng.uniform(0.9, 1.1, 3)
    # blur that would wipe out the pips would make the value labels lies
    defocus = min(0.09 * die_px, float(rng.choice([0.0, rng.uniform(0.5, 3.0)], p=[0.4, 0.6])))
    return WideScene(
        dice=tuple(dice),
        view=view,
        table=table,
        mat=mat,
        props=tuple(placed),
        lamps=lamps,
        ambient=ambient,
        ambient_colour=(float(cast[0]), float(cast[1]), float(cast[2])),
        defocus=defocus,
        focus_mm=float(rng.uniform(0.05, 0.3)) * view.distance_mm,
        focus_at_mm=view.distance_mm * float(rng.uniform(0.85, 1.15)),
        degrade=_random_degrade(rng, die_px),
        white_balance=_white_balance(rng),
        vignette=float(rng.choice([0.0, rng.uniform(0.1, 0.45)])),
    )


def _white_balance(rng: np.random.Generator) -> tuple[float, float, float]:
    """Mostly near neutral; a third of bars tungsten-orange, some fluorescent-green or cold."""
    r = rng.random()
    base = rng.uniform(0.94, 1.06, 3)
    if r < 0.3:
        base *= (rng.uniform(0.6, 0.85), rng.uniform(0.85, 0.97), rng.uniform(1.0, 1.15))
    elif r < 0.4:
        base *= (rng.uniform(0.95, 1.05), rng.uniform(1.02, 1.12), rng.uniform(0.85, 0.95))
    elif r < 0.5:
        base *= (rng.uniform(1.05, 1.2), 1.0, rng.uniform(0.8, 0.95))
    return (float(base[0]), float(base[1]), float(base[2]))
