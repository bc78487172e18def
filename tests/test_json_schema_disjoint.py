"""The disjointness prover (``json_schema/disjoint.py``) is sound: whenever it
says two schemas share no instance, ``jsonschema`` finds none valid against
both, on random schemas and on hand-written ones; and its rules do fire.

Soundness on random schemas: ``random_schema`` draws schemas from the
keywords the prover reads (type, const, enum, number and length bounds,
pattern, format, required, properties, additionalProperties,
patternProperties, maxProperties, item counts, items, prefixItems, allOf,
anyOf, oneOf, ``$ref``, ``not`` of a ``$ref``) and from some it must
ignore (other ``not``, ``multipleOf``), over a small alphabet of names and values so that the two
schemas of a pair often meet.  For each pair that ``disjoint`` proves, every
instance of ``INSTANCES`` (scalars, arrays and objects built from the same
alphabet) is checked with the draft 2020-12 validator and its format
checker: none may be valid against both.  Most pairs share one ``type``,
so that their proofs come from the other keywords.  The pairs come from
``random.Random`` with fixed seeds (replayable); the test also requires that
enough pairs are proven that the check is not vacuous.

``PROVEN`` lists pairs each rule must prove (with an instance valid against
each side alone, checked too, so a pair is not trivially empty), ``NOT_PROVEN``
pairs that overlap (the instance valid against both is checked by
``jsonschema``) or that the declared draft reads differently.
"""

from __future__ import annotations

import itertools
import random

import jsonschema
import pytest

from grammask.json_schema.disjoint import disjoint
from grammask.json_schema.options import Options
from grammask.json_schema.translator import Translator
from support.schema_matcher import FORMAT_CHECKER

NAMES = ["a", "b", "c"]
SCALARS = [None, True, False, 0, 1, -1, 2, 1.5, 0.5, "", "a", "b", "ab", "ba", "abc",
           "2024-01-02"]
INSTANCES = (SCALARS
             + [[]] + [[value] for value in SCALARS]
             + [[first, second] for first, second in itertools.product([0, "a", None, [1]],
                                                                       repeat=2)]
             + [{}] + [{name: value} for name in NAMES for value in SCALARS + [[1], {"a": 1}]]
             + [{first: first_value, second: second_value}
                for first, second in itertools.combinations(NAMES, 2)
                for first_value, second_value in itertools.product([1, "a", None, 1.5], repeat=2)]
             + [{"a": 1, "b": "a", "c": None}, {"a": "a", "b": 1, "c": 2}])


def random_schema(rng: random.Random, depth: int = 0, refs: bool = True):
    """A random schema of a few keywords (module docstring); ``$ref`` only
    with ``refs`` (the targets have none, so references never cycle)."""
    if depth > 2 or rng.random() < 0.1:
        return rng.choice([True, False, {}, {"type": rng.choice(["string", "integer"])}])
    schema = {}
    for _ in range(rng.choice([1, 1, 2, 3])):
        schema.update(random_keyword(rng, depth, refs))
    return schema


def random_keyword(rng: random.Random, depth: int, refs: bool) -> dict:
    number = rng.choice([-1, 0, 0.5, 1, 2])
    count = rng.choice([0, 1, 2])
    kind = rng.randrange(22)
    if kind == 0:
        return {"type": rng.choice(["null", "boolean", "integer", "number", "string", "array",
                                    "object", ["string", "integer"], ["object", "null"]])}
    if kind == 1:
        return {"const": rng.choice(SCALARS)}
    if kind == 2:
        return {"enum": rng.sample(SCALARS, rng.choice([1, 2, 3]))}
    if kind == 3:
        return {rng.choice(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]): number}
    if kind == 4:
        return {rng.choice(["minLength", "maxLength"]): count}
    if kind == 5:
        return {"pattern": rng.choice(["^a", "b$", "^[ab]+$", "c", "(?i)x"])}
    if kind == 6:
        return {"format": "date"}
    if kind in (7, 8):
        return {"required": rng.sample(NAMES, rng.choice([1, 2]))}
    if kind in (9, 10):
        return {"properties": {name: random_schema(rng, depth + 1, refs)
                               for name in rng.sample(NAMES, rng.choice([1, 2]))}}
    if kind == 11:
        return {"additionalProperties": rng.choice([False, random_schema(rng, depth + 1, refs)])}
    if kind == 12:
        return {"patternProperties": {"^b": random_schema(rng, depth + 1, refs)},
                "additionalProperties": rng.choice([False, {"type": "string"}])}
    if kind == 13:
        return {rng.choice(["maxProperties", "minItems", "maxItems"]): count}
    if kind == 14:
        return {"items": random_schema(rng, depth + 1, refs)}
    if kind == 15:
        return {"prefixItems": [random_schema(rng, depth + 1, refs)]}
    if kind == 16:
        return {"allOf": [random_schema(rng, depth + 1, refs) for _ in range(2)]}
    if kind == 17:
        return {rng.choice(["anyOf", "oneOf"]): [random_schema(rng, depth + 1, refs)
                                                 for _ in range(2)]}
    if kind == 18 and refs:
        return {"$ref": rng.choice(["#/$defs/first", "#/$defs/second"])}
    if kind == 19:
        if refs and rng.random() < 0.5:
            return {"not": {"$ref": rng.choice(["#/$defs/first", "#/$defs/second"])}}
        return {"not": random_schema(rng, depth + 1, refs)}
    if kind == 20:
        return {"multipleOf": rng.choice([2, 0.5])}
    return {"minItems": 1, "items": random_schema(rng, depth + 1, refs)}


