"""The server's settings: one frozen value built once (from flags and the environment) and
handed to :func:`server.app.create_app`, so tests can run many apps side by side.

The clock and the monotonic timer live here too: they are the edges a test may replace.
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

CAMERA_NONE = "none"  #: manual entry only: no pad service is started
IDLE_HOURS = 12.0  #: one night at the bar: a game nobody touched since is idle
MAX_IDLE_HOURS = 24 * 365 * 100  #: a century: more means never (and overflows a timedelta)
IDLE_RULE = f"must be a positive number of hours, at most {MAX_IDLE_HOURS}"


def utc_now() -> datetime:
    return datetime.now(UTC)


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``DICEPAD_DATA``, else the per-user data directory (``~/.local/share/dicepad``)."""
    env = os.environ if environ is None else environ
    given = env.get("DICEPAD_DATA")
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_data_dir("dicepad", appauthor=False))


@dataclass(frozen=True)
class Config:
    """Everything :func:`~server.app.create_app` needs; defaults are the product's."""

    data_dir: Path
    #: frame source spec for the pad service (issue 8): ``demo``, ``none``, ``picamera2``...
    camera: str = "demo"
    #: how the camera looks at the pad: ``overhead`` (the product's mount) or ``slanted``; it
    #: picks the COCKED / STACKED operating points (``vision.params.CAMERA_VIEWS``)
    camera_view: str = "overhead"
    #: the PIN from ``DICEPAD_PIN``; ``None`` = use the stored one or generate it on first start
    pin: str | None = None
    #: hours without an action after which a game not over is idle (``DICEPAD_IDLE_HOURS``):
    #: abandoned games then cost the pad service and a start nothing (``server.tables``)
    idle_hours: float = IDLE_HOURS
    #: largest request body (bytes): actions and new tables are tiny
    max_content_length: int = 64 * 1024
    #: largest JPEG snapshot kept with a roll
    max_snapshot_bytes: int = 1024 * 1024
    #: live-feed connections held at once (each holds a server thread); past it: 503
    max_feed_clients: int = 200
    #: messages queued per feed client before it is dropped (it reconnects and catches up)
    feed_queue_size: int = 64
    #: seconds between SSE keep-alive comments
    keepalive_seconds: float = 15.0
    #: failed PIN attempts per client address within ``pin_window_seconds`` before lock-out
    pin_max_failures: int = 5
    #: failed PIN attempts from all addresses together within ``pin_window_seconds``: past it
    #: only addresses that gave the right PIN before may try one (a guesser with many
    #: addresses gets 30 guesses in 5 minutes, not scrypt's ~20 a second)
    pin_max_failures_total: int = 30
    pin_window_seconds: float = 300.0
    pin_lockout_seconds: float = 300.0
    #: scrypt cost of the stored PIN hash (2**14 = 16 MiB, ~0.1 s on a Pi 4)
    pin_scrypt_n: int = 2**14
    #: the wall-clock source for event times (a fixed clock in tests)
    clock: Callable[[], datetime] = field(default=utc_now, compare=False)
    #: the monotonic source for rate limits and keep-alives
    monotonic: Callable[[], float] = field(default=time.monotonic, compare=False)
    #: the house database this server ships its logs to (``--house``, ``DICEPAD_HOUSE``:
    #: ``postgresql://...``); None: no house, and nothing of it is even imported
    house_url: str | None = None
    #: this server's name in the house (``--house-name``, ``DICEPAD_HOUSE_NAME``; None: the
    #: host name): its table ids are unique only within it
    house_name: str | None = None
    #: this server's scoreboard as the house's pages link to it (``--public-url``,
    #: ``DICEPAD_PUBLIC_URL``; ``dicepad serve`` defaults it to http://HOST.local:PORT/)
    public_url: str = ""
    #: shipping's back-off after a failure: the first wait, doubling up to the last (seconds)
    house_retry_min: float = 1.0
    house_retry_max: float = 60.0
    #: how often every table is compared with what the house holds (seconds)
    house_sweep_seconds: float = 30.0

    def __post_init__(self) -> None:
        from vision.params import flags_for_view

        flags_for_view(self.camera_view)  # a ValueError naming the views
        if not _valid_idle_hours(self.idle_hours):
            raise ValueError(f"idle_hours {IDLE_RULE}, got {self.idle_hours!r}")
        if self.house_url is not None and not self.house_url.startswith(
            ("postgresql://", "postgres://")
        ):  # checked here: the shipper would only say "offline" about it, forever
            raise ValueError(
                "the house must be a postgresql://USER:PASSWORD@HOST/DB URL "
                "(systemd/install.sh --house prints it)"
            )
        name = self.house_name
        if name is not None and not (0 < len(name) <= 64 and name.isprintable() and name.strip()):
            raise ValueError(f"the house name must be 1-64 printable characters, got {name!r}")

    @property
    def house_member(self) -> str:
        """This server's name in the house: :attr:`house_name`, else the host name."""
        return self.house_name or socket.gethostname()

    @property
    def idle_after(self) -> timedelta:
        """:attr:`idle_hours` as the table service takes it."""
        return timedelta(hours=self.idle_hours)

    @property
    def database_path(self) -> Path:
        return self.data_dir / "dicepad.sqlite3"

    @property
    def manual_only(self) -> bool:
        return self.camera == CAMERA_NONE

    @classmethod
    def from_environ(
        cls,
        *,
        data_dir: Path | None = None,
        camera: str | None = None,
        camera_view: str | None = None,
        house: str | None = None,
        house_name: str | None = None,
        public_url: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Config:
        """Flags win over the environment (``DICEPAD_DATA``, ``DICEPAD_CAMERA``,
        ``DICEPAD_CAMERA_VIEW``, ``DICEPAD_PIN``, ``DICEPAD_IDLE_HOURS``, ``DICEPAD_HOUSE``,
        ``DICEPAD_HOUSE_NAME``, ``DICEPAD_PUBLIC_URL``), which wins over the defaults. A
        setting that does not parse is a ValueError naming it."""
        env = os.environ if environ is None else environ
        return cls(
            data_dir=data_dir if data_dir is not None else default_data_dir(env),
            camera=camera or env.get("DICEPAD_CAMERA") or "demo",
            camera_view=camera_view or env.get("DICEPAD_CAMERA_VIEW") or "overhead",
            pin=env.get("DICEPAD_PIN") or None,
            idle_hours=_idle_hours(env.get("DICEPAD_IDLE_HOURS")),
            house_url=house or env.get("DICEPAD_HOUSE") or None,
            house_name=house_name or env.get("DICEPAD_HOUSE_NAME") or None,
            public_url=public_url or env.get("DICEPAD_PUBLIC_URL") or "",
        )


def _valid_idle_hours(hours: float) -> bool:
    return math.isfinite(hours) and 0 < hours <= MAX_IDLE_HOURS


def _idle_hours(text: str | None) -> float:
    """``DICEPAD_IDLE_HOURS`` (unset or blank: the default)."""
    if text is None or not text.strip():
        return IDLE_HOURS
    try:
        hours = float(text)
    except ValueError:
        hours = math.nan
    if not _valid_idle_hours(hours):
        raise ValueError(f"DICEPAD_IDLE_HOURS {IDLE_RULE} (e.g. 12 or 1.5), got {text!r}")
    return hours
