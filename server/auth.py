"""The table PIN: anyone may watch, only the PIN holder may change anything.

The PIN comes from ``DICEPAD_PIN`` or is generated on first start (the caller prints it once).
Only a salted scrypt hash is stored; a candidate is compared with ``hmac.compare_digest``.
Failed attempts are counted per client address, and an address that keeps guessing is locked
out for a while; the lock-out is per address: other phones carry on. Failed attempts from all
addresses together are capped too (a guesser can take many addresses): past the cap only
addresses that gave the right PIN before may try. Neither locks the table: a phone already
logged in, the camera and the buttons carry on. Addresses past the limiter's room share one
entry, so a flood of addresses never makes it forget a lock-out.

Scrypt is slow on purpose (~0.1 s on a Pi). So that a scorekeeper's API client does not pay it
on every action, a PIN that verified once is remembered as an HMAC under a key that lives only
in this process's memory; a wrong PIN always pays the full scrypt.

A logged-in phone carries a random session token in its signed cookie; the database keeps the
token's hash, the PIN version it logged in at and when it expires. Logging out deletes that
row, so the session ends for every copy of the cookie (one sniffed on the bar's open Wi-Fi
included), and a PIN change ends them all. A login ends the session its cookie held, and a
double-tapped login gets one session, not two; expired rows go at a login and at a session
check now and then.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from server.store import Store

log = logging.getLogger(__name__)

PIN_HASH = "pin_hash"  #: settings row: ``scrypt$N$r$p$salt$hash`` (hex)
PIN_VERSION = "pin_version"  #: settings row: bumped when the PIN changes (ends sessions)
MIN_PIN, MAX_PIN = 4, 64
SCRYPT_AT_ONCE = 2
"""PIN hashes computed at once, whoever asks (each holds 16 MB for ~0.1 s on a Pi: a burst of
guesses from many phones queues instead of filling the Pi's memory)."""
GENERATED_DIGITS = 6
SESSION_SECONDS = 16 * 3600
"""How long a PIN holder's login lasts: one night at the bar (the cookie's lifetime too)."""
RELOGIN_SECONDS = 10.0
"""A login this soon after another from the same address and cookie is the same tap twice:
it gets the first one's token (:meth:`PinAuth.open_session`)."""
PURGE_SECONDS = 60.0
"""Expired sessions are deleted at every login and at a session check at most this often: the
table keeps no dead sessions for long, and a phone's every request costs no write."""
OVERFLOW = "*"
""":class:`FailureLimiter`'s one entry for all the addresses it has no room for (no client
address reads so)."""


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


def validate_pin(pin: str) -> str:
    """A PIN is 4-64 printable characters (digits are easiest at a bar), with no space at
    either end: the login page trims what a phone typed and HTTP trims a header's value, so
    such a PIN could never be given there (only through ``POST /api/login``)."""
    if not isinstance(pin, str) or not MIN_PIN <= len(pin) <= MAX_PIN or not pin.isprintable():
        raise ValueError(f"the PIN must be {MIN_PIN}-{MAX_PIN} printable characters")
    if pin != pin.strip():
        raise ValueError("the PIN must not start or end with a space")
    return pin


@dataclass(frozen=True)
class PinHash:
    n: int
    r: int
    p: int
    salt: bytes
    digest: bytes

    @classmethod
    def make(cls, pin: str, *, n: int) -> PinHash:
        salt = secrets.token_bytes(16)
        return cls(n, 8, 1, salt, _scrypt(pin, salt, n, 8, 1))

    def matches(self, pin: str) -> bool:
        return hmac.compare_digest(_scrypt(pin, self.salt, self.n, self.r, self.p), self.digest)

    def encode(self) -> str:
        return f"scrypt${self.n}${self.r}${self.p}${self.salt.hex()}${self.digest.hex()}"

    @classmethod
    def decode(cls, text: str) -> PinHash:
        scheme, n, r, p, salt, digest = text.split("$")
        if scheme != "scrypt":
            raise ValueError(f"unknown PIN hash scheme {scheme!r}")
        return cls(int(n), int(r), int(p), bytes.fromhex(salt), bytes.fromhex(digest))


def _scrypt(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        pin.encode(), salt=salt, n=n, r=r, p=p, maxmem=256 * 1024 * 1024, dklen=32
    )


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


class PinAuth:
    """The installation's PIN, stored hashed in the database."""

    def __init__(
        self,
        store: Store,
        limiter: FailureLimiter,
        *,
        pin: str | None = None,
        scrypt_n: int = 2**14,
        session_seconds: float = SESSION_SECONDS,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._session_seconds = session_seconds
        self._wall_clock = wall_clock
        self.limiter = limiter
        self._n = scrypt_n
        self._lock = threading.Lock()
        self._hashing = threading.BoundedSemaphore(SCRYPT_AT_ONCE)
        self._memo_key = secrets.token_bytes(32)
        self._memo: bytes | None = None
        self._logins_lock = threading.Lock()
        #: (address, the presented token's digest or "") -> (the token given, when): see
        #: :meth:`open_session`; in this process's memory only, for RELOGIN_SECONDS
        self._logins: dict[tuple[str, str], tuple[str, float]] = {}
        self._purged: float | None = None  # the wall-clock time of the last purge
        #: the PIN made up on first start; the caller prints it once, it is never stored
        self.generated_pin: str | None = None
        stored = store.setting(PIN_HASH)
        self._hash = PinHash.decode(stored) if stored else None
        self._version = int(store.setting(PIN_VERSION) or 0)
        if pin is not None:
            validate_pin(pin)
            if self._hash is None or not self._hash.matches(pin):
                self._store_pin(pin)
            self._remember(pin, self._version)
        elif self._hash is None:
            self.generated_pin = "".join(
                secrets.choice("0123456789") for _ in range(GENERATED_DIGITS)
            )
            self._store_pin(self.generated_pin)

    @property
    def version(self) -> int:
        """Changes whenever the PIN does; a session is bound to the version it logged in at."""
        self._refresh()
        return self._version

    def _refresh(self) -> None:
        """Pick up a PIN changed by another process (``dicepad pin`` while the server runs):
        the old PIN and every session end at once, without a restart."""
        version = int(self._store.setting(PIN_VERSION) or 0)
        if version == self._version:
            return
        stored = self._store.setting(PIN_HASH)
        with self._lock:
            self._hash = PinHash.decode(stored) if stored else None
            self._memo, self._version = None, version

    def _store_pin(self, pin: str) -> None:
        new = PinHash.make(pin, n=self._n)
        with self._lock:
            version = self._version + 1
            self._store.set_settings({PIN_HASH: new.encode(), PIN_VERSION: str(version)})
            self._hash, self._memo, self._version = new, None, version

    def _remember(self, pin: str, version: int) -> None:
        """Remember ``pin`` as verified against PIN ``version`` -- unless the PIN has changed
        since (a check of the old PIN that ends after a rotation must not revive it)."""
        with self._lock:
            if self._version == version:
                self._memo = hmac.new(self._memo_key, pin.encode(), hashlib.sha256).digest()

    def change(self, new_pin: str) -> None:
        """Rotate the PIN: every logged-in session ends."""
        validate_pin(new_pin)
        self._store_pin(new_pin)
        self._remember(new_pin, self._version)
        self._store.end_sessions_before(self._version)

    # -- sessions -----------------------------------------------------------------------------

    def open_session(
        self, version: int, *, address: str | None = None, replacing: object = None
    ) -> str:
        """A new session for a PIN checked against PIN ``version``: the token its cookie
        carries (only its hash is stored). The session ``replacing`` (the token the client's
        cookie held) ends.

        Given the client's ``address``, a login within :data:`RELOGIN_SECONDS` of another from
        that address presenting the same cookie (or none) gets that login's token again while
        its session is live at ``version``. Why: both logins of a double tap leave before
        either answer sets the cookie; a second session would be live for 16 h with the
        browser keeping only one cookie, out of reach of its logout (a sniffed copy too)."""
        self.end_session(replacing)
        presented = _digest(replacing) if isinstance(replacing, str) and replacing else ""
        key = None if address is None else (address, presented)
        now = self._wall_clock()
        with self._logins_lock:
            while self._logins:  # forget the logins past a double tap's seconds
                first = next(iter(self._logins))
                if 0 <= now - self._logins[first][1] < RELOGIN_SECONDS:
                    break
                del self._logins[first]
            if key is not None and key in self._logins:
                token = self._logins[key][0]
                if self._store.session_version(_digest(token), now) == version:
                    return token
            token = secrets.token_urlsafe(24)
            self._store.add_session(_digest(token), version, now + self._session_seconds, now)
            if key is not None:
                self._logins.pop(key, None)
                self._logins[key] = (token, now)  # inserted last: dicts keep order (by time)
        with self._lock:
            self._purged = now  # add_session purged
        return token

    def session_ok(self, token: object) -> bool:
        """Whether a cookie's token is a live session of the current PIN (anything else a
        cookie may hold -- nothing, an old cookie's PIN version number -- is not)."""
        now = self._wall_clock()
        self._purge_expired(now)
        if not isinstance(token, str) or not token:
            return False
        version = self._store.session_version(_digest(token), now)
        return version is not None and version == self.version

    def _purge_expired(self, now: float) -> None:
        """Delete the expired sessions, at most once every :data:`PURGE_SECONDS` (a clock
        set back counts as time gone by)."""
        with self._lock:
            if self._purged is not None and abs(now - self._purged) < PURGE_SECONDS:
                return
            self._purged = now
        self._store.end_expired_sessions(now)

    def end_session(self, token: object) -> None:
        """Log a session out, for every copy of its cookie."""
        if isinstance(token, str) and token:
            self._store.end_session(_digest(token))

    def matches(self, pin: str) -> bool:
        """Constant-time comparison with the stored PIN (no rate limit: see :meth:`attempt`)."""
        return self.verified(pin) is not None

    def verified(self, pin: str) -> int | None:
        """The PIN version ``pin`` is right for, or None when wrong: a session is bound to the
        version that was checked, not to whatever is current when the check ends."""
        if len(pin) > MAX_PIN:
            return None
        version = self._remembered(pin)
        if version is not None:
            return version
        with self._lock:
            stored, version = self._hash, self._version
        if stored is None:
            return None
        with self._hashing:
            if not stored.matches(pin):
                return None
        self._remember(pin, version)
        return version

    def _remembered(self, pin: str) -> int | None:
        """The current PIN version if ``pin`` is the PIN verified before (no scrypt), else None."""
        self._refresh()
        with self._lock:
            memo, version = self._memo, self._version
        if memo is None:
            return None
        candidate = hmac.new(self._memo_key, pin.encode(), hashlib.sha256).digest()
        return version if hmac.compare_digest(candidate, memo) else None

    def attempt(self, address: str, pin: str) -> int:
        """Check a PIN sent by ``address``; the PIN version it is right for, or raises
        :class:`LockedOutError` or :class:`WrongPinError`. A PIN that must be hashed is counted
        as a failure before the check (:meth:`FailureLimiter.begin`), so parallel guesses
        cannot outrun the limit; the PIN already verified is not, so a scorekeeper's parallel
        calls with it never lock its own address out."""
        self.limiter.check(address)
        version = self._remembered(pin) if len(pin) <= MAX_PIN else None
        if version is not None:
            self.limiter.success(address, counted=False)
            return version
        self.limiter.begin(address)
        version = self.verified(pin)
        if version is None:
            self.limiter.failure(address)
            raise WrongPinError("wrong PIN")
        self.limiter.success(address)
        return version


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def load_or_create_secret(path: Path) -> bytes:
    """The session-signing secret: 32 random bytes made at first start, kept 0600."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        try:
            secret = bytes.fromhex(path.read_text().strip())
        except ValueError:
            secret = b""
        if len(secret) < 32:
            raise RuntimeError(f"{path} is damaged; delete it to make a new one") from None
        return secret
    secret = secrets.token_bytes(32)
    with os.fdopen(fd, "w") as f:
        f.write(secret.hex() + "\n")
        f.flush()
        os.fsync(f.fileno())
    return secret
