"""The trained networks (the locator, the earlier value network) and their ONNX export."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn


def cbr(i: int, o: int, stride: int = 1, dil: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(i, o, 3, stride, dil, dilation=dil, bias=False),
        nn.BatchNorm2d(o),
        nn.ReLU(inplace=True),
    )


class Locator(nn.Module):
    """Stride-4 die-centre heat map, offset and size; dilated context at stride 8."""

    def __init__(self, width: int = 24) -> None:
        super().__init__()
        self.c1, self.c2 = cbr(3, 12, 2), cbr(12, 24, 2)
        self.deep = nn.Sequential(cbr(24, 32, 2), cbr(32, 32, 1, 2), cbr(32, 32, 1, 4))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.mix = nn.Sequential(
            nn.Conv2d(56, width, 1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            cbr(width, width),
        )
        self.head = nn.Conv2d(width, 4, 1)
        nn.init.constant_(self.head.bias, 0.0)
        with torch.no_grad():
            self.head.bias[0] = -4.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.c2(self.c1(x))
        b = self.deep(a)
        y = self.head(self.mix(torch.cat([a, self.up(b)], 1)))
        # offsets squashed into the cell, size and logit raw
        return torch.cat([y[:, :1], torch.sigmoid(y[:, 1:3]), y[:, 3:]], 1)


class ValueNet(nn.Module):
    """crop_px x crop_px patch -> not-a-die / 1..6; ``width`` scales every layer."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        a, b, c = width, 2 * width, 4 * width
        self.f = nn.Sequential(
            cbr(3, a),
            nn.MaxPool2d(2),
            cbr(a, b),
            nn.MaxPool2d(2),
            cbr(b, c),
            nn.MaxPool2d(2),
            cbr(c, c),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Dropout(0.1),
            nn.Linear(c, 7),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = self.f(x)
        return y


class WithEmbedding(nn.Module):
    """The value network as shipped: its logits ``y`` and the features its last layer reads
    (``embedding``, after the global pooling): the house model (``vision.house``) fits a head
    of its own on them on the Pi, with NumPy, where no training framework runs."""

    def __init__(self, net: ValueNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        layers = list(self.net.f)
        e: torch.Tensor = nn.Sequential(*layers[:-2])(x)  # up to the flattened pooling
        y: torch.Tensor = layers[-1](e)  # the dropout between is the identity when exported
        return y, e


def export(
    model: nn.Module,
    shape: tuple[int, ...],
    path: Path,
    dynamic: dict[int, str],
    outputs: Sequence[str] = ("y",),
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    model.eval()
    torch.onnx.export(
        model,
        torch.zeros(shape),
        str(path),
        opset_version=13,
        dynamo=False,
        input_names=["x"],
        output_names=list(outputs),
        dynamic_axes={"x": dynamic, **{o: {0: "n"} if o != "y" else dynamic for o in outputs}},
    )
