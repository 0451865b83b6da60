"""Buttons and the status LED on gpiozero's MockFactory; and the app without GPIO."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from hardware.buttons import ButtonConfig, ButtonEvent, Buttons, open_buttons

CONFIG = ButtonConfig(bank_pin=17, undo_pin=27, led_pin=22, undo_hold_s=0.1, bounce_s=None)


class Events:
    def __init__(self) -> None:
        self.got: list[ButtonEvent] = []
        self.changed = threading.Event()

    def __call__(self, event: ButtonEvent) -> None:
        self.got.append(event)
        self.changed.set()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    f = MockFactory()
    yield f
    f.close()


@pytest.fixture
def rig(factory: MockFactory) -> Iterator[tuple[Buttons, Events, MockFactory]]:
    events = Events()
    with Buttons(CONFIG, events, pin_factory=factory) as buttons:
        yield buttons, events, factory


def test_bank_press_emits_bank(rig: tuple[Buttons, Events, MockFactory]) -> None:
    _, events, factory = rig
    pin = factory.pin(17)
    pin.drive_low()  # pressed: wired to ground, pulled up
    pin.drive_high()
    assert events.got == [ButtonEvent.BANK]
    bank: str = ButtonEvent.BANK  # as a str: mypy deems a StrEnum member never equal to one
    assert bank == "bank"


def test_undo_needs_a_hold(rig: tuple[Buttons, Events, MockFactory]) -> None:
    _, events, factory = rig
    pin = factory.pin(27)
    pin.drive_low()
    pin.drive_high()  # a brush against the button
    time.sleep(0.15)
    assert events.got == []
    pin.drive_low()
    assert events.changed.wait(1.0)
    pin.drive_high()
    assert events.got == [ButtonEvent.UNDO]


def test_led_on_when_ready_blinking_when_offline(rig: tuple[Buttons, Events, MockFactory]) -> None:
    buttons, _, factory = rig
    led = factory.pin(22)
    buttons.show_status(ready=True)
    assert led.state
    buttons.show_status(ready=False)
    time.sleep(0.05)
    buttons.show_status(ready=False)  # repeating does not restart the blink
    deadline = time.monotonic() + 1.5
    states: set[bool] = set()
    while time.monotonic() < deadline and len(states) < 2:
        states.add(bool(led.state))
        time.sleep(0.02)
    assert states == {True, False}
    buttons.show_status(ready=True)
    assert led.state


def test_a_failing_handler_is_logged_not_raised(
    factory: MockFactory, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(event: ButtonEvent) -> None:
        raise RuntimeError("server busy")

    with Buttons(CONFIG, broken, pin_factory=factory):
        factory.pin(17).drive_low()
        factory.pin(17).drive_high()
    assert "handling button bank failed" in caplog.text


def test_close_releases_the_pins(factory: MockFactory) -> None:
    buttons = Buttons(CONFIG, Events(), pin_factory=factory)
    buttons.close()
    buttons.close()
    Buttons(CONFIG, Events(), pin_factory=factory).close()  # the pins are free again


def test_only_the_fitted_parts_are_used(factory: MockFactory) -> None:
    events = Events()
    config = ButtonConfig(bank_pin=5, undo_pin=None, led_pin=None, bounce_s=None)
    with Buttons(config, events, pin_factory=factory) as buttons:
        buttons.show_status(ready=False)  # no LED: nothing happens
        assert buttons.describe() == "bank GPIO5"
        factory.pin(5).drive_low()
        factory.pin(5).drive_high()
    assert events.got == [ButtonEvent.BANK]


def test_a_busy_pin_means_no_buttons(
    factory: MockFactory, caplog: pytest.LogCaptureFixture
) -> None:
    with Buttons(CONFIG, Events(), pin_factory=factory):
        caplog.set_level(logging.WARNING)
        assert open_buttons(CONFIG, Events(), pin_factory=factory) is None
    assert "physical buttons disabled" in caplog.text


class _DriverError(Exception):
    """Like ``lgpio.error``: what the Pi's pin driver raises, a bare Exception subclass."""


class _HeldByAnotherProcess(MockPin):  # type: ignore[misc]  # gpiozero is untyped
    """GPIO27 is claimed by another process: lgpio raises ``error('GPIO busy')``."""

    def __init__(self, factory: MockFactory, info: Any) -> None:
        if info.name == "GPIO27":
            raise _DriverError("'GPIO busy'")
        super().__init__(factory, info)


