"""``format: email`` (RFC 5321 ``Mailbox``: dot-string or quoted-string local
part, domain or address literal) and its negation, against a checker written
here from the ABNF of RFC 5321 sections 4.1.2 and 4.1.3 (``jsonschema``'s
checker asks only for an "@", so it cannot judge either direction).

The checker parses by hand (no regular expression), so it shares no code
with ``formats._EMAIL``.  Strings: hand-written ones, the
JSON-Schema-Test-Suite's, and strings Hypothesis draws (derandomized by the
conftest profile) from pieces of mailboxes and single characters, so that
near misses are common.  Each must be accepted by the ``format`` schema iff
the checker accepts it, and by ``not: {format: email}`` iff it does not."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.schema_matcher import SchemaMatcher

_ATEXT = set(string.ascii_letters + string.digits + "!#$%&'*+-/=?^_`{|}~")
_LET_DIG = set(string.ascii_letters + string.digits)
_HEXDIG = set(string.hexdigits)


def _dot_string(text: str) -> bool:
    return all(atom and set(atom) <= _ATEXT for atom in text.split("."))


def _quoted_string(text: str) -> bool:
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return False
    inner, index = text[1:-1], 0
    while index < len(inner):
        code = ord(inner[index])
        if code == 92:   # quoted-pairSMTP: backslash, then %d32-126
            if index + 1 == len(inner) or not 32 <= ord(inner[index + 1]) <= 126:
                return False
            index += 2
        elif 32 <= code <= 33 or 35 <= code <= 91 or 93 <= code <= 126:
            index += 1
        else:
            return False
    return True


def _domain(text: str) -> bool:
    def sub_domain(label):
        return (bool(label) and label[0] in _LET_DIG and label[-1] in _LET_DIG
                and set(label) <= _LET_DIG | {"-"})
    return all(sub_domain(label) for label in text.split("."))


def _snum(text: str) -> bool:
    return 1 <= len(text) <= 3 and text.isascii() and text.isdigit() and int(text) <= 255


def _ipv4(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(_snum(part) for part in parts)


def _hex(group: str) -> bool:
    return 1 <= len(group) <= 4 and set(group) <= _HEXDIG


def _ipv6(text: str) -> bool:
    if text.count("::") > 1:
        return False
    if "::" in text:
        left, right = text.split("::")
        before = left.split(":") if left else []
        after = right.split(":") if right else []
        limit = 6
        if after and "." in after[-1]:
            if not _ipv4(after.pop()):
                return False
            limit = 4
        return (all(_hex(group) for group in before + after)
                and len(before) + len(after) <= limit)
    groups = text.split(":")
    if "." in groups[-1]:
        return len(groups) == 7 and all(map(_hex, groups[:6])) and _ipv4(groups[6])
    return len(groups) == 8 and all(map(_hex, groups))


def _address_literal(text: str) -> bool:
    if len(text) < 2 or text[0] != "[" or text[-1] != "]":
        return False
    inner = text[1:-1]
    if inner[:5].lower() == "ipv6:":
        return _ipv6(inner[5:])
    return _ipv4(inner)


def rfc5321_mailbox(text: str) -> bool:
    if text.startswith('"'):
        index = 1
        while index < len(text) and text[index] != '"':
            index += 2 if text[index] == "\\" else 1
        local, at, domain = text[:index + 1], text[index + 1:index + 2], text[index + 2:]
        if not _quoted_string(local):
            return False
    else:
        local, at, domain = text.partition("@")
        if not _dot_string(local):
            return False
    if at != "@":
        return False
    return _address_literal(domain) if domain.startswith("[") else _domain(domain)


HAND_WRITTEN = [
    "a@b", "first.last@example.com", '"a b"@c', '""@c', '"a\\\\"@c', '"a\\"@c', '"a"b"@c',
    "a@[1.2.3.4]", "a@[001.2.3.255]", "a@[1.2.3.256]", "a@[IPv6:::1]", "a@[ipv6:::]",
    "a@[IPv6:1:2:3:4:5:6:7:8]", "a@[IPv6:1:2:3:4:5:6:7::]", "a@[IPv6:1:2:3:4:5:6::]",
    "a@[IPv6:1::2:3:4:5:6:7]", "a@[IPv6:1:2:3:4:5:6:1.2.3.4]", "a@[IPv6:1:2:3:4::1.2.3.4]",
    "a@[IPv6:1:2:3:4:5::1.2.3.4]", "a@[IPv6:::1.2.3.4]", "a@[IPv6:1.2.3.4]", "a@[x:y]",
    "a@[::1]", "a@[1.2.3]", "a@", "@b", "a", "a..b@c", ".a@b", "a.@b", "a@-b", "a@b-", "a@b..c",
    '"\u00e9"@c', "\u00e9@c", "a@b@c", '"a@b"@c', "a b@c", '"a"@[IPv6:12345::]',
]


@pytest.fixture(scope="module")
def matchers():
    return (SchemaMatcher({"type": "string", "format": "email"}),
            SchemaMatcher({"type": "string", "not": {"format": "email"}}))


def _check(matchers, text: str) -> None:
    positive, negative = matchers
    assert positive.warnings == [] and negative.warnings == []
    expected = rfc5321_mailbox(text)
    assert positive.accepts(json.dumps(text)) == expected, text
    assert negative.accepts(json.dumps(text)) != expected, text


def test_hand_written(matchers):
    verdicts = [rfc5321_mailbox(text) for text in HAND_WRITTEN]
    assert 10 < sum(verdicts) < len(HAND_WRITTEN) - 10
    for text in HAND_WRITTEN:
        _check(matchers, text)


_PIECES = ["a", "Z", "0", "9", "f", ".", "@", '"', "\\", " ", "[", "]", ":", "::", "-", "~",
           "IPv6:", "ipv6:", "255", "256", "1.2.3.4", "ab", "\u00e9", "\x7f", "(", ","]


@settings(max_examples=1500, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_generated_strings(matchers, text):
    _check(matchers, text)


@settings(max_examples=600, suppress_health_check=list(HealthCheck))
@given(st.sampled_from([text for text in HAND_WRITTEN if rfc5321_mailbox(text)]),
       st.integers(0, 40), st.sampled_from(_PIECES + [""]))
def test_edited_mailboxes(matchers, text, position, piece):
    position %= len(text) + 1
    _check(matchers, text[:position] + piece + text[position + 1:])


def test_long_length_bound_counts_beside_the_plain_subset():
    """``maxLength: 1024`` beside the whole format passes the DFA limits: the
    bound is counted beside the plain subset (``formats.PLAIN_SUBSETS``),
    silently stricter (quoted local parts and address literals refused),
    never looser; a bound that fits keeps the whole format."""
    long_bound = SchemaMatcher({"type": "string", "format": "email", "maxLength": 1024})
    short_bound = SchemaMatcher({"type": "string", "format": "email", "maxLength": 20})
    assert long_bound.warnings == [] and short_bound.warnings == []
    for text in HAND_WRITTEN + ["a" * 1020 + "@b.c", "a" * 1021 + "@b.c", "a" * 16 + "@b.c"]:
        plain = rfc5321_mailbox(text) and '"' not in text and "[" not in text
        assert long_bound.accepts(json.dumps(text)) == (plain and len(text) <= 1024), text
        assert short_bound.accepts(json.dumps(text)) == (rfc5321_mailbox(text)
                                                         and len(text) <= 20), text
