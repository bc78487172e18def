"""Normalization to LNF (Loup's normal form), second half, and the pipeline.

Seed: the kbnf post (docs/references.md), "Obtain LNF".
The passes of ``flatten.py`` produce a ``FlatGrammar``; the passes here clean
it until it satisfies the LNF invariants of docs/internals.md:

- no empty production (``start_accepts_empty`` records the empty sentence),
- no unit production ``A ::= B`` (but to a rule of more than
  ``UNIT_INLINE_LIMIT`` productions, or ``UNIT_INLINE_BESIDE_LIMIT`` when A
  has other productions),
- every nonterminal reachable from the start and productive,
- nullable terminals (regexes matching the empty string) only appear where
  skipping them was also spelled out, so the core never completes a DFA
  terminal at its start state,
- literal terminals non-empty.

Exception: when the language is exactly ``{""}`` the start nonterminal keeps
no production at all (``start_accepts_empty`` is True); nothing else is left.

``normalize(ast, config)`` flattens the AST (group_rules_by_name,
flatten_by_precedence, fold_regular_repetitions, flatten_nested_groups), then
runs the table ``PASSES`` in order: each entry is (name, function, what it
guarantees afterwards).  It records the size of the grammar after
flattening and after each pass (``NormalizedGrammar.pass_sizes``).
remove_useless_rules runs once, after the passes that can make rules useless.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Callable, Optional

from grammask.config import Config
from grammask.errors import GrammarError, LimitExceeded
from grammask.grammar.ast import GrammarAST
from grammask.grammar.flatten import (
    FlatGrammar,
    NameFactory,
    Production,
    Symbol,
    expand_repetitions,
    flatten_by_precedence,
    flatten_nested_groups,
    group_rules_by_name,
)
from grammask.grammar.regular import fold_regular_repetitions, join_adjacent_regexes
from grammask.grammar.terminal_keys import TerminalCompiler

LITERAL_ALTERNATION_MIN = 8
"""A rule with at least this many single-literal productions gets them
compiled into one DFA terminal."""


@dataclass
class NormalizedGrammar:
    flat: FlatGrammar
    compiler: TerminalCompiler
    pass_sizes: list[tuple[str, dict[str, int]]] = field(default_factory=list)


def merge_consecutive_literals(flat: FlatGrammar, only: Optional[set[str]] = None) -> None:
    """Pre: flat productions (with ``only``: no two literals adjacent outside
    the rules it names).  Post: no two literal terminals are adjacent in a
    production (``'b' 'c' 'd'`` became ``'bcd'``)."""
    for name in flat.rules if only is None else [name for name in only if name in flat.rules]:
        productions = flat.rules[name]
        merged_productions = productions
        for index, production in enumerate(productions):
            merged = _merged_literals(production) if len(production) > 1 else None
            if merged is None:
                continue   # no two literals adjacent: kept as it is
            if merged_productions is productions:
                merged_productions = list(productions)   # the list may be shared: copied on write
            merged_productions[index] = merged
        flat.rules[name] = merged_productions


def _merged_literals(production: Production) -> Optional[Production]:
    """``production`` with each run of adjacent literals joined into one, or
    None when no two literals are adjacent (one pass; the copy starts at the
    first adjacent pair)."""
    merged: Optional[list[Symbol]] = None
    previous_lit = False
    for index, symbol in enumerate(production):
        is_lit = symbol.__class__ is tuple and symbol[0] == "lit"
        if is_lit and previous_lit:
            if merged is None:
                merged = list(production[:index])
            merged[-1] = ("lit", merged[-1][1] + symbol[1])
        elif merged is not None:
            merged.append(symbol)
        previous_lit = is_lit
    return None if merged is None else tuple(merged)


def deduplicate_alternatives(flat: FlatGrammar) -> None:
    """Pre: flat productions.  Post: the productions of each rule are distinct
    (first occurrence kept, order preserved)."""
    for name, productions in flat.rules.items():
        if len(productions) > 1:
            flat.rules[name] = list(dict.fromkeys(productions))


def remove_useless_rules(flat: FlatGrammar, compiler: TerminalCompiler, after_nullable: bool = False) -> list[str]:
    """Pre: flat productions (empty ones allowed).  Post: every production
    consists of productive symbols and every rule is productive and reachable
    from the start.  With ``after_nullable`` a terminal counts as productive
    only if it matches a non-empty string (after ``eliminate_nullable`` a
    terminal stands for its non-empty matches).  Returns the removed names.
    Raises GrammarError when the
    start symbol itself is not productive (the language is empty); the start
    rule of the language ``{""}`` stays even without productions once
    ``start_accepts_empty`` is set."""
    productive: set[str] = set()
    users: dict[str, list[int]] = {}
    pending: list[int] = []
    owners: list[str] = []
    queue: list[str] = []
    empty_terminals: dict[tuple, bool] = {}
    for name, productions in flat.rules.items():
        for production in productions:
            production_index = len(pending)
            missing = 0
            for symbol in production:
                if symbol.__class__ is str:
                    users.setdefault(symbol, []).append(production_index)
                    missing += 1
                else:
                    empty = empty_terminals.get(symbol)
                    if empty is None:
                        empty = empty_terminals[symbol] = (not compiler.has_nonempty_match(symbol)
                                                           if after_nullable else compiler.is_empty(symbol))
                    if empty:
                        missing += len(production) + 1
            pending.append(missing)
            owners.append(name)
            if missing == 0 and name not in productive:
                productive.add(name)
                queue.append(name)
    while queue:
        for production_index in users.get(queue.pop(), ()):
            pending[production_index] -= 1
            name = owners[production_index]
            if pending[production_index] == 0 and name not in productive:
                productive.add(name)
                queue.append(name)
    if flat.start not in productive and not (flat.start_accepts_empty and flat.start in flat.rules):
        raise GrammarError(f"the language of the start rule '{flat.start}' is empty: no finite string "
                           f"can be derived from it (check rules that only refer to themselves)")
    unproductive = {owners[index] for index, missing in enumerate(pending) if missing}
    if unproductive:
        production_index = 0
        for name, productions in flat.rules.items():
            if name in unproductive:
                flat.rules[name] = [production for offset, production in enumerate(productions)
                                    if pending[production_index + offset] == 0]
            production_index += len(productions)
    return remove_unreachable_rules(flat)


def remove_unreachable_rules(flat: FlatGrammar) -> list[str]:
    """Pre: flat productions.  Post: every rule is reachable from the start
    (the cheap half of ``remove_useless_rules``, for passes that cannot make a
    rule unproductive).  Returns the removed names."""
    reachable = {flat.start}
    stack = [flat.start]
    while stack:
        for production in flat.rules[stack.pop()]:
            for symbol in production:
                if symbol.__class__ is str and symbol not in reachable:
                    reachable.add(symbol)
                    stack.append(symbol)
    removed = [name for name in flat.rules if name not in reachable]
    if removed:
        flat.rules = {name: productions for name, productions in flat.rules.items() if name in reachable}
    return removed


def nullable_symbols(flat: FlatGrammar, compiler: TerminalCompiler) -> set[Symbol]:
    """Nonterminals and terminal keys that derive the empty string."""
    terminals = {symbol for symbol in set(chain.from_iterable(chain.from_iterable(flat.rules.values())))
                 if symbol.__class__ is not str}
    nullable: set[Symbol] = {key for key in terminals if compiler.is_nullable(key)}
    if not nullable and not any(() in productions for productions in flat.rules.values()):
        return nullable   # nothing derives the empty string without a first empty symbol
    solid = terminals - nullable   # a production holding one of these derives no empty string
    # Worklist (linear in the grammar's size): each candidate production
    # counts its symbols not yet known nullable; a name becomes nullable when
    # one of its productions reaches zero.
    missing: list[int] = []
    owners: list[str] = []
    waiting: dict[str, list[int]] = {}
    ready: list[str] = []
    for name, productions in flat.rules.items():
        for production in productions:
            if not solid.isdisjoint(production):
                continue
            names = [symbol for symbol in production if symbol.__class__ is str]
            index = len(owners)
            owners.append(name)
            missing.append(len(names))
            for symbol in names:
                waiting.setdefault(symbol, []).append(index)
            if not names:
                ready.append(name)
    while ready:
        name = ready.pop()
        if name in nullable:
            continue
        nullable.add(name)
        for index in waiting.get(name, ()):
            missing[index] -= 1
            if missing[index] == 0:
                ready.append(owners[index])
    return nullable


def eliminate_nullable(flat: FlatGrammar, compiler: TerminalCompiler, names: NameFactory) -> set[str]:
    """Pre: flat productions, possibly empty, possibly with nullable terminals.
    Post: no empty production; every symbol may be assumed to match at least
    one byte (a nullable terminal now stands for its non-empty matches); the
    language is unchanged except the empty string, recorded in
    ``flat.start_accepts_empty``.

    Linear size: a run of k copies of one nullable symbol X becomes one helper
    ``R(k) ::= X | X R(k-1)`` (1 to k copies); then each production is expanded
    right to left, keeping at most four alternatives for the suffix read so far
    and moving the suffix into a helper rule whenever a skippable symbol would
    double them (instead of enumerating 2^n combinations).

    Returns the names of the rules it rewrote or added (the only ones whose
    productions may now hold symbols that were not adjacent before)."""
    nullable = nullable_symbols(flat, compiler)
    flat.start_accepts_empty = flat.start in nullable
    rewritten: set[str] = set()
    if not nullable:
        return rewritten  # no empty production either: it would make its rule nullable
    runs: dict[tuple[Symbol, int], Symbol] = {}
    suffix_helpers: dict[tuple, str] = {}

    def run_of(symbol: Symbol, count: int, base: str) -> Symbol:
        previous: Symbol = symbol
        for size in range(2, count + 1):
            key = (symbol, size)
            if key not in runs:
                name = names.fresh(base, f"n{size}_")
                runs[key] = name
                new_rules[name] = [(symbol,), (symbol, previous)]
            previous = runs[key]
        return previous

    def suffix_helper(alternatives: list[Production], base: str) -> str:
        key = tuple(alternatives)
        if key not in suffix_helpers:
            name = names.fresh(base, "s")
            suffix_helpers[key] = name
            new_rules[name] = list(alternatives)
        return suffix_helpers[key]

    new_rules: dict[str, list[Production]] = {}
    for name, productions in list(flat.rules.items()):
        expanded: list[Production] = []
        for production in productions:
            if nullable.isdisjoint(production):
                if production:
                    expanded.append(production)
                continue
            rewritten.add(name)
            items: list[tuple[Symbol, bool]] = []
            index = 0
            while index < len(production):
                symbol = production[index]
                end = index + 1
                while end < len(production) and production[end] == symbol:
                    end += 1
                if symbol in nullable:
                    count = end - index
                    items.append((run_of(symbol, count, name) if count > 1 else symbol, True))
                else:
                    items.extend((symbol, False) for _ in range(end - index))
                index = end
            alternatives: list[Production] = [()]
            for symbol, skippable in reversed(items):
                if not skippable:
                    alternatives = [(symbol,) + alternative for alternative in alternatives]
                    continue
                non_empty = [alternative for alternative in alternatives if alternative]
                has_empty = len(non_empty) < len(alternatives)
                if len(non_empty) > 1:
                    helper = suffix_helper(non_empty, name)
                    alternatives = [(symbol, helper), (helper,)] + ([(symbol,), ()] if has_empty else [])
                else:
                    alternatives = [(symbol,) + alternative for alternative in alternatives] + alternatives
            expanded.extend(alternative for alternative in alternatives if alternative)
        new_rules[name] = expanded
    flat.rules = {name: new_rules[name] for name in flat.rules}
    added = [name for name in new_rules if name not in flat.rules]
    flat.rules.update((name, new_rules[name]) for name in added)
    rewritten.update(added)
    if flat.start_accepts_empty and any(flat.start in production for productions in flat.rules.values()
                                        for production in productions):
        rewritten.add(_separate_start(flat, names))
    return rewritten


def _separate_start(flat: FlatGrammar, names: NameFactory) -> str:
    """When the start accepts the empty sentence and is also used inside
    productions, uses refer to a copy ``start__neN`` instead, so the start rule
    alone carries the empty sentence (and ``to_ebnf`` can print it as a ``""``
    alternative without making the uses nullable).  Returns the copy's name."""
    inner = names.fresh(flat.start, "ne")
    flat.rules = {name: [tuple(inner if symbol == flat.start else symbol for symbol in production)
                         for production in productions]
                  for name, productions in flat.rules.items()}
    flat.rules[inner] = list(flat.rules[flat.start])
    return inner


