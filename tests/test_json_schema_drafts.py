"""The declared draft decides the rules (issue 17, item 1), against
``jsonschema.validators.validator_for(schema)``, which picks the validator
class from ``$schema`` exactly as the specification says.

Each case is a schema and a pool of instances: every pool instance is
accepted by grammask iff the oracle calls it valid, and random walks through
the grammar (generated instances) are all valid for the oracle.  The same
schema body is run under each ``$schema`` spelling, so a case checks that
draft 4/6/7 (``$ref`` hides its siblings; ``items: [..]`` is a tuple and
``prefixItems`` unknown) and 2019-09/2020-12/none (siblings apply) differ
where the drafts do.  2019-09 sits between: siblings of ``$ref`` apply, but
arrays have the tuple form and no ``prefixItems``.  Keywords newer than a
declared draft 4/6/7 (``NEWER``) are ignored there, silently.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

LEGACY = ["http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
          "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"]
MODERN = ["https://json-schema.org/draft/2020-12/schema",
          "https://json-schema.org/draft/2019-09/schema", None,
          "https://json-schema.org/draft-07/schema#"]
"""An ``https`` draft-07 spelling is not the meta-schema's id: validator_for
does not recognize it and 2020-12 rules apply (the oracle's default here)."""

REF_WITH_SIBLINGS = {
    "definitions": {"name": {"type": "string"}, "count": {"type": "integer", "minimum": 0}},
    "type": "object",
    "properties": {
        "a": {"$ref": "#/definitions/name", "enum": ["x", "y"]},
        "b": {"$ref": "#/definitions/count", "maximum": 3},
        "c": {"$ref": "#/definitions/name", "maxLength": 2, "type": "integer"},
    },
}
REF_POOL = [{"a": "x"}, {"a": "z"}, {"a": 1}, {"b": 2}, {"b": 7}, {"b": -1}, {"c": "ab"},
            {"c": "abc"}, {"c": 5}, {"a": "y", "b": 3, "c": "q"}, {}]

ROOT_REF = {"definitions": {"s": {"type": "string", "minLength": 2}},
            "$ref": "#/definitions/s", "enum": ["ab", "c", 1]}
ROOT_REF_POOL = ["ab", "c", 1, "abc", "", None]

TUPLE = {"type": "array", "items": [{"type": "string"}, {"type": "integer"}],
         "additionalItems": {"type": "boolean"}}
TUPLE_POOL = [[], ["a"], ["a", 1], ["a", 1, True], ["a", 1, 2], [1], ["a", "b"],
              ["a", 1, False, True]]

PREFIX = {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}
PREFIX_POOL = [[], ["a"], [1], ["a", 1], ["a", "b"], [1, 2], ["a", 1, 2]]

ALL_OF_TUPLES = {"allOf": [{"items": [{"type": "integer"}, {"type": "string"}]},
                           {"items": [{"minimum": 2}], "additionalItems": {"type": "string"}}],
                 "type": "array"}
ALL_OF_POOL = [[2, "a"], [1, "a"], [2, 3], [2, "a", "b"], [2, "a", 3], [5], []]

ALL_OF_REF = {"definitions": {"n": {"type": "integer"}},
              "allOf": [{"$ref": "#/definitions/n", "maximum": 5}, {"minimum": 0}]}
ALL_OF_REF_POOL = [0, 5, 6, 100, -1, "x", 2.5]

CASES = {"ref_siblings": (REF_WITH_SIBLINGS, REF_POOL), "root_ref": (ROOT_REF, ROOT_REF_POOL),
         "tuple_items": (TUPLE, TUPLE_POOL), "prefix_items": (PREFIX, PREFIX_POOL),
         "all_of_tuples": (ALL_OF_TUPLES, ALL_OF_POOL),
         "all_of_ref": (ALL_OF_REF, ALL_OF_REF_POOL)}


def with_draft(schema: dict, declared) -> dict:
    return schema if declared is None else {"$schema": declared, **schema}


TUPLE_CASES = ("tuple_items", "all_of_tuples")
"""Cases whose tuple form 2020-12 does not define (its validator fails on
an array-valued ``items``): run only under the drafts that define it."""


@pytest.mark.parametrize("case,declared", [
    (case, declared) for case in sorted(CASES) for declared in LEGACY + MODERN
    if case not in TUPLE_CASES
    or declared_oracle(with_draft({}, declared)).__class__ is not jsonschema.Draft202012Validator])
def test_declared_draft_decides(case, declared):
    schema, pool = CASES[case]
    assert_exact_and_silent(with_draft(schema, declared), pool)


def test_the_drafts_really_differ_on_these_cases():
    """The cases are not vacuous: each pool has an instance on which draft 7
    and 2020-12 disagree (except the tuple form, which both read as a tuple
    in grammask and which 2020-12 validators do not define)."""
    for case in ("ref_siblings", "root_ref", "prefix_items", "all_of_ref"):
        schema, pool = CASES[case]
        old, new = declared_oracle(with_draft(schema, LEGACY[2])), declared_oracle(with_draft(schema, MODERN[0]))
        assert any(old.is_valid(x) != new.is_valid(x) for x in pool), case


def test_legacy_ref_siblings_give_no_warning():
    matcher = SchemaMatcher(with_draft(REF_WITH_SIBLINGS, LEGACY[2]))
    assert matcher.warnings == []


NEWER = {
    "if_then_else": ({"if": {"type": "integer"}, "then": {"minimum": 0},
                      "else": {"type": "string"}}, [1, -1, "a", None], ("draft-04", "draft-06")),
    "const": ({"const": 1}, [1, 2, "x"], ("draft-04",)),
    "contains": ({"type": "array", "contains": {"type": "integer"}, "minContains": 2},
                 [[], ["a"], [1], [1, 2], ["a", 1, 2]], ("draft-04", "draft-06", "draft-07")),
    "property_names": ({"type": "object", "propertyNames": {"maxLength": 1}},
                       [{}, {"a": 1}, {"ab": 1}], ("draft-04",)),
    "dependent": ({"type": "object", "dependentRequired": {"a": ["b"]},
                   "dependentSchemas": {"b": {"required": ["c"]}}},
                  [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}],
                  ("draft-04", "draft-06", "draft-07")),
    "unevaluated": ({"type": "object", "allOf": [{"properties": {"a": {"type": "integer"}}}],
                     "unevaluatedProperties": False},
                    [{}, {"a": 1}, {"b": 1}, {"a": "x"}], ("draft-04", "draft-06", "draft-07")),
}
"""Keywords newer than the drafts named (``keywords.NEWER_KEYWORDS``): the
schema, a pool on which they matter, and the drafts that do not know them."""


