"""Die looks for domain randomisation: body finishes (opaque, translucent, marbled, smoky,
metallic), pip colours, shapes and kinds (round or square-ish, painted or engraved, dark on
light or light on dark), pip layout and size, and edge rounding.

A bar's dice are whatever the bar bought; a reader trained on eight flat colours learns those
eight. Every look here is drawn from wide, continuous ranges so that no one look is learnt.
"""

from __future__ import annotations

import colorsys
import functools
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.logos import LOGOS
from vision.synth.model import BGR

FINISHES = ("opaque", "translucent", "marbled", "smoky", "metallic")
PIP_SHAPES = ("round", "square")
PIP_KINDS = ("painted", "engraved")

_NAMED: tuple[tuple[str, BGR], ...] = (  # body colours a bar's dice come in, and their names
    ("white", (238, 240, 242)),
    ("ivory", (200, 228, 238)),
    ("black", (28, 28, 30)),
    ("red", (40, 30, 200)),
    ("dark red", (30, 20, 120)),
    ("green", (60, 150, 30)),
    ("blue", (180, 80, 20)),
    ("navy", (90, 40, 20)),
    ("yellow", (40, 210, 235)),
    ("orange", (20, 120, 240)),
    ("purple", (140, 40, 110)),
    ("pink", (170, 120, 240)),
    ("teal", (140, 140, 20)),
    ("grey", (140, 140, 140)),
    ("brown", (40, 70, 120)),
)
_METALS: tuple[tuple[str, BGR], ...] = (
    ("silver", (190, 190, 185)),
    ("gold", (60, 160, 205)),
    ("copper", (70, 110, 180)),
    ("gunmetal", (85, 80, 78)),
)


@dataclass(frozen=True)
class DieLook:
    """How one die looks. ``pip_r`` and ``pip_d`` are the pip radius and its offset from the
    face centre in half-sides; ``one_r`` scales the single pip of the one (often big and red);
    ``rounding`` is the corner radius in half-sides (sharp casino dice 0.05, soft 0.5);
    ``opacity`` < 1 lets the table show through; ``see_through`` shows the far faces' pips;
    ``gloss`` is the strength of the lamps' glare on its faces; ``seed`` places its swirl.
    ``logo`` (one of :data:`~vision.synth.logos.LOGOS`) prints a logo on the 1 face instead of
    its pip, in the pips' colour and kind, as branded bar dice have (the face still reads 1);
    :func:`random_look` never sets it."""

    name: str
    finish: str = "opaque"
    body: BGR = (238, 240, 242)
    body2: BGR = (238, 240, 242)
    pips: BGR = (25, 25, 25)
    pip_shape: str = "round"
    pip_kind: str = "painted"
    pip_r: float = 0.19
    pip_d: float = 0.52
    one_r: float = 1.0
    rounding: float = 0.22
    opacity: float = 1.0
    see_through: float = 0.0
    gloss: float = 0.3
    seed: int = 0
    logo: str | None = None

    def __post_init__(self) -> None:
        if self.finish not in FINISHES or self.pip_shape not in PIP_SHAPES:
            raise ValueError(f"unknown finish or pip shape: {self.finish}, {self.pip_shape}")
        if self.pip_kind not in PIP_KINDS:
            raise ValueError(f"unknown pip kind: {self.pip_kind}")
        if not self.pip_d + self.pip_r * max(1.0, 0.6 * self.one_r) < 0.95:
            raise ValueError("pips must stay on the face")
        if self.logo is not None and self.logo not in LOGOS:
            raise ValueError(f"unknown logo {self.logo!r}; known: {', '.join(LOGOS)}")

    @property
    def dark_pips(self) -> bool:
        """Dark pips on a light body (the reader's easy case) rather than light on dark."""
        return _luma(self.pips) < _luma(self.body)


def _luma(c: BGR) -> float:
    return 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]


def _jitter(rng: np.random.Generator, c: BGR, amount: float) -> BGR:
    """``c`` moved a little in hue, saturation and value: no two sets are the same red."""
    h, s, v = colorsys.rgb_to_hsv(c[2] / 255, c[1] / 255, c[0] / 255)
    h = (h + float(rng.normal(0, 0.03 * amount))) % 1.0
    s = float(np.clip(s * rng.uniform(1 - 0.25 * amount, 1 + 0.15 * amount), 0, 1))
    v = float(np.clip(v * rng.uniform(1 - 0.2 * amount, 1 + 0.1 * amount), 0.05, 1))
    r, g, b = colorsys.hsv_to_rgb(h, s, v)
    return (round(b * 255), round(g * 255), round(r * 255))


