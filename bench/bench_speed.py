"""Reading speed against the classic pipeline, per stage, and per network runtime (on demand).

    ./run bench bench_speed [--every N] [--rounds R] [--renders N] [--only SECTION,...]
    ./run bench bench_speed --check [REV|DIR]  # readings as REV's (default HEAD), or DIR's?

Everything is timed in one process on one thread (``cv2.setNumThreads(1)``, ONNX Runtime's
``intra_op_num_threads=1``, BLAS and OpenMP held to one thread), the compared things
interleaved photo by photo, and each time is this thread's CPU time (``time.thread_time``:
the training runs that share these 2 cores do not inflate it; wall time is printed beside
it). Absolute times drift 2x between the shared hosts, so the figures that count are ratios.

Sections (``--only``):

- ``classic``: ``vision.read_roll`` against the classic pipeline (``shared/peers/classic.py``:
  blob pips + DBSCAN, die size 36 px for nellbyler_d6 and 60 px for matteop65_d6) on a fixed
  sample of the DEV photos (every ``--every``-th photo of each set, sorted by name): the
  median of each photo's ``--rounds`` times, then the median over photos of both and of the
  per-photo ratio; plus the same frames split by stage: locator (resize, network, decode),
  value network (first looks, quarter turns included), second looks (``vision.relook``:
  their cuts and networks), flags (``vision.flags.judge``: features, network, size cues) and
  the rest (the cuts, face turns, colours, duplicates), with each stage's network share.
- ``runtimes``: the three networks under OpenCV's ``dnn`` and under ONNX Runtime on the very
  inputs ``read_roll`` gives them on those photos (ratio per network, per call, median), and
  ``read_roll`` end to end with all three networks on one runtime then the other.
- ``--check [REV]``: every die's value, flags, centre (and the rest of its JSON) on the DEV
  sample and on ``--renders`` ``vision.synth`` scenes (clean and degraded), read by this tree
  and by ``git archive REV`` of ``vision/`` in a subprocess; exits 1 on any difference. A
  speed change must leave every reading as it was.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy / scikit-learn load their thread pools

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tarfile  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Callable, Iterator, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

DATASETS = {"nellbyler_d6": 36, "matteop65_d6": 60}
"""DEV photo sets and the die size in px the classic pipeline is given for each."""

STAGES = ("locator", "value", "second looks", "flags", "rest")

F32 = np.ndarray


def shared_dir() -> Path:
    shared = os.environ.get("DICEPAD_SHARED")
    return Path(shared) if shared else REPO.parent / "shared"


def sample_photos(every: int) -> list[tuple[str, Path]]:
    """Every ``every``-th DEV photo of each set (sorted by name): a fixed sample."""
    out = []
    for name in DATASETS:
        paths = sorted((shared_dir() / "datasets" / name).glob("*.jpg"))
        out += [(name, p) for p in paths[::every]]
    return out


def renders(n: int) -> list[np.ndarray]:
    """``n`` fixed ``vision.synth`` scenes, alternately clean and degraded (640 x 480)."""
    from vision import synth

    out = []
    for i in range(n):
        rng = np.random.default_rng(1000 + i)
        scene = synth.random_scene(rng, degrade=bool(i % 2), cocked=0.1, stacked=0.1)
        out.append(synth.render(scene, size=(640, 480), rng=rng).image)
    return out


def one_thread() -> None:
    cv2.setNumThreads(1)
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

        threadpool_limits(1)


# --------------------------------------------------------------------------- runtimes


class DnnNet:
    """A network on OpenCV's ``dnn`` (its classic engine, where OpenCV 5 has two: the faster
    here), run like ``vision.nets.Net``: ``run(*inputs)`` in the model's input order."""

    runtime = "cv2.dnn"

    def __init__(self, path: Path, inputs: Sequence[str]) -> None:
        classic = getattr(cv2.dnn, "ENGINE_CLASSIC", None)
        self.net = (
            cv2.dnn.readNetFromONNX(str(path))
            if classic is None
            else cv2.dnn.readNetFromONNX(str(path), engine=classic)
        )
        self.inputs = tuple(inputs)

    def run(self, *blobs: F32) -> F32:
        for name, blob in zip(self.inputs, blobs, strict=True):
            self.net.setInput(blob, name)
        return np.asarray(self.net.forward(), np.float32)


