"""The flags network (``LAYOUTS``), what ``vision.flags`` makes of it, and its deployed form
written as ONNX."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from vision.flags.features import GRID, N_CHANNELS
from vision.flags.network import PLANES, SYMMETRIES, planes, symmetry

LAYOUTS = {"all-strided": (False, False), "strided": (False, True), "pooled": (True, True)}
"""How the second and third convolutions halve the patch: pooling a full-size output (True) or
by their own stride (False). Multiply-adds per die at 24 / 32 / 48 channels, as run (see
``Deployed``): 1.4 M, 2.5 M (shipped before), 4.5 M."""


class Net(torch.nn.Module):
    """Three 3x3 convolutions (``widths`` channels; the first of stride 2, the others halving
    as ``layout`` says, see ``LAYOUTS``), then 64 units. The ONNX file carries the layout and
    the widths: no run-time change."""

    def __init__(
        self, widths: tuple[int, int, int] = (24, 32, 48), layout: str = "all-strided"
    ) -> None:
        super().__init__()
        layers: list[torch.nn.Module] = [
            torch.nn.Conv2d(PLANES, widths[0], 3, stride=2, padding=1),
            torch.nn.ReLU(),
        ]
        width = widths[0]
        for out, pooled in zip(widths[1:], LAYOUTS[layout], strict=True):
            if pooled:
                layers += [
                    torch.nn.Conv2d(width, out, 3, padding=1),
                    torch.nn.ReLU(),
                    torch.nn.MaxPool2d(2),
                ]
            else:  # halve by the stride: a quarter of the arithmetic of pooling a full output
                layers += [torch.nn.Conv2d(width, out, 3, stride=2, padding=1), torch.nn.ReLU()]
            width = out
        side = GRID // 8
        self.body = torch.nn.Sequential(
            *layers,
            torch.nn.Flatten(),
            torch.nn.Linear(width * side * side, 64),
            torch.nn.ReLU(),
            torch.nn.Linear(64, 2),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def predict(net: torch.nn.Module, x: np.ndarray) -> np.ndarray:
    """What ``vision.flags`` makes of the network: the mean over ``SYMMETRIES`` of each die."""
    with torch.no_grad():
        out = [
            torch.stack(
                [
                    torch.sigmoid(net(torch.from_numpy(planes(symmetry(x[i : i + 512], k)))))
                    for k in SYMMETRIES
                ]
            ).mean(dim=0)
            for i in range(0, len(x), 512)
        ]
    return np.asarray(torch.cat(out).numpy())


class Deployed(torch.nn.Module):
    """The trained network as run by ``vision.flags``: the same function, less arithmetic.

    The scalars enter the trained network as constant planes, and a convolution of a constant
    plane is that constant times a fixed map (the kernel's sum inside the patch, less at the
    zero-padded border). So the first convolution runs on the image channels only and each die's
    scalars add their maps (one small matrix product): exact to float rounding, and a fifth of
    the network's multiply-adds fewer. Its ``Flatten`` becomes a reshape to a fixed width
    (OpenCV's importer misjudges the width after the added maps otherwise)."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        first = net.body[0]
        k = PLANES - N_CHANNELS
        self.image = torch.nn.Conv2d(
            N_CHANNELS,
            first.out_channels,
            3,
            stride=first.stride,
            padding=first.padding,
            bias=False,
        )
        with torch.no_grad():
            self.image.weight.copy_(first.weight[:, :N_CHANNELS])
            ones = torch.ones(1, 1, GRID, GRID)
            maps = torch.cat(
                [
                    torch.nn.functional.conv2d(
                        ones,
                        first.weight[:, N_CHANNELS + j : N_CHANNELS + j + 1],
                        stride=first.stride,
                        padding=first.padding,
                    )
                    for j in range(k)
                ]
            )  # k x out x h x w: what a plane of ones adds
        self.shape = tuple(maps.shape[1:])
        self.scalars = torch.nn.Linear(k, maps[0].numel())
        with torch.no_grad():
            self.scalars.weight.copy_(maps.reshape(k, -1).T)
            self.scalars.bias.copy_(first.bias[:, None, None].expand(self.shape).reshape(-1))
        self.rest = torch.nn.ModuleList(net.body[1:])
        self.width = next(m.in_features for m in self.rest if isinstance(m, torch.nn.Linear))

    def forward(self, image: torch.Tensor, scalars: torch.Tensor) -> torch.Tensor:
        y = self.image(image) + self.scalars(scalars).reshape(-1, *self.shape)
        for layer in self.rest:
            y = y.reshape(-1, self.width) if isinstance(layer, torch.nn.Flatten) else layer(y)
        return y


def export(net: torch.nn.Module, path: Path) -> None:
    """Write ``net`` as ONNX in its :class:`Deployed` form (inputs ``image``, ``scalars``)."""
    deployed = Deployed(net).eval()
    image = torch.zeros(1, N_CHANNELS, GRID, GRID)
    scalars = torch.zeros(1, PLANES - N_CHANNELS)
    torch.onnx.export(
        deployed,
        (image, scalars),
        str(path),
        input_names=["image", "scalars"],
        output_names=["logits"],
        dynamic_axes={"image": {0: "n"}, "scalars": {0: "n"}, "logits": {0: "n"}},
        opset_version=13,
        dynamo=False,
    )
