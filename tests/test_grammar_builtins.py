"""Built-ins ``name!(...)`` (grammar/builtins.py) in KBNF and GBNF.

Each built-in's language is checked against a plain, independent Python
reference (substring search, ``str.endswith`` scans, ``re`` full matches,
hand-written list recognizers), never against grammask's own output: the
grammar side is the Cython Earley core fed the UTF-8 bytes one at a time.
Strings come from hypothesis (derandomized) over small alphabets that make
stop phrases, delimiters and excepted strings likely.  Both spellings (KBNF
and GBNF) of each grammar are checked against the same reference.  Invalid
uses must raise typed errors at the right line and column.
"""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask._core.earley import EarleyRecognizer, compiled_tables
from grammask.errors import GrammarSyntaxError, LimitExceeded
from grammask.grammar import Grammar
from grammask.grammar.ast import Regex, RuleRef, TokenTerminal
from grammask.grammar.gbnf import parse_gbnf
from grammask.grammar.kbnf import parse_kbnf

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)


class Accepts:
    """Whole-string acceptance by the Earley core over the grammar's LNF."""

    def __init__(self, grammar: Grammar):
        self.tables = compiled_tables(grammar.lnf)

    def __call__(self, text: str) -> bool:
        recognizer = EarleyRecognizer(self.tables)
        for byte in text.encode("utf-8"):
            if not recognizer.push_byte(byte):
                return False
        return recognizer.is_accepting()


def both(kbnf: str, gbnf: str) -> list[Accepts]:
    """Recognizers for the KBNF and the GBNF spelling of one grammar."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return [Accepts(Grammar.from_ebnf(kbnf)), Accepts(Grammar.from_gbnf(gbnf))]


def check(recognizers, text, expected):
    for dialect, accepts in zip(("kbnf", "gbnf"), recognizers):
        assert accepts(text) == expected, (dialect, text, expected)


# --- except! -------------------------------------------------------------------

EXCEPT_LITERAL = both("start ::= except!('\\n\\n') '.';", 'root ::= except!("\\n\\n") "."')
EXCEPT_RULE = both("start ::= except!(A) ';'; A ::= 'ab' | 'c' 'd'; A ::= 'é';",
                   'root ::= except!(A) ";"\nA ::= "ab" | "c" "d" | "é"')
EXCEPT_BOUNDED = both("start ::= except!('ab', 3) 'X';", 'root ::= except!("ab", 3) "X"')


def except_reference(body: str, excepted, max_chars=None) -> bool:
    """kbnf's except!: nonempty, no occurrence of any excepted string, at most max_chars."""
    return (body != "" and not any(x in body for x in excepted)
            and (max_chars is None or len(body) <= max_chars))


def splits_reference(text: str, end: str, member) -> bool:
    """``text`` is ``body + end`` with ``member(body)`` (the end is a fixed string)."""
    return text.endswith(end) and member(text[:len(text) - len(end)])


@SETTINGS
@given(st.text(alphabet="a\n.x", max_size=8))
def test_except_literal(text):
    expected = splits_reference(text, ".", lambda body: except_reference(body, ["\n\n"]))
    check(EXCEPT_LITERAL, text, expected)


@SETTINGS
@given(st.text(alphabet="abcdé;", max_size=8))
def test_except_rule(text):
    expected = splits_reference(text, ";", lambda body: except_reference(body, ["ab", "cd", "é"]))
    check(EXCEPT_RULE, text, expected)


@SETTINGS
@given(st.text(alphabet="abXé", max_size=7))
def test_except_bounded(text):
    expected = splits_reference(text, "X", lambda body: except_reference(body, ["ab"], 3))
    check(EXCEPT_BOUNDED, text, expected)


def test_except_examples():
    literal = EXCEPT_LITERAL
    check(literal, "a\na.", True)
    check(literal, "a\n\na.", False)
    check(literal, ".", False)          # except! is never empty (as in kbnf)
    check(literal, "..", True)
    bounded = EXCEPT_BOUNDED
    check(bounded, "éééX", True)        # the bound counts characters
    check(bounded, "aaaaX", False)


def test_except_rule_counts_as_used():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grammar = Grammar.from_ebnf("start ::= except!(A); A ::= 'a';")
    assert grammar.warnings == []


