"""``allOf`` operands with ``patternProperties`` beside another operand's
``additionalProperties``: a key matching one operand's patterns only is an
additional property of the other, so it meets that operand's
``additionalProperties`` (``merge._pattern_keys_cross`` keeps it as
``keywords.ADDITIONAL_OF``; ``objects`` splits the pattern cells by it and
applies it to declared names).  Before, the merged patternProperties (their
union) let such a key through with its pattern's schema alone, silently.
Checked against ``jsonschema`` on hand-written objects and on objects
Hypothesis draws over a small key alphabet (derandomized by the conftest
profile), members in schema order; random walks must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from support.schema_matcher import assert_agrees_on_generated, assert_exact_and_silent

KEYS = ["a", "b", "ab", "ba", "abc", "c", "x"]

SCHEMAS = {
    "two_closed": {"type": "object", "allOf": [
        {"patternProperties": {"a": True}, "additionalProperties": False},
        {"patternProperties": {"b": True}, "additionalProperties": False}]},
    "three_with_lengths": {"type": "object", "minProperties": 1, "allOf": [
        {"patternProperties": {"^.{1,1}$": False}, "additionalProperties": True},
        {"patternProperties": {"a": True}, "additionalProperties": False},
        {"patternProperties": {"b": True}, "additionalProperties": False}],
        "not": {"patternProperties": {"c": False}}},
    "schema_valued": {"type": "object", "allOf": [
        {"patternProperties": {"^a": {"type": "integer"}}},
        {"properties": {"abc": {"type": "integer"}}, "patternProperties": {"b$": True},
         "additionalProperties": {"minimum": 0}}]},
    "additional_only": {"type": "object", "allOf": [
        {"patternProperties": {"a": {"type": "integer"}, "c": True}},
        {"additionalProperties": {"type": ["integer", "boolean"]}}]},
    "declared_and_required": {"type": "object", "required": ["ax"], "allOf": [
        {"properties": {"c": {"type": "integer"}}, "patternProperties": {"x": True}},
        {"patternProperties": {"a": True}, "additionalProperties": {"type": "string"}}]},
}

POOL = [{}, {"a": 1}, {"b": 1}, {"ab": 1}, {"ba": "s"}, {"ab": 1, "ba": 2}, {"abc": 1},
        {"abc": -1}, {"a": -1}, {"ab": -1}, {"c": 1}, {"c": "s"}, {"x": 1}, {"ax": 1},
        {"ax": "s"}, {"ax": "s", "c": 1}, {"abc": 1, "b": 2}, {"ab": "s", "abc": True}, 1]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_pattern_keys_meet_other_operands_additional_properties(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL)
    assert 0 < n_valid < len(POOL)


_objects = st.dictionaries(st.sampled_from(KEYS),
                           st.one_of(st.booleans(), st.integers(-2, 2), st.just("s")),
                           max_size=4)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_pattern_merges_on_generated_objects(name):
    assert_agrees_on_generated(SCHEMAS[name], _objects)
