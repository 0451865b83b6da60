"""The two small networks of the dice reader, run by OpenCV's ``dnn`` module (no PyTorch at
run time). ``bench/train_vision.py`` trains them and documents their layouts; the constants here
are the contract between that script and the reader.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

MODELS_DIR = Path(__file__).resolve().parent / "models"
LOCATOR_FILE = "locator.onnx"
VALUE_FILE = "value.onnx"

LOCATOR_STRIDE = 4
"""Frame-to-heat-map stride of the locator (input px per output cell)."""
LOCATOR_MULTIPLE = 8
"""The locator's input sides must be multiples of this (its deepest stride)."""
SIZE_UNIT_PX = 16.0
"""The locator's size channel is ``log(die size in locator-input px / SIZE_UNIT_PX)``."""
NOT_A_DIE = 0
"""Class 0 of the value network: the patch is not centred on a die; classes 1-6 are values."""

PIXEL_MEAN = 127.5
PIXEL_SCALE = 1.0 / 255.0

F32 = npt.NDArray[np.float32]
U8 = npt.NDArray[np.uint8]


@dataclass
class Nets:
    """The loaded networks; ``lock`` serialises use because a ``cv2.dnn.Net`` is stateful."""

    locator: cv2.dnn.Net
    value: cv2.dnn.Net
    lock: threading.Lock = field(default_factory=threading.Lock)


class ModelMissingError(FileNotFoundError):
    """A model file is absent: retrain with ``bench/train_vision.py`` or reinstall."""


@functools.lru_cache(maxsize=8)
def load_nets(models_dir: str | None = None) -> Nets:
    """Read (once per folder) the locator and value networks from ``models_dir``."""
    folder = MODELS_DIR if models_dir is None else Path(models_dir)
    paths = [folder / LOCATOR_FILE, folder / VALUE_FILE]
    for path in paths:
        if not path.is_file():
            raise ModelMissingError(f"dice model not found: {path}")
    return Nets(locator=read_onnx(paths[0]), value=read_onnx(paths[1]))


def read_onnx(path: Path) -> cv2.dnn.Net:
    """An ONNX model for OpenCV's ``dnn``, on its classic engine: for these small convolution
    stacks on one CPU core it runs the value network's batches ~20 % faster than the new
    engine OpenCV 5 picks by default, and the locator as fast (``bench/bench_vision.py``).

    OpenCV 4 has only that engine and no ``engine`` argument. It must work too: a Raspberry
    Pi on bookworm runs OpenCV 4.11 (the last built for its NumPy 1.24, see
    ``server/pi_install.py``)."""
    classic = getattr(cv2.dnn, "ENGINE_CLASSIC", None)
    if classic is None:
        return cv2.dnn.readNetFromONNX(str(path))
    return cv2.dnn.readNetFromONNX(str(path), engine=classic)


def to_blob(images: list[U8]) -> F32:
    """BGR uint8 images of one size -> the NCHW float blob both networks expect."""
    blob = cv2.dnn.blobFromImages(
        images,
        scalefactor=PIXEL_SCALE,
        mean=(PIXEL_MEAN, PIXEL_MEAN, PIXEL_MEAN),
        swapRB=False,
        crop=False,
    )
    return np.asarray(blob, dtype=np.float32)


def run(net: cv2.dnn.Net, blob: F32) -> F32:
    """One forward pass."""
    net.setInput(blob)
    return np.asarray(net.forward(), dtype=np.float32)
