"""``oneOf`` is exact, and silent, when its branches are provably disjoint
(issue 17; ``json_schema/disjoint.py``) or when each branch that may overlap
another can be negated (``applicators._one_of_exclusions``: a branch minus
the branches it may overlap), against ``jsonschema``.

Each schema of ``EXACT`` has branches that share no instance (by value class,
const/enum values, a discriminator through ``$ref`` or required beside the
``oneOf``, a closed object, string languages, number bounds, a first item),
each of ``SUBTRACTED`` branches that do share
instances but can be negated: both translate without a ``GrammarWarning``,
and every instance (valid and invalid, including ones valid against several
branches) is accepted iff ``validator_for(schema)`` calls it valid; random
walks through the grammar are all valid.  Each schema of ``OVERLAPPING`` has
a branch that cannot be negated: it still warns (naming ``oneOf``, or ``not``
for the complement it cannot build), and an instance valid against two
branches (invalid for ``oneOf``) is accepted, which is what the warning says.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from grammask.json_schema import GrammarWarning, translate_schema
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

SHAPES = {
    "$defs": {
        "Circle": {"type": "object", "properties": {"kind": {"const": "circle"},
                                                    "r": {"type": "number"}},
                   "required": ["kind", "r"]},
        "Square": {"type": "object", "properties": {"kind": {"$ref": "#/$defs/SquareKind"},
                                                    "side": {"type": "number"}},
                   "required": ["kind", "side"]},
        "SquareKind": {"enum": ["square", "box"]},
    },
    "oneOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}],
}

EXACT = [
    ("closed beside open", {"oneOf": [{"type": "object", "properties": {"a": {}},
                                       "additionalProperties": False},
                                      {"type": "object", "required": ["a"]}]},
     [{"a": 1}, {}, {"b": 1}, {"a": 1, "b": 2}, 1]),
    ("types", {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
     ["x", 1, None, 1.5, True, [], {}]),
    ("integer and fractions", {"oneOf": [{"type": "integer"},
                                         {"type": "number", "minimum": 0.25, "maximum": 0.75}]},
     [1, 0, 0.5, 0.25, 1.5, "1"]),
    ("const", {"oneOf": [{"const": "a"}, {"const": 1}, {"enum": [True, None]}]},
     ["a", 1, 1.0, True, None, False, "b", 0]),
    ("const against type", {"oneOf": [{"const": 1.5}, {"type": "integer"}]},
     [1.5, 1, 2, 2.5, "1.5"]),
    ("discriminator through $ref", SHAPES,
     [{"kind": "circle", "r": 1}, {"kind": "box", "side": 2}, {"kind": "square", "side": 2},
      {"kind": "circle", "side": 2}, {"kind": "oval", "r": 1}, {"kind": "circle"}, "circle"]),
    ("closed object", {"oneOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
         "additionalProperties": False},
        {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}]},
     [{"a": 1}, {"b": 2}, {"b": 2, "a": 1}, {"a": 1, "c": 3}, {}, {"b": 2, "c": 3}]),
    ("string languages", {"oneOf": [{"type": "string", "pattern": "^a"},
                                    {"type": "string", "pattern": "^b", "maxLength": 3},
                                    {"type": "string", "format": "date"}]},
     ["abc", "bcd", "bcde", "2024-01-02", "2024-13-02", "cab", ""]),
    ("number bounds", {"oneOf": [{"type": "number", "maximum": 0},
                                 {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
                                 {"type": "integer", "minimum": 11}]},
     [-1, 0, 0.5, 10, 10.5, 11, 12, "0"]),
    ("nested anyOf branch", {"oneOf": [{"anyOf": [{"type": "string"}, {"type": "null"}]},
                                       {"type": "boolean"}]},
     ["x", None, True, 1]),
    ("discriminator required beside oneOf", {
        "type": "object", "required": ["shape"],
        "properties": {"shape": {"enum": ["circle", "square", "triangle"]}},
        "oneOf": [{"properties": {"shape": {"const": "circle"}}, "required": ["r"]},
                  {"properties": {"shape": {"const": "square"}}, "required": ["side"]},
                  {"properties": {"shape": {"const": "triangle"}}, "required": ["base"]}]},
     [{"shape": "circle", "r": 1}, {"shape": "square", "side": 1}, {"shape": "circle", "side": 1},
      {"shape": "circle", "r": 1, "side": 2}, {"r": 1}, {"shape": "oval", "r": 1}, [], None]),
    ("untyped branches under an object type", {
        "type": "object",
        "oneOf": [{"properties": {"kind": {"enum": ["a"]}}, "required": ["kind", "x"],
                   "additionalProperties": False},
                  {"properties": {"kind": {"enum": ["b"]}, "y": {"type": "integer"}},
                   "required": ["kind"], "additionalProperties": False}]},
     [{"kind": "a", "x": 1}, {"kind": "b"}, {"kind": "b", "y": 2}, {"kind": "a"},
      {"kind": "b", "x": 1}, {}, "a", 1]),
    ("first items differ", {"oneOf": [
        {"type": "array", "minItems": 1, "items": {"type": "number"}},
        {"type": "array", "minItems": 1, "items": {"type": "array", "items": {"type": "number"}}}]},
     [[1], [[1]], [1, [1]], [], [[1], 2], "x"]),
]

SUBTRACTED = [
    ("multiples", {"oneOf": [{"type": "integer", "multipleOf": 2},
                             {"type": "integer", "multipleOf": 3}]},
     [6, 4, 9, 1, 0, 12, 3, 2, -6, 6.0, 7, 2.5, "6"]),
    ("open object", {"oneOf": [
        {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]},
        {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}]},
     [{"a": True, "b": "x"}, {"a": False}, {"b": "x"}, {"a": True, "b": 2}, {}, 1]),
    ("one of two names", {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
     [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}, {"c": 1}]),
    ("patterns that meet", {"oneOf": [{"type": "string", "pattern": "a"},
                                      {"type": "string", "pattern": "b"}]},
     ["ab", "a", "b", "c", 1]),
    ("touching bounds", {"oneOf": [{"type": "number", "maximum": 0},
                                   {"type": "number", "minimum": 0}]}, [0, 1, -1, 0.5, "0"]),
    ("untyped branch", {"oneOf": [{"required": ["a"]}, {"type": "string"}]},
     ["x", {}, {"a": 1}, 1, None]),
    ("lengths", {"type": "string", "oneOf": [{"maxLength": 3}, {"minLength": 2}]},
     ["", "a", "ab", "abc", "abcd"]),
    ("three overlapping", {"type": "array", "oneOf": [{"minItems": 1}, {"maxItems": 2},
                                                      {"maxItems": 0}]},
     [[], [1], [1, 2], [2, 1], [1, 2, 3], [1, 1, 1, 1]]),
    ("negated through a ref", {"$defs": {"named": {"required": ["name"]}},
                               "oneOf": [{"$ref": "#/$defs/named"}, {"required": ["id"]}]},
     [{}, {"name": 1}, {"id": 1}, {"name": 1, "id": 2}]),
]

TYPE_SPLIT = [
    ("untyped discriminated objects", {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "items": {"oneOf": [
            {"properties": {"kind": {"enum": ["x"]}, "a": {"type": "integer"}},
             "required": ["kind", "a"]},
            {"properties": {"kind": {"enum": ["y"]}}, "required": ["kind"],
             "additionalProperties": False}]}},
     [[{"kind": "x", "a": 1}], [{"kind": "y"}], [{"kind": "y", "a": 1}], [{"kind": "x"}],
      [{"kind": "z"}], ["x"], [1], [1.0], [None], [[]], [True], [{}], []]),
    ("two untyped and a string", {"oneOf": [
        {"properties": {"k": {"const": 1}}, "required": ["k"]},
        {"properties": {"k": {"const": 2}}, "required": ["k"]},
        {"type": "string", "maxLength": 2}]},
     [{"k": 1}, {"k": 2}, {"k": 3}, {}, "ab", "abc", "", 1, None, [], False]),
    ("untyped overlapping objects", {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
     [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}, "a", 1, None, []]),
    ("a typed branch beside untyped ones", {"oneOf": [
        {"required": ["a"]}, {"type": ["string", "object"], "required": ["b"]},
        {"properties": {"a": {"type": "string"}}}]},
     [{"a": "x"}, {"a": 1}, {"b": 1}, {"a": "x", "b": 1}, {}, "s", 1, None]),
]
"""Branches that accept every value of some class (keywords of other
classes only): values of a class two overlapping branches both accept
entirely match both, so the class is left out of every branch
(``applicators._types_matched_once``), which may leave them disjoint."""

OVERLAPPING = [
    ("counted contains", {"oneOf": [{"type": "array", "contains": {"const": 1}, "minContains": 2},
                                    {"type": "array", "maxItems": 3}]}, [1, 1], "oneOf"),
]


@pytest.mark.parametrize("name,schema,instances", EXACT, ids=[case[0] for case in EXACT])
def test_disjoint_branches_are_exact_and_silent(name, schema, instances):
    assert_exact_and_silent(schema, instances)


@pytest.mark.parametrize("name,schema,instances", SUBTRACTED,
                         ids=[case[0] for case in SUBTRACTED])
def test_overlapping_negatable_branches_are_exact_and_silent(name, schema, instances):
    assert_exact_and_silent(schema, instances)


@pytest.mark.parametrize("name,schema,instances", TYPE_SPLIT,
                         ids=[case[0] for case in TYPE_SPLIT])
def test_classes_matched_twice_are_left_out(name, schema, instances):
    _, _, n_valid = assert_exact_and_silent(schema, instances)
    assert 0 < n_valid < len(instances)


@pytest.mark.parametrize("name,schema,both,keyword", OVERLAPPING,
                         ids=[case[0] for case in OVERLAPPING])
def test_overlapping_branches_warn(name, schema, both, keyword):
    with pytest.warns(GrammarWarning, match=keyword):
        translate_schema(schema)
    matcher = SchemaMatcher(schema)
    assert [warning.keyword for warning in matcher.warnings] == [keyword]
    validator = declared_oracle(schema)
    assert not validator.is_valid(both)
    assert all(jsonschema.validators.validator_for(branch)(branch).is_valid(both)
               for branch in schema["oneOf"])
    assert matcher.accepts(json.dumps(both))
