"""The three small networks of the dice reader (locator, value, flags), run by ONNX Runtime
(no PyTorch at run time). ``bench/train_vision.py`` trains the first two and documents their
layouts; the constants here are the contract between that script and the reader. The reader
runs those two quantized to 8 bits (``bench/quantize_models.py``, from the 32-bit masters in
``models/fp32``): 1.7x and 2.3x faster on one thread, the same readings on the DEV photos,
the renders and a photo source held out.

Why ONNX Runtime and not OpenCV's ``dnn``: on the very inputs ``read_roll`` gives them, one
thread each, it runs the locator 0.66x, the value network 0.57x and the flags network 0.62x
the time of OpenCV 5.0's ``dnn`` (0.86x, 0.65x, 0.63x of OpenCV 4.11's on the Pi's bookworm
pins), and ``read_roll`` end to end 0.78x (0.87x on bookworm's pins); outputs agree to 3e-5
(``bench/bench_speed.py``). One runtime reads every network: :func:`read_onnx`.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


class Net:
    """One ONNX network on ONNX Runtime's CPU provider: one thread, run in the caller's thread
    (no pool of spinning workers beside the camera and the server), every graph optimisation
    (fused convolutions, and on x86 the blocked NCHWc layout: 1.25x faster than the basic
    level on the locator)."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only
        try:
            self._session: Any = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # ORT raises its own (untyped) errors for a bad file
            raise ModelDamagedError(f"cannot read the network {path}: {exc}") from exc
        self.path = path
        self.metadata: dict[str, str] = dict(self._session.get_modelmeta().custom_metadata_map)
        self.inputs: tuple[str, ...] = tuple(i.name for i in self._session.get_inputs())
        self.outputs: tuple[str, ...] = tuple(o.name for o in self._session.get_outputs())

    def run(self, *blobs: F32) -> F32:
        """One forward pass: the inputs in the model's order, its first output back."""
        if len(blobs) != len(self.inputs):
            raise ValueError(f"{self.path.name} takes {len(self.inputs)} inputs, got {len(blobs)}")
        out = self._session.run(self.outputs[:1], dict(zip(self.inputs, blobs, strict=True)))[0]
        return np.asarray(out, dtype=np.float32)

    def run_all(self, *blobs: F32) -> tuple[F32, ...]:
        """One forward pass, every output in the model's order."""
        if len(blobs) != len(self.inputs):
            raise ValueError(f"{self.path.name} takes {len(self.inputs)} inputs, got {len(blobs)}")
        outs = self._session.run(None, dict(zip(self.inputs, blobs, strict=True)))
        return tuple(np.asarray(o, dtype=np.float32) for o in outs)


NetArg = Any
"""How a :class:`Net` is typed where it is passed around (``Nets``, :func:`run`,
``vision.classify.classify``): loosely, since the training scripts still hand :func:`run` the
``cv2.dnn.Net`` they read (``bench/train_vision.py``'s hard-negative mining)."""


TRAINED_DIE_PX = "dicepad.trained_die_px"
"""The locator's ONNX metadata key for the die size it was trained at: the geometric mean of
its training dice's axis-aligned extents in locator-input px (``bench/locator_scale.py``)."""


@dataclass
class Nets:
    """The loaded locator and value networks (:class:`Net`); ``lock`` serialises their use by
    one reader."""

    locator: NetArg
    value: NetArg
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def trained_die_px(self) -> float | None:
        """The die size the locator was trained at (:data:`TRAINED_DIE_PX`), or None when its
        file does not say (a locator exported before it did, or a ``cv2.dnn.Net``)."""
        value = getattr(self.locator, "metadata", {}).get(TRAINED_DIE_PX)
        try:
            size = float(value) if value is not None else None
        except ValueError:
            raise ModelDamagedError(f"locator metadata {TRAINED_DIE_PX}={value!r}") from None
        return size if size is not None and 4.0 <= size <= 256.0 else None


class ModelMissingError(FileNotFoundError):
    """A model file is absent: retrain with ``bench/train_vision.py`` or reinstall."""


class ModelDamagedError(RuntimeError):
    """A model file is there but ONNX Runtime cannot read it: retrain or reinstall."""


@functools.lru_cache(maxsize=8)
def load_nets(models_dir: str | None = None) -> Nets:
    """Read (once per folder) the locator and value networks from ``models_dir``."""
    folder = MODELS_DIR if models_dir is None else Path(models_dir)
    paths = [folder / LOCATOR_FILE, folder / VALUE_FILE]
    for path in paths:
        if not path.is_file():
            raise ModelMissingError(f"dice model not found: {path}")
    return Nets(locator=read_onnx(paths[0]), value=read_onnx(paths[1]))


def read_onnx(path: Path) -> Net:
    """An ONNX model, ready to run: the one place a network is read."""
    if not Path(path).is_file():
        raise ModelMissingError(f"model not found: {path}")
    return Net(Path(path))


def to_blob(images: list[U8]) -> F32:
    """BGR uint8 images of one size -> the NCHW float blob both networks expect:
    ``(pixel - PIXEL_MEAN) * PIXEL_SCALE`` in float32, bit for bit what
    ``cv2.dnn.blobFromImages`` gives (``tests/test_vision_nets.py``), without ``cv2.dnn``: a
    locator input (320 x 320) in 0.10 ms against its 0.17 (its planes split by OpenCV, then
    converted), a batch of value patches in one strided NumPy pass (as fast as it)."""
    h, w = images[0].shape[:2]
    blob: F32 = np.empty((len(images), 3, h, w), dtype=np.float32)
    mean = np.float32(PIXEL_MEAN)
    if len(images) == 1 and h * w >= 64 * 64:
        for c, plane in enumerate(cv2.split(images[0])):
            np.subtract(plane, mean, out=blob[0, c], dtype=np.float32)
    else:
        batch = np.stack(images)
        np.subtract(batch.transpose(0, 3, 1, 2), mean, out=blob, dtype=np.float32)
    blob *= np.float32(PIXEL_SCALE)
    return blob


EMBEDDING = "embedding"
"""The value network's second output: the features its last layer reads (``vision.house``)."""


def embed(net: Net, blob: F32) -> tuple[F32, F32]:
    """The value network's logits and :data:`EMBEDDING` for a blob of patches; a network
    exported before it had one is refused by name (retrain, or reinstall the models)."""
    if EMBEDDING not in net.outputs:
        raise ModelDamagedError(
            f"{net.path} has no {EMBEDDING!r} output: the house model needs a value network"
            " exported by bench/train_vision.py since Vision IV"
        )
    outs = net.run_all(blob)
    return outs[0], outs[net.outputs.index(EMBEDDING)]


def run(net: NetArg, blob: F32) -> F32:
    """One forward pass of a one-input network: a :class:`Net`, or a ``cv2.dnn.Net`` that a
    caller read itself (``bench/train_vision.py`` mines the locator's hits with one)."""
    if isinstance(net, Net):
        return net.run(blob)
    net.setInput(blob)
    return np.asarray(net.forward(), dtype=np.float32)
