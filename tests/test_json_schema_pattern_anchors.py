"""``pattern`` with ``^``/``$`` inside alternatives and groups (issue 17):
``^01$|^07$`` (which Python's parser factors into ``^0(?:1$|7$)``),
``^$|^...$``, ``^([^,]|$)``, ``(^|,)x``, ``(?:^x)?y``; and several
``pattern`` values met in one ``allOf`` (all enforced, with lengths and enum;
beyond the DFA limits the dropped one is named); patterns every string
matches (``([A-Z]+)?``) beside a large ``maxLength``; ``x-`` keywords in
``allOf``.

Oracles, both independent of grammask: ``re.search`` on the pattern (the
strings avoid ``\\n``, where Python's ``$`` and ECMA-262's differ) and
``jsonschema`` (Draft 2020-12).  Each pool of hand-written and generated
strings is checked plain and with every character as a ``\\uXXXX`` escape;
random walks through the grammar are all valid.  Patterns with no regular
reading here (``\\b``) keep warning; patterns matching nothing (``/^x$/``)
are tested in tests/test_json_schema_guarded_patterns.py.
"""

from __future__ import annotations

import json
import random
import re

import jsonschema
import pytest

from support.schema_matcher import SchemaMatcher

CASES = [
    ("^01$|^07$", {}, ["01", "07", "0", "017", "x01", "1", ""], "0172"),
    ("^$|^\\d{1,3}(?:\\.\\d{1,2})?$", {}, ["", "1", "123", "1234", "1.5", "1.", "1.234", "a"],
     "12.a"),
    ("^([^,]|$)", {}, ["", "a", "ab", ",", ",a", "a,"], "ab,"),
    ("(^|,)ab", {}, ["ab", "xab", "x,ab", ",ab", "a,b", ""], "ab,x"),
    ("(?:^x)?y", {}, ["y", "xy", "ay", "x", ""], "xya"),
    ("a$|^b", {}, ["a", "ba", "b", "ab", "c", "bc", "cb"], "abc"),
    ("^[a-z]{2}|^[a-z]{2}-[a-z]{2}?$", {"maxLength": 4},
     ["ab", "abc", "ab-cd", "a", "1ab", "abcde"], "ab-1"),
    ("^(?:$|a)b?$", {}, ["", "a", "ab", "b", "abb"], "ab"),
    ("^$|^x+$", {"minLength": 1, "maxLength": 3}, ["", "x", "xxx", "xxxx", "y"], "xy"),
]


def escaped(text: str) -> str:
    units = text.encode("utf-16-be")
    return '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'


@pytest.mark.parametrize("index", range(len(CASES)))
def test_anchors_inside_alternatives_are_exact(index):
    pattern, lengths, pool, alphabet = CASES[index]
    schema = {"type": "string", "pattern": pattern, **lengths}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.Draft202012Validator(schema)
    compiled = re.compile(pattern)
    rng = random.Random(index)
    values = pool + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
                     for _ in range(80)]
    for value in values:
        expected = compiled.search(value) is not None \
            and lengths.get("minLength", 0) <= len(value) <= lengths.get("maxLength", 99)
        assert validator.is_valid(value) == expected, (pattern, value)
        for text in (json.dumps(value), escaped(value)):
            assert matcher.accepts(text) == expected, (pattern, text)
    for _ in range(40):
        text = matcher.random_walk(rng, max_bytes=60)
        if text is not None:
            value = json.loads(text)
            assert compiled.search(value) and validator.is_valid(value), (pattern, text)


@pytest.mark.parametrize("pattern, reason", [
    ("a\\bb", "word boundary"),
    ("^(a$)+", "anchor inside a repeat"),
    ("^(?!a)b", "negative look-ahead"),
    ("(a)\\1", "backreference"),
])
def test_patterns_without_an_exact_reading_warn(pattern, reason):
    matcher = SchemaMatcher({"type": "string", "pattern": pattern})
    assert [w.keyword for w in matcher.warnings] == ["pattern"]
    assert reason in str(matcher.warnings[0])


