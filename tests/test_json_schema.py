"""End-to-end tests of Grammar.from_json_schema / from_pydantic through the real
pipeline (front end -> LNF -> Earley core), keyword by keyword.

Verdicts come from independent oracles: ``jsonschema`` (Draft 2020-12, with
format checking) on ``json.loads`` of the text, and pydantic's own validation
for models.  Instances in the tables are written with members in schema
order (the default grammar's order); texts are checked in several
serialisations (compact, ``json.dumps`` default, ``indent=2``, non-ASCII raw).
"""

from __future__ import annotations

import enum
import json
import random
import warnings
from typing import Annotated, Literal, Optional, Union

import jsonschema
import pytest
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from grammask.errors import GrammarError, GrammarSyntaxError, LimitExceeded
from grammask.json_schema import GrammarWarning, SchemaUnsupported, schema_to_ast, translate_schema
from support.schema_matcher import FORMAT_CHECKER, SchemaMatcher, dumps_variants


def oracle_valid(schema, instance) -> bool:
    validator = jsonschema.Draft202012Validator(schema, format_checker=FORMAT_CHECKER)
    return validator.is_valid(instance)


CASES = [
    ("optional properties are absent, never empty",
     {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                       "c": {"type": "boolean"}}, "required": ["b"]},
     [{"b": "x"}, {"a": 1, "b": "x"}, {"b": "x", "c": True}, {"a": 1, "b": "x", "c": False},
      {"a": 1}, {}, {"a": "1", "b": "x"}, {"b": "x", "extra": [1, {"k": None}]}]),
    ("additionalProperties false",
     {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
     [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}]),
    ("additionalProperties schema, declared names excluded",
     {"type": "object", "properties": {"a": {"type": "integer"}},
      "additionalProperties": {"type": "string"}},
     [{"a": 1}, {"a": 1, "z": "s"}, {"z": "s"}, {"z": 1}, {"a": "s"}, {"a": 1, "aa": "s"}]),
    ("patternProperties",
     {"type": "object", "patternProperties": {"^x-": {"type": "integer"}},
      "additionalProperties": False},
     [{}, {"x-a": 1}, {"x-a": "s"}, {"y": 1}, {"x-": 2, "x-b": 3}]),
    ("min/maxProperties",
     {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "minProperties": 1,
      "maxProperties": 2},
     [{}, {"a": 1}, {"a": 1, "c": 2}, {"a": 1, "b": 2, "c": 3}, {"z": 1}, {"z": 1, "y": 2, "x": 3}]),
    ("required name not declared",
     {"type": "object", "required": ["id"], "additionalProperties": {"type": "integer"}},
     [{"id": 1}, {}, {"id": "x"}, {"id": 1, "other": 2}]),
    ("nested objects and arrays",
     {"type": "object", "properties": {"items": {"type": "array", "items": {
         "type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}}}},
     [{"items": []}, {"items": [{"n": 1}, {"n": -2.5e3}]}, {"items": [{}]}, {"items": {}}]),
    ("prefixItems, items false, min/maxItems",
     {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False,
      "minItems": 1},
     [[], [1], [1, "a"], [1, "a", 2], ["a"], [1, 2]]),
    ("minItems/maxItems",
     {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 4},
     [[], [1], [1, 2], [1, 2, 3, 4], [1, 2, 3, 4, 5], [1, "2"]]),
    ("large maxItems by doubling",
     {"type": "array", "items": {"const": 0}, "maxItems": 37},
     [[0] * 36, [0] * 37, [0] * 38, []]),
    ("contains",
     {"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 10}},
     [[], [1], [10], [1, 2, 30, 4], [1, 2, 3]]),
    ("enum and const of every JSON type",
     {"enum": [1, "é\n\"", None, True, [1, {"a": [2]}], {"k": "v", "n": 1.5}, 1e-07]},
     [1, 1.0, 2, "é\n\"", "e", None, False, True, [1, {"a": [2]}], [1, {"a": [3]}],
      {"k": "v", "n": 1.5}, {"k": "v", "n": 1.50}, 1e-07, 0.0000001]),
    ("const zero and float spellings",
     {"const": 0}, [0, 0.0, -0.0, 1, False]),
    ("anyOf",
     {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 5}]},
     ["ab", "abc", 5, 4, 5.5, None]),
    ("oneOf with disjoint types",
     {"oneOf": [{"type": "string"}, {"type": "null"}]}, ["x", None, 1]),
    ("allOf merge with additionalProperties cross-effect",
     {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}},
                 "additionalProperties": False},
                {"properties": {"a": {"minimum": 3}, "b": {"type": "string"}}}]},
     [{"a": 3}, {"a": 2}, {"a": 3, "b": "x"}, {}]),
    ("$ref and $defs with recursion",
     {"$defs": {"node": {"type": "object", "properties": {
         "value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
         "required": ["value"], "additionalProperties": False}},
      "$ref": "#/$defs/node"},
     [{"value": 1}, {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]},
      {"value": 1, "children": [{}]}, {"children": []}]),
    ("$anchor and $ref with siblings",
     {"$defs": {"pos": {"$anchor": "positive", "type": "integer", "exclusiveMinimum": 0}},
      "$ref": "#positive", "maximum": 10},
     [1, 10, 0, 11, -5]),
    ("integer bounds, exclusive and fractional",
     {"type": "integer", "exclusiveMinimum": -3.5, "maximum": 12345678901234567890},
     [-3, -4, 0, 12345678901234567890, 12345678901234567891, 2.0, 2.5]),
    ("number bounds",
     {"type": "number", "minimum": -1.5, "exclusiveMaximum": 2.25},
     [-1.5, -1.51, 0, 2.24999, 2.25, 3]),
    ("multipleOf",
     {"type": "integer", "multipleOf": 3}, [0, 3, -9, 10, 300000000000000000000001 * 3, 4]),
    ("string lengths count code points",
     {"type": "string", "minLength": 2, "maxLength": 3},
     ["ab", "abc", "a", "abcd", "é\n", "\U0001F600\U0001F600", "\U0001F600"]),
    ("long maxLength by chunks",
     {"type": "string", "maxLength": 150}, ["a" * 150, "a" * 151, "é" * 150, ""]),
    ("pattern (search semantics)",
     {"type": "string", "pattern": "^[a-z]+-[0-9]{2}$"}, ["ab-12", "ab-123", "AB-12", "x-00"]),
    ("unanchored pattern",
     {"type": "string", "pattern": "cat"}, ["cat", "a cat here", "dog"]),
    ("formats",
     {"type": "object", "properties": {
         "d": {"type": "string", "format": "date"}, "t": {"type": "string", "format": "date-time"},
         "u": {"type": "string", "format": "uuid"}, "i": {"type": "string", "format": "ipv4"}}},
     [{"d": "2024-02-29"}, {"d": "2023-02-29"}, {"t": "2024-01-01T10:00:00Z"},
      {"t": "2024-01-01 10:00"}, {"u": "123e4567-e89b-12d3-a456-426614174000"}, {"u": "x"},
      {"i": "192.168.0.1"}, {"i": "256.0.0.1"}]),
    ("type list and typeless keywords",
     {"type": ["string", "null"], "minLength": 1}, ["a", "", None, 1]),
    ("typeless schema applies keywords per type",
     {"minimum": 5, "maxLength": 1}, [5, 4, "a", "ab", None, [1], {"a": 1}]),
    ("not of types",
     {"not": {"type": ["string", "object"]}}, [1, None, "a", {}, [], True]),
    ("boolean subschemas",
     {"type": "object", "properties": {"never": False, "any": True}},
     [{}, {"any": [1]}, {"never": 1}]),
]


