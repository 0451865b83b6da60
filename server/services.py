"""The parts of one running dicepad, held by the app (``app.extensions["dicepad"]``).

The pad service (issue 8) reaches the same objects: it calls
``tables.apply(table, action, source="camera", snapshot=jpeg)`` and reports the camera into
``health``; ``dicepad serve`` feeds the systemd watchdog from ``health``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import Flask, current_app

from server.auth import PinAuth
from server.config import Config
from server.feed.hub import Feed
from server.health import Health
from server.records import Records
from server.store import Store
from server.tables import TableService

if TYPE_CHECKING:  # the house's code (and its driver) is loaded only with --house
    from server.house.shipper import Shipper

EXTENSION = "dicepad"


@dataclass(frozen=True)
class Dicepad:
    config: Config
    store: Store
    feed: Feed
    tables: TableService
    records: Records
    auth: PinAuth
    health: Health
    #: shipping this server's logs to the house (``--house``); None on a lone Pi
    house: Shipper | None = None

    def close(self) -> None:
        """Stop shipping, end every live stream, then close the database (server shutdown)."""
        if self.house is not None:
            self.house.close()
        self.feed.close()
        self.store.close()


def dicepad(app: Flask | None = None) -> Dicepad:
    """The parts of ``app`` (default: the current app)."""
    found: Dicepad = (app or current_app).extensions[EXTENSION]
    return found
