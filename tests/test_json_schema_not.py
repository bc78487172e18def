"""``not`` is exact, and silent, over type, enum, const, required, pattern,
properties, items (prefixItems, tuple items), not, anyOf, allOf and $ref (issue 17; ``applicators.not_node``), against ``jsonschema``;
oneOf (no branch, or two at once); beside ``enum`` also over multipleOf
(decided value by value); a ``not`` of multipleOf itself:
tests/test_json_schema_not_multiples.py.

Each schema of ``EXACT`` translates without a ``GrammarWarning``, and every
instance of its table (valid and invalid, including other spellings of the
excluded values) is accepted iff ``validator_for(schema)`` calls it valid;
random walks through the grammar are all valid.  ``WARNED`` keeps the
warning where the complement is not built.
"""

from __future__ import annotations

import json

import pytest

from grammask.json_schema.applicators import MAX_EXCLUDED_NESTING
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

EXACT = [
    ("not of oneOf: none or two branches",
     {"type": "object", "not": {"oneOf": [{"required": ["a"]}, {"required": ["b"]},
                                          {"properties": {"a": {"const": 1}}}]}},
     [{}, {"a": 1}, {"a": 2}, {"b": 0}, {"a": 1, "b": 0}, {"a": 2, "b": 0}, {"c": 0}]),
    ("oneOf inside a oneOf branch",
     {"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
      "oneOf": [{"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"required": ["c"]}]},
     [{}, {"a": 0}, {"b": 0}, {"c": 0}, {"a": 0, "b": 0}, {"a": 0, "c": 0},
      {"a": 0, "b": 0, "c": 0}, {"b": 0, "c": 0}, 1]),
    ("not of a property step beside enum (decided value by value)",
     {"enum": [{"a": 1}, {"a": 2}, {"a": 3}], "not": {"properties": {"a": {"multipleOf": 2}}}},
     [{"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}]),
    ("not required", {"type": "object", "properties": {"a": {"type": "integer"}},
                      "not": {"required": ["a"]}},
     [{}, {"a": 1}, {"b": 2}, {"a": 1, "b": 2}, 1, "a"]),
    ("not required of two", {"not": {"required": ["a", "b"]}},
     [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}, {"c": 3}, 1, None]),
    ("not object with a name", {"properties": {"a": True}, "not": {"type": "object",
                                                                   "required": ["a"]}},
     [{}, {"a": 1}, {"b": 1}, 1, [1], None]),
    ("not const number", {"type": "integer", "minimum": 0, "maximum": 5, "not": {"const": 3}},
     [0, 2, 3, 4, 5, 6, -1]),
    ("not enum of numbers", {"type": "number", "not": {"enum": [1, 2.5, -3]}},
     [0, 1, 1.0, 2.5, 2.4, -3, -3.5, 100, "1"]),
    ("not enum of mixed scalars", {"not": {"enum": ["a", 1, None, True]}},
     ["a", "b", "", 1, 2, None, True, False, [], {}]),
    ("not const string", {"type": "string", "maxLength": 3, "not": {"const": "é/"}},
     ["é/", "é", "x/", "abc", "abcd", ""]),
    ("not enum beside a pattern", {"type": "string", "pattern": "^[a-c]+$",
                                   "not": {"enum": ["ab", "c"]}},
     ["ab", "c", "a", "abc", "cc", "d", ""]),
    ("not pattern", {"type": "string", "not": {"pattern": "^x"}},
     ["x", "xy", "yx", "", "ab", 1]),
    ("not pattern with lengths", {"type": "string", "minLength": 2, "not": {"pattern": "[0-9]"}},
     ["ab", "a1", "a", "abc", "9"]),
    ("not string with a pattern", {"type": ["string", "integer"],
                                   "not": {"type": "string", "pattern": "^a"}},
     ["a", "ab", "ba", 1, 1.5]),
    ("not beside enum", {"enum": ["a", "b", 1, {"a": 1}, {"b": 1}],
                         "not": {"type": "object", "required": ["a"]}},
     ["a", "b", 1, {"a": 1}, {"b": 1}, "c"]),
    ("not boolean const", {"type": "boolean", "not": {"const": False}}, [True, False, None]),
    ("not false", {"type": "integer", "not": False}, [1, "a"]),
    ("not properties", {"not": {"properties": {"a": {"const": 1}, "b": {"type": "string"}}}},
     [{}, {"a": 1}, {"a": 2}, {"b": "x"}, {"b": 2}, {"a": 1, "b": "x"}, {"a": 1, "b": 0},
      {"c": 1}, 1, "a", None, [1]]),
    ("not properties and required", {"type": "object",
                                     "not": {"required": ["kind"],
                                             "properties": {"kind": {"enum": ["a", "b"]}}}},
     [{}, {"kind": "a"}, {"kind": "b"}, {"kind": "c"}, {"kind": 1}, {"other": "a"}]),
    ("not nested properties", {"not": {"properties": {"a": {"properties": {"b": {"const": 0}}}}}},
     [{}, {"a": {}}, {"a": {"b": 0}}, {"a": {"b": 1}}, {"a": 1}, 0]),
    ("not not", {"type": ["integer", "string"], "not": {"not": {"minimum": 3}}},
     [2, 3, 4, "a", 1.5]),
    ("not anyOf", {"not": {"anyOf": [{"type": "string"}, {"required": ["a"]},
                                     {"const": 1}]}},
     ["a", 1, 2, {}, {"a": 1}, {"b": 1}, None, [1]]),
    ("not allOf", {"not": {"allOf": [{"type": "object"}, {"required": ["a", "b"]}]}},
     [{}, {"a": 1}, {"a": 1, "b": 2}, 1, "a"]),
    ("not ref", {"$defs": {"named": {"required": ["name"],
                                     "properties": {"name": {"type": "string"}}}},
                 "type": "object", "not": {"$ref": "#/$defs/named"}},
     [{}, {"name": "x"}, {"name": 1}, {"other": "x"}]),
    ("not anyOf beside not", {"allOf": [{"not": {"const": 1}}],
                              "not": {"anyOf": [{"const": 2}, {"type": "string"}]}},
     [1, 2, 3, "a", None]),
    ("not of bounds", {"not": {"minimum": 3, "maxLength": 2, "minItems": 1,
                               "maxProperties": 1}},
     [2, 3, 2.5, "ab", "abc", [], [1], {}, {"a": 1}, {"a": 1, "b": 2}, None]),
    ("not of exclusive bounds", {"type": "number", "not": {"exclusiveMinimum": 0,
                                                           "exclusiveMaximum": 1}},
     [0, 0.5, 1, -1, 2]),
    ("not properties beside enum", {"enum": [{"a": 1}, {"a": 2}, {"b": 1}, 3],
                                    "not": {"properties": {"a": {"const": 1}}}},
     [{"a": 1}, {"a": 2}, {"b": 1}, 3, {"a": 3}]),
    ("not items", {"not": {"items": {"type": "string"}}},
     [[], ["a"], ["a", 1], [1], [[]], "a", 1, None]),
    ("not tuple items", {"$schema": "http://json-schema.org/draft-07/schema#",
                         "type": "array", "not": {"items": [{"const": 1}, {"type": "string"}]}},
     [[], [1], [2], [1, "a"], [1, 2], [2, "a"], [1, "a", 3]]),
    ("not closed prefix", {"type": "array", "not": {"prefixItems": [{"const": 1}],
                                                    "items": False}},
     [[], [1], [2], [1, 2], [2, 3]]),
    ("not of a schema with unknown keywords", {"not": {"note": "x", "required": ["a"]}},
     [{}, {"a": 1}, {"b": 1}, 1]),
    ("not beside enum, through allOf, $ref and items",
     {"$defs": {"short": {"maxItems": 2}}, "enum": [[1, "a"], [1, 2], [1, 2, 3], {"a": 1}, 3],
      "not": {"allOf": [{"items": {"type": "integer"}}, {"$ref": "#/$defs/short"}]}},
     [[1, "a"], [1, 2], [1, 2, 3], {"a": 1}, 3, [1]]),
    ("oneOf of closed objects", {"oneOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {}},
         "additionalProperties": False},
        {"type": "object", "properties": {"a": {"type": "number"}}, "additionalProperties": False}]},
     [{}, {"a": 1}, {"a": 1.5}, {"a": 1, "b": 2}, {"b": "x"}, {"c": 1}, 1]),
    ("not additionalProperties beside a closed object",
     {"type": "object", "properties": {"x": {"type": "integer"}, "y": {}},
      "additionalProperties": False,
      "not": {"properties": {"x": {}}, "additionalProperties": {"type": "string"}}},
     [{}, {"x": 1}, {"y": "s"}, {"y": 1}, {"x": 1, "y": 2}, {"x": 1, "y": "a"}]),
    ("not patternProperties beside finite patterns",
     {"patternProperties": {"^(ab|c)$": {"type": "integer"}}, "additionalProperties": False,
      "not": {"patternProperties": {"^a": {"minimum": 3}}}},
     [{}, {"ab": 1}, {"ab": 4}, {"c": 1}, {"c": 1, "ab": 3}, {"d": 1}, "x"]),
    ("not not patternProperties", {"not": {"not": {"patternProperties": {"f.*o": {"type": "integer"}}}}},
     [{}, {"foo": 1}, {"foo": "x"}, {"fo": "x"}, {"xfooy": 2.5}, 1, "s"]),
    ("not extra keys beside enum", {"enum": [{"foo": 1}, {"foo": "a"}, {"bar": 2}, {"bar": 3}],
                                    "not": {"patternProperties": {"^f": {"type": "string"}},
                                            "additionalProperties": {"const": 2}}},
     [{"foo": 1}, {"foo": "a"}, {"bar": 2}, {"bar": 3}, {}]),
    ("not beside enum and const", {"enum": ["a", "b", "c"], "const": "a",
                                   "not": {"const": "b"}}, ["a", "b", "c", "d"]),
    ("if beside enum and const", {"allOf": [{"enum": ["a", "b", "c"]}, {"const": "a"}],
                                  "if": {"const": "b"}, "then": False},
     ["a", "b", "c", "d"]),
]

DEEP_LIST: list = [1]
for _ in range(MAX_EXCLUDED_NESTING):
    DEEP_LIST = [DEEP_LIST]
"""Nested past ``applicators.MAX_EXCLUDED_NESTING`` (inside an object)."""

WARNED = [
    ("not integer beside multipleOf", {"type": "number", "multipleOf": 0.5,
                                       "not": {"type": "integer"}}, 2),
    ("not not beside unevaluatedProperties",
     {"type": "object", "properties": {"a": {"type": "string"}},
      "not": {"not": {"properties": {"b": {"const": 1}}, "required": ["b"]}},
      "unevaluatedProperties": False}, {"a": "x"}),
    ("not of an object value nested too deep",
     {"not": {"const": {"a": DEEP_LIST}}}, {"a": DEEP_LIST}),
    ("not of uniqueItems beside enum", {"enum": [[1, 1], [1, 2]], "not": {"uniqueItems": True}},
     [1, 2]),
]


NUMBERS = [0, 1, -1, 2, 1.0, 0.5, -0.5, 2.25, 3.75, 1e-05, -2.5e-07, 1.5e+20, 123456.789,
           1e16, "1.5", None, True, [0.5]]
NON_INTEGERS = [
    ("not integer", {"not": {"type": "integer"}}),
    ("number not integer", {"type": "number", "not": {"type": "integer"}}),
    ("not integer within bounds", {"type": "number", "minimum": -1, "exclusiveMaximum": 3,
                                   "not": {"type": "integer"}}),
    ("not integer nor string", {"type": ["number", "string", "null"],
                                "not": {"type": ["integer", "string"]}}),
    ("draft 4 not integer", {"$schema": "http://json-schema.org/draft-04/schema#",
                             "type": "number", "not": {"type": "integer"}}),
    ("oneOf integer, number", {"oneOf": [{"type": "integer"}, {"type": "number"}]}),
]


@pytest.mark.parametrize("name,schema", NON_INTEGERS, ids=[case[0] for case in NON_INTEGERS])
def test_not_integer_beside_number(name, schema):
    assert_exact_and_silent(schema, NUMBERS, indented=False)


def test_non_integer_spellings():
    matcher = SchemaMatcher({"type": "number", "not": {"type": "integer"}})
    for text in ("12.5e0", "1.25e1", "1.25E+01", "1.05e1", "0.5e-3", "5e-1", "-1.5e-0"):
        assert matcher.accepts(text), text
    for text in ("1.0", "1e2", "1.5e1", "0.5e1", "2.50e1", "0e-1", "0.0", "-0"):
        assert not matcher.accepts(text), text


@pytest.mark.parametrize("name,schema,instances", EXACT, ids=[case[0] for case in EXACT])
def test_not_is_exact_and_silent(name, schema, instances):
    assert_exact_and_silent(schema, instances, raw_unicode=True)


def test_other_spellings_of_excluded_values_are_rejected():
    numbers = SchemaMatcher({"type": "number", "not": {"enum": [1, 2.5]}})
    for text in ("1", "1.0", "1e0", "10e-1", "0.1e1", "2.50", "25e-1"):
        assert not numbers.accepts(text), text
    assert numbers.accepts("1.01") and numbers.accepts("2")
    words = SchemaMatcher({"type": "string", "not": {"enum": ["a/", "é"]}})
    for text in ('"a/"', '"a\\/"', '"\\u0061/"', '"é"', '"\\u00e9"', '"\\u00E9"'):
        assert not words.accepts(text), text
    assert words.accepts('"a"') and words.accepts('"\\u00e8"')


@pytest.mark.parametrize("name,schema,accepted", WARNED, ids=[case[0] for case in WARNED])
def test_other_negations_still_warn(name, schema, accepted):
    matcher = SchemaMatcher(schema)
    assert [warning.keyword for warning in matcher.warnings] == ["not"]
    assert not declared_oracle(schema).is_valid(accepted)
    assert matcher.accepts(json.dumps(accepted))


def test_draft_3_boolean_required_in_a_negation_warns():
    """A draft-3 ``required: true`` inside a negated schema is not negated
    (it raised a TypeError): warned, as everywhere."""
    draft_3 = "http://json-schema.org/draft-03/schema#"
    for schema in ({"$schema": draft_3, "not": {"oneOf": [{"required": True},
                                                          {"type": "object"}]}},
                   {"$schema": draft_3, "oneOf": [{"properties": {"a": {"required": True}}},
                                                  {"type": "object"}]}):
        assert SchemaMatcher(schema).warnings