def _pip_colour(rng: np.random.Generator, body: BGR) -> BGR:
    """Pips that read against ``body``: dark on light, light on dark, or a contrasting colour
    (red ones on white, gold on black)."""
    light = _luma(body) > 120
    r = rng.random()
    if r < 0.2:
        inks = [c for _, c in _NAMED[3:]] + [(40, 40, 200), (60, 180, 220)]
        named = [c for c in inks if abs(_luma(c) - _luma(body)) > 70]
        if named:
            return _jitter(rng, named[int(rng.integers(len(named)))], 0.5)
    if light:
        g = int(rng.integers(10, 60))
        return (g, g, g + int(rng.integers(0, 10)))
    g = int(rng.integers(200, 250))
    return (g, g, g - int(rng.integers(0, 15)))


def random_look(rng: np.random.Generator, finish: str | None = None) -> DieLook:
    """A die look drawn from the whole domain (or of one ``finish``)."""
    kind = finish or str(rng.choice(FINISHES, p=[0.5, 0.14, 0.12, 0.12, 0.12]))
    if kind not in FINISHES:
        raise ValueError(f"unknown finish {kind!r}")
    if kind == "metallic":
        name, body = _METALS[int(rng.integers(len(_METALS)))]
    elif kind == "smoky":
        name, body = (
            "black",
            (
                int(rng.integers(35, 70)),
                int(rng.integers(30, 60)),
                int(rng.integers(30, 65)),
            ),
        )
    else:
        name, body = _NAMED[int(rng.integers(len(_NAMED)))]
    body = _jitter(rng, body, 1.0)
    body2 = body
    if kind == "marbled":  # a swirl of the body with a second colour (often white or black)
        other = (
            _NAMED[int(rng.integers(len(_NAMED)))][1]
            if rng.random() < 0.5
            else ((235, 235, 235) if _luma(body) < 150 else (30, 30, 30))
        )
        body2 = _jitter(rng, other, 1.0)
    pips = _pip_colour(rng, body)  # a marbled body is mostly its first colour
    pip_kind = "engraved" if kind == "metallic" or rng.random() < 0.35 else "painted"
    if kind == "metallic" and rng.random() < 0.4:  # bare engraving, no paint
        pips = tuple(int(c * 0.35) for c in body)  # type: ignore[assignment]
    pip_r = float(rng.uniform(0.13, 0.23))
    one_r = float(rng.choice([1.0, rng.uniform(1.0, 1.9)], p=[0.6, 0.4]))
    pip_d = float(rng.uniform(0.44, min(0.6, 0.93 - pip_r * max(1.0, 0.6 * one_r))))
    clear = kind in ("translucent", "smoky")
    return DieLook(
        name=name,
        finish=kind,
        body=body,
        body2=body2,
        pips=pips,
        pip_shape="square" if rng.random() < 0.25 else "round",
        pip_kind=pip_kind,
        pip_r=pip_r,
        pip_d=pip_d,
        one_r=one_r,
        rounding=float(rng.uniform(0.04, 0.5)),
        opacity=float(rng.uniform(0.55, 0.85)) if clear else 1.0,
        see_through=float(rng.uniform(0.3, 0.7)) if clear else 0.0,
        gloss=float(rng.uniform(0.5, 1.0) if kind == "metallic" else rng.uniform(0.0, 0.7)),
        seed=int(rng.integers(1 << 30)),
    )


_SWIRL_TILE = 256


@functools.lru_cache(maxsize=1)
def _swirl_bank() -> npt.NDArray[np.float32]:
    """A swirl pattern (0..1) that marbled dice take windows of: veins of a second colour."""
    rng = np.random.default_rng(77)
    n = _SWIRL_TILE
    small = rng.standard_normal((10, 10)).astype(np.float32)
    warp = cv2.resize(small, (n, n), interpolation=cv2.INTER_CUBIC)
    small2 = rng.standard_normal((6, 6)).astype(np.float32)
    warp2 = cv2.resize(small2, (n, n), interpolation=cv2.INTER_CUBIC)
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    veins = np.sin(xs / 9.0 + 4.0 * warp + 2.5 * warp2) * np.cos(ys / 13.0 + 3.0 * warp2)
    # mostly body, with veins and clouds of the second colour that never quite cover it
    out = np.asarray(np.clip(1.3 * veins - 0.15, 0.0, 1.0) * 0.85, np.float32)
    out.flags.writeable = False
    return out


def swirl(look: DieLook, h: int, w: int) -> npt.NDArray[np.float32]:
    """A ``h`` x ``w`` window of the swirl for ``look`` (0 = body, 1 = second colour)."""
    bank = _swirl_bank()
    n = _SWIRL_TILE
    scale = max(1, int(np.ceil(max(h, w) / (n // 2))))
    y0 = (look.seed % 97) * 7 % max(1, n - min(n, h // scale + 1))
    x0 = (look.seed % 89) * 5 % max(1, n - min(n, w // scale + 1))
    win = bank[y0 : y0 + h // scale + 1, x0 : x0 + w // scale + 1]
    if scale > 1:
        win = np.asarray(cv2.resize(win, (win.shape[1] * scale, win.shape[0] * scale)), np.float32)
    return np.ascontiguousarray(win[:h, :w])
