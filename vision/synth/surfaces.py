"""What dice land on: felt, wood, stone, plain tables and counters, leather, printed mats and
boards, many of them with round dots printed on them (the dots a reader must not take for
pips), drawn as seamless texture tiles and laid on the table plane by one perspective warp.

A :class:`Surface` is a description; :func:`tile` draws it (cached per surface), and
:func:`lay` pictures it through a view's ground homography. The table is endless (the tile
wraps); a mat or board is a rectangle of its own surface on it (:class:`Mat`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.model import BGR, Image

SURFACES = ("felt", "wood", "stone", "plain", "leather", "printed", "dotted", "board")
TILE = 512  # texels a side; a tile wraps seamlessly


@dataclass(frozen=True)
class Surface:
    """A material: ``kind`` (one of :data:`SURFACES`), its main and second colour, the size
    of a texel (a tile is ``TILE`` texels a side), the size of its printed dots (mm; 0 for
    none), its shine (the lamps' glare on it) and the seed of its pattern."""

    kind: str
    colour: BGR
    colour2: BGR = (0, 0, 0)
    texel_mm: float = 0.6
    dot_mm: float = 0.0
    gloss: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in SURFACES:
            raise ValueError(f"unknown surface {self.kind!r}")
        if not self.texel_mm > 0:
            raise ValueError("texel_mm must be positive")


@dataclass(frozen=True)
class Mat:
    """A rectangle of ``surface`` on the table (a dice mat, tray floor or game board), with a
    border band (a stitched or printed edge, a tray rail) of ``border_mm`` in ``border``;
    ``wall_mm`` > 0 stands it in a tray with walls that high (:mod:`~vision.synth.tray`)."""

    surface: Surface
    size_mm: tuple[float, float]
    centre_mm: tuple[float, float] = (0.0, 0.0)
    angle_deg: float = 0.0
    border: BGR = (30, 30, 30)
    border_mm: float = 0.0
    wall_mm: float = 0.0

    def corners_mm(self, grow: float = 0.0) -> npt.NDArray[np.float64]:
        w, h = self.size_mm[0] / 2 + grow, self.size_mm[1] / 2 + grow
        a = math.radians(self.angle_deg)
        c, s = math.cos(a), math.sin(a)
        pts = np.array([(-w, -h), (w, -h), (w, h), (-w, h)])
        out: npt.NDArray[np.float64] = pts @ np.array([[c, s], [-s, c]]) + np.array(self.centre_mm)
        return out


def _periodic_noise(rng: np.random.Generator, cells: int) -> npt.NDArray[np.float32]:
    """Smooth noise of unit-ish spread that wraps with period ``TILE`` (``cells`` bumps)."""
    small = rng.standard_normal((cells, cells)).astype(np.float32)
    pad = 3
    big = np.pad(small, pad, mode="wrap")
    step = TILE / cells
    size = round((cells + 2 * pad) * step)
    up = cv2.resize(big, (size, size), interpolation=cv2.INTER_CUBIC)
    o = round(pad * step)
    return np.ascontiguousarray(up[o : o + TILE, o : o + TILE])


def _dots(
    img: Image,
    centres: npt.NDArray[np.float64],
    radius: float,
    colour: BGR,
    ring: bool = False,
) -> None:
    """Round dots (or rings) at ``centres`` (texels), drawn wrapped so the tile stays seamless."""
    shift = 4
    r = max(1, round(radius * (1 << shift)))
    thick = max(1, round(radius * 0.3)) if ring else -1
    reach = radius + 2
    for dx in (-TILE, 0, TILE):
        for dy in (-TILE, 0, TILE):
            at = centres + np.array([dx, dy])
            keep = np.all((at > -reach) & (at < TILE + reach), axis=1)
            for x, y in np.round(at[keep] * (1 << shift)).astype(int).tolist():
                cv2.circle(img, (x, y), r, colour, thick, cv2.LINE_AA, shift)


def _grid(rng: np.random.Generator, spacing: float) -> npt.NDArray[np.float64]:
    """Centres of a regular dot grid (square or hexagonal) that wraps with the tile."""
    n = 2 * max(1, round(TILE / spacing / 2))
    step = TILE / n
    hexa = rng.random() < 0.4
    i, j = np.meshgrid(np.arange(n), np.arange(n))
    x = i + (0.5 * (j % 2) if hexa else 0.0)
    return np.column_stack([x.ravel() * step, j.ravel() * step]) + rng.uniform(0, step, 2)


@functools.lru_cache(maxsize=64)
def _pattern(kind: str, variant: int) -> tuple[Image, Image]:
    """The colourless make of a surface (cached, a few variants a kind), as the gains of its
    main and second colour (x100)."""
    rng = np.random.default_rng(1000 * SURFACES.index(kind) + variant)
    fine = rng.standard_normal((TILE, TILE)).astype(np.float32)
    mottle = _periodic_noise(rng, 8)
    zero = np.zeros((TILE, TILE), np.float32)
    if kind == "felt":
        fuzz = cv2.GaussianBlur(fine, (0, 0), 0.8) * 1.6
        mix, shade = zero, 1 + 0.07 * fuzz + 0.05 * mottle
    elif kind == "wood":
        planks = int(rng.choice([2, 3, 4, 6]))
        ys = np.arange(TILE, dtype=np.float32)[:, None] * np.ones((1, TILE), np.float32)
        plank = (ys * planks / TILE).astype(np.int32)
        tone = rng.uniform(0.8, 1.15, planks).astype(np.float32)[plank]
        rings = np.sin(ys * rng.uniform(0.3, 0.9) + 6 * _periodic_noise(rng, 4) + plank * 2.1)
        streak = cv2.GaussianBlur(fine, (0, 0), sigmaX=12, sigmaY=0.7) * 3
        mix = np.clip(0.5 + 0.35 * rings + 0.25 * streak, 0, 1)
        shade = tone * np.where((ys % (TILE / planks)) < 1.2, 0.55, 1.0)
    elif kind == "stone":
        speck = cv2.GaussianBlur(fine, (0, 0), 0.7)
        veins = np.abs(np.sin(np.arange(TILE)[None, :] * 0.02 + 5 * _periodic_noise(rng, 5)))
        mix = (veins < rng.uniform(0.03, 0.12)).astype(np.float32) * float(rng.uniform(0.2, 0.6))
        dark = (speck > rng.uniform(1.2, 2.2)).astype(np.float32)
        shade = (1 + 0.08 * mottle + 0.05 * speck) * (1 - 0.5 * dark)
    elif kind == "leather":
        creases = cv2.GaussianBlur(fine, (0, 0), 2.0) * 6
        mix, shade = zero, 1 + 0.12 * mottle + 0.05 * creases
    else:  # plain, printed, dotted, board: flat printed or laminated colour
        mix, shade = zero, 1 + 0.025 * mottle + 0.015 * fine
    out = []
    for gain in (shade * (1 - mix), shade * mix):
        g = np.clip(gain * 100, 0, 255).astype(np.uint8)
        out.append(g)  # one channel: the cache holds 48 makes in 25 MB
        out[-1].flags.writeable = False
    return out[0], out[1]


@functools.lru_cache(maxsize=16)
def tile(surface: Surface) -> Image:
    """The ``TILE`` x ``TILE`` texture of ``surface`` (BGR, unlit)."""
    rng = np.random.default_rng(surface.seed)
    second = np.array(surface.colour2, np.float32)
    main_gain, second_gain = _pattern(surface.kind, surface.seed % 6)
    img = _colour(main_gain, surface.colour)
    if surface.kind in ("wood", "stone"):
        img = np.asarray(cv2.add(img, _colour(second_gain, surface.colour2)), np.uint8)
    k = surface.kind
    dot_px = surface.dot_mm / surface.texel_mm / 2
    if k == "printed":
        _print_motifs(img, rng, second, dot_px)
    elif k == "dotted" and dot_px > 0:
        spacing = max(dot_px * rng.uniform(2.6, 6.0), 12.0)
        _dots(img, _grid(rng, spacing), min(dot_px, spacing / 2.6), _bgr(second))
    elif k == "board":
        _board(img, rng, second, dot_px)
    out = np.asarray(img, np.uint8)
    out.flags.writeable = False
    return out


def _colour(gain: Image, colour: BGR) -> Image:
    """``gain`` (x100, one channel) times ``colour``."""
    grey = cv2.merge([gain, gain, gain])
    return np.asarray(cv2.multiply(grey, np.array([*colour, 0], np.float64), scale=0.01), np.uint8)


def _bgr(c: npt.NDArray[np.float32]) -> BGR:
    return (int(c[0]), int(c[1]), int(c[2]))


def _print_motifs(
    img: Image, rng: np.random.Generator, ink: npt.NDArray[np.float32], dot: float
) -> None:
    """A printed mat: bands, big rings, words and numbers, and scattered polka dots (alone or
    in small clusters, like pips) in one or two inks."""
    inks = [_bgr(ink), _bgr(np.clip(255 - ink * rng.uniform(0.3, 1.0), 0, 255))]
    for _ in range(int(rng.integers(0, 3))):  # bands across (wrap: full width)
        y = int(rng.integers(TILE))
        cv2.rectangle(img, (0, y), (TILE, y + int(rng.integers(4, 40))), inks[1], -1)
    rings = rng.uniform(0, TILE, (int(rng.integers(0, 4)), 2))
    for x, y in rings:
        _dots(img, np.array([[x, y]]), float(rng.uniform(20, 120)), inks[0], ring=True)
    for _ in range(int(rng.integers(0, 4))):  # a bar's name, a brand, a score
        word = str(rng.choice(["DICE", "BAR", "PUB", "ROLL", "7", "21", "LUCKY", "CLUB"]))
        scale = float(rng.uniform(0.8, 2.5))
        (tw, th), _ = cv2.getTextSize(word, cv2.FONT_HERSHEY_DUPLEX, scale, 2)
        at = (int(rng.integers(0, TILE - tw)), int(rng.integers(th + 2, TILE - 4)))  # no seam
        cv2.putText(img, word, at, cv2.FONT_HERSHEY_DUPLEX, scale, inks[1], 2, cv2.LINE_AA)
    if dot > 0:
        n = int(rng.integers(10, 120))
        centres = rng.uniform(0, TILE, (n, 2))
        if rng.random() < 0.4:  # clusters of 2-6 dots a pip's spacing apart
            seeds = centres[: max(2, n // 5)]
            k = rng.integers(2, 7, len(seeds))
            centres = np.concatenate(
                [s + rng.normal(0, 2.2 * dot, (int(m), 2)) for s, m in zip(seeds, k, strict=True)]
            )
        _dots(img, centres, dot, inks[int(rng.integers(2))])


def _board(img: Image, rng: np.random.Generator, ink: npt.NDArray[np.float32], dot: float) -> None:
    """A game board: a grid of squares (lines or a chequer) with round dots or holes in rows,
    at the crossings or in the cells (cribbage, backgammon, ludo, go boards)."""
    n = int(rng.choice([4, 8, 16]))
    step = TILE / n
    colour = _bgr(ink)
    if rng.random() < 0.5:
        for i in range(n):
            for j in range(n):
                if (i + j) % 2:
                    p0 = (round(i * step), round(j * step))
                    p1 = (round((i + 1) * step), round((j + 1) * step))
                    cv2.rectangle(img, p0, p1, colour, -1)
        colour = _bgr(np.clip(255 - ink, 0, 255))
    else:
        for i in range(n):
            p = round(i * step)
            cv2.line(img, (p, 0), (p, TILE), colour, 2, cv2.LINE_AA)
            cv2.line(img, (0, p), (TILE, p), colour, 2, cv2.LINE_AA)
    if dot > 0:
        holes = rng.random() < 0.5
        fill = (25, 25, 25) if holes else colour
        at = np.array([(i * step, j * step) for i in range(n) for j in range(n)])
        if rng.random() < 0.5:
            at = at + step / 2
        sub = int(rng.choice([1, 1, 2, 3]))
        if sub > 1:  # rows of holes inside each cell
            at = np.concatenate(
                [at + np.array([(k + 1) * step / (sub + 1) - step / 2, 0.0]) for k in range(sub)]
            )
        _dots(img, at, min(dot, step / (2.5 * sub)), fill)


def lay(
    surface: Surface,
    ground_to_px: npt.NDArray[np.float64],
    size: tuple[int, int],
    offset_mm: tuple[float, float] = (0.0, 0.0),
    angle_deg: float = 0.0,
) -> Image:
    """``surface`` pictured over the whole frame (the tile repeats over the table), the tile's
    origin at ``offset_mm`` turned ``angle_deg`` (a mat's pattern runs with the mat), and
    shifted by its seed (a few makes a kind serve many tables)."""
    s = surface.texel_mm
    shift = np.array(
        [[1.0, 0.0, surface.seed % TILE], [0.0, 1.0, surface.seed // TILE % TILE], [0, 0, 1.0]]
    )
    a = math.radians(angle_deg)
    c, si = math.cos(a), math.sin(a)
    texel_to_ground = np.array(
        [[c * s, -si * s, offset_mm[0]], [si * s, c * s, offset_mm[1]], [0.0, 0.0, 1.0]]
    )
    m = ground_to_px @ texel_to_ground @ shift
    return np.asarray(
        cv2.warpPerspective(
            tile(surface), m, size, flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_WRAP
        ),
        np.uint8,
    )


_FELTS: tuple[BGR, ...] = (
    (40, 110, 30),
    (35, 35, 150),
    (120, 60, 20),
    (40, 40, 40),
    (110, 40, 90),
    (120, 120, 120),
    (30, 80, 20),
    (90, 60, 30),
)
_WOODS: tuple[tuple[BGR, BGR], ...] = (  # dark grain, light wood
    ((40, 80, 130), (90, 150, 200)),
    ((25, 45, 75), (50, 85, 130)),
    ((60, 110, 160), (130, 190, 225)),
    ((30, 40, 55), (60, 75, 95)),
)
_STONES: tuple[tuple[BGR, BGR], ...] = (
    ((225, 225, 222), (120, 120, 125)),
    ((70, 70, 72), (200, 200, 200)),
    ((150, 170, 185), (60, 70, 80)),
    ((30, 30, 32), (170, 170, 170)),
)
_PLAINS: tuple[BGR, ...] = (
    (238, 238, 236),
    (215, 220, 225),
    (30, 30, 30),
    (170, 200, 215),
    (200, 200, 200),
    (120, 130, 140),
)


def _any_colour(rng: np.random.Generator) -> BGR:
    c = rng.integers(20, 236, 3)
    return (int(c[0]), int(c[1]), int(c[2]))


def random_surface(
    rng: np.random.Generator, die_mm: float, kind: str | None = None, *, mm_per_px: float = 0.6
) -> Surface:
    """A surface from the whole domain (or of one ``kind``); printed dots are sized like pips
    and like small dice (``die_mm``), the worst case for a reader. A texel is about a pixel
    where the camera looks (``mm_per_px``): the warp then neither blurs nor aliases much."""
    k = kind or str(rng.choice(SURFACES))
    if k not in SURFACES:
        raise ValueError(f"unknown surface {k!r}")
    seed = int(rng.integers(1 << 30))
    dot = float(die_mm * rng.choice([rng.uniform(0.12, 0.3), rng.uniform(0.3, 0.9)]))
    texel = float(rng.uniform(0.7, 1.5)) * mm_per_px
    gloss = float(rng.uniform(0.0, 0.25))
    if k == "felt":
        return Surface(
            k, _jit(rng, _FELTS[int(rng.integers(len(_FELTS)))]), texel_mm=texel, seed=seed
        )
    if k == "wood":
        dark, light = _WOODS[int(rng.integers(len(_WOODS)))]
        return Surface(
            k,
            _jit(rng, light),
            _jit(rng, dark),
            float(rng.uniform(0.8, 2.0)) * mm_per_px,
            gloss=float(rng.uniform(0.1, 0.6)),
            seed=seed,
        )
    if k == "stone":
        a, b = _STONES[int(rng.integers(len(_STONES)))]
        return Surface(k, _jit(rng, a), b, texel, gloss=float(rng.uniform(0.2, 0.8)), seed=seed)
    if k == "plain":
        c = _PLAINS[int(rng.integers(len(_PLAINS)))]
        return Surface(
            k, _jit(rng, c), texel_mm=texel, gloss=float(rng.uniform(0.1, 0.7)), seed=seed
        )
    if k == "leather":
        return Surface(
            k,
            _jit(rng, ((40, 70, 120), (25, 40, 70), (30, 30, 32))[int(rng.integers(3))]),
            texel_mm=texel,
            gloss=gloss,
            seed=seed,
        )
    base = _any_colour(rng) if rng.random() < 0.6 else _PLAINS[int(rng.integers(len(_PLAINS)))]
    ink = _any_colour(rng)
    if abs(sum(ink) - sum(base)) < 150:  # printed inks stand out from the ground
        ink = (20, 20, 25) if sum(base) > 380 else (235, 235, 230)
    return Surface(k, base, ink, texel, dot_mm=dot, gloss=gloss, seed=seed)


def _jit(rng: np.random.Generator, c: BGR) -> BGR:
    f = rng.uniform(0.8, 1.15, 3) * rng.uniform(0.8, 1.15)
    return (int(min(255, c[0] * f[0])), int(min(255, c[1] * f[1])), int(min(255, c[2] * f[2])))
