"""Differences of several patterns within the product limits (issue 17):
MaskBench's Handwritten---string5 asks for strings matching four patterns
and, in one ``anyOf`` branch, not ``^..((c1d3g3).{4,8}){6,6}``.  That
difference has 33,937 states, past ``max_dfa_states`` (which the ``not``
translation checked it against) and its product needs 16-24 MB before
minimization, past ``max_dfa_bytes``; so the branch was warned and every
string of the four patterns accepted.  Now a difference is checked against
``Config.max_product_dfa_states`` and the new ``max_product_dfa_bytes``
(32 MB) and the schema is exact and silent.  Checked against ``jsonschema``
on hand-written and seeded random strings near the language (the blocks
moved, cut, broken, the end changed, escaped spellings), valid and invalid;
random walks of the grammar are valid.  ``max_product_dfa_bytes`` bounds
intersection and difference terminals only, and ``LimitExceeded`` names it.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from grammask import Config, Grammar, InvalidArgument, LimitExceeded
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

P0, P1, P2, P3 = ("^([a-z][0-9])+$", "((c1d3g3).{4,8}){6,6}", "(t|8){10,10}..$",
                  "^z9((.){10,10}){10,10}z9$")
PREFIXED = "^..((c1d3g3).{4,8}){6,6}"

STRING5 = {
    "allOf": [{"$ref": "#/defs/p0"}, {"$ref": "#/defs/p1"}, {"$ref": "#/defs/p2"},
              {"pattern": P3}, {"multipleOf": 7},
              {"anyOf": [{"not": {"pattern": P0}}, {"not": {"pattern": PREFIXED}},
                         {"not": {"pattern": P2}}]}],
    "defs": {"p0": {"pattern": P0}, "p1": {"pattern": P1}, "p2": {"pattern": P2}}}


def _value(blocks_at: int, filler: str = "a1") -> str:
    """104 characters matching the four patterns: z9, ``blocks_at``
    characters of filler, six c1d3g3 blocks each followed by a1b2, filler
    up to position 92, t8 five times, z9."""
    head = "z9" + filler * (blocks_at // 2)
    middle = ("c1d3g3" + "a1b2") * 6
    value = head + middle + filler * ((92 - len(head) - len(middle)) // 2) + "t8" * 5 + "z9"
    assert len(value) == 104
    return value


def _near(rng: random.Random) -> str:
    """A string near string5's language: a valid or blocked value with one
    random change (or none)."""
    value = _value(rng.choice([0, 2, 4, 10, 20]), rng.choice(["a1", "q7", "t8", "c1"]))
    change = rng.randrange(6)
    position = rng.randrange(len(value))
    if change == 1:
        value = value[:position] + rng.choice("ac19t8z") + value[position + 1:]
    elif change == 2:
        value = value[:position] + value[position + 2:]
    elif change == 3:
        value = value[:position] + rng.choice(["a1", "t8", "c1d3g3", "é1"]) + value[position:]
    elif change == 4:
        value = value.replace("a1b2", rng.choice(["a1b2c3d4", "a1", "b2c3d4e5f6"]), 1)
    return value


def test_string5_is_exact_and_silent():
    valid = _value(2)
    blocked = _value(0)  # the blocks start at position 2: PREFIXED finds them
    assert all(re.search(p, valid) for p in (P0, P1, P2, P3)) and not re.search(PREFIXED, valid)
    assert all(re.search(p, blocked) for p in (P0, P1, P2, P3, PREFIXED))
    instances = [valid, _value(4), _value(10, "t8"), blocked, valid[:-2] + "y9",
                 valid.replace("c1d3g3", "c1d3g4", 1), "z9", "", 14, 0, None, [valid]]
    _, _, n_valid = assert_exact_and_silent(STRING5, instances, indented=False)
    assert n_valid == 3
    matcher = SchemaMatcher(STRING5)
    for text in (valid, blocked):
        escaped = '"' + "".join(f"\\u{ord(c):04x}" for c in text) + '"'
        assert matcher.accepts(escaped) == (text == valid), text


def test_string5_against_jsonschema_near_its_language():
    matcher = SchemaMatcher(STRING5)
    validator = declared_oracle(STRING5)
    rng = random.Random(29)
    counts = [0, 0]
    for _ in range(120):
        value = _near(rng)
        valid = validator.is_valid(value)
        counts[valid] += 1
        assert matcher.accepts(json.dumps(value)) == valid, value
    assert min(counts) >= 10, counts


def test_products_are_bounded_by_their_own_bytes_limit():
    # string5's difference needs 16-24 MB before minimization.
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_json_schema(STRING5, config=Config(max_product_dfa_bytes=12 << 20))
    assert info.value.limit == "max_product_dfa_bytes"
    assert "max_product_dfa_bytes" in str(info.value)
    # A plain regex keeps max_dfa_bytes; a product ignores it.
    product = 'start ::= #&"[a-z]{0,30}\\u0000.*q.*";'
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_ebnf(product, config=Config(max_product_dfa_bytes=300))
    assert info.value.limit == "max_product_dfa_bytes"
    Grammar.from_ebnf(product, config=Config(max_dfa_bytes=300))
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_ebnf('start ::= #"[a-z]{0,30}";', config=Config(max_dfa_bytes=300))
    assert info.value.limit == "max_dfa_bytes"
    with pytest.raises(InvalidArgument, match="max_product_dfa_bytes"):
        Config(max_product_dfa_bytes=0)
