"""The failure limiter: wrong PINs counted per client address and from all addresses together,
then a lock-out (:class:`FailureLimiter`).

The PIN code (:mod:`server.auth`) asks it before hashing a candidate and tells it how the
attempt went; it keeps nothing but monotonic times, in memory, bounded however many
addresses try.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

from server.auth_errors import LockedOutError

log = logging.getLogger(__name__)

OVERFLOW = "*"
""":class:`FailureLimiter`'s one entry for all the addresses it has no room for (no client
address reads so)."""


class FailureLimiter:
    """Failed attempts per client address in a sliding window, then a lock-out; and, with
    ``max_total``, a cap on failed attempts from all addresses together in the same window.

    Why the cap: on a bar's Wi-Fi one guesser can take as many addresses as it likes (an IPv6
    /64, unused IPv4 addresses of the LAN), and per-address lock-outs alone then let it try
    a 6-digit PIN at whatever rate scrypt allows (~20 a second: the PIN in a night). Past the
    cap every PIN from an address that never gave the right PIN (this run) is refused (429),
    right or wrong alike, until the window frees a slot: guesses from every address together
    stay at ``max_total`` a window (twice that with the addresses that gave the right PIN).
    A logged-in phone, the camera and the buttons carry on.

    Memory is bounded: at most ``max_addresses`` addresses with failures in the window or a
    lock-out are tracked, each on its own, plus those that gave the right PIN. Past that room
    new addresses share one entry, :data:`OVERFLOW`, limited and locked out as one address
    (a flood locks itself out together); room comes back as entries go stale. Forgetting the
    stalest instead would let a flood of fresh addresses wipe a guesser's lock-out.
    """

    def __init__(
        self,
        *,
        max_failures: int,
        window: float,
        lockout: float,
        monotonic: Callable[[], float],
        max_addresses: int = 4096,
        max_total: int | None = None,
    ) -> None:
        if max_total is not None and max_total < max_failures:
            raise ValueError("max_total must be at least max_failures")
        self.max_failures = max_failures
        self.max_total = max_total
        self.window = window
        self.lockout = lockout
        self._now = monotonic
        self._max_addresses = max_addresses
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}
        self._all: deque[float] = deque()  # every address's counted attempts in the window
        self._trusted: dict[str, None] = {}  # addresses that gave the right PIN (insertion order)
        self._total_said = False  # the refusals past max_total have been logged

    def check(self, address: str) -> None:
        """Raise :class:`LockedOutError` while ``address`` is locked out, or while all
        addresses together are past ``max_total`` and ``address`` never gave the right PIN --
        whatever PIN it sends: letting the PIN already verified through (it needs no hash)
        while refusing wrong ones would tell a guesser which guess is right, at no cost."""
        now = self._now()
        with self._lock:
            self._raise_if_locked(self._key(address, now), now)
            self._raise_if_over_total(address, now)

    def begin(self, address: str) -> None:
        """Count an attempt from ``address`` as failed *before* its PIN is checked (raising
        :class:`LockedOutError` when locked out, or when ``max_failures`` attempts are already
        counted in the window); :meth:`success` takes it back. Why: a check takes scrypt's
        ~0.1 s, and a burst of parallel guesses counted only afterwards would all be checked
        before the first was counted."""
        now = self._now()
        with self._lock:
            key = self._key(address, now)
            self._raise_if_locked(key, now)
            times = self._recent(key, now)
            if len(times) >= self.max_failures:
                self._lock_out(key, now)
                raise LockedOutError(self.lockout, everyone=key == OVERFLOW)
            if times:
                self._failures[key] = times  # kept if the total refuses this attempt
            self._raise_if_over_total(address, now)
            times.append(now)
            if self.max_total is not None:
                self._all.append(now)
            self._failures[key] = times  # re-inserted last: dicts keep order (by last attempt)

    def _raise_if_over_total(self, address: str, now: float) -> None:
        """Refuse an attempt past ``max_total`` from all addresses together (not counted, so a
        flood never pushes the end of its own refusal further away). Addresses that gave the
        right PIN before share one more ``max_total``, no more: one who knew the PIN before it
        was changed must not regain scrypt's pace from the addresses it used then."""
        while self._all and self._all[0] <= now - self.window:
            self._all.popleft()
        if self.max_total is None:
            return
        limit = self.max_total * (2 if address in self._trusted else 1)
        if len(self._all) < limit:
            if len(self._all) < self.max_total:
                self._total_said = False
            return
        if not self._total_said:  # once a spell, not once a guess: the journal stays readable
            self._total_said = True
            log.warning(
                "PIN guessing: %d wrong PINs in %.0f s from several addresses; only phones"
                " logged in or that gave the right PIN before may log in until it stops",
                len(self._all),
                self.window,
            )
        back_under = self._all[len(self._all) - limit]  # when it leaves, the total is under
        raise LockedOutError(back_under + self.window - now, everyone=True)

    def failure(self, address: str) -> None:
        """The attempt counted by :meth:`begin` failed: lock the address out at the limit."""
        now = self._now()
        with self._lock:
            key = self._key(address, now)
            times = self._failures.get(key)
            if times is None:
                return
            while times and times[0] <= now - self.window:
                times.popleft()
            if len(times) >= self.max_failures:
                del self._failures[key]
                self._lock_out(key, now)
            elif not times:
                del self._failures[key]

    def success(self, address: str, *, counted: bool = True) -> None:
        """The right PIN from ``address``: its slate is wiped, the attempt :meth:`begin`
        counted (``counted``) leaves the total, and the address is trusted past ``max_total``
        from now on (and has an entry of its own past the room: a flood's shared lock-out does
        not hold it). An attempt counted in :data:`OVERFLOW` stays there: that entry is a
        flood's."""
        with self._lock:
            times = self._failures.pop(address, None)
            if counted and times and times[-1] in self._all:
                self._all.remove(times[-1])  # the right PIN is no guess
            self._trusted.pop(address, None)
            self._trusted[address] = None  # re-inserted last: the stalest are forgotten first
            while len(self._trusted) > self._max_addresses:
                del self._trusted[next(iter(self._trusted))]

    def _raise_if_locked(self, key: str, now: float) -> None:
        until = self._locked_until.get(key)
        if until is not None:
            if now < until:
                raise LockedOutError(until - now, everyone=key == OVERFLOW)
            del self._locked_until[key]

    def _lock_out(self, key: str, now: float) -> None:
        self._locked_until.pop(key, None)
        self._locked_until[key] = now + self.lockout  # inserted last: dicts keep order (by end)

    def _key(self, address: str, now: float) -> str:
        """Where ``address``'s attempts count: its own entry if it has one, gave the right PIN
        before or there is room, else :data:`OVERFLOW`."""
        if address in self._failures or address in self._locked_until or address in self._trusted:
            return address
        self._forget_stale(now)
        if len(self._failures) + len(self._locked_until) < self._max_addresses:
            return address
        return OVERFLOW

    def _recent(self, address: str, now: float) -> deque[float]:
        """``address``'s attempts within the window, taken out of the table (put it back)."""
        times = self._failures.pop(address, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        return times

    def _forget_stale(self, now: float) -> None:
        """Drop the lock-outs that are over and the entries with no failure left in the window:
        only those, so nothing a guesser wants forgotten is. Both tables are in order (of the
        last attempt, of the lock-out's end), so only their stale heads are looked at."""
        while self._locked_until:
            key = next(iter(self._locked_until))
            if self._locked_until[key] > now:
                break
            del self._locked_until[key]
        while self._failures:
            key = next(iter(self._failures))
            if self._failures[key][-1] > now - self.window:
                break
            del self._failures[key]

    @property
    def tracked(self) -> int:
        with self._lock:
            return len(self._failures) + len(self._locked_until)
