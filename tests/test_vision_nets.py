"""``vision.nets``: the one place the reader's networks are read and run (ONNX Runtime)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import cv2
import numpy as np
import pytest
from packaging.requirements import Requirement

from server.pi_install import ONNXRUNTIME_PIN, RELEASES, numpy_plan
from vision import flags, synth
from vision.classify import die_patch, softmax
from vision.locate import locator_input
from vision.nets import (
    LOCATOR_FILE,
    MODELS_DIR,
    VALUE_FILE,
    ModelDamagedError,
    ModelMissingError,
    Net,
    load_nets,
    read_onnx,
    run,
    to_blob,
)

REPO = Path(__file__).resolve().parent.parent
MASTERS = MODELS_DIR / "fp32"  # the networks as trained (bench/quantize_models.py reads them)
MODELS = {
    "locator": MASTERS / LOCATOR_FILE,
    "value": MASTERS / VALUE_FILE,
    "flags": flags.MODEL_PATH,
}


def random_inputs(which: str, rng: np.random.Generator) -> list[np.ndarray]:
    if which == "locator":
        image = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8)
        return [to_blob([image])]
    if which == "value":
        patches = [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(5)]
        return [to_blob(patches)]
    image = rng.normal(size=(4, 3, 40, 40)).astype(np.float32)
    return [image, rng.normal(size=(4, 6)).astype(np.float32)]


@pytest.mark.parametrize("which", sorted(MODELS))
def test_every_network_runs_as_opencv_dnn_runs_it(which: str) -> None:
    """The models were trained and checked with OpenCV's dnn: the runtime that reads them now
    gives the same outputs (to float rounding), batched as the reader batches them."""
    net = read_onnx(MODELS[which])
    assert isinstance(net, Net)
    blobs = random_inputs(which, np.random.default_rng(3))
    out = net.run(*blobs)
    reference = cv2.dnn.readNetFromONNX(str(MODELS[which]))
    for name, blob in zip(net.inputs, blobs, strict=True):
        reference.setInput(blob, name)
    # the value network has two outputs (its verdict and its embedding), which OpenCV 4.11 and
    # 5.0 order differently: the verdict is the one of the verdict's shape
    outs = reference.forward(reference.getUnconnectedOutLayersNames())
    (expected,) = [np.asarray(o, np.float32) for o in outs if o.shape == out.shape]
    assert out.dtype == np.float32
    assert out.shape == expected.shape
    assert np.abs(out - expected).max() < 1e-3
    # one patch alone reads as it does in a batch (the reader batches its looks)
    if which == "value":
        alone = net.run(blobs[0][2:3])
        assert np.abs(alone - out[2:3]).max() < 1e-5


def test_the_8_bit_networks_the_reader_runs_agree_with_their_masters() -> None:
    """``read_roll`` runs the locator and value networks quantized to 8 bits
    (``bench/quantize_models.py``): faster, and the verdicts of the 32-bit networks they were
    made from, on rendered tables and on each rendered die cut as the reader cuts it."""
    quick, master = load_nets(), load_nets(str(MASTERS))
    assert quick.value.path.stat().st_size < 0.5 * master.value.path.stat().st_size
    rng = np.random.default_rng(9)
    patches = []
    for _ in range(4):
        shot = synth.render(synth.random_scene(rng, n_dice=6), rng=rng)
        blob = to_blob([locator_input(shot.image, 320)[0]])
        heat_q = 1 / (1 + np.exp(-quick.locator.run(blob)[0, 0]))
        heat_m = 1 / (1 + np.exp(-master.locator.run(blob)[0, 0]))
        assert np.abs(heat_q - heat_m).max() < 0.1
        for t in shot.truth.dice:
            patches.append(die_patch(shot.image, t.center_xy, 1.2 * t.size_px, 32))
    pq = softmax(quick.value.run(to_blob(patches)))
    pm = softmax(master.value.run(to_blob(patches)))
    assert (pq.argmax(axis=1) == pm.argmax(axis=1)).mean() >= 0.95
    assert np.abs(pq - pm).mean() < 0.02


def test_the_reader_uses_one_runtime_for_all_three_networks() -> None:
    nets = load_nets()
    model = flags.load_model()
    assert all(isinstance(n, Net) for n in (nets.locator, nets.value, model._net))
    assert model._net.inputs == ("image", "scalars")


def test_run_takes_a_dnn_net_read_by_a_caller_too() -> None:
    """``bench/train_vision.py`` mines the locator's hits with a cv2.dnn.Net it reads itself."""
    blob = random_inputs("locator", np.random.default_rng(1))[0]
    ours = run(read_onnx(MODELS["locator"]), blob)
    theirs = run(cv2.dnn.readNetFromONNX(str(MODELS["locator"])), blob)
    assert np.abs(ours - theirs).max() < 1e-3


