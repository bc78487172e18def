"""``uniqueItems: true`` is exact over small finite item domains (issue 17;
``arrays._unique_items``), against ``jsonschema``.

Each schema of ``EXACT`` translates without a ``GrammarWarning``; every array
of up to ``MAX_LENGTH`` members drawn from its pool (with duplicates, with
``1`` beside ``1.0``, which are equal for uniqueness, and ``true`` beside
``1``, which are not) is accepted iff ``validator_for(schema)`` calls it
valid; random walks through the grammar are all valid.  Each schema of
``WARNED`` (too many item values for ``MAX_UNIQUE_SUBSETS``, open item
schemas, container values, ``prefixItems``) still warns and accepts a duplicate.
"""

from __future__ import annotations

import itertools
import json

import pytest

from grammask.json_schema import GrammarWarning, translate_schema
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

MAX_LENGTH = 4

EXACT = [
    ("booleans", {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True},
     [True, False, None, 1]),
    ("boolean or null", {"type": "array", "items": {"type": ["boolean", "null"]},
                         "uniqueItems": True, "minItems": 2}, [True, False, None, 0]),
    ("enum with bounds", {"type": "array", "items": {"enum": ["a", 1, None, True, 2.5]},
                          "uniqueItems": True, "minItems": 2, "maxItems": 3},
     ["a", 1, 1.0, None, True, 2.5, "b"]),
    ("enum equal numbers", {"type": "array", "items": {"enum": [1, 0, False]},
                            "uniqueItems": True}, [1, 1.0, 0, False, True]),
    ("const", {"type": "array", "items": {"const": "x"}, "uniqueItems": True},
     ["x", "y"]),
    ("enum filtered by type", {"type": "array", "items": {"type": "integer",
                                                          "enum": [1, 2, "1"]},
                               "uniqueItems": True, "maxItems": 2}, [1, 2, "1", 2.0]),
    ("twelve values, at most two", {"type": "array", "items": {"enum": list(range(12))},
                                    "uniqueItems": True, "maxItems": 2}, [0, 5, 11, 12, 5.0]),
    ("in a property", {"type": "object", "properties": {
        "flags": {"type": "array", "items": {"enum": ["r", "w", "x"]}, "uniqueItems": True}}},
     None),
]

WARNED = [
    ("nine values", {"type": "array", "items": {"enum": list(range(9))}, "uniqueItems": True},
     [3, 3]),
    ("strings", {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
     ["a", "a"]),
    ("container values", {"type": "array", "items": {"enum": [[1], {"a": 1}]},
                          "uniqueItems": True}, [[1], [1]]),
    ("prefixItems", {"type": "array", "prefixItems": [{"type": "boolean"}],
                     "items": {"type": "boolean"}, "uniqueItems": True}, [True, True]),
]


def arrays(pool: list) -> list[list]:
    return [list(members) for length in range(MAX_LENGTH + 1)
            for members in itertools.product(pool, repeat=length)]


@pytest.mark.parametrize("name,schema,pool", EXACT, ids=[case[0] for case in EXACT])
def test_finite_domain_is_exact_and_silent(name, schema, pool):
    if pool is None:
        instances = [{"flags": flags} for flags in arrays(["r", "w", "x", "y"])]
    else:
        instances = arrays(pool)
    matcher, validator, _ = assert_exact_and_silent(schema, instances, indented=False)
    spaced = json.dumps(instances[-1], indent=2)
    assert matcher.accepts(spaced) == validator.is_valid(instances[-1])


@pytest.mark.parametrize("name,schema,duplicate", WARNED, ids=[case[0] for case in WARNED])
def test_other_items_warn_and_accept_duplicates(name, schema, duplicate):
    with pytest.warns(GrammarWarning, match="uniqueItems"):
        translate_schema(schema)
    matcher = SchemaMatcher(schema)
    assert [warning.keyword for warning in matcher.warnings] == ["uniqueItems"]
    assert not declared_oracle(schema).is_valid(duplicate)
    assert matcher.accepts(json.dumps(duplicate))
