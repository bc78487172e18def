"""``if`` / ``then`` / ``else`` is exact, and silent, when the ``if`` is
``negatable`` (issue 17; ``applicators.if_then_else_node``): the union of
(rest, if, then) and (rest, else, not if), against ``jsonschema``.

Each schema of ``EXACT`` translates without a ``GrammarWarning`` and every
instance of its table (passing and failing the condition, valid and invalid
through either branch) gets ``declared_oracle``'s verdict; random walks are
valid.  ``WARNED`` keeps the warning where ``not if`` cannot be built, and
shows an instance that is then accepted though invalid.
"""

from __future__ import annotations

import json

import pytest

from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

EXACT = [
    ("discriminator then required else bound",
     {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}, "x": {"type": "integer"}},
      "if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]},
      "else": {"properties": {"x": {"maximum": 3}}}},
     [{"kind": "a", "x": 1}, {"kind": "a"}, {"kind": "b"}, {"kind": "b", "x": 5},
      {"kind": "b", "x": 2}, {"x": 5}, {"x": 2}, {}, {"kind": "c"}]),
    ("condition with required",
     {"if": {"required": ["a"], "properties": {"a": {"type": "string"}}},
      "then": {"required": ["b"]}, "else": {"not": {"required": ["b"]}}},
     [{}, {"a": "x"}, {"a": "x", "b": 1}, {"a": 1}, {"a": 1, "b": 1}, {"b": 1}, 1, "s"]),
    ("type condition", {"if": {"type": "integer"}, "then": {"minimum": 0},
                        "else": {"type": "string"}},
     [1, 0, -1, "a", None, 1.5, []]),
    ("then only", {"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}},
     [{}, {"a": 1}, {"a": 1, "b": 0}, {"a": 2}, 3]),
    ("else only", {"type": "string", "if": {"pattern": "^x"}, "else": {"maxLength": 2}},
     ["x", "xyz", "ab", "abc", ""]),
    ("true condition", {"if": True, "then": {"type": "integer"}, "else": {"type": "string"}},
     [1, 1.5, "a", None]),
    ("false condition", {"if": False, "then": {"type": "integer"}, "else": {"minimum": 2}},
     [1, 2, 3, 1.5, "a"]),
    ("then false", {"if": {"const": 0}, "then": False}, [0, 1, "0", None]),
    ("then and else in other allOf members",
     {"allOf": [{"if": {"exclusiveMaximum": 0}}, {"then": {"minimum": -10}},
                {"else": {"multipleOf": 2}}]},
     [-100, 3, 0, -1, 2]),
]

WARNED = [
    ("condition on a step", {"if": {"multipleOf": 5}, "then": {"maximum": 3}}, 10),
]


@pytest.mark.parametrize("name,schema,instances", EXACT, ids=[case[0] for case in EXACT])
def test_if_then_else_is_exact_and_silent(name, schema, instances):
    assert_exact_and_silent(schema, instances)


@pytest.mark.parametrize("name,schema,accepted", WARNED, ids=[case[0] for case in WARNED])
def test_other_conditions_still_warn(name, schema, accepted):
    matcher = SchemaMatcher(schema)
    assert [warning.keyword for warning in matcher.warnings] == ["if"]
    assert not declared_oracle(schema).is_valid(accepted)
    assert matcher.accepts(json.dumps(accepted))
