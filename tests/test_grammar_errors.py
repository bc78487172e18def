"""Grammar errors a user can act on: a table of bad grammars and the message
each must produce (lark's GRAMMAR_ERRORS idea), plus the position facts.

Each row: dialect, grammar text, error class, fragments the message must
contain, and (line, column) for syntax errors.  The caret excerpt is checked
to point at the reported column.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.config import Config
from grammask.errors import GrammarError, GrammarSyntaxError, LimitExceeded, RegexError
from grammask.grammar import Grammar

ERROR_TABLE = [
    # --- KBNF syntax -----------------------------------------------------------------
    ("kbnf", 'start ::= "a" "b"', GrammarSyntaxError, ["expected ';'", "end of input"], (1, 18)),
    ("kbnf", 'start ::= "a"\nnext ::= "b";', GrammarSyntaxError,
     ["expected ';' to end the previous rule", "'next'"], (2, 1)),
    ("kbnf", 'start ::= ("a";', GrammarSyntaxError, ["expected ')'", "opened at line 1, column 11"], (1, 15)),
    ("kbnf", 'start ::= "a"));', GrammarSyntaxError, ["unbalanced ')'"], (1, 14)),
    ("kbnf", 'start ::= ["a");', GrammarSyntaxError, ["unbalanced ')'", "expected ']'"], (1, 15)),
    ("kbnf", 'start := "a";', GrammarSyntaxError, ["expected '::=' or '='", "found ':'"], (1, 7)),
    ("kbnf", 'start ::= "abc;', GrammarSyntaxError, ["unterminated string"], (1, 11)),
    ("kbnf", 'start ::= "a\\q";', GrammarSyntaxError, ["unknown escape '\\q'"], (1, 13)),
    ("kbnf", 'start ::= "\\u12";', GrammarSyntaxError, ["expected 4 hexadecimal digits"], (1, 12)),
    ("kbnf", 'start ::= * "a";', GrammarSyntaxError, ["expected an expression before '*'"], (1, 11)),
    ("kbnf", "start ::= @;", GrammarSyntaxError, ["expected a name, a string", "found '@'"], (1, 11)),
    ("kbnf", "(* never closed", GrammarSyntaxError, ["unterminated comment", "'*)'"], (1, 1)),
    ("kbnf", '::= "a";', GrammarSyntaxError, ["expected a rule name"], (1, 1)),
    ("kbnf", 'start ::= #q"a";', GrammarSyntaxError, ["expected '#\"regex\"'"], (1, 11)),
    # --- GBNF syntax -----------------------------------------------------------------
    ("gbnf", 'root ::= "a"{3,2}', GrammarSyntaxError, ["repetition minimum 3 is above its maximum 2"], (1, 13)),
    ("gbnf", 'root ::= "a"{x}', GrammarSyntaxError, ["expected a repetition count", "found 'x'"], (1, 14)),
    ("gbnf", 'root ::= "a"{2', GrammarSyntaxError, ["expected '}'"], (1, 15)),
    ("gbnf", "root ::= [z-a]", GrammarSyntaxError, ["character range is out of order"], (1, 11)),
    ("gbnf", "root ::= [abc", GrammarSyntaxError, ["unterminated character class", "']'"], (1, 10)),
    ("gbnf", 'root ::= "a\\q"', GrammarSyntaxError, ["unknown escape '\\q'"], (1, 12)),
    ("gbnf", 'root ::= "\\ud800"', GrammarSyntaxError, ["U+D800", "not a Unicode scalar value"], (1, 11)),
    ("gbnf", 'root ::= "ab\nx ::= "c"', GrammarSyntaxError, ["unterminated string"], (1, 10)),
    ("gbnf", 'root "a"', GrammarSyntaxError, ["expected '::='", "'root'"], (1, 6)),
    ("gbnf", 'root ::= ("a"\nfoo ::= "b"', GrammarSyntaxError,
     ["expected ')' to close the group opened at line 1, column 10", "'foo'"], (2, 1)),
    ("gbnf", 'root ::= "a" "b" foo ::= "c"', GrammarSyntaxError,
     ["a rule ends at the end of its line", "'foo'"], (1, 18)),
    ("gbnf", 'root ::= ("a" | "b"', GrammarSyntaxError, ["expected ')'", "end of input"], (1, 20)),
    ("gbnf", "root ::= )", GrammarSyntaxError, ["unbalanced ')'"], (1, 10)),
    ("gbnf", 'root ::= "a" %', GrammarSyntaxError, ["found '%'"], (1, 14)),
    # --- names, start, language ---------------------------------------------------------
    ("kbnf", 'start ::= valeu;\nvalue ::= "1";', GrammarSyntaxError,
     ["rule 'valeu' is used in rule 'start' but never defined", "did you mean 'value'?"], (1, 11)),
    ("gbnf", 'root ::= expr\nexpr ::= numero\nnumber ::= [0-9]+', GrammarSyntaxError,
     ["'numero'", "rule 'expr'", "did you mean 'number'?"], (2, 10)),
    ("gbnf", 'root ::= zzz', GrammarSyntaxError, ["'zzz'", "never defined"], (1, 10)),
    ("kbnf", 'strat ::= "a";', GrammarError, ["start symbol 'start' is not defined", "did you mean 'strat'?",
                                              "start=..."], None),
    ("gbnf", "", GrammarError, ["start symbol 'root' is not defined"], None),
    ("kbnf", 'start ::= a;\na ::= "x" a;', GrammarError, ["language of the start rule 'start' is empty"], None),
    ("gbnf", "root ::= [^\\x00-\\U0010FFFF]", GrammarError, ["language", "empty"], None),
    # --- regexes ---------------------------------------------------------------------------
    ("kbnf", 'start ::= "<" #"x[a-" ">";', RegexError, ["invalid regex 'x[a-'", "in rule 'start'",
                                                         "line 1, column 15", "unclosed"], None),
    ("kbnf", 'start ::= word;\nword ::= #e"(";', RegexError, ["invalid regex '('", "in rule 'word'",
                                                              "line 2"], None),
    # --- limits ----------------------------------------------------------------------------
    ("gbnf", 'root ::= "a"{20000}', LimitExceeded, ["max_repetition", "20000 > 10000"], None),
    ("gbnf", 'root ::= "a"{2,20000}', LimitExceeded, ["max_repetition"], None),
    ("gbnf", "root ::= " + "(" * 1001 + '"a"' + ")" * 1001, LimitExceeded, ["max_nesting", "1001 > 1000"], None),
    ("kbnf", "start ::= " + "[" * 1500 + '"a"' + "]" * 1500 + ";", LimitExceeded, ["max_nesting"], None),
]


def build(dialect: str, text: str, config: Config | None = None) -> Grammar:
    if dialect == "kbnf":
        return Grammar.from_ebnf(text, config=config)
    return Grammar.from_gbnf(text, config=config)


@pytest.mark.parametrize("dialect,text,error_class,fragments,position", ERROR_TABLE,
                         ids=[f"{row[0]}-{index}" for index, row in enumerate(ERROR_TABLE)])
def test_error_table(dialect, text, error_class, fragments, position):
    with pytest.raises(error_class) as info:
        build(dialect, text)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert isinstance(info.value, GrammarError)
    if position is not None:
        assert (info.value.line, info.value.column) == position, message
        gutter, _, caret_line = info.value.excerpt.partition("\n")
        source_line = text.split("\n")[position[0] - 1]
        assert gutter.endswith(source_line)
        prefix = gutter[: len(gutter) - len(source_line)]
        assert caret_line.index("^") == len(prefix) + position[1] - 1


def test_syntax_error_excerpt_shows_line_and_caret():
    with pytest.raises(GrammarSyntaxError) as info:
        Grammar.from_gbnf('root ::= item\nitem ::= "a" |\n  [b-')
    error = info.value
    assert error.line == 3 and error.column == 3
    assert "3 |   [b-" in str(error)
    assert "^" in str(error).splitlines()[-1]


def test_limit_error_names_the_config_field():
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_gbnf('root ::= "a"{50}', config=Config(max_repetition=10))
    assert info.value.limit == "max_repetition"
    assert info.value.given == 50 and info.value.maximum == 10
    assert "max_repetition=" in str(info.value)


def test_rule_count_limit():
    text = "\n".join([f'r{i} ::= "{i}" r{i + 1}' for i in range(50)] + ['r50 ::= "end"'])
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_gbnf(text, start="r0", config=Config(max_rules=10))
    assert info.value.limit == "max_rules"


def test_many_huge_repetitions_stop_at_the_rule_limit():
    text = "root ::= " + " ".join(f'"{chr(97 + i)}"{{0,10000}}' for i in range(20))
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_gbnf(text)
    assert info.value.limit == "max_rules"


def test_dfa_state_limit_is_reported():
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_ebnf('start ::= #"[ab]*a[ab]{12}";', config=Config(max_dfa_states=100))
    assert info.value.limit in ("max_dfa_states", "max_states")


def test_errors_are_value_errors():
    with pytest.raises(ValueError):
        Grammar.from_gbnf("root ::= [")


GRAMMAR_CHARS = list('abr:=|()[]{}?*+"\'#\\ \n;.-^0123456789,x') + ["::=", "root ::= ", "start ::= ", "(*", "*)",
                                                                     "#e\"", "#ex'", "#substrs\"", "\\u", "\\x{"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(GRAMMAR_CHARS), max_size=40).map("".join), st.sampled_from(["kbnf", "gbnf"]))
def test_random_text_never_crashes(text, dialect):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            build(dialect, text)
        except GrammarError:
            pass


@pytest.mark.parametrize("text", ['root ::= "a"' + "?" * 10_000, 'root ::= "a"' + "*+" * 5_000,
                                  "root ::= " + "(" * 999 + '"a"' + ")?" * 999])
def test_hostile_postfix_chains_do_not_recurse(text):
    try:
        grammar = Grammar.from_gbnf(text)
    except LimitExceeded as error:
        assert error.limit == "max_nesting"
    else:
        assert grammar.lnf.n_productions > 0
