"""A ``oneOf`` over numbers that only ``multipleOf`` decides is one set of
remainders (``multiple_formulas.multiples_one_of``, built by
``number_nodes.remainder_set_node``): exact and silent where the oneOf
exclusions' chains passed ``MAX_ONE_OF_COMPLEMENT_PARTS`` (MaskBench's
allone1), with bounds, ``type: integer``, decimal steps, nested
``anyOf`` / ``oneOf`` / ``not`` / ``$ref`` and draft 4; any other keyword
leaves the schema to the exclusions.  Steps past ``MAX_REMAINDER_STATES``
remainders are minimized (allany8's 24,024 remainders have 3,076 classes:
``tests/test_json_schema_remainder_classes.py``); past
``MAX_REMAINDER_BUILD`` they stay warned.

Checked against ``jsonschema`` (the declared draft's validator) on every
integer in a range, dyadic fractions (whose float quotients by the steps
used are exact), hand-written literals and Hypothesis values (derandomized
by the conftest profile); random walks through the grammars must be
valid."""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st

from grammask.json_schema import GrammarWarning, translate_schema
from grammask.json_schema.number_nodes import MAX_REMAINDER_BUILD
from support.schema_matcher import (SchemaMatcher, assert_agrees_on_generated,
                                    assert_exact_and_silent, declared_oracle)

ALL_ONE = {"type": "number", "comment": "if mof 5 then mof 7 if mof 7 then mof 11",
           "allOf": [{"minimum": 1}, {"$ref": "#/definitions/any1"},
                     {"$ref": "#/definitions/any2"}, {"$ref": "#/definitions/any3"}],
           "definitions": {
               "any1": {"oneOf": [{"multipleOf": 5}, {"multipleOf": 10}]},
               "any2": {"oneOf": [{"not": {"multipleOf": 5}}, {"multipleOf": 7}]},
               "any3": {"oneOf": [{"not": {"multipleOf": 7}}, {"multipleOf": 11}]}}}
"""MaskBench's allone1 (Handwritten): valid iff a multiple of 5 but not of
10, and then of 7, and then of 11, at least 1 (385, 1155, ...), or a number
that is none of these (1, 2.5, ...)."""

PAST_THE_BUILD = {"type": "number", "oneOf": [{"multipleOf": 7919}, {"multipleOf": 7907}]}
"""Two primes near 8,000: 62.6 million remainders, past ``MAX_REMAINDER_BUILD``."""

VALUES = (list(range(-60, 400)) + [385, 1155, 1925, -385, 770, 2310, 4235, 5005, 10395]
          + [k / 4 for k in range(-40, 41) if k % 4] + [0.0, -0.0, 5.0, 385.0, 1e3, 0.125])

EXACT = {
    "allone1": ALL_ONE,
    "integer": {"type": "integer", "oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]},
    "bounded": {"type": "number", "minimum": -30, "exclusiveMaximum": 200,
                "oneOf": [{"multipleOf": 4}, {"not": {"multipleOf": 6}}, {"multipleOf": 9}]},
    "decimal_steps": {"type": "number", "oneOf": [{"multipleOf": 0.5}, {"multipleOf": 0.75}]},
    "nested": {"type": "number", "multipleOf": 3, "not": {"multipleOf": 5},
               "oneOf": [{"anyOf": [{"multipleOf": 2}, {"$ref": "#/$defs/seven"}]},
                         {"oneOf": [{"multipleOf": 4}, {"not": {"multipleOf": 7}}]}],
               "$defs": {"seven": {"multipleOf": 7, "title": "seven"}}},
    "booleans": {"type": "number", "oneOf": [True, {"not": {"multipleOf": 2}}, False]},
    "draft4": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer",
               "minimum": 0, "exclusiveMinimum": True,
               "oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]},
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_multiples_one_of_is_exact_and_silent(name):
    pool = VALUES + ["x", None, [5]]
    _, _, n_valid = assert_exact_and_silent(EXACT[name], pool, indented=False)
    assert 0 < n_valid < len(pool)


_numbers = st.one_of(st.integers(-2000, 5000), st.integers(-400, 400).map(lambda k: k / 4),
                     st.sampled_from([385, 1155, 1925.0, 2695]))


@pytest.mark.parametrize("name", sorted(EXACT))
def test_multiples_one_of_on_generated_instances(name):
    assert_agrees_on_generated(EXACT[name], _numbers)


def test_allone1_accepts_its_sparse_multiples_only():
    matcher = SchemaMatcher(ALL_ONE)
    oracle = declared_oracle(ALL_ONE)
    for value in range(0, 12000, 5):
        assert matcher.accepts(json.dumps(value)) == oracle.is_valid(value), value
    assert [v for v in range(0, 2000, 5) if oracle.is_valid(v)] == [385, 1155, 1925]


@pytest.mark.parametrize("schema", [
    {"type": "number", "oneOf": [{"multipleOf": 2, "maximum": 10}, {"multipleOf": 3}]},
    {"oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]},
], ids=["bound_in_a_branch", "no_type"])
def test_other_schemas_are_left_to_the_exclusions(schema):
    """Outside the form the exclusions translate them as before: exact here."""
    pool = VALUES + ["x", None, [5]]
    assert_exact_and_silent(schema, pool, indented=False)


def test_a_reference_out_of_the_resource_is_not_read():
    """The exclusions cannot negate it either: warned, as before."""
    schema = {"type": "number", "oneOf": [{"multipleOf": 2}, {"$ref": "#/$defs/away"}],
              "$defs": {"away": {"$id": "https://example.com/away", "multipleOf": 3}}}
    with pytest.warns(GrammarWarning, match="oneOf"):
        translate_schema(schema)


def test_steps_past_the_minimized_build_are_warned():
    """(allany8's 24,024 remainders, past MAX_REMAINDER_STATES, are minimized
    and exact: tests/test_json_schema_remainder_classes.py.)"""
    assert 7919 * 7907 > MAX_REMAINDER_BUILD
    with pytest.warns(GrammarWarning, match="oneOf"):
        translate_schema(PAST_THE_BUILD)
