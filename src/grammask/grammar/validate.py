"""Validation of a GrammarAST before normalization: errors a user can act on.

Checks, in order (each raising a typed error from ``grammask.errors``):

- every node is well formed (repetition bounds ``0 <= min <= max``, class
  ranges ordered and within U+10FFFF, known regex kinds);
- depth of nested composite nodes (Sequence / Alternation / Repeat) at most
  ``2 * Config.max_nesting + 2`` (a source group adds at most two levels), so
  deep ASTs built by programs get ``LimitExceeded`` like deep source text;
- repetition bounds at most ``Config.max_repetition``;
- the start symbol is defined (with a close match if one exists);
- every referenced name is defined (``GrammarSyntaxError`` pointing at the
  use, with a close match if one exists).

Rules not reachable from the start symbol are not errors: ``validate``
returns one warning per such rule, and, from the same walk, the kinds of
the token terminals (``TokenTerminal``) used anywhere in the rules.  Whether the language is empty is decided
during normalization (``remove_useless_rules``), which knows the terminals.
Traversal uses an explicit stack (no recursion).
"""

from __future__ import annotations

import difflib

from grammask.config import Config
from grammask.errors import GrammarError, LimitExceeded
from grammask.grammar.ast import (
    Alternation,
    CharClass,
    GrammarAST,
    Regex,
    Repeat,
    RuleRef,
    Sequence,
    TokenTerminal,
)
from grammask.grammar.syntax import syntax_error

REGEX_KINDS = ("regex", "early_end", "complement", "intersection", "difference", "key_exclusion")


def _close_match(name: str, candidates) -> str:
    matches = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{matches[0]}'?" if matches else ""


def _where(ast: GrammarAST, node) -> str:
    if ast.source is None or node.span is None:
        return ""
    line, column = ast.source.line_column(node.span.start)
    return f" at line {line}, column {column}"


def validate(ast: GrammarAST, config: Config) -> tuple[list[str], frozenset]:
    """Raise on the first error; return the warnings (unused rules) and the
    token terminal kinds used anywhere in the rules."""
    defined: dict[str, object] = {}
    token_kinds: set[str] = set()
    for rule in ast.rules:
        defined.setdefault(rule.name, rule)
    max_depth = 2 * config.max_nesting + 2
    references: dict[str, set[str]] = {name: set() for name in defined}
    for rule in ast.rules:
        stack = [(rule.body, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > max_depth:
                raise LimitExceeded("max_nesting", (depth - 2) // 2, config.max_nesting,
                                    f"nesting of rule '{rule.name}'{_where(ast, node)}")
            kind = node.__class__   # node classes are final
            if kind is Sequence or kind is Alternation:
                if kind is Alternation and not node.items:
                    raise GrammarError(f"empty alternation in rule '{rule.name}'{_where(ast, node)}")
                depth += 1
                stack.extend([(child, depth) for child in node.items])
            elif kind is Repeat:
                _check_repeat(ast, rule.name, node, config)
                stack.append((node.item, depth + 1))
            elif kind is RuleRef:
                if node.name not in defined:
                    message = (f"rule '{node.name}' is used in rule '{rule.name}' but never defined"
                               f"{_close_match(node.name, defined)}")
                    if ast.source is not None and node.span is not None:
                        raise syntax_error(ast.source, message, node.span)
                    raise GrammarError(message)
                references[rule.name].add(node.name)
            elif kind is CharClass:
                for low, high in node.ranges:
                    if not 0 <= low <= high <= 0x10FFFF:
                        raise GrammarError(f"invalid character range {low:#x}-{high:#x} in rule "
                                           f"'{rule.name}'{_where(ast, node)}")
            elif kind is Regex and node.kind not in REGEX_KINDS:
                raise GrammarError(f"unknown regex kind {node.kind!r} in rule '{rule.name}'; "
                                   f"expected one of {', '.join(REGEX_KINDS)}")
            elif kind is TokenTerminal:
                token_kinds.add(node.kind)
    for user, name in ast.builtin_references:
        if user in references and name in defined:
            references[user].add(name)
    if ast.start not in defined:
        raise GrammarError(f"the start symbol '{ast.start}' is not defined by any rule"
                           f"{_close_match(ast.start, defined)} (choose another with start=...)")
    reachable = {ast.start}
    stack = [ast.start]
    while stack:
        for name in references[stack.pop()]:
            if name not in reachable:
                reachable.add(name)
                stack.append(name)
    warnings = []
    for name, rule in defined.items():
        if name not in reachable:
            warnings.append(f"rule '{name}'{_where(ast, rule)} is never used from the start symbol "
                            f"'{ast.start}'")
    return warnings, frozenset(token_kinds)


def _check_repeat(ast: GrammarAST, rule_name: str, node: Repeat, config: Config) -> None:
    if node.min < 0 or (node.max is not None and node.max < node.min):
        raise GrammarError(f"invalid repetition {{{node.min},{node.max}}} in rule '{rule_name}'"
                           f"{_where(ast, node)}")
    largest = node.min if node.max is None else node.max
    if largest > config.max_repetition:
        raise LimitExceeded("max_repetition", largest, config.max_repetition,
                            f"repetition in rule '{rule_name}'{_where(ast, node)}")
