"""The table PIN: anyone may watch, only the PIN holder may change anything.

The PIN comes from ``DICEPAD_PIN`` or is generated on first start (the caller prints it once).
Only a salted scrypt hash is stored; a candidate is compared with ``hmac.compare_digest``.
Failed attempts are counted per client address, and an address that keeps guessing is locked
out for a while; the lock-out is per address: other phones carry on. Failed attempts from all
addresses together are capped too (a guesser can take many addresses): past the cap only
addresses that gave the right PIN before may try. Neither locks the table: a phone already
logged in, the camera and the buttons carry on. Addresses past the limiter's room share one
entry, so a flood of addresses never makes it forget a lock-out (:mod:`server.limiter`; the
errors are :mod:`server.auth_errors`).

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from server.auth_errors import WrongPinError
from server.limiter import FailureLimiter
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
