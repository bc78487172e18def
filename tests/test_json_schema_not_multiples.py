"""``not: {multipleOf: s}`` (issue 17): the numbers that are no multiple of
``s`` (``values.NOT_MULTIPLES``, built by ``number_nodes``), against
``jsonschema``.

In a schema's own ``not`` (an ``anyOf`` of steps included) the complement is
exact: listed and filtered within narrow bounds, otherwise one remainder
automaton over the steps' least common multiple (a literal with more
decimals than the finest step is a multiple of none).  The oneOf exclusions
negate it too (``tests/test_json_schema_one_of_multiples.py``) while their
chains of complements stay within ``MAX_ONE_OF_COMPLEMENT_PARTS`` counted
as products (``applicators._exclusion_parts``), warned past it; ``if``
still leaves ``multipleOf`` un-negated, warned
(``applicators.negation_node`` says why).

Steps are dyadic (3, 0.5, 0.25, 1.5, 2.5): ``jsonschema`` divides floats,
and with such steps its quotient of a multiple is exact, so the oracle's
verdicts are the decimal ones.  Values: every integer in -40..40 and every
quarter in -10..10, and hand-written literals.
"""

from __future__ import annotations

import pytest

from grammask.json_schema import GrammarWarning, translate_schema
from support.schema_matcher import assert_exact_and_silent, disagreements

VALUES = (list(range(-40, 41)) + [k / 4 for k in range(-40, 41) if k % 4]
          + [0.0, -0.0, 1.0, 3.0, 4.5, 7.5, 1e3, 0.125, 2.75, 123456789])

EXACT = [
    {"not": {"multipleOf": 3}},
    {"type": "integer", "not": {"multipleOf": 3}},
    {"type": "number", "not": {"multipleOf": 0.5}},
    {"type": "number", "multipleOf": 0.5, "not": {"multipleOf": 1.5}, "minimum": -20},
    {"type": "integer", "not": {"anyOf": [{"multipleOf": 2}, {"multipleOf": 5}]}},
    {"type": "integer", "minimum": -30, "maximum": 30, "multipleOf": 3,
     "not": {"multipleOf": 2}},
    {"type": "number", "exclusiveMinimum": -4, "maximum": 6, "not": {"multipleOf": 0.25}},
    {"type": "number", "minimum": 1, "not": {"anyOf": [{"multipleOf": 2.5}, {"maximum": 3}]}},
    {"enum": [1, 2, 3, 4.5, 6, "x"], "not": {"multipleOf": 1.5}},
    {"type": ["number", "string"], "not": {"multipleOf": 2}},
]


@pytest.mark.parametrize("schema", EXACT, ids=[str(i) for i in range(len(EXACT))])
def test_not_multiple_of_is_exact_and_silent(schema):
    outcome, wrong = disagreements(schema, VALUES + ["x", None, [1]])
    assert outcome == "silent"
    assert wrong == [], wrong[:5]


WALKED = [EXACT[0], EXACT[1], EXACT[2], EXACT[5]]
"""Schemas whose random walks the oracle judges exactly: integer steps, or
0.5 (``x / 0.5`` is exact in floats); a step of 1.5 makes its quotient of
a long integer round to an integer."""


@pytest.mark.parametrize("schema", WALKED, ids=[str(i) for i in range(len(WALKED))])
def test_not_multiple_of_random_walks(schema):
    assert_exact_and_silent(schema, [0, 1, 1.5, 3, 4.5, 6, 0.25], indented=False)


PRIMES = {"type": "number", "oneOf": [{"multipleOf": 7919}, {"multipleOf": 7907}]}
"""The oneOf's exclusions need the multiples of 7,907 that are none of 7,919:
62.6 million remainders, past ``MAX_REMAINDER_BUILD`` (MaskBench's allany8,
24,024 remainders, was the example here; its 3,076 classes of remainders
make it exact now: ``tests/test_json_schema_remainder_classes.py``)."""


@pytest.mark.parametrize("schema,keyword", [
    (PRIMES, "oneOf"),
    ({"if": {"multipleOf": 2}, "then": {"minimum": 0}}, "if"),
], ids=["oneOf", "if"])
def test_multiple_of_outside_a_not_still_warns(schema, keyword):
    with pytest.warns(GrammarWarning):
        translate_schema(schema)
