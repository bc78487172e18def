"""Test support for the Earley core: hand-built LNF grammars and an
independent reference recognizer.

* ``make_dfa(pattern, kind)``: a small byte-level regex compiler (Thompson NFA,
  subset construction, trimmed, dead state 0, byte classes) producing objects
  with the attributes of ``grammask.terminals.DFA``.  Kinds: ``regex``,
  ``early_end`` (ends at its first match), ``complement`` (strings containing
  no match), ``substrings`` (substrings of the pattern taken literally).
  Pattern syntax: literal bytes, ``\\xNN``, ``\\`` escapes, ``[...]`` / ``[^...]``
  with ranges, ``( )``, ``|``, postfix ``* + ?``.
* ``build_lnf(text)``: LNF arrays from readable productions, e.g.
  ``"S ::= 'a' S | 'a' ; T ::= /[0-9]+/ | e/ab*/ | x/ab/ | s/abc/"``
  (quoted literal with Python escapes, ``/re/`` regex, ``e/re/`` early end,
  ``x/re/`` complement, ``s/text/`` substrings).  The first rule is the start.
* ``ReferenceRecognizer(lnf)``: plain least-fixpoint recognizer over the LNF
  productions that decides terminals with the ``regex`` module on the source
  patterns (``fullmatch``, ``partial=True`` for prefixes), never with the DFAs,
  so it is independent of both the DFA compiler and the Earley core.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import regex

# ---------------------------------------------------------------------------
# Mini regex -> DFA
# ---------------------------------------------------------------------------

ALL_BYTES = frozenset(range(256))


class _Parser:
    def __init__(self, pattern: bytes):
        self.pattern = pattern
        self.pos = 0

    def peek(self):
        return self.pattern[self.pos] if self.pos < len(self.pattern) else None

    def take(self):
        byte = self.pattern[self.pos]
        self.pos += 1
        return byte

    def parse(self):
        node = self.alternation()
        if self.pos != len(self.pattern):
            raise ValueError(f"unexpected {chr(self.peek())!r} at {self.pos}")
        return node

    def alternation(self):
        branches = [self.sequence()]
        while self.peek() == ord("|"):
            self.take()
            branches.append(self.sequence())
        return ("alt", branches) if len(branches) > 1 else branches[0]

    def sequence(self):
        parts = []
        while self.peek() is not None and self.peek() not in b"|)":
            atom = self.atom()
            while self.peek() is not None and self.peek() in b"*+?":
                atom = ("repeat", chr(self.take()), atom)
            parts.append(atom)
        return ("seq", parts)

    def escape(self):
        byte = self.take()
        if byte == ord("x"):
            value = int(self.pattern[self.pos:self.pos + 2], 16)
            self.pos += 2
            return value
        return byte

    def atom(self):
        byte = self.take()
        if byte == ord("("):
            node = self.alternation()
            if self.take() != ord(")"):
                raise ValueError("missing )")
            return node
        if byte == ord("["):
            negate = self.peek() == ord("^")
            if negate:
                self.take()
            members = set()
            while self.peek() != ord("]"):
                low = self.escape() if self.take() == ord("\\") else self.pattern[self.pos - 1]
                high = low
                if self.peek() == ord("-") and self.pattern[self.pos + 1] != ord("]"):
                    self.take()
                    high = self.escape() if self.take() == ord("\\") else self.pattern[self.pos - 1]
                members.update(range(low, high + 1))
            self.take()
            return ("set", frozenset(ALL_BYTES - members if negate else members))
        if byte == ord("\\"):
            return ("set", frozenset([self.escape()]))
        return ("set", frozenset([byte]))


class _Nfa:
    def __init__(self):
        self.edges = []      # state -> list of (byteset, target)
        self.epsilon = []    # state -> list of targets

    def new_state(self):
        self.edges.append([])
        self.epsilon.append([])
        return len(self.edges) - 1

    def build(self, node, start, end):
        kind = node[0]
        if kind == "set":
            self.edges[start].append((node[1], end))
        elif kind == "seq":
            current = start
            for part in node[1]:
                nxt = self.new_state()
                self.build(part, current, nxt)
                current = nxt
            self.epsilon[current].append(end)
        elif kind == "alt":
            for branch in node[1]:
                self.build(branch, start, end)
        else:
            op, inner = node[1], node[2]
            loop_in, loop_out = self.new_state(), self.new_state()
            self.epsilon[start].append(loop_in)
            self.build(inner, loop_in, loop_out)
            self.epsilon[loop_out].append(end)
            if op in "*+":
                self.epsilon[loop_out].append(loop_in)
            if op in "*?":
                self.epsilon[start].append(end)

    def closure(self, states):
        stack, seen = list(states), set(states)
        while stack:
            for target in self.epsilon[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return frozenset(seen)


@dataclass
class FakeDFA:
    """Same attributes as grammask.terminals.DFA (format_version 1)."""
    kind: str
    source: str
    class_map: np.ndarray
    transitions: np.ndarray
    accepting: np.ndarray
    start: int
    format_version: int = 1
    dead: int = 0
    n_states: int = field(init=False)
    n_classes: int = field(init=False)

    def __post_init__(self):
        self.n_states, self.n_classes = self.transitions.shape

    def step(self, state, byte):
        return int(self.transitions[state, self.class_map[byte]])

    def is_accepting(self, state):
        return bool(self.accepting[state])

    def fullmatch(self, data):
        state = self.start
        for byte in data:
            state = self.step(state, byte)
        return self.is_accepting(state)


def _determinize(nfa, start_states, is_final):
    """Subset construction; returns (table[n, 256], accepting, start) with
    the hopeless states (cannot reach acceptance) merged into dead state 0."""
    start = nfa.closure(start_states)
    index = {start: 0}
    order = [start]
    rows = []
    while len(rows) < len(order):
        current = order[len(rows)]
        row = []
        for byte in range(256):
            targets = {t for s in current for bytes_, t in nfa.edges[s] if byte in bytes_}
            nxt = nfa.closure(targets)
            if nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
            row.append(index[nxt])
        rows.append(row)
    table = np.array(rows, dtype=np.int64)
    accepting = np.array([bool(states) and is_final(states) for states in order], dtype=bool)
    # co-reachability
    alive = accepting.copy()
    changed = True
    while changed:
        reach = alive[table].any(axis=1) | accepting
        changed = bool((reach != alive).any())
        alive = reach
    kept = [s for s in range(len(order)) if alive[s]]
    remap = np.zeros(len(order), dtype=np.int64)
    for new, old in enumerate(kept, start=1):
        remap[old] = new
    new_table = np.zeros((len(kept) + 1, 256), dtype=np.int64)
    new_accepting = np.zeros(len(kept) + 1, dtype=bool)
    for new, old in enumerate(kept, start=1):
        new_table[new] = remap[table[old]]
        new_accepting[new] = accepting[old]
    start_state = int(remap[0])
    if start_state == 0:
        raise ValueError("pattern matches nothing")
    return new_table, new_accepting, start_state


def make_dfa(pattern: str | bytes, kind: str = "regex") -> FakeDFA:
    raw = pattern.encode() if isinstance(pattern, str) else pattern
    nfa = _Nfa()
    if kind == "substrings":
        states = [nfa.new_state() for _ in range(len(raw) + 1)]
        for i, byte in enumerate(raw):
            nfa.edges[states[i]].append((frozenset([byte]), states[i + 1]))
        table, accepting, start = _determinize(nfa, set(states), lambda s: True)
    else:
        tree = _Parser(raw).parse()
        begin, end = nfa.new_state(), nfa.new_state()
        if kind == "complement":
            # DFA of "contains a match", then complemented.
            any_in, any_out = nfa.new_state(), nfa.new_state()
            nfa.epsilon[begin].append(any_in)
            nfa.edges[any_in].append((ALL_BYTES, any_in))
            nfa.build(tree, any_in, any_out)
            nfa.edges[any_out].append((ALL_BYTES, any_out))
            nfa.epsilon[any_out].append(end)
            table, accepting, start = _determinize(nfa, {begin}, lambda s: end not in s)
        else:
            nfa.build(tree, begin, end)
            table, accepting, start = _determinize(nfa, {begin}, lambda s: end in s)
            if kind == "early_end":
                table[accepting] = 0
                # states that now cannot reach acceptance are already dead-free:
                # every state reaching an accepting state still does.
    columns, class_map = np.unique(table.T, axis=0, return_inverse=True)
    return FakeDFA(kind=kind, source=raw.decode("latin-1"),
                   class_map=class_map.reshape(-1).astype(np.uint8),
                   transitions=np.ascontiguousarray(columns.T, dtype=np.int32),
                   accepting=accepting, start=start)


# ---------------------------------------------------------------------------
# Hand-built LNF
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Terminal:
    kind: str          # "literal", "regex", "early_end", "complement", "substrings"
    value: bytes       # literal bytes or pattern


@dataclass
class HandLNF:
    nonterminal_names: list
    start_id: int
    start_accepts_empty: bool
    nonterminal_production_offsets: np.ndarray
    production_lhs: np.ndarray
    production_symbol_offsets: np.ndarray
    symbol_kinds: np.ndarray
    symbol_ids: np.ndarray
    terminal_kinds: np.ndarray
    terminal_literal_offsets: np.ndarray
    literal_bytes: np.ndarray
    terminal_dfa_ids: np.ndarray
    dfas: list
    terminals: list          # Terminal per terminal id (for the reference)
    productions: list        # per nonterminal id: list of symbol lists (("t", id) | ("n", id))

    __hash__ = object.__hash__


_TOKEN = re.compile(rb"""\s*(?:(?P<lit>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<re>[exs]?/(?:[^/\\]|\\.)*/)"""
                    rb"""|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>::=|\||;))""")
_KINDS = {b"": "regex", b"e": "early_end", b"x": "complement", b"s": "substrings"}


def _tokenize(text: bytes):
    pos, tokens = 0, []
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise ValueError(f"bad grammar text at {text[pos:pos + 20]!r}")
        pos = match.end()
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
    return tokens


def build_lnf(text: str | bytes, start_accepts_empty: bool = False) -> HandLNF:
    """Rules ``Name ::= alt | alt ;`` (``;`` or a new ``Name ::=`` ends a rule)."""
    raw = text.encode() if isinstance(text, str) else text
    tokens = _tokenize(raw.replace(b"\n", b" "))
    rules: dict[str, list] = {}
    order: list[str] = []
    current = None
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "name" and i + 1 < len(tokens) and tokens[i + 1] == ("op", b"::="):
            current = value.decode()
            if current not in rules:
                rules[current] = []
                order.append(current)
            rules[current].append([])
            i += 2
            continue
        if kind == "op" and value == b"|":
            rules[current].append([])
        elif kind == "op" and value == b";":
            current = None
        else:
            rules[current][-1].append((kind, value))
        i += 1
    names = order
    nt_index = {name: k for k, name in enumerate(names)}
    terminals: list[Terminal] = []
    terminal_index: dict[Terminal, int] = {}
    productions = []
    for name in names:
        alternatives = []
        for alternative in rules[name]:
            symbols = []
            for kind, value in alternative:
                if kind == "name":
                    symbols.append(("n", nt_index[value.decode()]))
                    continue
                if kind == "lit":
                    term = Terminal("literal", value[1:-1].decode("unicode_escape").encode("latin-1")
                                    if b"\\" in value else value[1:-1])
                else:
                    prefix, body = value.split(b"/", 1)
                    term = Terminal(_KINDS[prefix], body[:-1])
                if term not in terminal_index:
                    terminal_index[term] = len(terminals)
                    terminals.append(term)
                symbols.append(("t", terminal_index[term]))
            alternatives.append(symbols)
        productions.append(alternatives)
    return assemble_lnf(productions, terminals, start_id=0, start_accepts_empty=start_accepts_empty,
                        names=names)


def assemble_lnf(productions, terminals, start_id=0, start_accepts_empty=False, names=None):
    nt_offsets, lhs, sym_offsets, kinds, ids = [0], [], [0], [], []
    for nt, alternatives in enumerate(productions):
        for symbols in alternatives:
            lhs.append(nt)
            for kind, ident in symbols:
                kinds.append(1 if kind == "n" else 0)
                ids.append(ident)
            sym_offsets.append(len(kinds))
        nt_offsets.append(len(lhs))
    term_kinds, lit_offsets, lit_bytes, dfa_ids, dfas = [], [0], b"", [], []
    for term in terminals:
        if term.kind == "literal":
            term_kinds.append(0)
            lit_bytes += term.value
            dfa_ids.append(-1)
        else:
            term_kinds.append(1)
            dfa_ids.append(len(dfas))
            dfas.append(make_dfa(term.value, term.kind))
        lit_offsets.append(len(lit_bytes))
    return HandLNF(
        nonterminal_names=names or [f"N{k}" for k in range(len(productions))],
        start_id=start_id, start_accepts_empty=start_accepts_empty,
        nonterminal_production_offsets=np.array(nt_offsets, dtype=np.int32),
        production_lhs=np.array(lhs, dtype=np.int32),
        production_symbol_offsets=np.array(sym_offsets, dtype=np.int32),
        symbol_kinds=np.array(kinds, dtype=np.uint8),
        symbol_ids=np.array(ids, dtype=np.int32),
        terminal_kinds=np.array(term_kinds, dtype=np.uint8),
        terminal_literal_offsets=np.array(lit_offsets, dtype=np.int32),
        literal_bytes=np.frombuffer(lit_bytes, dtype=np.uint8).copy(),
        terminal_dfa_ids=np.array(dfa_ids, dtype=np.int32),
        dfas=dfas, terminals=list(terminals), productions=productions)


# ---------------------------------------------------------------------------
# Reference recognizer (least fixpoint over end positions, regex module)
# ---------------------------------------------------------------------------

PAST_END = -1


class ReferenceRecognizer:
    """``ends(symbol, i)`` = positions j with data[i:j] in the symbol's
    language, plus PAST_END when data[i:] is a prefix of one of its strings.
    Assumes every nonterminal and terminal has a non-empty language of
    non-empty strings (true of the grammars the tests build)."""

    def __init__(self, lnf: HandLNF):
        self.lnf = lnf
        self.compiled = [regex.compile(t.value) if t.kind in ("regex", "early_end", "complement")
                         else None for t in lnf.terminals]

    def _terminal_ends(self, t, data, i):
        term, n = self.lnf.terminals[t], len(data)
        rest = data[i:]
        ends = set()
        if term.kind == "literal":
            if rest[:len(term.value)] == term.value:
                ends.add(i + len(term.value))
            if term.value[:len(rest)] == rest:
                ends.add(PAST_END)
            return ends
        if term.kind == "substrings":
            for j in range(i + 1, n + 1):
                if data[i:j] in term.value:
                    ends.add(j)
            if rest in term.value:
                ends.add(PAST_END)
            return ends
        pattern = self.compiled[t]
        if term.kind == "complement":
            for j in range(i + 1, n + 1):
                if pattern.search(data[i:j]) is None:
                    ends.add(j)
            if pattern.search(rest) is None:
                ends.add(PAST_END)
            return ends
        first_match = None
        for j in range(i + 1, n + 1):
            if pattern.fullmatch(data[i:j]):
                if term.kind == "early_end" and first_match is not None:
                    break
                first_match = j
                ends.add(j)
        if term.kind == "early_end" and first_match is not None and first_match < n:
            return ends
        if not rest or pattern.fullmatch(rest, partial=True):
            ends.add(PAST_END)
        return ends

    def _table(self, data: bytes):
        n = len(data)
        lnf = self.lnf
        terminal_ends = [[self._terminal_ends(t, data, i) for i in range(n + 1)]
                         for t in range(len(lnf.terminals))]
        table = [[set() for _ in range(n + 1)] for _ in lnf.productions]
        changed = True
        while changed:
            changed = False
            for nt, alternatives in enumerate(lnf.productions):
                for i in range(n + 1):
                    found = set()
                    for symbols in alternatives:
                        frontier = {i}
                        for kind, ident in symbols:
                            nxt = set()
                            for position in frontier:
                                source = (terminal_ends[ident] if kind == "t" else table[ident])[position]
                                nxt.update(source)
                            if PAST_END in nxt:
                                found.add(PAST_END)
                                nxt.discard(PAST_END)
                            frontier = nxt
                        found.update(frontier)
                    if not found <= table[nt][i]:
                        table[nt][i] |= found
                        changed = True
        return table

    def verdict(self, data: bytes) -> tuple[bool, bool]:
        """(viable prefix, accepted) from one fixpoint."""
        if not data:
            return True, self.lnf.start_accepts_empty
        ends = self._table(data)[self.lnf.start_id][0]
        return PAST_END in ends, len(data) in ends

    def accepts(self, data: bytes) -> bool:
        return self.verdict(data)[1]

    def viable(self, data: bytes) -> bool:
        return self.verdict(data)[0]
