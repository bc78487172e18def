"""``propertyNames`` that lists its keys (``enum`` / ``const``, through a
``$ref`` too): every key is one of finitely many names, so each allowed one
is declared with the schema the object gives it (``properties``, matching
``patternProperties``, else ``additionalProperties``) and no other key is
accepted (``objects._listed_names``).  Against ``jsonschema`` (the declared
draft, format checker) on hand-written objects and on objects Hypothesis
draws over a small key alphabet (derandomized by the conftest profile),
with ``any_order=True`` (keys in any order) and in the instance's schema
order for the hand-written ones; random walks must be valid."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

KEYS = ["N", "E", "S", "x", "p1", "p2", "q"]

SCHEMAS = {
    "enum through a ref": {
        "$defs": {"direction": {"enum": ["N", "E", "S", 3]}, "room": {"type": "integer"}},
        "type": "object", "propertyNames": {"$ref": "#/$defs/direction"},
        "additionalProperties": {"$ref": "#/$defs/room"}},
    "patterns and closed": {
        "definitions": {"name": {"type": "string", "enum": ["p1", "p2", "x"],
                                 "description": "a pipette"}},
        "type": "object", "propertyNames": {"$ref": "#/definitions/name"},
        "patternProperties": {".*": {"type": "number"}, "^p": {"minimum": 0}},
        "additionalProperties": False},
    "declared and listed": {
        "type": "object", "properties": {"N": {"type": "string"}, "q": {"type": "boolean"}},
        "required": ["N"], "propertyNames": {"enum": ["N", "E", "x"], "maxLength": 1},
        "additionalProperties": {"type": "null"}},
    "const": {"type": "object", "propertyNames": {"const": "S"},
              "properties": {"S": {"type": "string"}}},
    "draft 7": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "propertyNames": {"enum": ["E", "S"]}, "patternProperties": {"S": {"type": "string"}}},
}

POOL = [{}, {"N": 1}, {"N": "a"}, {"E": None}, {"x": 1}, {"N": 1, "E": 2}, {"S": "s"}, {"S": 1},
        {"p1": 1.5}, {"p1": -1}, {"p2": 0, "x": 2}, {"q": True}, {"N": "a", "q": True},
        {"N": "a", "E": None}, {"N": "a", "x": None}, {"3": 1}, [], "N", 1]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_listed_names_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL)
    assert 0 < n_valid < len(POOL)


_objects = st.dictionaries(st.sampled_from(KEYS),
                           st.one_of(st.none(), st.booleans(), st.integers(-2, 2),
                                     st.sampled_from(["", "a"])), max_size=4)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_listed_names_on_generated_objects(name):
    schema = SCHEMAS[name]
    matcher = SchemaMatcher(schema, any_order=True)
    assert matcher.warnings == []
    oracle = declared_oracle(schema)

    @settings(max_examples=200, suppress_health_check=list(HealthCheck))
    @given(_objects)
    def check(instance):
        assert matcher.accepts(json.dumps(instance)) == oracle.is_valid(instance), instance

    check()
