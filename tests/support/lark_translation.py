"""Lark's Earley parser as an oracle: an AST-to-Lark translation of a grammar.

``lark_parser(ast)`` builds a ``lark.Lark`` (Earley, ``dynamic_complete``
lexer) from a ``GrammarAST`` whose terminals are literals, classes and ``.``
(``to_lark`` raises TypeError on regex and substring terminals, which Lark
reads differently); ``lark_accepts(parser, text)`` is its verdict on a whole
string.  Lark builds a parse forest, so on very ambiguous grammars it can take
minutes: ``lark_budget(seconds)`` raises ``LarkTooSlow`` past a deadline
(again every ``REPEAT_S`` until the body has ended).
"""

from __future__ import annotations

import contextlib
import signal

import lark

from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    Literal,
    Repeat,
    RuleRef,
    Sequence,
)


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


MAX_EXPANSIONS = 4096
"""Lark expands a rule's bounded repeats (optionals included) into one
alternative per combination while it loads the grammar: a rule with more
than this many is refused up front (``LarkTooSlow``) instead of relying on the
alarm alone (forty optionals in one sequence are 2^40)."""


def expansions(node) -> int:
    """How many alternatives Lark makes of ``node`` (unbounded repeats stay
    loops; a bounded one counts every length)."""
    if isinstance(node, Sequence):
        count = 1
        for item in node.items:
            count *= expansions(item)
        return count
    if isinstance(node, Alternation):
        return sum(expansions(item) for item in node.items)
    if isinstance(node, Repeat):
        inner = expansions(node.item)
        if node.max is None:
            return inner ** max(node.min, 1)
        return sum(inner ** length for length in range(node.min, node.max + 1))
    return 1


def lark_parser(ast):
    for rule in ast.rules:
        if expansions(rule.body) > MAX_EXPANSIONS:
            raise LarkTooSlow(f"rule {rule.name} expands into more than {MAX_EXPANSIONS} alternatives")
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


class LarkTooSlow(Exception):
    pass


# Once the budget is spent, the alarm repeats this often: the handler's
# exception is lost when the signal lands in a finalizer or a weakref
# callback (Python prints "Exception ignored" and goes on), and Lark would
# then run unbounded.
REPEAT_S = 0.05


@contextlib.contextmanager
def lark_budget(seconds: float):
    def expire(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, REPEAT_S)
        raise LarkTooSlow()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
