"""Random scenes: a random pad, camera height and light, and dice placed on it flat, cocked,
stacked or off the pad with the caller's probabilities; and a random bad camera.

Every choice is drawn from the caller's generator in a fixed order, so a seed is a scene.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from vision.markers import card_side_mm
from vision.synth.geometry import _Projector
from vision.synth.model import (
    BGR,
    STYLES,
    Camera,
    Degrade,
    DieSpec,
    DieStyle,
    Lighting,
    PadStyle,
    Scene,
)

_PADS: tuple[tuple[BGR, BGR, BGR], ...] = (  # pad, rail, table
    ((40, 110, 30), (30, 50, 90), (60, 90, 130)),  # green felt, wooden tray
    ((35, 35, 150), (25, 25, 40), (70, 100, 140)),  # red felt
    ((120, 60, 20), (40, 40, 40), (90, 110, 130)),  # blue felt
    ((40, 40, 40), (20, 20, 20), (120, 140, 160)),  # black mat
    ((40, 70, 120), (20, 35, 60), (50, 60, 70)),  # brown leather
    ((150, 150, 150), (90, 90, 90), (40, 50, 60)),  # grey mat
)


def random_degrade(rng: np.random.Generator) -> Degrade:
    """A plausibly bad camera: some blur, maybe motion, sensor noise and JPEG."""
    return Degrade(
        blur_sigma=float(rng.uniform(0.3, 1.2)),
        motion_px=float(rng.choice([0.0, rng.uniform(1.0, 4.0)])),
        motion_dir_deg=float(rng.uniform(0, 180)),
        noise_sigma=float(rng.uniform(2.0, 7.0)),
        jpeg_quality=int(rng.integers(40, 86)),
    )


def _random_look(
    rng: np.random.Generator, size: tuple[int, int]
) -> tuple[PadStyle, Camera, Lighting]:
    camera = Camera(height_mm=float(rng.uniform(280, 370)), focal_frac=1.0)
    view_w, view_h = _Projector(camera, size).view_mm()
    pad_c, rail_c, table_c = _PADS[int(rng.integers(len(_PADS)))]
    pad = PadStyle(
        size_mm=(float(view_w * rng.uniform(0.68, 0.82)), float(view_h * rng.uniform(0.62, 0.78))),
        centre_mm=(
            float(rng.uniform(-0.03, 0.03) * view_w),
            float(rng.uniform(-0.03, 0.03) * view_h),
        ),
        angle_deg=float(rng.uniform(-3, 3)),
        colour=pad_c,
        texture=float(rng.uniform(0.3, 1.5)),
        rail_mm=float(rng.uniform(6, 14)),
        rail_colour=rail_c,
        table_colour=table_c,
        seed=int(rng.integers(1 << 30)),
    )
    cast = tuple(float(c) for c in rng.uniform(0.92, 1.08, 3))
    lighting = Lighting(
        azimuth_deg=float(rng.uniform(0, 360)),
        elevation_deg=float(rng.uniform(55, 85)),
        ambient=float(rng.uniform(0.35, 0.55)),
        gain=float(rng.uniform(0.85, 1.1)),
        cast=(cast[0], cast[1], cast[2]),
        gradient=float(rng.uniform(0, 0.25)),
        gradient_dir_deg=float(rng.uniform(0, 360)),
        shadow=float(rng.uniform(0.25, 0.55)),
    )
    return pad, camera, lighting


def with_markers(scene: Scene, markers_mm: float, size: tuple[int, int] = (640, 480)) -> Scene:
    """``scene`` with the four corner-marker cards (``markers_mm`` markers, as ``dicepad
    markers`` prints them) stuck on the table outside its pad's corners, the pad shrunk about
    its centre where a card would leave the view (a card's side and a quarter more, each way):
    a marked pad a camera sees whole, as the owner is told to mount it. The scene's dice stay
    where they are."""
    if markers_mm <= 0:
        raise ValueError("markers_mm must be positive")
    view_w, view_h = _Projector(scene.camera, size).view_mm()
    card = card_side_mm(markers_mm)
    pad = scene.pad
    room_w = view_w - 2 * abs(pad.centre_mm[0]) - 2.5 * card
    room_h = view_h - 2 * abs(pad.centre_mm[1]) - 2.5 * card
    if min(room_w / view_w, room_h / view_h) < 0.3:
        raise ValueError(f"{markers_mm:g} mm markers leave too little of the view for the pad")
    shrunk = (min(pad.size_mm[0], room_w), min(pad.size_mm[1], room_h))
    return replace(scene, pad=replace(pad, size_mm=shrunk, markers_mm=markers_mm))


def _inside_pad(pad: PadStyle, xy: tuple[float, float], margin: float) -> bool:
    """True when ``xy`` (mm) is inside the pad by at least ``margin`` (negative: outside by)."""
    a = math.radians(pad.angle_deg)
    dx, dy = xy[0] - pad.centre_mm[0], xy[1] - pad.centre_mm[1]
    lx, ly = dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a)
    inset = min(pad.size_mm[0] / 2 - abs(lx), pad.size_mm[1] / 2 - abs(ly))
    return inset >= margin


def random_scene(
    rng: np.random.Generator,
    *,
    n_dice: int | None = None,
    size: tuple[int, int] = (640, 480),
    cocked: float = 0.0,
    stacked: float = 0.0,
    off_pad: float = 0.0,
    degrade: bool | Degrade = False,
    styles: Sequence[DieStyle] | None = None,
    min_tilt_deg: float = 15.0,
    max_tilt_deg: float = 40.0,
    look: Scene | None = None,
    spacing: float = 1.6,
    cocked_anywhere: float = 0.0,
    die_mm: float | None = None,
) -> Scene:
    """A random table: pad, camera height, light, and ``n_dice`` (1-6 when None) placed on it.

    Each die is, with the given probabilities, cocked (leaning on the rail, ``min_tilt_deg`` to
    ``max_tilt_deg``), stacked (on top of, or leaning against, another die) or off the pad;
    otherwise it lies flat on the pad. ``look`` reuses another scene's pad, camera and light
    (its drawn background is cached, so that is much faster). ``spacing`` is the closest two
    dice lying flat on the pad come, centre to centre, in die sides: below about 1.4 they may
    touch, as dice in a tray do (the flags must not take a die beside another for one leaning
    on it). ``cocked_anywhere`` is the share of cocked dice tilted somewhere on the pad, any
    way (on a fold of the felt, a coin, a crumb), rather than leaning outwards on the rail.
    ``die_mm`` fixes the dice's size (a bar's one set; default: 14-19 mm at random).
    Dice never intersect; a die that cannot be placed after many tries is left out (the truth
    lists the dice drawn).
    """
    if not 1.0 <= spacing <= 3.0:
        raise ValueError("spacing must be within 1..3 die sides")
    if not 0.0 <= cocked_anywhere <= 1.0:
        raise ValueError("cocked_anywhere must be within [0, 1]")
    if look is None:
        pad, camera, lighting = _random_look(rng, size)
    else:
        pad, camera, lighting = look.pad, look.camera, replace(look.lighting, glare=0.0)
    proj = _Projector(camera, size)
    view_w, view_h = proj.view_mm()
    n = int(rng.integers(1, 7)) if n_dice is None else n_dice
    if n < 0:
        raise ValueError("n_dice must be >= 0")
    drawn_mm = float(rng.uniform(14.0, 19.0))  # drawn either way: the same seed, the same scene
    if die_mm is None:
        die_mm = drawn_mm
    elif not 5.0 <= die_mm <= 40.0:
        raise ValueError("die_mm must be within 5..40")
    palette = list(styles) if styles else list(STYLES.values())
    mixed = rng.random() < 0.3
    base_style = palette[int(rng.integers(len(palette)))]
    dice: list[DieSpec] = []

    def style() -> DieStyle:
        return palette[int(rng.integers(len(palette)))] if mixed else base_style

    grow = camera.height_mm / (camera.height_mm - 1.2 * die_mm)  # perspective of a die's top

    def free(xy: tuple[float, float], gap: float, ignore: int | None = None) -> bool:
        return (
            all(math.dist(xy, d.xy_mm) >= gap for i, d in enumerate(dice) if i != ignore)
            and abs(xy[0]) * grow + die_mm < view_w / 2
            and abs(xy[1]) * grow + die_mm < view_h / 2
        )

    for _ in range(n):
        kind = rng.choice(4, p=_kind_probs(cocked, stacked, off_pad))
        value = int(rng.integers(1, 7))
        yaw = float(rng.uniform(0, 90))
        spec: DieSpec | None = None
        anywhere = kind == 1 and cocked_anywhere > 0 and rng.random() < cocked_anywhere
        for _try in range(300):
            if anywhere:  # tilted on something small, anywhere on the pad, any way
                xy = (
                    pad.centre_mm[0] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[0],
                    pad.centre_mm[1] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[1],
                )
                tilt = float(rng.uniform(min_tilt_deg, max_tilt_deg))
                tdir = float(rng.uniform(0, 360))
                if _inside_pad(pad, xy, die_mm) and free(xy, die_mm * 1.8):
                    spec = DieSpec(value, xy, yaw, tilt, tdir, 0.0, die_mm, style())
                    break
            elif kind == 1:  # leaning on the rail, tilted outwards
                side = int(rng.integers(4))
                t = float(rng.uniform(-0.4, 0.4))
                hw, hh = pad.size_mm[0] / 2, pad.size_mm[1] / 2
                edge = die_mm * 0.75
                lx, ly, tdir = [
                    (hw - edge, t * 2 * hh, 0.0),
                    (t * 2 * hw, hh - edge, 90.0),
                    (-hw + edge, t * 2 * hh, 180.0),
                    (t * 2 * hw, -hh + edge, 270.0),
                ][side]
                a = math.radians(pad.angle_deg)
                xy = (
                    pad.centre_mm[0] + lx * math.cos(a) - ly * math.sin(a),
                    pad.centre_mm[1] + lx * math.sin(a) + ly * math.cos(a),
                )
                tilt = float(rng.uniform(min_tilt_deg, max_tilt_deg))
                cand = DieSpec(value, xy, yaw, tilt, tdir + pad.angle_deg, 0.0, die_mm, style())
                if free(xy, die_mm * 1.8):
                    spec = cand
                    break
            elif kind == 2 and any(d.on_die is None and d.tilt_deg < 5 for d in dice):
                bases = [i for i, d in enumerate(dice) if d.on_die is None and d.tilt_deg < 5]
                bi = bases[int(rng.integers(len(bases)))]
                base = dice[bi]
                if any(d.on_die == bi for d in dice):
                    continue
                if rng.random() < 0.5:  # on top of it
                    off = rng.uniform(-0.15, 0.15, 2) * die_mm
                    xy = (base.xy_mm[0] + float(off[0]), base.xy_mm[1] + float(off[1]))
                    cand = DieSpec(
                        value,
                        xy,
                        yaw,
                        float(rng.uniform(0, 3)),
                        float(rng.uniform(0, 360)),
                        base.size_mm,
                        die_mm,
                        style(),
                        on_die=bi,
                    )
                else:  # leaning against it
                    ang = float(rng.uniform(0, 2 * math.pi))
                    tilt = float(rng.uniform(max(min_tilt_deg, 20.0), max(max_tilt_deg, 25.0)))
                    dist = die_mm * (0.55 + 0.5 * math.cos(math.radians(tilt))) + base.size_mm * 0.5
                    xy = (
                        base.xy_mm[0] + dist * math.cos(ang),
                        base.xy_mm[1] + dist * math.sin(ang),
                    )
                    cand = DieSpec(
                        value,
                        xy,
                        yaw,
                        tilt,
                        math.degrees(ang) + 180,
                        0.0,
                        die_mm,
                        style(),
                        on_die=bi,
                    )
                if free(xy, die_mm * 1.8, ignore=bi) and _inside_pad(pad, xy, die_mm):
                    spec = cand
                    break
            elif kind == 3:  # off the pad, on the table
                xy = (
                    float(rng.uniform(-view_w / 2, view_w / 2)),
                    float(rng.uniform(-view_h / 2, view_h / 2)),
                )
                if not _inside_pad(pad, xy, -0.7 * die_mm) and free(xy, die_mm * 1.6):
                    spec = DieSpec(value, xy, yaw, 0.0, 0.0, 0.0, die_mm, style())
                    break
            else:  # flat on the pad
                xy = (
                    pad.centre_mm[0] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[0],
                    pad.centre_mm[1] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[1],
                )
                close = min(spacing, 1.6)
                if close < 1.6 and dice and rng.random() < 0.6:  # beside another die
                    near = dice[int(rng.integers(len(dice)))]
                    ang = float(rng.uniform(0, 2 * math.pi))
                    dist = float(rng.uniform(close, 1.5)) * die_mm
                    xy = (
                        near.xy_mm[0] + dist * math.cos(ang),
                        near.xy_mm[1] + dist * math.sin(ang),
                    )
                if (
                    _inside_pad(pad, xy, die_mm)
                    and free(xy, die_mm * close)
                    and (close >= 1.6 or all(_apart(xy, yaw, d) for d in dice))
                ):
                    spec = DieSpec(value, xy, yaw, 0.0, 0.0, 0.0, die_mm, style())
                    break
        if spec is not None:
            dice.append(spec)
    if isinstance(degrade, Degrade):
        deg = degrade
    elif degrade:
        deg = random_degrade(rng)
        lighting = replace(lighting, glare=float(rng.choice([0.0, rng.uniform(0.1, 0.35)])))
    else:
        deg = Degrade()
    return Scene(tuple(dice), pad, camera, lighting, deg)


def _apart(xy: tuple[float, float], yaw_deg: float, other: DieSpec) -> bool:
    """Whether a flat die at ``xy`` turned ``yaw_deg`` keeps clear of ``other`` (same size):
    their footprints are separated along one of the four edge directions (separating axes),
    with a 3 % margin; a die that is not lying flat needs 1.6 sides of room."""
    size = other.size_mm
    gap = math.dist(xy, other.xy_mm)
    if other.tilt_deg or other.lift_mm or other.on_die is not None:
        return gap >= 1.6 * size
    if gap >= 1.45 * size:
        return True
    d = np.subtract(xy, other.xy_mm)
    for yaw in (yaw_deg, other.yaw_deg):
        a = math.radians(yaw)
        for axis in ((math.cos(a), math.sin(a)), (-math.sin(a), math.cos(a))):
            reach = sum(  # half-extents of both squares along the axis
                0.5
                * size
                * (
                    abs(math.cos(math.radians(w)) * axis[0] + math.sin(math.radians(w)) * axis[1])
                    + abs(
                        -math.sin(math.radians(w)) * axis[0] + math.cos(math.radians(w)) * axis[1]
                    )
                )
                for w in (yaw_deg, other.yaw_deg)
            )
            if abs(float(d[0] * axis[0] + d[1] * axis[1])) >= 1.03 * reach:
                return True
    return False


def _kind_probs(cocked: float, stacked: float, off_pad: float) -> list[float]:
    for p in (cocked, stacked, off_pad):
        if not 0.0 <= p <= 1.0:
            raise ValueError("probabilities must be within [0, 1]")
    rest = 1.0 - cocked - stacked - off_pad
    if rest < -1e-9:
        raise ValueError("cocked + stacked + off_pad must not exceed 1")
    return [max(rest, 0.0), cocked, stacked, off_pad]
