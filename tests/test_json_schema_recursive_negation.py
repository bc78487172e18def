"""``not`` and oneOf exclusions over recursive definitions: ``negated_conjuncts``
reads a ``$ref`` met again beyond a member (a property value, an item, a
branch) once, where first entered, since its complement nested in a
complement is one shared rule (``{not: {$ref: L}}`` per JSON text, and a
oneOf branch minus the branches it overlaps, ``applicators._excluding_node``),
so the complement of a recursive definition is a recursive rule instead
of an expansion to ``MAX_NEGATED_DEPTH``; a cycle of ``$ref`` conjuncts
alone is still not negated.

Checked against ``jsonschema`` (the declared draft's validator) on
hand-written values and on values Hypothesis draws (derandomized by the
conftest profile); random walks through the grammars must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from grammask.json_schema.applicators import negated_conjuncts
from grammask.json_schema.options import Options
from grammask.json_schema.translator import Translator
from support.schema_matcher import assert_agrees_on_generated, assert_exact_and_silent

DRAFT_4 = "http://json-schema.org/draft-04/schema#"
NAME = "^[a-z]+$"
SCHEMAS = {
    "tree_one_of": {"$ref": "#/$defs/node", "$defs": {
        "node": {"type": "object", "properties": {"kids": {"type": "array", "items": {
            "oneOf": [{"$ref": "#/$defs/node"}, {"$ref": "#/$defs/leaf"}]}}}},
        "leaf": {"type": "object", "required": ["v"], "properties": {"v": {"type": "integer"}}}}},
    "not_nested_list": {"not": {"$ref": "#/$defs/list"}, "$defs": {"list": {
        "type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/list"}]}}}},
    "query": {"$schema": DRAFT_4, "$ref": "#/definitions/q", "definitions": {"q": {
        "type": "object", "oneOf": [
            {"required": ["a"], "properties": {"a": {"type": "string"}}},
            {"required": ["not"], "properties": {"not": {"$ref": "#/definitions/q"}}}]}}},
    "features": {"$schema": DRAFT_4, "$ref": "#/definitions/features", "definitions": {
        "features": {"type": "object", "patternProperties": {NAME: {"oneOf": [
            {"type": "integer"}, {"$ref": "#/definitions/features"},
            {"$ref": "#/definitions/reference"},
            {"type": "array", "items": {"oneOf": [{"type": "integer"},
                                                  {"$ref": "#/definitions/features"},
                                                  {"$ref": "#/definitions/reference"}]}}]}},
                     "additionalProperties": False},
        "reference": {"type": "object", "properties": {"id": {"type": "string"},
                                                       "ref": {"enum": [True]}},
                      "required": ["id", "ref"], "additionalProperties": False}}},
}

POOL = [None, 1, "x", [], [1], [[1]], [[1, [2]]], [1, "x"], [[[]]], [["x"]], ["x", ["y", []]],
        {}, {"v": 1},
        {"v": "x"}, {"kids": []}, {"kids": [{}]}, {"kids": [{"v": 1}]}, {"kids": [{"v": 1.5}]},
        {"kids": [{"kids": [{"v": 2}]}]}, {"kids": [{"kids": [], "v": 1}]},
        {"kids": [{"kids": [{"kids": [1]}]}]}, {"a": "x"}, {"a": 1}, {"not": {"a": "x"}},
        {"not": {"a": "x", "not": {"a": "y"}}}, {"not": {"not": {"a": "y"}}}, {"not": {}},
        {"a": "x", "not": {"a": "y"}}, {"id": "x", "ref": True}, {"id": "x", "ref": False},
        {"b": {"id": "x", "ref": True}}, {"b": {"c": 1}}, {"b": [1, {"c": 2}]}, {"b": [{}]},
        {"id": {"c": 1}}, {"id": "x"}, {"ref": True}, {"b": {"id": "y", "ref": True, "c": 1}},
        {"B": 1}, {"b": [{"id": "x", "ref": True}, {"c": [1]}]}]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_recursive_negations_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL)
    assert 0 < n_valid < len(POOL)


_leaves = st.sampled_from([None, True, 1, 1.5, "x"])
_values = st.recursive(_leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["a", "not", "v", "kids", "id", "ref", "b", "B"]), inner,
                    max_size=3)), max_leaves=8)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_recursive_negations_on_generated_values(name):
    assert_agrees_on_generated(SCHEMAS[name], _values)


def test_a_cycle_of_conjuncts_is_not_negated():
    root = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}}
    assert negated_conjuncts(Translator(root, Options()), {"$ref": "#/$defs/a"}) is None
