"""COCKED and STACKED: ``vision/flags.py`` moved here whole, as ``size.py``, so that its history
follows it; the next commit splits it by responsibility into the modules of this package."""

from typing import Any

from vision.flags import size as _whole
from vision.flags.size import *  # noqa: F403


def __getattr__(name: str) -> Any:
    return getattr(_whole, name)
