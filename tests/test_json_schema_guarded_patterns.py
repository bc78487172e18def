"""``pattern`` as a guarded run, ``^(?:(?!X1)...(?!Xn)C){m,M}$`` (issue 17):
every position checked by negative look-aheads, exact as the run of ``C``
minus the strings holding a match of some ``Xi`` (a ``difference``
terminal); and patterns no string matches (``/^[0-9]{4}$/``: the string
schema admits no string, silently).

Oracle: ``jsonschema`` (Draft 2020-12, or the schema's declared draft),
which runs Python's ``re.search``.  Strings avoid line terminators, where
Python's ``.`` and ``$`` and ECMA-262's differ (the grammar takes only what
both accept).  Each string is checked plain and with every character as a
``\\uXXXX`` escape; Hypothesis draws strings from pieces of the
look-aheads' words; random walks through the grammar are all valid.
Other look-aheads (``^(?!a)b``, or a guard ECMA-262 and Python read
differently, ``(?!\\s)``) keep warning.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.errors import GrammarError
from grammask.grammar import Grammar
from support.schema_matcher import SchemaMatcher

GUARDED = [
    {"type": "string", "pattern": "^((?!mode)(?!Mode).)*$"},
    {"allOf": [{"type": "string", "pattern": "^[^\n]+$"}, {"pattern": "^((?!mode)(?!Mode).)*$"}]},
    {"type": "string", "pattern": "^(?:(?!ab|ba)[a-c]){2,5}$"},
    {"type": "string", "pattern": "^((?!xx).)+$", "minLength": 2, "maxLength": 6},
    {"type": "string", "pattern": "^((?!a[0-9]+b).)*$", "maxLength": 9},
    {"type": "string", "pattern": "^((?![^a-c]{2}|\"m).)*$"},
    {"type": "string", "pattern": "^(?:(?!mo)[^d])*$", "minLength": 1},
]

_PIECES = ["m", "o", "d", "e", "M", "mode", "Mode", "mod", "ode", "a", "b", "c", "ab", "ba",
           "x", "xx", "1", "a12b", " ", "\u00e9", "\U0001f600", '"', "\\", "@", "q.r"]

HAND_WRITTEN = ["", "mode", "Mode", "MODE", "a mode", "model", "mod e", "modeMode", "m", "Mod",
                "moDe", "ab", "ac", "cab", "abc", "acb", "aca", "ccccc", "cccccc", "x", "xx",
                "xyx", "xyxyx", "xyxyxy", "a1b", "a12", "1b", "a1 b", "aaaa12b", "\u00e9mode",
                "m@o.d", "mo@x.y", '"m', 'a"mb', "axd", "ddd", "d@x.y", "ab@cd.ef", "ab@c.ef", "om@x.yz"]


@pytest.fixture(scope="module")
def matchers():
    built = []
    for schema in GUARDED:
        matcher = SchemaMatcher(schema)
        assert matcher.warnings == [], (schema, matcher.warnings)
        built.append((schema, matcher, jsonschema.Draft202012Validator(schema)))
    return built


def escaped(text: str) -> str:
    units = text.encode("utf-16-be")
    return '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'


def _check(matchers, value: str) -> None:
    for schema, matcher, validator in matchers:
        expected = validator.is_valid(value)
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False), escaped(value)):
            assert matcher.accepts(text) == expected, (schema, text, expected)


def test_hand_written(matchers):
    for schema, _, validator in matchers:
        verdicts = [validator.is_valid(value) for value in HAND_WRITTEN]
        assert any(verdicts) and not all(verdicts), schema
    for value in HAND_WRITTEN:
        _check(matchers, value)


@settings(max_examples=800, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_generated_strings(matchers, value):
    _check(matchers, value)


def test_random_walks_are_valid(matchers):
    rng = random.Random(7)
    for schema, matcher, validator in matchers:
        for _ in range(30):
            text = matcher.random_walk(rng, max_bytes=40)
            if text is not None:
                assert validator.is_valid(json.loads(text)), (schema, text)


@pytest.mark.parametrize("pattern", ["^(?!a)b", "^((?!a|).)*$", "^((?=a).)*$", "((?!a).)*$",
                                     "^((?!a$).)*$", "^((?!\\s).)*$", "^((?!a.b).)*$",
                                     "(?i)^((?!ab).)*$"])
def test_other_look_arounds_warn(pattern):
    """Not the form, or a look-ahead ECMA-262 and Python read differently
    (``\\s``, ``.``, case folding): removing the narrower reading's matches
    would accept what the other rejects."""
    matcher = SchemaMatcher({"type": "string", "pattern": pattern})
    assert [w.keyword for w in matcher.warnings] == ["pattern"]


def test_a_string_schema_matching_nothing_is_empty():
    with pytest.raises(GrammarError, match="accepts no JSON value"):
        Grammar.from_json_schema({"type": "string", "pattern": "/^[0-9]{4}$/"})


@pytest.mark.parametrize("schema", [
    {"type": ["string", "integer"], "pattern": "x$y", "maxLength": 3},
    {"pattern": "/^[0-9]{4}-[0-9]{2}$/"},
])
def test_patterns_matching_nothing_admit_no_string(schema):
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.Draft202012Validator(schema)
    for value in ["2001", "/2001/", "", "x", "xy", "x$y", "2001-12", 5, None, [1], {"a": "2001"}]:
        assert matcher.accepts(json.dumps(value)) == validator.is_valid(value), (schema, value)


def test_draft_04_schema_with_patterns_matching_nothing():
    """MaskBench's o21833: two ``/^...$/`` patterns, one beside ``type: string``."""
    item = {"type": "string", "minLength": 4, "maxLength": 4, "pattern": "/^[0-9]{4}$/"}
    schema = {"$schema": "http://json-schema.org/draft-04/schema#",
              "definitions": {"year": item, "date": {"pattern": "/^[0-9]{4}-[0-9]{2}$/"}},
              "properties": {"year": {"$ref": "#/definitions/year"},
                             "date": {"$ref": "#/definitions/date"}}}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.Draft4Validator(schema)
    for value in [{}, {"year": "2001"}, {"year": "/2001/"}, {"date": "2001-12"}, {"date": 7},
                  {"year": 2001}, {"other": "x"}, "2001", 3]:
        assert matcher.accepts(json.dumps(value)) == validator.is_valid(value), value


def test_look_aheads_past_the_dfa_limits_warn_and_keep_the_run():
    """The strings holding ``a[^x]{0,40}b`` need a DFA that remembers the
    last 40 positions of ``a``: past the limits, the look-aheads are dropped
    with a warning (looser) and the run itself (no ``\\n``) stays."""
    matcher = SchemaMatcher({"type": "string", "pattern": "^((?!a[^x]{0,40}b)[^\n])*$"})
    assert [w.keyword for w in matcher.warnings] == ["pattern"]
    assert "look-aheads of a pattern are not enforced" in str(matcher.warnings[0])
    assert matcher.accepts('"ab"') and not matcher.accepts('"a\\nb"')
