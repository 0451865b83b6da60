"""The renderer's vocabulary: frozen value types for a scene (dice, pad, camera, light, camera
faults, hands), the die palettes, and the ground truth a render returns.

Kept free of drawing and randomness so every other part of :mod:`vision.synth`, and its
callers, can share the types without pulling in the renderer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vision.reading import Pad, Point
from vision.synth.logos import LOGOS

Image = npt.NDArray[np.uint8]
Vec = npt.NDArray[np.float64]
BGR = tuple[int, int, int]


@dataclass(frozen=True)
class DieStyle:
    """Body and pip colours (BGR) and the plain colour name a reader should report.

    ``see_through`` (0-1) makes the body translucent resin: the pips of the faces turned away
    from the camera show through it, blurred and dimmed, beside the top face's crisp ones --
    what real smoky or swirl dice do, and what a reader must not count.

    ``logo`` names one of :data:`~vision.synth.logos.LOGOS` to print on the 1 face instead of
    its pip, in the pips' colour: branded bar dice whose ace is a picture (the Bar Dice rules:
    aces are "1, or on our dice, the Layman logo"). The face still reads 1; the other faces
    keep their pips. None (the default, and every random scene's) is a plain die."""

    name: str
    body: BGR
    pips: BGR
    see_through: float = 0.0
    logo: str | None = None

    def __post_init__(self) -> None:
        if self.logo is not None and self.logo not in LOGOS:
            raise ValueError(f"unknown logo {self.logo!r}; known: {', '.join(LOGOS)}")


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
    markers_mm: float = 0.0
    """Side of the four ArUco corner markers printed on the table just outside the pad's
    corners (:mod:`vision.markers`, each on its white card; 0 = none)."""

    def __post_init__(self) -> None:
        if self.markers_mm < 0:
            raise ValueError("markers_mm must be 0 (no markers) or positive")


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
