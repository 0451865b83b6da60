"""A table server's link to the house: the shipper started from the config, told of every
change by the table service, the record wall and the players' hides, and shown in
``/api/health``.

Imported only when ``--house`` is given (:func:`server.app.create_app`), so that a lone Pi
never loads the PostgreSQL driver.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime

from server.config import Config
from server.health import Health
from server.house.shipper import HouseStatus, Shipper, ShipSettings
from server.players.service import PlayerService
from server.records import Records
from server.standing import Standing
from server.store import Store
from server.tables import TableService

INSTANCE_SETTING = "house.instance"  #: this server's random id, the proof a house name is ours


def instance_id(store: Store) -> str:
    """This table server's instance id, made on first use and kept in its SQLite settings."""
    found = store.setting(INSTANCE_SETTING)
    if found:
        return found
    made = secrets.token_hex(12)
    store.set_settings({INSTANCE_SETTING: made})
    return made


def start(config: Config, store: Store, tables: TableService, health: Health) -> Shipper:
    """The shipper for ``config.house_url``, listening to ``tables`` and shown in ``health``
    (the ``house`` component, never critical: the tables play on without the house)."""
    assert config.house_url is not None
    settings = ShipSettings(
        url=config.house_url,
        house_name=config.house_member,
        public_url=config.public_url,
        retry_min=config.house_retry_min,
        retry_max=config.house_retry_max,
        sweep_seconds=config.house_sweep_seconds,
    )
    shipper = Shipper(store, tables, settings, instance=instance_id(store), clock=config.clock)

    def applied(table_id: str, entry: Standing, before: object, source: str) -> None:
        shipper.changed(table_id, entry.seq)

    tables.on_apply(applied)
    tables.on_create(lambda view: shipper.changed(str(view["table"]), int(view["seq"])))
    health.probe("house", lambda: _component(shipper.status()))
    health.attach("house", lambda: shipper.status().to_json())
    shipper.start()
    return shipper


def _component(status: HouseStatus) -> tuple[bool, str]:
    return status.ok, status.detail()


class ShippedRecords(Records):
    """The record wall, telling the shipper when the PIN holder hides or shows a record (no
    event is logged for it, and the house shows ``hidden_at_table``)."""

    def __init__(self, store: Store, clock: Callable[[], datetime], shipper: Shipper) -> None:
        super().__init__(store, clock)
        self._shipper = shipper

    def set_hidden(self, record_id: str, hidden: bool = True) -> None:
        super().set_hidden(record_id, hidden)
        self._shipper.changed(record_id.split(".", 1)[0], records=True)  # ids: table.seq.n


class ShippedPlayers(PlayerService):
    """The players' service, telling the shipper when the PIN holder hides or shows a player
    (no event is logged for it; the house hides them from its public pages too, and shows its
    own PIN holder ``hidden_at_tables``)."""

    def __init__(self, store: Store, clock: Callable[[], datetime], shipper: Shipper) -> None:
        super().__init__(store, clock=clock)
        self._shipper = shipper

    def set_hidden(self, name: str, hidden: bool) -> str | None:
        key = super().set_hidden(name, hidden)
        if key is not None:
            self._shipper.players_changed()
        return key
