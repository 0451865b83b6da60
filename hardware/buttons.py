"""Physical buttons by the pad and a status LED, through gpiozero.

Two buttons cover the moments the camera cannot decide: "done / bank" (press) and "undo"
(hold ~1.5 s, so a brush against it undoes nothing). They emit abstract :class:`ButtonEvent`
values; the server decides what they mean for the table. An optional LED shows the camera:
steady on when ready, blinking while it is offline.

gpiozero is optional (the ``pi`` extra): without it, or on a machine without GPIO,
:func:`open_buttons` logs one clear line and returns None, and the app runs on without buttons.
Tests and rehearsals pass ``gpiozero.pins.mock.MockFactory()`` as ``pin_factory``.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from hardware.closing import Closing

log = logging.getLogger(__name__)

ENV_VAR = "DICEPAD_BUTTONS"


class ButtonEvent(StrEnum):
    BANK = "bank"  # "done / bank": end the turn, keep the points
    UNDO = "undo"  # take back the last event


class ButtonsUnavailableError(RuntimeError):
    """GPIO cannot be used here (no gpiozero, no pin driver, pin busy)."""


_BCM_PINS = range(28)
MAX_HOLD_S = 60.0
MAX_BOUNCE_S = 1.0


@dataclass(frozen=True)
class ButtonConfig:
    """Which BCM pins are wired, and how. A pin of None means that part is not fitted.

    Buttons connect their pin to ground (internal pull-up) unless ``active_low`` is False.
    """

    bank_pin: int | None = 17
    undo_pin: int | None = 27
    led_pin: int | None = None
    undo_hold_s: float = 1.5
    bounce_s: float | None = 0.05
    active_low: bool = True

    def __post_init__(self) -> None:
        pins = [p for p in (self.bank_pin, self.undo_pin, self.led_pin) if p is not None]
        for pin in pins:
            if pin not in _BCM_PINS:
                raise ValueError(f"GPIO {pin} is not a BCM pin number (0-27)")
        if len(set(pins)) != len(pins):
            raise ValueError(f"each part needs its own GPIO pin (got {pins})")
        # bounded, not just positive: gpiozero waits these out on its threads, and hold=inf
        # overflowed that wait and killed the undo button's thread
        if not 0 < self.undo_hold_s <= MAX_HOLD_S:
            raise ValueError(f"undo_hold_s must be positive, at most {MAX_HOLD_S:g} s")
        if self.bounce_s is not None and not 0 < self.bounce_s <= MAX_BOUNCE_S:
            raise ValueError(f"bounce_s must be positive, at most {MAX_BOUNCE_S:g} s (or None)")

    @property
    def enabled(self) -> bool:
        return any(p is not None for p in (self.bank_pin, self.undo_pin, self.led_pin))

    @classmethod
    def parse(cls, text: str, base: ButtonConfig | None = None) -> ButtonConfig:
        """``bank=17,undo=27,led=22,hold=1.5,bounce=0.05,active=low``; ``off`` disables all;
        a pin of ``none`` removes that part. Unlisted keys keep ``base``'s values."""
        base = base or cls()
        text = text.strip().lower()
        if text in ("off", "none", "no"):
            return replace(base, bank_pin=None, undo_pin=None, led_pin=None)
        changes: dict[str, Any] = {}
        fields = {"bank": "bank_pin", "undo": "undo_pin", "led": "led_pin"}
        for item in filter(None, (i.strip() for i in text.split(","))):
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            try:
                if not eq:
                    raise ValueError("expected key=value")
                if key in fields:
                    changes[fields[key]] = None if value in ("none", "off") else int(value)
                elif key == "hold":
                    changes["undo_hold_s"] = float(value)
                elif key == "bounce":
                    changes["bounce_s"] = None if value in ("none", "off") else float(value)
                elif key == "active":
                    if value not in ("low", "high"):
                        raise ValueError("active is low or high")
                    changes["active_low"] = value == "low"
                else:
                    raise ValueError("unknown key")
            except ValueError as exc:
                raise ValueError(
                    f"bad button setting {item!r} ({exc}); expected e.g. "
                    "bank=17,undo=27,led=22,hold=1.5"
                ) from None
        return replace(base, **changes)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> ButtonConfig:
        """Defaults, overridden by ``DICEPAD_BUTTONS`` when set."""
        text = env.get(ENV_VAR, "").strip()
        return cls.parse(text) if text else cls()


