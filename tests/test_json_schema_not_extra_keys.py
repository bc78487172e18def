"""``not`` of ``additionalProperties`` / ``patternProperties`` beside open
objects: an object fails them iff some member the keyword applies to has a
failing value, declared by the object or extra (``applicators._extra_key_complements``,
``keywords.EXTRA_WITNESSES``, ``objects.object_node``: one more bit per
required member in the ordered member states says it was written; one
extra member may be several of them at once).  Also inside a
``oneOf`` branch subtracted from another.  Checked against ``jsonschema``
(the declared draft's validator) on hand-written objects and on objects
Hypothesis draws over a small key alphabet (derandomized by the conftest
profile), members in schema order; random walks through the grammars must
be valid.  (``{"not": {"additionalProperties": false}}`` beside an open
object was warned before, in ``test_json_schema_not.py``'s WARNED list.)"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from support.schema_matcher import (SchemaMatcher, assert_agrees_on_generated,
                                    assert_exact_and_silent)

KEYS = ["a", "b", "ab", "ba", "c", "x1", "é"]

SCHEMAS = {
    "additional_false": {"type": "object", "not": {"additionalProperties": False}},
    "additional_any_key": {"type": "object", "not": {"additionalProperties": {"type": "integer"}}},
    "additional_beside_declared": {
        "type": "object", "properties": {"a": {"type": ["integer", "string"]}},
        "required": ["a"],
        "not": {"properties": {"b": True}, "patternProperties": {"^x": True},
                "additionalProperties": {"type": "integer"}}},
    "pattern_beside_patterns": {
        "type": "object", "patternProperties": {"a": {"type": ["boolean", "integer"]},
                                                "b": {"type": "integer"}},
        "not": {"patternProperties": {"^b": {"type": "integer", "minimum": 1}}}},
    "pattern_false": {"type": "object", "minProperties": 2,
                      "allOf": [{"patternProperties": {"^.{1,1}$": False}},
                                {"patternProperties": {"a": True}, "additionalProperties": False}],
                      "not": {"patternProperties": {"b": False}}},
    "counted": {"type": "object", "maxProperties": 2, "properties": {"c": {"type": "integer"}},
                "not": {"additionalProperties": {"type": "boolean"}}},
    "closed_by_additional_schema": {
        "type": "object", "additionalProperties": {"type": "integer"},
        "not": {"patternProperties": {"a": {"minimum": 0}}}},
    "one_of": {"type": "object", "oneOf": [
        {"patternProperties": {"a": {"type": "integer"}}},
        {"not": {"patternProperties": {"b": {"type": "integer"}}}}]},
    "two_witnesses": {"type": "object", "properties": {"c": {"type": "integer"}},
                      "allOf": [{"not": {"patternProperties": {"a": {"type": "string"}}}},
                                {"not": {"additionalProperties": {"type": "boolean"}}}]},
    "draft_7": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "properties": {"ab": {"type": "string"}},
                "not": {"patternProperties": {"b": {"type": "string"}}}},
}

POOL = [{}, {"a": 1}, {"a": "s"}, {"b": 1}, {"b": True}, {"b": 0}, {"ab": 1}, {"ab": "s"},
        {"ba": True, "a": 2}, {"a": 1, "b": "s"}, {"a": "s", "x1": "s"}, {"a": 1, "c": 2},
        {"c": True}, {"c": 1, "é": True}, {"ab": True, "ba": 2}, {"ab": 2, "ba": -1},
        {"a": 1, "b": 2, "c": 3}, {"é": 1}, {"é": "s", "a": 0}, [], "a", 1, None]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_negated_extra_keys_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL, raw_unicode=True)
    assert 0 < n_valid < len(POOL)


_objects = st.dictionaries(st.sampled_from(KEYS),
                           st.one_of(st.booleans(), st.integers(-2, 2), st.sampled_from(["", "s"])),
                           max_size=4)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_negated_extra_keys_on_generated_objects(name):
    assert_agrees_on_generated(SCHEMAS[name], _objects)


@pytest.mark.parametrize("schema", [
    {"type": "object", "allOf": [{"not": {"patternProperties": {key: False}}}
                                 for key in "abcd"]},
    {"type": "object", "propertyNames": {"not": {"pattern": "x"}},
     "not": {"additionalProperties": {"type": "integer"}}},
])
def test_witnesses_it_does_not_build_still_warn(schema):
    """More than ``MAX_WITNESSES`` members required at once, and keys of a
    propertyNames the key terminals cannot meet, warn."""
    matcher = SchemaMatcher(schema)
    assert any("'not'" in str(warning) for warning in matcher.warnings)

