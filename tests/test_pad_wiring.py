"""The pad service's wiring: the GPIO buttons, which table is on the pad, unreadable dice
confirmed on the phone with the photo, ``dicepad serve``'s pad service, the snapshot, the
watchdog's heartbeat, and settled frames driven through a scripted reader."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pad_rig import (
    CLOCK_START,
    FPS,
    PIN,
    SHORT,
    SMALL,
    Rig,
    die,
    fixture_rigs,  # noqa: F401 (the rigs fixture)
    reading,
)
from server_app import ticking_clock

from hardware.buttons import ButtonConfig, ButtonEvent
from hardware.clock import ManualClock
from hardware.frames import Frame
from scoring.actions import Roll, Undo
from server.app import create_app
from server.config import Config
from server.feed.hub import Feed
from server.health import Health
from server.pad.api import attach, start_pad_service
from server.pad.reading import encode_snapshot
from server.pad.script import ScriptedSource, ThrowScript
from server.pad.service import PadService
from server.pad.truth import reading_from_truth, source_truth
from server.services import dicepad
from server.store import Store
from server.tables import TableService
from vision.reading import DieFlag, Pad, Reading

# -- buttons --------------------------------------------------------------------------------


def test_gpio_bank_button_and_undo(rigs: Callable[..., Rig]) -> None:
    from gpiozero.pins.mock import MockFactory

    rig = rigs([])
    factory = MockFactory()
    config = ButtonConfig(bank_pin=17, undo_pin=27, led_pin=22, undo_hold_s=0.05, bounce_s=None)
    svc = PadService(rig.tables, None, buttons=config, pin_factory=factory)
    svc.start()
    try:
        bar = rig.tables.create("bar-dice", players=["A", "B"])["table"]
        for dice in ((6,), (2,), (1, 4, 4, 2, 3)):  # order roll, then A's first roll
            rig.tables.apply(bar, Roll(dice), source="phone")
        factory.pin(17).drive_low()  # bank = stand in Bar Dice
        factory.pin(17).drive_high()
        assert rig.tables.log(bar)[-1]["action"] == {"type": "stand"}
        assert rig.tables.log(bar)[-1]["source"] == "button"
        factory.pin(27).drive_low()
        deadline = time.monotonic() + 5
        while rig.tables.log(bar)[-1]["action"]["type"] != "undo" and time.monotonic() < deadline:
            time.sleep(0.01)
        factory.pin(27).drive_high()
        last = rig.tables.log(bar)[-1]
        assert (last["source"], last["action"]) == ("button", {"type": "undo"})
        assert rig.tables.view(bar)["expecting"]["action"] == "farm_or_roll"  # stand undone
    finally:
        svc.stop()


def test_a_refused_button_press_says_why(rigs: Callable[..., Rig]) -> None:
    rig = rigs([])
    table = rig.tables.create("bolo", players=["Ann"])["table"]
    rig.service.press(ButtonEvent.BANK)  # nothing rolled yet
    assert rig.tables.log(table) == []
    notice = rig.tables.view(table)["pad"]["notice"]
    assert notice["kind"] == "refused"
    assert "bank" in notice["text"]


# -- which table is on the pad ---------------------------------------------------------------


def test_table_on_the_pad_is_assigned_or_the_latest_active(rigs: Callable[..., Rig]) -> None:
    rig = rigs([])
    svc, tables = rig.service, rig.tables
    assert svc.table_on_pad() is None
    a = tables.create("bolo", players=["Ann"])["table"]
    b = tables.create("bolo", players=["Bob"])["table"]
    assert svc.table_on_pad() == b  # newest
    tables.apply(a, Roll((2, 3, 4, 6, 6)), source="phone")
    assert svc.table_on_pad() == a  # acted on most recently
    svc.assign(b)
    assert svc.table_on_pad() == b
    tables.end(b)
    assert svc.table_on_pad() == a  # an assigned table that is over falls back
    svc.assign(None)
    assert svc.assigned is None
    with pytest.raises(LookupError):
        svc.assign("nosuch")


# -- unreadable dice: confirm on the phone, with the photo -------------------------------------


def test_unreadable_die_asks_the_phone_and_serves_the_photo(tmp_path: Path) -> None:
    app = create_app(
        Config(
            data_dir=tmp_path,
            pin=PIN,
            camera="none",
            pin_scrypt_n=2**4,
            clock=ticking_clock(CLOCK_START),
        )
    )
    parts = dicepad(app)
    clock = ManualClock()
    script = ThrowScript(SHORT[:1], seed=3, size=SMALL, fps=FPS)
    holder: list[PadService] = []

    def blurry(image: np.ndarray, pad: Pad | None) -> Reading:
        scene = source_truth(holder[0].supervisor.source)
        assert scene is not None
        read = reading_from_truth(scene)
        first = replace(read.dice[0], value=None, flags=frozenset({DieFlag.UNREADABLE}))
        return replace(read, dice=(first, *read.dice[1:]))

    svc = PadService(
        parts.tables,
        lambda: ScriptedSource(script, fps=FPS, clock=clock),
        clock=clock,
        reader=blurry,
    )
    holder.append(svc)
    attach(app, svc)
    client = app.test_client()
    table = parts.tables.create("bolo", players=["Ann"])["table"]
    for _ in range(400):
        if svc.step() is not None:
            break
    notice = parts.tables.view(table)["pad"]["notice"]
    assert notice["kind"] == "confirm"
    assert None in notice["dice"]
    photo = client.get(notice["snapshot"])
    assert photo.status_code == 200
    assert photo.data.startswith(b"\xff\xd8\xff")
    assert parts.tables.log(table) == []
    status: Any = client.get("/api/pad").json
    assert status["table"] == table
    assert status["throws"][-1]["notice"]["kind"] == "confirm"
    r = client.post(
        f"/api/tables/{table}/actions",
        json={"type": "roll", "dice": [1, 3, 3, 4, 6]},
        headers={"X-Dicepad-Pin": PIN},
    )
    assert r.status_code == 201
    assert "notice" not in parts.tables.view(table)["pad"]  # the phone answered it
    r = client.post("/api/pad", json={"table": table}, headers={"X-Dicepad-Pin": PIN})
    assert r.status_code == 200
    assert (r.json or {})["assigned"] == table
    assert client.post("/api/pad", json={"table": table}).status_code == 401
    assert (
        client.post("/api/pad", json={"tabel": 1}, headers={"X-Dicepad-Pin": PIN}).status_code
        == 400
    )
    svc.stop()
    parts.close()


def test_serve_wiring_starts_nothing_for_camera_none_and_the_demo_otherwise(
    tmp_path: Path,
) -> None:
    def make(camera: str, where: str) -> Any:
        return create_app(
            Config(data_dir=tmp_path / where, pin=PIN, camera=camera, pin_scrypt_n=2**4)
        )

    app = make("none", "a")
    assert start_pad_service(app) is None
    off = app.test_client().get("/api/pad").json or {}
    assert off["running"] is False
    assert off["flat_die_px"] is None
    assert off["throws"] == []
    dicepad(app).close()
    app = make("demo?fps=5", "b")
    svc = start_pad_service(app)
    assert svc is not None
    assert svc.running
    # one shape with a camera or without: a client reads the same keys
    assert set(app.test_client().get("/api/pad").json or {}) == set(off)
    svc.stop()
    assert not svc.running
    dicepad(app).close()
    app = make("bogus-camera", "c")
    with pytest.raises(ValueError, match="neither a camera kind"):
        start_pad_service(app)
    dicepad(app).close()


def test_snapshot_is_a_jpeg_under_the_limit() -> None:
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    jpeg = encode_snapshot(noise, limit=40_000)
    assert jpeg.startswith(b"\xff\xd8\xff")
    assert len(jpeg) <= 40_000


def test_a_stale_heartbeat_stops_feeding_the_watchdog(tmp_path: Path) -> None:
    now = [100.0]
    store = Store(tmp_path / "h.sqlite3")
    health = Health(store, Feed(), monotonic=lambda: now[0])
    health.report("pad", True, "loop", critical=True, ttl=20.0)
    assert health.healthy()
    now[0] += 21  # a camera driver hung inside a read: the loop stopped reporting
    assert not health.healthy()
    assert health.check()["pad"].detail.startswith("no report for 21 s")
    health.report("pad", True, "loop", critical=True, ttl=20.0)
    assert health.healthy()
    store.close()


# PS4, PS5 -- pad/service.py: driven with settled frames and a scripted reader


class _Reader:
    def __init__(self) -> None:
        self.next: Reading | Exception | None = None

    def __call__(self, image: np.ndarray, pad: Pad | None) -> Reading:
        assert self.next is not None
        if isinstance(self.next, Exception):
            raise self.next
        return self.next


def _pad_service(tmp_path: Path) -> tuple[PadService, TableService, Store, _Reader]:
    store = Store(tmp_path / "pad.sqlite3")
    tables = TableService(store, Feed(), clock=ticking_clock(CLOCK_START))
    tables.load()
    reader = _Reader()
    return PadService(tables, None, reader=reader, truth_fallback=False), tables, store, reader


FRAME = Frame(np.zeros((48, 64, 3), np.uint8), 0.0, 0)


def test_a_throw_the_reader_fails_on_asks_the_table_to_enter_it(tmp_path: Path) -> None:
    svc, tables, store, reader = _pad_service(tmp_path)
    try:
        table = tables.create("bolo", players=["Ann"])["table"]
        reader.next = RuntimeError("reader crashed")
        throw = svc.settled(FRAME)
        assert throw.error == "reader crashed"
        notice = tables.view(table)["pad"]["notice"]
        assert notice["kind"] == "confirm"
        assert "enter it on the phone" in notice["text"]
    finally:
        store.close()


def test_dice_left_standing_are_forgotten_once_a_phone_acts(tmp_path: Path) -> None:
    svc, tables, store, reader = _pad_service(tmp_path)
    try:
        table = tables.create("bolo", players=["Ann"])["table"]
        cocked = reading(1, 5, 2, 3, 3, flags={2: (DieFlag.COCKED,)})
        reader.next = cocked
        svc.settled(FRAME)  # roll + reroll of the cocked 2; four dice stay on the pad
        assert [e["action"]["type"] for e in tables.log(table)] == ["roll", "reroll"]
        tables.apply(table, Undo(), source="phone")  # the phone takes the whole throw back
        tables.apply(table, Undo(), source="phone")
        assert tables.view(table)["expecting"]["dice"] == 5
        # the four dice still lie where they were; the fifth lands elsewhere: a 5-dice roll
        reader.next = Reading(
            (*(d for i, d in enumerate(cocked.dice) if i != 2), die(6, 300.0, 300.0)), (640, 480)
        )
        throw = svc.settled(FRAME)
        assert throw.decision is not None
        assert throw.decision.actions == (Roll((1, 5, 3, 3, 6)),)
    finally:
        store.close()
