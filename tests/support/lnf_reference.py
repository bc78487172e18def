"""A textbook Earley recognizer over LNF arrays, in plain Python, for tests.

Independent of the Cython core: it reads the arrays of a
``grammask.grammar.lnf.LNF`` (or of a hand-built ``support.hand_lnf.HandLNF``,
which has the same fields and accessors) and scans one byte at a time, with
the terminal DFAs stepped through their Python ``step`` method.  An item is
``(production, dot, origin, terminal_state)``; ``terminal_state`` is None when
the dot is before a symbol, else the progress inside the terminal at the dot (byte offset into a
literal, or a DFA state).  Because LNF has no empty productions, a completed
item always has ``origin < position`` and the classic predict / scan /
complete loop needs no nullable special case (Earley 1970; Aycock and
Horspool 2002 for why that matters).

- ``accepts(data)``: a completed start production spans all of ``data``
  (or ``data`` is empty and ``start_accepts_empty``).
- ``viable_prefix(data)``: the last Earley set is non-empty (every LNF
  nonterminal is productive and DFA states other than 0 are live, so any item
  there can be finished), or ``data`` is empty.
- ``verdict(data)``: both, from one pass.
"""

from __future__ import annotations

from grammask.grammar.lnf import LNF, SYMBOL_NONTERMINAL, TERMINAL_LITERAL


class LNFRecognizer:
    def __init__(self, lnf: LNF):
        self.lnf = lnf
        self.symbols = [lnf.symbols_of(p) for p in range(lnf.n_productions)]
        self.lhs = [int(x) for x in lnf.production_lhs]
        self.literals = [lnf.literal(t) if lnf.terminal_kinds[t] == TERMINAL_LITERAL else None
                         for t in range(lnf.n_terminals)]
        self.dfas = [lnf.dfas[int(lnf.terminal_dfa_ids[t])] if self.literals[t] is None else None
                     for t in range(lnf.n_terminals)]

    def _sets(self, data: bytes) -> list[set]:
        lnf = self.lnf
        sets: list[set] = [set() for _ in range(len(data) + 1)]
        for production in lnf.productions_of(lnf.start_id):
            sets[0].add((production, 0, 0, None))
        for position in range(len(data) + 1):
            agenda = list(sets[position])
            while agenda:
                production, dot, origin, state = agenda.pop()
                symbols = self.symbols[production]
                if state is not None:
                    continue
                if dot == len(symbols):
                    lhs = self.lhs[production]
                    for waiting in list(sets[origin]):
                        w_production, w_dot, w_origin, w_state = waiting
                        w_symbols = self.symbols[w_production]
                        if (w_state is None and w_dot < len(w_symbols)
                                and w_symbols[w_dot] == (SYMBOL_NONTERMINAL, lhs)):
                            item = (w_production, w_dot + 1, w_origin, None)
                            if item not in sets[position]:
                                sets[position].add(item)
                                agenda.append(item)
                    continue
                kind, symbol_id = symbols[dot]
                if kind == SYMBOL_NONTERMINAL:
                    for predicted in lnf.productions_of(symbol_id):
                        item = (predicted, 0, position, None)
                        if item not in sets[position]:
                            sets[position].add(item)
                            agenda.append(item)
            if position == len(data):
                break
            byte = data[position]
            for production, dot, origin, state in sets[position]:
                symbols = self.symbols[production]
                if dot == len(symbols) or symbols[dot][0] == SYMBOL_NONTERMINAL:
                    continue
                terminal_id = symbols[dot][1]
                literal = self.literals[terminal_id]
                if literal is not None:
                    offset = state or 0
                    if literal[offset] != byte:
                        continue
                    if offset + 1 == len(literal):
                        sets[position + 1].add((production, dot + 1, origin, None))
                    else:
                        sets[position + 1].add((production, dot, origin, offset + 1))
                else:
                    dfa = self.dfas[terminal_id]
                    current = dfa.start if state is None else state
                    following = dfa.step(current, byte)
                    if following == dfa.dead:
                        continue
                    sets[position + 1].add((production, dot, origin, following))
                    if dfa.is_accepting(following):
                        sets[position + 1].add((production, dot + 1, origin, None))
            # Completions at the next position are found by its own agenda pass.
        return sets

    def verdict(self, data: bytes) -> tuple[bool, bool]:
        """(viable prefix, accepted) from one pass over ``data``."""
        data = bytes(data)
        if not data:
            return self.lnf.start_accepts_empty or self.lnf.n_productions > 0, self.lnf.start_accepts_empty
        final = self._sets(data)[-1]
        start = self.lnf.start_id
        accepted = any(dot == len(self.symbols[p]) and origin == 0 and state is None and self.lhs[p] == start
                       for p, dot, origin, state in final)
        return bool(final), accepted

    def accepts(self, data: bytes) -> bool:
        return self.verdict(data)[1]

    def viable_prefix(self, data: bytes) -> bool:
        return self.verdict(data)[0]
