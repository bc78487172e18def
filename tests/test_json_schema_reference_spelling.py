"""``keywords.spells_reference`` / ``index_reference_spellings``: whether a
value's JSON text holds ``"$ref"`` or ``"$dynamicRef"`` (the translator's
test for a schema that may inline a reference), answered without writing
the text.

Oracle: ``json.dumps`` of the value and a substring test, on random nested
values built from keys and strings that spell, almost spell or escape the
names (a quote before ``$ref``, a backslash, a control character, a
non-ASCII character), with and without the index of a document.
"""

from __future__ import annotations

import json
import random

from grammask.json_schema.keywords import index_reference_spellings, spells_reference

ATOMS = ["$ref", "$dynamicRef", '"$ref', 'a"$ref', '$ref"', "x$ref", '\\"$ref', "\\$ref",
         'é"$dynamicRef', "$dynamicRe", "ref", "\n$ref", "$ref\n", 'q\\\\"$ref', "type",
         1, 2.5, None, True, float("nan")]
STRINGS = [atom for atom in ATOMS if isinstance(atom, str)]


def _value(rng: random.Random, depth: int):
    draw = rng.random()
    if depth > 3 or draw < 0.3:
        return rng.choice(ATOMS)
    if draw < 0.65:
        return {rng.choice(STRINGS): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def test_spells_reference_agrees_with_json_text():
    rng = random.Random(5)
    for _ in range(5000):
        value = _value(rng, 0)
        text = json.dumps(value)
        expected = '"$ref"' in text or '"$dynamicRef"' in text
        known: dict = {}
        assert index_reference_spellings(value, known) == expected
        assert spells_reference(value, {}) == expected
        assert spells_reference(value, known) == expected
        # a new dict around indexed parts is answered from its parts
        assert spells_reference({"allOf": [value]}, known) == expected
