"""The flags network as shipped: the ONNX file, its two inputs, and the mirrored views it is
asked about.

No public reader judges COCKED / STACKED and no public photo set labels them, so the network is
trained on :mod:`vision.synth` renders, whose ground truth is exact, by ``bench/train_flags.py``
(PyTorch, outside the runtime), which writes ``flags.onnx`` beside the package (``MODEL_PATH``);
ONNX Runtime runs it (``vision.nets``: well under a millisecond per die). ``FlagModel`` takes
the rows of ``vision.flags.features`` and gives (p_cocked, p_stacked) per die.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vision.flags.features import GRID, N_CHANNELS
from vision.nets import ModelDamagedError, ModelMissingError, read_onnx

F32 = npt.NDArray[np.float32]

MODEL_PATH = Path(__file__).resolve().parent.parent / "flags.onnx"
"""The shipped network, ``vision/flags.onnx`` (``bench/train_flags.py --out`` writes it)."""


PLANE_SCALARS = (0, 1, 5, 6, 7, 8)
"""Which scalars the network gets, as constant planes: eu, ev, near, nu, nv, size."""
PLANES = N_CHANNELS + len(PLANE_SCALARS)
"""The network as trained takes the image channels, then the ``PLANE_SCALARS`` as constant
planes (:func:`planes`). As shipped it takes them apart (:func:`inputs`): a convolution of a
constant plane is the constant times a fixed map, so ``bench/train_flags.py`` exports the first
convolution on the image channels plus a per-die sum of those maps (``Deployed``; the same
verdicts to float rounding: the model before ran in 0.096 ms a die so instead of 0.109)."""


SYMMETRIES = (0, 7)
"""The views of a die whose verdicts are averaged (see :func:`symmetry`): as cut out, and
mirrored about its anti-diagonal. A die and its perspective look the same mirrored, and the
network was trained on all eight mirrorings, so two views are two opinions: their mean misses
fewer tilted and stacked dice at the same share of false flags (and raises fewer on real
photos). ``vision.flags.judging.second_look`` takes the second view only where it can change a
flag."""


def symmetry(x: F32, k: int) -> F32:
    """Feature rows with symmetry ``k`` of the square applied (bits: 1 flips u, 2 flips v,
    4 swaps u and v, in that order): the image channels and the direction scalars alike."""
    x = np.atleast_2d(x)
    n = len(x)
    g2 = GRID * GRID
    img = _mirrored(x[:, : N_CHANNELS * g2].reshape(n, N_CHANNELS, GRID, GRID), k)
    sc = _mirrored_scalars(x[:, N_CHANNELS * g2 :], k)
    out: F32 = np.concatenate([img.reshape(n, -1), sc], axis=1, dtype=np.float32)
    return out


def _mirrored(img: F32, k: int) -> F32:
    """N x C x GRID x GRID images with symmetry ``k`` applied (a view: no pixel is copied)."""
    if k & 1:
        img = img[:, :, :, ::-1]
    if k & 2:
        img = img[:, :, ::-1, :]
    if k & 4:
        img = img.transpose(0, 1, 3, 2)
    return img


def _mirrored_scalars(sc: F32, k: int) -> F32:
    """The ``SCALARS`` rows with symmetry ``k`` applied (a copy): directions flip and swap."""
    sc = sc.copy()  # eu, ev, |eu|, |ev|, |eu|+|ev|, near, nu, nv, size
    if k & 1:
        sc[:, [0, 6]] *= -1
    if k & 2:
        sc[:, [1, 7]] *= -1
    if k & 4:
        sc[:, [0, 1, 2, 3, 6, 7]] = sc[:, [1, 0, 3, 2, 7, 6]]
    return sc


def planes(x: F32, views: Sequence[int] = (0,)) -> F32:
    """Feature vectors (rows) as the trained network's N x PLANES x GRID x GRID input: the
    :func:`inputs` with the scalars spread into constant planes (training's form; run time
    keeps them apart). With several ``views`` (symmetries, see :func:`symmetry`), all rows in
    the first view, then all in the next, ..."""
    image, scalars = inputs(x, views)
    out: F32 = np.empty((len(image), PLANES, GRID, GRID), np.float32)
    out[:, :N_CHANNELS] = image
    out[:, N_CHANNELS:] = scalars[:, :, None, None]
    return out


def inputs(x: F32, views: Sequence[int] = (0,)) -> tuple[F32, F32]:
    """Feature rows as the shipped network's two inputs: the image channels (N x N_CHANNELS x
    GRID x GRID) and the ``PLANE_SCALARS`` (N x 6); with several ``views``, all rows in the
    first view, then all in the next, ... Written straight into the two arrays: the same
    numbers as ``inputs(symmetry(x, k))`` without the intermediate copies (a frame's input is
    ~20 KB per die and view)."""
    x = np.atleast_2d(x)
    n = len(x)
    g2 = GRID * GRID
    img = x[:, : N_CHANNELS * g2].reshape(n, N_CHANNELS, GRID, GRID)
    image: F32 = np.empty((len(views) * n, N_CHANNELS, GRID, GRID), np.float32)
    scalars: F32 = np.empty((len(views) * n, len(PLANE_SCALARS)), np.float32)
    for j, k in enumerate(views):
        image[j * n : (j + 1) * n] = _mirrored(img, k)
        scalars[j * n : (j + 1) * n] = _mirrored_scalars(x[:, N_CHANNELS * g2 :], k)[
            :, list(PLANE_SCALARS)
        ]
    return image, scalars


class FlagModel:
    """The trained network (ONNX, run by ``vision.nets``): :func:`inputs` in, N x 2 logits
    (cocked, stacked) out."""

    def __init__(self, path: Path) -> None:
        try:
            self._net = read_onnx(path)
        except (ModelMissingError, ModelDamagedError) as exc:
            raise RuntimeError(
                f"flag model {path} is missing or damaged; run bench/train_flags.py ({exc})"
            ) from exc
        self._lock = threading.Lock()  # one reader at a time, as the dice networks
        self.path = path

    def predict(self, x: F32, views: Sequence[int] = (0,)) -> F32:
        """Rows of features in, rows of (p_cocked, p_stacked) out: the mean over the ``views``
        (symmetries, see :func:`symmetry`) of each die, all in one forward pass."""
        x = np.atleast_2d(x)
        n = len(x)
        if n == 0:
            return np.zeros((0, 2), np.float32)
        image, scalars = inputs(x, views)
        with self._lock:
            logits = self._net.run(image, scalars).reshape(-1, 2)
        p = 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))
        if len(views) == 1:  # a mean of one
            return np.asarray(p, np.float32)
        return np.asarray(p.reshape(len(views), n, 2).mean(axis=0), np.float32)


@functools.lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> FlagModel:
    """The trained model (cached). A missing or broken file is an error naming it."""
    if not path.is_file():
        raise RuntimeError(f"flag model {path} is missing; run bench/train_flags.py")
    return FlagModel(path)
