"""Quantize the locator and value networks to 8-bit integers for the reader (run on demand,
with the training environment: ``onnx`` and ONNX Runtime's quantization tools).

    /tmp/trainenv/bin/python bench/quantize_models.py FP32_DIR OUT_DIR [--renders N]

``FP32_DIR`` holds the networks as ``bench/train_vision.py`` exports them (32-bit floats: the
masters, kept in ``vision/models/fp32``); ``OUT_DIR`` gets ``locator.onnx`` and ``value.onnx``
with every convolution but the last layer in 8 bits (ONNX QDQ: per-channel signed weights,
unsigned activations), which ``read_roll`` runs. Why: the networks are most of the reading's
time, and ONNX Runtime runs 8-bit convolutions 1.7x (locator) and 2.3x (value network) faster
than 32-bit ones on one x86 thread with the same verdicts (``bench/bench_speed.py``,
``bench/bench_vision.py``); ARM's integer dot products serve the Pi 5 the same way.

The activations' ranges are calibrated on ``vision.synth`` renders only -- tables of every
style and the wide scenes, read as ``read_roll`` reads them -- never on photos: a quantized
network held out of a photo source (``bench/loso_vision.py``) has then seen nothing of it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from locator_scale import copy_metadata  # noqa: E402
from onnxruntime.quantization import (  # noqa: E402
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402

from vision import synth  # noqa: E402
from vision.detect import read_roll  # noqa: E402
from vision.house.learn import learning_params  # noqa: E402
from vision.house.views import die_view  # noqa: E402
from vision.locate import locator_input  # noqa: E402
from vision.nets import F32, LOCATOR_FILE, U8, VALUE_FILE, to_blob  # noqa: E402
from vision.params import DetectorParams  # noqa: E402


def renders(n: int, seed: int) -> Iterator[U8]:
    """``n`` rendered tables: half classic (every die style, some degraded), half wide."""
    rng = np.random.default_rng(seed)
    for k in range(n):
        if k % 2:
            yield synth.render_wide(synth.wide_scene(rng), rng=rng).image
        else:
            scene = synth.random_scene(rng, cocked=0.15, stacked=0.1, degrade=bool(k % 4 == 0))
            yield synth.render(scene, rng=rng).image


class Batches(CalibrationDataReader):  # type: ignore[misc]
    def __init__(self, blobs: list[F32]) -> None:
        self._it = iter(blobs)

    def get_next(self) -> dict[str, F32] | None:
        blob = next(self._it, None)
        return None if blob is None else {"x": blob}


def quantize(src: Path, dst: Path, blobs: list[F32]) -> None:
    """``src`` in 8 bits but its last layer: that layer's outputs share one scale when
    quantized, and the locator's heat, offsets and log size span such different ranges that the
    size would keep a few steps (drawn dice read a third small)."""
    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        graph = onnx.load(str(pre)).graph
        last = [n.name for n in graph.node if n.op_type in ("Conv", "Gemm")][-1]
        quantize_static(
            str(pre),
            str(dst),
            Batches(blobs),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=[last],
        )
    copy_metadata(src, dst)  # the locator's trained die size (bench/locator_scale.py)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("fp32", type=Path, help="folder of the 32-bit networks")
    ap.add_argument("out", type=Path, help="folder for the 8-bit networks")
    ap.add_argument("--renders", type=int, default=400)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    params = learning_params(DetectorParams(models_dir=str(args.fp32)))
    locator_blobs: list[F32] = []
    views: list[U8] = []
    for image in renders(args.renders, args.seed):
        small, _ = locator_input(image, params.locator_long_side_px)
        locator_blobs.append(to_blob([small]))
        # every located peak the value network is shown, dice or not (as a teaching read)
        views += [die_view(image, d, params) for d in read_roll(image, params=params).dice]
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(views))
    value_blobs = [
        to_blob([np.ascontiguousarray(np.rot90(views[i], int(rng.integers(4)))) for i in chunk])
        for chunk in np.array_split(order, max(1, len(order) // 32))
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    quantize(args.fp32 / LOCATOR_FILE, args.out / LOCATOR_FILE, locator_blobs)
    quantize(args.fp32 / VALUE_FILE, args.out / VALUE_FILE, value_blobs)
    print(f"wrote {args.out}: calibrated on {len(locator_blobs)} renders, {len(views)} cuts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