def ort_net(path: Path) -> Any:
    """The network as the reader runs it (``vision.nets.Net``: ONNX Runtime, one thread)."""
    from vision.nets import Net

    return Net(path)


# --------------------------------------------------------------------------- stage clock


@dataclass
class Clock:
    """Per-stage thread CPU time of one ``read_roll``: each wrapped call charges its stage
    (the outermost wrapped call wins), network calls also charge ``<stage> net``."""

    spent: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    stage: str | None = None
    calls: list[tuple[str, list[F32]]] | None = None  # record network inputs when a list

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **k: Any) -> Any:
            if self.stage is not None:
                return fn(*a, **k)
            self.stage = name
            t = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                self.spent[name] += time.thread_time() - t
                self.stage = None

        return timed

    def net(self, which: str, net: Any) -> Any:
        """``net`` (anything with ``run(*inputs)``) timed, as ``vision`` calls a network:
        ``run`` (the flags) or, through ``vision.nets.run``, ``setInput`` / ``forward``."""
        clock = self

        class Timed:
            def __init__(self) -> None:
                self.blobs: list[F32] = []
                self.metadata = getattr(net, "metadata", {})  # the locator's trained size

            def setInput(self, blob: F32, name: str = "") -> None:  # noqa: N802 (cv2's)
                self.blobs.append(blob)

            def forward(self) -> F32:
                blobs, self.blobs = self.blobs, []
                return self.run(*blobs)

            def run(self, *blobs: F32) -> F32:
                if clock.calls is not None:
                    clock.calls.append((which, [b.copy() for b in blobs]))
                t = time.thread_time()
                out = forward(net, blobs)
                clock.spent[f"{clock.stage or which} net"] += time.thread_time() - t
                return out

        return Timed()


def forward(net: Any, blobs: Sequence[F32]) -> F32:
    """One pass of a network with ``run(*inputs)``, or of a bare ``cv2.dnn.Net`` (a tree from
    before ``vision.nets.Net``: the bench times older commits too)."""
    if hasattr(net, "run"):
        out: F32 = net.run(*blobs)
        return out
    names = ("image", "scalars") if len(blobs) == 2 else ("",)
    for name, blob in zip(names, blobs, strict=True):
        net.setInput(blob, name)
    return np.asarray(net.forward(), np.float32)


@contextlib.contextmanager
def instrumented(clock: Clock, nets: dict[str, Any] | None = None) -> Iterator[None]:
    """``read_roll`` with its stages charged to ``clock`` and, with ``nets``, its three
    networks swapped for those (anything with ``run(*inputs)``: the runtime comparison)."""
    import vision.detect as detect
    import vision.flags as flags
    import vision.nets as vnets

    base = vnets.load_nets()
    model = flags.load_model()
    src = nets or {"locator": base.locator, "value": base.value, "flags": model._net}
    swapped = vnets.Nets(
        locator=clock.net("locator", src["locator"]), value=clock.net("value", src["value"])
    )
    saved: list[tuple[Any, str, Any]] = []

    def patch(obj: Any, name: str, new: Any) -> None:
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, new)

    def loaded(*_a: Any, **_k: Any) -> Any:
        return swapped

    patch(detect, "load_nets", loaded)
    patch(model, "_net", clock.net("flags", src["flags"]))
    stages = {"locate": "locator", "classify": "value", "judge": "flags"}
    stages |= dict.fromkeys(("unsure_ones", "undersized", "recentred"), "second looks")
    for name, stage in stages.items():  # the names vision.detect calls them by
        patch(detect, name, clock.wrap(stage, getattr(detect, name)))
    try:
        yield
    finally:
        for obj, name, old in reversed(saved):
            setattr(obj, name, old)


