"""Frames in, ``Reading`` out: the pad, the dice, their pips and flags (NumPy and OpenCV only)."""