# --- any!, paragraph_token! ------------------------------------------------------------

@pytest.mark.parametrize("parse, text", [
    (parse_kbnf, "start ::= any! 'x' paragraph_token! any!'y';"),
    (parse_gbnf, 'root ::= any! "x" paragraph_token! any!"y"'),
])
def test_token_terminals_parse(parse, text):
    body = parse(text).rules[0].body
    kinds = [item.kind for item in body.items if isinstance(item, TokenTerminal)]
    assert kinds == ["any", "paragraph", "any"]
    assert text[body.items[0].span.start:body.items[0].span.end] == "any!"


def test_zero_argument_builtin_before_a_group():
    body = parse_kbnf("start ::= any! ('a');").rules[0].body
    assert isinstance(body.items[0], TokenTerminal) and body.items[1].value == b"a"


# --- text_until! -----------------------------------------------------------------------

def text_until_reference(text: str, stops) -> bool:
    """Ends with a stop phrase, and no proper prefix does (the first stop ends it)."""
    ends = [cut for cut in range(1, len(text) + 1) if any(text[:cut].endswith(stop) for stop in stops)]
    return bool(ends) and ends[0] == len(text)


@pytest.mark.parametrize("stops", [("END",), ("abc", "b"), ("aa",), ("ab", "ba", "é\n")])
def test_text_until(stops):
    kbnf_args = ", ".join(repr(stop).replace("\\n", "\\n") for stop in stops)
    gbnf_args = ", ".join('"' + stop.replace("\n", "\\n") + '"' for stop in stops)
    recognizers = both(f"start ::= text_until!({kbnf_args});", f"root ::= text_until!({gbnf_args})")
    alphabet = "".join(sorted(set("".join(stops) + "x")))

    @SETTINGS
    @given(st.text(alphabet=alphabet, max_size=9))
    def run(text):
        check(recognizers, text, text_until_reference(text, stops))

    run()
    for stop in stops:
        check(recognizers, stop, text_until_reference(stop, stops))


def test_text_until_reference_agrees_with_re():
    """The reference against ``re``: the earliest end of any stop's first
    occurrence.  (A lazy ``.*?(abc|b)`` would stop "abc" at "abc", since the
    alternation prefers the longer stop starting at the same place; the stop
    that ends first is "b", so text_until!('abc', 'b') accepts "ab" only.)"""
    stops = ("abc", "b")
    for text in ["b", "ab", "abc", "xxabc", "aab", "abab", "", "xac"]:
        first_ends = [m.end() for m in (re.search(re.escape(stop), text) for stop in stops) if m]
        assert text_until_reference(text, stops) == (min(first_ends, default=-1) == len(text)), text


# --- substring_of! ---------------------------------------------------------------------

SUBSTRING = both("start ::= '<' substring_of!('hello wörld') '>';",
                 'root ::= "<" substring_of!("hello wörld") ">"')


@SETTINGS
@given(st.text(alphabet="helo wörd", max_size=6))
def test_substring_of(text):
    check(SUBSTRING, f"<{text}>", text in "hello wörld")


# --- delimited_list! ----------------------------------------------------------------------

def list_reference(text: str, low: int, high) -> bool:
    if text == "":
        return low == 0
    items = text.split(", ")
    return (all(re.fullmatch("[a-z]+", item) for item in items)
            and low <= len(items) and (high is None or len(items) <= high))


@pytest.mark.parametrize("bounds", [(), (0,), (2,), (0, 2), (1, 1), (2, 3), (0, 0)])
def test_delimited_list(bounds):
    low = bounds[0] if bounds else 1
    high = bounds[1] if len(bounds) > 1 else None
    extra = "".join(f", {bound}" for bound in bounds)
    recognizers = both(f"start ::= delimited_list!(#'[a-z]+', ', '{extra});",
                       f'root ::= delimited_list!([a-z]+, ", "{extra})')

    @SETTINGS
    @given(st.text(alphabet="ab, ", max_size=10))
    def run(text):
        check(recognizers, text, list_reference(text, low, high))

    run()
    for text in ["", "a", "a, b", "a, b, c", "a, b, c, d"]:
        check(recognizers, text, list_reference(text, low, high))


