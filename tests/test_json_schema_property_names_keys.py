"""``propertyNames`` of pattern, lengths and asserted format on the keys of
``patternProperties`` and ``additionalProperties``: every extra-key cell
(``objects._pattern_members``, ``objects._key_outside``) is met with the
names schema's regexes (``objects._names_key_regexes``), so no extra key
outside it is written (before, it was checked on declared names only and
warned).  Checked against ``jsonschema`` on hand-written objects and on
objects Hypothesis draws over a small key alphabet (derandomized by the
conftest profile), members in schema order; random walks must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from support.schema_matcher import assert_agrees_on_generated, assert_exact_and_silent

KEYS = ["a", "b", "ab", "a1", "b2c3", "1", "é", "abcd"]

SCHEMAS = {
    "patterns": {"type": "object", "propertyNames": {"pattern": "^(\\w\\d)+$"},
                 "patternProperties": {"3": {"type": "boolean"}}},
    "declared_and_additional": {"type": "object", "propertyNames": {"maxLength": 2},
                                "properties": {"a": {"type": "integer"}, "abcd": True},
                                "additionalProperties": {"type": "string"}},
    "both": {"type": "object", "propertyNames": {"pattern": "^[a-z]", "minLength": 2},
             "patternProperties": {"b": {"type": "integer"}},
             "additionalProperties": {"type": "boolean"}},
    "draft_7_ref": {"$schema": "http://json-schema.org/draft-07/schema#",
                    "definitions": {"names": {"pattern": "^a"}},
                    "type": "object", "propertyNames": {"$ref": "#/definitions/names"},
                    "properties": {"ab": {"type": "integer"}},
                    "patternProperties": {"\\d": {"type": "integer"}}},
    "beside_a_complement": {"type": "object", "propertyNames": {"pattern": "^[ab]"},
                            "not": {"additionalProperties": {"type": "integer"}}},
}

POOL = [{}, {"a": 1}, {"a": "s"}, {"ab": 1}, {"ab": "s"}, {"a1": True}, {"a1": 1},
        {"b2c3": True}, {"b2c3": False, "a1": 2}, {"1": 1}, {"é": 1}, {"abcd": 1},
        {"b": True}, {"b": 1}, {"ab": 1, "b": True}, {"a": 1, "é": "s"}, 1]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_property_names_on_extra_keys_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL, raw_unicode=True)
    assert 0 < n_valid < len(POOL)


_objects = st.dictionaries(st.sampled_from(KEYS),
                           st.one_of(st.booleans(), st.integers(-2, 2), st.just("s")),
                           max_size=4)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_property_names_on_generated_objects(name):
    assert_agrees_on_generated(SCHEMAS[name], _objects)
