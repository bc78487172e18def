"""``pattern`` with ``minLength``/``maxLength`` and with ``format`` (issue 17,
item 3), against ``jsonschema`` (Draft 2020-12 with its format checker).

Each schema has a pool of strings (hand-written and generated from the
pattern's own alphabet), each written plain and with every character as a
``\\uXXXX`` escape (lengths count decoded code points, not bytes); grammask
accepts a text iff the oracle calls the decoded string valid.  Random walks
through the grammar are all valid.  The intersection is one terminal
(no approximation warning); beyond the DFA limits the length bounds are
dropped with a warning that says so.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from support.schema_matcher import FORMAT_CHECKER, SchemaMatcher

CASES = [
    ({"pattern": "^[a-z]+$", "minLength": 3, "maxLength": 5},
     ["ab", "abc", "abcde", "abcdef", "ABC", "", "a1c"], "abcxyz1A"),
    ({"pattern": "[0-9]", "maxLength": 4}, ["1", "a1", "abc1", "abcd1", "abcd", "12345", "é1"],
     "ab1é-"),
    ({"pattern": "x", "minLength": 2}, ["x", "xx", "ax", "aa", "aaaax"], "xa "),
    ({"pattern": "^a|b$", "minLength": 2, "maxLength": 3},
     ["a", "ab", "abc", "cb", "ccb", "cccb", "ba"], "abc"),
    ({"pattern": "^(ab)*$", "maxLength": 5}, ["", "ab", "abab", "ababab", "aba"], "ab"),
    ({"pattern": "^\\d{3}-\\d{4}$", "minLength": 8}, ["123-4567", "12-4567", "123-45678"],
     "1234-"),
    ({"pattern": "é", "minLength": 2, "maxLength": 2}, ["é", "éé", "aé", "éaa", "e\u0301"],
     "éa"),
    ({"format": "uri", "pattern": "^https://"},
     ["https://example.org/a", "http://example.org", "https://", "https:x", "ftp://h",
      "https://a b"], "htps:/.orgxa"),
    ({"format": "uri", "pattern": "\\.json$", "maxLength": 24},
     ["https://ex.org/a.json", "https://example.org/very/long/a.json", "a.json", "urn:x.json",
      "https://ex.org/a.jso"], "htps:/.orgjsn"),
    ({"format": "date", "pattern": "^2024-"}, ["2024-02-29", "2023-02-28", "2024-13-01"], "20241-"),
    ({"format": "email", "maxLength": 8}, ["a@b.org", "ab@cd.org", "a@b"], "ab@.org"),
]


def oracle(schema: dict):
    return jsonschema.Draft202012Validator(schema, format_checker=FORMAT_CHECKER)


def escaped(text: str) -> str:
    """``text`` as a JSON string with every character written ``\\uXXXX``."""
    units = text.encode("utf-16-be")
    return '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'


def generated(alphabet: str, rng: random.Random, n: int = 60) -> list[str]:
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(n)]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_pattern_meets_lengths_and_format(index):
    keywords, pool, alphabet = CASES[index]
    schema = {"type": "string", **keywords}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = oracle(schema)
    rng = random.Random(index)
    has_format = "format" in keywords
    assert any(validator.is_valid(v) for v in pool) and not all(validator.is_valid(v) for v in pool)
    for value in pool + generated(alphabet, rng):
        expected = validator.is_valid(value)
        texts = [json.dumps(value), json.dumps(value, ensure_ascii=False)]
        if not has_format:  # formats accept printable ASCII raw only (strings.py)
            texts.append(escaped(value))
        for text in texts:
            accepted = matcher.accepts(text)
            if has_format and value not in pool:
                # Generated strings: formats are sound, not complete (jsonschema's
                # email only asks for an "@"), so only acceptance is checked.
                assert not accepted or expected, (schema, text)
            else:
                assert accepted == expected, (schema, text)
    for _ in range(40):
        text = matcher.random_walk(rng, max_bytes=120)
        if text is not None:
            assert validator.is_valid(json.loads(text)), (schema, text)


def test_lengths_too_large_for_the_intersection_warn_and_keep_the_pattern():
    schema = {"type": "string", "pattern": "^[a-z]+@[a-z]+$", "maxLength": 5000}
    matcher = SchemaMatcher(schema)
    assert [w.keyword for w in matcher.warnings] == ["maxLength"]
    assert "exceeds the DFA size limits" in str(matcher.warnings[0])
    assert matcher.accepts('"ab@cd"') and not matcher.accepts('"abcd"')


def test_intersection_terminal_round_trips_through_kbnf():
    from grammask.grammar import Grammar

    grammar = Grammar.from_json_schema({"type": "string", "pattern": "^a", "maxLength": 3})
    text = grammar.to_ebnf()
    assert "#&" in text
    again = Grammar.from_ebnf(text)
    assert again.to_ebnf() == text
    kbnf = Grammar.from_ebnf('start ::= #&"[a-z]+\\0.{2}";')
    assert kbnf.to_ebnf().count("#&") == 1
