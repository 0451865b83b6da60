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
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import cv2  # noqa: E402
from speed_bench.check import check  # noqa: E402
from speed_bench.common import one_thread, sample_photos, shared_dir  # noqa: E402
from speed_bench.runtimes import section_runtimes  # noqa: E402
from speed_bench.size import section_size  # noqa: E402
from speed_bench.versus_classic import section_classic  # noqa: E402


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
