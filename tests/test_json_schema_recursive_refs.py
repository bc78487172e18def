"""Recursive ``$ref`` through ``allOf`` / ``anyOf`` merges is a rule reference,
never an expansion (issue 17), against ``jsonschema``.

Each schema of ``CASES`` is recursive through a merge: a ``$ref`` inside an
``allOf`` member, a ``$ref`` with sibling keywords, an ``anyOf`` branch merged
with its siblings, mutual recursion through ``allOf``.  Each translates
without ``LimitExceeded`` and without a ``GrammarWarning``, into a small
grammar (fewer than ``MAX_RULES`` rules), and every instance of its list
(valid and invalid ones, nested 0 to 4 levels deep) is accepted iff
``validator_for(schema)`` calls it valid; random walks through the grammar
are all valid.
"""

from __future__ import annotations

import pytest

from grammask.json_schema import translate_schema
from support.schema_matcher import assert_exact_and_silent

MAX_RULES = 200
"""A bound on the rules of each translation: an expansion per level would exceed it."""


def tree(depth: int, name="n", bad_leaf=None) -> dict:
    """A node with one child per level down to ``depth``; the deepest node
    is ``bad_leaf`` when given."""
    if depth == 0:
        return {"name": name} if bad_leaf is None else bad_leaf
    return {"name": name, "children": [tree(depth - 1, name, bad_leaf), {"name": "leaf"}]}


NODE_THROUGH_ALL_OF = {
    "$defs": {
        "base": {"type": "object", "properties": {"name": {"type": "string"},
                                                  "children": {"type": "array"}},
                 "required": ["name"]},
        "node": {"allOf": [{"$ref": "#/$defs/base"},
                           {"properties": {"children": {"type": "array",
                                                        "items": {"$ref": "#/$defs/node"}}}}]},
    },
    "$ref": "#/$defs/node",
}

ROOT_IN_PROPERTY = {
    "type": "object",
    "properties": {"value": {"type": "integer"},
                   "left": {"allOf": [{"$ref": "#"}]},
                   "right": {"allOf": [{"$ref": "#"}, {"required": ["value"]}],
                             "description": "a subtree"}},
    "required": ["value"],
    "additionalProperties": False,
}


def binary(depth: int, value=1) -> dict:
    if depth == 0:
        return {"value": value}
    return {"value": 0, "left": binary(depth - 1, value), "right": binary(depth - 1, value)}


LINKED_LIST_ANY_OF = {
    "$defs": {
        "list": {"type": "object",
                 "properties": {"head": {"type": "integer"},
                                "tail": {"anyOf": [{"$ref": "#/$defs/list"}, {"type": "null"}],
                                         "maxProperties": 2}},
                 "required": ["head", "tail"]},
    },
    "$ref": "#/$defs/list",
}


def linked(depth: int, last=None) -> dict:
    if depth == 0:
        return {"head": 0, "tail": last}
    return {"head": depth, "tail": linked(depth - 1, last)}


MUTUAL_ALL_OF = {
    "$defs": {
        "a": {"type": "object",
              "properties": {"b": {"allOf": [{"$ref": "#/$defs/b"}], "required": ["x"]}}},
        "b": {"type": "object",
              "properties": {"x": {"type": "integer"},
                             "a": {"allOf": [{"$ref": "#/$defs/a"}, {"maxProperties": 1}]}}},
    },
    "$ref": "#/$defs/a",
}


def mutual(depth: int, x=1) -> dict:
    if depth == 0:
        return {}
    return {"b": {"x": x, "a": mutual(depth - 1, x)}}


REF_WITH_SIBLINGS = {
    "$defs": {
        "t": {"type": "object",
              "properties": {"v": {"type": "integer"},
                             "c": {"$ref": "#/$defs/t", "required": ["v"]}}},
    },
    "$ref": "#/$defs/t",
}


def chain(depth: int, leaf=None) -> dict:
    if depth == 0:
        return {"v": 1} if leaf is None else leaf
    return {"v": depth, "c": chain(depth - 1, leaf)}


CASES = [
    ("node through allOf", NODE_THROUGH_ALL_OF,
     [tree(d) for d in range(5)] + [tree(d, bad_leaf={"children": []}) for d in range(5)]
     + [tree(d, bad_leaf={"name": 1}) for d in range(1, 5)]
     + [tree(d, bad_leaf={"name": "x", "children": "no"}) for d in range(1, 5)] + [[], "n"]),
    ("root in property", ROOT_IN_PROPERTY,
     [binary(d) for d in range(5)] + [binary(d, value="1") for d in range(5)]
     + [{"value": 1, "left": {}}, {"value": 1, "right": {"value": 2, "other": 3}},
        {"value": 1, "left": {"value": 2, "left": {"value": 3, "left": {"value": None}}}}]),
    ("linked list through anyOf", LINKED_LIST_ANY_OF,
     [linked(d) for d in range(5)] + [linked(d, last=1) for d in range(5)]
     + [linked(d, last={"head": 1, "tail": None, "x": 1}) for d in range(4)]
     + [linked(d, last={"head": 1}) for d in range(4)]),
    ("mutual recursion through allOf", MUTUAL_ALL_OF,
     [mutual(d) for d in range(5)] + [mutual(d, x="1") for d in range(1, 5)]
     + [{"b": {}}, {"b": {"x": 1, "a": {"b": {"x": 2}, "c": 3}}},
        {"b": {"x": 1, "a": {"b": {"x": 2, "a": {"b": {}}}}}}]),
    ("$ref with siblings", REF_WITH_SIBLINGS,
     [chain(d) for d in range(5)] + [chain(d, leaf={}) for d in range(1, 5)]
     + [chain(d, leaf={"v": "1"}) for d in range(5)] + [{}, {"c": {"v": 1}}]),
]


@pytest.mark.parametrize("name,schema,instances", CASES, ids=[case[0] for case in CASES])
def test_recursive_merges_are_rules(name, schema, instances):
    assert len(translate_schema(schema).ast.rules) < MAX_RULES
    _, _, n_valid = assert_exact_and_silent(schema, instances)
    assert 0 < n_valid < len(instances)


def test_identical_reference_contexts_share_one_rule():
    """The same ``$ref`` with the same siblings, used twice, is one rule."""
    definition = {"x": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    use = {"$ref": "#/$defs/x", "required": ["a"]}
    once = {"$defs": definition, "type": "object", "properties": {"p": use}}
    twice = {"$defs": definition, "type": "object", "properties": {"p": use, "q": dict(use)}}

    def merged_rules(schema):
        return [rule.name for rule in translate_schema(schema).ast.rules
                if rule.name.endswith("_merged")]

    assert len(merged_rules(once)) == len(merged_rules(twice)) == 1
