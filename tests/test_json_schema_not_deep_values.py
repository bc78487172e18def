"""``not`` of an object / array value nested up to ``MAX_EXCLUDED_NESTING``
beside a recursion through merged definitions (MaskBench's Handwritten
mod304 and mod306): the schema's own rules are made before the complement
walks the value (``applicators._not_values``), so the recursion's depth
and the value's add no longer, and both translate within the default
``max_schema_depth``, exactly and silently.

mod304: chains ``{"a": {"a": ... {}}}`` whose depth is a multiple of 2, 3,
5 and 6 (phases of four recursive definitions), at least 1, and not the
30-level witness: depths 60 and 90 here.  mod306: objects ``{"a": [items],
"b": n}`` whose leaves (no ``a``) lie at a depth that is a multiple of 30,
with ``b`` a multiple of 2 / 3 / 5 at the levels the phases say.

Checked against ``jsonschema`` (the declared draft's validator) on every
chain depth up to 95 with variations, and on seeded random trees."""

from __future__ import annotations

import random

import pytest

from grammask.json_schema.applicators import MAX_EXCLUDED_NESTING
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent

PHASES = {
    "x": 2, "y": 3, "w": 6, "z": 5,
}


def _cycle(name: str, period: int, minimum: int, wrap=lambda ref: ref) -> dict:
    return {f"{name}{k}": dict({"additionalProperties": wrap(
        {"$ref": f"#/definitions/{name}{(k + 1) % period}"})},
        **({"minProperties": minimum} if k else {})) for k in range(period)}


def _chain(depth: int, leaf=None) -> dict:
    value = {} if leaf is None else leaf
    for _ in range(depth):
        value = {"a": value}
    return value


MOD304 = {
    "allOf": [{"$ref": "#/definitions/word"}, {"$ref": "#/definitions/x0"},
              {"$ref": "#/definitions/y0"}, {"$ref": "#/definitions/w0"},
              {"$ref": "#/definitions/z0"}, {"minProperties": 1},
              {"not": {"$ref": "#/definitions/witness"}}],
    "definitions": dict(
        {"word": {"type": "object", "properties": {"a": {"$ref": "#/definitions/word"}},
                  "additionalProperties": False},
         "witness": {"const": _chain(30)}},
        **{key: value for name, period in PHASES.items()
           for key, value in _cycle(name, period, 1).items()})}

MOD306 = {
    "allOf": [{"$ref": "#/definitions/word"}, {"$ref": "#/definitions/x0"},
              {"$ref": "#/definitions/y0"}, {"$ref": "#/definitions/z0"},
              {"minProperties": 2}, {"not": {"$ref": "#/definitions/witness"}}],
    "definitions": {
        "word": {"type": "object",
                 "properties": {"a": {"type": "array", "items": {"$ref": "#/definitions/word"},
                                      "minItems": 1},
                                "b": {"type": "integer", "exclusiveMinimum": 0}},
                 "required": ["b"], "additionalProperties": False},
        "witness": {"const": {"a": [{"a": [{"a": [{"a": [{"a": [], "b": 2}], "b": 3}],
                                            "b": 2}], "b": 1}], "b": 30}}}}
for _name, _period in (("x", 2), ("y", 3), ("z", 5)):
    for _k in range(_period):
        _next = {"items": {"$ref": f"#/definitions/{_name}{(_k + 1) % _period}"}}
        MOD306["definitions"][f"{_name}{_k}"] = (
            {"additionalProperties": {"allOf": [_next, {"multipleOf": _period}]}} if _k == 0
            else {"additionalProperties": _next, "minProperties": 2})


def test_mod304_is_exact_and_silent():
    instances = [_chain(depth) for depth in range(96)]
    instances += [_chain(depth, {"b": {}}) for depth in (29, 30, 59, 60)]
    instances += [_chain(depth, {"a": 1}) for depth in (29, 59)]
    instances += [_chain(depth, []) for depth in (30, 60)]
    instances += [{"a": _chain(30), "b": {}}, [_chain(60)], "x", None]
    assert assert_exact_and_silent(MOD304, instances)[2] == 2  # depths 60 and 90


def _tree(rng: random.Random, depth: int, spoiled: int, level: int = 0,
          forked: bool = False) -> dict:
    """An object of mod306's shape with its leaves at ``depth`` (one fork at
    most); at level ``spoiled`` ``b`` may be off its phases' multiples or
    ``a`` empty."""
    b = 1
    for p in (2, 3, 5):
        if level % p == 0:
            b *= p
    if level == spoiled:
        b = rng.choice([1, 2, 3, 5, 7, 0, -6, b])
    node: dict = {}
    if level < depth:
        fork = not forked and rng.random() < 0.1
        node["a"] = [_tree(rng, depth, spoiled, level + 1, forked or fork)
                     for _ in range(1 + fork)]
    elif level == spoiled and rng.random() < 0.5:
        node["a"] = []
    node["b"] = b * rng.choice([1, 1, 1, 7])
    return node


def test_mod306_is_exact_and_silent():
    rng = random.Random(306)
    instances = [_tree(rng, depth, rng.choice([-1, -1, rng.randrange(depth + 1)]))
                 for depth in (0, 1, 5, 29, 30, 31, 59, 60) for _ in range(6)]
    instances += [MOD306["definitions"]["witness"]["const"], {"b": 30}, "x", [1]]
    n_valid = assert_exact_and_silent(MOD306, instances)[2]
    assert 0 < n_valid < len(instances)


@pytest.mark.parametrize("extra", [0, 1])
def test_values_past_the_nesting_limit_stay_warned(extra):
    deep: list = []
    for _ in range(MAX_EXCLUDED_NESTING - 1 + extra):
        deep = [deep]
    matcher = SchemaMatcher({"type": "array", "not": {"const": deep}})
    assert [warning.keyword for warning in matcher.warnings] == ["not"] * extra
