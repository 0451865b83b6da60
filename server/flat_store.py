"""The flat-die sizes the pad service has measured, kept on disk beside ``pad.json``.

Why: a die squarely on another is told by its size against the flat dice's
(``vision.flags.size.size_cues``), and when it is the only die in view only the size learnt from
earlier rolls can judge it. Kept in memory alone, that size was lost with every restart and
took two rolls to learn again. The samples are only good for the pad and frame size they were
measured in, so the file records which: another calibration, or another camera mode, finds
nothing to reuse. The file is a convenience: a missing, stale or damaged one is ignored (and a
damaged one reported), never an error. It is rewritten only when it matters
(``server.pad.status.FLAT_RESAVE``): an SD card wears with every write.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

log = logging.getLogger(__name__)

FLAT_FILE = "flat_dice.json"
"""Beside the pad file (``server.pad.service.PAD_FILE``)."""

PadKey = tuple[float, tuple[int, int]]
"""What the samples were measured against: the pad file's modification time and the frame
size (width, height) in px."""


def save_flat_samples(path: Path, key: PadKey, samples: list[float]) -> None:
    """Write ``samples`` (frame px at the pad's centre) for ``key``, atomically: a power cut
    leaves the old file."""
    data = {"pad_mtime": key[0], "frame_size": [key[1][0], key[1][1]], "samples": samples}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_flat_samples(path: Path, key: PadKey, limit: int) -> list[float]:
    """The samples saved for ``key`` (at most the last ``limit``); none when there is no file
    or it was measured against another pad or frame size."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.warning("%s: not readable, the flat die's size is learnt afresh (%s)", path, exc)
        return []
    try:
        data = json.loads(text)
        mtime, frame, samples = data["pad_mtime"], data["frame_size"], data["samples"]
        ok = (
            isinstance(samples, list)
            and all(isinstance(s, (int, float)) and math.isfinite(s) and s > 0 for s in samples)
            and isinstance(frame, list)
            and len(frame) == 2
        )
        if not ok:
            raise ValueError("expected positive sizes and a [width, height] frame size")
        if float(mtime) != key[0] or (int(frame[0]), int(frame[1])) != key[1]:
            return []  # measured against another calibration or camera mode
        return [float(s) for s in samples[-limit:]] if limit > 0 else []
    except (ValueError, TypeError, KeyError) as exc:
        log.warning("%s: damaged, the flat die's size is learnt afresh (%s)", path, exc)
        return []
