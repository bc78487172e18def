"""A ``oneOf`` of open ``properties`` branches over objects of at most one
member (``maxProperties`` 0 or 1) is an ``anyOf`` per member name
(``single_member.single_member_one_of``): a name every branch declares
takes the oneOf of its schemas, a name one branch leaves out the
complement of their anyOf, any other name nothing.  Exact and silent where
the exclusions passed ``MAX_ONE_OF_COMPLEMENT_PARTS`` (JSON Schema Store's
3.0.schema, its driver configurations reduced here); other forms are left
to the exclusions.

Checked against ``jsonschema`` (the declared draft's validator) on
hand-written objects and values and on objects Hypothesis draws
(derandomized by the conftest profile); random walks through the grammars
must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from grammask.json_schema.single_member import single_member_one_of
from support.schema_matcher import assert_agrees_on_generated, assert_exact_and_silent

DRAFT_7 = "http://json-schema.org/draft-07/schema#"
INTEGER = {"type": "integer", "description": "a count", "default": 10}
DRIVERS = {"$schema": DRAFT_7, "type": "object", "maxProperties": 1, "oneOf": [
    {"properties": {"priority": INTEGER, "prefetch": INTEGER, "file": {"type": "string"}}},
    {"properties": {"priority": INTEGER, "prefetch": INTEGER, "queue": {"type": "string"},
                    "headers": {"$ref": "#/definitions/Hashmap"}}},
    {"properties": {"priority": INTEGER, "topics": {"type": "boolean"},
                    "options": {"type": "object"}}},
    {"properties": {"priority": {"type": "integer"}, "prefetch": INTEGER}}],
    "definitions": {"Hashmap": {"type": "object", "additionalProperties": False,
                                "patternProperties": {"^[a-z]+$": {"type": "string"}}}}}
"""3.0.schema's form: ``{"prefetch": v}`` is valid iff v is no integer (the
branch without it matches, the three with it must not), ``priority``
never (all four declare it as integers)."""

SCHEMAS = {
    "drivers": DRIVERS,
    "one_left_out": {"maxProperties": 1, "oneOf": [
        {"properties": {"a": {"type": "string"}, "b": {"minimum": 3}, "c": {"type": "string"}}},
        {"properties": {"a": {"maxLength": 2}, "b": {"type": "integer"}}},
        {"properties": {"a": {"type": "string"}}}]},
    "with_types": {"type": ["object", "array"], "maxProperties": 1, "minProperties": 1,
                   "oneOf": [{"properties": {"a": {"const": 1}}, "title": "one"},
                             {"properties": {"a": {"enum": [1, 2]}}}]},
}
VALUES = [0, 1, 2, 3, 4, 1.5, "", "ab", "abc", True, None, [], {}, {"x": "y"}, {"X": "y"},
          {"x": 1}]
NAMES = ["priority", "prefetch", "file", "queue", "headers", "topics", "options", "a", "b",
         "c", "z"]
POOL = ([{}, {"a": 1, "b": 2}, {"priority": 1, "prefetch": "x"}, "x", 3, None, [], [1]]
        + [{name: value} for name in NAMES for value in VALUES])


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_single_member_one_of_is_exact_and_silent(name):
    schema = SCHEMAS[name]
    assert single_member_one_of(_Own(), schema) is not None
    _, _, n_valid = assert_exact_and_silent(schema, POOL, indented=False)
    assert 0 < n_valid < len(POOL)


_objects = st.one_of(
    st.dictionaries(st.sampled_from(NAMES), st.sampled_from(VALUES), max_size=2),
    st.sampled_from(["x", 1, [], None]))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_single_member_one_of_on_generated_instances(name):
    assert_agrees_on_generated(SCHEMAS[name], _objects)


_TWO = [{"properties": {"a": {"type": "string"}}}, {"properties": {"a": {"type": "integer"}}}]


@pytest.mark.parametrize("schema", [
    {"maxProperties": 2, "oneOf": _TWO},
    {"maxProperties": 1, "oneOf": [dict(_TWO[0], required=["a"]), _TWO[1]]},
    {"maxProperties": 1, "propertyNames": {"maxLength": 1}, "oneOf": _TWO},
], ids=["two_members", "required", "names"])
def test_other_forms_are_left_to_the_exclusions(schema):
    assert single_member_one_of(_Own(), schema) is None
    assert_exact_and_silent(schema, POOL, indented=False)


class _Own:
    """A translator stand-in: keywords read as written (no draft drops any)."""

    @staticmethod
    def own_keywords(schema):
        return schema