# --------------------------------------------------------------------------- timing


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, float]:
    """(thread CPU s, wall s) of one call."""
    w, t = time.perf_counter(), time.thread_time()
    fn(*args)
    return time.thread_time() - t, time.perf_counter() - w


def med(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def ms(x: float) -> str:
    return f"{1000 * x:6.2f} ms"


def section_classic(photos: list[tuple[str, Path, np.ndarray]], rounds: int) -> None:
    from classic import Classic

    from vision.detect import read_roll

    peers = {name: Classic(px) for name, px in DATASETS.items()}
    for _, _, image in photos[:3]:  # load the networks, warm the caches
        read_roll(image)
    # the classic pipeline is told each set's die size, as a fixed camera knows it; read_roll
    # is told what a fixed camera learns (vision.locate.DieSizeMemory): the median size its
    # own reads of the set found
    found: dict[str, list[float]] = defaultdict(list)
    for name, _, image in photos:
        size = getattr(read_roll(image), "located_die_px", None)  # older trees: none
        if size is not None:
            found[name].append(size)
    sizes = {name: med(v) for name, v in found.items()}
    fixed = ("die_px" in read_roll.__code__.co_varnames) and bool(sizes)

    def fixed_camera(name: str, image: np.ndarray) -> Any:
        return read_roll(image, die_px=sizes.get(name)) if fixed else read_roll(image)

    kinds = ("read_roll", "alone", "classic")
    cpu: dict[str, list[list[float]]] = {k: [[] for _ in photos] for k in kinds}
    wall: dict[str, list[list[float]]] = {k: [[] for _ in photos] for k in kinds}
    stages: list[dict[str, float]] = []
    for r in range(rounds):
        for i, (name, _, image) in enumerate(photos):
            clock = Clock()
            order = kinds[(i + r) % 3 :] + kinds[: (i + r) % 3]
            for what in order:
                if what == "read_roll":
                    with instrumented(clock):
                        c, w = timed(fixed_camera, name, image)
                    if r == 0:
                        stages.append(dict(clock.spent) | {"total": c})
                elif what == "alone":
                    with instrumented(Clock()):  # as timed as the fixed camera's read
                        c, w = timed(read_roll, image)
                else:
                    c, w = timed(peers[name], image)
                cpu[what][i].append(c)
                wall[what][i].append(w)
    rr = [med(t) for t in cpu["read_roll"]]
    cl = [med(t) for t in cpu["classic"]]
    alone = [med(t) for t in cpu["alone"]]
    ratios = [a / b for a, b in zip(rr, cl, strict=True)]
    print(f"\n== read_roll vs classic: {len(photos)} DEV photos x {rounds} rounds, one thread")
    told = ", ".join(f"{n} {v:.0f} px" for n, v in sizes.items()) if fixed else "not known"
    print(f"  (read_roll as a fixed camera reads, the dice's size learnt: {told})")

    def per_set(times: list[float]) -> None:
        for name in DATASETS:
            idx = [i for i, p in enumerate(photos) if p[0] == name]
            print(
                f"  {name:13s} read_roll {ms(med([times[i] for i in idx]))}   classic "
                f"{ms(med([cl[i] for i in idx]))}   ratio (median per photo) "
                f"{med([times[i] / cl[i] for i in idx]):.2f}"
            )

    per_set(rr)
    print(
        f"  {'all':13s} read_roll {ms(med(rr))}   classic {ms(med(cl))}   "
        f"ratio of medians {med(rr) / med(cl):.2f}   median per-photo ratio {med(ratios):.2f}"
    )
    print(
        f"  (wall: read_roll {ms(med([med(t) for t in wall['read_roll']]))}, classic "
        f"{ms(med([med(t) for t in wall['classic']]))})"
    )
    print("  each photo on its own (its dice's size measured first, no camera to learn it):")
    per_set(alone)
    own = med([a / b for a, b in zip(alone, cl, strict=True)])
    print(f"  {'all':13s} median per-photo ratio {own:.2f}")
    print("\n== read_roll per stage (thread CPU, median over photos; share of the mean total)")
    total_mean = statistics.fmean(s["total"] for s in stages)
    for stage in STAGES:
        if stage == "rest":
            vals = [s["total"] - sum(s.get(x, 0.0) for x in STAGES[:-1]) for s in stages]
            net = [0.0 for _ in stages]
        else:
            vals = [s.get(stage, 0.0) for s in stages]
            net = [s.get(f"{stage} net", 0.0) for s in stages]
        print(
            f"  {stage:13s} {ms(med(vals))}  (mean {ms(statistics.fmean(vals))}, "
            f"{statistics.fmean(vals) / total_mean:5.1%})   of it network "
            f"{ms(statistics.fmean(net))} mean"
        )
    nets_mean = statistics.fmean(sum(v for k, v in s.items() if k.endswith(" net")) for s in stages)
    print(
        f"  {'total':13s} {ms(med([s['total'] for s in stages]))}  (mean {ms(total_mean)}); "
        f"networks {nets_mean / total_mean:.0%} of it"
    )


def section_runtimes(photos: list[tuple[str, Path, np.ndarray]], rounds: int) -> None:
    import vision.flags as flags
    import vision.nets as vnets
    from vision.detect import read_roll

    paths = {
        "locator": vnets.MODELS_DIR / vnets.LOCATOR_FILE,
        "value": vnets.MODELS_DIR / vnets.VALUE_FILE,
        "flags": flags.MODEL_PATH,
    }
    ort = {k: ort_net(p) for k, p in paths.items()}
    runtimes: dict[str, dict[str, Any]] = {
        "cv2.dnn": {k: DnnNet(p, ort[k].inputs) for k, p in paths.items()},
        "onnxruntime": ort,
    }
    # the inputs read_roll gives each network on these photos
    clock = Clock(calls=[])
    with instrumented(clock):
        for _, _, image in photos:
            read_roll(image)
    calls = clock.calls or []
    print(
        f"\n== networks: cv2.dnn {cv2.__version__} vs onnxruntime "
        f"{__import__('onnxruntime').__version__}, NumPy {np.__version__}, "
        f"Python {sys.version.split()[0]}: {len(calls)} calls from {len(photos)} photos"
    )
    for which, blobs in calls[:20]:  # warm both
        for rt in runtimes.values():
            rt[which].run(*blobs)
    per: dict[str, dict[str, list[float]]] = {w: defaultdict(list) for w in paths}
    worst = 0.0
    for r in range(rounds):
        for j, (which, blobs) in enumerate(calls):
            names = list(runtimes) if (j + r) % 2 == 0 else list(reversed(runtimes))
            outs = {}
            for name in names:
                t = time.thread_time()
                outs[name] = runtimes[name][which].run(*blobs)
                per[which][name].append(time.thread_time() - t)
            worst = max(worst, float(np.abs(outs["cv2.dnn"] - outs["onnxruntime"]).max()))
    for which in paths:
        d, o = per[which]["cv2.dnn"], per[which]["onnxruntime"]
        ratio = [a / b for a, b in zip(o, d, strict=True)]
        n = len(d) // rounds
        print(
            f"  {which:8s} {n:4d} calls  dnn {ms(med(d))}  ort {ms(med(o))} per call (median); "
            f"sum per photo dnn {ms(sum(d) / rounds / len(photos))} ort "
            f"{ms(sum(o) / rounds / len(photos))}; ort/dnn median per call {med(ratio):.2f}"
        )
    print(f"  largest output difference between the runtimes: {worst:.2e}")
    # end to end, interleaved photo by photo
    e2e: dict[str, list[list[float]]] = {k: [[] for _ in photos] for k in runtimes}
    for r in range(rounds):
        for i, (_, _, image) in enumerate(photos):
            names = list(runtimes) if (i + r) % 2 == 0 else list(reversed(runtimes))
            for name in names:
                with instrumented(Clock(), runtimes[name]):
                    c, _ = timed(read_roll, image)
                e2e[name][i].append(c)
    d = [med(t) for t in e2e["cv2.dnn"]]
    o = [med(t) for t in e2e["onnxruntime"]]
    print(
        f"  read_roll end to end: dnn {ms(med(d))}  ort {ms(med(o))}  ort/dnn median per "
        f"photo {med([b / a for a, b in zip(d, o, strict=True)]):.2f}"
    )


# --------------------------------------------------------------------------- die size


SIZE_WIDTHS = (160, 192, 224, 256, 288, 320, 384, 448, 512, 640, 800)
"""Capture widths (4:3) the same scenes are rendered at: flat 16 mm dice come out 7-50 px."""


def section_size(n_scenes: int) -> None:
    """How well ``read_roll`` reads dice of each size in px, as the camera's capture size sets
    it: the same ``vision.synth`` scenes (flat 16 mm dice on the pad, clean and degraded)
    rendered at every width of ``SIZE_WIDTHS`` (a smaller capture of the same view: the dice
    take the same share of the frame, fewer pixels). A die is read right when a detection
    within half a side of it has its value; the figures per bin of true side px and the time
    per frame. ``dicepad calibrate`` warns under the size where they fall."""
    from vision import synth
    from vision.detect import read_roll

    bins = (6, 10, 12, 14, 16, 18, 20, 22, 24, 28, 32, 40, 56)
    right: dict[int, int] = defaultdict(int)
    total: dict[int, int] = defaultdict(int)
    asked: dict[int, int] = defaultdict(int)
    wrong: dict[int, int] = defaultdict(int)
    spent: dict[int, list[float]] = defaultdict(list)
    measured: list[float] = []  # the reader's size_px over the true side, dice read right
    for i in range(n_scenes):
        rng = np.random.default_rng(5000 + i)
        scene = synth.random_scene(rng, n_dice=int(rng.integers(3, 7)), die_mm=16.0)
        scene = synth.random_scene(
            rng, n_dice=len(scene.dice), die_mm=16.0, look=scene, degrade=bool(i % 2)
        )
        for width in SIZE_WIDTHS:
            shot = synth.render(scene, size=(width, width * 3 // 4), rng=np.random.default_rng(i))
            t = time.thread_time()
            dice = read_roll(shot.image).dice
            spent[width].append(time.thread_time() - t)
            for truth in shot.truth.dice:
                if truth.cocked or truth.stacked or not truth.on_pad or truth.visible < 0.9:
                    continue
                b = max(k for k in range(len(bins) - 1) if truth.size_px >= bins[k] or k == 0)
                total[b] += 1
                near = [
                    d
                    for d in dice
                    if np.hypot(*np.subtract(d.center_xy, truth.center_xy)) < truth.size_px / 2
                ]
                if any(d.value == truth.value for d in near):
                    right[b] += 1
                    measured.append(near[0].size_px / truth.size_px)
                elif any(d.value is not None for d in near):
                    wrong[b] += 1
                elif near:
                    asked[b] += 1
    print(f"\n== dice read by size in px: {n_scenes} scenes x {len(SIZE_WIDTHS)} capture widths")
    for b in sorted(total):
        n = total[b]
        print(
            f"  {bins[b]:3d}-{bins[b + 1]:3d} px  {n:4d} dice  right {right[b] / n:6.1%}  "
            f"wrong {wrong[b] / n:5.1%}  asked {asked[b] / n:5.1%}  "
            f"missed {(n - right[b] - wrong[b] - asked[b]) / n:5.1%}"
        )
    q = np.percentile(measured, [10, 50, 90])
    print(
        f"  the reader's size_px over the true side: median {q[1]:.2f} (p10 {q[0]:.2f}, "
        f"p90 {q[2]:.2f})"
    )
    for width in SIZE_WIDTHS:
        print(f"  capture {width}x{width * 3 // 4}: read_roll {ms(med(spent[width]))} a frame")


# --------------------------------------------------------------------------- check


READER = r"""
import json, sys
import cv2, numpy as np
sys.path.insert(0, sys.argv[1])
cv2.setNumThreads(1)
from vision.detect import read_roll
out = []
for path in sys.stdin.read().split("\n"):
    if path:
        image = np.load(path) if path.endswith(".npy") else cv2.imread(path)
        out.append(read_roll(image).to_json())
print(json.dumps(out))
"""


def readings(tree: Path, frames: Sequence[Path]) -> list[Any]:
    """The readings (JSON) of ``frames`` by the ``vision`` package under ``tree``."""
    done = subprocess.run(
        [sys.executable, "-c", READER, str(tree)],
        input="\n".join(str(f) for f in frames),
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    )
    result: list[Any] = json.loads(done.stdout)
    return result


def check(rev: str, photos: list[tuple[str, Path]], n_renders: int) -> int:
    """Readings of this tree against those of ``rev``: a git revision of this checkout, or a
    folder holding another tree's ``vision/``."""
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(rev)
        if not (old / "vision").is_dir():
            old = Path(tmp) / "old"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", rev, "vision"], cwd=REPO, capture_output=True, check=True
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(old, filter="data")
        frames = [p for _, p in photos]
        for i, image in enumerate(renders(n_renders)):
            frames.append(Path(tmp) / f"render{i}.npy")
            np.save(frames[-1], image)
        before, after = readings(old, frames), readings(REPO, frames)
    core = ("value", "flags", "center")
    bad = 0  # frames whose dice differ in value, flags or centre (or in number)
    other: dict[str, int] = defaultdict(int)  # dice differing only elsewhere, per field
    dice = 0
    for frame, a, b in zip(frames, before, after, strict=True):
        dice += len(a["dice"])
        if len(a["dice"]) != len(b["dice"]) or any(
            x[k] != y[k] for x, y in zip(a["dice"], b["dice"], strict=True) for k in core
        ):
            bad += 1
            print(f"  differs: {frame.name}\n    {rev}: {a}\n    now: {b}")
            continue
        for x, y in zip(a["dice"], b["dice"], strict=True):
            for k in x:
                if x[k] != y[k]:
                    other[k] += 1
    print(
        f"check against {rev}: {len(frames)} frames ({len(photos)} DEV photos, {n_renders} "
        f"renders), {dice} dice: "
        + (
            f"{bad} frames differ in a value, flag or centre"
            if bad
            else "values, flags and centres identical"
        )
        + "".join(f"; {n} dice differ in {k}" for k, n in sorted(other.items()))
    )
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--every", type=int, default=4, help="every N-th DEV photo (default 4)")
    ap.add_argument("--rounds", type=int, default=3, help="times per photo (default 3)")
    ap.add_argument("--renders", type=int, default=60, help="renders for --check (default 60)")
    ap.add_argument("--scenes", type=int, default=60, help="scenes for the size section")
    ap.add_argument(
        "--only", default="classic,runtimes", help="sections, comma-separated (and: size)"
    )
    ap.add_argument(
        "--check", nargs="?", const="HEAD", metavar="REV", help="compare readings with REV's"
    )
    args = ap.parse_args(argv)
    one_thread()
    sys.path.insert(0, str(shared_dir() / "peers"))
    chosen = sample_photos(args.every)
    if args.check:
        return check(args.check, chosen, args.renders)
    photos = []
    for name, path in chosen:
        image = cv2.imread(str(path))
        if image is None:
            raise SystemExit(f"cannot read {path}")
        photos.append((name, path, image))
    only = set(args.only.split(","))
    if "classic" in only:
        section_classic(photos, args.rounds)
    if "runtimes" in only:
        section_runtimes(photos, args.rounds)
    if "size" in only:
        section_size(args.scenes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
