"""Second independent oracle: Lark's Earley parser on a translation of the AST.

Random grammars without regex terminals (literals, classes, ``.``, rule
references, sequences, alternations, repetitions) are translated to Lark
syntax; on every string up to length 4 over ``abc``, our normalized grammar
(run by the plain LNF Earley) accepts exactly what Lark parses.  Also the
shared arithmetic grammar against its Lark form in the workloads.
"""

from __future__ import annotations

import itertools

import pytest
import lark
from hypothesis import HealthCheck, given, reject, settings

from grammask.errors import GrammarError
from grammask.grammar import Grammar

from support.grammar_strategies import grammar_asts
from support.lark_translation import LarkTooSlow, lark_accepts, lark_budget, lark_parser
from support.lnf_reference import LNFRecognizer
from support.paths import workload

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


LARK_BUDGET_SECONDS = 3.0
"""Lark builds a full parse forest; on highly ambiguous random grammars (nested
repetitions of a recursive rule) that takes minutes where our recognizer takes
milliseconds.  Such examples are dropped (hypothesis ``reject``), not failed."""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.filter_too_much])
@given(grammar_asts(with_regex=False))
def test_lnf_agrees_with_lark(ast):
    try:
        grammar = Grammar.from_ast(ast)
    except GrammarError as error:
        assert "empty" in str(error)
        return
    recognizer = LNFRecognizer(grammar.lnf)
    texts = ["".join(chars) for length in range(5) for chars in itertools.product("abc", repeat=length)]
    try:
        with lark_budget(LARK_BUDGET_SECONDS):
            parser = lark_parser(ast)
            expected = [lark_accepts(parser, text) for text in texts]
    except LarkTooSlow:
        reject()
    for text, verdict in zip(texts, expected):
        assert recognizer.accepts(text.encode()) == verdict, text


def test_arithmetic_against_workload_lark_grammar():
    parser = lark.Lark(workload("bench", "arith.lark").read_text(), parser="earley", lexer="dynamic")
    grammar = Grammar.from_ebnf(workload("bench", "arith.kbnf").read_text())
    recognizer = LNFRecognizer(grammar.lnf)
    samples = ["1;", "1 + 2;", "-(3 * 4) / 5;", "((1));", "1 +2;", "1 + ;", "(1;", "--1;", "1 - -1;", "12 * 34 - 5;"]
    for text in samples:
        assert recognizer.accepts(text.encode()) == lark_accepts(parser, text), text
