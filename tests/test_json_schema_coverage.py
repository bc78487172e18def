"""Coverage of the JSON Schema translator (issue 8, item 5), through the real
pipeline, against independent oracles:

- JSONSchemaBench (30 schemas): every schema compiles; every ``valid: true``
  instance is accepted (json.dumps default, indent=2, compact, non-ASCII raw;
  members in schema order with default options, in the instance's own order
  with ``any_order=True``, unless an object of the schema has too many
  required members for an exact any-order grammar: ``LimitExceeded`` naming
  ``max_any_order_states``); every ``valid: false`` instance that ``jsonschema``
  also rejects is rejected, unless the translation warned (an approximated
  keyword).
- JSON-Schema-Test-Suite (draft 2020-12): no unexpected failure (every
  failure is a warned approximation or a documented decision) and the
  overall pass rate stays at or above the recorded figure.
- hypothesis-jsonschema instances of simple schemas are accepted.
- random walks through the grammar (random allowed bytes until complete)
  produce JSON that ``jsonschema`` validates (format checking on).
"""

from __future__ import annotations

import json
from decimal import Decimal
import random
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from grammask.errors import LimitExceeded
from support.schema_matcher import (
    FORMAT_CHECKER, JSONSCHEMABENCH, SchemaMatcher, dumps_variants, schema_ordered,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

BENCH_FILES = sorted(JSONSCHEMABENCH.glob("*.json"))


def exact_float(text: str):
    """A JSON number for the oracle, without float rounding: an int when the
    value is integral (``13.0`` is an integer since draft 6), a float when
    that is exact, else a Decimal (which jsonschema compares exactly)."""
    exact = Decimal(text)
    if exact.is_zero():
        return 0
    if abs(exact.adjusted()) > 300:
        return exact
    if exact == exact.to_integral_value():
        return int(exact)
    value = float(exact)
    return value if Decimal(value) == exact else exact


def _validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=FORMAT_CHECKER)


def test_all_thirty_bench_schemas_present():
    assert len(BENCH_FILES) == 30


@pytest.mark.parametrize("path", BENCH_FILES, ids=[p.stem for p in BENCH_FILES])
def test_jsonschemabench_schema(path):
    data = json.loads(path.read_text())
    schema = data["schema"]
    matcher = SchemaMatcher(schema)
    try:
        any_order = SchemaMatcher(schema, any_order=True)
    except LimitExceeded as error:  # an exact grammar of every order is too large
        assert error.limit == "max_any_order_states"
        any_order = None
    validator = _validator(schema)
    n_valid = 0
    for test in data["tests"]:
        ordered = schema_ordered(test["data"], schema)
        if test["valid"]:
            n_valid += 1
            for text in dumps_variants(ordered):
                assert matcher.accepts(text), text[:300]
            for text in dumps_variants(test["data"]) if any_order is not None else ():
                assert any_order.accepts(text), text[:300]
        elif not validator.is_valid(test["data"]) and not matcher.warnings:
            assert not matcher.accepts(json.dumps(ordered)), json.dumps(ordered)[:300]
    assert n_valid >= 1


_COMBINATORS = ("allOf", "anyOf", "oneOf", "$ref")