UNIT_INLINE_LIMIT = 32
"""A unit production ``A ::= B`` is kept when B's closed productions are more
than this (a chain of optional members would otherwise give each rule all of
the chain's productions, n^2 / 2 in all)."""

UNIT_INLINE_BESIDE_LIMIT = 8
"""A unit production ``A ::= B`` of a rule A with other productions is kept
when B's closed productions are more than this.  Along a chain of unit rules
with k own productions each (the optional members of a JSON object), the
closed sets then grow to at most this plus k and start again, instead of
growing to ``UNIT_INLINE_LIMIT`` again and again: with k = 1, about 5.5
productions a rule instead of 17 (``tests/test_grammar_repeats_units.py``).
A rule whose only production is ``A ::= B`` (an alias) still takes up to
``UNIT_INLINE_LIMIT``, so a chain of aliases closes to its end's
productions.  Both limits look at the output only, so normalizing a
normalized grammar changes nothing."""


def remove_unit_rules(flat: FlatGrammar) -> None:
    """Pre: no empty productions.  Post: no production ``A ::= B`` with B a
    nonterminal unless B is not in a unit cycle with A and B's closed
    productions are more than ``UNIT_INLINE_LIMIT``, or more than
    ``UNIT_INLINE_BESIDE_LIMIT`` when A has other productions; A instead has
    the non-unit productions of every rule it reaches through the unit
    productions removed (same language).

    Rules are closed once per strongly connected component of the unit
    graph (Tarjan's algorithm, iterative), in reverse topological order, each
    from its own productions and its successors' closed sets, so a chain of
    n unit rules costs O(n) plus the size of the result, and the result
    is at most ``UNIT_INLINE_LIMIT + 1`` times the productions and unit
    productions it started with (``UNIT_INLINE_BESIDE_LIMIT + 1`` times
    without aliases)."""
    units = {name: [production[0] for production in productions
                    if len(production) == 1 and production[0].__class__ is str]
             for name, productions in flat.rules.items()}
    closed: dict[str, dict[Production, None]] = {}
    for component in _unit_components(units):
        first = component[0]
        if len(component) == 1 and len(units[first]) == len(flat.rules[first]) == 1:
            target = units[first][0]  # an alias: shares its target's closed set
            if target != first:
                closed[first] = (closed[target] if len(closed[target]) <= UNIT_INLINE_LIMIT
                                 else {(target,): None})
                continue
        members = set(component)
        collected: dict[Production, None] = {}
        for member in component:
            for production in flat.rules[member]:
                if not (len(production) == 1 and production[0].__class__ is str):
                    collected[production] = None
            for target in units[member]:
                if target in members:
                    continue
                if len(closed[target]) > UNIT_INLINE_BESIDE_LIMIT:
                    collected[(target,)] = None
                else:
                    collected.update(closed[target])
        for member in component:
            closed[member] = collected
    flat.rules = {name: list(closed[name]) for name in flat.rules}


