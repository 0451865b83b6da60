"""Training samples: rendered tables, each die seen as the reader sees it (or from jittered
truth), its features and labels from the renderer's truth; cached per seed, count and reader."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from vision import synth
from vision.flags import DieView, Evidence
from vision.flags.dice import neighbours_of
from vision.flags.features import GRID, N_CHANNELS, features
from vision.nets import LOCATOR_FILE, MODELS_DIR, VALUE_FILE
from vision.reading import DieReading, Reading


def top_angle(corners: tuple[tuple[float, float], ...]) -> float:
    (x0, y0), (x1, y1) = corners[0], corners[1]
    return (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0


def tables(
    rng: np.random.Generator,
    n_scenes: int,
    stacked: float,
    *,
    trays: bool = False,
    cocked_anywhere: float = 0.0,
) -> Iterator[synth.SceneImage]:
    """The rendered training tables, drawn from ``rng`` in a fixed order (the caller may draw
    from it between tables: the stream stays the one the shipped model was trained on)."""
    look = None
    for k in range(n_scenes):
        if k % 4 == 0:  # a new table every four scenes (drawing its background is the slow part)
            look = synth.random_scene(rng, n_dice=0)
        n_dice = int(rng.integers(1, 7))
        degrade = bool(rng.random() < 0.5)
        # with ``trays`` half the tables have flat dice side by side, touching, as in a tray:
        # without them the model learns "beside another die" as "leaning on it" (real photos:
        # 8 % false); cocked dice tilted anywhere, any way (``cocked_anywhere``): on the rail
        # alone the model learns "at the pad's edge, tilted outwards" rather than "tilted"
        spacing = (1.6 if rng.random() < 0.5 else float(rng.uniform(1.0, 1.5))) if trays else 1.6
        scene = synth.random_scene(
            rng,
            look=look,
            n_dice=n_dice,
            cocked=0.3,
            stacked=stacked,
            off_pad=0.1,
            degrade=degrade,
            min_tilt_deg=10.0,
            max_tilt_deg=45.0,
            spacing=spacing,
            cocked_anywhere=cocked_anywhere,
        )
        yield synth.render(scene, rng=rng)


def samples(
    seed: int, n_scenes: int, stacked: float = 0.2
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels (cocked, stacked) and truth tilt of every visible die."""
    rng = np.random.default_rng(seed)
    xs, ys, tilts = [], [], []
    for shot in tables(rng, n_scenes, stacked):
        seen = [d for d in shot.truth.dice if d.visible >= 0.5]
        views = []
        for d in seen:
            # as far off as vision.detect's are on renders: its centre is the visible die's
            # (side faces included), median 0.13 sides from the top face's, and its side is
            # the extent's, median 1.13 x the top face's
            jitter = rng.normal(0, 0.13, 2) * d.size_px
            centre = (d.center_xy[0] + float(jitter[0]), d.center_xy[1] + float(jitter[1]))
            side = d.size_px * float(np.exp(rng.normal(0.1, 0.15)))
            angle = top_angle(d.corners_xy) + float(rng.normal(0, 5))
            views.append((centre, side, angle))
        for i, d in enumerate(seen):
            centre, side, angle = views[i]
            others = neighbours_of(
                DieView(centre, side, angle),
                [DieView(v[0], v[1], v[2]) for j, v in enumerate(views) if j != i],
            )
            xs.append(features(shot.image, centre, side, angle, neighbours=others))
            ys.append((float(d.tilt_deg >= 10.0), float(d.stacked)))
            tilts.append(d.tilt_deg)
    return np.array(xs, np.float32), np.array(ys, np.float32), np.array(tilts, np.float32)