@pytest.mark.parametrize("name,schema,instances", CASES, ids=[c[0] for c in CASES])
def test_keywords_against_jsonschema(name, schema, instances):
    matcher = SchemaMatcher(schema)
    for instance in instances:
        expected = oracle_valid(schema, instance)
        for text in dumps_variants(instance):
            assert matcher.accepts(text) == expected, (name, text, expected)


# ---------------------------------------------------------------- pitfalls

def test_optional_property_never_key_with_empty_value():
    matcher = SchemaMatcher({"type": "object", "properties": {"a": {"type": "integer"},
                                                             "b": {"type": "integer"}}})
    assert matcher.accepts('{"a":1}') and matcher.accepts('{"b":2}') and matcher.accepts("{}")
    for text in ('{"a":1,"b":}', '{"a":,"b":2}', '{"a":1,}', '{,"b":2}', '{"a":1 "b":2}'):
        assert not matcher.accepts(text), text


def test_deep_nesting_is_not_capped():
    matcher = SchemaMatcher({})
    value: object = 1
    for depth in range(60):
        value = [value] if depth % 2 else {"k": value}
    for text in (json.dumps(value), json.dumps(value, indent=2)):
        assert matcher.accepts(text)
    tree = {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"}
    nested = "[" * 300 + "]" * 300
    assert SchemaMatcher(tree).accepts(nested)
    assert not SchemaMatcher(tree).accepts(nested + "]")


def test_unicode_escapes_accepted_in_free_strings():
    matcher = SchemaMatcher({"type": "string", "maxLength": 2})
    for text in ('"\\u00e9\\u00E9"', '"\\ud83d\\ude00"', '"\\n\\/"', '"\\u0041"'):
        assert matcher.accepts(text), text
    assert not matcher.accepts('"\\ud83d"')
    assert not matcher.accepts('"\\u0041bc"')


def test_integers_beyond_sixteen_digits():
    matcher = SchemaMatcher({"type": "integer"})
    assert matcher.accepts("123456789012345678901234567890")
    assert matcher.accepts("-98765432109876543210")
    assert not matcher.accepts("1.5") and not matcher.accepts("01")


# -------------------------------------------------------------- whitespace

def test_default_whitespace_accepts_deep_pretty_print_and_caps_runs():
    value: object = "leaf"
    for _ in range(100):
        value = {"k": value}
    matcher = SchemaMatcher({})
    assert matcher.accepts(json.dumps(value, indent=2))
    assert matcher.accepts("[" + " " * 256 + "1]")
    assert not matcher.accepts("[" + " " * 257 + "1]")


def test_compact_and_custom_cap():
    compact = SchemaMatcher({"type": "array", "items": {"type": "integer"}}, whitespace="compact")
    assert compact.accepts("[1,2]") and not compact.accepts("[1, 2]") and not compact.accepts(" [1]")
    capped = SchemaMatcher({"type": "array"}, max_whitespace=2)
    assert capped.accepts("[ \n1]") and not capped.accepts("[   1]")
    unbounded = SchemaMatcher({"type": "array"}, max_whitespace=None)
    assert unbounded.accepts("[" + " " * 5000 + "]")


# ------------------------------------------------------- ordering options

def test_schema_order_default_and_any_order_option():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
              "required": ["a", "b"]}
    assert SchemaMatcher(schema).accepts('{"a":1,"b":2}')
    assert not SchemaMatcher(schema).accepts('{"b":2,"a":1}')
    any_order = SchemaMatcher(schema, any_order=True)
    assert any_order.accepts('{"b":2,"a":1}') and any_order.accepts('{"a":1,"b":2}')
    assert not any_order.accepts('{"b":2}') and not any_order.accepts('{"b":2,"c":3}')


