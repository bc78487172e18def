"""Strings excluded beside a carried ``not`` (``applicators._strings_minus``):
the ``not`` a chain of complements carries is folded into the difference
terminal when each of its ``anyOf`` members is read
(``applicators._string_exclusions``): besides patterns, formats and values,
length bounds alone, a ``$ref`` alone to a schema in the same resource (the
draft-04 o1327: ``not: {properties: {organization: {$ref: empty}}}`` beside
``organization: {type: string, not: {pattern: P}, maxLength: 100}``), and
``{not: X}``, which the strings must meet (X merged in: MaskBench's
oneofpr4, whose oneOf exclusion negates a member schema holding a ``not``
of a ``not``).  Against ``jsonschema`` (the declared draft's validator) on
hand-written and Hypothesis-drawn instances (derandomized by the conftest
profile); random walks through the grammars must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from support.schema_matcher import assert_agrees_on_generated, assert_exact_and_silent

EMPTY = {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 0}]}
SCHEMAS = {
    "ref_to_lengths": {"$defs": {"empty": EMPTY}, "type": "string", "maxLength": 4,
                       "not": {"anyOf": [{"const": "x"}, {"$ref": "#/$defs/empty"}]}},
    "negated_member": {"type": "string",
                       "not": {"anyOf": [{"const": "ab"}, {"not": {"pattern": "a"}}]}},
    "negated_member_nested": {"type": "string", "maxLength": 3, "not": {"anyOf": [
        {"enum": ["ab", 1]}, {"not": {"pattern": "a", "not": {"pattern": "b"}}}]}},
    "o1327": {"$schema": "http://json-schema.org/draft-04/schema#",
              "definitions": {"empty": EMPTY, "rule": {"not": {"properties": {
                  "org": {"$ref": "#/definitions/empty"}}}}},
              "type": "object", "allOf": [{"$ref": "#/definitions/rule"}, {
                  "type": "object", "properties": {
                      "org": {"type": "string", "not": {"pattern": "[^a-z ]"}, "maxLength": 5}}}]},
    "oneofpr4": {"type": "object", "oneOf": [
        {"allOf": [{"patternProperties": {"a": {"$ref": "#/$defs/in1"}}},
                   {"not": {"patternProperties": {"a": {"not": {"$ref": "#/$defs/in1"}}}}}]},
        {"patternProperties": {"b": {"$ref": "#/$defs/in2"}}}],
        "$defs": {"in1": {"type": "object", "not": {"properties": {
            "c": {"not": {"type": "string", "pattern": "9"}}}}},
                  "in2": {"type": "object", "properties": {"c": {"type": "string",
                                                                 "pattern": "9"}}}}},
}

STRINGS = ["", "a", "b", "x", "ab", "ba", "bb", "aab", "abc", "a b", "9", "a9", "A", "aaaaa",
           "aaaaaa"]
POOL = STRINGS + [None, 1, {}] + [{"org": s} for s in STRINGS + [None]] + \
    [{key: {"c": s}} for key in ("a", "b", "ab") for s in ("9", "x", 1)] + \
    [{key: {}} for key in ("a", "ab")] + [{"a": {"c": "9"}, "b": {"c": "x"}}, {"ab": 1}]

_text = st.text(alphabet="ab9 xA", max_size=6)
_members = st.dictionaries(st.sampled_from(["a", "b", "ab", "x"]), st.one_of(
    st.dictionaries(st.just("c"), st.one_of(_text, st.just(1)), max_size=1), st.just(1)),
    max_size=2)
_instances = st.one_of(_text, st.builds(lambda s: {"org": s}, st.one_of(_text, st.none())),
                       _members)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_carried_not_is_folded_exactly(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL)
    assert 0 < n_valid < len(POOL)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_carried_not_on_generated_instances(name):
    assert_agrees_on_generated(SCHEMAS[name], _instances)
