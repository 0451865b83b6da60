"""Give a value network exported before Vision IV its ``embedding`` output (run on demand, with
the training environment's ``onnx``):

    /tmp/trainenv/bin/python bench/embed_value.py MODELS_DIR/value.onnx [OUT]

The house model (``vision.house``) fits its head on the features the network's last layer
reads. ``bench/train_vision.py`` now exports them itself; this names the same tensor (the
flattened global pooling before the last layer) in an older file, the weights untouched, so its
verdicts stay bit for bit what they were.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx

EMBEDDING = "embedding"


def add_embedding(src: Path, dst: Path) -> None:
    model = onnx.load(str(src))
    if any(o.name == EMBEDDING for o in model.graph.output):
        if src != dst:
            onnx.save(model, str(dst))
        return
    flat = [n for n in model.graph.node if n.op_type == "Flatten"][-1]
    gemm = [n for n in model.graph.node if n.op_type == "Gemm"][-1]
    width = next(i.dims[1] for i in model.graph.initializer if i.name == gemm.input[1])
    old = flat.output[0]
    flat.output[0] = EMBEDDING
    for node in model.graph.node:
        for k, name in enumerate(node.input):
            if name == old:
                node.input[k] = EMBEDDING
    model.graph.output.append(
        onnx.helper.make_tensor_value_info(EMBEDDING, onnx.TensorProto.FLOAT, ["n", width])
    )
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    src = Path(sys.argv[1])
    add_embedding(src, Path(sys.argv[2]) if len(sys.argv) == 3 else src)
    return 0


if __name__ == "__main__":
    sys.exit(main())