def both_valid(root: dict, first, second) -> list:
    """The instances of ``INSTANCES`` valid against both schemas (``$ref`` into ``root``)."""
    validators = [jsonschema.Draft202012Validator(dict(root, allOf=[side]),
                                                  format_checker=FORMAT_CHECKER)
                  for side in (first, second)]
    return [instance for instance in INSTANCES
            if all(validator.is_valid(instance) for validator in validators)]


@pytest.mark.parametrize("seed", range(4))
def test_proven_pairs_share_no_instance(seed):
    rng = random.Random(seed)
    proven = 0
    for _ in range(2000):
        root = {"$defs": {"first": random_schema(rng, 1, refs=False),
                          "second": random_schema(rng, 1, refs=False)}}
        first, second = random_schema(rng), random_schema(rng)
        if isinstance(first, dict) and isinstance(second, dict) and rng.random() < 0.6:
            # One shared type, so that proofs must come from the other keywords.
            shared = rng.choice(["string", "number", "array", "object", "object"])
            first, second = dict(first, type=shared), dict(second, type=shared)
        if not disjoint(Translator(root, Options()), first, second):
            continue
        proven += 1
        assert both_valid(root, first, second) == [], (root, first, second)
    assert proven >= 40


PROVEN = [
    ("discriminator required on one side", {},
     {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
     {"properties": {"kind": {"const": "b"}}},
     {"kind": "a"}, {}),
    ("discriminator required beside the branches", {},
     {"allOf": [{"type": "object", "required": ["kind"]},
                {"properties": {"kind": {"const": "a"}}}]},
     {"allOf": [{"type": "object", "required": ["kind"]},
                {"properties": {"kind": {"const": "b"}}}]},
     {"kind": "a"}, {"kind": "b"}),
    ("additionalProperties schema", {},
     {"type": "object", "additionalProperties": {"type": "string"}, "required": ["x"]},
     {"properties": {"x": {"type": "integer"}}},
     {"x": "s"}, {"x": 1}),
    ("more required names than maxProperties", {},
     {"type": "object", "maxProperties": 1},
     {"required": ["a", "b"]},
     {"a": 1}, {"a": 1, "b": 2}),
    ("item counts", {},
     {"type": "array", "maxItems": 1},
     {"type": "array", "minItems": 2},
     [1], [1, 2]),
    ("first item", {},
     {"type": "array", "minItems": 1, "items": {"type": "number"}},
     {"type": "array", "items": {"type": "array"}},
     [1], []),
    ("tuple position", {},
     {"type": "array", "prefixItems": [{"const": "x"}], "minItems": 1},
     {"type": "array", "prefixItems": [{"const": "y"}]},
     ["x"], ["y"]),
    ("bounds across allOf", {},
     {"type": "number", "allOf": [{"minimum": 0}, {"maximum": 5}]},
     {"allOf": [{"type": "number"}, {"exclusiveMinimum": 5}]},
     0, 6),
    ("patterns across allOf", {},
     {"type": "string", "allOf": [{"pattern": "^a"}, {"maxLength": 2}]},
     {"type": "string", "allOf": [{"pattern": "^a"}, {"minLength": 3}]},
     "ab", "abc"),
    ("not of the other side", {"$defs": {"p": {"type": "string", "enum": ["a", "b"]}}},
     {"$ref": "#/$defs/p"}, {"type": "string", "not": {"$ref": "#/$defs/p"}}, "a", "c"),
    ("through a $ref chain", {"$defs": {"circle": {"$ref": "#/$defs/shape",
                                                   "properties": {"kind": {"const": "c"}}},
                                        "shape": {"type": "object", "required": ["kind"]}}},
     {"$ref": "#/$defs/circle"},
     {"type": "object", "properties": {"kind": {"enum": ["s", "t"]}}},
     {"kind": "c"}, {"kind": "s"}),
]


@pytest.mark.parametrize("name,root,first,second,only_first,only_second", PROVEN,
                         ids=[case[0] for case in PROVEN])
def test_rule_proves(name, root, first, second, only_first, only_second):
    assert disjoint(Translator(root, Options()), first, second)
    assert disjoint(Translator(root, Options()), second, first)
    for instance, valid in ((only_first, (True, False)), (only_second, (False, True))):
        verdicts = tuple(jsonschema.Draft202012Validator(dict(root, allOf=[side])).is_valid(
            instance) for side in (first, second))
        assert verdicts == valid, instance


DRAFT_7 = "http://json-schema.org/draft-07/schema#"

NOT_PROVEN = [
    ("discriminator nobody requires", {},
     {"properties": {"kind": {"const": "a"}}}, {"properties": {"kind": {"const": "b"}}}, {}),
    ("items without minItems", {},
     {"type": "array", "items": {"type": "number"}},
     {"type": "array", "items": {"type": "array"}}, []),
    ("names under patternProperties", {},
     {"type": "object", "required": ["ab"], "patternProperties": {"^a": {"type": "string"}},
      "additionalProperties": False},
     {"properties": {"ab": {"type": "string"}}}, {"ab": "x"}),
    ("anyOf beside $ref in draft 7", {"$schema": DRAFT_7, "definitions": {"any": {}}},
     {"$ref": "#/definitions/any", "anyOf": [{"type": "string"}]},
     {"type": "integer"}, 1),
    ("const in draft 4", {"$schema": "http://json-schema.org/draft-04/schema#"},
     {"const": "a"}, {"const": "b"}, "c"),
]


@pytest.mark.parametrize("name,root,first,second,instance", NOT_PROVEN,
                         ids=[case[0] for case in NOT_PROVEN])
def test_overlap_not_proven(name, root, first, second, instance):
    assert not disjoint(Translator(root, Options()), first, second)
    validator_class = jsonschema.validators.validator_for(root, jsonschema.Draft202012Validator)
    assert all(validator_class(dict(root, allOf=[side])).is_valid(instance)
               for side in (first, second))