def _unit_components(units: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of the unit graph, each listed after
    every component it reaches (iterative Tarjan: ``work`` holds each open
    name with the iterator over its remaining targets)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in units:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(units[root]))]
        while work:
            name, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(units[target])))
                    break
                if target in on_stack and index[target] < low[name]:
                    low[name] = index[target]
            else:
                work.pop()
                if low[name] == index[name]:
                    position = len(stack) - 1
                    while stack[position] != name:
                        position -= 1
                    component = stack[position:]
                    del stack[position:]
                    on_stack.difference_update(component)
                    components.append(component)
                if work:
                    parent = work[-1][0]
                    if low[name] < low[parent]:
                        low[parent] = low[name]
    return components


def merge_identical_nonterminals(flat: FlatGrammar) -> None:
    """Pre: flat productions.  Post: productions deduplicated, and no two
    nonterminals have the same set of productions (up to renaming the merged ones); the first in rule order (the
    start symbol first) is kept and references are rewritten.  A start symbol
    accepting the empty sentence is never merged (see ``_separate_start``).
    Repeated until no merge happens."""
    deduplicate_alternatives(flat)
    signatures: dict[str, object] = {}
    while True:
        representative: dict[object, str] = {}
        rename: dict[str, str] = {}
        order = [flat.start] + [name for name in flat.rules if name != flat.start]
        for name in order:
            signature = signatures.get(name)
            if signature is None:
                signature = signatures[name] = frozenset(flat.rules[name])
                if name == flat.start and flat.start_accepts_empty:
                    signature = signatures[name] = (signature, "start accepting the empty sentence")
            if signature in representative:
                rename[name] = representative[signature]
            else:
                representative[signature] = name
        if not rename:
            return
        renamed = rename.keys()
        rules: dict[str, list[Production]] = {}
        for name, productions in flat.rules.items():
            if name in rename:
                continue
            if not all(renamed.isdisjoint(production) for production in productions):
                productions = list(dict.fromkeys(
                    tuple(rename.get(symbol, symbol) if symbol.__class__ is str else symbol
                          for symbol in production) for production in productions))
                del signatures[name]
            rules[name] = productions
        flat.rules = rules


