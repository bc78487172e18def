"""The instances valid against no member of an ``anyOf`` / ``oneOf`` whose
members a discriminator tells apart (``applicators._none_discriminated``):
member i holds only objects whose member ``name`` is one of values V_i,
the V_i disjoint, so an instance fails them all iff it has ``name`` in V_i
and fails member i, or is no object with ``name`` in any V_i; a sum of complements where the
chain of complements is a product (``_chain_parts``), with the members
the discriminator does not tell apart chained as before.  Under draft 4
``const`` is no keyword and tells nothing apart, nor asserts anything in a
negated schema (``negated_conjuncts`` reads the draft's own keywords: it
read ``const`` there, and ``draft_4_const`` accepted ``{"k": 3}``).

Checked against ``jsonschema`` (the declared draft's validator) on
hand-written values and on values Hypothesis draws (derandomized by the
conftest profile); random walks through the grammars must be valid."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from grammask.json_schema.applicators import _discriminator
from grammask.json_schema.options import Options
from grammask.json_schema.translator import Translator
from support.schema_matcher import assert_agrees_on_generated, assert_exact_and_silent

DRAFT_4 = "http://json-schema.org/draft-04/schema#"
A = {"type": "object", "required": ["k", "x"],
     "properties": {"k": {"const": "a"}, "x": {"type": "integer"}}}
B = {"type": "object", "required": ["k"],
     "properties": {"k": {"type": "string", "enum": ["b", "c"]}, "y": {"type": "string"}}}
OPEN = {"type": "object", "required": ["k", "y"], "properties": {"y": {"minLength": 2}}}
ORDER = {name: {} for name in ("k", "x", "y", "z")}
"""Declares the members' order (the default grammar writes members in the
order their schemas merge; ``schema_ordered`` reads no ``not``)."""
SCHEMAS = {
    "not_any_of": {"properties": ORDER, "not": {"anyOf": [A, B, {"type": "null"}]}},
    "not_one_of": {"type": "object", "properties": ORDER, "not": {"oneOf": [A, B]}},
    "with_open_member": {"properties": ORDER, "not": {"anyOf": [A, B, OPEN]}},
    "one_of_exclusions": {"type": "object", "properties": {"g": {"oneOf": [
        {"type": "null"}, A, B, {"type": "object", "required": ["k", "z"]}]}}},
    "beside_own_not": {"properties": ORDER, "not": {"anyOf": [A, B]},
                       "allOf": [{"not": {"required": ["y"]}}]},
    "draft_4_const": {"$schema": DRAFT_4, "properties": ORDER, "not": {"anyOf": [
        {"type": "object", "required": ["k"], "properties": {"k": {"const": 1}}},
        {"type": "object", "required": ["k"], "properties": {"k": {"enum": [2]}}}]}},
}

POOL = [None, 1, "a", [], {}, {"k": "a"}, {"k": "a", "x": 1}, {"k": "a", "x": "1"},
        {"k": "b"}, {"k": "c", "y": "s"}, {"k": "c", "y": 1}, {"k": "d"}, {"k": "d", "y": "yy"},
        {"k": "a", "y": "yy"}, {"k": "b", "y": "y"}, {"k": 1}, {"k": 2}, {"k": 3}, {"x": 1},
        {"g": None}, {"g": {"k": "a", "x": 2}}, {"g": {"k": "b", "z": 0}},
        {"g": {"k": "e", "z": 0}}, {"g": {"k": "a", "x": 2, "z": 1}}, {"g": {"k": "e"}}, {"g": 1},
        {"k": "a", "x": 1, "y": "s"}]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_discriminated_negations_are_exact(name):
    _, _, n_valid = assert_exact_and_silent(SCHEMAS[name], POOL)
    assert 0 < n_valid < len(POOL)


_leaves = st.sampled_from([None, 1, 2, 1.5, "a", "b", "c", "d", "yy"])
_objects = st.dictionaries(st.sampled_from(["k", "x", "y", "z"]), _leaves, max_size=3)
_values = st.one_of(_leaves, _objects, st.dictionaries(st.just("g"), st.one_of(_leaves, _objects),
                                                       max_size=1))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_discriminated_negations_on_generated_values(name):
    assert_agrees_on_generated(SCHEMAS[name], _values)


def test_what_tells_members_apart():
    translator = Translator({}, Options())
    assert _discriminator(translator, [A, B, {"type": "null"}]) == ("k", {0: ["a"], 1: ["b", "c"]})
    assert _discriminator(translator, [A, dict(B, type=["object", "null"])]) is None
    assert _discriminator(translator, [A, A]) is None
    draft_4 = Translator({"$schema": DRAFT_4}, Options())
    assert _discriminator(draft_4, SCHEMAS["draft_4_const"]["not"]["anyOf"]) is None
