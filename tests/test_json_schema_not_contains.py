"""``not`` of ``contains``: an array fails ``contains: S`` iff every item
fails S, so the complement is ``items: {not: S}`` (``applicators._complements``),
also as a link of a oneOf exclusion or an ``anyOf`` complement; beside
``minContains`` / ``maxContains`` it is not built (warned).  And several
different ``contains`` in one ``allOf`` (``merge`` keeps them apart in
``keywords.MORE_CONTAINS``, ``arrays._several_contains`` credits items):
"an item matches A" and "an item matches B" is not "an item matches both"
(the merge used to say the latter: ``[1, 2]`` was refused by ``allOf:
[{contains: {const: 1}}, {contains: {const: 2}}]``, whose language was
found empty); the complement of ``items`` beside ``contains`` is such a
case.  Over a finite item domain each contains is the set of item values
valid against it, and a set holding another is dropped
(``arrays._value_sets``).

Checked against ``jsonschema`` (the declared draft's validator) on
hand-written arrays and on arrays Hypothesis draws (derandomized by the
conftest profile); random walks through the grammars must be valid."""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st

from support.schema_matcher import (SchemaMatcher, assert_agrees_on_generated,
                                    assert_exact_and_silent, declared_oracle)

BIG = {"type": "number", "minimum": 100}
SCHEMAS = {
    "numbers": {"type": "array", "not": {"contains": BIG}},
    "untyped": {"not": {"contains": {"const": 1}}},
    "beside_items": {"type": "array", "items": {"type": "integer"},
                     "not": {"contains": {"multipleOf": 3}}},
    "of_arrays": {"type": "array", "not": {"contains": {"type": "array", "items": BIG}}},
    "any_of": {"type": "array", "not": {"anyOf": [{"contains": {"const": 1}},
                                                  {"contains": {"type": "string"}}]}},
    "one_of": {"type": "array", "oneOf": [{"contains": {"const": 1}},
                                          {"contains": {"const": 2}}]},
    "draft_7": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
                "oneOf": [{"contains": BIG}, {"items": {"maximum": 200}}]},
    "one_of_items": {"type": "array", "oneOf": [{"items": {"type": "integer"}},
                                                {"contains": {"type": "integer", "minimum": 5}}]},
    "two_contains": {"type": "array", "allOf": [{"contains": {"const": 1}},
                                                {"contains": {"const": 2}}]},
    "three_contains_bounded": {"type": "array", "minItems": 2, "maxItems": 3, "allOf": [
        {"contains": {"type": "integer"}}, {"contains": {"minimum": 5}},
        {"contains": {"type": "array"}}]},
    "finite_items": {"type": "array", "items": {"enum": ["a", "b", "c", 1]}, "allOf": [
        {"contains": {"enum": ["a", "b"]}}, {"contains": {"const": "a"}},
        {"contains": {"not": {"const": "a"}}}]},
    "beside_prefix": {"type": "array", "prefixItems": [{"type": "integer"}], "allOf": [
        {"contains": {"const": 1}}, {"contains": {"const": 2}}]},
}

POOL = [[], [1], [2], [1, 2], [2, 1], [3], [5, 6], [100], [150, 1], [250], [1, 250], ["a"],
        [1, "a"], [[]], [[100]], [[100, 5]], [[5], [100]], [[1], 1], [None], [1.5, 300],
        [1, 5, []], [[], 7], [6, 2, [1]], [3, 1, 2], [1, 2, 1, 2], ["a", "c"], ["b", "a"],
        ["a", "a"], ["b", "c"], ["a", 1.0], {}, "x", 1, None]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_negated_contains_is_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL)
    assert 0 < n_valid < len(POOL)


_items = st.one_of(st.integers(-1, 6), st.sampled_from([100, 150, 250, 1.5, "a", None]),
                   st.lists(st.sampled_from([1, 5, 100, 300]), max_size=2))
_arrays = st.one_of(st.lists(_items, max_size=4), st.sampled_from([{}, "x", 1]))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_negated_contains_on_generated_arrays(name):
    assert_agrees_on_generated(SCHEMAS[name], _arrays)


def test_counted_contains_is_not_negated():
    schema = {"type": "array", "not": {"contains": {"const": 1}, "minContains": 2}}
    assert [warning.keyword for warning in SchemaMatcher(schema).warnings] == ["not"]


def test_two_counted_contains_in_all_of_warn_and_stay_looser():
    """Two ``contains`` in one ``allOf`` beside ``minContains``: warned, the
    first enforced, and no valid array refused."""
    schema = {"type": "array", "allOf": [{"contains": {"const": 1}, "minContains": 2},
                                         {"contains": {"const": 2}}]}
    matcher = SchemaMatcher(schema)
    assert [warning.keyword for warning in matcher.warnings] == ["contains"]
    oracle = declared_oracle(schema)
    for instance in ([1, 1, 2], [2, 1, 1], [1, 2], [1, 1], [2], []):
        if oracle.is_valid(instance):
            assert matcher.accepts(json.dumps(instance)), instance
    assert matcher.accepts("[1, 1]") and not matcher.accepts("[1, 2]")