def test_close_objects_option():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert SchemaMatcher(schema).accepts('{"a":1,"z":2}')
    closed = SchemaMatcher(schema, close_objects=True)
    assert closed.accepts('{"a":1}') and not closed.accepts('{"a":1,"z":2}')


def test_start_name_option():
    ast = schema_to_ast({"type": "integer"}, start="root")
    assert ast.start == "root" and ast.rules[0].name == "root"


# ----------------------------------------------------------- sizes, guards

def test_optional_properties_grammar_is_linear():
    def n_rules(n_properties):
        schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"}
                                                   for i in range(n_properties)}}
        return len(schema_to_ast(schema).rules)

    small, large = n_rules(20), n_rules(200)
    assert large <= 11 * small
    matcher = SchemaMatcher({"type": "object", "properties": {
        f"p{i}": {"type": "integer"} for i in range(60)}, "additionalProperties": False})
    present = {f"p{i}": i for i in range(0, 60, 7)}
    assert matcher.accepts(json.dumps(present))


REQUIRED_RUN = [f"r{i}" for i in range(40)]


@pytest.mark.parametrize("extra", [{}, {"additionalProperties": False},
                                   {"additionalProperties": {"type": "integer"}},
                                   {"minProperties": 42}, {"maxProperties": 41}])
