"""Frames in, ``Reading`` out: the pad, the dice, their pips and flags (NumPy and OpenCV only)."""

from typing import Any

__all__ = ["read_roll"]


def __getattr__(name: str) -> Any:
    """``vision.read_roll`` without importing OpenCV for users of ``vision.reading`` alone."""
    if name == "read_roll":
        from vision.detect import read_roll

        return read_roll
    raise AttributeError(f"module 'vision' has no attribute {name!r}")
