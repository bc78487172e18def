"""``not`` and ``oneOf`` over ``format`` (issue 17), and a draft-4 ``id`` in a
negated schema, against ``jsonschema`` with its format checker.

A format whose pattern is exactly the format (``formats.negatable``) is
negated as a pattern is: the strings outside its pattern (a difference
terminal), so a ``oneOf`` of such formats subtracts the others from each
branch, and ``not: {format: F}`` beside ``enum`` keeps the values F refuses.
A format no draft defines is an annotation: nothing fails it.  A format
looser than specified (``hostname``) or stricter (``time``, ``date-time``:
``formats.STRICTER``) is not negated: still warned.  A draft-4 ``id``
changes nothing when no reference inside the schema resolves against it,
so such branches are negated too; with a ``$ref`` inside they still warn.
Drafts 3 and 4 have no ``contains``, which the complement of ``items``
needs ("an item fails"): the translator builds its own where the document
spells no ``contains`` key (there every ``contains`` it meets is its own);
in a document that does (ignored there) a negated ``items`` warns.

Checks: each exact schema translates silently and accepts exactly what the
oracle does, on hand-written instances (``assert_exact_and_silent``, which
also checks random walks) and on strings generated with a fixed seed from
the formats' own valid and invalid cases by one-character edits
(``disagreements``).  Generated strings are used only for formats whose
installed checker follows the RFC both ways (not ``uri``, whose checker has
corner cases of its own: see tests/test_json_schema_formats.py).
"""

from __future__ import annotations

import random

import pytest

from grammask.json_schema import GrammarWarning, translate_schema
from support.schema_matcher import FORMAT_CHECKER, assert_exact_and_silent, disagreements

EXACT = [
    ("oneOf of an unknown format and addresses",
     {"type": "string", "oneOf": [{"format": "host-name"}, {"format": "ipv4"},
                                  {"format": "ipv6"}]},
     ["1.2.3.4", "::1", "example.org", "1.2.3", "", "1::2::3", "::ffff:1.2.3.4", 4]),
    ("oneOf of a format and an enum", {"type": "string", "oneOf": [{"format": "uri"},
                                                                  {"enum": ["."]}]},
     [".", "http://x", "x", "a:b", "./", ""]),
    ("enum against a format", {"oneOf": [{"format": "ipv4"}, {"enum": ["1.2.3.4", "x", 7]}]},
     ["1.2.3.4", "x", 7, "5.6.7.8", "y", 8, None]),
    ("not a date", {"type": "string", "not": {"format": "date"}},
     ["2024-02-29", "2023-02-29", "x", "", "2024-01-01 "]),
    ("not any of two formats", {"not": {"anyOf": [{"format": "ipv4"}, {"format": "json-pointer"}]}},
     ["1.2.3.4", "/a/b", "", "a", "256.1.1.1", 3, None]),
    ("not a format beside enum", {"enum": ["2024-01-01", "2024-13-01", 3],
                                  "not": {"format": "date"}},
     ["2024-01-01", "2024-13-01", 3, "x"]),
    ("oneOf with an unknown format", {"oneOf": [{"format": "mongoId"}, {"type": "integer"}]},
     ["x", 1, "", None, 1.5]),
    ("draft-4 id without references", {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "oneOf": [{"id": "first", "type": "object", "required": ["a"],
                   "properties": {"a": {"enum": [1, 2]}}},
                  {"id": "second", "type": "object", "required": ["b"],
                   "properties": {"a": {"enum": [2, 3]}}}]},
     [{}, {"a": 1}, {"a": 2}, {"a": 3}, {"b": 0}, {"a": 1, "b": 0}, {"a": 2, "b": 0},
      {"a": 3, "b": 0}, "a"]),
    ("draft-4 items negated by the translator's own contains", {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "oneOf": [{"type": "array", "maxItems": 2, "items": {"enum": ["a", "b"]}},
                  {"type": "array", "items": {"enum": ["b", "c"]}}]},
     [[], ["a"], ["b"], ["c"], ["a", "b"], ["b", "b", "b"], ["c", "a"], ["b", "c"], "a"]),
    ("draft-6 items negated by contains", {
        "$schema": "http://json-schema.org/draft-06/schema#",
        "oneOf": [{"type": "array", "maxItems": 2, "items": {"enum": ["a", "b"]}},
                  {"type": "array", "items": {"enum": ["b", "c"]}}]},
     [[], ["a"], ["b"], ["c"], ["a", "b"], ["b", "b", "b"], ["c", "a"], ["b", "c"], "a"]),
]

