"""Every construct of both dialects (docs/design.md section 3), checked against an
equivalent Python ``re`` pattern on every string over a small alphabet, plus
AST-level facts (spans, literal bytes, class ranges) and Lark-free syntax
details.  The normalized grammar is run by the plain LNF Earley of
``support/lnf_reference.py``.
"""

from __future__ import annotations

import itertools
import re

import pytest

from support.lnf_reference import LNFRecognizer

from grammask.grammar import Grammar
from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    Literal,
    Regex,
    Repeat,
    RuleRef,
    Sequence,
    Substrings,
)
from grammask.grammar.gbnf import parse_gbnf
from grammask.grammar.kbnf import parse_kbnf

CONSTRUCTS = [
    # KBNF
    ("kbnf", 'start ::= "a" | "b" "c";', r"a|bc", "abc", 4),
    ("kbnf", 'start ::= ["a"] "b";', r"a?b", "ab", 4),
    ("kbnf", 'start ::= {"ab"} "c";', r"(ab)*c", "abc", 6),
    ("kbnf", 'start ::= "a"+ "b"?;', r"a+b?", "ab", 5),
    ("kbnf", 'start ::= "a"* | "b";', r"a*|b", "ab", 4),
    ("kbnf", 'start = "a";\nstart = "b" start;', r"b*a", "ab", 5),
    ("kbnf", 'start ::= (* comment *) "a" (* another\n one *) "b";', r"ab", "ab", 3),
    ("kbnf", "start ::= 'a\\'' | \"\\\"\";", r"a'|\"", "a'\"", 3),
    ("kbnf", 'start ::= #"[ab]+c";', r"[ab]+c", "abc", 5),
    ("kbnf", 'start ::= #"\\d+" "-" #"\\\\d{2}";', r"[0-9]+-[0-9]{2}", "01-", 5),
    ("kbnf", 'start ::= #e"a+" "b";', r"ab", "ab", 4),
    ("kbnf", 'start ::= #e".*c";', r"[ab]*c", "abc", 4),
    ("kbnf", 'start ::= "<" #ex"ab" ">";', r"<(?:(?!ab).)*>", "ab<>", 5),
    ("kbnf", 'start ::= #substrs"abc" "!";', r"(?:|a|b|c|ab|bc|abc)!", "abc!", 5),
    ("kbnf", 'start ::= "\\x41\\u0042\\u{43}" | "\\t";', r"ABC|\t", "ABC\t", 4),
    ("kbnf", 'start ::= x-y_2;\nx-y_2 ::= "q";', r"q", "q", 2),
    ("kbnf", 'start ::= start "a" | "b";', r"ba*", "ab", 5),
    ("kbnf", 'start ::= "a" ("b" | ) "c";', r"ab?c", "abc", 4),
    ("kbnf", 'start ::= #"(?i:ab)";', r"(?i:ab)", "abAB", 3),
    # GBNF
    ("gbnf", 'root ::= "a"{2}', r"a{2}", "a", 4),
    ("gbnf", 'root ::= "a"{2,}', r"a{2,}", "a", 5),
    ("gbnf", 'root ::= "a"{1,3} "b"', r"a{1,3}b", "ab", 5),
    ("gbnf", 'root ::= ("a" | "bc"){0,2}', r"(a|bc){0,2}", "abc", 5),
    ("gbnf", 'root ::= "a"{ 1 , 2 }', r"a{1,2}", "a", 3),
    ("gbnf", "root ::= [^a]", r"[^a]", "abc", 2),
    ("gbnf", "root ::= [a-]+", r"[a\-]+", "a-b", 3),
    ("gbnf", "root ::= [\\x61-\\x62\\]]*", r"[a-b\]]*", "ab]c", 3),
    ("gbnf", 'root ::= . "b"', r".b", "ab", 3),
    ("gbnf", 'root ::= ws "a"\nws ::= | " "', r" ?a", " a", 3),
    ("gbnf", 'root ::= "a" |\n    "b"', r"a|b", "ab", 2),
    ("gbnf", 'root ::= ( "a"\n   "b" ) # trailing comment\n# full-line comment\n', r"ab", "ab", 3),
    ("gbnf", "root ::= my-rule_1\nmy-rule_1 ::= \"x\"", r"x", "x", 2),
    ("gbnf", 'root ::= root "a" | "b"', r"ba*", "ab", 5),
    ("gbnf", 'root ::= ("a" root "b")?', r"|ab|aabb|aaabbb", "ab", 6),
    ("gbnf", 'root ::= "a"*  "a"*', r"a*", "a", 4),
    ("gbnf", 'root ::= ""', r"", "a", 2),
    ("gbnf", "root ::= \"a\"\r\nx ::= \"b\"\r\n", r"a", "ab", 2),
]


