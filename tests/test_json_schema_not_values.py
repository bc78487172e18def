"""``not`` beside ``enum`` / ``const`` keeps exactly the values the negated
schema rejects, decided value by value (issue 17; ``applicators.holds``),
also when the negated schema uses ``multipleOf``, ``oneOf`` or ``allOf``,
which ``not`` cannot negate as a language; against ``jsonschema``.

``test_enum_beside_not_is_exact`` draws an ``enum`` of small JSON values
beside a ``not`` of a random schema over those keywords (fixed seeds): the
translation must be silent (every keyword drawn is decided on a value) and
accept each candidate value iff the draft 2020-12 validator calls it valid.
``test_not_of_one_of_is_exact`` negates a random ``oneOf`` with no ``enum``
beside it (``applicators._complements``: no branch, or two at once).
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from support.schema_matcher import SchemaMatcher, disagreements

VALUES = [None, True, 0, 1, 2, 3, 4.5, 6, 35, -7, "", "a", "ab", [], [1], [1, 2], {},
          {"a": 1}, {"a": "x", "b": 2}, {"b": "y"}]


def random_schema(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 2 else 5)
    if kind == 0:
        return {"multipleOf": rng.choice([2, 3, 1.5, 0.5])}
    if kind == 1:
        return {"type": rng.choice(["integer", "string", "object", "array", "number"])}
    if kind == 2:
        return {rng.choice(["minimum", "maxLength", "minItems", "maxProperties"]):
                rng.choice([0, 1, 2])}
    if kind == 3:
        return {"required": [rng.choice(["a", "b"])]}
    if kind == 4:
        return {"const": rng.choice(VALUES)}
    if kind == 5:
        return {"oneOf": [random_schema(rng, depth + 1) for _ in range(rng.choice([2, 3]))]}
    if kind == 6:
        return {"allOf": [random_schema(rng, depth + 1) for _ in range(2)]}
    if kind == 7:
        return {"not": random_schema(rng, depth + 1)}
    return {"properties": {rng.choice(["a", "b"]): random_schema(rng, depth + 1)},
            "anyOf": [random_schema(rng, depth + 1)]}


@pytest.mark.parametrize("seed", range(8))
def test_enum_beside_not_is_exact(seed):
    rng = random.Random(seed)
    for _ in range(25):
        schema = {"enum": rng.sample(VALUES, 6), "not": random_schema(rng)}
        outcome, wrong = disagreements(schema, VALUES)
        assert outcome != "warned", schema
        assert wrong == [], (schema, wrong)


def test_maskbench_shape():
    """The shape of the Synthesized MaskBench schemas: ``allOf`` of an enum and
    a ``not`` holding allOf / anyOf / oneOf of multipleOf."""
    schema = {"allOf": [{"enum": [1, 2, 3, 5, 6, 30, 15, 10]},
                        {"not": {"allOf": [{"multipleOf": 2}], "anyOf": [{"multipleOf": 3}],
                                 "oneOf": [{"multipleOf": 5}]}}]}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.Draft202012Validator(schema)
    for value in [1, 2, 3, 5, 6, 30, 15, 10, 7]:
        assert matcher.accepts(json.dumps(value)) == validator.is_valid(value), value


@pytest.mark.parametrize("seed", range(8))
def test_not_of_one_of_is_exact(seed):
    """``not`` of a ``oneOf`` without ``enum`` beside it (no branch, or two
    at once): silent translations accept a value iff jsonschema does."""
    rng = random.Random(100 + seed)
    silent = 0
    for _ in range(60):
        branches = [random_schema(rng, 1) for _ in range(rng.choice([2, 3]))]
        schema = {"not": {"oneOf": branches}}
        outcome, wrong = disagreements(schema, VALUES)
        silent += outcome == "silent"
        assert wrong == [], (schema, wrong)
    assert silent >= 6
