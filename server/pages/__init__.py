"""The phone pages: table list, live scoreboard, game control, the high-roll wall.

Everything is rendered on the server by Jinja (autoescaped); each page loads one small
vanilla script from ``/static`` and no inline script at all, so the Content-Security-Policy
can say ``script-src 'self'``. Data reaches the scripts through ``data-`` attributes or
fetched JSON; changes go through the JSON API (the one validation path) with the session's
CSRF token. The pad's question (``ask``) is also a plain form, so that a phone without the
script can answer it: its route applies the same roll through the same ``TableService.apply``.
The teaching page (``teach``) teaches the house's dice to the reader.
"""

from __future__ import annotations

from flask import Flask

from server.pages import board, cache, security
from server.pages import teach as teach  # its routes join the pages blueprint
from server.pages.routes import bp

__all__ = ["bp", "init_app"]


def init_app(app: Flask) -> None:
    """Register the pages, the security headers and the CSRF check on ``app``."""
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    app.jinja_env.filters["mark_kept"] = board.mark_kept
    app.jinja_env.filters["mark_matching"] = board.mark_matching
    security.init_app(app)
    cache.init_app(app)
    app.register_blueprint(bp)
