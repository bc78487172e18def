"""The normalized grammar as flat arrays (LNF), and its KBNF printout.

Layout (docs/internals.md, "Normalized grammar: LNF arrays"; all arrays
numpy, C-contiguous):

- ``nonterminal_names[A]``; ``start_id`` (always 0 here); ``start_accepts_empty``
- ``nonterminal_production_offsets`` (int32, n_nonterminals + 1): productions of
  A are ``[off[A], off[A+1])``; ``production_lhs`` (int32)
- ``production_symbol_offsets`` (int32, n_productions + 1): symbols of p are
  ``[off[p], off[p+1])``, at least one
- ``symbol_kinds`` (uint8: 0 terminal, 1 nonterminal), ``symbol_ids`` (int32)
- ``terminal_kinds`` (uint8: 0 literal, 1 DFA), ``terminal_literal_offsets``
  (int32, n_terminals + 1) into ``literal_bytes`` (uint8),
  ``terminal_dfa_ids`` (int32, -1 for literals), ``dfas`` (list of DFA)
- extra: ``terminal_keys`` (the key of each terminal, see terminal_keys.py),
  used by ``to_ebnf``.

Invariants (checked by ``check_invariants``): no empty production, non-empty
literals, every DFA terminal matches some non-empty string, no cycle of unit
productions (a unit production ``A ::= B`` is left only where inlining would
copy more than ``UNIT_INLINE_LIMIT`` productions, normalize.py), every
nonterminal reachable and productive (except the start of the language
``{""}``, which has no production).
Terminal ids are given in order of first use; DFA ids likewise.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

from grammask.grammar.flatten import FlatGrammar
from grammask.grammar.terminal_keys import TerminalCompiler, kbnf_string, key_to_kbnf, terminal_spelling
from grammask.grammar.kbnf import is_name_char

NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]+")
SYMBOL_TERMINAL = 0
SYMBOL_NONTERMINAL = 1
TERMINAL_LITERAL = 0
TERMINAL_DFA = 1


@dataclass(eq=False)
class LNF:
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
    terminal_keys: list

    @property
    def n_nonterminals(self) -> int:
        return len(self.nonterminal_names)

    @property
    def n_productions(self) -> int:
        return len(self.production_lhs)

    @property
    def n_terminals(self) -> int:
        return len(self.terminal_kinds)

    def productions_of(self, nonterminal_id: int) -> range:
        offsets = self.nonterminal_production_offsets
        return range(int(offsets[nonterminal_id]), int(offsets[nonterminal_id + 1]))

    def symbols_of(self, production_id: int) -> list[tuple[int, int]]:
        """(kind, id) pairs of a production's symbols."""
        offsets = self.production_symbol_offsets
        return [(int(self.symbol_kinds[s]), int(self.symbol_ids[s]))
                for s in range(int(offsets[production_id]), int(offsets[production_id + 1]))]

    def literal(self, terminal_id: int) -> bytes:
        offsets = self.terminal_literal_offsets
        return self.literal_bytes[offsets[terminal_id]:offsets[terminal_id + 1]].tobytes()

    def sizes(self) -> dict[str, int]:
        return {"n_nonterminals": self.n_nonterminals, "n_productions": self.n_productions,
                "n_symbols": len(self.symbol_ids), "n_terminals": self.n_terminals, "n_dfas": len(self.dfas)}

    def to_ebnf(self) -> str:
        return lnf_to_ebnf(self)