def test_a_wrong_number_of_inputs_is_an_error() -> None:
    blob = random_inputs("flags", np.random.default_rng(2))[0]
    with pytest.raises(ValueError, match="takes 2 inputs, got 1"):
        flags.load_model()._net.run(blob)


def test_missing_and_damaged_models_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="not found"):
        read_onnx(tmp_path / "nope.onnx")
    with pytest.raises(ModelMissingError, match="dice model not found"):
        load_nets(str(tmp_path))
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    with pytest.raises(ModelDamagedError, match=r"broken\.onnx"):
        read_onnx(broken)
    with pytest.raises(RuntimeError, match=r"missing or damaged; run bench/train_flags\.py"):
        flags.FlagModel(broken)


def test_the_runtime_runs_on_one_thread_in_the_callers() -> None:
    options = load_nets().value._session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert options.inter_op_num_threads == 1


@pytest.mark.parametrize("codename", sorted(RELEASES))
def test_the_pi_gets_an_onnxruntime_the_project_accepts(codename: str) -> None:
    """Every release's constraints pin the ONNX Runtime whose aarch64 wheels were checked for
    its Python and NumPy, and the project's own requirement admits that version."""
    text = numpy_plan(codename, None).constraints_file()
    pins = [Requirement(line) for line in text.splitlines() if line and not line.startswith("#")]
    ort = [p for p in pins if p.name == "onnxruntime"]
    assert [str(p) for p in ort] == [ONNXRUNTIME_PIN]
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    ours = {Requirement(t).name: Requirement(t) for t in data["project"]["dependencies"]}
    version = ONNXRUNTIME_PIN.split("==")[1]
    assert version in ours["onnxruntime"].specifier


@pytest.mark.parametrize(
    ("shape", "n"), [((320, 320, 3), 1), ((240, 320, 3), 1), ((32, 32, 3), 1), ((32, 32, 3), 7)]
)
def test_to_blob_is_bit_for_bit_opencvs_blob(shape: tuple[int, int, int], n: int) -> None:
    """The blob is built with NumPy (faster); the networks were trained and checked on
    ``cv2.dnn.blobFromImages``'s numbers, so they must be the very same floats, every pixel
    value included."""
    rng = np.random.default_rng(n)
    images = [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(n)]
    images[0][0, : min(256, shape[1])] = np.arange(min(256, shape[1]))[:, None]
    expected = cv2.dnn.blobFromImages(
        images, 1.0 / 255.0, mean=(127.5, 127.5, 127.5), swapRB=False, crop=False
    )
    blob = to_blob(images)
    assert blob.dtype == np.float32
    assert blob.flags.c_contiguous
    assert np.array_equal(blob, expected)
    turned = [np.rot90(im) for im in images]  # views, not contiguous: classify's quarter turns
    assert np.array_equal(
        to_blob(turned),
        cv2.dnn.blobFromImages(
            [np.ascontiguousarray(t) for t in turned],
            1.0 / 255.0,
            mean=(127.5, 127.5, 127.5),
            swapRB=False,
            crop=False,
        ),
    )
