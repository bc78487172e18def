"""The AST reference recognizer (support/ast_reference.py) against the normalized
grammar on byte strings that split UTF-8 characters.

The two sides share nothing: the reference decodes UTF-8 itself and matches
regexes with the ``regex`` module; the LNF side runs the Rust DFAs byte by
byte inside the plain LNF Earley.  Inputs are drawn from fragments that
include whole and partial 2-, 3- and 4-byte characters and invalid bytes, so
prefix answers in the middle of a character are compared too.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.lnf_reference import LNFRecognizer
from support.ast_reference import ReferenceRecognizer, utf8_completion_interval

from grammask.grammar import Grammar

FRAGMENTS = [b"a", b"z", b"0", b" ", b'"', "\u00e9".encode(), "\u4e2d".encode(), "\U0001F600".encode(),
             "\u00e9".encode()[:1], "\u4e2d".encode()[:1], "\u4e2d".encode()[:2], "\U0001F600".encode()[:3],
             b"\xff", b"\x80", b"\xed\xa0"]

GRAMMARS = [
    ("gbnf", "root ::= [a-z\\u4e00-\\u9fff]+ \" \"?"),
    ("gbnf", "root ::= [^a-z]* \"z\""),
    ("gbnf", "root ::= . . \"a\"?"),
    ("kbnf", 'start ::= #"[\\x{e9}a]+0" | #"\\p{Han}+";'),
    ("kbnf", 'start ::= "\\"" #ex"\\"" "\\"";'),
    ("kbnf", 'start ::= #e"[^0]*0" " ";'),
    ("kbnf", 'start ::= #substrs"a\u00e9\u4e2d\U0001F600z" "0";'),
    ("kbnf", 'start ::= #"(?s:.){2}" | #"\\x{1F600}z";'),
]


@pytest.fixture(scope="module", params=range(len(GRAMMARS)), ids=[text for _, text in GRAMMARS])
def pair(request):
    dialect, text = GRAMMARS[request.param]
    grammar = Grammar.from_gbnf(text) if dialect == "gbnf" else Grammar.from_ebnf(text)
    return ReferenceRecognizer(grammar.ast), LNFRecognizer(grammar.lnf)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=5))
def test_reference_matches_lnf_on_split_utf8(pair, fragments):
    reference, lnf = pair
    data = b"".join(fragments)
    for cut in range(len(data) + 1):
        prefix = data[:cut]
        assert reference.viable_prefix(prefix) == lnf.viable_prefix(prefix), prefix
    assert reference.accepts(data) == lnf.accepts(data), data


def test_utf8_completion_interval():
    assert utf8_completion_interval(b"\xe4") == (0x4000, 0x4FFF)
    assert utf8_completion_interval(b"\xe0") == (0x800, 0xFFF)
    assert utf8_completion_interval(b"\xed") == (0xD000, 0xD7FF)
    assert utf8_completion_interval(b"\xf0\x9f") == (0x1F000, 0x1FFFF)
    assert utf8_completion_interval(b"\xf4\x90") is None
    assert utf8_completion_interval(b"\xc0") is None
    assert utf8_completion_interval(b"\x80") is None
    assert utf8_completion_interval(b"\xc3\xa9") is None
