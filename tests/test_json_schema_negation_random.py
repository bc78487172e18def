"""``not``, ``oneOf`` and ``if`` on random schemas: a translation without a
``GrammarWarning`` is exact, against ``jsonschema``.

``random_schema`` draws small schemas from the keywords ``not`` reads
(``applicators.NEGATABLE_KEYWORDS``: type, enum, const, required, pattern,
properties, items, prefixItems, not, anyOf, bounds; with allOf and
``$ref``), a few it does not (multipleOf, contains) and an unknown one, over a small alphabet of names and values, and
puts them under ``oneOf`` (several overlapping branches: the chain of
complements), ``not`` (of an ``anyOf`` too), ``if``/``then``/``else``, often
beside an ``enum`` or ``const`` (the values filtered in Python).  Each
schema is translated with ``any_order=True`` (members in any order, so a
valid instance is never refused for its order); when nothing warned, every
instance of ``INSTANCES`` must be accepted iff the draft 2020-12 validator
calls it valid (a schema refused as empty must have no valid instance).
The schemas come from ``random.Random`` with fixed seeds (replayable), and
the test requires that at least 15 of the 80 translations of each seed are
silent, so the check is not vacuous.
"""

from __future__ import annotations

import itertools
import random

import pytest

from support.schema_matcher import FORMAT_CHECKER, disagreements

NAMES = ["a", "b"]
SCALARS = [None, True, 0, 1, 2, 1.5, "", "a", "b", "ab", "ba", "bbb"]
INSTANCES = (SCALARS + [[], [1], ["a", 1], [1, 2], [None], {}]
             + [{name: value} for name in NAMES for value in SCALARS]
             + [{"a": first, "b": second}
                for first, second in itertools.product([1, "a", None, 2], repeat=2)])


def random_schema(rng: random.Random, depth: int = 0):
    """A random conjunction of one to three keywords (module docstring)."""
    if depth > 2 or rng.random() < 0.08:
        return rng.choice([True, False, {}])
    schema = {}
    for _ in range(rng.choice([1, 1, 2, 3])):
        schema.update(random_keyword(rng, depth))
    return schema


def random_keyword(rng: random.Random, depth: int) -> dict:
    kind = rng.randrange(17)
    if kind == 0:
        return {"type": rng.choice(["null", "integer", "number", "string", "object",
                                    ["string", "integer"], ["object", "null"]])}
    if kind == 1:
        return {"const": rng.choice(SCALARS)}
    if kind == 2:
        return {"enum": rng.sample(SCALARS, rng.choice([1, 2, 3]))}
    if kind in (3, 4):
        return {rng.choice(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]):
                rng.choice([0, 1, 1.5, 2])}
    if kind == 5:
        return {rng.choice(["minLength", "maxLength", "minProperties", "maxProperties",
                            "minItems"]): rng.choice([0, 1, 2])}
    if kind == 6:
        return {"pattern": rng.choice(["^a", "b", "^a*$"])}
    if kind in (7, 8):
        return {"required": rng.sample(NAMES, rng.choice([1, 2]))}
    if kind in (9, 10):
        return {"properties": {name: random_schema(rng, depth + 1)
                               for name in rng.sample(NAMES, rng.choice([1, 2]))}}
    if kind == 11:
        return {"not": random_schema(rng, depth + 1)}
    if kind == 12:
        return {"anyOf": [random_schema(rng, depth + 1) for _ in range(rng.choice([1, 2, 3]))]}
    if kind == 13:
        return {"allOf": [random_schema(rng, depth + 1) for _ in range(2)]}
    if kind == 14:
        return {"$ref": "#/$defs/shared"}
    if kind == 15:
        return rng.choice([{"items": random_schema(rng, depth + 1)},
                           {"prefixItems": [random_schema(rng, depth + 1)], "items": False}])
    return rng.choice([{"multipleOf": 2}, {"contains": {"type": "integer"}}, {"x-note": 1}])


def random_root(rng: random.Random) -> dict:
    """A schema whose translation negates: oneOf, not, or if/then/else."""
    form = rng.randrange(4)
    if form == 0:
        schema = {"oneOf": [random_schema(rng, 1) for _ in range(rng.choice([2, 3, 4]))]}
    elif form == 1:
        schema = {"not": random_schema(rng, 1)}
    elif form == 2:
        schema = {"not": {"anyOf": [random_schema(rng, 1) for _ in range(rng.choice([2, 3]))]}}
    else:
        schema = {"if": random_schema(rng, 1), "then": random_schema(rng, 1),
                  "else": random_schema(rng, 1)}
    if rng.random() < 0.5:
        schema.update(random_keyword(rng, 1))
    if rng.random() < 0.2:
        schema["enum"] = rng.sample(INSTANCES, 4)
    schema["$defs"] = {"shared": rng.choice([{"type": "string"}, {"required": ["a"]},
                                             {"properties": {"b": {"const": 1}}}])}
    return schema


@pytest.mark.parametrize("seed", range(10))
def test_silent_negations_are_exact(seed):
    rng = random.Random(seed)
    silent = 0
    for _ in range(80):
        schema = random_root(rng)
        outcome, wrong = disagreements(schema, INSTANCES, FORMAT_CHECKER)
        silent += outcome == "silent"
        assert wrong == [], (schema, wrong)
    assert silent >= 15
