"""Things on a bar table that are not dice: coins, bottle caps, glass ring marks and a score
card with pencilled numbers. They have no ground truth: a reader that finds a die in one has
made an extra detection, the error the boards and mats of real bars provoke most.

Each is flat on the table (a cap stands a few mm), drawn as projected polygons through a
:class:`~vision.synth.view._ViewProjector`, so a tilted camera sees them in perspective.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.geometry import _fix
from vision.synth.model import BGR, Image
from vision.synth.view import _ViewProjector

PROPS = ("coin", "cap", "ring", "card")


@dataclass(frozen=True)
class Prop:
    """One non-die on the table: ``kind`` (one of :data:`PROPS`) at ``xy_mm``, ``radius_mm``
    across (a card: half its long side), turned ``angle_deg``, standing ``height_mm``."""

    kind: str
    xy_mm: tuple[float, float]
    radius_mm: float
    colour: BGR
    colour2: BGR = (0, 0, 0)
    angle_deg: float = 0.0
    height_mm: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in PROPS:
            raise ValueError(f"unknown prop {self.kind!r}")


def random_prop(rng: np.random.Generator, xy_mm: tuple[float, float], die_mm: float) -> Prop:
    """A random prop at ``xy_mm``; sizes in proportion to the dice (a coin is about a die)."""
    kind = str(rng.choice(PROPS, p=[0.35, 0.3, 0.2, 0.15]))
    seed = int(rng.integers(1 << 30))
    angle = float(rng.uniform(0, 360))
    if kind == "coin":
        metal = [(150, 150, 150), (60, 140, 190), (60, 90, 160), (170, 165, 160)]
        m = metal[int(rng.integers(len(metal)))]
        return Prop(kind, xy_mm, float(rng.uniform(8.0, 14.0)), m, m, angle, 2.0, seed)
    if kind == "cap":
        c = rng.integers(20, 240, 3)
        c2 = rng.integers(20, 240, 3)
        return Prop(
            kind,
            xy_mm,
            13.5,
            (int(c[0]), int(c[1]), int(c[2])),
            (int(c2[0]), int(c2[1]), int(c2[2])),
            angle,
            6.0,
            seed,
        )
    if kind == "ring":
        return Prop(kind, xy_mm, float(rng.uniform(28, 45)), (0, 0, 0), angle_deg=angle, seed=seed)
    return Prop(
        kind, xy_mm, float(rng.uniform(45, 75)), (235, 238, 240), (60, 50, 40), angle, 0.3, seed
    )


def _disc(
    p: Prop, proj: _ViewProjector, r: float, z: float, n: int = 40
) -> npt.NDArray[np.float64]:
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    pts = np.column_stack([p.xy_mm[0] + r * np.cos(a), p.xy_mm[1] + r * np.sin(a), np.full(n, z)])
    return proj(pts)


def footprint_mm(p: Prop) -> npt.NDArray[np.float64]:
    """The prop's outline on the table (mm), for its shadows."""
    if p.kind == "card":
        return _card_corners(p)
    a = np.linspace(0, 2 * math.pi, 24, endpoint=False)
    return np.column_stack(
        [p.xy_mm[0] + p.radius_mm * np.cos(a), p.xy_mm[1] + p.radius_mm * np.sin(a)]
    )


def _card_corners(p: Prop) -> npt.NDArray[np.float64]:
    w, h = p.radius_mm, p.radius_mm * 0.65
    a = math.radians(p.angle_deg)
    c, s = math.cos(a), math.sin(a)
    pts = np.array([(-h, -w), (h, -w), (h, w), (-h, w)])
    out: npt.NDArray[np.float64] = pts @ np.array([[c, s], [-s, c]]) + np.array(p.xy_mm)
    return out


