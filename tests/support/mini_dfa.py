"""A small byte-level regex compiler for hand-built test grammars.

``make_dfa(pattern, kind)`` builds a Thompson NFA, determinizes it (subset
construction), trims the states that cannot reach acceptance into the dead
state 0 and merges equal byte columns into byte classes, producing a
``FakeDFA`` with the attributes of ``grammask.terminals.DFA`` (format 1).
It is independent of the Rust crate, so tests of the Earley core do not
depend on the terminal compiler.

Kinds: ``regex``; ``early_end`` (ends at its first match: accepting states
have no way out); ``complement`` (strings containing no match);
``substrings`` (substrings of the pattern taken literally).
Pattern syntax: literal bytes, ``\\xNN``, ``\\`` escapes, ``[...]`` / ``[^...]``
with ranges, ``( )``, ``|``, postfix ``* + ?``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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
