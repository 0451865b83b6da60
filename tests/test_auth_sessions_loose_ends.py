"""Sessions and the PIN limiter at their edges: a double-tapped login leaves no second session,
dead sessions do not pile up between logins, and a flood of addresses unlocks nobody."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_app import PIN, FakeMonotonic

from server.auth import PURGE_SECONDS, RELOGIN_SECONDS, SESSION_SECONDS, PinAuth
from server.auth_errors import LockedOutError
from server.limiter import FailureLimiter
from server.store import Store

START = 1_800_000_000.0


class Wall:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def wall() -> Wall:
    return Wall()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "s.sqlite3")
    yield s
    s.close()


@pytest.fixture
def auth(store: Store, wall: Wall, clock: FakeMonotonic) -> PinAuth:
    limiter = FailureLimiter(max_failures=3, window=60, lockout=60, monotonic=clock)
    return PinAuth(store, limiter, pin=PIN, scrypt_n=2**4, wall_clock=wall)


def _rows(store: Store) -> int:
    """Rows in the sessions table, live or not (read through a connection of its own)."""
    with contextlib.closing(sqlite3.connect(store.path)) as db:
        return int(db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])


# -- a double-tapped login ------------------------------------------------------------------


@pytest.mark.parametrize("cookie", [None, "a-token-from-last-night"])
def test_a_double_tapped_login_opens_one_session(
    auth: PinAuth, store: Store, cookie: str | None
) -> None:
    """Both logins of a double tap leave before either answer sets the cookie, so both present
    the same cookie (or none): the second gets the first's token, not a second session that
    the browser drops at once and that its logout could never end."""
    first = auth.open_session(auth.version, address="10.0.0.5", replacing=cookie)
    second = auth.open_session(auth.version, address="10.0.0.5", replacing=cookie)
    assert second == first
    assert _rows(store) == 1
    auth.end_session(second)  # the phone logs out: no session is left behind
    assert not auth.session_ok(first)
    assert _rows(store) == 0


def test_a_login_ends_the_session_its_cookie_held(auth: PinAuth, store: Store) -> None:
    old = auth.open_session(auth.version, address="10.0.0.5")
    new = auth.open_session(auth.version, address="10.0.0.5", replacing=old)
    assert new != old
    assert auth.session_ok(new)
    assert not auth.session_ok(old)
    assert _rows(store) == 1


def test_a_login_is_handed_again_only_while_it_is_a_double_tap(auth: PinAuth, wall: Wall) -> None:
    """Another address, another cookie, a login after the double tap's seconds, a session
    already logged out or of a PIN since changed: each gets a session of its own."""
    first = auth.open_session(auth.version, address="10.0.0.5")
    assert auth.open_session(auth.version, address="10.0.0.6") != first
    assert auth.open_session(auth.version, address="10.0.0.5", replacing="other") != first
    assert auth.open_session(auth.version) != auth.open_session(auth.version)  # no address
    wall.now += RELOGIN_SECONDS
    assert auth.open_session(auth.version, address="10.0.0.5") != first
    again = auth.open_session(auth.version, address="10.0.0.7")
    auth.end_session(again)
    assert auth.open_session(auth.version, address="10.0.0.7") != again
    before = auth.open_session(auth.version, address="10.0.0.8")
    auth.change("24680")
    after = auth.open_session(auth.version, address="10.0.0.8")
    assert after != before
    assert auth.session_ok(after)


# -- expired sessions -----------------------------------------------------------------------


def test_expired_sessions_are_purged_at_a_session_check(
    auth: PinAuth, store: Store, wall: Wall
) -> None:
    """Not only at a login: a server whose phones stay logged in for weeks would keep every
    night's dead sessions."""
    for n in range(3):
        auth.open_session(auth.version, address=f"10.0.0.{n}")
    assert _rows(store) == 3
    wall.now += SESSION_SECONDS
    assert not auth.session_ok(None)  # anyone's page view checks for a session
    assert _rows(store) == 0


def test_a_session_check_purges_at_most_once_a_purge_interval(
    auth: PinAuth, store: Store, wall: Wall
) -> None:
    """A phone's every request checks its session: that must not cost a write each time."""
    live = auth.open_session(auth.version)
    assert auth.session_ok(live)  # purges (nothing to purge), and starts the interval
    store.add_session("d" * 64, auth.version, wall.now + 1, wall.now)
    wall.now += PURGE_SECONDS - 1
    assert auth.session_ok(live)
    assert _rows(store) == 2  # expired, but the last purge was under a minute ago
    wall.now += 1
    assert auth.session_ok(live)
    assert _rows(store) == 1


# -- a flood of addresses -------------------------------------------------------------------


def _fail(limiter: FailureLimiter, address: str) -> None:
    """One wrong PIN, counted before the check and confirmed after it; a refusal is fine."""
    with contextlib.suppress(LockedOutError):
        limiter.begin(address)
        limiter.failure(address)


def test_a_flood_of_addresses_unlocks_nobody(clock: FakeMonotonic) -> None:
    """An address locked out stays locked out however many others come after it, and one with
    failures keeps them: the addresses the limiter has no room for share one entry, locked
    out together, rather than push out what it knows."""
    limiter = FailureLimiter(max_failures=3, window=300, lockout=300, monotonic=clock)
    for _ in range(3):
        _fail(limiter, "10.0.0.66")
    _fail(limiter, "10.0.0.67")
    _fail(limiter, "10.0.0.67")
    for n in range(4200):  # each locks itself out, as a guesser's addresses would
        for _ in range(3):
            _fail(limiter, f"fd00::{n:x}")
    with pytest.raises(LockedOutError):
        limiter.check("10.0.0.66")
    _fail(limiter, "10.0.0.67")  # its third failure
    with pytest.raises(LockedOutError):
        limiter.check("10.0.0.67")
    assert limiter.tracked <= 4096 + 1  # the addresses, and the one they share past the room
    with pytest.raises(LockedOutError, match="tried lately"):
        limiter.check("fd00::ffff")  # past the room: the shared entry is locked out
    clock.now += 300  # the lock-outs are over: the room is free again
    limiter.check("10.0.0.66")
    limiter.check("fd00::ffff")
    _fail(limiter, "fd00::ffff")
    assert limiter.tracked == 1


def test_a_flood_spares_addresses_that_gave_the_right_pin(clock: FakeMonotonic) -> None:
    """The scorekeeper's address is not put into the flood's shared, locked-out entry."""
    limiter = FailureLimiter(
        max_failures=3, window=300, lockout=300, monotonic=clock, max_addresses=50
    )
    limiter.begin("10.0.0.5")
    limiter.success("10.0.0.5")
    for n in range(100):
        for _ in range(3):
            _fail(limiter, f"fd00::{n:x}")
    with pytest.raises(LockedOutError):
        limiter.check("fd00::ffff")
    limiter.check("10.0.0.5")
    limiter.begin("10.0.0.5")
    limiter.success("10.0.0.5")