WARNED = [
    ("a looser format", {"type": "string", "oneOf": [{"format": "hostname"},
                                                     {"format": "ipv4"}]}, "oneOf"),
    ("a leap second refused", {"type": "string", "not": {"format": "date-time"}}, "not"),
    ("a format not asserted", {"type": "string", "not": {"format": "idn-hostname"}}, "not"),
    ("a format asserted by a grammar", {"type": "string", "not": {"format": "regex"}}, "not"),
    ("draft-4 items in a document spelling contains (ignored there)", {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "properties": {"x": {"contains": {"type": "string"}}},
        "oneOf": [{"type": "array", "maxItems": 2, "items": {"enum": ["a", "b"]}},
                  {"type": "array", "items": {"enum": ["b", "c"]}}]}, "oneOf"),
    ("draft-4 id with a reference inside", {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "definitions": {"n": {"type": "integer"}},
        "oneOf": [{"id": "http://example.org/other", "type": "array",
                   "items": {"$ref": "#/definitions/n"}},
                  {"type": "array", "maxItems": 1}]}, "oneOf"),
]

GENERATED_FORMATS = {
    "date": ["2024-02-29", "2023-02-29", "1999-12-31", "2024-13-01", "0001-01-01"],
    "ipv4": ["0.0.0.0", "255.255.255.255", "192.168.1.10", "256.0.0.0", "01.2.3.4"],
    "ipv6": ["::", "::1", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4", "1::2::3", "ABCD::ef01"],
    "json-pointer": ["", "/", "/a/b", "/~0~1", "/~2", "a"],
}
"""Formats whose installed checker follows the RFC both ways, with seeds
for the generated strings."""

EDIT_ALPHABET = "0123456789abcdefABCDEF:./-~Z T"


def edited(seeds: list[str], count: int, seed: int) -> list[str]:
    """``count`` strings made from ``seeds`` by one or two random
    one-character edits (insert, delete, replace), fixed seed."""
    rng = random.Random(seed)
    found = list(seeds)
    while len(found) < count:
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 2)):
            position = rng.randint(0, len(text))
            action = rng.choice("idr") if text else "i"
            if action == "i":
                text = text[:position] + rng.choice(EDIT_ALPHABET) + text[position:]
            elif action == "d":
                text = text[:position] + text[position + 1:]
            else:
                text = text[:position] + rng.choice(EDIT_ALPHABET) + text[position + 1:]
        found.append(text)
    return found


@pytest.mark.parametrize("name,schema,instances", EXACT, ids=[case[0] for case in EXACT])
def test_negated_formats_are_exact_and_silent(name, schema, instances):
    assert_exact_and_silent(schema, instances)


@pytest.mark.parametrize("name,schema,keyword", WARNED, ids=[case[0] for case in WARNED])
def test_formats_not_negated_exactly_warn(name, schema, keyword):
    with pytest.warns(GrammarWarning, match=f"'{keyword}'"):
        translate_schema(schema)


@pytest.mark.parametrize("format_name", sorted(GENERATED_FORMATS))
def test_generated_strings_against_negated_format(format_name):
    values = edited(GENERATED_FORMATS[format_name], 150, seed=len(format_name))
    schemas = [
        {"type": "string", "not": {"format": format_name}},
        {"oneOf": [{"format": format_name}, {"type": "string", "pattern": "^[0-9.:/]*$"}]},
        {"enum": values[:40], "not": {"format": format_name}},
    ]
    for schema in schemas:
        outcome, wrong = disagreements(schema, values, FORMAT_CHECKER)
        assert outcome == "silent", schema
        assert wrong == [], (schema, wrong[:5])