def build(dialect: str, text: str) -> Grammar:
    return Grammar.from_ebnf(text) if dialect == "kbnf" else Grammar.from_gbnf(text)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dialect,text,pattern,alphabet,max_length", CONSTRUCTS,
                         ids=[f"{row[0]}-{index}" for index, row in enumerate(CONSTRUCTS)])
def test_construct_matches_python_regex(dialect, text, pattern, alphabet, max_length):
    recognizer = LNFRecognizer(build(dialect, text).lnf)
    compiled = re.compile(pattern, re.DOTALL)
    for length in range(max_length + 1):
        for chars in itertools.product(alphabet, repeat=length):
            candidate = "".join(chars)
            expected = compiled.fullmatch(candidate) is not None
            assert recognizer.accepts(candidate.encode()) == expected, candidate


def test_gbnf_literal_escapes_are_code_points():
    ast = parse_gbnf('root ::= "\\x41\\xff\\u00e9\\U0001F600\\t\\r\\n\\"\\\\\\[\\]"')
    assert ast.rules[0].body == Literal("A\u00ff\u00e9\U0001F600\t\r\n\"\\[]".encode("utf-8"))


def test_gbnf_class_ranges_and_negation():
    body = parse_gbnf("root ::= [^a-c\\u4e00-\\u9fff_]").rules[0].body
    assert body == CharClass(((0x61, 0x63), (0x4E00, 0x9FFF), (0x5F, 0x5F)), negated=True)
    assert parse_gbnf("root ::= .").rules[0].body == AnyChar()


def test_gbnf_non_ascii_class_matches_utf8():
    grammar = Grammar.from_gbnf("root ::= [\u3041-\u309f]+ [a-z\\u4e00-\\u9fff]")
    recognizer = LNFRecognizer(grammar.lnf)
    assert recognizer.accepts("\u3053\u3093\u4e2d".encode())
    assert recognizer.accepts("\u3053z".encode())
    assert not recognizer.accepts("\u3053\u30a2".encode())
    assert recognizer.viable_prefix("\u3053".encode() + "\u4e2d".encode()[:2])
    assert not recognizer.viable_prefix("\u3053".encode() + b"\xff")


def test_kbnf_regex_kinds_and_substrings():
    rules = parse_kbnf('start ::= #"a" #e"b" #ex"c" #substrs"d" #\'e\';').rules
    assert rules[0].body.items == (Regex("a"), Regex("b", "early_end"), Regex("c", "complement"),
                                   Substrings("d"), Regex("e"))


def test_kbnf_option_and_repetition_brackets():
    body = parse_kbnf('start ::= ["a"] {"b" | c};').rules[0].body
    assert body == Sequence((Repeat(Literal(b"a"), 0, 1),
                             Repeat(Alternation((Literal(b"b"), RuleRef("c"))), 0, None)))


def test_every_parsed_node_has_a_span_covering_its_text():
    text = 'root ::= "a" ( b | [c-d]+ ){2,3} .\nb ::= "x"'
    ast = parse_gbnf(text)
    stack = [rule.body for rule in ast.rules]
    while stack:
        node = stack.pop()
        assert node.span is not None and 0 <= node.span.start < node.span.end <= len(text)
        if isinstance(node, RuleRef):
            assert text[node.span.start:node.span.end] == node.name
        if isinstance(node, Literal):
            assert text[node.span.start:node.span.end] == '"' + node.value.decode() + '"'
        if isinstance(node, (Sequence, Alternation)):
            stack.extend(node.items)
        elif isinstance(node, Repeat):
            stack.append(node.item)
    assert all(rule.span is not None for rule in ast.rules)


def test_from_regex():
    grammar = Grammar.from_regex("[a-c]{2}x|y*")
    assert grammar.start_accepts_empty
    recognizer = LNFRecognizer(grammar.lnf)
    for text, expected in [(b"abx", True), (b"yyy", True), (b"", True), (b"ax", False), (b"abxy", False)]:
        assert recognizer.accepts(text) == expected


def test_repr_and_properties():
    grammar = Grammar.from_gbnf('root ::= "a" b\nb ::= [0-9]+')
    text = repr(grammar)
    assert text.startswith("Grammar(start='root'") and "fingerprint=" in text
    assert grammar.ast.start == "root" and grammar.lnf.nonterminal_names[0] == "root"
    assert grammar.warnings == [] and not grammar.start_accepts_empty
    assert len(grammar.fingerprint) == 64