def closed(schema, in_combinator: bool = False):
    """``schema`` with objects that declare properties closed to other keys
    (not inside or beside allOf/anyOf/oneOf/$ref, where other operands may
    declare them, unless every anyOf/oneOf branch names only declared ones): its instances are instances of ``schema``, and random
    walks through it end (with extra members allowed, a walk that still has
    to write a required member tends to write short extra members forever)."""
    if isinstance(schema, list):
        return [closed(item, in_combinator) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key in ("enum", "const", "required"):
            result[key] = value
        else:
            result[key] = closed(value, key in _COMBINATORS)
    if "properties" in result and not in_combinator \
            and not any(key in schema for key in _COMBINATORS if not _declares_nothing_new(schema, key)) \
            and result.get("additionalProperties", True) in (True, {}):
        result["additionalProperties"] = False
    return result


def _declares_nothing_new(schema: dict, key: str) -> bool:
    """Whether every ``anyOf`` / ``oneOf`` branch of ``schema`` names (in
    ``properties`` and ``required``) only properties ``schema`` declares, so
    closing ``schema`` removes nothing a branch adds."""
    branches = schema.get(key) if key in ("anyOf", "oneOf") else None
    if not isinstance(branches, list):
        return False
    declared = set(schema.get("properties") or {})
    return all(isinstance(branch, dict) and not set(branch) & set(_COMBINATORS)
               and set(branch.get("properties") or {}) | set(branch.get("required") or [])
               <= declared for branch in branches)


@pytest.mark.parametrize("path", BENCH_FILES, ids=[p.stem for p in BENCH_FILES])
def test_random_walks_validate_with_jsonschema(path):
    original = json.loads(path.read_text())["schema"]
    schema = closed(original)
    matcher = SchemaMatcher(schema, max_whitespace=2)
    if matcher.warnings:
        pytest.skip(f"approximated keywords: {matcher.warnings[0]}")
    validator = _validator(original)
    rng = random.Random(path.stem)
    n_complete = 0
    for _ in range(12):
        output = matcher.random_walk(rng, max_bytes=6000)
        if output is None:
            continue
        n_complete += 1
        instance = json.loads(output, parse_float=exact_float)
        errors = [e.message for e in validator.iter_errors(instance)]
        assert not errors, (output[:300], errors[:3])
    assert n_complete >= 3


def test_test_suite_has_no_unexpected_failures():
    from bench_json_schema import run_test_suite

    result = run_test_suite()
    unexpected = {k: row["unexpected_failures"] for k, row in result["keywords"].items()
                  if row["unexpected_failures"]}
    assert not unexpected
    assert result["summary"]["pass_rate"] >= 0.92
    for keyword in ("additionalProperties", "allOf", "anyOf", "boolean_schema", "const", "contains",
                    "dependentRequired", "enum", "exclusiveMaximum", "exclusiveMinimum", "items",
                    "maxItems", "maxLength", "maxProperties", "maximum", "minItems", "minLength",
                    "minProperties", "minimum", "multipleOf", "prefixItems", "propertyNames",
                    "required", "type"):
        row = result["keywords"][keyword]
        assert row["passed"] == row["tests"], (keyword, row["known_failures"][:2])


# hypothesis-jsonschema 0.23.1 cannot draw objects with the installed
# hypothesis (its object strategy calls a removed ``many.more()``), so the
# simple schemas here are arrays, strings, numbers and combinations; objects
# are covered by the bench instances, the pydantic dumps and random walks.
SIMPLE_SCHEMAS = [
    {"type": "array", "items": {"enum": ["a", "b", 3, None]}, "maxItems": 5},
    {"type": "array", "items": {"type": "number", "exclusiveMinimum": -2.5, "maximum": 1e3},
     "minItems": 1, "maxItems": 4},
    {"anyOf": [{"type": "string", "pattern": "^[a-f0-9]{2,6}$"},
               {"type": "integer", "multipleOf": 7}]},
    {"type": "string", "minLength": 2, "maxLength": 9},
    {"type": "string", "format": "date"},
    {"type": "integer", "minimum": -10**20, "maximum": 10**18},
    {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2}},
    {"type": ["string", "null", "boolean"]},
]


@pytest.mark.parametrize("index", range(len(SIMPLE_SCHEMAS)))
def test_hypothesis_jsonschema_instances_accepted(index):
    schema = SIMPLE_SCHEMAS[index]
    matcher = SchemaMatcher(schema)
    validator = _validator(schema)

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(instance):
        assume(validator.is_valid(instance))
        for text in dumps_variants(instance):
            assert matcher.accepts(text), text

    check()


TOKEN_WALK_SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5},
                                      "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "array", "items": {"enum": ["red", "green", 7, None]}, "minItems": 1, "maxItems": 4},
    {"anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 1},
               {"type": "string", "format": "date"}]},
]


