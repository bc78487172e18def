"""Large enums as pooled literal sets (``const_nodes._pooled_scalars``,
``literal_sets.literal_set_regexes``): exact against ``jsonschema`` and
against the per-member encoding of small enums."""

from __future__ import annotations

import json
import random
import re

import jsonschema
import pytest

from grammask.json_schema import const_nodes
from grammask.json_schema.literal_sets import CHUNK_TRIE_NODES, MAX_NESTING, literal_set_regexes
from support.schema_matcher import SchemaMatcher, dumps_variants


def oracle_valid(schema, instance) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


@pytest.mark.parametrize("texts", [
    ["a", "ab", "abc", "b", "cb"],
    [str(n) for n in range(1000)],
    ["a" * k for k in range(1, MAX_NESTING + 20)],  # too deep: a flat alternation
    ["x" * (CHUNK_TRIE_NODES + 5), "y", "\u00e9[.]", "\U0001F600", ""],
], ids=["prefixes", "numbers", "deep", "long-and-unicode"])
def test_literal_set_regexes_match_exactly_the_texts(texts):
    pattern = re.compile("|".join(f"(?:{regex})" for regex in literal_set_regexes(texts)))
    assert all(pattern.fullmatch(text) for text in texts)
    rng = random.Random(7)
    alphabet = sorted({char for text in texts for char in text} | {"z"})
    for _ in range(500):
        probe = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        assert bool(pattern.fullmatch(probe)) == (probe in texts), probe
    for text in texts:
        for probe in (text + "a", text[:-1], "z" + text):
            assert bool(pattern.fullmatch(probe)) == (probe in texts), probe


def test_literal_set_regexes_random_sets():
    rng = random.Random(3)
    for _ in range(200):
        texts = {"".join(rng.choice("ab\u00e9.") for _ in range(rng.randint(1, 6)))
                 for _ in range(rng.randint(1, 40))}
        pattern = re.compile("|".join(f"(?:{regex})" for regex in literal_set_regexes(texts)))
        for _ in range(40):
            probe = "".join(rng.choice("ab\u00e9.") for _ in range(rng.randint(0, 7)))
            assert bool(pattern.fullmatch(probe)) == (probe in texts), (texts, probe)


def test_enum_of_100000_integers_is_exact():
    schema = {"enum": list(range(100000))}
    matcher = SchemaMatcher(schema)
    assert matcher.lnf.sizes()["n_dfas"] <= 4
    for text in ("0", "-0", "1", "7", "99999", "12345", "1.0", "1.00", "99999.000", " 5 ", "-0.0"):
        assert matcher.accepts(text), text
        assert oracle_valid(schema, json.loads(text))
    for text in ("100000", "-1", "1.5", '"1"', "123456", "0.01", "true", "null", "[1]"):
        assert not matcher.accepts(text), text
        assert not oracle_valid(schema, json.loads(text))
    for text in ("01", "1.", "1e0x", ""):  # not JSON
        assert not matcher.accepts(text), text


MIXED = ([0, 1, 2, 3, 4, 10, 11, 20, -5, -4, -3, -2, 1000000007, 2 ** 70, 7.0, 1.5, -2.25, 0.1,
          1e-07, 1e16, 3.0e20, None, True, False, "", "a", "ab", "a b", "é", 'q"uote', "tab\t",
          [1, 2], {"k": "v"}, [], {}])


def _texts_around(values):
    texts = set()
    for value in values:
        texts.update(dumps_variants(value))
    for value in (5, 6, 9, 12, 21, -6, -1, 1000000008, 2 ** 70 + 1, 1.25, -2.5, 0.2, 2e-07, 1e17,
                  "b", "A", "ab ", 'q"uotes', [1], [2, 1], {"k": "w"}, {"k": "v", "l": 1}):
        texts.update(dumps_variants(value))
    texts.update(["1.0", "1.00", "-0", "-0.0", "1.50", "-2.250", "0.10", "7", "7.000", "01", "1.",
                  '"a', "nul", "tru"])
    return sorted(texts)


def test_mixed_large_enum_against_jsonschema():
    schema = {"enum": MIXED}
    assert len(MIXED) >= const_nodes.LITERAL_SET_MIN
    matcher = SchemaMatcher(schema)
    for text in _texts_around(MIXED):
        try:
            expected = oracle_valid(schema, json.loads(text))
        except json.JSONDecodeError:
            expected = False
        if text in ("1e-07", "1e+16", "3e+20"):  # json.dumps spellings: accepted
            expected = True
        assert matcher.accepts(text) == expected, text


def test_pooled_and_per_member_encodings_accept_the_same(monkeypatch):
    values = MIXED + [float(n) for n in range(30, 50)] + list(range(-40, -20, 3))
    pooled = SchemaMatcher({"enum": values})
    monkeypatch.setattr(const_nodes, "LITERAL_SET_MIN", 10 ** 9)
    per_member = SchemaMatcher({"enum": values})
    for text in _texts_around(values) + ["30", "30.0", "49", "50", "-40", "-37", "-39", "1e-7"]:
        assert pooled.accepts(text) == per_member.accepts(text), text


def test_enum_siblings_still_filter_pooled_members():
    matcher = SchemaMatcher({"enum": list(range(100)) + ["x"] * 3, "type": "integer", "maximum": 50})
    assert matcher.accepts("50") and matcher.accepts("0")
    assert not matcher.accepts("51") and not matcher.accepts('"x"')
