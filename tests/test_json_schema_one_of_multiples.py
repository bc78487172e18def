"""``oneOf`` branches that may overlap and hold ``multipleOf`` (at the top,
in item or member schemas) are subtracted exactly: the exclusions negate
``multipleOf`` (``values.NOT_MULTIPLES``) while the chains of complements
stay within ``MAX_ONE_OF_COMPLEMENT_PARTS``, counted as products
(``applicators._exclusion_parts``; past it they warn, see
``tests/test_json_schema_not_multiples.py``).  The schemas include
MaskBench's oneof1_2, oneof5_2 and oneofanyofitc4 (which also negates
``contains`` and meets several ``contains`` at once).

Checked against ``jsonschema`` (the declared draft's validator) on
hand-written instances and on instances Hypothesis draws (derandomized by
the conftest profile); random walks through the grammars must be valid.
Steps and values are integers, whose float quotients are exact."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from support.schema_matcher import assert_agrees_on_generated, assert_exact_and_silent

NUMBERS = [0, 1, 2, 3, 4, 5, 6, 7, 10, 12, 15, 20, 30, 35, 40, 45, 50, 60, 70, 80, 90, 110, 121,
           132, -10, 2.5, 7.5]
_numbers = st.one_of(st.integers(-20, 140), st.sampled_from([2.5, 10.0, 0.5, 1e2]))

SCHEMAS = {
    "steps": ({"type": "integer", "oneOf": [{"multipleOf": 2}, {"multipleOf": 3},
                                             {"maximum": 4}]},
              NUMBERS + ["6", None], _numbers),
    "step_and_bound": ({"oneOf": [{"multipleOf": 10, "maximum": 35},
                                  {"type": "number", "minimum": 30}]},
                       NUMBERS + ["x", [10]], st.one_of(_numbers, st.just("x"))),
    "oneof1_2": ({"type": "object", "oneOf": [
        {"patternProperties": {"a": {"multipleOf": 10, "maximum": 35}}},
        {"patternProperties": {"a": {"multipleOf": 10, "maximum": 40}}}]},
        [{}, {"a": 10}, {"a": 40}, {"xa": 30}, {"a": 35}, {"a": 20, "ba": 40}, {"a": 5},
         {"b": 1}, {"a": "s"}, {"a": 40, "ab": 30}, 3],
        st.dictionaries(st.sampled_from(["a", "ab", "b", "ca"]),
                        st.sampled_from([0, 5, 10, 30, 35, 40, 50, "s"]), max_size=3)),
    "oneof5_2": ({"oneOf": [{"$ref": "#/$defs/x1"}, {"$ref": "#/$defs/x2"}, {"$ref": "#/$defs/x3"}],
                  "$defs": {"x1": {"items": {"multipleOf": 10, "maximum": 20}},
                            "x2": {"items": {"multipleOf": 5, "maximum": 80}},
                            "x3": {"items": {"multipleOf": 5, "maximum": 60}}}},
                 [[], [10], [20], [30], [5, 10], [60], [80], [5, 65], [40, 70], [90], "x", {}],
                 st.one_of(st.lists(st.sampled_from([5, 10, 15, 20, 30, 60, 65, 70, 80, 85]),
                                    max_size=3), st.just("x"))),
    "oneofanyofitc4": ({"type": "array", "oneOf": [
        {"anyOf": [{"items": {"$ref": "#/$defs/inside1"}},
                   {"contains": {"$ref": "#/$defs/inside1"}}]},
        {"anyOf": [{"items": {"$ref": "#/$defs/inside2"}},
                   {"contains": {"$ref": "#/$defs/inside2"}}]}],
        "$defs": {"inside1": {"type": "array", "contains": {"type": "number", "multipleOf": 11,
                                                           "minimum": 100}},
                  "inside2": {"type": "array", "items": {"type": "number", "multipleOf": 11,
                                                         "minimum": 100}}}},
        [[], [[]], [[110]], [[121, 5]], [[5], [110]], [110], [[110], [121]], [[5]], [[5], 3],
         [[121, 5], []], "x"],
        st.lists(st.one_of(st.lists(st.sampled_from([5, 99, 110, 121, 1e2]), max_size=2),
                           st.sampled_from([110, 5])), max_size=3)),
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_overlapping_multiples_are_subtracted_exactly(name):
    schema, pool, _ = SCHEMAS[name]
    _, _, n_valid = assert_exact_and_silent(schema, pool)
    assert 0 < n_valid < len(pool)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_overlapping_multiples_on_generated_instances(name):
    schema, _, drawn = SCHEMAS[name]
    assert_agrees_on_generated(schema, drawn)