@pytest.mark.parametrize("index", range(len(TOKEN_WALK_SCHEMAS)))
def test_token_level_walks_through_the_engine_validate(index):
    """Random allowed tokens (a byte vocabulary plus multi-byte tokens) through
    grammask.Engine until EOS is allowed and chosen; jsonschema validates."""
    import grammask

    schema = TOKEN_WALK_SCHEMAS[index]
    tokens = [bytes([b]) for b in range(256)] + [b'{"', b'":', b'",', b"true", b"null", b"  ",
                                                 b'"}', b"name", b"age", b"red", b"-0", None]
    vocabulary = grammask.Vocabulary(tokens, eos_token_ids=[len(tokens) - 1])
    compiled = grammask.compile(grammask.Grammar.from_json_schema(schema, max_whitespace=1),
                                vocabulary)
    validator = _validator(schema)
    rng = random.Random(index)
    n_complete = 0
    for _ in range(25):
        engine = grammask.Engine(compiled)
        output = b""
        for _ in range(200):
            allowed = [int(t) for t in engine.compute_allowed_token_ids()
                       if int(t) not in vocabulary.eos_token_ids]
            if engine.can_end() and (not allowed or rng.random() < 0.4):
                n_complete += 1
                assert validator.is_valid(json.loads(output, parse_float=exact_float)), output
                break
            assert allowed, output
            token = rng.choice(allowed)
            engine.try_accept_new_token(token)
            output += vocabulary.token_bytes(token)
    assert n_complete >= 5


_SCALARS = st.one_of(
    st.just({"type": "null"}), st.just({"type": "boolean"}),
    st.builds(lambda lo, width: {"type": "integer", "minimum": lo, "maximum": lo + width},
              st.integers(-50, 50), st.integers(0, 200)),
    st.builds(lambda lo, strict: {"type": "number", ("exclusiveMinimum" if strict else "minimum"): lo},
              st.floats(-100, 100, allow_nan=False).map(lambda x: round(x, 2)), st.booleans()),
    st.builds(lambda lo, extra: {"type": "string", "minLength": lo, "maxLength": lo + extra},
              st.integers(0, 4), st.integers(0, 6)),
    st.just({"type": "string", "pattern": "^[a-c]+x?$"}),
    st.just({"type": "string", "format": "date"}),
    st.lists(st.one_of(st.integers(-3, 3), st.sampled_from(["a", "é", None, True])),
             min_size=1, max_size=4, unique_by=lambda v: (type(v), v)).map(lambda v: {"enum": v}),
    st.just({"type": "integer", "multipleOf": 3}),
)

_SCHEMAS = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.builds(lambda props, n_required, closed: {
        "type": "object", "properties": dict(props),
        "required": [name for name, _ in props][:n_required],
        **({"additionalProperties": False} if closed else {})},
        st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), inner), max_size=3,
                 unique_by=lambda p: p[0]), st.integers(0, 3), st.booleans()),
    st.builds(lambda item, lo, extra: {"type": "array", "items": item, "minItems": lo,
                                       "maxItems": lo + extra},
              inner, st.integers(0, 2), st.integers(0, 3)),
    st.builds(lambda items: {"anyOf": items}, st.lists(inner, min_size=1, max_size=3)),
    st.builds(lambda a, b: {"allOf": [a, b]}, inner, inner),
), max_leaves=6)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(_SCHEMAS, st.integers(0, 2**16))
def test_random_schemas_compile_and_walks_validate(schema, seed):
    """Random schemas either compile or raise a typed GrammarError; every
    walk through a warning-free grammar is valid for jsonschema."""
    from grammask.errors import GrammarError

    try:
        matcher = SchemaMatcher(schema, max_whitespace=1, close_objects=True)
    except GrammarError:
        return
    if matcher.warnings:
        return
    validator = _validator(schema)
    rng = random.Random(seed)
    for _ in range(4):
        output = matcher.random_walk(rng, max_bytes=800)
        if output is not None:
            instance = json.loads(output, parse_float=exact_float)
            assert validator.is_valid(instance), (schema, output)
