"""Synthetic dice scenes with ground truth: the test bed for the reader, the flags and the
settle detector, and the picture source of the demo camera.

No public photo set labels cocked, stacked or off-pad dice, so dicepad renders its own. The
renderer is pure NumPy + OpenCV and fast (a few ms per 640x480 frame): 3-D cubes with rounded
corners and the standard pip layout (opposite faces sum to 7) are projected through a pinhole
camera looking straight down at a pad, faces are shaded by one directional light, dice cast soft
shadows, and the frame can be degraded (blur, motion blur, noise, JPEG, glare, exposure).

World units are millimetres: ``x`` right, ``y`` down the image, ``z`` up towards the camera,
origin on the table under the camera. The camera sits ``Camera.height_mm`` above the origin.

API (all value types are frozen dataclasses; every random choice comes from the caller's
``numpy.random.Generator`` so a seed reproduces a scene exactly)::

    scene = Scene(dice=(DieSpec(5, (0, 0)), DieSpec(3, (40, 10), yaw_deg=30, tilt_deg=20)))
    shot = render(scene, size=(640, 480), rng=np.random.default_rng(1))
    shot.image                      # BGR uint8, shape (480, 640, 3)
    shot.truth.dice[1].value        # 3 (the face most up)
    shot.truth.dice[1].tilt_deg     # 20.0: cocked
    shot.truth.pad                  # vision.reading.Pad: the pad polygon in pixels

    scene = random_scene(rng, n_dice=5, cocked=0.2, stacked=0.1, off_pad=0.1, degrade=True)

    for frame in throw_sequence(rng, base=scene, n_dice=5):   # hand, tumble, rest, keep
        frame.image, frame.truth.moving, frame.truth.rest_index

``throw_sequence`` returns a :class:`ThrowSequence`; its ``remaining`` (the dice left on the pad
after the kept ones were taken) is the ``before=`` of the next throw, so throws chain forever
for a demo camera.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import Pad, Point

Image = npt.NDArray[np.uint8]
Vec = npt.NDArray[np.float64]
BGR = tuple[int, int, int]

__all__ = [
    "STYLES",
    "TRANSLUCENT_STYLES",
    "Camera",
    "Degrade",
    "DieSpec",
    "DieStyle",
    "DieTruth",
    "Frame",
    "FrameTruth",
    "Hand",
    "Lighting",
    "PadStyle",
    "Scene",
    "SceneImage",
    "SceneTruth",
    "ThrowSequence",
    "Tumble",
    "random_degrade",
    "random_scene",
    "render",
    "throw_sequence",
]


# --------------------------------------------------------------------------- value types


@dataclass(frozen=True)
class DieStyle:
    """Body and pip colours (BGR) and the plain colour name a reader should report.

    ``see_through`` (0-1) makes the body translucent resin: the pips of the faces turned away
    from the camera show through it, blurred and dimmed, beside the top face's crisp ones --
    what real smoky or swirl dice do, and what a reader must not count."""

    name: str
    body: BGR
    pips: BGR
    see_through: float = 0.0


STYLES: dict[str, DieStyle] = {
    s.name: s
    for s in (
        DieStyle("white", (236, 238, 240), (25, 25, 25)),
        DieStyle("black", (30, 30, 32), (235, 235, 235)),
        DieStyle("red", (40, 30, 200), (245, 245, 245)),
        DieStyle("green", (60, 150, 30), (245, 245, 245)),
        DieStyle("blue", (180, 80, 20), (245, 245, 245)),
        DieStyle("yellow", (40, 210, 235), (20, 20, 20)),
        DieStyle("orange", (20, 120, 240), (20, 20, 20)),
        DieStyle("purple", (140, 40, 110), (240, 240, 240)),
    )
}


TRANSLUCENT_STYLES: dict[str, DieStyle] = {
    "smoke-red": DieStyle("black", (48, 40, 44), (45, 45, 200), 0.55),
    "smoke-white": DieStyle("black", (55, 50, 50), (225, 225, 225), 0.45),
    "blue-red": DieStyle("blue", (160, 95, 35), (50, 50, 205), 0.45),
    "green-yellow": DieStyle("green", (95, 135, 45), (45, 215, 230), 0.4),
    "red-yellow": DieStyle("red", (45, 35, 175), (60, 205, 225), 0.4),
    "purple-white": DieStyle("purple", (120, 45, 95), (235, 235, 235), 0.45),
}
"""Translucent resin dice (``DieStyle.see_through``), keyed by look; not in the default
palette (pass them as ``random_scene(styles=...)``)."""


@dataclass(frozen=True)
class DieSpec:
    """One die in the world.

    ``value`` is the face turned up before any tilt; ``xy_mm`` the centre's ground position;
    ``yaw_deg`` turns it about the vertical; ``tilt_deg`` leans it towards ``tilt_dir_deg``
    (measured in the image plane from +x towards +y); ``lift_mm`` raises its lowest point (on
    top of another die). ``spin`` is an extra world-frame rotation vector in radians (tumbling
    dice). ``on_die`` names the die it rests on or leans against: the STACKED ground truth.
    """

    value: int
    xy_mm: tuple[float, float]
    yaw_deg: float = 0.0
    tilt_deg: float = 0.0
    tilt_dir_deg: float = 0.0
    lift_mm: float = 0.0
    size_mm: float = 16.0
    style: DieStyle = STYLES["white"]
    on_die: int | None = None
    spin: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        if self.value not in range(1, 7):
            raise ValueError(f"a die shows 1-6, not {self.value!r}")
        if not self.size_mm > 0:
            raise ValueError("size_mm must be positive")


@dataclass(frozen=True)
class PadStyle:
    """The pad (felt, mat or tray floor), its rail, and the table around it (sizes in mm)."""

    size_mm: tuple[float, float] = (280.0, 200.0)
    centre_mm: tuple[float, float] = (0.0, 0.0)
    angle_deg: float = 0.0
    colour: BGR = (40, 110, 30)
    texture: float = 1.0  # felt grain strength (0 = flat colour)
    rail_mm: float = 10.0
    rail_colour: BGR = (30, 50, 90)
    table_colour: BGR = (60, 90, 130)
    seed: int = 0  # texture seed: the same pad looks the same in every frame


@dataclass(frozen=True)
class Camera:
    """A pinhole looking straight down; focal length as a fraction of the frame width."""

    height_mm: float = 330.0
    focal_frac: float = 1.0

    def focal_px(self, width: int) -> float:
        return self.focal_frac * width


@dataclass(frozen=True)
class Lighting:
    """One directional light plus ambient; gain, colour cast and a linear brightness gradient."""

    azimuth_deg: float = 30.0
    elevation_deg: float = 70.0
    ambient: float = 0.45
    gain: float = 1.0
    cast: tuple[float, float, float] = (1.0, 1.0, 1.0)  # BGR multipliers
    gradient: float = 0.0  # brightness change corner to corner, fraction
    gradient_dir_deg: float = 0.0
    shadow: float = 0.45  # darkening under a die's shadow, 0..1
    glare: float = 0.0  # strength of a specular spot on each die's top, 0..1


@dataclass(frozen=True)
class Degrade:
    """Camera faults applied after rendering, in this order: motion blur, blur, noise, JPEG."""

    blur_sigma: float = 0.0
    motion_px: float = 0.0
    motion_dir_deg: float = 0.0
    noise_sigma: float = 0.0
    jpeg_quality: int | None = None
    exposure: float = 1.0  # a final global gain (slow lighting drift in sequences)


@dataclass(frozen=True)
class Hand:
    """A hand seen from above: palm centre in px, the arm running off towards ``arm_deg``."""

    xy_px: tuple[float, float]
    arm_deg: float
    size_px: float = 120.0
    colour: BGR = (120, 150, 205)


@dataclass(frozen=True)
class Scene:
    dice: tuple[DieSpec, ...] = ()
    pad: PadStyle = PadStyle()
    camera: Camera = Camera()
    lighting: Lighting = Lighting()
    degrade: Degrade = Degrade()
    hands: tuple[Hand, ...] = ()


@dataclass(frozen=True)
class DieTruth:
    """What a perfect reader would report for one die.

    ``value`` is the face most up; ``center_xy``/``corners_xy`` the projected top face (corners
    in cyclic order); ``size_px`` its mean side; ``tilt_deg`` the top face's angle to the pad;
    ``on_pad`` whether the top-face centre is inside the pad polygon; ``stacked`` whether it
    rests on or leans against another die; ``visible`` the unoccluded fraction of its top face.
    """

    value: int
    center_xy: Point
    corners_xy: tuple[Point, ...]
    size_px: float
    tilt_deg: float
    on_pad: bool
    stacked: bool
    colour: str
    visible: float

    @property
    def cocked(self) -> bool:
        """Not flat: the house-rule threshold used by the benchmarks (10 degrees)."""
        return self.tilt_deg >= 10.0


@dataclass(frozen=True)
class SceneTruth:
    dice: tuple[DieTruth, ...]
    pad: Pad
    hand_visible: bool  # a hand or its shadow is in the frame
    frame_size: tuple[int, int]


@dataclass(frozen=True)
class SceneImage:
    image: Image
    truth: SceneTruth


# --------------------------------------------------------------------------- geometry

# Die-local faces: value, outward normal, and two in-face axes. 1|6, 2|5, 3|4 are opposite.
_FACES: tuple[tuple[int, tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]], ...] = (
    (1, (0, 0, 1), (1, 0, 0), (0, 1, 0)),
    (6, (0, 0, -1), (1, 0, 0), (0, -1, 0)),
    (2, (1, 0, 0), (0, 1, 0), (0, 0, 1)),
    (5, (-1, 0, 0), (0, -1, 0), (0, 0, 1)),
    (3, (0, 1, 0), (-1, 0, 0), (0, 0, 1)),
    (4, (0, -1, 0), (1, 0, 0), (0, 0, 1)),
)
_NORMAL = {v: np.array(n, float) for v, n, _, _ in _FACES}

_D = 0.52  # pip offset from the face centre, in half-sides
_PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0, 0),),
    2: ((-_D, -_D), (_D, _D)),
    3: ((-_D, -_D), (0, 0), (_D, _D)),
    4: ((-_D, -_D), (_D, -_D), (-_D, _D), (_D, _D)),
    5: ((-_D, -_D), (_D, -_D), (0, 0), (-_D, _D), (_D, _D)),
    6: ((-_D, -_D), (-_D, 0), (-_D, _D), (_D, -_D), (_D, 0), (_D, _D)),
}
_PIP_R = 0.19  # pip radius in half-sides
_CORNER_R = 0.22  # rounded-corner radius in half-sides


def _rounded_square(r: float, per_corner: int = 4) -> npt.NDArray[np.float64]:
    pts = []
    for k, (cx, cy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
        a0 = k * math.pi / 2
        for j in range(per_corner):
            a = a0 + (math.pi / 2) * j / (per_corner - 1)
            pts.append((cx * (1 - r) + r * math.cos(a), cy * (1 - r) + r * math.sin(a)))
    return np.array(pts)


_OUTLINE = _rounded_square(_CORNER_R)
_CIRCLE = np.array([(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 12, False)])
_SQUARE = np.array([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
_CUBE = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)


def _rot(axis: Sequence[float] | Vec, angle: float) -> Vec:
    """Rotation matrix about ``axis`` by ``angle`` radians (Rodrigues)."""
    a = np.asarray(axis, float)
    n = float(np.linalg.norm(a))
    if n < 1e-12 or angle == 0.0:
        return np.eye(3)
    x, y, z = a / n
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    out: Vec = np.eye(3) + s * k + (1 - c) * (k @ k)
    return out


def _align_to_up(n: Vec) -> Vec:
    """A rotation taking the unit vector ``n`` to +z."""
    up = np.array([0.0, 0.0, 1.0])
    d = float(np.dot(n, up))
    if d > 1 - 1e-9:
        return np.eye(3)
    if d < -1 + 1e-9:
        return _rot((1, 0, 0), math.pi)
    return _rot(np.cross(n, up), math.acos(d))


def orientation(spec: DieSpec) -> Vec:
    """World-from-die rotation of ``spec``: value up, then yaw, then tilt, then spin."""
    r = _align_to_up(_NORMAL[spec.value])
    r = _rot((0, 0, 1), math.radians(spec.yaw_deg)) @ r
    if spec.tilt_deg:
        d = math.radians(spec.tilt_dir_deg)
        r = _rot((-math.sin(d), math.cos(d), 0), math.radians(spec.tilt_deg)) @ r
    spin = np.asarray(spec.spin, float)
    angle = float(np.linalg.norm(spin))
    if angle > 0:
        r = _rot(spin, angle) @ r
    return r


@dataclass(frozen=True)
class _Pose:
    rot: Vec
    centre: Vec  # world mm
    half: float


def _pose(spec: DieSpec) -> _Pose:
    rot = orientation(spec)
    half = spec.size_mm / 2
    lowest = float(np.min((_CUBE * half) @ rot.T, axis=0)[2])
    return _Pose(rot, np.array([spec.xy_mm[0], spec.xy_mm[1], spec.lift_mm - lowest]), half)


class _Projector:
    def __init__(self, camera: Camera, size: tuple[int, int]) -> None:
        self.w, self.h = size
        self.f = camera.focal_px(self.w)
        self.height = camera.height_mm
        self.cx, self.cy = self.w / 2, self.h / 2

    def __call__(self, pts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        depth = np.maximum(self.height - pts[..., 2], 1.0)
        u = self.cx + self.f * pts[..., 0] / depth
        v = self.cy + self.f * pts[..., 1] / depth
        return np.stack([u, v], axis=-1)

    def ground_from_px(self, u: float, v: float) -> tuple[float, float]:
        return ((u - self.cx) * self.height / self.f, (v - self.cy) * self.height / self.f)

    def view_mm(self) -> tuple[float, float]:
        return (self.w * self.height / self.f, self.h * self.height / self.f)


def _pad_corners_mm(pad: PadStyle, grow: float = 0.0) -> npt.NDArray[np.float64]:
    w, h = pad.size_mm[0] / 2 + grow, pad.size_mm[1] / 2 + grow
    a = math.radians(pad.angle_deg)
    c, s = math.cos(a), math.sin(a)
    pts = np.array([(-w, -h), (w, -h), (w, h), (-w, h)])
    rot = pts @ np.array([[c, s], [-s, c]])
    out: Vec = rot + np.array(pad.centre_mm)
    return out


def _pad_polygon_px(pad: PadStyle, proj: _Projector, grow: float = 0.0) -> npt.NDArray[np.float64]:
    mm = _pad_corners_mm(pad, grow)
    return proj(np.column_stack([mm, np.zeros(4)]))


# --------------------------------------------------------------------------- background


def _noise(rng: np.random.Generator, h: int, w: int, cell: float) -> npt.NDArray[np.float32]:
    """Smooth noise of roughly unit spread with features about ``cell`` px across."""
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    small = rng.standard_normal((gh, gw)).astype(np.float32)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC), np.float32)


def _lighting_map(lighting: Lighting, size: tuple[int, int]) -> npt.NDArray[np.float32]:
    """Per-pixel BGR gain: overall gain, colour cast and the linear gradient."""
    w, h = size
    d = math.radians(lighting.gradient_dir_deg)
    xs = (np.arange(w, dtype=np.float32) / max(w - 1, 1) - 0.5) * math.cos(d)
    ys = (np.arange(h, dtype=np.float32) / max(h - 1, 1) - 0.5) * math.sin(d)
    ramp = 1.0 + lighting.gradient * (ys[:, None] + xs[None, :])
    cast = np.array(lighting.cast, np.float32) * lighting.gain
    return (ramp[:, :, None] * cast[None, None, :]).astype(np.float32)


@functools.lru_cache(maxsize=16)
def _background(
    pad: PadStyle, camera: Camera, lighting: Lighting, size: tuple[int, int]
) -> tuple[Image, npt.NDArray[np.float32]]:
    """The lit, empty pad (cached: the same pad is drawn in every frame of a sequence)."""
    w, h = size
    proj = _Projector(camera, size)
    rng = np.random.default_rng(pad.seed)
    scale = w / 640
    grain = _noise(rng, h, w, 60 * scale) * 0.5 + _noise(rng, h, w, 3 * scale)
    rows = np.arange(h, dtype=np.float32)[:, None] / (7 * scale)
    wood = np.sin(rows + 3 * _noise(rng, h, w, 90))
    rail_mask = np.zeros((h, w), np.uint8)
    rail = np.round(_pad_polygon_px(pad, proj, pad.rail_mm) * 16).astype(np.int32)
    cv2.fillPoly(rail_mask, [rail], 1, cv2.LINE_8, 4)
    pad_mask = np.zeros((h, w), np.uint8)
    inner = np.round(_pad_polygon_px(pad, proj) * 16).astype(np.int32)
    cv2.fillPoly(pad_mask, [inner], 1, cv2.LINE_8, 4)
    around = np.where(rail_mask > 0, 0.0, 10 * wood) + 4 * grain
    outside = (
        np.where(
            (rail_mask > 0)[:, :, None],
            np.array(pad.rail_colour, np.float32),
            np.array(pad.table_colour, np.float32),
        )
        + around[:, :, None]
    )
    felt = np.array(pad.colour, np.float32) * (1 + 0.06 * pad.texture * grain)[:, :, None]
    img = np.where((pad_mask > 0)[:, :, None], felt, outside)
    gain = _lighting_map(lighting, size)
    out = np.clip(img * gain, 0, 255).astype(np.uint8)
    out.flags.writeable = False
    gain.flags.writeable = False
    return out, gain


# --------------------------------------------------------------------------- rendering


def _light_vec(lighting: Lighting) -> Vec:
    az, el = math.radians(lighting.azimuth_deg), math.radians(lighting.elevation_deg)
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def _fix(pts: npt.NDArray[np.float64]) -> npt.NDArray[np.int32]:
    return np.round(pts * 16).astype(np.int32)


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
    resin's refraction pulls them."""
    pose = d.pose
    cam = np.array([0.0, 0.0, proj.height])
    out = []
    for value, n, u, v in _FACES:
        n_ = pose.rot @ np.array(n, float)
        fc = pose.centre + n_ * pose.half
        if (float(np.dot(n_, cam - fc)) > 0) != facing:
            continue
        u_, v_ = pose.rot @ np.array(u, float), pose.rot @ np.array(v, float)
        outline = _fix(proj(fc + pose.half * (_OUTLINE[:, :1] * u_ + _OUTLINE[:, 1:] * v_)))
        pips = []
        for a, b in _PIPS[value]:
            ring = (a + _PIP_R * _CIRCLE[:, :1]) * u_ + (b + _PIP_R * _CIRCLE[:, 1:]) * v_
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