def test_nested_delimited_list():
    recognizers = both("start ::= delimited_list!('[' delimited_list!('x' | 'yy', ',', 0) ']', ';');",
                       'root ::= delimited_list!("[" delimited_list!("x" | "yy", ",", 0) "]", ";")')

    def reference(text):
        return all(re.fullmatch(r"\[((x|yy)(,(x|yy))*)?\]", part) for part in text.split(";"))

    @SETTINGS
    @given(st.text(alphabet="[]x,y;", max_size=10))
    def run(text):
        check(recognizers, text, reference(text))

    run()


# --- delimited_subsequence_of! -----------------------------------------------------------

ITEMS = ("a", "bb", "c", "bb")


def subsequence_reference(text: str, delim: str, items) -> bool:
    """A nonempty in-order subsequence of ``items``, joined by ``delim``: a
    greedy-free check over every choice of item positions."""
    def match(rest: str, first_index: int, first: bool) -> bool:
        if rest == "" and not first:
            return True
        if not first:
            if not rest.startswith(delim):
                return False
            rest = rest[len(delim):]
        return any(rest.startswith(items[index]) and match(rest[len(items[index]):], index + 1, False)
                   for index in range(first_index, len(items)))
    return match(text, 0, True)


SUBSEQUENCE = both("start ::= delimited_subsequence_of!(',', 'a', 'b' 'b', 'c', 'bb');",
                   'root ::= delimited_subsequence_of!(",", "a", "b" "b", "c", "bb")')


@SETTINGS
@given(st.text(alphabet="abc,", max_size=10))
def test_delimited_subsequence_of(text):
    check(SUBSEQUENCE, text, subsequence_reference(text, ",", ITEMS))


def test_delimited_subsequence_examples():
    for text, expected in [("a", True), ("a,c", True), ("c,a", False), ("bb,bb", True),
                           ("bb,bb,bb", False), ("a,bb,c,bb", True), ("", False), ("a,", False)]:
        check(SUBSEQUENCE, text, expected)


def test_delimited_subsequence_size():
    """N items: fewer than N helper rules in the AST; O(N log N) LNF productions
    (doubling N a bit more than doubles them, never quadruples)."""
    def n_productions(n_items: int) -> int:
        items = ", ".join(f"'w{index}'" for index in range(n_items))
        grammar = Grammar.from_ebnf(f"start ::= delimited_subsequence_of!(' ', {items});")
        assert len(grammar.ast.rules) <= n_items
        return grammar.lnf.sizes()["n_productions"]

    small, large = n_productions(80), n_productions(160)
    assert large <= 2.5 * small, (small, large)


def test_delimited_subsequence_of_one_item():
    recognizers = both("start ::= delimited_subsequence_of!(',', 'a' | 'b');",
                       'root ::= delimited_subsequence_of!(",", "a" | "b")')
    for text, expected in [("a", True), ("b", True), ("a,b", False), ("", False)]:
        check(recognizers, text, expected)


def test_helper_names_avoid_user_names():
    grammar = Grammar.from_ebnf("start ::= delimited_list!(('a' | 'b') start__item1, ',');"
                                "start__item1 ::= 'z';")
    accepts = Accepts(grammar)
    assert accepts("az,bz") and not accepts("a,b")


# --- errors ------------------------------------------------------------------------------

