"""PIN guessing: lock-out per address, the total over addresses, parallel guesses, the slate."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from server_app import AUTH, PIN, FakeMonotonic, make_app
from server_auth_rig import (
    _create,
    fixture_app,  # noqa: F401 (the app fixture)
)
from test_server_api import TEAMS, error

from server.auth import SCRYPT_AT_ONCE, PinAuth, PinHash
from server.auth_errors import LockedOutError, WrongPinError
from server.limiter import FailureLimiter
from server.services import dicepad
from server.store import Store


def _from(address: str) -> dict[str, Any]:
    return {"environ_base": {"REMOTE_ADDR": address}}


def test_lockout_is_per_address_and_never_locks_the_table(app: Flask, clock: FakeMonotonic) -> None:
    phone = app.test_client()
    phone.post("/api/login", json={"pin": PIN}, **_from("10.0.0.5"))  # the scorekeeper
    guesser = app.test_client()
    for _ in range(3):
        error(_create(guesser, {"X-Dicepad-Pin": "1111"}, **_from("10.0.0.66")), 403)
    r = _create(guesser, AUTH, **_from("10.0.0.66"))  # even the right PIN now waits
    assert "try again" in error(r, 429)
    assert int(r.headers["Retry-After"]) == 60
    error(guesser.post("/api/login", json={"pin": PIN}, **_from("10.0.0.66")), 429)
    # everyone else carries on: another address with the PIN, a logged-in phone
    assert _create(app.test_client(), AUTH, **_from("10.0.0.7")).status_code == 201
    assert _create(phone, **_from("10.0.0.5")).status_code == 201
    clock.now += 61
    assert _create(guesser, AUTH, **_from("10.0.0.66")).status_code == 201


def test_guesses_from_many_addresses_are_held_to_a_total(
    tmp_path: Path, clock: FakeMonotonic, caplog: pytest.LogCaptureFixture
) -> None:
    """One guesser with many addresses (an IPv6 /64) gets ``pin_max_failures_total`` guesses a
    window, not 5 per address. Past it a stranger gets 429 for the right PIN as for a wrong one
    (the right PIN, verified before, needs no hash: letting it through would tell right from
    wrong at no cost); a logged-in phone and the addresses that gave the right PIN carry on."""
    app = make_app(
        tmp_path,
        monotonic=clock,
        pin_max_failures=3,
        pin_max_failures_total=6,
        pin_window_seconds=300,
    )
    phone = app.test_client()
    phone.post("/api/login", json={"pin": PIN}, **_from("10.0.0.5"))
    guesser = app.test_client()
    statuses = []
    for n in range(20):
        clock.now += 1
        r = guesser.post("/api/login", json={"pin": "1111"}, **_from(f"fd00::{n}"))
        statuses.append(r.status_code)
    assert statuses == [403] * 6 + [429] * 14
    said = [r for r in caplog.records if "PIN guessing" in r.getMessage()]
    assert len(said) == 1  # the operator is told once, not once a guess
    assert int(r.headers["Retry-After"]) == 300 - 19  # when the first guess leaves the window
    assert _create(phone, **_from("10.0.0.5")).status_code == 201
    error(_create(app.test_client(), AUTH, **_from("fd00::99")), 429)  # no oracle
    error(app.test_client().post("/api/login", json={"pin": PIN}, **_from("fd00::98")), 429)
    again = app.test_client().post("/api/login", json={"pin": PIN}, **_from("10.0.0.5"))
    assert again.status_code == 200  # the scorekeeper's address, on another phone
    clock.now += 300 - 19  # the first guess has left the window: one more may be checked
    error(guesser.post("/api/login", json={"pin": "1111"}, **_from("fd00::100")), 403)
    error(guesser.post("/api/login", json={"pin": "1111"}, **_from("fd00::101")), 429)
    dicepad(app).close()


def test_the_total_spares_addresses_that_gave_the_right_pin(
    tmp_path: Path, clock: FakeMonotonic
) -> None:
    """After ``dicepad pin`` rotates the PIN of a running server nothing is remembered: the new
    PIN must be hashed. Past the total only an address that gave the right PIN before may try."""
    store = Store(tmp_path / "s.sqlite3")
    limiter = FailureLimiter(max_failures=3, window=300, lockout=300, monotonic=clock, max_total=4)
    auth = PinAuth(store, limiter, pin=PIN, scrypt_n=2**4)
    auth.attempt("10.0.0.5", PIN)  # the scorekeeper's phone
    cli = Store(tmp_path / "s.sqlite3")
    PinAuth(cli, limiter, scrypt_n=2**4).change("24680")  # ``dicepad pin`` from another process
    cli.close()
    for n in range(4):
        with pytest.raises(WrongPinError):
            auth.attempt(f"10.0.1.{n}", "1111")
    with pytest.raises(LockedOutError):
        auth.attempt("10.0.0.77", "24680")  # the right PIN, but from a stranger
    assert auth.attempt("10.0.0.5", "24680") == auth.version
    store.close()


def test_addresses_that_gave_the_right_pin_share_one_more_total(clock: FakeMonotonic) -> None:
    """Whoever knew the PIN before it was changed must not regain scrypt's pace from the
    addresses it logged in from: together they get one more ``max_total``, and a refusal's
    Retry-After is when the total is back under the limit, not when the first guess leaves."""
    limiter = FailureLimiter(max_failures=3, window=100, lockout=100, monotonic=clock, max_total=4)
    trusted = [f"10.0.2.{n}" for n in range(6)]
    for address in trusted:
        limiter.begin(address)
        limiter.success(address)
    for n in range(4):
        _fail(limiter, f"10.0.1.{n}")  # strangers fill the total
    with pytest.raises(LockedOutError):
        limiter.begin("10.0.1.9")
    for address in trusted[:4]:
        clock.now += 10
        _fail(limiter, address)  # the trusted share a second total
    with pytest.raises(LockedOutError) as refused:
        limiter.begin(trusted[4])
    assert refused.value.retry_after == pytest.approx(100 - 40)  # the strangers' four go
    with pytest.raises(LockedOutError) as refused:
        limiter.check("10.0.1.9")
    assert refused.value.retry_after == pytest.approx(100 - 40 + 10)  # and a trusted one
    clock.now += 60
    limiter.begin(trusted[4])
    with pytest.raises(LockedOutError):
        limiter.check("10.0.1.9")


def test_the_total_counts_checked_guesses_only(clock: FakeMonotonic) -> None:
    """A refused guess is not counted (a flood cannot push its own refusal further away), nor
    is the right PIN."""
    limiter = FailureLimiter(max_failures=3, window=100, lockout=100, monotonic=clock, max_total=4)
    _fail(limiter, "a")
    limiter.begin("b")
    limiter.success("b")  # right: not a guess
    for address in ("c", "d", "e"):
        _fail(limiter, address)
    for _ in range(50):
        clock.now += 1
        with pytest.raises(LockedOutError) as refused:
            limiter.begin("f")
    assert refused.value.retry_after == pytest.approx(50)
    clock.now += 50
    limiter.begin("f")  # the four guesses have left the window
    with pytest.raises(ValueError, match="max_total"):
        FailureLimiter(max_failures=5, window=1, lockout=1, monotonic=clock, max_total=4)


def _fail(limiter: FailureLimiter, address: str) -> None:
    """One wrong PIN: counted before the check, confirmed after it."""
    limiter.begin(address)
    limiter.failure(address)


def test_failures_outside_the_window_are_forgotten(clock: FakeMonotonic) -> None:
    limiter = FailureLimiter(max_failures=3, window=10, lockout=60, monotonic=clock)
    for _ in range(5):
        _fail(limiter, "a")
        clock.now += 6  # never 3 within 10 s
        limiter.check("a")
    _fail(limiter, "b")
    _fail(limiter, "b")
    limiter.begin("b")
    limiter.success("b")  # a success clears the count
    _fail(limiter, "b")
    limiter.check("b")
    _fail(limiter, "b")
    _fail(limiter, "b")
    with pytest.raises(LockedOutError):
        limiter.check("b")


def test_attempts_still_being_checked_count_against_the_limit(clock: FakeMonotonic) -> None:
    limiter = FailureLimiter(max_failures=3, window=10, lockout=60, monotonic=clock)
    for _ in range(3):
        limiter.begin("a")  # three checks under way, none finished
    with pytest.raises(LockedOutError):
        limiter.begin("a")  # a fourth is refused before its PIN is hashed
    limiter.success("a")  # one of the three was right: the count clears...
    with pytest.raises(LockedOutError):
        limiter.check("a")  # ...but the refused guess had locked the address out
    limiter.begin("b")
    limiter.success("b")
    limiter.begin("b")
    limiter.check("b")


def test_the_limiter_tracks_a_bounded_number_of_addresses(clock: FakeMonotonic) -> None:
    """Past ``max_addresses`` new addresses share one entry; stale entries make room again."""
    limiter = FailureLimiter(
        max_failures=2, window=100, lockout=100, monotonic=clock, max_addresses=50
    )
    for n in range(500):
        with contextlib.suppress(LockedOutError):  # the shared entry locks out at its limit
            _fail(limiter, f"10.0.{n // 250}.{n % 250}")
    assert limiter.tracked <= 50 + 1
    clock.now += 100  # every failure has left the window, the shared lock-out is over
    _fail(limiter, "10.0.9.9")
    assert limiter.tracked == 1


class SlowHash:
    """The scrypt check as slow as the test wants (on a Pi it takes ~0.1 s): each call waits
    for ``release`` and counts how many run at once."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self.calls = self.running = self.most = 0
        self._lock = threading.Lock()
        real = PinHash.matches

        def matches(hashed: PinHash, pin: str) -> bool:
            with self._lock:
                self.calls += 1
                self.running += 1
                self.most = max(self.most, self.running)
            self.started.release()
            self.release.wait(10)
            with self._lock:
                self.running -= 1
            return real(hashed, pin)

        monkeypatch.setattr(PinHash, "matches", matches)


