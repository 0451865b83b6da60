"""The context-manager half of every hardware resource that has a ``close``.

Sources, the supervisor, the recorder and the buttons all release on ``with`` exit exactly as
on an explicit ``close()``; one mixin keeps that rule in one place.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self


class Closing(ABC):
    """``with resource:`` closes it on the way out, whatever happened inside."""

    @abstractmethod
    def close(self) -> None:
        """Release the resource; must be idempotent."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