def test_a_pin_held_by_another_process_means_no_buttons(caplog: pytest.LogCaptureFixture) -> None:
    """Only gpiozero's, OS and runtime errors were caught: lgpio's "GPIO busy" escaped
    open_buttons (the pad service, and the server, failed to start) and left GPIO17 claimed."""
    factory = MockFactory(pin_class=_HeldByAnotherProcess)
    try:
        caplog.set_level(logging.WARNING)
        assert open_buttons(CONFIG, Events(), pin_factory=factory) is None
        assert "GPIO busy" in caplog.text
        with Buttons(ButtonConfig(bank_pin=17, undo_pin=None), Events(), pin_factory=factory):
            pass  # GPIO17 was released
    finally:
        factory.close()


def test_without_gpio_hardware_the_app_runs_on(caplog: pytest.LogCaptureFixture) -> None:
    from gpiozero import Device

    if Device.pin_factory is not None:
        pytest.skip("a default pin factory is already loaded in this process")
    caplog.set_level(logging.INFO)
    buttons = open_buttons(ButtonConfig(), Events())
    if buttons is not None:  # pragma: no cover (this machine has real GPIO)
        buttons.close()
        pytest.skip("this machine has GPIO")
    assert "physical buttons disabled: GPIO not usable" in caplog.text


def test_without_gpiozero_the_app_runs_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero", None)  # import gpiozero -> ImportError
    assert open_buttons(ButtonConfig(), Events()) is None
    assert "gpiozero is not installed" in caplog.text


def test_disabled_by_configuration(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    assert open_buttons(ButtonConfig.parse("off"), Events()) is None
    assert "disabled by configuration" in caplog.text


def test_config_parsing() -> None:
    c = ButtonConfig.parse("bank=5, undo=6, led=13, hold=2, bounce=off, active=high")
    assert c == ButtonConfig(5, 6, 13, 2.0, None, False)
    assert ButtonConfig.parse("led=none", base=c).led_pin is None
    assert ButtonConfig.from_env({"DICEPAD_BUTTONS": "undo=4"}).undo_pin == 4
    assert ButtonConfig.from_env({}) == ButtonConfig()
    assert not ButtonConfig.parse("off").enabled


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("bank=40", "not a BCM pin"),
        ("bank=17,undo=17", "its own GPIO pin"),
        ("bank", "key=value"),
        ("colour=red", "unknown key"),
        ("hold=0", "positive"),
        ("hold=inf", "at most 60"),  # killed gpiozero's hold thread (OverflowError)
        ("hold=nan", "positive"),
        ("bounce=inf", "at most 1"),
        ("active=sideways", "low or high"),
        ("bank=seventeen", "bad button setting"),
    ],
)
def test_bad_config_says_what_is_wrong(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ButtonConfig.parse(text)


# BT1, BT3, BT4 -- buttons.py


def test_both_buttons_are_debounced_as_configured() -> None:
    # MockFactory pins do not simulate bounce; what the real pin driver is given is checked
    factory = MockFactory()
    try:
        with Buttons(ButtonConfig(), lambda e: None, pin_factory=factory):  # the defaults
            assert factory.pin(17).bounce == pytest.approx(0.05)
            assert factory.pin(27).bounce == pytest.approx(0.05)
    finally:
        factory.close()


def test_undo_fires_after_the_configured_hold() -> None:
    factory = MockFactory()
    got: list[ButtonEvent] = []
    config = ButtonConfig(bank_pin=None, undo_pin=27, undo_hold_s=0.1, bounce_s=None)
    try:
        with Buttons(config, got.append, pin_factory=factory):
            pin = factory.pin(27)
            pin.drive_low()
            time.sleep(0.4)  # held well past 0.1 s (gpiozero's own default is 1 s)
            assert got == [ButtonEvent.UNDO]
            pin.drive_high()
    finally:
        factory.close()


def test_telling_the_led_again_that_the_camera_is_offline_keeps_it_blinking() -> None:
    factory = MockFactory()
    try:
        with Buttons(
            ButtonConfig(bank_pin=None, undo_pin=None, led_pin=22),
            lambda e: None,
            pin_factory=factory,
        ) as buttons:
            led = factory.pin(22)
            states: set[bool] = set()
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:  # the supervisor re-reports every retry
                buttons.show_status(ready=False)
                states.add(bool(led.state))
                time.sleep(0.02)
            assert states == {True, False}
    finally:
        factory.close()
