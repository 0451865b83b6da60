"""Every tuning knob of the dice reader in one frozen value, with its unit.

Nothing here is fitted to a particular photo or data set: the same defaults read top-down phone
photos and oblique webcam frames (the thresholds were chosen on a cross-validation fold, with
models that never saw its photos). Pixel sizes are in *frame* pixels unless the name says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vision.flags import FlagParams


@dataclass(frozen=True)
class DetectorParams:
    """Parameters of :func:`vision.detect.read_roll`."""

    locator_long_side_px: int = 320
    """The frame is resized so its longest side is this many px before the die-centre network
    runs (dice should then be about 12-60 px across). Larger finds smaller dice, costs time."""

    peak_threshold: float = 0.3
    """Minimum die-centre probability (0-1) of a local maximum of the centre heat map."""

    min_center_distance: float = 0.45
    """Two detections closer than this fraction of the smaller one's size are the same die."""

    crop_scale: float = 1.0
    """Side of the square patch handed to the value classifier, as a multiple of the die's
    located size (its axis-aligned extent)."""

    crop_px: int = 32
    """Side in px of the patch the value classifier sees (fixed by the shipped model)."""

    turned_patches: bool = True
    """Whether the value classifier sees each die turned square to its top face and cut to the
    face's side (``vision.classify.cut_die``) rather than axis-aligned (fixed by the model)."""

    turned_margin: float = 1.2
    """With ``turned_patches``, the side of the value patch over the top face's estimated side
    (fixed by the model): room for a located centre pulled towards a side face."""

    ones_margin: float = 0.0
    """With ``turned_patches``, a die first read as 1 is cut again at this margin (0: never) and
    read as what that wider look says if it is not a 1: a 2 whose located centre is pulled
    towards a side face can lose its far pip from the ``turned_margin`` cut (see
    ``vision.detect``). 1.4 (within the value network's training scale jitter) reads 4 more
    of 3488 clean rendered dice right, one more and one fewer real photo die in held-out
    folds 0 and 1, and costs ~0.5 ms a frame: off by default for the 10 ms budget."""

    value_views: int = 4
    """How many turns (1, 2 or 4; by 90 degrees) of an unsure patch the value network sees;
    their probabilities are averaged. More views cost classifier time in proportion."""

    value_sure: float = 0.9
    """A patch whose first look gives one class ("not a die" or a value) at least this
    probability (0-1) is not looked at again; 1.0 gives every patch all ``value_views``."""

    reject_not_die: float = 0.25
    """A located candidate is dropped when the classifier's "not a die" probability exceeds this."""

    min_value_confidence: float = 0.35
    """Below this value probability (0-1) the die is reported with ``value=None`` and
    ``UNREADABLE`` rather than guessed."""

    off_pad_margin_px: float = 0.0
    """A die centre this many px outside a calibrated pad still counts as on it."""

    flags: FlagParams = field(default_factory=FlagParams)
    """The COCKED / STACKED operating points and the camera's focal length
    (``vision.flags.FlagParams``). Their defaults are for a camera straight above the pad, as
    the product mounts it; a camera looking in at a slant shows the side faces of flat dice and
    wants a higher ``cocked_threshold`` (0.81 keeps the oblique phone photos of nellbyler_d6 at
    1.8 % of dice flagged, against 4.1 % at the default; ``bench/bench_synth.py``)."""

    models_dir: str | None = None
    """Folder holding ``locator.onnx`` and ``value.onnx``; ``None`` means the shipped models in
    ``vision/models`` (other folders are for cross-validation and retrained models)."""

    def __post_init__(self) -> None:
        if not 64 <= self.locator_long_side_px <= 2048:
            raise ValueError("locator_long_side_px must be within 64..2048")
        for name in ("peak_threshold", "reject_not_die", "min_value_confidence", "value_sure"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be within 0..1, got {value}")
        if self.value_views not in (1, 2, 4):
            raise ValueError(f"value_views must be 1, 2 or 4, got {self.value_views}")
        if self.crop_px < 8 or self.crop_scale <= 0 or self.min_center_distance < 0:
            raise ValueError("crop_px >= 8, crop_scale > 0 and min_center_distance >= 0 needed")
        if not 0.5 <= self.turned_margin <= 2.0:
            raise ValueError(f"turned_margin must be within 0.5..2, got {self.turned_margin}")
        if self.ones_margin and not self.turned_margin <= self.ones_margin <= 2.0:
            raise ValueError(
                f"ones_margin must be 0 or within turned_margin..2, got {self.ones_margin}"
            )
