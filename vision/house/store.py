"""The house folder on disk: ``examples.npz`` (the set) and ``model.npz`` (its fitted model,
a cache). Both are written to a temporary file and renamed, so a power cut leaves the old
file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.house.examples import Example, HouseSet
from vision.house.model import HouseModel, fit, network_digest
from vision.nets import Net

EXAMPLES_FILE = "examples.npz"
MODEL_FILE = "model.npz"


class HouseFolderError(ValueError):
    """The house folder cannot be read: damaged or not a house folder."""


def load_set(folder: Path) -> HouseSet:
    """The set in ``folder``; an empty set when the folder or its file does not exist yet."""
    path = Path(folder) / EXAMPLES_FILE
    if not path.is_file():
        return HouseSet()
    try:  # opened here: NumPy's own open stays open when the archive is damaged
        with path.open("rb") as f, np.load(f, allow_pickle=False) as z:
            views, values = z["views"], z["values"]
            origins, refs, added = z["origins"], z["refs"], z["added"]
            return HouseSet(
                tuple(
                    Example(
                        np.ascontiguousarray(views[i]),
                        int(values[i]),
                        str(origins[i]),
                        str(refs[i]),
                        float(added[i]),
                    )
                    for i in range(len(values))
                )
            )
    except (OSError, KeyError, ValueError, IndexError, zipfile.BadZipFile) as exc:
        raise HouseFolderError(f"cannot read the house set {path}: {exc}") from exc


def save_set(folder: Path, house: HouseSet) -> None:
    """Write ``house`` into ``folder`` (created if need be), atomically."""
    ex = house.examples
    side = ex[0].view.shape[0] if ex else 0
    _write(
        Path(folder) / EXAMPLES_FILE,
        views=np.stack([e.view for e in ex]) if ex else np.zeros((0, side, side, 3), np.uint8),
        values=np.array([e.value for e in ex], dtype=np.int8),
        origins=np.array([e.origin for e in ex], dtype=str),
        refs=np.array([e.ref for e in ex], dtype=str),
        added=np.array([e.added for e in ex], dtype=np.float64),
    )


def _write(path: Path, **arrays: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_arrays(path: Path, **arrays: Any) -> None:
    """Write arrays to ``path`` atomically (the fitted model's cache)."""
    _write(path, **arrays)


def house_model(folder: Path, net: Net) -> HouseModel | None:
    """The house model of ``folder`` for the value network ``net``: the cached fit when it was
    made from exactly this set on exactly this network, else fitted now and cached (None: no
    set, or too small to fit)."""
    house = load_set(folder)
    cache = Path(folder) / MODEL_FILE
    network = network_digest(net)
    if cache.is_file():
        try:
            with cache.open("rb") as f, np.load(f, allow_pickle=False) as z:
                if str(z["digest"]) == house.digest() and str(z["network"]) == network:
                    return HouseModel(
                        mean=z["mean"],
                        scale=z["scale"],
                        weights=z["weights"],
                        bias=z["bias"],
                        bank=z["bank"],
                        bank_values=z["bank_values"],
                        near=float(z["near"]),
                        near_voted=float(z["near_voted"]),
                        floor=float(z["floor"]),
                        held=_held(z["held"]),
                        network=network,
                        digest=house.digest(),
                    )
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            pass  # a damaged cache is fitted again
    model = fit(house, net)
    if model is not None:
        # a read-only folder still reads, fitting each time
        with contextlib.suppress(OSError):
            write_arrays(
                cache,
                mean=model.mean,
                scale=model.scale,
                weights=model.weights,
                bias=model.bias,
                bank=model.bank,
                bank_values=model.bank_values,
                near=np.float64(model.near),
                near_voted=np.float64(model.near if model.near_voted is None else model.near_voted),
                floor=np.float64(model.floor),
                held=np.array(model.held if model.held is not None else (), dtype=np.int64),
                network=np.array(model.network),
                digest=np.array(model.digest),
            )
    return model


def _held(stored: npt.NDArray[np.int64]) -> tuple[int, int, int] | None:
    """The cached held-back figure (an empty array: none)."""
    if stored.shape != (3,):
        return None
    right, wrong, asked = (int(v) for v in stored)
    return right, wrong, asked
