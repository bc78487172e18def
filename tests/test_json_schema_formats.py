"""Every asserted ``format`` (``json_schema/formats.py``) against ``jsonschema``'s
format checker and the JSON-Schema-Test-Suite ``optional/format`` cases (issue 17).

Per format: hand-written valid and invalid strings, and each suite case whose
instance is a string.  A case is checked both ways (grammask accepts iff the
oracle does) unless the format is in ``ONE_WAY``, where the installed checker
is looser than the RFC (or absent): there grammask must accept what the RFC
grammar allows (the ``VALID`` list and the suite's ``valid: true`` cases not
with a ``suite_disagreement``) and reject ``INVALID``, and every string
grammask accepts (random walks included) must pass the checker.

The suite is the authority for its own cases (grammask accepts iff
``valid``, except where ``suite_disagreement`` gives a reason); the checker
is compared on the hand-written cases and on random walks, since it has
bugs of its own on suite cases (rfc3339_validator accepts a trailing
newline, rfc3987 a leading zero in an IPv6 literal's IPv4 part, jsonschema's
relative-json-pointer refuses "100").  ``uri-template`` walks are not
checked against ``uri_template``, which refuses 4-digit prefix lengths
("{x:1000}") that RFC 6570 and the suite allow.

Each schema translates without a ``GrammarWarning`` (checked under
warnings-as-errors and on ``matcher.warnings``); ``idn-hostname`` and
``idn-email`` warn and say why (``regex`` is a grammar, not a pattern:
``tests/test_json_schema_regex_format.py``), and so does ``hostname``, looser than the
format (``formats.LOOSER``: A-labels are not decoded; the 253-character name
limit is not counted): its suite cases that grammask accepts against the
suite's verdict must be those (``suite_disagreement``), never the reverse.
``tests/test_json_schema_hostname.py`` compares hostnames with the checker.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import jsonschema
import pytest

from grammask.json_schema import GrammarWarning, translate_schema
from grammask.json_schema.formats import FORMAT_PATTERNS, GRAMMAR_FORMATS, LOOSER, NOT_ENFORCED
from support.schema_matcher import FORMAT_CHECKER, SchemaMatcher

SUITE = Path(__file__).parent / "workloads" / "json-schema-test-suite" / "optional" / "format"

VALID = {
    "date": ["2024-02-29", "2000-02-29", "0001-01-01", "1999-12-31"],
    "time": ["23:59:59Z", "00:00:00.5+05:30", "12:00:00-00:00", "01:02:03z"],
    "date-time": ["2024-02-29T23:59:59Z", "1999-12-31t00:00:00.123-08:00"],
    "duration": ["P1D", "PT1H", "P1Y2M3DT4H5M6S", "P2W", "PT36H", "P1M", "PT1M30S", "P0D"],
    "email": ["a@b", "first.last@example.com", "x+y@a-b.c", '"a b"@c', '""@c', '"a\\\\"@c',
              'a@[1.2.3.4]', "a@[001.2.3.255]", "a@[IPv6:::1]", "a@[ipv6:1:2:3:4:5:6:7:8]",
              "a@[IPv6:1:2:3:4:5:6::]", "a@[IPv6:1:2:3:4:5:6:1.2.3.4]", "a@[IPv6:::ffff:1.2.3.4]"],
    "hostname": ["a", "example.com", "a-b.c0", "1.2.3", "a" * 63, "ab--c", "xn--9n2bp8q"],
    "ipv4": ["0.0.0.0", "255.255.255.255", "192.168.1.10"],
    "ipv6": ["::", "::1", "1::", "1:2:3:4:5:6:7:8", "1::8", "::ffff:1.2.3.4", "a:b::c:1.2.3.4",
             "1:2:3:4:5:6:1.2.3.4", "ABCD::ef01"],
    "uri": ["https://a", "a:b", "urn:isbn:0451450523", "http://u:p@[::1]:80/p/q?x=1&y#f",
            "http://[v1.x]/", "file:///etc/hosts", "mailto:x@y", "http://a/%20b", "s:",
            "http://a?b?/#c/?", "http://a:/", "http://1.2.3.4/", "x://@"],
    "uri-reference": ["", "/a/b", "a/b", "?q", "#f", "//host/p", "../x", "./a:b", "https://a#f"],
    "iri": ["http://ex.com/é", "http://ü.de/?ß#π", "urn:x:😀", "http://a/?\ue000"],
    "iri-reference": ["/é", "é", "#π", "//ü/", ""],
    "uri-template": ["", "http://ex.com/{user}", "{+path}/x", "{#frag}", "{.a,b}", "{/list*}",
                     "{;x,y}", "{,a}", "{?q,lang}", "{&more}", "{var:30}", "{a.b}", "{%41}", "/é{x}"],
    "json-pointer": ["", "/", "/a/b", "/~0~1", "/a~1b", "//", "/é", "/ ", "/\"\\"],
    "relative-json-pointer": ["0", "1/a", "0#", "12/a/b", "0+1", "2-1/x", "0/"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000",
             "ABCDEF01-2345-6789-ABCD-EF0123456789"],
}

INVALID = {
    "date": ["2023-02-29", "2024-13-01", "2024-1-01", "24-01-01", "2024-01-32", "0000-01-01"],
    "time": ["24:00:00Z", "12:00:00", "12:60:00Z", "12:00:60Z", "12:00:00+24:00"],
    "date-time": ["2024-02-29 23:59:59Z", "2024-02-29T23:59:59"],
    "duration": ["P", "PT", "P1", "1D", "P1DT", "PT1D", "P1W2D", "P1.5D", "P1H", "P1S", "PT1Y",
                 "P1D1Y", "P-1D"],
    "email": ["a", "@b", "a@", "a b@c", "a..b@c", ".a@b", "a@-b", '"a"b"@c', '"a\\"@c',
              '"\u00e9"@c', "a@[1.2.3.256]", "a@[1.2.3]", "a@[1.2.3.0004]", "a@[::1]",
              "a@[IPv6:1:2:3:4:5:6:7::]", "a@[IPv6:1:2:3:4:5::1.2.3.4]", "a@[IPv6::1]",
              "a@[x:y]", "a@[IPv6:g::]"],
    "hostname": ["", "-a", "a-", "a..b", "a_b", "a.", "é", "a" * 64, "b." + "a" * 64],
    "ipv4": ["256.0.0.0", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.04", " 1.2.3.4"],
    "ipv6": [":", ":::", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "::1.2.3", "1:2:3:4:5:6:7",
             "g::", "::1.2.3.04", "[::1]", "::1%eth0", "1:2:3:4:5:6:7:1.2.3.4"],
    "uri": ["https://a#b#c", "https://a/[x]", "", "/a", "1a:b", "a b:c", "http://a b",
            "http://[::1", "http://a/%2", "http://a/%zz", "http://é", "http://a/\\", "a:b c",
            "http://a:b:c/", "http://[1.2.3.4]/", "http://a/{x}", "http://a/^", "//a"],
    "uri-reference": ["a#b#c", "a b", "%", "a\\b", "[x]", "1:b:[", "a/é"],
    "iri": ["http://a/#b#c", "é:x", "http://a/\ue000", "/a", "http://a/ b", "http://a/\ufffe"],
    "iri-reference": ["a#b#c", "a b", "\ue000", "%"],
    "uri-template": ["{", "}", "{}", "{a", "a}", "{a,}", "{a b}", "{$a}", "{a:0}",
                     "{a:10000}", "{a..b}", "{.a.}", "{a*:3}", "{a}}", "%", "a b", "<", "{+#a}",
                     "a\"b", "{-a}"],
    "json-pointer": ["a", "/~", "/~2", "/a~", "#/a", "~0"],
    "relative-json-pointer": ["", "/a", "01", "a", "0##", "-1", "0+", "+1", "0+01", "0#/a", "1 "],
    "uuid": ["123e4567-e89b-12d3-a456-42661417400", "123e4567e89b12d3a456426614174000",
             "{123e4567-e89b-12d3-a456-426614174000}", "123e4567-e89b-12d3-a456-42661417400g",
             "urn:uuid:123e4567-e89b-12d3-a456-426614174000"],
}

ONE_WAY = {
    "email": "jsonschema checks only that '@' occurs (RFC 5321 is not checked)",
    "hostname": "the checker (fqdn) accepts a trailing dot, which the suite and grammask "
                "refuse; grammask does not count the name's 253 characters (warned)",
    "duration": "isoduration accepts fractions, signs and mixed weeks the RFC 3339 grammar refuses",
    "relative-json-pointer": "jsonschema follows draft-handrews-01: no index manipulation "
                             "('0+1'), and any Unicode digit counts as a digit",
    "iri": "rfc3987's IRI regex differs from RFC 3987 in corners (see SUITE_DISAGREES)",
    "iri-reference": "as iri",
    "uri-template": "uri_template.validate refuses 4-digit prefix lengths and reserved operators the RFC allows",
    "uuid": "uuid.UUID accepts braces and urn prefixes the RFC string form does not have",
}
"""Formats checked one way, with the reason (see the module docstring)."""

def suite_disagreement(name: str, description: str, data: str) -> str | None:
    """Why the RFC grammar grammask follows refuses a suite case the suite
    calls valid, or accepts one it calls invalid (None: they agree)."""
    if name in ("time", "date-time") and "leap second" in description:
        return "second 60 is refused (a leap second depends on the offset: not regular)"
    if name == "hostname" and "overall length" in description:
        return "the name's 253 characters are not counted (warned: formats.UNCOUNTED_MAX_LENGTH)"
    if name == "hostname" and "xn--" in data.lower():
        return "A-labels (xn--) are not decoded (warned: formats.LOOSER)"
    if name == "uri-template" and "apostrophe" in description:
        return "RFC 6570's literals exclude \"'\" (%x27); the suite accepts it"
    return None


def _suite_cases() -> list[tuple[str, str, str, bool]]:
    cases = []
    for path in sorted(SUITE.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            name = group["schema"].get("format")
            if name not in FORMAT_PATTERNS:
                continue
            for case in group["tests"]:
                if isinstance(case["data"], str):
                    cases.append((name, case["description"], case["data"], case["valid"]))
    return cases


SUITE_CASES = _suite_cases()


def _schema(name: str) -> dict:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string",
            "format": name}


_MATCHERS: dict[str, SchemaMatcher] = {}


def _matcher(name: str) -> SchemaMatcher:
    if name not in _MATCHERS:
        _MATCHERS[name] = SchemaMatcher(_schema(name))
    return _MATCHERS[name]


def _oracle(name: str):
    return jsonschema.Draft202012Validator(_schema(name), format_checker=FORMAT_CHECKER)


def test_every_draft_2020_12_format_is_asserted_or_explained():
    draft = {"date", "time", "date-time", "duration", "email", "idn-email", "hostname",
             "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
             "uri-template", "json-pointer", "relative-json-pointer", "regex", "uuid"}
    assert draft == set(FORMAT_PATTERNS) | set(NOT_ENFORCED) | set(GRAMMAR_FORMATS)
    assert not set(FORMAT_PATTERNS) & set(NOT_ENFORCED)
    assert not (set(FORMAT_PATTERNS) | set(NOT_ENFORCED)) & set(GRAMMAR_FORMATS)


@pytest.mark.parametrize("name", sorted(set(FORMAT_PATTERNS) - set(LOOSER)))
def test_format_translates_without_warning(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", GrammarWarning)
        translate_schema(_schema(name))
    assert _matcher(name).warnings == []


@pytest.mark.parametrize("name", sorted(LOOSER))
def test_looser_format_warns_with_its_reason(name):
    assert set(LOOSER) <= set(FORMAT_PATTERNS)
    matcher = _matcher(name)
    assert [warning.keyword for warning in matcher.warnings] == ["format"]
    assert LOOSER[name] in str(matcher.warnings[0])


@pytest.mark.parametrize("name", sorted(NOT_ENFORCED))
def test_unenforced_format_warns_with_its_reason(name):
    matcher = SchemaMatcher(_schema(name))
    assert [warning.keyword for warning in matcher.warnings] == ["format"]
    assert NOT_ENFORCED[name] in str(matcher.warnings[0])


@pytest.mark.parametrize("name", sorted(FORMAT_PATTERNS))
def test_hand_written_cases(name):
    matcher, validator = _matcher(name), _oracle(name)
    for text in VALID[name]:
        assert matcher.accepts(json.dumps(text)), text
        assert validator.is_valid(text) or name in ONE_WAY, text
    for text in INVALID[name]:
        assert not matcher.accepts(json.dumps(text)), text
        assert not validator.is_valid(text) or name in ONE_WAY, text


@pytest.mark.parametrize("name,description,data,valid", SUITE_CASES,
                         ids=[f"{case[0]}:{case[1]}" for case in SUITE_CASES])
def test_json_schema_test_suite_format(name, description, data, valid):
    accepted = _matcher(name).accepts(json.dumps(data))
    if suite_disagreement(name, description, data) is None:
        assert accepted == valid
    elif name in LOOSER:
        assert accepted, "a looser format accepts what the suite refuses, never the reverse"


@pytest.mark.parametrize("name", sorted(FORMAT_PATTERNS))
def test_escaped_spellings_of_non_ascii_are_accepted(name):
    """Formats accept printable ASCII raw only and other characters in any
    JSON spelling (``ensure_ascii`` escapes included)."""
    matcher = _matcher(name)
    for text in VALID[name]:
        assert matcher.accepts(json.dumps(text, ensure_ascii=True)), text
        assert matcher.accepts(json.dumps(text, ensure_ascii=False)), text


@pytest.mark.parametrize("name", sorted(FORMAT_PATTERNS))
def test_random_walks_satisfy_the_checker(name):
    matcher, validator = _matcher(name), _oracle(name)
    if name in ("uri-template", "relative-json-pointer"):
        validator = None  # see the module docstring and ONE_WAY
    rng = random.Random(name)
    for _ in range(60):
        walk = matcher.random_walk(rng, max_bytes=120)
        if walk is not None:
            value = json.loads(walk)
            assert _matcher(name).accepts(json.dumps(value))
            if validator is not None:
                assert validator.is_valid(value), walk
