"""``not`` of ``propertyNames`` where the names schema fails on finitely many
keys (``false``, ``{"not": {"enum": [...]}}``, ``{"not": {"const": ...}}``):
an object fails ``propertyNames`` iff one of its keys does, so the
complement is "one of those keys is present" (``applicators._names_complements``);
and of a pattern (``{"pattern": P}``, ``{"not": {"pattern": P}}``): "a key
P does not find / finds is present", the complement of the equivalent
``additionalProperties`` / ``patternProperties`` (``applicators._names_as_extra_keys``),
beside open and closed objects.
Checked against ``jsonschema`` (the declared draft's validator) on
hand-written objects and on objects Hypothesis draws over a small key
alphabet (derandomized by the conftest profile), members in schema order;
random walks through the grammars must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from support.schema_matcher import (SchemaMatcher, assert_agrees_on_generated,
                                    assert_exact_and_silent)

KEYS = ["0", "1", "2", "3", "a", "é"]

SCHEMAS = {
    "one_key": {"type": "object", "not": {"propertyNames": {"not": {"const": "0"}}},
                "patternProperties": {"\\d": {"type": "boolean"}}},
    "any_of": {"type": "object", "minProperties": 3, "not": {"anyOf": [
        {"propertyNames": {"not": {"enum": ["1", "3"]}}},
        {"propertyNames": {"not": {"enum": ["2", "3", 4]}}}]}},
    "false": {"type": "object", "not": {"propertyNames": False}, "maxProperties": 2},
    "beside_properties": {"properties": {"a": {"type": "integer"}},
                          "not": {"propertyNames": {"not": {"enum": ["é", "a"]}},
                                  "required": ["2"]}},
    "draft_7": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "not": {"propertyNames": {"title": "t", "not": {"enum": ["1"]}}}},
}

PATTERN_SCHEMAS = {
    "a_key_found": {"type": "object", "not": {"propertyNames": {"not": {"pattern": "[0-2]"}}}},
    "a_key_not_found": {"not": {"propertyNames": {"pattern": "^\\d$"}},
                        "properties": {"a": {"type": "integer"}}},
    "found_beside_closed": {"type": "object", "properties": {"0": True, "a": True, "é": True},
                            "additionalProperties": False,
                            "not": {"propertyNames": {"not": {"pattern": "^[0a]"}}}},
    "not_found_beside_patterns": {"type": "object",
                                  "patternProperties": {"\\d": {"type": "boolean"}},
                                  "not": {"anyOf": [{"propertyNames": {"pattern": "[0-3]"}},
                                                    {"required": ["2"]}]}},
    "notnames5": {"type": "object", "allOf": [
        {"not": {"propertyNames": {"not": {"pattern": "a"}}}},
        {"not": {"propertyNames": {"not": {"pattern": "\\d"}}}},
        {"patternProperties": {"1": {"not": {"propertyNames": {"not": {"pattern": "a"}}}}}},
        {"propertyNames": {"pattern": "^[a-z0-9é]$"}}]},
}

POOL = [{}, {"0": True}, {"0": 1}, {"1": True}, {"0": True, "1": False}, {"a": 1, "é": 2},
        {"1": 1, "2": 2, "a": 3}, {"3": 1, "a": 2, "é": 3}, {"1": 1, "a": 2, "é": 3},
        {"1": 1, "2": 2, "3": 3}, {"2": 1}, {"a": "x"}, {"a": 1}, {"2": 0, "a": 1}, [], "0", 1,
        {"1": {"a": 0}, "a": 1}, {"1": {"0": 0}, "a": 1}, {"a": {"1": True}, "é": False}]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_negated_property_names_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL, raw_unicode=True)
    assert 0 < n_valid < len(POOL)


_objects = st.dictionaries(st.sampled_from(KEYS), st.one_of(st.booleans(), st.integers(-2, 2)),
                           max_size=5)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_negated_property_names_on_generated_objects(name):
    assert_agrees_on_generated(SCHEMAS[name], _objects)


_nested_objects = st.dictionaries(st.sampled_from(KEYS), st.one_of(
    st.booleans(), st.integers(-2, 2),
    st.dictionaries(st.sampled_from(KEYS), st.integers(0, 1), max_size=2)), max_size=4)


@pytest.mark.parametrize("name", sorted(PATTERN_SCHEMAS))
def test_negated_pattern_names_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(PATTERN_SCHEMAS[name], POOL, raw_unicode=True)
    assert 0 < n_valid < len(POOL)


@pytest.mark.parametrize("name", sorted(PATTERN_SCHEMAS))
def test_negated_pattern_names_on_generated_objects(name):
    assert_agrees_on_generated(PATTERN_SCHEMAS[name], _nested_objects)


@pytest.mark.parametrize("names", [{"enum": ["1"]}, {"not": {"enum": ["1"], "maxLength": 3}},
                                   {"not": {"pattern": "1", "maxLength": 3}},
                                   {"pattern": "1", "minLength": 2}])
def test_other_names_schemas_still_warn(names):
    matcher = SchemaMatcher({"type": "object", "not": {"propertyNames": names}})
    assert any("'not'" in str(warning) for warning in matcher.warnings)


def test_draft_4_is_not_read_as_property_names():
    """Draft 4 has no ``propertyNames``: the negated schema asserts nothing
    there (``negated_conjuncts`` reads the draft's own keywords), so its
    ``not`` fails every instance, as the draft-4 validator says (it was
    warned and not enforced)."""
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "anyOf": [
        {"type": "string"}, {"type": "object", "not": {"propertyNames": False}}]}
    assert_exact_and_silent(schema, [{}, {"a": 1}, "a", 1])
