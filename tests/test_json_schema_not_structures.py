"""``not`` of array and object values (``applicators._value_shape``): a
value differs from an excluded object when its names differ or one member's
value differs, from an excluded array when its length or one item differs,
so the complement is built by structure, recursing into members and items
(also beside recursive definitions, in ``enum``, as a oneOf exclusion, and
under drafts 4 and 7, where ``const`` / ``prefixItems`` are not keywords:
the complement of ``true`` was ``const: false``, which a draft-4
document ignores, so ``not: {items: [{enum: [true]}]}`` accepted ``[true]``).
Values nested past ``MAX_EXCLUDED_NESTING``, or past what
``max_schema_depth`` leaves room for, stay warned.

Checked against ``jsonschema`` (the declared draft's validator) on
hand-written values and on values Hypothesis draws (derandomized by the
conftest profile); random walks through the grammars must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from grammask.json_schema.applicators import MAX_EXCLUDED_NESTING
from support.schema_matcher import (SchemaMatcher, assert_agrees_on_generated,
                                    assert_exact_and_silent)

DRAFT_4 = "http://json-schema.org/draft-04/schema#"
DRAFT_7 = "http://json-schema.org/draft-07/schema#"
SCHEMAS = {
    "object": {"not": {"const": {"a": 1, "b": [1, 2]}}},
    "typed_members": {"type": "object", "properties": {"a": {"type": "integer"}},
                      "not": {"enum": [{"a": 1}, {}]}},
    "array": {"type": "array", "not": {"const": [1, [2], {"x": None}]}},
    "empty_array": {"type": "array", "not": {"const": []}},
    "draft_4": {"$schema": DRAFT_4, "not": {"enum": [[1, 2], {"a": [True]}, "x"]}},
    "draft_4_items": {"$schema": DRAFT_4, "type": "array", "not": {"items": [{"enum": [True]}]}},
    "draft_7_tuple": {"$schema": DRAFT_7, "type": "array", "items": {"type": "integer"},
                      "not": {"enum": [[1, 2], [3]]}},
    "recursive": {"type": "object", "properties": {"a": {"$ref": "#"}},
                  "additionalProperties": False, "not": {"const": {"a": {"a": {}}}}},
    "recursive_definition": {"$ref": "#/$defs/tree", "not": {"$ref": "#/$defs/witness"},
                             "$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
                                       "witness": {"const": [[], [[]]]}}},
    "one_of": {"oneOf": [{"type": "object"}, {"enum": [{"a": 1}, [1], {"b": {}}]}]},
    "fraction_spelling": {"not": {"const": {"a": 1.0}}},
}

POOL = [None, 1, "x", True, [True], [False], [True, 1], [], [1], [1, 2], [2, 1], [1, 2, 3], [3],
        [1, [2], {"x": None}],
        [1, [2], {"x": 0}], [1, [2], {}], [1, [2]], [[]], [[], [[]]], [[], []], [[[]]],
        [[], [[]], []], {}, {"a": 1}, {"a": 1.0}, {"a": 2}, {"b": {}}, {"b": []},
        {"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, {"a": 1, "b": [1]}, {"a": 1, "b": [1, 2],
        "c": 0}, {"a": [True]}, {"a": [False]}, {"a": [True, True]}, {"a": {}}, {"a": {"a": {}}},
        {"a": {"a": {"a": {}}}}, {"a": {"b": {}}}, {"a": "x"}]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_excluded_structures_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL)
    assert 0 < n_valid < len(POOL)


_leaves = st.one_of(st.sampled_from([None, True, False, 1, 1.0, 2, "x"]))
_values = st.recursive(_leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["a", "b", "x"]), inner, max_size=3)), max_leaves=6)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_excluded_structures_on_generated_values(name):
    assert_agrees_on_generated(SCHEMAS[name], _values)


def test_values_nested_too_deep_are_warned():
    deep: list = []
    for _ in range(MAX_EXCLUDED_NESTING):
        deep = [deep]
    matcher = SchemaMatcher({"type": "array", "not": {"const": deep}})
    assert [warning.keyword for warning in matcher.warnings] == ["not"]
    assert SchemaMatcher({"type": "array", "not": {"const": deep[0]}}).warnings == []
    shallow = SchemaMatcher({"type": "array", "not": {"const": deep[0]}},
                            max_schema_depth=4 * MAX_EXCLUDED_NESTING)
    assert [warning.keyword for warning in shallow.warnings] == ["not"]