def compile_literal_alternations(flat: FlatGrammar, minimum: int = LITERAL_ALTERNATION_MIN) -> bool:
    """Pre: no unit productions.  Post: a rule with at least ``minimum``
    productions that are a single UTF-8 literal has them replaced by one production
    holding a ``("literals", ...)`` terminal (one DFA, built by
    ``compile_literals``); the rule's language is unchanged.  Returns whether
    a rule was rewritten."""
    def is_utf8_literal(production: Production) -> bool:
        if len(production) != 1 or not isinstance(production[0], tuple) or production[0][0] != "lit":
            return False
        try:
            production[0][1].decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    rewritten = False
    for name, productions in flat.rules.items():
        if len(productions) < minimum:
            continue
        literal_values = [production[0][1] for production in productions if is_utf8_literal(production)]
        if len(literal_values) < minimum:
            continue
        others = [production for production in productions if not is_utf8_literal(production)]
        flat.rules[name] = [(("literals", tuple(sorted(set(literal_values)))),)] + others
        rewritten = True
    return rewritten


@dataclass
class PassState:
    """What the passes work on: the flat grammar and the helpers it is built with."""
    flat: FlatGrammar
    compiler: TerminalCompiler
    names: NameFactory
    config: Config


@dataclass(frozen=True)
class Pass:
    """One step of ``PASSES``: ``run`` transforms ``state.flat`` in place,
    keeping its language (the empty sentence moves to ``start_accepts_empty``);
    ``guarantees`` is what holds of the grammar after
    it (its function's docstring gives the details)."""
    name: str
    run: Callable[[PassState], None]
    guarantees: str