@pytest.mark.parametrize("case,declared", [
    (case, declared) for case in sorted(NEWER) for declared in LEGACY
    if any(draft in declared for draft in NEWER[case][2])])
def test_keywords_newer_than_the_draft_are_ignored(case, declared):
    schema, pool, _drafts = NEWER[case]
    schema = with_draft(schema, declared)
    assert_exact_and_silent(schema, pool)
    assert SchemaMatcher(schema).warnings == []
    modern = declared_oracle(schema | {"$schema": MODERN[0]})
    assert any(modern.is_valid(x) != declared_oracle(schema).is_valid(x) for x in pool), case


DRAFT_4 = "http://json-schema.org/draft-04/schema#"
ITEMS_ONE_OF = {
    "$schema": DRAFT_4, "type": "object",
    "properties": {"coordinates": {"oneOf": [
        {"type": "array", "items": {"type": "number"}},
        {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        {"type": "array", "items": {"type": "integer", "maximum": 3}, "maxItems": 2}]}}}
ITEMS_POOL = [{"coordinates": value} for value in (
    [], [1], [1.5], [5], [1, 2], [1, 2, 3], [[1]], [[1], 2], [["a"]], [[]], [[], []], ["a"],
    [1, [2]], [2.5, 1], [3, 3], [4, 1], [1, 2.0], [[1, 2], [3.5]], "x", 1, None)] + [{}, []]


def test_draft_4_items_negated_without_contains():
    """Draft 4 has no ``contains``; the complement of ``items`` ("some item
    fails") is still built when the document does not spell ``contains``,
    so oneOf branches over arrays are subtracted exactly, silently."""
    _, _, n_valid = assert_exact_and_silent(ITEMS_ONE_OF, ITEMS_POOL)
    assert 0 < n_valid < len(ITEMS_POOL)


def test_draft_4_document_spelling_contains_still_warns():
    """A draft-4 document that spells ``contains`` (ignored there) keeps the
    key ignored everywhere, and the oneOf that needs the complement warns."""
    schema = dict(ITEMS_ONE_OF, properties=dict(ITEMS_ONE_OF["properties"],
                                                other={"contains": {"type": "string"}}))
    matcher = SchemaMatcher(schema)
    assert any("'oneOf'" in str(warning) for warning in matcher.warnings)
    assert matcher.accepts('{"other": [1]}') and declared_oracle(schema).is_valid({"other": [1]})


@pytest.mark.parametrize("declared", [DRAFT_4, "http://json-schema.org/draft-03/schema#"])
def test_draft_4_integer_enum_members_are_integer_spellings(declared):
    """Drafts 3 and 4: ``type: integer`` beside an enum rejects ``1.0`` (a
    number there), while the enum alone accepts it (1.0 equals 1)."""
    pool_texts = ["1", "1.0", "3", "3.00", "2.5", "0", "-0", "-0.0", '"a"', "true", "7"]
    for schema in ({"type": "integer", "enum": [1, 3.0, 2.5, 0, "a", True]},
                   {"type": ["integer", "string"], "enum": [1, 3.0, 2.5, 0, "a", True]},
                   {"enum": [1, 3.0, 0]}):
        schema = dict(schema, **{"$schema": declared})
        matcher = SchemaMatcher(schema)
        assert matcher.warnings == []
        oracle = declared_oracle(schema)
        for text in pool_texts:
            assert matcher.accepts(text) == oracle.is_valid(json.loads(text)), (schema, text)