def build_lnf(flat: FlatGrammar, compiler: TerminalCompiler) -> LNF:
    """Pre: ``flat`` satisfies the LNF invariants.  Post: the arrays above, in
    canonical order: productions of a rule sorted, nonterminals numbered in
    breadth-first order of first use from the start (so equal grammars give
    equal arrays and equal printouts)."""
    rules = {name: sorted(productions, key=_production_order) if len(productions) > 1 else productions
             for name, productions in flat.rules.items()}
    names = [flat.start]
    seen = {flat.start}
    for name in names:
        for production in rules[name]:
            for symbol in production:
                if symbol.__class__ is str and symbol not in seen:
                    seen.add(symbol)
                    names.append(symbol)
    nonterminal_ids = {name: index for index, name in enumerate(names)}
    terminal_ids: dict[tuple, int] = {}
    terminal_keys: list[tuple] = []
    production_offsets = [0]
    production_lhs: list[int] = []
    symbol_offsets = [0]
    symbol_kinds: list[int] = []
    symbol_ids: list[int] = []
    for name in names:
        for production in rules[name]:
            production_lhs.append(nonterminal_ids[name])
            for symbol in production:
                if symbol.__class__ is str:
                    symbol_kinds.append(SYMBOL_NONTERMINAL)
                    symbol_ids.append(nonterminal_ids[symbol])
                else:
                    if symbol not in terminal_ids:
                        terminal_ids[symbol] = len(terminal_keys)
                        terminal_keys.append(symbol)
                    symbol_kinds.append(SYMBOL_TERMINAL)
                    symbol_ids.append(terminal_ids[symbol])
            symbol_offsets.append(len(symbol_ids))
        production_offsets.append(len(production_lhs))
    terminal_kinds: list[int] = []
    literal_offsets = [0]
    literal_chunks: list[bytes] = []
    dfa_ids: list[int] = []
    dfas: list = []
    dfa_index: dict[tuple, int] = {}
    for key in terminal_keys:
        if key[0] == "lit":
            terminal_kinds.append(TERMINAL_LITERAL)
            literal_chunks.append(key[1])
            dfa_ids.append(-1)
        else:
            terminal_kinds.append(TERMINAL_DFA)
            if key not in dfa_index:
                dfa_index[key] = len(dfas)
                dfas.append(compiler.dfa(key))
            dfa_ids.append(dfa_index[key])
        literal_offsets.append(literal_offsets[-1] + (len(key[1]) if key[0] == "lit" else 0))

    def int32(values) -> np.ndarray:
        return np.ascontiguousarray(np.array(values, dtype=np.int32))

    return LNF(
        nonterminal_names=names,
        start_id=0,
        start_accepts_empty=bool(flat.start_accepts_empty),
        nonterminal_production_offsets=int32(production_offsets),
        production_lhs=int32(production_lhs),
        production_symbol_offsets=int32(symbol_offsets),
        symbol_kinds=np.array(symbol_kinds, dtype=np.uint8),
        symbol_ids=int32(symbol_ids),
        terminal_kinds=np.array(terminal_kinds, dtype=np.uint8),
        terminal_literal_offsets=int32(literal_offsets),
        literal_bytes=np.frombuffer(b"".join(literal_chunks), dtype=np.uint8).copy(),
        terminal_dfa_ids=int32(dfa_ids),
        dfas=dfas,
        terminal_keys=terminal_keys,
    )


def lnf_fingerprint(lnf: LNF) -> str:
    """sha256 hex over the canonical LNF: names, start facts, every array and
    each terminal's KBNF spelling (which determines its DFA; a class and the
    regex it prints as count as one), or its key's repr when it has none.
    Defined for every grammar, including those ``to_ebnf`` cannot print
    (non-UTF-8 literals), and equal for a grammar and its re-parsed printout."""
    terminals = [terminal_spelling(key)[1] for key in lnf.terminal_keys]
    digest = hashlib.sha256()
    digest.update(repr((lnf.nonterminal_names, lnf.start_id, lnf.start_accepts_empty,
                        terminals)).encode("utf-8"))
    for array in (lnf.nonterminal_production_offsets, lnf.production_lhs, lnf.production_symbol_offsets,
                  lnf.symbol_kinds, lnf.symbol_ids, lnf.terminal_kinds, lnf.terminal_literal_offsets,
                  lnf.literal_bytes, lnf.terminal_dfa_ids):
        digest.update(_dtype_spelling(array.dtype))
        digest.update(len(array).to_bytes(8, "little"))
        digest.update(array.tobytes())
    return digest.hexdigest()


_DTYPE_SPELLINGS: dict = {}
"""``str(dtype)`` as ASCII bytes per numpy dtype (``str`` of a dtype takes
microseconds, a dict lookup a tenth of one; a handful of dtypes ever occur)."""


def _dtype_spelling(dtype) -> bytes:
    spelling = _DTYPE_SPELLINGS.get(dtype)
    if spelling is None:
        spelling = _DTYPE_SPELLINGS[dtype] = str(dtype).encode("ascii")
    return spelling


def _production_order(production) -> tuple:
    """Sort key: names, then terminals by their spelling (``terminal_spelling``:
    the KBNF printout, so a class and the regex it prints as sort alike)."""
    return tuple((0, symbol) if symbol.__class__ is str else terminal_spelling(symbol)
                 for symbol in production)


