"""``/api/pad``: what the camera is doing, which table is on the pad, and the photo of a throw
the table is asked to confirm. Reading is public; choosing the table needs the PIN.

The running :class:`~server.pad.service.PadService` is ``app.extensions["dicepad_pad"]``
(set by :func:`attach`); with ``--camera none`` there is none and the endpoints say so.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import NotFound

from server import bodies
from server.api import jpeg_response, require_pin
from server.errors import BodyError
from server.pad.service import EXTENSION, PAD_FILE, PadService

bp = Blueprint("pad", __name__, url_prefix="/api/pad")


def attach(app: Flask, service: PadService) -> None:
    app.extensions[EXTENSION] = service


def start_pad_service(app: Flask) -> PadService | None:
    """Start the pad service for ``app``'s ``--camera`` (None with ``--camera none``): the
    camera from ``config.camera`` (seen as ``config.camera_view``), the calibrated pad and
    camera settings from the data directory, the buttons from ``DICEPAD_BUTTONS``, the table
    put on the pad before a restart from the database, the house set that fixes and answers
    teach from ``DATA/house/`` (its model read with every throw once loaded or fitted, off
    the camera's thread; a damaged folder is said in the log and health, never fatal).
    ``SpecError`` for a bad camera spec."""
    from hardware.buttons import ButtonConfig
    from hardware.sources import SourceOpener
    from server.pad.house import HOUSE_DIR, PadHouse
    from server.pad.reading import vision_reader
    from server.services import dicepad

    parts = dicepad(app)
    config = parts.config
    if config.manual_only:
        return None
    opener = SourceOpener(config.camera, data_dir=config.data_dir)
    house = PadHouse(config.data_dir / HOUSE_DIR, health=parts.health)
    service = PadService(
        parts.tables,
        opener,
        health=parts.health,
        pad_file=config.data_dir / PAD_FILE,
        buttons=ButtonConfig.from_env(),
        reader=vision_reader(view=config.camera_view, house=lambda: house.model),
        settings=parts.store,
        house=house,
    )
    attach(app, service)
    service.start()
    return service


def pad_service(app: Flask | None = None) -> PadService | None:
    found: PadService | None = (app or current_app).extensions.get(EXTENSION)
    return found


NO_CAMERA: dict[str, Any] = {
    "running": False,
    "camera": None,
    "source": None,
    "assigned": None,
    "table": None,
    "frames": 0,
    "fps": None,
    "flat_die_px": None,
    "house": None,
    "throws": [],
}
"""``GET /api/pad`` with ``--camera none``: the keys of ``PadService.status_json``, so a
client reads one shape either way."""


@bp.get("")
def status() -> Response:
    service = pad_service()
    if service is None:
        return jsonify(NO_CAMERA)
    return jsonify(service.status_json())


@bp.post("")
def assign() -> Response:
    """``{"table": ID}`` puts that table on the pad; ``{"table": null}`` goes back to the most
    recently active open table."""
    require_pin()
    body: Any = bodies.json_body(request)
    if not isinstance(body, dict) or set(body) != {"table"}:
        raise BodyError('expected {"table": ID} or {"table": null}')
    table = body["table"]
    if table is not None and not isinstance(table, str):
        raise BodyError("table must be a table id or null")
    service = pad_service()
    if service is None:
        raise BodyError("no camera is running (--camera none): there is no pad to assign")
    service.assign(table)
    return jsonify(service.status_json())


@bp.get("/snapshot/<table_id>")
def snapshot(table_id: str) -> Response:
    service = pad_service()
    jpeg = None if service is None else service.pending_snapshot(table_id)
    if jpeg is None:
        raise NotFound(f"table {table_id} has no throw waiting for confirmation")
    # the scoreboard's URL names the notice (``?v=``, board.pad_key, which changes with every
    # throw's photo): the photo and each die's crop of it are then fetched once
    versioned = "v" in request.args
    return jpeg_response(jpeg, cache_control="private, max-age=600" if versioned else "no-store")