def _eliminate_nullable(state: PassState) -> None:
    merge_consecutive_literals(state.flat, eliminate_nullable(state.flat, state.compiler, state.names))


def _compile_literal_alternations(state: PassState) -> None:
    if compile_literal_alternations(state.flat):
        merge_identical_nonterminals(state.flat)
        remove_unreachable_rules(state.flat)
    # else the grammar is as merge_identical_nonterminals left it: merged, every rule reachable


PASSES: tuple[Pass, ...] = (
    Pass("expand_repetitions",
         lambda state: expand_repetitions(state.flat, state.names, state.config.max_rules),
         "no repetition is left: every helper rule derives its repetition "
         "(empty productions allowed); at most max_rules rules"),
    Pass("merge_consecutive_literals", lambda state: merge_consecutive_literals(state.flat),
         "no two literal terminals are adjacent in a production"),
    Pass("eliminate_nullable", _eliminate_nullable,
         "no empty production; every symbol stands for non-empty strings (a "
         "nullable terminal for its non-empty matches); the empty sentence is "
         "start_accepts_empty; literals merged again"),
    Pass("remove_unit_rules", lambda state: remove_unit_rules(state.flat),
         f"no unit production A ::= B unless B has over {UNIT_INLINE_LIMIT} productions (over "
         f"{UNIT_INLINE_BESIDE_LIMIT} when A has others); no unit cycle"),
    Pass("remove_useless_rules",
         lambda state: remove_useless_rules(state.flat, state.compiler, after_nullable=True),
         "every rule productive and reachable from the start; every terminal "
         "matches a non-empty string"),
    Pass("merge_identical_nonterminals", lambda state: merge_identical_nonterminals(state.flat),
         "no two rules with the same productions; productions of a rule distinct"),
    Pass("compile_literal_alternations", _compile_literal_alternations,
         f"a rule with >= {LITERAL_ALTERNATION_MIN} single-literal productions has "
         "them as one DFA terminal; rules merged and reachability restored"),
    Pass("join_adjacent_regexes", lambda state: join_adjacent_regexes(state.flat, state.compiler),
         "no two plain regex or class terminals are adjacent in a production, unless "
         "their concatenation's DFA exceeds the fold budget"),
)
"""The passes after flattening, in the order ``normalize`` runs them."""


