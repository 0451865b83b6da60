"""The PIN's errors, each with the HTTP status it answers with.

Apart from :mod:`server.auth` so that the failure limiter (:mod:`server.limiter`), which
raises :class:`LockedOutError`, and the PIN code, which uses the limiter, do not import each
other; the error handlers (:mod:`server.errors`, the pages) need nothing else of either.
"""

from __future__ import annotations


class AuthError(Exception):
    """Base of the PIN errors; ``status`` is the HTTP status."""

    status = 401


class NotAuthenticatedError(AuthError):
    """No PIN and no logged-in session (HTTP 401)."""

    status = 401


class WrongPinError(AuthError):
    """A PIN was given and it is wrong (HTTP 403)."""

    status = 403


class LockedOutError(AuthError):
    """Too many wrong PINs from this address, or from all together (HTTP 429);
    ``retry_after`` in seconds."""

    status = 429

    def __init__(self, retry_after: float, *, everyone: bool = False) -> None:
        self.retry_after = max(1, round(retry_after))
        where = "tried lately" if everyone else "from this address"
        super().__init__(f"too many wrong PINs {where}; try again in {self.retry_after} s")
