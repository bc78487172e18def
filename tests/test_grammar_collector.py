"""``collector_paused``: the cyclic collector is off inside, back on after;
what the body built lands in the oldest generation; a program's own frozen
objects stay frozen; cyclic garbage is still collected."""

from __future__ import annotations

import gc
import weakref

import pytest

from grammask import Grammar
from grammask.grammar.collector import collector_paused


class Node:
    """A weak-referenceable object that can hold a cycle."""

    def __init__(self):
        self.other = None


def in_generation(obj, generation: int) -> bool:
    return any(candidate is obj for candidate in gc.get_objects(generation=generation))


@pytest.fixture
def collector_on():
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()


def test_the_body_runs_with_the_collector_off_and_it_is_on_after(collector_on):
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError):
        with collector_paused():
            raise ValueError("raised inside")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            kept = [Node()]
        assert not gc.isenabled()
        assert in_generation(kept, 0)
    finally:
        if was_enabled:
            gc.enable()


def test_what_the_body_built_is_in_the_oldest_generation(collector_on):
    with collector_paused():
        kept = [Node() for _ in range(10)]
        assert in_generation(kept, 0)
    assert in_generation(kept, 2)
    assert not in_generation(kept, 0)
    assert gc.get_count()[0] < 700


def test_a_programs_frozen_objects_stay_frozen(collector_on):
    frozen = [Node()]
    gc.freeze()
    try:
        frozen_count = gc.get_freeze_count()
        with collector_paused():
            kept = [Node()]
        assert gc.get_freeze_count() == frozen_count
        assert not in_generation(frozen, 2)
        assert in_generation(kept, 0)
    finally:
        gc.unfreeze()


def test_cyclic_garbage_of_the_body_is_still_collected(collector_on):
    with collector_paused():
        first, second = Node(), Node()
        first.other, second.other = second, first
        watch = weakref.ref(first)
        del first, second
    assert watch() is not None
    gc.collect()
    assert watch() is None


def test_a_grammar_built_with_the_collector_on_leaves_it_on(collector_on):
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    assert gc.isenabled()
    assert in_generation(grammar, 2)