class Buttons(Closing):
    """The wired buttons and LED. ``on_event`` runs on gpiozero's thread; keep it short and
    thread-safe (the server queues the action). Exceptions it raises are logged."""

    def __init__(
        self,
        config: ButtonConfig,
        on_event: Callable[[ButtonEvent], None],
        *,
        pin_factory: Any = None,
    ) -> None:
        try:
            import gpiozero
        except ImportError as exc:
            raise ButtonsUnavailableError(
                "gpiozero is not installed (in a checkout: .venv/bin/pip install -e '.[pi]';"
                " systemd/install.sh installs it on a Pi)"
            ) from exc
        self.config = config
        self._on_event = on_event
        self._devices: list[Any] = []
        self._lock = threading.Lock()
        self._led_state: bool | None = None
        self.bank: Any = None
        self.undo: Any = None
        self.led: Any = None
        try:
            with warnings.catch_warnings():  # fallbacks between pin drivers are not news
                warnings.simplefilter("ignore", gpiozero.PinWarning)
                if config.bank_pin is not None:
                    self.bank = self._add(
                        gpiozero.Button(
                            config.bank_pin,
                            pull_up=config.active_low,
                            bounce_time=config.bounce_s,
                            pin_factory=pin_factory,
                        )
                    )
                    self.bank.when_pressed = lambda: self._emit(ButtonEvent.BANK)
                if config.undo_pin is not None:
                    self.undo = self._add(
                        gpiozero.Button(
                            config.undo_pin,
                            pull_up=config.active_low,
                            bounce_time=config.bounce_s,
                            hold_time=config.undo_hold_s,
                            pin_factory=pin_factory,
                        )
                    )
                    self.undo.when_held = lambda: self._emit(ButtonEvent.UNDO)
                if config.led_pin is not None:
                    self.led = self._add(gpiozero.LED(config.led_pin, pin_factory=pin_factory))
        except Exception as exc:  # pin drivers raise their own types: lgpio's "GPIO busy"
            self.close()  # (another process holds the line) is a bare Exception subclass
            raise ButtonsUnavailableError(f"GPIO not usable: {exc}") from exc

    def _add(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def _emit(self, event: ButtonEvent) -> None:
        log.info("button: %s", event)
        try:
            self._on_event(event)
        except Exception:
            log.exception("handling button %s failed", event)

    def show_status(self, ready: bool) -> None:
        """LED steady on when the camera is ready, blinking while it is not (no-op without
        an LED; repeated calls with the same value do not restart the blink)."""
        with self._lock:
            if self.led is None or self._led_state is ready:
                return
            self._led_state = ready
            if ready:
                self.led.on()
            else:
                self.led.blink(on_time=0.5, off_time=0.5)

    def describe(self) -> str:
        c = self.config
        parts = [
            f"{name} GPIO{pin}"
            for name, pin in (("bank", c.bank_pin), ("undo", c.undo_pin), ("LED", c.led_pin))
            if pin is not None
        ]
        return ", ".join(parts) or "no buttons"

    def close(self) -> None:
        """Release the pins (LED off); idempotent."""
        devices, self._devices = self._devices, []
        for device in reversed(devices):
            try:
                device.close()
            except Exception:
                log.warning("closing %r failed", device, exc_info=True)


def open_buttons(
    config: ButtonConfig,
    on_event: Callable[[ButtonEvent], None],
    *,
    pin_factory: Any = None,
) -> Buttons | None:
    """The buttons, or None (with one log line saying why) when there are none to use."""
    if not config.enabled:
        log.info("physical buttons disabled by configuration")
        return None
    try:
        buttons = Buttons(config, on_event, pin_factory=pin_factory)
    except ButtonsUnavailableError as exc:
        log.warning("physical buttons disabled: %s; use the phones instead", exc)
        return None
    log.info("physical buttons ready: %s", buttons.describe())
    return buttons
