"""The minimal remainder automaton (``json_schema.remainder_classes``, issue
17): past ``MAX_REMAINDER_STATES`` remainder states, ``number_nodes`` builds
the plain automaton as arrays and keeps its classes of equivalent states.
MaskBench's Handwritten---allany8 (a oneOf over numbers decided by the
steps 33, 12, 77, 6, 7, 44, 11, 13 and 8: 24,024 remainders, 3,076
classes) becomes exact and silent.

Checked against independent oracles: every short literal over a few
digits, ``-`` and ``.`` against its value (``Fraction``) for several
moduli, decimal places, accepted sets, excluded steps and ``finer``, and
allany8 against ``jsonschema`` on every integer of a range, multiples of
its steps, fractions, long literals and Hypothesis integers; random walks
of the grammar are valid.  (Still warned past the limits:
``tests/test_json_schema_multiple_formulas.py``.)
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.json_schema.number_nodes import (MAX_REMAINDER_STATES, NUMBER_BYTES,
                                               _Remainders)
from grammask.json_schema.remainder_classes import minimal_remainders
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

ALLANY8 = {"type": "number", "comment": "result must be mof 429", "allOf": [
    {"$ref": "#/definitions/any1"}, {"$ref": "#/definitions/any2"},
    {"$ref": "#/definitions/any3"}, {"not": {"multipleOf": 8}}],
    "definitions": {
        "any1": {"oneOf": [{"multipleOf": 33}, {"multipleOf": 12}, {"multipleOf": 77}]},
        "any2": {"oneOf": [{"allOf": [{"not": {"multipleOf": 6}}, {"not": {"multipleOf": 7}}]},
                           {"multipleOf": 44}]},
        "any3": {"oneOf": [{"not": {"multipleOf": 11}}, {"multipleOf": 13}]}}}
"""MaskBench's allany8 (Handwritten)."""

_LITERAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")


def _oracle(text: str, automaton: _Remainders) -> bool:
    """Whether the plain-decimal literal ``text`` is one ``automaton`` should
    accept, from its value (its magnitude: divisibility ignores the sign)."""
    match = _LITERAL.fullmatch(text)
    if match is None or (match.group(2) and not automaton.fraction_allowed):
        return False
    scaled = Fraction(text) * 10 ** automaton.n_places
    if scaled.denominator != 1:
        return automaton.finer
    remainder = abs(scaled.numerator) % automaton.modulus
    if automaton.residues is not None:
        return remainder in automaton.residues
    return (automaton.required is None or remainder % automaton.required == 0) and all(
        remainder % other for other in automaton.excluded)


def _run(automaton, text: str) -> bool:
    state = automaton.START
    for byte in text.encode("ascii"):
        state = automaton.step(state, byte)
        if state is None:
            return False
    return automaton.accepts(state)


@pytest.mark.parametrize("plain", [
    _Remainders(56, 0, True, None, residues=frozenset({4, 9, 15, 20, 28, 41})),
    _Remainders(45, 1, True, None, finer=True, residues=frozenset({0, 5, 13, 18, 27})),
    _Remainders(36, 2, True, 4, excluded=(9,)),
    _Remainders(40, 0, False, None, excluded=(8, 5)),
    _Remainders(60, 1, True, None, excluded=(4, 3), finer=True),
], ids=["residues", "places_finer", "required_excluded", "integers", "excluded_finer"])
def test_minimal_automaton_accepts_the_values_it_should(plain):
    minimal = minimal_remainders(plain, NUMBER_BYTES)
    assert minimal.n_states < plain.modulus * (plain.n_places + 3) + 5
    for n in range(1, 7):
        for letters in itertools.product("-.0158", repeat=n):
            text = "".join(letters)
            expected = _oracle(text, plain)
            assert _run(minimal, text) == expected, text
            assert _run(plain, text) == expected, text


def test_allany8_has_few_classes():
    from grammask.json_schema.remainder_classes import plain_size

    residues = frozenset(value for value in range(24024) if declared_oracle(ALLANY8).is_valid(value))
    minimal = minimal_remainders(_Remainders(24024, 0, True, None, residues=residues), NUMBER_BYTES)
    assert 3000 < minimal.n_states <= MAX_REMAINDER_STATES < 24024 < plain_size(24024, 0)


VALUES = list(range(-60, 60)) + [429, 1287, 4004, 4719, 8008, 858, 3003, 6006, 12012, 24024 + 429,
                                 -429, -4004, 429 * 7, 429 * 8, 429 * 9, 0.5, 429.5, 4004.25,
                                 429 * 10 ** 12 + 24024, 429 * (2 * 10 ** 20 + 1),
                                 4004 * (10 ** 15 + 3)]


def test_allany8_is_exact_and_silent():
    _, _, n_valid = assert_exact_and_silent(ALLANY8, VALUES, indented=False)
    assert n_valid >= 8
    matcher, validator = _allany8()
    for value in range(0, 30030, 13):
        assert matcher.accepts(str(value)) == validator.is_valid(value), value
    for text, valid in (("429.0", True), ("429.000", True), ("-0", False), ("4004.00", True),
                        ("858.0", False), ("429.01", False), ("0429", False), ("1e3", False)):
        assert matcher.accepts(text) == valid, text


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10 ** 30), max_value=10 ** 30), st.sampled_from([1, 429, 4004, 3003]))
def test_allany8_on_generated_integers(value, factor):
    number = value * factor
    matcher, validator = _allany8()
    assert matcher.accepts(json.dumps(number)) == validator.is_valid(number), number


@functools.cache
def _allany8():
    return SchemaMatcher(ALLANY8), declared_oracle(ALLANY8)