def check_invariants(lnf: LNF) -> list[str]:
    """The LNF invariants that do not hold (empty list when all hold)."""
    problems = []
    for production_id in range(lnf.n_productions):
        symbols = lnf.symbols_of(production_id)
        if not symbols:
            problems.append(f"production {production_id} is empty")
    units: dict[int, list[int]] = {}
    for nonterminal in range(lnf.n_nonterminals):
        for production_id in lnf.productions_of(nonterminal):
            symbols = lnf.symbols_of(production_id)
            if len(symbols) == 1 and symbols[0][0] == SYMBOL_NONTERMINAL:
                units.setdefault(nonterminal, []).append(symbols[0][1])
    for nonterminal in units:
        stack, seen = list(units[nonterminal]), set()
        while stack:
            target = stack.pop()
            if target == nonterminal:
                problems.append(f"nonterminal {nonterminal} derives itself by unit productions")
                break
            if target not in seen:
                seen.add(target)
                stack.extend(units.get(target, ()))
    for terminal_id in range(lnf.n_terminals):
        if lnf.terminal_kinds[terminal_id] == TERMINAL_LITERAL and not lnf.literal(terminal_id):
            problems.append(f"terminal {terminal_id} is an empty literal")
        if lnf.terminal_kinds[terminal_id] == TERMINAL_DFA:
            dfa = lnf.dfas[int(lnf.terminal_dfa_ids[terminal_id])]
            if not (dfa.transitions[dfa.start] != dfa.dead).any():
                problems.append(f"terminal {terminal_id} (DFA) matches no non-empty string")
    productive: set[int] = set()
    changed = True
    while changed:
        changed = False
        for production_id in range(lnf.n_productions):
            lhs = int(lnf.production_lhs[production_id])
            if lhs not in productive and all(kind == SYMBOL_TERMINAL or symbol_id in productive
                                             for kind, symbol_id in lnf.symbols_of(production_id)):
                productive.add(lhs)
                changed = True
    reachable = {lnf.start_id}
    stack = [lnf.start_id]
    while stack:
        for production_id in lnf.productions_of(stack.pop()):
            for kind, symbol_id in lnf.symbols_of(production_id):
                if kind == SYMBOL_NONTERMINAL and symbol_id not in reachable:
                    reachable.add(symbol_id)
                    stack.append(symbol_id)
    for nonterminal_id, name in enumerate(lnf.nonterminal_names):
        empty_start = nonterminal_id == lnf.start_id and lnf.start_accepts_empty
        if nonterminal_id not in productive and not empty_start:
            problems.append(f"nonterminal {name} is not productive")
        if nonterminal_id not in reachable:
            problems.append(f"nonterminal {name} is not reachable")
    return problems


def printable_names(names: list[str]) -> list[str]:
    """KBNF-safe, distinct spellings of ``names`` (unchanged when already valid;
    other characters become ``_`` with a numeric suffix on collision)."""
    taken = {name for name in names if NAME_PATTERN.fullmatch(name)}
    result = []
    for name in names:
        if name in taken:
            result.append(name)
            continue
        base = "".join(char if is_name_char(char) else "_" for char in name) or "_"
        candidate, counter = base, 1
        while candidate in taken:
            counter += 1
            candidate = f"{base}_{counter}"
        taken.add(candidate)
        result.append(candidate)
    return result


def lnf_to_ebnf(lnf: LNF) -> str:
    """The grammar as KBNF, one rule per nonterminal, start first.  Parsing it
    with ``from_ebnf(text, start=<start name>)`` gives the same LNF (the empty
    sentence is printed as a ``""`` alternative of the start rule).  Raises
    GrammarError for a literal that is not UTF-8 (KBNF strings are text)."""
    names = printable_names(lnf.nonterminal_names)
    lines = []
    for nonterminal_id, name in enumerate(names):
        alternatives = []
        if nonterminal_id == lnf.start_id and lnf.start_accepts_empty:
            alternatives.append(kbnf_string(""))
        for production_id in lnf.productions_of(nonterminal_id):
            parts = []
            for kind, symbol_id in lnf.symbols_of(production_id):
                if kind == SYMBOL_NONTERMINAL:
                    parts.append(names[symbol_id])
                else:
                    parts.append(key_to_kbnf(lnf.terminal_keys[symbol_id]))
            alternatives.append(" ".join(parts))
        lines.append(f"{name} ::= {' | '.join(alternatives)};")
    return "\n".join(lines) + "\n"
