"""Normalization, first half: from the nested AST to flat productions.

Passes (seed the kbnf post (docs/references.md),
"Obtain LNF"), in order:

1. ``group_rules_by_name``: one body per nonterminal.
2. ``flatten_by_precedence``: nested concatenations and alternations merged.
   (Then ``regular.fold_regular_repetitions`` turns regular subtrees with
   repetitions into single regex terminals.)
3. ``flatten_nested_groups``: groups and repetitions become named rules;
   the result is a ``FlatGrammar`` (flat productions + repetition specs).
4. ``expand_repetitions``: ``? * + {m,n}`` become left-recursive helper rules,
   ``{m,n}`` in O(log m + (n - m)) rules.

``FlatGrammar`` layout: ``rules`` maps a nonterminal name to its productions
(in definition order; the dict order is the id order later); a production is a
tuple of symbols; a symbol is a nonterminal name (``str``) or a terminal key
(``tuple``, see ``terminal_keys``).  ``()`` is the empty production.

All passes are iterative (explicit stacks), so arbitrarily deep ASTs do not
hit Python's recursion limit.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional, Union

from grammask.errors import LimitExceeded
from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    GrammarAST,
    Literal,
    Node,
    Regex,
    Repeat,
    RuleRef,
    Sequence,
    Substrings,
    TokenTerminal,
)
from grammask.grammar.terminal_keys import TerminalCompiler, class_key
from grammask.grammar.token_terminals import reserved_literal

Symbol = Union[str, tuple]
Production = tuple


@dataclass
class FlatGrammar:
    """Flat productions per nonterminal (see the module docstring)."""

    start: str
    rules: dict[str, list[Production]]
    repeats: dict[str, tuple[Symbol, int, Optional[int]]] = field(default_factory=dict)
    start_accepts_empty: bool = False

    def sizes(self) -> dict[str, int]:
        """Rule, production and symbol counts (for pass statistics)."""
        n_productions = sum(map(len, self.rules.values()))
        n_symbols = sum(map(len, itertools.chain.from_iterable(self.rules.values())))
        return {"n_rules": len(self.rules), "n_productions": n_productions, "n_symbols": n_symbols}


class NameFactory:
    """Fresh helper names ``base__tagN`` that collide with no existing name."""

    def __init__(self, taken):
        self.taken = set(taken)
        self.counters: dict[str, int] = {}

    def fresh(self, base: str, tag: str) -> str:
        stem = f"{base.split('__', 1)[0]}__{tag}"
        while True:
            self.counters[stem] = self.counters.get(stem, 0) + 1
            name = f"{stem}{self.counters[stem]}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def group_rules_by_name(ast: GrammarAST) -> dict[str, Node]:
    """Pre: an AST whose rules may repeat a name.  Post: one body per name, in
    order of first definition; repeated definitions become one Alternation."""
    bodies: dict[str, list[Node]] = {}
    for rule in ast.rules:
        bodies.setdefault(rule.name, []).append(rule.body)
    return {name: items[0] if len(items) == 1 else Alternation(tuple(items), items[0].span)
            for name, items in bodies.items()}


def flatten_by_precedence(node: Node, max_repetition: Optional[int] = None) -> Node:
    """Pre: any AST node.  Post: the same language, with no Sequence directly
    inside a Sequence, no Alternation directly inside an Alternation, no
    one-item Sequence or Alternation, no empty Literal inside a Sequence, no
    ``{1,1}`` Repeat, no Repeat of the empty string (it is the empty
    string), and no Repeat directly inside a Repeat where one Repeat says
    the same (``collapse_nested_repeat``; a collapsed bound over
    ``max_repetition`` raises ``LimitExceeded``).  Iterative post-order
    rebuild with one frame per open group (its children and their rebuilt
    forms so far; leaf children are taken inline, without a frame);
    unchanged subtrees are reused."""
    if node.__class__ not in _GROUPS:
        return node
    frames: list[tuple[Node, tuple, list[Node]]] = [(node, _items(node), [])]
    while True:
        current, children, rebuilt = frames[-1]
        index = len(rebuilt)
        while index < len(children):
            child = children[index]
            if child.__class__ in _GROUPS:
                break
            rebuilt.append(child)
            index += 1
        if index < len(children):
            frames.append((child, _items(child), []))
            continue
        frames.pop()
        result = _rebuilt(current, rebuilt, max_repetition)
        if not frames:
            return result
        frames[-1][2].append(result)


_GROUPS = frozenset((Sequence, Alternation, Repeat))


def _items(node: Node) -> tuple:
    return (node.item,) if node.__class__ is Repeat else node.items


def _rebuilt(current: Node, children: list[Node], max_repetition: Optional[int]) -> Node:
    """``current`` over its flattened ``children`` (see flatten_by_precedence)."""
    if current.__class__ is not Repeat:
        return _join(current, children)
    item = children[0]
    if _is_empty_string(item) or current.max == 0:
        return Sequence((), current.span)
    if current.min == 1 and current.max == 1:
        return item
    if item.__class__ is Repeat and (collapsed := collapse_nested_repeat(
            item, current, max_repetition)) is not None:
        return collapsed
    if item is current.item:
        return current
    return Repeat(item, current.min, current.max, current.span)


def collapse_nested_repeat(inner: Repeat, outer: Repeat, max_repetition: Optional[int]) -> Optional[Repeat]:
    """``(X{a,b}){m,n}`` as one Repeat of X when that is the same language
    (n >= 1), else None: with a = 0 every count up to b * n is reached, so
    it is ``X{0,b*n}`` (``X*`` when b or n is unbounded); with b unbounded
    and (m >= 1 or a <= 1) every count from a * m on is reached, so it is
    ``X{a*m,}``.  This keeps ``("a"?){0,10000}`` and 900 nested stars from
    expanding (or determinizing) one nullable copy per count."""
    low, high = inner.min, inner.max
    if high is None and (outer.min >= 1 or low <= 1):
        return Repeat(inner.item, low * outer.min, None, outer.span)
    if low == 0:
        if high is None or outer.max is None:
            return Repeat(inner.item, 0, None, outer.span)
        bound = high * outer.max
        if max_repetition is not None and bound > max_repetition:
            raise LimitExceeded("max_repetition", bound, max_repetition,
                                f"a nested repetition {{0,{high}}} inside {{{outer.min},{outer.max}}} "
                                f"repeats its item up to {bound} times")
        return Repeat(inner.item, 0, bound, outer.span)
    return None


def _is_empty_string(node: Node) -> bool:
    kind = node.__class__
    return (kind is Literal and not node.value) or (kind is Sequence and not node.items)


def _join(parent: Node, children: list[Node]) -> Node:
    kind = parent.__class__
    unchanged = len(children) > 1
    for child, item in zip(children, parent.items):
        if child is not item or child.__class__ is kind or (kind is Sequence and _is_empty_string(child)):
            unchanged = False
            break
    if unchanged:
        return parent
    items: list[Node] = []
    for child in children:
        if child.__class__ is kind:
            items.extend(child.items)
        elif kind is Sequence and _is_empty_string(child):
            continue
        else:
            items.append(child)
    if len(items) == 1:
        return items[0]
    return kind(tuple(items), parent.span)


def terminal_key(node: Node) -> Optional[tuple]:
    """The terminal key of a terminal node (None for other nodes).  Node
    classes are final, so the class is compared, not isinstance'd (this runs
    once per AST node)."""
    kind = node.__class__
    if kind is Literal:
        return ("lit", node.value)
    if kind is Regex:
        return ("regex", node.pattern, node.kind, node.case_insensitive)
    if kind is CharClass or kind is AnyChar:
        return class_key(node)
    if kind is Substrings:
        return ("substrs", node.text)
    if kind is TokenTerminal:
        return ("lit", reserved_literal(node))
    return None


def flatten_nested_groups(bodies: dict[str, Node], start: str, compiler: TerminalCompiler,
                          names: NameFactory, source=None) -> FlatGrammar:
    """Pre: bodies flattened by precedence.  Post: a FlatGrammar whose
    productions hold only terminal keys and names; every nested group became a
    helper rule ``rule__gN`` and every repetition a helper ``rule__rN`` whose
    spec (item symbol, min, max) is in ``repeats`` with no productions yet
    (one helper per distinct spec, so ``b? b?`` reads ``h h``).
    Empty literals vanish (an empty production is the empty string)."""
    flat = FlatGrammar(start, {})
    repeat_helpers: dict[tuple, str] = {}
    work: list[tuple[str, Node]] = list(bodies.items())
    work.reverse()
    while work:
        name, body = work.pop()
        owner = name

        def lower(node: Node) -> Symbol:
            key = terminal_key(node)
            if key is not None:
                compiler.origins.setdefault(key, (owner, node.span, source))
                return key
            if node.__class__ is RuleRef:
                return node.name
            if node.__class__ is Repeat:
                item = node.item
                item_symbol = terminal_key(item) or (item.name if isinstance(item, RuleRef) else None)
                if item_symbol is None:
                    item_symbol = group(item)
                elif isinstance(item_symbol, tuple):
                    compiler.origins.setdefault(item_symbol, (owner, item.span, source))
                spec = (item_symbol, node.min, node.max)
                if spec not in repeat_helpers:
                    helper = repeat_helpers[spec] = names.fresh(owner, "r")
                    flat.rules[helper] = []
                    flat.repeats[helper] = spec
                return repeat_helpers[spec]
            return group(node)

        def group(node: Node) -> str:
            helper = names.fresh(owner, "g")
            flat.rules[helper] = []
            work.append((helper, node))
            return helper

        alternatives = body.items if body.__class__ is Alternation else (body,)
        productions = flat.rules.setdefault(name, [])
        productions.clear()
        for alternative in alternatives:
            items = alternative.items if alternative.__class__ is Sequence else (alternative,)
            productions.append(tuple([lower(item) for item in items
                                      if not (item.__class__ is Literal and not item.value)]))
    return flat


def expand_repetitions(flat: FlatGrammar, names: NameFactory, max_rules: Optional[int] = None) -> None:
    """Pre: helpers in ``flat.repeats`` have no productions.  Post: ``repeats``
    is empty and each helper derives its repetition (empty productions allowed):

    - ``X?``: ``h ::= () | X``;  ``X*``: ``h ::= () | h X``;  ``X+``: ``h ::= X | h X``
    - ``X{m,}``: ``h ::= E(m) | h X``;  ``X{m,n}``: ``h ::= E(m) U(n-m)``
    - ``E(k)`` (exactly k): ``E(k) ::= E(k//2) E(k//2) [X]``, log k rules
    - ``U(j)`` (0 to j): ``U(j) ::= () | X U(j-1)``, j rules, unambiguous

    Helpers E and U are shared by every repetition of the same item.  Raises
    ``LimitExceeded("max_rules")`` as soon as the rule count passes ``max_rules``,
    so huge counts cost bounded work.
    """
    exact: dict[tuple[Symbol, int], Symbol] = {}
    upto: dict[tuple[Symbol, int], str] = {}

    def exactly(item: Symbol, count: int, base: str) -> Symbol:
        if count == 1:
            return item
        key = (item, count)
        if key not in exact:
            name = names.fresh(base, f"x{count}_")
            exact[key] = name
            half = exactly(item, count // 2, base)
            flat.rules[name] = [(half, half) + ((item,) if count % 2 else ())]
        return exact[key]

    def up_to(item: Symbol, count: int, base: str) -> str:
        previous: Optional[str] = None
        for size in range(1, count + 1):
            key = (item, size)
            if key not in upto:
                name = names.fresh(base, f"u{size}_")
                upto[key] = name
                flat.rules[name] = [(), (item,) if previous is None else (item, previous)]
                if max_rules is not None and len(flat.rules) > max_rules:
                    raise LimitExceeded("max_rules", len(flat.rules), max_rules,
                                        f"rules while expanding the repetitions of rule '{base}'")
            previous = upto[key]
        return upto[(item, count)]

    for helper, (item, low, high) in list(flat.repeats.items()):
        if high is None:
            head = (item,) if low == 0 else (exactly(item, low, helper),)
            flat.rules[helper] = [() if low == 0 else head, (helper, item)]
        elif high == 0:
            flat.rules[helper] = [()]
        elif low == 0 and high == 1:
            flat.rules[helper] = [(), (item,)]
        else:
            head = () if low == 0 else (exactly(item, low, helper),)
            tail = () if high == low else (up_to(item, high - low, helper),)
            flat.rules[helper] = [head + tail]
    flat.repeats.clear()
