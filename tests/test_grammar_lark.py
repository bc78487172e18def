"""Second independent oracle: Lark's Earley parser on a translation of the AST.

Random grammars without regex terminals (literals, classes, ``.``, rule
references, sequences, alternations, repetitions) are translated to Lark
syntax; on every string up to length 4 over ``abc``, our normalized grammar
(run by the plain LNF Earley) accepts exactly what Lark parses.  Also the
shared arithmetic grammar against its Lark form in the workloads.
"""

from __future__ import annotations

import contextlib
import itertools
import pathlib
import signal

import pytest
import lark
from hypothesis import HealthCheck, given, reject, settings

from grammar_strategies import grammar_asts
from lnf_reference import LNFRecognizer

from grammask.errors import GrammarError
from grammask.grammar import Grammar
from paths import WORKLOADS
from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    Literal,
    Repeat,
    RuleRef,
    Sequence,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def lark_class(node: CharClass) -> str:
    parts = []
    for low, high in node.ranges:
        parts.append(f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}")
    return "/[" + ("^" if node.negated else "") + "".join(parts) + "]/s"


def to_lark(node) -> str:
    """Lark text of an AST node (recursive: test grammars are shallow)."""
    if isinstance(node, Literal):
        return "empty" if not node.value else '"' + node.value.decode() + '"'
    if isinstance(node, CharClass):
        return lark_class(node)
    if isinstance(node, AnyChar):
        return "/./s"
    if isinstance(node, RuleRef):
        return node.name
    if isinstance(node, Sequence):
        return "(" + " ".join(to_lark(item) for item in node.items) + ")" if node.items else "empty"
    if isinstance(node, Alternation):
        return "(" + " | ".join(to_lark(item) for item in node.items) + ")"
    if isinstance(node, Repeat):
        item = "(" + to_lark(node.item) + ")"
        if node.max is None:
            return f"({item} ~ {node.min} {item}*)" if node.min else f"{item}*"
        if node.max == 0:
            return "empty"
        return f"({item} ~ {node.min}..{node.max})" if node.min != node.max else f"({item} ~ {node.min})"
    raise TypeError(node)


def lark_parser(ast):
    bodies: dict[str, list[str]] = {}
    for rule in ast.rules:
        bodies.setdefault(rule.name, []).append(to_lark(rule.body))
    text = "\n".join(f"{name}: {' | '.join(items)}" for name, items in bodies.items()) + "\nempty:\n"
    return lark.Lark(text, start=ast.start, parser="earley", lexer="dynamic_complete")


def lark_accepts(parser, text: str) -> bool:
    try:
        parser.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


LARK_BUDGET_SECONDS = 3.0
"""Lark builds a full parse forest; on highly ambiguous random grammars (nested
repetitions of a recursive rule) that takes minutes where our recognizer takes
milliseconds.  Such examples are dropped (hypothesis ``reject``), not failed."""


class LarkTooSlow(Exception):
    pass


@contextlib.contextmanager
def lark_budget(seconds: float):
    def expire(signum, frame):
        raise LarkTooSlow()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
    path = WORKLOADS / "bench" / "arith.lark"
    if not path.exists():
        pytest.skip("arith.lark is missing")
    parser = lark.Lark(path.read_text(), parser="earley", lexer="dynamic")
    grammar = Grammar.from_ebnf((WORKLOADS / "bench" / "arith.kbnf").read_text())
    recognizer = LNFRecognizer(grammar.lnf)
    samples = ["1;", "1 + 2;", "-(3 * 4) / 5;", "((1));", "1 +2;", "1 + ;", "(1;", "--1;", "1 - -1;", "12 * 34 - 5;"]
    for text in samples:
        assert recognizer.accepts(text.encode()) == lark_accepts(parser, text), text
