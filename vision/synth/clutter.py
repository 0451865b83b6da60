"""Clutter that is not dice but looks like a die to a network that never saw it: the keypad of a
card terminal or a phone's keyboard (rows of die-sized squares, each with one glyph), printed
tags, receipts and stickers (black marks on a white oblong), and charging cables.

Why: a reader trained on dice and bare tables takes a key with one letter on it for a die with
one pip, a white tag with a few black characters for a white die, a cable's end for a dark die:
real tables carry all three beside the dice. Drawn flat through the table's picture
(:meth:`~vision.synth.view._ViewProjector.homography`-like warps of a texture, or projected
polygons), with no ground truth: a die found on one is an extra detection.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.geometry import _fix
from vision.synth.model import BGR, Image
from vision.synth.view import _ViewProjector

_TEX_PX_PER_MM = 6.0
_GLYPHS = (
    *"ABCDEFGHJKLMNPQRSTUVWXYZ0123456789#*<>?%",
    "fn",
    "esc",
    "ctrl",
    "alt",
    "OK",
    "<-",
    "tab",
)
_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
)
_TEXT = "ABCDEFGHIJKLMNOPRSTUVWXYZ0123456789.-/:"


def keypad_grid(seed: int) -> tuple[int, int]:
    """Rows and columns of a keypad drawn from ``seed``: a card terminal's 4 x 3 to a keyboard's
    strip of 5 x 12."""
    rng = np.random.default_rng(seed)
    if rng.random() < 0.5:
        return int(rng.integers(3, 6)), int(rng.integers(3, 5))
    return int(rng.integers(2, 6)), int(rng.integers(5, 13))


def oblong_aspect(seed: int, kind: str) -> float:
    """Short side over long side of a tag (a sticker, a cable label, a receipt's strip)."""
    rng = np.random.default_rng(seed + 1)
    return float(rng.uniform(0.25, 0.7) if kind == "tag" else 1.0)


def _glyph(
    img: Image,
    text: str,
    centre: tuple[float, float],
    height: float,
    colour: BGR,
    rng: np.random.Generator,
) -> None:
    font = _FONTS[int(rng.integers(len(_FONTS)))]
    (tw, th), _ = cv2.getTextSize(text, font, 1.0, 1)
    scale = height / max(th, 1)
    thick = max(1, round(scale * float(rng.uniform(1.0, 2.5))))
    (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
    org = (round(centre[0] - tw / 2), round(centre[1] + th / 2))
    cv2.putText(img, text, org, font, scale, colour, thick, cv2.LINE_AA)


def keypad_texture(seed: int, key: BGR, ink: BGR) -> Image:
    """A keypad seen from above: ``key``-coloured caps on a housing, one glyph each in ``ink``
    (a lighter dished top on some), at :data:`_TEX_PX_PER_MM` for a 15 mm pitch."""
    rng = np.random.default_rng(seed + 2)
    rows, cols = keypad_grid(seed)
    pitch = round(15 * _TEX_PX_PER_MM)
    h, w = rows * pitch, cols * pitch
    shade = float(rng.uniform(0.5, 1.3))
    housing = _lighter(key, shade, 0)
    img = np.full((h, w, 3), housing, np.uint8)
    gap = float(rng.uniform(0.08, 0.25)) * pitch
    corner = max(1, round(float(rng.uniform(0.05, 0.3)) * pitch))
    dish = rng.random() < 0.5
    for r in range(rows):
        for c in range(cols):
            x0, y0 = c * pitch + gap / 2, r * pitch + gap / 2
            x1, y1 = x0 + pitch - gap, y0 + pitch - gap
            _rounded(img, (x0, y0, x1, y1), corner, key)
            if dish:
                top = _lighter(key, 1.12, 6)
                m = 0.12 * pitch
                _rounded(img, (x0 + m, y0 + m, x1 - m, y1 - m), corner, top)
            if rng.random() < 0.9:
                text = _GLYPHS[int(rng.integers(len(_GLYPHS)))]
                off = rng.random() < 0.3  # a label in the key's corner, as laptops print
                at = (x0 + 0.3 * pitch, y0 + 0.3 * pitch) if off else ((x0 + x1) / 2, (y0 + y1) / 2)
                size = float(rng.uniform(0.18, 0.45)) * pitch / max(1.0, len(text) ** 0.5)
                _glyph(img, text, at, size, ink, rng)
    return img


def tag_texture(seed: int, paper: BGR, ink: BGR, aspect: float) -> Image:
    """A tag, sticker or receipt: lines of ``ink`` text (a bar code on some) on ``paper``."""
    rng = np.random.default_rng(seed + 3)
    w = 240
    h = max(24, round(w * aspect))
    img = np.full((h, w, 3), paper, np.uint8)
    lines = int(rng.integers(1, max(2, h // 28) + 1))
    step = h / (lines + 0.5)
    for i in range(lines):
        n = int(rng.integers(2, 12))
        text = "".join(_TEXT[int(j)] for j in rng.integers(len(_TEXT), size=n))
        height = float(rng.uniform(0.35, 0.75)) * step
        x = float(rng.uniform(0.3, 0.7)) * w
        _glyph(img, text, (x, (i + 0.75) * step), height, ink, rng)
    if rng.random() < 0.3:  # a bar code along one end
        x = float(rng.uniform(0.05, 0.2)) * w
        while x < 0.45 * w:
            bar = float(rng.uniform(1.0, 5.0))
            cv2.rectangle(
                img, (round(x), round(0.15 * h)), (round(x + bar), round(0.85 * h)), ink, -1
            )
            x += bar + float(rng.uniform(1.5, 5.0))
    if rng.random() < 0.4:  # a printed frame
        cv2.rectangle(img, (3, 3), (w - 4, h - 4), ink, 1, cv2.LINE_AA)
    return img


def _lighter(c: BGR, gain: float, lift: float) -> BGR:
    b, g, r = (int(min(255.0, v * gain + lift)) for v in c)
    return (b, g, r)


def _rounded(img: Image, box: tuple[float, float, float, float], r: int, colour: BGR) -> None:
    x0, y0, x1, y1 = (round(v) for v in box)
    r = max(0, min(r, (x1 - x0) // 2, (y1 - y0) // 2))
    cv2.rectangle(img, (x0 + r, y0), (x1 - r, y1), colour, -1)
    cv2.rectangle(img, (x0, y0 + r), (x1, y1 - r), colour, -1)
    for cx, cy in ((x0 + r, y0 + r), (x1 - r, y0 + r), (x0 + r, y1 - r), (x1 - r, y1 - r)):
        cv2.circle(img, (cx, cy), r, colour, -1, cv2.LINE_AA)


def paste(
    img: Image,
    texture: Image,
    corners_mm: npt.NDArray[np.float64],
    height_mm: float,
    proj: _ViewProjector,
) -> None:
    """Warp ``texture`` onto the table rectangle ``corners_mm`` (its four corners in the
    texture's order: top left, top right, bottom right, bottom left)."""
    th, tw = texture.shape[:2]
    pts = np.column_stack([corners_mm, np.full(4, height_mm)])
    dst = proj(pts).astype(np.float32)
    src = np.array([(0, 0), (tw, 0), (tw, th), (0, th)], np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    h, w = img.shape[:2]
    cv2.warpPerspective(
        texture, m, (w, h), dst=img, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_TRANSPARENT
    )


def cable_outline(
    xy_mm: tuple[float, float], half_len: float, angle_deg: float, seed: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """A cable lying across ``xy_mm``: its centre line (n x 2 mm, a bent cubic curve, never
    further than ``0.75 * half_len`` from ``xy_mm``: its plug reaches the rest), its band's
    outline and its thickness (mm)."""
    rng = np.random.default_rng(seed + 4)
    width = float(rng.uniform(3.0, 7.0))
    reach = 0.75 * half_len
    a = math.radians(angle_deg)
    along, side = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
    bends = rng.uniform(-0.6, 0.6, 2) * reach
    ctrl = np.array(
        [
            -along * reach,
            -along * reach / 3 + side * bends[0],
            along * reach / 3 + side * bends[1],
            along * reach,
        ]
    )
    t = np.linspace(0, 1, 48)[:, None]
    line = (
        (1 - t) ** 3 * ctrl[0]
        + 3 * (1 - t) ** 2 * t * ctrl[1]
        + 3 * (1 - t) * t**2 * ctrl[2]
        + t**3 * ctrl[3]
    )
    norm = np.linalg.norm(line, axis=1, keepdims=True)
    line = np.where(norm > reach, line * reach / np.maximum(norm, 1e-9), line)
    line = line + np.array(xy_mm)
    d = np.gradient(line, axis=0)
    n = np.column_stack([-d[:, 1], d[:, 0]]) / np.maximum(np.linalg.norm(d, axis=1), 1e-9)[:, None]
    band = np.vstack([line + n * width / 2, (line - n * width / 2)[::-1]])
    return line, band, width


def cable_plug(
    line: npt.NDArray[np.float64], width: float, half_len: float, seed: int
) -> npt.NDArray[np.float64] | None:
    """The plug on a cable's end (four corners, mm; None: a bare end), wider than the cable and
    at most a quarter of ``half_len`` long, so it stays within ``half_len`` of the centre."""
    rng = np.random.default_rng(seed + 5)
    if rng.random() >= 0.7:
        return None
    end, before = line[-1], line[-6]
    u = (end - before) / max(float(np.linalg.norm(end - before)), 1e-9)
    v = np.array([-u[1], u[0]])
    half_w = width * float(rng.uniform(1.2, 2.0))
    length = min(0.25 * half_len, float(rng.uniform(12, 25)))
    return np.array(
        [
            end + v * half_w,
            end + v * half_w + u * length,
            end - v * half_w + u * length,
            end - v * half_w,
        ]
    )


def draw_cable(
    img: Image,
    xy_mm: tuple[float, float],
    half_len: float,
    angle_deg: float,
    seed: int,
    colour: BGR,
    proj: _ViewProjector,
) -> None:
    """A round cable: its band in ``colour``, a sheen along its middle, a plug on most."""
    line, band, width = cable_outline(xy_mm, half_len, angle_deg, seed)
    z = 0.0  # a few mm tall: drawn on the table, where its footprint (and the dice's gap) is
    cv2.fillPoly(
        img, [_fix(proj(np.column_stack([band, np.full(len(band), z)])))], colour, cv2.LINE_AA, 4
    )
    sheen = _lighter(colour, 1.4, 35)
    mid = proj(np.column_stack([line + width * 0.15, np.full(len(line), z)]))
    px = max(1, round(_px_per_mm(proj, line[len(line) // 2]) * width * 0.18))
    cv2.polylines(img, [_fix(mid)], False, sheen, px, cv2.LINE_AA, 4)
    box = cable_plug(line, width, half_len, seed)
    if box is not None:
        rng = np.random.default_rng(seed + 6)
        plug = _bgr3(rng.integers(20, 230, 3)) if rng.random() < 0.3 else colour
        cv2.fillPoly(img, [_fix(proj(np.column_stack([box, np.full(4, z)])))], plug, cv2.LINE_AA, 4)


def _bgr3(c: npt.NDArray[np.int64]) -> BGR:
    b, g, r = (int(v) for v in c)
    return (b, g, r)


def _px_per_mm(proj: _ViewProjector, xy: npt.NDArray[np.float64]) -> float:
    a = proj(np.array([xy[0], xy[1], 0.0]))
    b = proj(np.array([xy[0] + 1.0, xy[1], 0.0]))
    return float(np.linalg.norm(b - a))