def test_required_run_is_one_production(extra):
    """Consecutive required members (extras allowed in each gap) are one
    production, not a rule per member; the language is unchanged."""
    schema = {"type": "object", "properties": {"o": {"type": "integer"},
                                               **{n: {"type": "integer"} for n in REQUIRED_RUN},
                                               "z": {"type": "integer"}},
              "required": REQUIRED_RUN, **extra}
    if "minProperties" not in extra and "maxProperties" not in extra:
        assert len(schema_to_ast(schema).rules) < 20
    matcher = SchemaMatcher(schema)
    rng = random.Random(7)
    for _ in range(30):
        extra_rate, miss_rate, bad_rate = (rng.choice(rates) for rates in (
            (0, 0.05, 0.2), (0, 0, 0.02), (0, 0, 0.02)))
        instance = {}
        for name in ["o"] + REQUIRED_RUN + ["z"]:
            if rng.random() < extra_rate:
                instance[f"x{len(instance)}"] = rng.choice([1, 1, "s"])
            if name in REQUIRED_RUN and rng.random() < miss_rate:
                continue
            if name not in REQUIRED_RUN and rng.random() < 0.5:
                continue
            instance[name] = "s" if rng.random() < bad_rate else 1
        expected = oracle_valid(schema, instance)
        for text in dumps_variants(instance):
            assert matcher.accepts(text) == expected, (extra, text, expected)
    swapped = {name: 1 for name in REQUIRED_RUN}
    swapped = dict([("r1", 1), ("r0", 1)] + list(swapped.items())[2:])
    assert not matcher.accepts(json.dumps(swapped))


def test_pathological_schemas_raise_limit_exceeded():
    deep: dict = {"type": "integer"}
    for _ in range(400):
        deep = {"type": "array", "items": deep}
    with pytest.raises(LimitExceeded) as error:
        schema_to_ast(deep)
    assert error.value.limit == "max_schema_depth"
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(50)}}
    with pytest.raises(LimitExceeded) as error:
        schema_to_ast(wide, max_grammar_nodes=100)
    assert "max_grammar_nodes" in str(error.value)


def test_bad_inputs_raise_typed_errors():
    with pytest.raises(GrammarSyntaxError) as error:
        schema_to_ast('{"type": "object",\n "properties": {]}')
    assert error.value.line == 2
    with pytest.raises(GrammarError):
        schema_to_ast({"type": "strng"})
    with pytest.raises(GrammarError):
        schema_to_ast({"type": "string", "minLength": -1})
    with pytest.raises(GrammarError):
        schema_to_ast(False)
    with pytest.raises(GrammarError):
        schema_to_ast({"allOf": [{"type": "string"}, {"type": "integer"}]})


def test_json_text_input():
    matcher = SchemaMatcher('{"type": "array", "items": {"enum": [1, 2]}}')
    assert matcher.accepts("[1, 2, 1]") and not matcher.accepts("[3]")


# -------------------------------------------------------- warnings, strict

def test_unsupported_keywords_warn_with_keyword_and_pointer():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": True}}}
    with pytest.warns(GrammarWarning) as record:
        translation = translate_schema(schema)
    warning = translation.warnings[0]
    assert warning.keyword == "uniqueItems" and warning.pointer == "/properties/tags"
    assert "uniqueItems" in str(record[0].message) and "#/properties/tags" in str(record[0].message)
    with pytest.raises(SchemaUnsupported) as error:
        schema_to_ast(schema, strict=True)
    assert isinstance(error.value, GrammarError) and error.value.pointer == "/properties/tags"


def test_one_of_overlap_warns_and_is_anyof():
    schema = {"oneOf": [{"type": "integer"}, {"multipleOf": 3}]}
    with pytest.warns(GrammarWarning, match="oneOf"):
        translate_schema(schema)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        translate_schema({"oneOf": [{"type": "integer"}, {"type": "string"}]})


def test_unresolvable_ref_warns_and_never_silently_drops():
    with pytest.warns(GrammarWarning, match=r"\$ref"):
        translate_schema({"$ref": "https://example.com/other.json"})
    with pytest.raises(SchemaUnsupported):
        schema_to_ast({"$ref": "https://example.com/other.json"}, strict=True)


# ---------------------------------------------------------------- pydantic

class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str
    zip_code: Annotated[str, Field(pattern=r"^[0-9]{5}$")]


