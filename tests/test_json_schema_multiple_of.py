"""``multipleOf`` with and without bounds (issue 17, item 2), against
``jsonschema`` with exact arithmetic.

The oracle is ``Draft202012Validator`` on the schema with ``multipleOf`` and
the bounds turned into ``Decimal`` of their JSON text, and instances parsed
as ``Decimal`` (integral values as ``int``, so ``type: integer`` sees them):
jsonschema then computes ``instance % step`` and the comparisons exactly,
where its float path calls ``0.3`` no multiple of ``0.1``.

Instances are generated around the multiples (k * step, plus offsets of a
half step, a tenth of a step and 0.001) and the integers near each bound,
and multiples at random, each
written as a plain decimal, with extra fraction zeros, and negated; every one
is accepted iff the oracle calls it valid.  Random walks through the grammar
are all valid.  Exponent spellings are not part of the pools: grammask does
not accept them under ``multipleOf`` (documented in number_nodes.py).
"""

from __future__ import annotations

import json
import random
from decimal import Decimal, localcontext

import jsonschema
import pytest

from grammask.json_schema import schema_to_ast

from support.schema_matcher import SchemaMatcher

STEPS = [1, 2, 7, 0.01, 0.5, 2.5, 0.125]
BOUNDS = {
    "none": {},
    "narrow": {"minimum": 3, "maximum": 20},
    "narrow_exclusive": {"exclusiveMinimum": 2.5, "exclusiveMaximum": 15},
    "wide": {"minimum": 0, "maximum": 1_000_000},
    "wide_exclusive": {"exclusiveMinimum": -1000.5, "exclusiveMaximum": 99999.75},
    "low_only": {"minimum": 100.25},
    "high_only": {"exclusiveMaximum": -7},
    "negative_wide": {"minimum": -123456, "maximum": -0.5},
}


def exact(value):
    return Decimal(repr(value)) if isinstance(value, float) else value


def oracle(schema: dict) -> jsonschema.Draft202012Validator:
    exact_schema = {key: exact(value) for key, value in schema.items()}
    return jsonschema.Draft202012Validator(exact_schema)


def parse_exact(text: str):
    value = json.loads(text, parse_float=Decimal)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


def instance_texts(schema: dict, rng: random.Random) -> list[str]:
    step = Decimal(repr(schema["multipleOf"])) if isinstance(schema["multipleOf"], float) \
        else Decimal(schema["multipleOf"])
    anchors = [Decimal(0)] + [exact(Decimal(repr(v)) if isinstance(v, float) else Decimal(v))
                              for k, v in schema.items() if "imum" in k]
    values = set()
    for anchor in anchors:
        base = (anchor / step).to_integral_value()
        for k in range(-3, 4):
            values.add(step * (base + k))
            values.add(anchor.to_integral_value() + k)
    for _ in range(20):
        values.add(step * rng.randint(-10 ** 7, 10 ** 7))
    for offset in (step / 2, step / 10, Decimal("0.001")):
        values |= {v + offset for v in list(values)[:40]}
    texts = []
    for value in sorted(values):
        plain = format(value.normalize(), "f")
        texts += [plain, format(-value.normalize(), "f")]
        texts.append(plain + ".00" if "." not in plain else plain + "00")
    return texts


CASES = [(kind, step, name) for kind in ("number", "integer") for step in STEPS
         for name in BOUNDS]


@pytest.mark.parametrize("kind,step,bounds", CASES)
def test_multiple_of_matches_exact_oracle(kind, step, bounds):
    with localcontext(prec=1000):  # exact remainders for the walks' long literals
        check_multiple_of(kind, step, bounds)


def check_multiple_of(kind, step, bounds):
    schema = {"type": kind, "multipleOf": step, **BOUNDS[bounds]}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = oracle(schema)
    rng = random.Random(f"{kind}{step}{bounds}")
    texts = instance_texts(schema, rng)
    n_valid = 0
    for text in texts:
        expected = validator.is_valid(parse_exact(text))
        n_valid += expected
        assert matcher.accepts(text) == expected, (schema, text)
    assert n_valid > 0 or bounds == "narrow_exclusive"
    for _ in range(30):
        text = matcher.random_walk(rng, max_bytes=60)
        if text is not None:
            assert validator.is_valid(parse_exact(text)), (schema, text)


def test_multiple_of_one_with_wide_bounds_is_an_integer():
    """The held-out MaskBench case: 100.1 was accepted."""
    for kind in ("number", "integer"):
        matcher = SchemaMatcher({"type": kind, "multipleOf": 1, "minimum": 0,
                                 "maximum": 10 ** 9})
        assert not matcher.accepts("100.1")
        assert matcher.accepts("100") and matcher.accepts("100.0")


def test_non_decimal_step_still_warns():
    matcher = SchemaMatcher({"type": "number", "multipleOf": 1 / 3, "minimum": 0,
                             "maximum": 10 ** 6})
    assert any(w.keyword == "multipleOf" for w in matcher.warnings)


def test_a_repeated_step_and_bounds_define_their_rules_once():
    """Two properties with the same ``multipleOf`` and bounds (but schemas
    that differ) share one product; both still accept exactly the multiples."""
    step = {"type": "integer", "multipleOf": 3, "minimum": 1}
    schema = {"type": "object", "properties": {"a": step, "b": {**step, "description": "b"}},
              "required": ["a", "b"], "additionalProperties": False}
    names = [rule.name for rule in schema_to_ast(schema).rules]
    product_rules = [name for name in names if name.startswith("multiple_of")]
    assert product_rules and len({name.rsplit("_", 1)[0] for name in product_rules}) == 1
    matcher = SchemaMatcher(schema)
    validator = oracle(schema)
    for a in range(-4, 14):
        for b in (3, 7, 12):
            text = json.dumps({"a": a, "b": b}, separators=(",", ":"))
            assert matcher.accepts(text) == validator.is_valid({"a": a, "b": b}), text
