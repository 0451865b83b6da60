"""Rendered scoreboard bodies, shared by every phone watching a table.

On every change each watching phone fetches the board's body; with a bar full of phones
that is the same HTML rendered once per phone. The body depends only on the table's log
position and the viewer's role (watcher, PIN holder, kiosk), never on the session itself
(the CSRF token lives in the page shell), so it is rendered once per key and kept in a
small LRU.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from flask import Flask, current_app

EXTENSION = "dicepad.pages"


class RenderCache:
    """A bounded, thread-safe LRU of rendered fragments."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, str] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, render: Callable[[], str]) -> str:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        value = render()  # outside the lock: two renders of one key are harmless
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


def init_app(app: Flask) -> None:
    app.extensions[EXTENSION] = RenderCache()


def render_cache() -> RenderCache:
    cache: RenderCache = current_app.extensions[EXTENSION]
    return cache