class Person(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=20)]
    age: Annotated[int, Field(ge=0, lt=150)]
    email: Optional[str] = None
    kind: Literal["admin", "user"] = "user"
    color: Color = Color.RED
    address: Address
    tags: list[str] = []
    scores: dict[str, float] = {}
    friends: list["Person"] = []


PEOPLE = [
    Person(name="Ann", age=30, address=Address(street="Main 1", zip_code="12345")),
    Person(name="Bob é", age=0, email="b@x.org", kind="admin", color=Color.GREEN,
           address=Address(street="", zip_code="00000"), tags=["a", "b\n"],
           scores={"x": 1.5, "y": -2}, friends=[
               Person(name="Cy", age=149, address=Address(street="s", zip_code="99999"))]),
]


def test_pydantic_models_accept_their_own_dumps():
    from grammask.grammar import Grammar

    grammar = Grammar.from_pydantic(Person)
    assert grammar.lnf is not None
    matcher = SchemaMatcher(Person.model_json_schema())
    for person in PEOPLE:
        assert matcher.accepts(person.model_dump_json())
        assert matcher.accepts(person.model_dump_json(indent=2))
    bad = PEOPLE[0].model_dump(mode="json")
    for field, value in (("age", 150), ("name", ""), ("kind", "root"), ("color", "blue")):
        instance = dict(bad, **{field: value})
        with pytest.raises(ValidationError):
            Person.model_validate(instance)
        assert not matcher.accepts(json.dumps(instance)), field
    missing = {k: v for k, v in bad.items() if k != "address"}
    assert not matcher.accepts(json.dumps(missing))


def test_pydantic_random_walks_validate():
    # close_objects: a walk that must still write a required member would
    # otherwise keep choosing short extra members.
    matcher = SchemaMatcher(Person.model_json_schema(), max_whitespace=1, close_objects=True)
    rng = random.Random(11)
    n_complete = 0
    for _ in range(60):
        output = matcher.random_walk(rng, max_bytes=1500)
        if output is None:
            continue
        n_complete += 1
        Person.model_validate_json(output)
    assert n_complete >= 10


def test_pydantic_types_and_unions():
    adapter = TypeAdapter(list[Union[int, Address]])
    from grammask.json_schema import pydantic_to_schema

    matcher = SchemaMatcher(pydantic_to_schema(list[Union[int, Address]]))
    good = [1, {"street": "a", "zip_code": "12345"}]
    assert adapter.validate_python(good) and matcher.accepts(json.dumps(good))
    assert not matcher.accepts(json.dumps([1, {"street": "a", "zip_code": "1234"}]))


# -------------------------------------------------------------- multipleOf

@pytest.mark.parametrize("step", [7, 1.5, 0.01, 0.125, 4, 12])
def test_multiple_of_exact_against_fractions(step):
    from decimal import Decimal
    from fractions import Fraction

    matcher = SchemaMatcher({"type": "number", "multipleOf": step})
    exact_step = Fraction(str(step))
    for eighths in range(-400, 401):
        value = Fraction(eighths, 8)
        text = format(Decimal(eighths) / Decimal(8), "f")
        assert matcher.accepts(text) == ((value / exact_step).denominator == 1), text
    assert matcher.accepts("0") and matcher.accepts("-0")


def test_integer_zero_fraction_depends_on_draft():
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}
    assert not SchemaMatcher(draft4).accepts("7.0") and SchemaMatcher(draft4).accepts("7")
    assert SchemaMatcher({"type": "integer"}).accepts("7.0")
    draft4_multiple = dict(draft4, multipleOf=3)
    assert not SchemaMatcher(draft4_multiple).accepts("9.0")
    assert SchemaMatcher(draft4_multiple).accepts("9")


def test_draft_spellings():
    anchored = SchemaMatcher({"definitions": {"x": {"$id": "#pos", "type": "integer",
                                                    "minimum": 1}}, "$ref": "#pos"})
    assert anchored.accepts("3") and not anchored.accepts("0")
    with pytest.warns(GrammarWarning, match="draft-3"):
        translate_schema({"type": "object", "properties": {"a": {"required": True}}})
    exclusive = SchemaMatcher({"type": "number", "minimum": 2, "exclusiveMinimum": True})
    assert exclusive.accepts("2.5") and not exclusive.accepts("2")


