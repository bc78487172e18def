"""Pausing CPython's cyclic garbage collector while a grammar is built.

What it computes: ``collector_paused()`` is a context manager that turns the
cyclic collector off for its body and back on afterwards, if it was on.

Why: parsing, flattening and normalizing a grammar of 20,000 rules
allocates hundreds of thousands of tuples, lists and dicts that stay alive
until the pass ends; every 700 allocations the collector walks the young
ones, and the older generations are walked again and again as they grow,
about a third of the CPU time of such a build (``bench_hostile``'s unit
chain and optional properties).  These objects hold no reference cycles
that need collecting during the build; anything cyclic left behind is
collected once the collector runs again.

Invariants: the collector's previous state is restored on every exit,
exceptions included; nested uses are harmless (only the outermost one
that found the collector on turns it back on).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with the cyclic garbage collector off (see the module docstring)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
