"""Normalization pass: fold regular repetitions into one regex terminal.

``fold_regular_repetitions`` replaces every maximal *regular* subtree of a rule
body that contains a repetition by a single ``Regex`` node of the same
language.  A subtree is regular when it holds only literals, classes, ``.``,
sequences, alternations and repetitions (no rule reference, regex or
substring terminal).  Example: GBNF ``[1-9] [0-9]{0,15}`` becomes the one DFA
terminal ``#"[1-9][0-9]{0,15}"`` instead of sixteen helper rules, and
``[0-9]+`` stops being a left-recursive rule the Earley core must complete at
every digit.

Why it is safe: the Earley core matches a DFA terminal byte by byte and may
both complete it at any accepting state and continue it, so a DFA terminal
is exactly its language inside the grammar (no greedy-lexeme effect).  Code
points map to the same UTF-8 bytes in both forms.

Limits: a folded subtree whose DFA would exceed ``FOLD_MAX_STATES`` /
``FOLD_MAX_BYTES`` (or the Config limits, or that the regex engine refuses)
is left as grammar rules.  Literals that are not UTF-8 and empty classes are never folded.

Data layout: iterative post-order over the AST with a parallel stack of
``_Info(regular, has_repeat, pattern)``; patterns are Rust regex syntax.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    Literal,
    Node,
    Regex,
    Repeat,
    Sequence,
)
from grammask.grammar.terminal_keys import TerminalCompiler, class_pattern, class_ranges, regex_escape


FOLD_MAX_STATES = 4096
FOLD_MAX_BYTES = 1 << 20
"""Budget of a speculative fold (also capped by the Config limits): a DFA that
would be larger is not built, and the subtree stays grammar rules.  Small
enough that a refused fold costs milliseconds, not the seconds a full
``max_dfa_bytes`` attempt can take on an exponential determinization."""

ATOM, QUANTIFIED, CONCATENATION, ALTERNATION = range(4)
"""Binding levels of a pattern: what may follow it without a group."""


@dataclass
class _Info:
    regular: bool
    has_repeat: bool
    pattern: Optional[str]
    level: int = ATOM


def _leaf_info(node: Node) -> _Info:
    if isinstance(node, Literal):
        try:
            text = node.value.decode("utf-8")
        except UnicodeDecodeError:
            return _Info(False, False, None)
        return _Info(True, False, regex_escape(text), ATOM if len(text) == 1 else CONCATENATION)
    if isinstance(node, (CharClass, AnyChar)):
        ranges = class_ranges(node)
        return _Info(bool(ranges), False, class_pattern(ranges) if ranges else None)
    return _Info(False, False, None)


def _bound(info: _Info, level: int) -> str:
    """The pattern, grouped unless it binds at least as tightly as ``level``."""
    return info.pattern if info.level <= level else f"(?:{info.pattern})"


def _quantifier(low: int, high: Optional[int]) -> str:
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    if high is None:
        return f"{{{low},}}"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def fold_regular_repetitions(body: Node, compiler: TerminalCompiler) -> Node:
    """Pre: a rule body flattened by precedence.  Post: the same language;
    every maximal regular subtree containing a Repeat whose DFA fits the
    limits is one ``Regex`` node (kind ``regex``)."""
    stack: list[tuple[Node, bool]] = [(body, False)]
    nodes: list[Node] = []
    infos: list[_Info] = []
    while stack:
        current, children_done = stack.pop()
        if isinstance(current, (Sequence, Alternation, Repeat)) and not children_done:
            stack.append((current, True))
            children = current.items if not isinstance(current, Repeat) else (current.item,)
            stack.extend((child, False) for child in reversed(children))
            continue
        if not isinstance(current, (Sequence, Alternation, Repeat)):
            nodes.append(current)
            infos.append(_leaf_info(current))
            continue
        n_children = 1 if isinstance(current, Repeat) else len(current.items)
        child_nodes = nodes[len(nodes) - n_children:]
        child_infos = infos[len(infos) - n_children:]
        del nodes[len(nodes) - n_children:]
        del infos[len(infos) - n_children:]
        info = _combine(current, child_infos)
        if info.regular:
            rebuilt = current
        else:
            folded = [_fold(child, child_info, compiler) for child, child_info in zip(child_nodes, child_infos)]
            rebuilt = _rebuild(current, folded)
        nodes.append(rebuilt)
        infos.append(info)
    return _fold(nodes[0], infos[0], compiler)


def _combine(node: Node, child_infos: list[_Info]) -> _Info:
    if not all(info.regular for info in child_infos):
        return _Info(False, any(info.has_repeat for info in child_infos), None)
    if isinstance(node, Repeat):
        pattern = _bound(child_infos[0], ATOM) + _quantifier(node.min, node.max)
        return _Info(True, True, pattern, QUANTIFIED)
    has_repeat = any(info.has_repeat for info in child_infos)
    if isinstance(node, Sequence):
        pattern = "".join(_bound(info, CONCATENATION) for info in child_infos)
        return _Info(True, has_repeat, pattern, CONCATENATION)
    return _Info(True, has_repeat, "|".join(info.pattern for info in child_infos), ALTERNATION)


def _fold(node: Node, info: _Info, compiler: TerminalCompiler) -> Node:
    """``node`` as one Regex when it is regular, repeats and its DFA fits."""
    if not (info.regular and info.has_repeat):
        return node
    if compiler.try_dfa(("regex", info.pattern, "regex", False), FOLD_MAX_STATES, FOLD_MAX_BYTES) is None:
        return node
    return Regex(info.pattern, "regex", False, node.span)


def _rebuild(node: Node, children: list[Node]) -> Node:
    if isinstance(node, Repeat):
        return node if children[0] is node.item else Repeat(children[0], node.min, node.max, node.span)
    if all(child is item for child, item in zip(children, node.items)):
        return node
    return type(node)(tuple(children), node.span)
