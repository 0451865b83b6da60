"""Score-by-round charts as SVG drawn by the server: no script, no library, no inline style.

:func:`draw` turns a :class:`~server.players.series.ScoreChart` into geometry (polyline
points, ticks, colours as SVG presentation attributes, which the CSP allows where ``style``
is refused) that ``_chart.html`` writes out; Jinja escapes every name. The SVG scales to
its box (``viewBox``), so one drawing serves a 390 px phone and the kiosk, and the names go
in an HTML legend under it, where long names wrap instead of running off the plot.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from server.players.series import ScoreChart

WIDTH, HEIGHT = 360, 190
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 10, 26  #: the plot's margins (tick labels)
#: readable on the dark theme, told apart by most colour-blind eyes in this order
COLOURS = ("#f2c14e", "#5ab0f0", "#f26d6d", "#7bd389", "#c792ea", "#ff9f43", "#4dd0e1", "#e0e0e0")
MAX_X_TICKS = 8


@dataclass(frozen=True)
class Line:
    name: str
    points: str  #: "x,y x,y ..." in the viewBox
    colour: str
    last: int
    url: str | None = None
    bold: bool = False


@dataclass(frozen=True)
class Drawn:
    """A chart ready for ``_chart.html``."""

    width: int
    height: int
    lines: tuple[Line, ...]
    y_ticks: tuple[tuple[float, str], ...]
    x_ticks: tuple[tuple[float, str], ...]
    y_label: str
    x_label: str
    plot: tuple[float, float, float, float]  #: left, top, right, bottom


def nice_step(top: float, ticks: int = 4) -> int:
    """A round tick step (1, 2, 5 x 10^k) giving about ``ticks`` ticks up to ``top``."""
    raw = max(top, 1) / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * power:
            return max(1, int(m * power))
    return max(1, int(10 * power))  # pragma: no cover - the loop always returns


def _label(value: int) -> str:
    return f"{value / 1000:g}k" if abs(value) >= 10000 else f"{value:,}"


def draw(
    chart: ScoreChart,
    *,
    url: Callable[[str], str | None] = lambda _: None,
    bold: str | None = None,
    names: Sequence[str] | None = None,
) -> Drawn | None:
    """The chart's geometry, ``None`` when there is nothing to draw yet (no round played).
    ``url`` links a series' name, ``bold`` names the series drawn thicker, ``names``
    replaces the series' names in the legend."""
    series = [s for s in chart.series if s.points]
    rounds = max((len(s.points) for s in series), default=0) - 1
    if rounds < 1:
        return None
    low = min(0, *(min(s.points) for s in series))
    high = max(1, *(max(s.points) for s in series))
    step = nice_step(high - low)
    top = math.ceil(high / step) * step
    bottom = math.floor(low / step) * step
    left, right = LEFT, WIDTH - RIGHT
    up, down = TOP, HEIGHT - BOTTOM

    def x(i: int) -> float:
        return round(left + (right - left) * i / rounds, 1)

    def y(v: float) -> float:
        return round(down - (down - up) * (v - bottom) / (top - bottom), 1)

    lines = []
    for n, s in enumerate(series):
        shown = names[n] if names is not None else s.name
        lines.append(
            Line(
                shown,
                " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(s.points)),
                COLOURS[n % len(COLOURS)],
                s.points[-1],
                url(s.name) if s.player else None,
                s.name == bold,
            )
        )
    y_ticks = tuple((y(v), _label(v)) for v in range(bottom, top + 1, step))
    every = max(1, math.ceil(rounds / MAX_X_TICKS))
    x_ticks = tuple((x(i), str(i)) for i in range(0, rounds + 1, every))
    return Drawn(
        WIDTH, HEIGHT, tuple(lines), y_ticks, x_ticks, chart.y_label, chart.x_label,
        (left, up, right, down),
    )  # fmt: skip
