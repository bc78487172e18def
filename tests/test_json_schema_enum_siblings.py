"""``enum`` / ``const`` beside keywords the value checks of ``values`` do not
read (item and member schemas, counts, ``multipleOf``; ``oneOf``, ``anyOf``
and ``not`` inside item and member schemas):
each member is decided by ``Translator.holds`` and kept iff valid (issue 17;
``const_nodes.enum_node``), against ``jsonschema``.

``test_enum_beside_siblings_is_exact`` puts an ``enum`` of small JSON values
beside random sibling keywords (fixed seeds); every keyword drawn is decided
on a value, so the translation must be silent and accept each candidate iff
the draft 2020-12 validator calls it valid.
"""

from __future__ import annotations

import random

import pytest

from support.schema_matcher import disagreements

VALUES = [None, True, 0, 1, 2, 3, 4.5, 6, "", "a", [], [1], [1, 2], [3, 4, 5], {}, {"a": 1},
          {"a": "x", "b": 2}, {"b": "y"}]


def random_sibling(rng: random.Random, depth: int = 0) -> dict:
    kind = rng.randrange(8 if depth == 0 else 5)
    if kind == 0:
        return {rng.choice(["minItems", "maxItems", "minProperties", "maxProperties"]):
                rng.choice([0, 1, 2])}
    if kind == 1:
        return {"multipleOf": rng.choice([2, 1.5])}
    if kind == 2:
        return {"required": [rng.choice(["a", "b"])]}
    if kind == 3:
        return {"items": {"type": rng.choice(["integer", "string"])}}
    if kind == 4:
        return {"properties": {rng.choice(["a", "b"]): {"type": rng.choice(["integer",
                                                                            "string"])}}}
    # Applicators beside the enum itself are translated first (any_of_node,
    # not_node); inside item and member schemas the enum check decides them.
    if kind == 5:
        return {"items": {"oneOf": [random_sibling(rng, 1), random_sibling(rng, 1)]}}
    if kind == 6:
        return {"properties": {"a": {"not": random_sibling(rng, 1)}}}
    return {"items": {"anyOf": [random_sibling(rng, 1), random_sibling(rng, 1)]}}


@pytest.mark.parametrize("seed", range(8))
def test_enum_beside_siblings_is_exact(seed):
    rng = random.Random(seed)
    for _ in range(25):
        schema = {"enum": rng.sample(VALUES, 8)}
        for _ in range(rng.choice([1, 2])):
            schema.update(random_sibling(rng))
        outcome, wrong = disagreements(schema, VALUES)
        assert outcome != "warned", schema
        assert wrong == [], (schema, wrong)