def normalize(ast: GrammarAST, config: Config) -> NormalizedGrammar:
    """Flatten a validated AST (group_rules_by_name, flatten_by_precedence,
    fold_regular_repetitions, flatten_nested_groups), then run ``PASSES`` in
    order, recording the grammar's size after each."""
    compiler = TerminalCompiler(config)
    bodies = group_rules_by_name(ast)
    names = NameFactory(bodies)
    bodies = {name: fold_regular_repetitions(flatten_by_precedence(body, config.max_repetition),
                                             compiler)
              for name, body in bodies.items()}
    flat = flatten_nested_groups(bodies, ast.start, compiler, names, ast.source)
    result = NormalizedGrammar(flat, compiler)
    result.pass_sizes.append(("flatten_nested_groups", flat.sizes()))
    _check_rules(flat, config, "flatten_nested_groups")
    state = PassState(flat, compiler, names, config)
    for step in PASSES:
        step.run(state)
        result.pass_sizes.append((step.name, flat.sizes()))
        _check_rules(flat, config, step.name)
    return result


def _check_rules(flat: FlatGrammar, config: Config, after: str) -> None:
    """``max_rules`` after each step, so a large grammar stops at the first
    pass that makes it too large rather than after the last."""
    if len(flat.rules) > config.max_rules:
        raise LimitExceeded("max_rules", len(flat.rules), config.max_rules, f"rules after {after}")