def _hand_polys(hand: Hand, w: int, h: int) -> tuple[list[npt.NDArray[np.int32]], float]:
    """Arm, palm and four fingers as polygons (px); also the palm radius."""
    x, y = hand.xy_px
    s = hand.size_px
    a = math.radians(hand.arm_deg)
    ax, ay = math.cos(a), math.sin(a)
    px_, py_ = -ay, ax  # across the hand
    far = 2 * (w + h)
    arm_w = 0.32 * s
    arm = np.array(
        [
            (x + px_ * arm_w, y + py_ * arm_w),
            (x + ax * far + px_ * arm_w, y + ay * far + py_ * arm_w),
            (x + ax * far - px_ * arm_w, y + ay * far - py_ * arm_w),
            (x - px_ * arm_w, y - py_ * arm_w),
        ]
    )
    polys = [_fix(arm)]
    ang = math.degrees(a)
    palm = cv2.ellipse2Poly(
        (int(x * 16), int(y * 16)), (int(0.42 * s * 16), int(0.36 * s * 16)), int(ang), 0, 360, 15
    )
    polys.append(np.asarray(palm, np.int32))
    for k, off in enumerate((-0.27, -0.09, 0.09, 0.27)):
        length = s * (0.42 if k in (1, 2) else 0.36)
        fx = x - ax * (0.36 * s + length / 2) + px_ * off * s
        fy = y - ay * (0.36 * s + length / 2) + py_ * off * s
        finger = cv2.ellipse2Poly(
            (int(fx * 16), int(fy * 16)),
            (int(length / 2 * 16), int(0.075 * s * 16)),
            int(ang),
            0,
            360,
            20,
        )
        polys.append(np.asarray(finger, np.int32))
    return polys, 0.42 * s


