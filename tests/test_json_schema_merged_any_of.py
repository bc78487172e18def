"""``anyOf`` members of one ``allOf`` distribute into their product of
branches, exactly, up to ``merge.MAX_DISTRIBUTED_BRANCHES`` (MaskBench's
allany13: 5 x 4 x 4 = 80 string branches of patterns, ``not`` of patterns
and lengths), and past it warn that only the first set is applied.

Oracle: ``jsonschema`` (Draft 2020-12) on hand-written strings and strings
Hypothesis draws from the patterns' pieces, each written plain and with
every character as a ``\\uXXXX`` escape; random walks are all valid.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.schema_matcher import SchemaMatcher

SCHEMA = {
    "type": "string",
    "allOf": [{"$ref": "#/$defs/any1"}, {"$ref": "#/$defs/any2"}, {"$ref": "#/$defs/any3"},
              {"pattern": "[aA][12].*[zZ]"}, {"minLength": 10}, {"maxLength": 20}],
    "$defs": {
        "any1": {"anyOf": [{"pattern": "^a"}, {"pattern": "^b"}, {"pattern": "^c"},
                           {"pattern": "^d"}, {"pattern": "^e"}]},
        "any2": {"anyOf": [{"allOf": [{"not": {"pattern": "^[ab]"}},
                                      {"not": {"pattern": "^[cde]"}}]},
                           {"pattern": "x$"}, {"pattern": "y$"}, {"pattern": "z$"}]},
        "any3": {"anyOf": [{"allOf": [{"not": {"pattern": "^[abc]"}},
                                      {"not": {"pattern": "[xyz]$"}}]},
                           {"pattern": "1111111111"}, {"pattern": "2222222222"},
                           {"pattern": "3333333333"}]},
    },
}

HAND_WRITTEN = ["a2222222222222z", "a222222222z", "a22222222z", "e2222222222z", "d11111111111z",
                "a1111111111Z", "b3333333333z", "f2222222222z", "a2222222222222222222z",
                "a2222222222x", "da1xxxxxxxxxz", "dA1yyyyyyyyyz", "eA2222222222z", "d1z",
                "a2222222222222222z", "aA2222222222z"]

_PIECES = ["a", "b", "d", "e", "A", "1", "2", "3", "z", "Z", "x", "y", "1111111111",
           "2222222222", "3333333333", "22222", "\u00e9"]


@pytest.fixture(scope="module")
def matcher():
    built = SchemaMatcher(SCHEMA)
    assert built.warnings == []
    return built


VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def escaped(text: str) -> str:
    units = text.encode("utf-16-be")
    return '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'


def _check(matcher, value: str) -> None:
    expected = VALIDATOR.is_valid(value)
    for text in (json.dumps(value), escaped(value)):
        assert matcher.accepts(text) == expected, (text, expected)


def test_hand_written(matcher):
    verdicts = [VALIDATOR.is_valid(value) for value in HAND_WRITTEN]
    assert 3 <= sum(verdicts) < len(HAND_WRITTEN) - 3
    for value in HAND_WRITTEN:
        _check(matcher, value)


@settings(max_examples=400, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_generated_strings(matcher, value):
    _check(matcher, value)


def test_random_walks_are_valid(matcher):
    rng = random.Random(13)
    for _ in range(30):
        text = matcher.random_walk(rng, max_bytes=60)
        if text is not None:
            assert VALIDATOR.is_valid(json.loads(text)), text


def test_past_the_cap_only_the_first_set_is_applied():
    branches = [{"anyOf": [{"pattern": f"^{c}"} for c in "abcdefghij"]},
                {"anyOf": [{"pattern": f"{c}$"} for c in "klmnopqrst"]},
                {"anyOf": [{"pattern": c} for c in "uv"]}]
    matcher = SchemaMatcher({"type": "string", "allOf": branches})
    assert [w.keyword for w in matcher.warnings] == ["anyOf"]
    assert "100 x 2 branches" in str(matcher.warnings[0])
