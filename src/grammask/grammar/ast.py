"""The grammar AST shared by every front end (KBNF, GBNF, JSON Schema, regex).

One tree for all dialects: parsers build it with a ``Span`` on every node
(``None`` for nodes synthesized by a program, e.g. the JSON Schema compiler);
validation and normalization (``normalize.py``) consume it.

Nodes are frozen dataclasses; children are tuples.  The node classes are
final (never subclassed): the passes dispatch on ``node.__class__``.
Byte-level meaning:

- ``Literal.value``: the exact UTF-8 bytes the node matches (may be empty).
- ``CharClass``: one Unicode code point from ``ranges`` (inclusive pairs), or,
  when ``negated``, any code point outside them; matched as its UTF-8 bytes.
- ``AnyChar``: any one Unicode code point (GBNF ``.``), as UTF-8.
- ``Regex``: a Rust-syntax regex, anchored at both ends; ``kind`` is
  ``"regex"`` (whole match), ``"early_end"`` (KBNF ``#e``: ends at the first
  match), ``"complement"`` (KBNF ``#ex``: any string containing no match),
  ``"intersection"`` (strings fully matching each of the NUL-separated
  patterns; made by the JSON Schema translator), ``"difference"`` (strings
  in the NUL-separated intersection before the first U+0001 and matching
  none of the U+0001-separated patterns after it; made by the translator
  for object keys), ``"key_exclusion"`` (KBNF ``#!``: JSON keys other than a
  set of names, built from their trie; ``grammask.terminals``).
- ``Substrings``: any substring of ``text`` (KBNF ``#substrs``).
- ``TokenTerminal``: exactly one token of the model's vocabulary, matched at
  the token level (Koo et al.'s terminal labels): ``kind`` ``"paragraph"``
  (``paragraph_token!``: one text token without a line break) or ``"any"``
  (``any!``: any one text token).  Its language depends on the vocabulary,
  so the byte-level grammar carries a reserved byte in its place
  (``grammask.grammar.token_terminals``).
- ``RuleRef``: a nonterminal by name.
- ``Sequence`` (concatenation; zero items = the empty string),
  ``Alternation`` (at least one item), ``Repeat`` (``min`` to ``max`` copies,
  ``max=None`` for unbounded: ``?`` is (0, 1), ``*`` (0, None), ``+`` (1, None)).
- ``Rule``: one definition ``name ::= body``; several rules with one name are
  alternatives of that name.
- ``GrammarAST``: rules in source order, the start name, the Source (or None),
  and ``builtin_references``: (rule, name) pairs meaning rule ``rule`` uses
  the rule ``name`` outside its body (``except!(name)`` is expanded into the
  strings of ``name``; validation counts ``name`` as used).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from grammask.source import Source, Span


@dataclass(frozen=True, slots=True)
class Literal:
    value: bytes
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class CharClass:
    ranges: tuple[tuple[int, int], ...]
    negated: bool = False
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class AnyChar:
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Regex:
    pattern: str
    kind: str = "regex"
    case_insensitive: bool = False
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Substrings:
    text: str
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class TokenTerminal:
    kind: str
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class RuleRef:
    name: str
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Sequence:
    items: tuple["Node", ...]
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Alternation:
    items: tuple["Node", ...]
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Repeat:
    item: "Node"
    min: int
    max: Optional[int]
    span: Optional[Span] = field(default=None, compare=False)


Node = Union[Literal, CharClass, AnyChar, Regex, Substrings, TokenTerminal, RuleRef, Sequence,
             Alternation, Repeat]


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    body: Node
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class GrammarAST:
    rules: tuple[Rule, ...]
    start: str
    source: Optional[Source] = field(default=None, compare=False)
    builtin_references: tuple[tuple[str, str], ...] = ()
