"""Several ``if`` / ``then`` / ``else`` pairs in one ``allOf`` are all applied
(issue 17; ``merge`` keeps them in ``keywords.MORE_CONDITIONS``,
``applicators.if_then_else_node`` splits on one after the other, and a
condition disjoint from the case at hand applies only its ``else``), against
``jsonschema``.

Each schema of ``EXACT`` (the MaskBench shapes: a discriminator property
with or without ``required``, conditions that overlap when the member is
absent, ``not`` conditions, a nested pair inside a ``then``) translates
without a ``GrammarWarning``, and every instance of its table (each
combination of a few member values, absent included) gets
``declared_oracle``'s verdict (members in any order, ``any_order=True``:
a case may declare them in another order than the schema text); random
walks are valid.  With many pairs (twenty beside an enum, MaskBench's
minecraft-item-modifier) the merged ``not`` of their conditions stays one
flat ``anyOf`` (``merge``), so each enum member is decided within
``MAX_NEGATED_DEPTH``.  ``test_random_conditionals_are_exact`` draws
allOf's of two to four random pairs over the same small alphabet (fixed
seeds): whenever nothing warns, every instance of ``INSTANCES`` must be
accepted iff the draft 2020-12 validator calls it valid.
"""

from __future__ import annotations

import itertools
import json
import random

import pytest

from support.schema_matcher import SchemaMatcher, declared_oracle, disagreements

ABSENT = object()


def objects(**choices) -> list:
    """Every object taking one of ``choices[name]`` for each member (or none)."""
    names = list(choices)
    found = []
    for values in itertools.product(*(choices[name] + [ABSENT] for name in names)):
        found.append({name: value for name, value in zip(names, values) if value is not ABSENT})
    return found


DISCRIMINATED = [{"if": {"properties": {"kind": {"const": kind}}},
                  "then": {"required": [member]}} for kind, member in (("a", "x"), ("b", "y"),
                                                                       ("c", "z"))]

EXACT = [
    ("discriminator without required", {"type": "object", "allOf": DISCRIMINATED},
     objects(kind=["a", "b", "c", "d", 1], x=[0], y=[0], z=[0]) + [1, "a", None]),
    ("discriminator with required and else",
     {"allOf": [{"if": {"properties": {"kind": {"enum": ["a", "b"]}}, "required": ["kind"]},
                 "then": {"properties": {"x": {"type": "integer"}}},
                 "else": {"properties": {"x": {"type": "string"}}}},
                {"if": {"properties": {"kind": {"const": "b"}}, "required": ["kind"]},
                 "then": {"required": ["x"]}, "else": {"properties": {"y": False}}}]},
     objects(kind=["a", "b", "c"], x=[1, "s"], y=[0]) + [2]),
    ("not conditions",
     {"type": "object", "allOf": [
         {"if": {"not": {"properties": {"p": {"const": None}}}},
          "then": {"properties": {"q": {"const": None}}}},
         {"if": {"not": {"properties": {"q": {"const": None}}}},
          "then": {"properties": {"p": {"const": None}}}}]},
     objects(p=[None, 1, "s"], q=[None, 2])),
    ("nested pair in then",
     {"type": "object", "allOf": [
         {"if": {"properties": {"mode": {"const": "m"}}, "required": ["mode"]},
          "then": {"required": ["a"], "if": {"required": ["b"]}, "then": {"required": ["c"]}}},
         {"if": {"properties": {"mode": {"const": "n"}}, "required": ["mode"]},
          "then": {"properties": {"a": False}}}]},
     objects(mode=["m", "n", "o"], a=[0], b=[0], c=[0])),
    ("twenty pairs beside an enum",
     {"type": "object", "required": ["f"],
      "properties": {"f": {"enum": [f"v{index}" for index in range(20)] + ["w"]}},
      "allOf": [{"if": {"properties": {"f": {"const": f"v{index}"}}},
                 "then": {"properties": {"n": {"const": index % 3}}}} for index in range(20)]},
     objects(f=["v0", "v1", "v2", "v19", "w", "x"], n=[0, 1, 2])),
    ("equal pairs once, numbers",
     {"allOf": [{"if": {"minimum": 5}, "then": {"multipleOf": 2}},
                {"if": {"minimum": 5}, "then": {"multipleOf": 2}},
                {"if": {"maximum": 0}, "then": {"multipleOf": 3}, "else": {"maximum": 8}}]},
     [-3, -2, 0, 1, 2, 5, 6, 8, 10, "x"]),
]


@pytest.mark.parametrize("name,schema,instances", EXACT, ids=[case[0] for case in EXACT])
def test_several_conditionals_are_exact_and_silent(name, schema, instances):
    # Members in any order: a case's merged schema may declare them in
    # another order than the schema text (the else's members first).
    matcher = SchemaMatcher(schema, any_order=True)
    assert matcher.warnings == []
    validator = declared_oracle(schema)
    wrong = [instance for instance in instances
             if matcher.accepts(json.dumps(instance)) != validator.is_valid(instance)]
    assert wrong == []
    assert any(validator.is_valid(instance) for instance in instances)
    assert not all(validator.is_valid(instance) for instance in instances)
    rng = random.Random(17)
    for _ in range(40):
        walk = matcher.random_walk(rng)
        assert walk is None or validator.is_valid(json.loads(walk)), walk


NAMES = ["a", "b"]
SCALARS = [None, 0, 1, "a", "b"]
INSTANCES = SCALARS + [[], {}] + objects(a=SCALARS, b=SCALARS)


def random_part(rng: random.Random):
    """A small random schema over ``NAMES`` and ``SCALARS``."""
    kind = rng.randrange(6)
    name = rng.choice(NAMES)
    if kind == 0:
        return {"properties": {name: {"const": rng.choice(SCALARS)}}}
    if kind == 1:
        return {"required": [name]}
    if kind == 2:
        return {"properties": {name: {"type": rng.choice(["string", "integer", "null"])}}}
    if kind == 3:
        return {"type": rng.choice(["object", "string", ["integer", "object"]])}
    if kind == 4:
        return {"not": random_part(rng)}
    return {"properties": {name: {"enum": rng.sample(SCALARS, 2)}}, "required": [name]}


def random_conditional(rng: random.Random) -> dict:
    conditional = {"if": random_part(rng)}
    for keyword in rng.choice([["then"], ["then", "else"], ["else"]]):
        conditional[keyword] = random_part(rng)
    return conditional


@pytest.mark.parametrize("seed", range(6))
def test_random_conditionals_are_exact(seed):
    rng = random.Random(seed)
    silent = 0
    for _ in range(40):
        schema = {"allOf": [random_conditional(rng) for _ in range(rng.choice([2, 3, 4]))]}
        outcome, wrong = disagreements(schema, INSTANCES)
        silent += outcome == "silent"
        assert wrong == [], (schema, wrong)
    assert silent >= 30
