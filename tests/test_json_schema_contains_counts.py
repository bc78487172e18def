"""``contains`` with maxContains, maxItems, minItems above minContains or
prefixItems (``arrays._counted_contains``) is exact and silent, against
``jsonschema`` on random arrays (fixed seed) drawn from values that match
and fail each schema's parts; where ``contains`` cannot be negated it warns."""

from __future__ import annotations

import random

import pytest

from grammask.errors import GrammarWarning
from grammask.json_schema import translate_schema
from support.schema_matcher import assert_exact_and_silent

POOL = [0, 1, 1.0, 2, 2.5, -3, 7, "a", "ab", "b", "", None, True, False, [1], {"a": 1}]

SCHEMAS = [
    {"contains": {"const": 1}, "maxContains": 1},
    {"contains": {"const": 1}, "maxContains": 0},
    {"contains": {"type": "integer"}, "minContains": 0, "maxContains": 2},
    {"contains": {"type": "string"}, "minContains": 2, "maxContains": 3},
    {"contains": {"minimum": 2}, "minContains": 2, "maxContains": 2},
    {"contains": {"type": "integer"}, "minContains": 3, "maxContains": 1},
    {"contains": {"type": "string", "pattern": "^a"}, "minItems": 3},
    {"contains": {"type": "string"}, "maxItems": 3},
    {"contains": {"type": "string"}, "minContains": 2, "minItems": 2, "maxItems": 4},
    {"contains": {"enum": [1, "a", None]}, "maxContains": 2, "items": {"not": {"type": "array"}}},
    {"contains": {"type": "integer"}, "prefixItems": [{"type": "string"}, {"const": 2}]},
    {"contains": {"not": {"type": "number"}}, "maxContains": 1,
     "prefixItems": [{"type": "number"}], "items": {"type": ["number", "string"]}},
    {"type": "array", "contains": {"anyOf": [{"const": "b"}, {"type": "boolean"}]},
     "minContains": 1, "maxContains": 2, "maxItems": 5},
    {"contains": {"type": "object", "required": ["a"]}, "maxContains": 1},
]


def _instances(seed: int) -> list:
    rng = random.Random(seed)
    arrays = [[], [1], ["a"], [1, 1], ["a", "b", 1]]
    for _ in range(60):
        arrays.append([rng.choice(POOL) for _ in range(rng.randint(0, 6))])
    return arrays + [1, "x", None, {}]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_counted_contains_is_exact(index):
    assert_exact_and_silent(SCHEMAS[index], _instances(index), indented=False)


def test_contains_that_cannot_be_negated_warns():
    with pytest.warns(GrammarWarning, match="cannot be negated"):
        translate_schema({"contains": {"uniqueItems": True}, "maxContains": 1})
