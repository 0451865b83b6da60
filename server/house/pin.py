"""The house PIN: anyone may watch the house pages; hiding a record from the house wall needs
it. Like the table PIN (:mod:`server.auth`): from ``DICEPAD_HOUSE_PIN`` or made up on the
first start (the caller prints it once), stored only as a salted scrypt hash, here in the
house database's ``settings``; wrong PINs are counted per address and in all by
:class:`~server.limiter.FailureLimiter`, and a PIN verified once is remembered as an HMAC
under a key that lives only in this process, so an API client sending it does not pay scrypt
per call.

A logged-in page holds a signed cookie carrying a random token; the house database keeps the
token's SHA-256 with the PIN version it logged in at and its expiry (``sessions``), so that a
logout ends the session for good, copies of the cookie included, and a PIN change ends every
session. The signing key is made once and kept in ``settings`` too, so that several house
servers on one database (or a restart) agree.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from server.auth import GENERATED_DIGITS, MAX_PIN, SCRYPT_AT_ONCE, PinHash, validate_pin
from server.auth_errors import WrongPinError
from server.house.pool import HouseDb
from server.limiter import FailureLimiter

PIN_HASH = "house_pin_hash"  #: settings row: ``scrypt$N$r$p$salt$hash``
PIN_VERSION = "house_pin_version"  #: settings row: bumped when the PIN changes
SESSION_KEY_SETTING = "house_session_key"  #: settings row: the cookie-signing key (hex)
#: how long the version read from the database is trusted (a PIN changed by another house
#: server ends sessions here within this)
VERSION_TTL_SECONDS = 5.0


class HousePin:
    """The house PIN in the house database; :meth:`setup` once the database answers."""

    def __init__(
        self,
        db: HouseDb,
        limiter: FailureLimiter,
        *,
        scrypt_n: int = 2**14,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self.limiter = limiter
        self._n = scrypt_n
        self._now = monotonic
        self._lock = threading.Lock()
        self._hashing = threading.BoundedSemaphore(SCRYPT_AT_ONCE)
        self._memo_key = secrets.token_bytes(32)
        self._memo: tuple[bytes, int] | None = None  # (HMAC of the PIN verified, its version)
        self._cached: tuple[float, PinHash | None, int] | None = None

    def setup(self, pin: str | None) -> str | None:
        """Store ``pin`` (when given and not the one stored), or make one up when none is
        stored; the PIN made up, for the caller to print once, else None. Under a lock on
        the settings, so two house servers starting at once make one PIN."""
        if pin is not None:
            validate_pin(pin)
        generated = None
        with self._db.connection() as conn, conn.transaction():
            conn.execute("LOCK TABLE settings IN SHARE ROW EXCLUSIVE MODE")
            stored, version = self._read(conn)
            if pin is None and stored is None:
                generated = "".join(secrets.choice("0123456789") for _ in range(GENERATED_DIGITS))
                pin = generated
            if pin is not None and (stored is None or not stored.matches(pin)):
                new = PinHash.make(pin, n=self._n)
                for name, value in ((PIN_HASH, new.encode()), (PIN_VERSION, str(version + 1))):
                    conn.execute(
                        "INSERT INTO settings (name, value) VALUES (%s, %s)"
                        " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                        (name, value),
                    )
        with self._lock:
            self._cached = None
        return generated

    def session_secret(self) -> bytes:
        """The key the pages' cookies are signed with (made on first use, kept)."""
        with self._db.connection() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO settings (name, value) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (SESSION_KEY_SETTING, secrets.token_hex(32)),
            )
            row = conn.execute(
                "SELECT value FROM settings WHERE name = %s", (SESSION_KEY_SETTING,)
            ).fetchone()
        assert row is not None
        return bytes.fromhex(str(row[0]))

    @staticmethod
    def _read(conn: psycopg.Connection[Any]) -> tuple[PinHash | None, int]:
        rows = dict(
            conn.execute(
                "SELECT name, value FROM settings WHERE name IN (%s, %s)", (PIN_HASH, PIN_VERSION)
            ).fetchall()
        )
        stored = rows.get(PIN_HASH)
        return (PinHash.decode(stored) if stored else None), int(rows.get(PIN_VERSION) or 0)

    def _current(self) -> tuple[PinHash | None, int]:
        now = self._now()
        with self._lock:
            cached = self._cached
        if cached is not None and 0 <= now - cached[0] < VERSION_TTL_SECONDS:
            return cached[1], cached[2]
        with self._db.connection() as conn:
            stored, version = self._read(conn)
        with self._lock:
            self._cached = (now, stored, version)
        return stored, version

    @property
    def version(self) -> int:
        """Changes whenever the PIN does: a page session is bound to the version it logged
        in at."""
        return self._current()[1]

    def open_session(self, version: int, seconds: float) -> str:
        """A new page session at PIN ``version`` for ``seconds``: the token its cookie
        carries (only its hash is stored). Expired sessions are swept on the way."""
        token = secrets.token_urlsafe(32)
        with self._db.connection() as conn, conn.transaction():
            conn.execute("DELETE FROM sessions WHERE expires < now()")
            conn.execute(
                "INSERT INTO sessions (id, version, expires)"
                " VALUES (%s, %s, now() + make_interval(secs => %s))",
                (_digest(token), version, float(seconds)),
            )
        return token

    def session_ok(self, token: object) -> bool:
        """Whether ``token`` (a cookie's) is a live session at the current PIN's version."""
        if not isinstance(token, str) or not token:
            return False
        version = self.version
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT version FROM sessions WHERE id = %s AND expires > now()",
                (_digest(token),),
            ).fetchone()
        return row is not None and version > 0 and int(row[0]) == version

    def end_session(self, token: object) -> None:
        """Log ``token``'s session out, for every copy of its cookie."""
        if isinstance(token, str) and token:
            with self._db.connection() as conn:
                conn.execute("DELETE FROM sessions WHERE id = %s", (_digest(token),))

    def attempt(self, address: str, pin: str) -> int:
        """Check a PIN sent from ``address``: its version, or :class:`LockedOutError` /
        :class:`WrongPinError`. Counted before the hash, as the table server does, so that
        parallel guesses cannot outrun the limit; the PIN verified before costs nothing."""
        self.limiter.check(address)
        stored, version = self._current()
        digest = hmac.new(self._memo_key, pin.encode(), hashlib.sha256).digest()
        with self._lock:
            memo = self._memo
        if memo is not None and memo[1] == version and hmac.compare_digest(memo[0], digest):
            self.limiter.success(address, counted=False)
            return version
        self.limiter.begin(address)
        ok = False
        if stored is not None and len(pin) <= MAX_PIN:
            with self._hashing:
                ok = stored.matches(pin)
        if not ok:
            self.limiter.failure(address)
            raise WrongPinError("wrong house PIN")
        self.limiter.success(address)
        with self._lock:
            self._memo = (digest, version)
        return version


def _digest(token: str) -> str:
    """What the database keeps of a session token: the file alone gives no live cookie."""
    return hashlib.sha256(token.encode()).hexdigest()