ALL_OF_CASES = [
    ([{"type": "string", "pattern": "^[a-z]+$"}, {"pattern": "b"}, {"pattern": "c"}], {},
     ["bc", "cb", "abc", "b", "c", "", "bC", "xbxcx"], "abcB"),
    ([{"pattern": "[aA][12].*[zZ]"}, {"pattern": "^a"}, {"maxLength": 5}], {"type": "string"},
     ["a1z", "a1zz", "A1z", "a1xxxz", "xa1z", "a2Z", "a1"], "aA12zZx"),
    ([{"pattern": "^([a-z][0-9])+$"}, {"allOf": [{"pattern": "^.{4}"}, {"pattern": "9$"}]}],
     {"type": "string"}, ["a1b9", "a1b2", "a9", "a1b2c9", "a1b9c", "1a9b"], "ab19"),
]


@pytest.mark.parametrize("index", range(len(ALL_OF_CASES)))
def test_patterns_of_all_of_members_are_all_enforced(index):
    members, siblings, pool, alphabet = ALL_OF_CASES[index]
    schema = {"allOf": members, **siblings}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.Draft202012Validator(schema)
    patterns, max_length = [], 99

    def collect(member):
        nonlocal max_length
        patterns.extend([member["pattern"]] if "pattern" in member else [])
        max_length = min(max_length, member.get("maxLength", 99))
        for inner in member.get("allOf", []):
            collect(inner)
    for member in members:
        collect(member)
    rng = random.Random(100 + index)
    values = pool + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))
                     for _ in range(80)]
    assert any(validator.is_valid(v) for v in pool) and not all(validator.is_valid(v) for v in pool)
    for value in values:
        expected = all(re.search(p, value) for p in patterns) and len(value) <= max_length
        assert validator.is_valid(value) == expected, (schema, value)
        for text in (json.dumps(value), escaped(value)):
            assert matcher.accepts(text) == expected, (schema, text)
    assert not matcher.accepts("5")
    for _ in range(40):
        text = matcher.random_walk(rng, max_bytes=60)
        if text is not None:
            assert validator.is_valid(json.loads(text)), (schema, text)


def test_enum_members_meet_every_pattern_of_all_of():
    schema = {"allOf": [{"enum": ["ab", "ba", "bb", "aa"]}, {"pattern": "^a"}, {"pattern": "b$"}]}
    matcher = SchemaMatcher(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in ["ab", "ba", "bb", "aa"]:
        assert matcher.accepts(json.dumps(value)) == validator.is_valid(value) == (value == "ab")


@pytest.mark.parametrize("pattern, max_length", [("([A-Z]+)?", 4096), ("^a*", 3000),
                                                 ("(^|,)x?", 5000)])
def test_patterns_matching_every_string_leave_only_the_length(pattern, max_length):
    schema = {"type": "string", "pattern": pattern, "maxLength": max_length}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.Draft202012Validator(schema)
    for value in ["", "abc", "x" * max_length, "y" * (max_length + 1), ",é\n"]:
        expected = re.search(pattern, value) is not None and len(value) <= max_length
        assert validator.is_valid(value) == expected
        assert matcher.accepts(json.dumps(value)) == expected, (pattern, len(value))


def test_extension_keywords_merge_silently():
    schema = {"allOf": [{"type": "string", "x-kind": "a"}, {"x-kind": "b", "maxLength": 2}]}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    assert matcher.accepts('"ab"') and not matcher.accepts('"abc"')


def test_patterns_beyond_the_dfa_limits_are_dropped_by_name_and_the_rest_kept():
    patterns = ["^" + "." * 60 + "$", "ab1", "b12", "ca1"]
    schema = {"allOf": [{"type": "string", "pattern": p} for p in patterns]}
    matcher = SchemaMatcher(schema)
    assert [w.keyword for w in matcher.warnings] == ["pattern"]
    assert repr(patterns[0]) in str(matcher.warnings[0])
    kept = jsonschema.Draft202012Validator({"type": "string", "allOf": [{"pattern": p} for p in
                                                                      patterns[1:]]})
    for value in ["ab12ca1", "xab12xca1x", "ab1ca1", "b12ca1", "ab2ca1"]:
        assert matcher.accepts(json.dumps(value)) == kept.is_valid(value), value
