"""A small thread-safe LRU map, for the engine's caches.

What it computes
    ``get_or_build(key, build)`` returns the cached value or builds, stores
    and returns it; ``get`` / ``put`` read and write single entries.  The
    least recently used entries are dropped beyond ``capacity``.

Data layout
    An ``OrderedDict`` from key to value, least recently used first.

Invariants
    One lock guards the dict; ``build`` runs outside it, so two threads may
    build the same key at once (the later value wins; builds are pure).
"""

from __future__ import annotations

import threading
from collections import OrderedDict


class LRU:
    """A thread-safe LRU map of at most ``capacity`` entries."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(self, key, build):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = build()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return value

    def get(self, key):
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def values(self) -> list:
        """A snapshot of the cached values."""
        with self._lock:
            return list(self._items.values())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
