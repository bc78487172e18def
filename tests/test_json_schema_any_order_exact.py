"""``any_order=True`` objects are exact: required members, ``minProperties``
/ ``maxProperties`` and ``dependentRequired`` (draft-7 array
``dependencies`` too) are tracked in the any-order rules' states
(``GrammarBuilder.any_order_object``), and past
``Options.max_any_order_states`` the translation raises ``LimitExceeded``
naming it.

Oracle: ``jsonschema`` (the declared draft's validator) on hand-written
objects and on objects Hypothesis draws (derandomized by the conftest
profile) with their members in every drawn order; random walks of the
grammars without a repeated key must be valid (members are counted as
written: a text repeating a key is one object to ``json.loads``)."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import grammask
from support.schema_matcher import SchemaMatcher

INTEGER = {"type": "integer"}
SCHEMAS = {
    "counts": {"type": "object", "properties": {"a": INTEGER, "b": INTEGER, "c": INTEGER},
               "minProperties": 2, "maxProperties": 3},
    "counts_with_extras": {"type": "object", "properties": {"a": INTEGER},
                           "additionalProperties": {"type": "string"}, "required": ["a"],
                           "maxProperties": 2},
    "at_least": {"type": "object", "minProperties": 3},
    "dependent_required": {"type": "object", "properties": {"a": INTEGER, "b": INTEGER,
                                                            "c": INTEGER},
                           "dependentRequired": {"a": ["b", "c"], "c": ["b"]}},
    "draft7_dependencies": {"$schema": "http://json-schema.org/draft-07/schema#",
                            "type": "object", "properties": {"x": INTEGER},
                            "dependencies": {"x": ["y"], "y": ["z"]},
                            "additionalProperties": False},
    "required_many": {"type": "object", "required": [f"r{i}" for i in range(8)],
                      "properties": {f"r{i}": INTEGER for i in range(9)}},
    "all_together": {"type": "object", "properties": {"a": INTEGER, "b": INTEGER},
                     "required": ["a"], "dependentRequired": {"b": ["q"]},
                     "additionalProperties": INTEGER, "minProperties": 2, "maxProperties": 4},
}
KEYS = ["a", "b", "c", "x", "y", "z", "q"] + [f"r{i}" for i in range(9)]
VALUES = [0, 1, "s", None]


def validator(schema):
    return jsonschema.validators.validator_for(schema)(schema)


def text_of(pairs) -> str:
    return "{" + ",".join(f"{json.dumps(key)}:{json.dumps(value)}" for key, value in pairs) + "}"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_silent(name):
    assert SchemaMatcher(SCHEMAS[name], any_order=True).warnings == []


_MATCHERS = {name: SchemaMatcher(schema, any_order=True) for name, schema in SCHEMAS.items()}


@given(st.sampled_from(sorted(SCHEMAS)),
       st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES)), max_size=10,
                unique_by=lambda pair: pair[0]))
def test_objects_in_any_order_agree_with_jsonschema(name, pairs):
    instance = dict(pairs)
    assert _MATCHERS[name].accepts(text_of(pairs)) == validator(SCHEMAS[name]).is_valid(instance), \
        (name, pairs)


def test_hand_written():
    matcher = _MATCHERS["dependent_required"]
    assert matcher.accepts('{"c":1,"b":2}') and matcher.accepts('{"b":1,"c":2,"a":3}')
    assert not matcher.accepts('{"a":1,"b":2}') and not matcher.accepts('{"c":1}')
    matcher = _MATCHERS["required_many"]
    names = [f"r{i}" for i in range(8)]
    assert matcher.accepts(text_of([(n, 1) for n in reversed(names)]))
    assert not matcher.accepts(text_of([(n, 1) for n in names[1:]] + [("r8", 1)]))
    assert _MATCHERS["at_least"].accepts('{"x":1,"y":2,"z":[]}')
    assert not _MATCHERS["at_least"].accepts('{"x":1,"y":2}')


@pytest.mark.parametrize("name", sorted(set(SCHEMAS) - {"required_many"}))
def test_random_walks_are_valid(name):
    """(required_many's walks rarely write eight different members before
    the walker's budget ends them.)"""
    rng = random.Random(5)
    check = validator(SCHEMAS[name])
    ended = 0
    for _ in range(200):
        walk = _MATCHERS[name].random_walk(rng, max_bytes=400)
        pairs = None if walk is None else json.loads(walk, object_pairs_hook=list)
        if pairs is not None and len({key for key, _ in pairs}) == len(pairs):
            ended += 1
            assert check.is_valid(json.loads(walk)), walk
    assert ended >= 20


def test_too_many_states_is_a_typed_limit():
    schema = {"type": "object", "required": [f"r{i}" for i in range(5)], "maxProperties": 6}
    # (set of required members written, members written): 129 states reachable
    with pytest.raises(grammask.LimitExceeded, match="max_any_order_states"):
        grammask.Grammar.from_json_schema(schema, any_order=True, max_any_order_states=40)
    grammask.Grammar.from_json_schema(schema, any_order=True, max_any_order_states=200)
    with pytest.raises(grammask.LimitExceeded, match="max_any_order_states"):
        grammask.Grammar.from_json_schema({"type": "object", "required": [f"r{i}" for i in range(13)]},
                                          any_order=True)
    grammask.Grammar.from_json_schema(schema, max_any_order_states=1)  # schema order: no such states