def test_large_item_counts_stay_small_and_exact():
    matcher = SchemaMatcher({"type": "array", "items": {"const": 1}, "minItems": 3000,
                             "maxItems": 3002})
    assert len(matcher.grammar.ast.rules) < 200
    for count, expected in ((2999, False), (3000, True), (3002, True), (3003, False)):
        assert matcher.accepts(json.dumps([1] * count)) == expected, count
    huge = schema_to_ast({"type": "array", "maxItems": 10**9, "minItems": 10**6})
    assert len(huge.rules) < 400


def test_one_of_tagged_union_is_exact_and_silent():
    schema = {"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
         "required": ["kind", "r"]},
        {"type": "object", "properties": {"kind": {"enum": ["square", "rect"]},
                                          "side": {"type": "number"}},
         "required": ["kind", "side"]}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", GrammarWarning)
        matcher = SchemaMatcher(schema)
    for instance in ({"kind": "circle", "r": 1}, {"kind": "rect", "side": 2},
                     {"kind": "circle", "side": 2}, {"kind": "oval", "r": 1}):
        assert matcher.accepts(json.dumps(instance)) == oracle_valid(schema, instance)


def test_min_contains():
    schema = {"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 10},
              "minContains": 2}
    matcher = SchemaMatcher(schema)
    for instance in ([], [10], [10, 11], [1, 10, 2, 30, 3], [1, 2, 3], [10, 1, 1, 1]):
        assert matcher.accepts(json.dumps(instance)) == oracle_valid(schema, instance), instance


@pytest.mark.parametrize("order", [["a", "b", "c"], ["c", "b", "a"], ["b", "a", "c"]])
def test_dependent_required_in_schema_order(order):
    schema = {"type": "object", "properties": {name: {"type": "integer"} for name in order},
              "dependentRequired": {"b": ["a", "c"]}, "additionalProperties": False}
    matcher = SchemaMatcher(schema)
    import itertools

    for size in range(4):
        for names in itertools.combinations(order, size):
            instance = {name: 1 for name in names}
            assert matcher.accepts(json.dumps(instance)) == oracle_valid(schema, instance), names


def test_finite_pattern_properties_are_exact():
    schema = {"type": "object", "patternProperties": {"^(red|gr[a-b]y)$": {"type": "integer"}},
              "additionalProperties": {"type": "string"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", GrammarWarning)
        matcher = SchemaMatcher(schema)
    for instance in ({"red": 1}, {"red": "x"}, {"gray": 2}, {"grey": 2}, {"grby": "s"},
                     {"other": "s"}, {"other": 3}, {}):
        text = json.dumps(instance)
        assert matcher.accepts(text) == oracle_valid(schema, instance), text


@pytest.mark.parametrize("seed", range(6))
def test_required_runs_between_optional_members(seed):
    """Runs of required members among optional ones (each run one member of
    the state graph, objects._required_runs), with extras in any gap: the
    verdict is jsonschema's on instances written in schema order."""
    rng = random.Random(seed)
    names = [f"m{i}" for i in range(rng.randint(3, 9))]
    required = [name for name in names if rng.random() < 0.6]
    extra = rng.choice([{}, {"additionalProperties": False},
                        {"additionalProperties": {"type": "string"}}, {"minProperties": 1},
                        {"minProperties": 1, "additionalProperties": False}])
    schema = {"type": "object", "properties": {name: {"type": "integer"} for name in names},
              "required": required, **extra}
    matcher = SchemaMatcher(schema)
    for _ in range(40):
        instance = {}
        for name in names + [None]:
            if rng.random() < 0.2:
                instance[f"x{len(instance)}"] = rng.choice([1, "s"])
            if name is not None and rng.random() < (0.95 if name in required else 0.5):
                instance[name] = rng.choice([1, 1, 1, "s"])
        expected = oracle_valid(schema, instance)
        for text in dumps_variants(instance):
            assert matcher.accepts(text) == expected, (schema, text, expected)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {}, "b": {}}},
    {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]},
    {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["b", "c"],
     "additionalProperties": False},
    {"type": "object", "properties": {"a": {}, "b": {}}, "minProperties": 2},
])
def test_object_rules_are_all_used(schema):
    """The translator defines no rule the start cannot reach (the shared gap
    rule only when some production uses it)."""
    from grammask.grammar import Grammar

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Grammar.from_ast(schema_to_ast(schema))