def _in_threads(calls: list[Callable[[], Any]]) -> tuple[list[threading.Thread], list[Any]]:
    """Start each call in a thread of its own; the threads and, once joined, the outcomes."""
    out: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            out[i] = calls[i]()
        except Exception as exc:  # the outcome is what is checked
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    return threads, out


def test_a_burst_of_parallel_guesses_is_held_to_the_limit(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = dicepad(app).auth
    slow = SlowHash(monkeypatch)
    threads, out = _in_threads([lambda: auth.attempt("10.0.0.66", "1111")] * 12)
    for _ in range(2):
        assert slow.started.acquire(timeout=5)  # at most two hash at once (SCRYPT_AT_ONCE)
    time.sleep(0.2)  # the other ten have reached the limiter by now
    slow.release.set()
    for t in threads:
        t.join(10)
    wrong = [o for o in out if isinstance(o, WrongPinError)]
    locked = [o for o in out if isinstance(o, LockedOutError)]
    assert len(wrong) == 3  # pin_max_failures: only three guesses were ever checked
    assert len(locked) == 9
    assert slow.calls == 3
    assert slow.most <= SCRYPT_AT_ONCE


def test_the_pin_already_verified_is_not_held_up_by_guesses_in_flight(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scorekeeper's calls with the right PIN need no hash and are never counted: guesses
    still being hashed from the same address (or its own parallel calls) cannot lock it out."""
    auth = dicepad(app).auth
    auth.attempt("10.0.0.5", PIN)  # verified once: remembered
    slow = SlowHash(monkeypatch)
    threads, out = _in_threads([lambda: auth.attempt("10.0.0.5", "1111")] * 3)
    for _ in range(2):
        assert slow.started.acquire(timeout=5)
    time.sleep(0.1)  # the third is counted and waits for a hash slot
    assert auth.attempt("10.0.0.5", PIN) == auth.version  # pin_max_failures guesses counted
    slow.release.set()
    for t in threads:
        t.join(10)
    assert all(isinstance(o, WrongPinError) for o in out)


def test_a_check_of_the_old_pin_that_ends_after_a_rotation_does_not_revive_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path, pin=None)  # a PIN made up at first start: not yet remembered
    auth = dicepad(app).auth
    old = auth.generated_pin
    assert old is not None
    version = auth.version
    slow = SlowHash(monkeypatch)
    threads, out = _in_threads([lambda: auth.attempt("10.0.0.5", old)])
    assert slow.started.acquire(timeout=5)  # the old PIN is being checked...
    auth.change("24680")  # ...when the PIN is rotated
    slow.release.set()
    threads[0].join(10)
    assert out == [version]  # right for the version it was checked against, which is gone
    assert auth.version != version
    assert not auth.matches(old)  # not remembered as right for the new version
    assert auth.matches("24680")
    dicepad(app).close()


# A5 -- auth.py: PinAuth.attempt must forget an address's failures once it sends the right PIN


def test_the_right_pin_wipes_the_slate_of_earlier_typos(tmp_path: Path) -> None:
    clock = FakeMonotonic()
    app = make_app(tmp_path, monotonic=clock, pin_max_failures=3, pin_lockout_seconds=60)
    client = app.test_client()
    body = {"game": "you-blew-it", "teams": TEAMS}
    try:
        for _ in range(2):  # two typos ...
            error(
                client.post(
                    "/api/tables", json=body, headers={"X-Dicepad-Pin": "1111"}, **_from("10.0.0.5")
                ),
                403,
            )
        r = client.post("/api/tables", json=body, headers=AUTH, **_from("10.0.0.5"))
        assert r.status_code == 201  # ... then the right PIN: the slate is clean
        for _ in range(2):  # two more typos later in the evening are not a lock-out
            error(
                client.post(
                    "/api/tables", json=body, headers={"X-Dicepad-Pin": "1111"}, **_from("10.0.0.5")
                ),
                403,
            )
        assert (
            client.post("/api/tables", json=body, headers=AUTH, **_from("10.0.0.5")).status_code
            == 201
        )
    finally:
        dicepad(app).close()
