"""Built-in special nonterminals ``name!(arguments)`` of KBNF and GBNF.

What it computes: for a built-in's name and its parsed arguments (AST nodes
of the dialect; integers are written as bare digits and arrive as a
``RuleRef`` whose name is all digits), the AST that means the same thing,
using only the ordinary nodes of ``ast.py``.  Both parsers call one
``BuiltinExpander`` per grammar, so the two dialects share every meaning
and every message.

The built-ins (docs/grammar.md, "Built-ins"):

- ``except!(X)``, ``except!(X, n)`` (kbnf): a nonempty string containing no
  occurrence of X, of at most n characters.  X is a string or the name of a
  rule whose definitions are nonempty strings combined by concatenation and
  alternation (grammask also allows parentheses there).  One complement
  regex (the kbnf post's "regular expression in unanchored search mode"):
  ``Regex("X|\\A\\z|(?s:.){n+1}", "complement")``, i.e. no match of X, not
  empty, not n+1 characters long.  kbnf counts n in bytes over raw bytes;
  grammask's complement terminals range over valid UTF-8, so n counts
  characters (the same on ASCII text).
- ``any!`` and ``paragraph_token!``: ``TokenTerminal("any")`` and
  ``TokenTerminal("paragraph")`` (Koo et al., Table 1's terminal labels).
- ``text_until!(s1, s2, ...)`` (Koo et al., section 2.5): text ending at the
  first place where a stop phrase ends, stop included:
  ``Regex("(?s:.)*(?:s1|s2)", "early_end")``.  No proper prefix of a match
  ends with a stop phrase, so the text before the stop contains none.
- ``substring_of!(t)``: any substring of t, ``Substrings(t)``.
- ``delimited_list!(item, delim, min=1, max=None)``: ``item (delim item)*``
  with min to max items (min 0 admits the empty string).
- ``delimited_subsequence_of!(delim, item1, ..., itemN)``: a nonempty
  subsequence of the items, in order, each at most once, joined by delim.
  Fewer than N helper rules of three productions each (never 2^N): over a
  balanced split of the item range, ``Sub(l, r) ::= Sub(l, m) | Sub(m+1, r)
  | Sub(l, m) delim Sub(m+1, r)``; after unit-rule removal O(N log N)
  productions (a right-linear chain would give N^2 / 2).

Layout: helper rules get names ``<rule>__<tag><k>`` that collide with no
word of the grammar text (so none with a rule name), and are appended after
the user's rules by ``finish``.  ``except!(A)`` with a rule name becomes a
reference to a helper rule whose body is filled in by ``finish``, once every
definition of A has been read; ``finish`` also returns the (rule, A) pairs
so validation counts A as used.

Invariants: every node built carries the built-in's span (or an argument's);
composite arguments used more than once are hoisted into one helper rule, so
the AST grows linearly in the text even for nested built-ins; every error is
a ``GrammarSyntaxError`` at the offending text, or ``LimitExceeded``.

Sources: Koo, Liu and He, "Automata-based constraints for language model
decoding" (Table 1, section 2.5), and the kbnf post (docs/references.md):
``except!`` and ``any!``, and kbnf-syntax's validation of excepted rules.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Optional

from grammask.config import Config
from grammask.errors import LimitExceeded
from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    Literal,
    Node,
    Regex,
    Repeat,
    Rule,
    RuleRef,
    Sequence,
    Substrings,
    TokenTerminal,
)
from grammask.grammar.flatten import NameFactory
from grammask.grammar.syntax import describe, syntax_error
from grammask.grammar.terminal_keys import regex_escape
from grammask.source import Source, Span


@dataclass(frozen=True)
class BuiltinSpec:
    min_arguments: int
    max_arguments: Optional[int]
    usage: str


BUILTINS = {
    "except": BuiltinSpec(1, 2, "except!(X) or except!(X, n)"),
    "any": BuiltinSpec(0, 0, "any!"),
    "paragraph_token": BuiltinSpec(0, 0, "paragraph_token!"),
    "text_until": BuiltinSpec(1, None, "text_until!('stop', ...)"),
    "substring_of": BuiltinSpec(1, 1, "substring_of!('text')"),
    "delimited_list": BuiltinSpec(2, 4, "delimited_list!(item, delim [, min [, max]])"),
    "delimited_subsequence_of": BuiltinSpec(2, None, "delimited_subsequence_of!(delim, item, ...)"),
}

WORDS = re.compile(r"[A-Za-z0-9_-]+")
LEAVES = (Literal, CharClass, AnyChar, Regex, Substrings, TokenTerminal, RuleRef)
NODE_NAMES = {Literal: "a string", CharClass: "a character class", AnyChar: "'.'",
              Regex: "a regex", Substrings: "a #substrs terminal", TokenTerminal: "a token terminal",
              RuleRef: "a rule name", Sequence: "a sequence", Alternation: "an alternation",
              Repeat: "a repetition"}


@dataclass
class _PendingExcept:
    helper: str
    target: RuleRef
    max_chars: Optional[int]
    span: Span


class BuiltinExpander:
    """Turns ``name!(arguments)`` into AST nodes for one grammar text."""

    def __init__(self, source: Source, config: Config):
        self.source = source
        self.config = config
        self.names = NameFactory(WORDS.findall(source.text))
        self.rule_name = "builtin"
        self.helper_rules: list[Rule] = []
        self.pending: list[_PendingExcept] = []

    # --- called by the parsers ---------------------------------------------------

    def read(self, scanner, builder, name: str, position: int, skip) -> None:
        """At the '!' after ``name`` (either dialect; ``skip`` skips its
        spacing): a built-in with no arguments is added to ``builder`` now;
        otherwise its argument list is opened (closed by ')' like a group)."""
        self.check_name(name, position, scanner.pos + 1)
        scanner.pos += 1
        if self.takes_arguments(name):
            skip()
            if scanner.peek() != "(":
                raise scanner.error(f"expected '(' after '{name}!', found {describe(scanner.peek())}")
            builder.open_builtin(name, position)
            scanner.pos += 1
        else:
            builder.add(self(name, (), Span(position, scanner.pos)))

    def check_name(self, name: str, start: int, end: int) -> BuiltinSpec:
        spec = BUILTINS.get(name)
        if spec is None:
            close = difflib.get_close_matches(name, list(BUILTINS), n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}!'?" if close else ""
            known = ", ".join(f"{known}!" for known in BUILTINS)
            raise self._error(f"unknown built-in '{name}!'{hint} (built-ins: {known})", Span(start, end))
        return spec

    def takes_arguments(self, name: str) -> bool:
        return BUILTINS[name].max_arguments != 0

    def __call__(self, name: str, arguments: tuple[Node, ...], span: Span) -> Node:
        spec = BUILTINS[name]
        n_arguments = len(arguments)
        if n_arguments < spec.min_arguments or (spec.max_arguments is not None
                                                and n_arguments > spec.max_arguments):
            if spec.max_arguments is None:
                expected = f"at least {spec.min_arguments}"
            elif spec.min_arguments == spec.max_arguments:
                expected = str(spec.min_arguments)
            else:
                expected = f"{spec.min_arguments} to {spec.max_arguments}"
            plural = "" if expected == "1" else "s"
            raise self._error(f"'{name}!' takes {expected} argument{plural}, got {n_arguments}; "
                              f"usage: {spec.usage}", span)
        return getattr(self, "_" + name)(arguments, span)

    def finish(self, rules: list[Rule]) -> tuple[list[Rule], tuple[tuple[str, str], ...]]:
        """The rules followed by the helper rules (``except!`` of a rule name
        resolved now that every definition is known), and the (rule, name)
        pairs that built-ins use outside rule bodies."""
        definitions: dict[str, list[Rule]] = {}
        for rule in rules:
            definitions.setdefault(rule.name, []).append(rule)
        references = []
        for pending in self.pending:
            target = pending.target
            if target.name not in definitions:
                close = difflib.get_close_matches(target.name, list(definitions), n=1, cutoff=0.6)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise self._error(f"rule '{target.name}' is used in except! but never defined{hint}",
                                  target.span)
            parts = [self._excepted_pattern(target.name, rule.body) for rule in definitions[target.name]]
            pattern = "|".join(parts)
            body = self._except_node(pattern, pending.max_chars, pending.span)
            self.helper_rules.append(Rule(pending.helper, body, pending.span))
            references.append((pending.helper, target.name))
        return rules + self.helper_rules, tuple(references)

    # --- the built-ins -----------------------------------------------------------

    def _except(self, arguments, span):
        excepted = arguments[0]
        max_chars = None
        if len(arguments) == 2:
            max_chars = self._integer(arguments[1], "except!", "the maximum length", minimum=1)
            if max_chars + 1 > self.config.max_repetition:
                raise LimitExceeded("max_repetition", max_chars + 1, self.config.max_repetition,
                                    f"except! length bound at {self._where(arguments[1].span)}")
        if isinstance(excepted, Literal):
            return self._except_node(self._excepted_pattern("", excepted), max_chars, span)
        if isinstance(excepted, RuleRef):
            helper = self.names.fresh(self.rule_name, "except")
            self.pending.append(_PendingExcept(helper, excepted, max_chars, span))
            return RuleRef(helper, span)
        raise self._error(f"except! takes a string or a rule name, got {self._describe(excepted)}",
                          excepted.span or span)

    def _except_node(self, pattern: str, max_chars: Optional[int], span: Span) -> Regex:
        # No match of the excepted strings, not empty (\A\z matches only ""),
        # and, when bounded, no run of max_chars + 1 characters.
        alternatives = [pattern, r"\A\z"]
        if max_chars is not None:
            alternatives.append("(?s:.){%d}" % (max_chars + 1))
        return Regex("|".join(alternatives), "complement", False, span)

    def _any(self, arguments, span):
        return TokenTerminal("any", span)

    def _paragraph_token(self, arguments, span):
        return TokenTerminal("paragraph", span)

    def _text_until(self, arguments, span):
        stops = [self._string(argument, "text_until!", "a stop phrase", nonempty=True)
                 for argument in arguments]
        pattern = "(?s:.)*(?:" + "|".join(regex_escape(stop) for stop in stops) + ")"
        return Regex(pattern, "early_end", False, span)

    def _substring_of(self, arguments, span):
        return Substrings(self._string(arguments[0], "substring_of!", "the text", nonempty=False), span)

    def _delimited_list(self, arguments, span):
        item, delim = arguments[0], arguments[1]
        low = self._integer(arguments[2], "delimited_list!", "the minimum count", 0) if len(arguments) > 2 else 1
        high = None
        if len(arguments) > 3:
            high = self._integer(arguments[3], "delimited_list!", "the maximum count", 0)
            if high < low:
                raise self._error(f"delimited_list! maximum count {high} is below its minimum {low}",
                                  Span(arguments[2].span.start, arguments[3].span.end))
        if high == 0:
            return Sequence((), span)
        item = self._shared(item, "item")
        if high == 1:
            one_or_more: Node = item
        else:
            tail = Repeat(Sequence((delim, item), span), max(low - 1, 0),
                          None if high is None else high - 1, span)
            one_or_more = Sequence((item, tail), span)
        return Repeat(one_or_more, 0, 1, span) if low == 0 else one_or_more

    def _delimited_subsequence_of(self, arguments, span):
        # Balanced split of the item range: Sub(l, r), the nonempty in-order
        # subsequences of items l..r, is Sub(l, m) | Sub(m+1, r) |
        # Sub(l, m) delim Sub(m+1, r).  2N - 1 rules of 3 productions; a
        # chain Start_i ::= item_i Rest | Start_i+1 would be as small, but
        # remove_unit_rules closes a chain of N units into N^2 / 2
        # productions, this tree into O(N log N).
        delim = self._shared(arguments[0], "delim")
        items = [self._shared(item, "item") for item in arguments[1:]]
        root_name = self.names.fresh(self.rule_name, "subseq")
        stack = [(0, len(items) - 1, root_name)]
        while stack:
            low, high, name = stack.pop()
            if low == high:
                self.helper_rules.append(Rule(name, items[low], span))
                continue
            middle = (low + high) // 2
            left, right = (self._range_ref(low, middle, items, stack, span),
                           self._range_ref(middle + 1, high, items, stack, span))
            body = Alternation((left, right, Sequence((left, delim, right), span)), span)
            self.helper_rules.append(Rule(name, body, span))
        return RuleRef(root_name, span)

    def _range_ref(self, low: int, high: int, items: list[Node], stack: list, span: Span) -> Node:
        """The node for Sub(low, high): the item itself for one item, else a
        reference to a new helper rule queued on ``stack``."""
        if low == high:
            return items[low]
        name = self.names.fresh(self.rule_name, "subseq")
        stack.append((low, high, name))
        return RuleRef(name, span)

    # --- helpers -----------------------------------------------------------------

    def _excepted_pattern(self, rule_name: str, body: Node) -> str:
        """A regex of the strings of ``body``: nonempty literals combined by
        concatenation and alternation only (explicit stack, post-order)."""
        owner = f"the rule '{rule_name}' excepted by except!" if rule_name else "except!"
        results: list[str] = []
        stack: list[tuple[Node, bool]] = [(body, False)]
        while stack:
            node, children_done = stack.pop()
            if isinstance(node, Literal):
                if not node.value:
                    raise self._error(f"{owner} contains an empty string; an excepted string must be "
                                      f"nonempty", node.span)
                results.append(regex_escape(node.value.decode("utf-8")))
            elif isinstance(node, (Sequence, Alternation)) and node.items:
                if not children_done:
                    stack.append((node, True))
                    stack.extend((child, False) for child in reversed(node.items))
                    continue
                parts = results[len(results) - len(node.items):]
                del results[len(results) - len(node.items):]
                joiner = "" if isinstance(node, Sequence) else "|"
                results.append("(?:" + joiner.join(parts) + ")")
            elif isinstance(node, Sequence):
                raise self._error(f"{owner} has an empty alternative; an excepted string must be "
                                  f"nonempty", node.span)
            else:
                raise self._error(f"{owner} may contain only nonempty strings combined by "
                                  f"concatenation and alternation, found {self._describe(node)}",
                                  node.span)
        return results[0]

    def _shared(self, node: Node, tag: str) -> Node:
        """``node`` itself when it is a leaf, else a reference to a helper rule
        holding it (so using it several times does not copy it)."""
        if isinstance(node, LEAVES):
            return node
        name = self.names.fresh(self.rule_name, tag)
        self.helper_rules.append(Rule(name, node, node.span))
        return RuleRef(name, node.span)

    def _string(self, node: Node, builtin: str, what: str, nonempty: bool) -> str:
        if not isinstance(node, Literal):
            raise self._error(f"{builtin} expects a string as {what}, got {self._describe(node)}",
                              node.span)
        if nonempty and not node.value:
            raise self._error(f"{builtin} expects a nonempty string as {what}", node.span)
        return node.value.decode("utf-8")

    def _integer(self, node: Node, builtin: str, what: str, minimum: int) -> int:
        if not (isinstance(node, RuleRef) and node.name.isdigit() and node.name.isascii()):
            raise self._error(f"{builtin} expects an integer as {what}, got {self._describe(node)}",
                              node.span)
        value = int(node.name)
        if value < minimum:
            raise self._error(f"{builtin} expects {what} to be at least {minimum}, got {value}", node.span)
        return value

    @staticmethod
    def _describe(node: Node) -> str:
        if isinstance(node, RuleRef):
            return f"the rule name '{node.name}'"
        return NODE_NAMES.get(type(node), type(node).__name__)

    def _where(self, span: Optional[Span]) -> str:
        if span is None:
            return "?"
        line, column = self.source.line_column(span.start)
        return f"line {line}, column {column}"

    def _error(self, message: str, span: Optional[Span]):
        return syntax_error(self.source, message, span)
