"""The training recipe's settings that ``bench/train_vision.py``'s options change: lists, so
its ``main`` sets them in place for every module that reads them."""

from __future__ import annotations

from vision.params import DetectorParams

P = DetectorParams()
LOCATOR_SIDE = [P.locator_long_side_px]  # --locator-side (a list so main() can set it)
CROP_PX = [P.crop_px]  # --crop-px
TURNED = [P.turned_patches]  # --turned / --no-turned
MARGIN = [P.turned_margin]  # --turned-margin
MINE_RADIUS = [0.25]  # --mine-radius
OFF_CENTRE = [0.0]  # --off-centre
MARBLED = [0.0]  # --marbled
GHOSTS = [0.0]  # --ghost-pips
CROP = 128  # locator training crops, locator-input px (multiple of 8)
PIP_BOX_TO_DIE = 0.75