def reader_samples(
    seed: int,
    n_scenes: int,
    stacked: float = 0.2,
    models: str | None = None,
    cocked_anywhere: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Like :func:`samples`, but every die is seen as ``vision.detect.read_roll`` sees it (with
    the reader's networks in ``models``; None: the shipped ones): its detections' centres,
    sides and turns, duplicates and misses included, with the neighbours the run-time hook
    gets. A detection takes the labels of the visible true die it lies on: within half a side
    of its top face's centre, or within ``SIDE_FACE_REACH`` sides of a tilted or stacked
    die's (the reader often centres such a die on the side face it shows, and reads that
    face; labelled flat, those detections taught the model to pass them as flat dice). One on
    no die is neither cocked nor stacked."""
    from vision import detect
    from vision.params import DetectorParams

    params = DetectorParams(models_dir=models)

    def no_flags(frame: np.ndarray, views: list[object], **_: object) -> tuple[Evidence, ...]:
        return tuple(Evidence(0.0, 0.0, touching=False) for _ in views)

    def read_roll(image: np.ndarray) -> Reading:
        # the reader's geometry only: the flags it would add come from the model being replaced
        # (whose input may not even fit the current features), and would cost time for nothing
        flagged = getattr(detect, "judge")  # noqa: B009 (the name read_roll looks up)
        setattr(detect, "judge", no_flags)  # noqa: B010
        try:
            return detect.read_roll(image, params=params)
        finally:
            setattr(detect, "judge", flagged)  # noqa: B010

    rng = np.random.default_rng(seed)
    xs, ys, tilts = [], [], []
    for shot in tables(rng, n_scenes, stacked, trays=True, cocked_anywhere=cocked_anywhere):
        views = [view_of_reading(r) for r in read_roll(shot.image).dice]
        # a die hidden under another (visible < 0.5) is not what a detection there shows: its
        # centre is next to the top die's, and taking its labels taught "on top" as not stacked
        seen = [d for d in shot.truth.dice if d.visible >= 0.5]
        for i, v in enumerate(views):
            near = min(
                seen,
                key=lambda d: math.dist(d.center_xy, v.center_xy) / d.size_px,
                default=None,
            )
            gap = (
                math.inf if near is None else math.dist(near.center_xy, v.center_xy) / near.size_px
            )
            on = near is not None and (
                gap < 0.5 or (gap < SIDE_FACE_REACH and (near.tilt_deg >= 10.0 or near.stacked))
            )
            others = neighbours_of(v, [o for j, o in enumerate(views) if j != i])
            xs.append(features(shot.image, v.center_xy, v.side_px, v.angle_deg, neighbours=others))
            if on and near is not None:
                ys.append((float(near.tilt_deg >= 10.0), float(near.stacked)))
                tilts.append(near.tilt_deg)
            else:
                ys.append((0.0, 0.0))
                tilts.append(-1.0)  # no die: in neither the flat nor the tilted figures
    return np.array(xs, np.float32), np.array(ys, np.float32), np.array(tilts, np.float32)


def view_of_reading(r: DieReading) -> DieView:
    """The view the ``vision.detect`` hook builds for a reading (its turn from the corners)."""
    return DieView(r.center_xy, r.size_px, top_angle(r.corners_xy))


SIDE_FACE_REACH = 1.1
"""How far (in sides of its top face) from a tilted or stacked die's top-face centre a
detection still counts as that die: the reader's off-centre detections of dice tilted 23-40
degrees lie 0.5-1.0 sides from it, on the side face."""

JITTER_VERSION = 2  # bump when the geometry jitter changes: cached samples are stale

SAMPLES_VERSION = 7  # bump when features or labels change: cached samples are stale


def reader_id(models: str | None) -> str:
    """A short digest of the reader's networks: samples read by other networks are stale."""
    folder = Path(models) if models else MODELS_DIR
    digest = hashlib.sha256()
    for name in (LOCATOR_FILE, VALUE_FILE):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:8]


def cached(
    folder: Path | None,
    seed: int,
    n: int,
    stacked: float = 0.2,
    *,
    reader: bool = True,
    models: str | None = None,
    cocked_anywhere: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``reader_samples`` (or jittered-truth ``samples``) once per (seed, n, patch size, reader
    networks), from ``folder`` when it has them."""

    def make() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not reader:
            return samples(seed, n, stacked)
        return reader_samples(seed, n, stacked, models, cocked_anywhere)

    if folder is None:
        return make()
    tag = ("" if stacked == 0.2 else f"-s{stacked}") + (
        f"-reader{reader_id(models)}" if reader else f"-j{JITTER_VERSION}"
    )
    tag += f"-a{cocked_anywhere}" if cocked_anywhere else ""
    path = folder / f"flags-v{SAMPLES_VERSION}-{seed}-{n}{tag}-{GRID}x{N_CHANNELS}.npz"
    if path.exists():
        with np.load(path) as d:
            return d["x"], d["y"], d["t"]
    x, y, t = make()
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=x, y=y, t=t)
    return x, y, t