_HAND_SHADOW_SIGMA = 6.0  # blur of a hand's shadow, px at 640 wide


def _hand_shadow_shift(hand: Hand) -> npt.NDArray[np.int32]:
    """Offset of a hand's shadow (1/16 px, as the polygons), cast by a light above and behind."""
    k = hand.size_px / 120 * 16
    return np.array([[int(14 * k), int(10 * k)]], np.int32)


def _hand_in_frame(hand: Hand, w: int, h: int) -> bool:
    """Whether ``hand`` or its soft shadow touches a ``w`` x ``h`` frame (at 1/8 scale; the
    frame is grown by the shadow's blur, which darkens pixels that far inside)."""
    polys, _ = _hand_polys(hand, w, h)
    shift = _hand_shadow_shift(hand)
    margin = int(3 * _HAND_SHADOW_SIGMA * w / 640) + 2
    mask = np.zeros(((h + 2 * margin) // 8 + 1, (w + 2 * margin) // 8 + 1), np.uint8)
    off = np.array([[margin * 16, margin * 16]], np.int32)
    for p in [*polys, *(p + shift for p in polys)]:  # one call each: overlaps would cancel
        cv2.fillPoly(mask, [(p + off) // 8], 1, cv2.LINE_8, 4)
    return bool(mask.any())


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


@functools.lru_cache(maxsize=8)
def _noise_bank(sigma: float, size: tuple[int, int]) -> npt.NDArray[np.int16]:
    """A large block of Gaussian noise; frames take random windows of it (cheap, independent)."""
    w, h = size
    bank = np.random.default_rng(12345).normal(0, sigma, (h + 64, w + 64, 3))
    out = np.round(bank).astype(np.int16)
    out.flags.writeable = False
    return out


def _degrade(img: Image, deg: Degrade, rng: np.random.Generator) -> Image:
    if deg.motion_px >= 1:
        n = round(deg.motion_px) | 1
        k = np.zeros((n, n), np.float32)
        a = math.radians(deg.motion_dir_deg)
        c = n // 2
        cv2.line(
            k,
            (round(c - math.cos(a) * c), round(c - math.sin(a) * c)),
            (round(c + math.cos(a) * c), round(c + math.sin(a) * c)),
            1.0,
            1,
        )
        img = np.asarray(cv2.filter2D(img, -1, k / k.sum()), np.uint8)
    if deg.blur_sigma > 0:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), deg.blur_sigma), np.uint8)
    if deg.exposure != 1.0:
        img = np.asarray(cv2.convertScaleAbs(img, alpha=deg.exposure), np.uint8)
    if deg.noise_sigma > 0:
        h, w = img.shape[:2]
        bank = _noise_bank(round(deg.noise_sigma, 2), (w, h))
        oy, ox = int(rng.integers(0, 64)), int(rng.integers(0, 64))
        img = np.asarray(cv2.add(img, bank[oy : oy + h, ox : ox + w], dtype=cv2.CV_8U), np.uint8)
    if deg.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(deg.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        if decoded is None:
            raise RuntimeError("JPEG decoding failed")
        img = np.asarray(decoded, np.uint8)
    return img


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


# --------------------------------------------------------------------------- random scenes

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


# --------------------------------------------------------------------------- throws


@dataclass(frozen=True)
class FrameTruth:
    """Per-frame truth of a throw: is anything moving, and when did everything come to rest.

    ``rest_index`` is the first frame from which no die moves and no hand is in view (the
    settle detector must fire once, soon after it); ``phase`` is one of ``before``, ``throw``,
    ``rest``, ``keep`` (a hand takes the kept dice away) and ``after``.
    """

    index: int
    moving: bool
    hand_visible: bool
    phase: str
    rest_index: int
    scene: SceneTruth


@dataclass(frozen=True)
class Frame:
    image: Image
    truth: FrameTruth


@dataclass(frozen=True)
class Tumble:
    """One thrown die's flight: from ``start_xy`` (mm) at ``start_frame`` it tumbles and hops
    for ``frames`` frames, then lies as ``final``. Public so scripted cameras can change where
    and how a die lands (``replace(tumble, final=...)``) without re-planning the throw."""

    final: DieSpec
    start_xy: tuple[float, float]
    start_frame: int
    frames: int
    axis: tuple[float, float, float]
    turns: float  # radians of spin left at release
    bounce_mm: float

    def at(self, i: int) -> tuple[DieSpec, bool]:
        k = i - self.start_frame
        if k >= self.frames:
            return self.final, False
        left = 1.0 - k / self.frames  # constant speed, then a crisp stop
        x = self.final.xy_mm[0] + (self.start_xy[0] - self.final.xy_mm[0]) * left
        y = self.final.xy_mm[1] + (self.start_xy[1] - self.final.xy_mm[1]) * left
        hop = self.bounce_mm * abs(math.sin(math.pi * 3 * (1 - left))) * left
        spin = tuple(a * self.turns * left for a in self.axis)
        return replace(
            self.final, xy_mm=(x, y), lift_mm=hop, spin=(spin[0], spin[1], spin[2])
        ), True


@dataclass(frozen=True)
class _HandPath:
    """A hand entering at ``points[0]`` (px, off-frame), visiting waypoints, leaving that way."""

    start_frame: int
    points: tuple[tuple[float, float], ...]  # entry, waypoints..., entry
    speed: float  # px per frame
    size_px: float
    colour: BGR

    def _legs(self) -> list[float]:
        return [math.dist(a, b) for a, b in zip(self.points, self.points[1:], strict=False)]

    @property
    def frames(self) -> int:
        return math.ceil(sum(self._legs()) / self.speed) + 1

    def arrival(self, waypoint: int) -> int:
        """Frame index at which the hand reaches ``points[waypoint]``."""
        return self.start_frame + math.ceil(sum(self._legs()[:waypoint]) / self.speed)

    def at(self, i: int) -> Hand | None:
        k = i - self.start_frame
        if k < 0 or k >= self.frames:
            return None
        d = k * self.speed
        for a, b in zip(self.points, self.points[1:], strict=False):
            leg = math.dist(a, b)
            if d <= leg:
                t = d / leg if leg else 0.0
                xy = (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
                break
            d -= leg
        else:
            xy = self.points[-1]
        entry = self.points[0]
        vx, vy = entry[0] - xy[0], entry[1] - xy[1]
        if math.hypot(vx, vy) < self.size_px and len(self.points) > 1:
            # at the entry point itself the arm still runs out of the frame, not across it
            vx, vy = entry[0] - self.points[1][0], entry[1] - self.points[1][1]
        arm = math.degrees(math.atan2(vy, vx))
        return Hand(xy, arm, self.size_px, self.colour)


@dataclass(frozen=True)
class ThrowSequence:
    """A planned throw; iterate it to render the frames (each with :class:`FrameTruth`)."""

    base: Scene
    size: tuple[int, int]
    fps: float
    before: tuple[DieSpec, ...]
    tumbles: tuple[Tumble, ...]
    throw_hand: _HandPath
    pickups: tuple[int, ...]  # frame at which each ``before`` die is picked up
    keep_hand: _HandPath | None
    kept: tuple[int, ...]  # indexes into the thrown dice taken away after the rest
    takes: tuple[int, ...]  # frame at which each kept die disappears
    rest_index: int
    keep_start: int
    n_frames: int
    drift: float  # exposure change per frame (slow lighting drift)
    seed: int = 0

    @property
    def remaining(self) -> tuple[DieSpec, ...]:
        """The dice left on the pad at the end: the ``before=`` of the next throw."""
        return tuple(t.final for i, t in enumerate(self.tumbles) if i not in self.kept)

    def scene_at(self, i: int) -> tuple[Scene, bool]:
        """The scene of frame ``i`` and whether any die is moving in it."""
        dice: list[DieSpec] = [d for d, t in zip(self.before, self.pickups, strict=True) if i < t]
        moving = False
        if i >= self.throw_hand.arrival(len(self.before) + 1):
            for k, tumble in enumerate(self.tumbles):
                if k in self.kept and i >= self.takes[self.kept.index(k)]:
                    continue
                spec, m = tumble.at(i)
                moving = moving or m
                dice.append(spec)
        dice = _renumber(dice)
        hands = tuple(
            h
            for h in (self.throw_hand.at(i), self.keep_hand.at(i) if self.keep_hand else None)
            if h
        )
        exposure = self.base.degrade.exposure * (1.0 + self.drift * i)
        scene = replace(
            self.base,
            dice=tuple(dice),
            hands=hands,
            degrade=replace(self.base.degrade, exposure=exposure),
        )
        return scene, moving

    def frame(self, i: int) -> Frame:
        scene, moving = self.scene_at(i)
        shot = render(scene, size=self.size, rng=np.random.default_rng((self.seed, i)))
        if i < self.throw_hand.start_frame:
            phase = "before"
        elif i < self.rest_index:
            phase = "throw"
        elif i < self.keep_start:
            phase = "rest"
        elif self.keep_hand is not None and i < self.keep_hand.start_frame + self.keep_hand.frames:
            phase = "keep"
        else:
            phase = "after"
        hand = shot.truth.hand_visible
        return Frame(
            shot.image, FrameTruth(i, moving or hand, hand, phase, self.rest_index, shot.truth)
        )

    def __len__(self) -> int:
        return self.n_frames

    def __iter__(self) -> Iterator[Frame]:
        for i in range(self.n_frames):
            yield self.frame(i)


def _renumber(dice: list[DieSpec]) -> list[DieSpec]:
    """Thrown dice land flat and apart, so no die rests on another within a sequence."""
    return [replace(d, on_die=None) if d.on_die is not None else d for d in dice]


def _edge_point(
    rng: np.random.Generator, size: tuple[int, int], hand: float
) -> tuple[float, float]:
    w, h = size
    side = int(rng.integers(4))
    t = float(rng.uniform(0.2, 0.8))
    out = hand * 1.6
    return [(t * w, h + out), (t * w, -out), (-out, t * h), (w + out, t * h)][side]


def throw_sequence(
    rng: np.random.Generator,
    *,
    base: Scene | None = None,
    n_dice: int | None = None,
    before: Sequence[DieSpec] = (),
    size: tuple[int, int] = (640, 480),
    fps: float = 30.0,
    keep: int | None = None,
    hold_s: float = 1.0,
    tail_s: float = 0.8,
    drift: float = 0.0,
) -> ThrowSequence:
    """Plan one throw: a hand comes in, picks up ``before`` (the dice left on the pad), throws
    ``n_dice`` (default: as many as it picked up, or 5), the dice tumble and stop, everything is
    still for ``hold_s``, then a hand takes ``keep`` of them away (random when None) and the pad is
    still for ``tail_s``. ``drift`` is the exposure change per frame (slow lighting drift).
    """
    if fps <= 0:
        raise ValueError("fps must be positive")
    scene = base if base is not None else random_scene(rng, n_dice=0, size=size)
    scene = replace(scene, dice=())
    proj = _Projector(scene.camera, size)
    w, h = size
    n = n_dice if n_dice is not None else (len(before) or 5)
    if n < 1:
        raise ValueError("a throw needs at least one die")
    scale = w / 640
    hand_px = float(rng.uniform(150, 190)) * scale
    skin = tuple(int(c) for c in rng.uniform([90, 120, 170], [150, 175, 230]))
    colour: BGR = (skin[0], skin[1], skin[2])
    speed = float(rng.uniform(900, 1400)) * scale / fps

    # Where the dice will land: flat, apart, on the pad.
    palette = list(STYLES.values())
    style = before[0].style if before else palette[int(rng.integers(len(palette)))]
    finals: list[DieSpec] = []
    pad = scene.pad
    size_mm = before[0].size_mm if before else float(rng.uniform(14, 19))
    for _ in range(n):
        for _try in range(300):
            xy = (
                pad.centre_mm[0] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[0],
                pad.centre_mm[1] + float(rng.uniform(-0.5, 0.5)) * pad.size_mm[1],
            )
            if _inside_pad(pad, xy, size_mm) and all(
                math.dist(xy, f.xy_mm) >= 1.7 * size_mm for f in finals
            ):
                finals.append(
                    DieSpec(
                        int(rng.integers(1, 7)),
                        xy,
                        float(rng.uniform(0, 90)),
                        0.0,
                        0.0,
                        0.0,
                        size_mm,
                        style,
                    )
                )
                break

    entry = _edge_point(rng, size, hand_px)
    pick_px = [tuple(proj(np.array([d.xy_mm[0], d.xy_mm[1], 0.0]))) for d in before]
    release_px = (float(rng.uniform(0.3, 0.7)) * w, float(rng.uniform(0.3, 0.7)) * h)
    start = int(rng.integers(4, 9))
    throw_hand = _HandPath(
        start,
        (entry, *((float(p[0]), float(p[1])) for p in pick_px), release_px, entry),
        speed,
        hand_px,
        colour,
    )
    pickups = tuple(throw_hand.arrival(k + 1) for k in range(len(before)))
    release = throw_hand.arrival(len(before) + 1)
    rx, ry = proj.ground_from_px(*release_px)
    tumbles = []
    for f in finals:
        frames = round(fps * float(rng.uniform(0.5, 1.2)))
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        tumbles.append(
            Tumble(
                f,
                (rx + float(rng.normal(0, 8)), ry + float(rng.normal(0, 8))),
                release,
                max(frames, 3),
                (float(axis[0]), float(axis[1]), float(axis[2])),
                float(rng.uniform(8, 20)),
                float(rng.uniform(5, 25)),
            )
        )
    stopped = max(t.start_frame + t.frames for t in tumbles)
    rest = next(
        i
        for i in range(max(stopped, release), max(stopped, release) + throw_hand.frames + 2)
        if (hand := throw_hand.at(i)) is None or not _hand_in_frame(hand, w, h)
    )
    keep_start = rest + max(1, round(hold_s * fps))
    k = int(rng.integers(0, len(tumbles))) if keep is None else keep
    if not 0 <= k <= len(tumbles):
        raise ValueError(f"keep must be within 0..{len(tumbles)}")
    kept = tuple(sorted(int(x) for x in rng.choice(len(tumbles), size=k, replace=False)))
    keep_hand = None
    takes: tuple[int, ...] = ()
    end = keep_start
    if kept:
        entry2 = _edge_point(rng, size, hand_px)
        pts = [
            tuple(float(c) for c in proj(np.array([*tumbles[i].final.xy_mm, 0.0]))) for i in kept
        ]
        keep_hand = _HandPath(
            keep_start, (entry2, *((p[0], p[1]) for p in pts), entry2), speed, hand_px, colour
        )
        takes = tuple(keep_hand.arrival(j + 1) for j in range(len(kept)))
        end = keep_start + keep_hand.frames
    n_frames = end + max(1, round(tail_s * fps))
    return ThrowSequence(
        base=scene,
        size=size,
        fps=fps,
        before=tuple(before),
        tumbles=tuple(tumbles),
        throw_hand=throw_hand,
        pickups=pickups,
        keep_hand=keep_hand,
        kept=kept,
        takes=takes,
        rest_index=rest,
        keep_start=keep_start,
        n_frames=n_frames,
        drift=drift,
        seed=int(rng.integers(1 << 31)),
    )
