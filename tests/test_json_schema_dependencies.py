"""``dependentRequired``, ``dependentSchemas`` and draft-4..7 ``dependencies``
are exact and silent (issue 17), against ``jsonschema``; under 2019-09 and
2020-12 (no ``$schema``) ``dependencies`` is no keyword and is ignored, as
their validators ignore it (``keywords.NEWER_KEYWORDS``).

Each schema of ``EXACT`` translates without a ``GrammarWarning``; every
object over its candidate keys (each subset of ``KEYS``, each value from
``VALUES``: valid and invalid instances alike) and a few non-objects are
accepted iff ``validator_for(schema)`` calls them valid, in compact and
indented text; random walks through the grammar are all valid.  Past
``MAX_DEPENDENT_SCHEMAS`` triggers the rest warn, and what is kept stays
sound.
"""

from __future__ import annotations

import itertools
import json

import pytest

from grammask.json_schema.applicators import MAX_DEPENDENT_SCHEMAS
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

DRAFT7 = "http://json-schema.org/draft-07/schema#"
INT = {"type": "integer"}

EXACT = [
    ("dependentSchemas adds a bound",
     {"type": "object", "properties": {"a": INT, "b": INT},
      "dependentSchemas": {"a": {"properties": {"b": {"minimum": 5}}, "required": ["b"]}}}),
    ("dependentSchemas closes the object",
     {"type": "object", "properties": {"a": INT, "b": INT, "c": INT},
      "dependentSchemas": {"b": {"properties": {"a": True, "b": True},
                                 "additionalProperties": False}}}),
    ("trigger not declared",
     {"type": "object", "properties": {"a": INT},
      "dependentSchemas": {"c": {"required": ["a"], "properties": {"a": {"maximum": 1}}}}}),
    ("two triggers",
     {"type": "object", "properties": {"a": INT, "b": INT, "c": INT},
      "dependentSchemas": {"a": {"required": ["c"]},
                           "c": {"properties": {"b": {"const": 1}}}}}),
    ("false dependent schema",
     {"type": "object", "properties": {"a": INT, "b": INT},
      "dependentSchemas": {"b": False}}),
    ("untyped: non-objects pass",
     {"dependentSchemas": {"a": {"required": ["b"]}}}),
    ("with dependentRequired",
     {"type": "object", "properties": {"a": INT, "b": INT, "c": INT},
      "dependentRequired": {"a": ["b"]},
      "dependentSchemas": {"b": {"properties": {"c": {"minimum": 2}}}}}),
    ("draft-7 dependencies, both forms",
     {"$schema": DRAFT7, "type": "object", "properties": {"a": INT, "b": INT, "c": INT},
      "dependencies": {"a": ["b"], "c": {"properties": {"a": {"const": 2}}}}}),
    ("draft-7 boolean dependency",
     {"$schema": DRAFT7, "type": "object", "properties": {"a": INT, "b": INT},
      "dependencies": {"a": False}}),
    ("2020-12 ignores dependencies",
     {"type": "object", "properties": {"a": INT, "b": INT, "c": INT},
      "dependencies": {"a": ["b"], "c": {"properties": {"a": {"const": 2}}}, "b": False}}),
    ("2019-09 ignores dependencies",
     {"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object",
      "properties": {"a": INT, "b": INT}, "dependentRequired": {"b": ["a"]},
      "dependencies": {"a": ["b"]}}),
    ("a one-of branch of dependencies alone accepts everything",
     {"type": "object", "properties": {"a": INT, "b": INT}, "oneOf": [
         {"required": ["a"], "not": {"required": ["b"]}},
         {"dependencies": {"a": {"not": {"required": ["b"]}}}}]}),
    ("through $ref with unevaluatedProperties",
     {"$defs": {"B": {"properties": {"b": INT}}}, "type": "object",
      "properties": {"a": INT}, "dependentSchemas": {"a": {"$ref": "#/$defs/B"}},
      "unevaluatedProperties": False}),
]

KEYS = ("a", "b", "c")
VALUES = (1, 2, 7, "x")


def instances():
    """Every object over KEYS with values from VALUES (one value per key at a
    time varied), plus non-objects."""
    yield from (None, 3, "a", [1])
    for size in range(len(KEYS) + 1):
        for names in itertools.combinations(KEYS, size):
            for value in VALUES:
                for varied in names or ("",):
                    yield {name: (value if name == varied else 2) for name in names}


def check_exact(schema):
    _, _, n_valid = assert_exact_and_silent(schema, list(instances()))
    assert n_valid > 0


@pytest.mark.parametrize("name,schema", EXACT, ids=[case[0] for case in EXACT])
def test_dependencies_are_exact_and_silent(name, schema):
    check_exact(schema)


def test_too_many_dependent_schemas_warn_and_stay_sound():
    names = [f"k{index}" for index in range(MAX_DEPENDENT_SCHEMAS + 2)]
    schema = {"type": "object", "properties": {name: INT for name in names},
              "dependentSchemas": {name: {"properties": {name: {"minimum": 5}}}
                                   for name in names}}
    matcher = SchemaMatcher(schema)
    assert [warning.keyword for warning in matcher.warnings] == ["dependentSchemas"]
    validator = declared_oracle(schema)
    kept = names[:MAX_DEPENDENT_SCHEMAS]
    for name in names:
        instance = {name: 1}
        assert matcher.accepts(json.dumps(instance)) == (name not in kept)
        assert validator.is_valid({name: 5}) and matcher.accepts(json.dumps({name: 5}))