ERRORS = [
    # (dialect, text, error type, line, column, message fragment)
    ("kbnf", "start ::= 'a' excep!('x');", GrammarSyntaxError, 1, 15, "did you mean 'except!'"),
    ("gbnf", 'root ::= "a"\nx ::= nope!', GrammarSyntaxError, 2, 7, "unknown built-in 'nope!'"),
    ("kbnf", "start ::= substring_of!('a', 'b');", GrammarSyntaxError, 1, 11, "takes 1 argument, got 2"),
    ("gbnf", "root ::= text_until!()", GrammarSyntaxError, 1, 10, "at least 1 argument"),
    ("kbnf", "start ::= delimited_list!('a');", GrammarSyntaxError, 1, 11, "2 to 4 arguments"),
    ("kbnf", "start ::= text_until!('a', #'b');", GrammarSyntaxError, 1, 28, "expects a string as a stop"),
    ("kbnf", "start ::= text_until!('');", GrammarSyntaxError, 1, 23, "nonempty string"),
    ("kbnf", "start ::= delimited_list!('a', ',', x);", GrammarSyntaxError, 1, 37, "expects an integer"),
    ("gbnf", 'root ::= delimited_list!("a", ",", 3, 2)', GrammarSyntaxError, 1, 36, "below its minimum"),
    ("kbnf", "start ::= except!('a', 0);", GrammarSyntaxError, 1, 24, "at least 1"),
    ("kbnf", "start ::= except!('');", GrammarSyntaxError, 1, 19, "empty string"),
    ("kbnf", "start ::= except!(#'a+');", GrammarSyntaxError, 1, 19, "a string or a rule name"),
    ("kbnf", "start ::= except!(A);\nA ::= 'a' B;\nB ::= 'b';", GrammarSyntaxError, 2, 11,
     "found the rule name 'B'"),
    ("kbnf", "start ::= except!(A);\nA ::= 'a'*;", GrammarSyntaxError, 2, 7, "found a repetition"),
    ("gbnf", 'root ::= except!(A)\nA ::= "a" | [b-c]', GrammarSyntaxError, 2, 13,
     "found a character class"),
    ("kbnf", "start ::= except!(A);\nA ::= 'a' | '';", GrammarSyntaxError, 2, 13, "empty string"),
    ("kbnf", "start ::= except!(Aa);\nA ::= 'a';", GrammarSyntaxError, 1, 19, "never defined"),
    ("kbnf", "start ::= 'a', 'b';", GrammarSyntaxError, 1, 14, "unexpected ','"),
    ("kbnf", "start ::= text_until!(('a', 'b'));", GrammarSyntaxError, 1, 27, "inside a group"),
    ("kbnf", "start ::= text_until!('a',);", GrammarSyntaxError, 1, 27, "expected an argument"),
    ("kbnf", "start ::= text_until 'a';", None, 0, 0, ""),
    ("kbnf", "start ::= text_until!'a';", GrammarSyntaxError, 1, 22, "expected '(' after"),
    ("gbnf", 'root ::= text_until!("a"', GrammarSyntaxError, 1, 25, "expected ')'"),
    ("kbnf", "start ::= except!('a', 20000);", LimitExceeded, 0, 0, "max_repetition"),
]


@pytest.mark.parametrize("dialect, text, error, line, column, fragment", ERRORS)
def test_errors(dialect, text, error, line, column, fragment):
    parse = parse_kbnf if dialect == "kbnf" else parse_gbnf
    if error is None:
        assert parse(text).rules[0].body.items[0] == RuleRef("text_until")
        return
    with pytest.raises(error) as caught:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Grammar(parse(text))
    assert fragment in str(caught.value)
    if error is GrammarSyntaxError:
        assert (caught.value.line, caught.value.column) == (line, column), str(caught.value)
        assert "^" in caught.value.excerpt


def test_except_of_a_literal_is_one_complement_regex():
    body = parse_kbnf("start ::= except!('a.b', 2);").rules[0].body
    assert body == Regex(r"a\.b|\A\z|(?s:.){3}", "complement")


def test_token_terminals_from_both_dialects_mask_whole_tokens():
    import grammask

    kbnf = Grammar.from_ebnf("start ::= 'Name: ' paragraph_token! any! '\\n';")
    gbnf = Grammar.from_gbnf('root ::= "Name: " paragraph_token! any! "\\n"')
    assert kbnf.to_ebnf().replace("start", "root") == gbnf.to_ebnf()
    pieces = [b"<eos>", b"Name: ", b"Bob", b" Smith", b"\n", b"x\ny"]
    vocab = grammask.Vocabulary(pieces, eos_token_ids=[0], special_token_ids=[0])
    engine = grammask.Engine(kbnf, vocab)
    engine.try_accept_new_token(1)
    assert engine.compute_allowed_token_ids().tolist() == [1, 2, 3]   # no line break inside
    engine.try_accept_new_token(2)
    assert engine.compute_allowed_token_ids().tolist() == [1, 2, 3, 4, 5]   # any one token
    engine.try_accept_new_token(5)
    assert engine.compute_allowed_token_ids().tolist() == [4]
    engine.try_accept_new_token(4)
    assert engine.can_end() and engine.output_bytes() == b"Name: Bobx\ny\n"
