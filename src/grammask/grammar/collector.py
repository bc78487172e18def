"""Pausing CPython's cyclic garbage collector while a grammar is built.

What it computes: ``collector_paused()`` is a context manager that turns the
cyclic collector off for its body and back on afterwards, if it was on.
Before turning it back on, the outermost use moves every tracked object to
the oldest generation (``gc.freeze()`` then ``gc.unfreeze()``: two list
splices, no scan), unless the program froze objects itself
(``gc.get_freeze_count()`` is not 0; unfreezing would undo its freeze).

Why: parsing, flattening and normalizing a grammar of 20,000 rules
allocates hundreds of thousands of tuples, lists and dicts that stay alive
until the pass ends; every 700 allocations the collector walks the young
ones, and the older generations are walked again and again as they grow,
about a third of the CPU time of such a build (``bench_hostile``'s unit
chain and optional properties).  These objects hold no reference cycles
that need collecting during the build; anything cyclic left behind is
collected by a later full collection.  Without the move, the first
allocation after the body finds the young generation's counter far past
its threshold and walks everything the build left alive (the grammar,
its tables): about 1 ms of a 6 ms JSON Schema compile at MaskBench's
median, spent on objects that live as long as the grammar.

Invariants: the collector's previous state is restored on every exit,
exceptions included; nested uses are harmless (only the outermost one
that found the collector on moves objects and turns it back on); objects
a program froze stay frozen.
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
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