def draw_prop(img: Image, p: Prop, proj: _ViewProjector) -> None:
    """Paint ``p`` (unlit; the lamps light it with the table) into ``img``."""
    if p.kind == "coin":
        cv2.fillPoly(
            img, [_fix(_disc(p, proj, p.radius_mm, p.height_mm))], p.colour, cv2.LINE_AA, 4
        )
        dark = tuple(int(c * 0.75) for c in p.colour)
        cv2.polylines(
            img,
            [_fix(_disc(p, proj, p.radius_mm * 0.82, p.height_mm))],
            True,
            dark,
            1,
            cv2.LINE_AA,
            4,
        )
        rng = np.random.default_rng(p.seed)  # a worn relief: a few blobs of a darker shade
        for _ in range(3):
            q = Prop(
                "coin",
                (
                    p.xy_mm[0] + float(rng.uniform(-0.4, 0.4)) * p.radius_mm,
                    p.xy_mm[1] + float(rng.uniform(-0.4, 0.4)) * p.radius_mm,
                ),
                p.radius_mm,
                p.colour,
            )
            cv2.fillPoly(
                img,
                [_fix(_disc(q, proj, p.radius_mm * 0.18, p.height_mm, 12))],
                dark,
                cv2.LINE_AA,
                4,
            )
    elif p.kind == "cap":
        side = tuple(int(c * 0.7) for c in p.colour)
        n = 42  # 21 crimps: the rim alternates in and out
        a = np.linspace(0, 2 * math.pi, n, endpoint=False) + math.radians(p.angle_deg)
        r = p.radius_mm * np.where(np.arange(n) % 2 == 0, 1.0, 0.93)
        rim = np.column_stack([p.xy_mm[0] + r * np.cos(a), p.xy_mm[1] + r * np.sin(a)])
        low, high = (
            proj(np.column_stack([rim, np.zeros(n)])),
            proj(np.column_stack([rim, np.full(n, p.height_mm)])),
        )
        hull = cv2.convexHull(np.vstack([low, high]).astype(np.float32)).reshape(-1, 2)
        cv2.fillPoly(img, [_fix(hull.astype(np.float64))], side, cv2.LINE_AA, 4)
        cv2.fillPoly(img, [_fix(high)], p.colour, cv2.LINE_AA, 4)
        cv2.fillPoly(
            img, [_fix(_disc(p, proj, p.radius_mm * 0.55, p.height_mm))], p.colour2, cv2.LINE_AA, 4
        )
    elif p.kind == "ring":  # a wet or sticky glass mark: a faint darker ring, maybe broken
        rng = np.random.default_rng(p.seed)
        start = float(rng.uniform(0, 360))
        span = float(rng.choice([360.0, rng.uniform(160, 330)]))
        a = np.radians(np.linspace(start, start + span, 60))
        rings = [
            proj(
                np.column_stack(
                    [p.xy_mm[0] + rr * np.cos(a), p.xy_mm[1] + rr * np.sin(a), np.zeros(60)]
                )
            )
            for rr in (p.radius_mm, p.radius_mm * 0.96)
        ]
        h, w = img.shape[:2]
        pts = np.vstack(rings)
        x0, y0 = np.maximum(np.floor(pts.min(axis=0)).astype(int) - 3, 0)
        x1, y1 = np.minimum(np.ceil(pts.max(axis=0)).astype(int) + 4, [w, h])
        if x1 <= x0 or y1 <= y0:
            return
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        for ring in rings:
            cv2.polylines(mask, [_fix(ring - (x0, y0))], span >= 360, 255, 2, cv2.LINE_AA, 4)
        k = float(rng.uniform(0.12, 0.35))
        dim = (1.0 - k * mask.astype(np.float32) / 255.0)[:, :, None]
        img[y0:y1, x0:x1] = (img[y0:y1, x0:x1] * dim).astype(np.uint8)
    else:
        _draw_card(img, p, proj)


def _draw_card(img: Image, p: Prop, proj: _ViewProjector) -> None:
    """A score card: ruled rows and columns, pencilled numbers, pasted by a homography."""
    rng = np.random.default_rng(p.seed)
    cw, ch = 130, 200
    card = np.full((ch, cw, 3), p.colour, np.uint8)
    for y in range(20, ch, 18):
        cv2.line(card, (4, y), (cw - 4, y), (150, 140, 120), 1, cv2.LINE_AA)
    cv2.line(card, (cw // 2, 4), (cw // 2, ch - 4), (150, 140, 120), 1, cv2.LINE_AA)
    for y in range(34, ch - 10, 18):
        for x0 in (8, cw // 2 + 6):
            if rng.random() < 0.7:
                text = str(int(rng.integers(0, 400)))
                cv2.putText(
                    card, text, (x0, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, p.colour2, 1, cv2.LINE_AA
                )
    corners = proj(np.column_stack([_card_corners(p), np.full(4, p.height_mm)])).astype(np.float32)
    src = np.array([(0, 0), (cw, 0), (cw, ch), (0, ch)], np.float32)
    m = cv2.getPerspectiveTransform(src, corners)
    h, w = img.shape[:2]
    cv2.warpPerspective(
        card, m, (w, h), dst=img, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT
    )
