"""Shared helpers of the frame-source tests (``test_hardware_sources*.py``): test images."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

W, H = 96, 64


def scene(i: int) -> np.ndarray:
    """A small BGR test image that differs from frame to frame (never all black)."""
    img = np.full((H, W, 3), (40, 90, 30), np.uint8)
    x = 8 + 7 * (i % 10)
    cv2.rectangle(img, (x, 20), (x + 14, 34), (250, 250, 250), -1)
    return img


def write_images(folder: Path, n: int = 6) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"frame{i}.png"
        assert cv2.imwrite(str(p), scene(i))
        paths.append(p)
    return paths


def write_video(path: Path, n: int = 8) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30, (W, H))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video headless")
    for i in range(n):
        writer.write(scene(i))
    writer.release()
    return path
