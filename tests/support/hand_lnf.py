"""Hand-built LNF grammars for tests of the Earley core.

``build_lnf(text)`` turns readable productions, e.g.
``"S ::= 'a' S | 'a' ; T ::= /[0-9]+/ | e/ab*/ | x/ab/ | s/abc/"``
(quoted literal with Python escapes, ``/re/`` regex, ``e/re/`` early end,
``x/re/`` complement, ``s/text/`` substrings; the first rule is the start)
into a ``HandLNF``: the arrays of ``grammask.grammar.lnf.LNF`` (same names,
same dtypes) with terminal DFAs from ``support.mini_dfa``, plus the
``Terminal`` list and per-nonterminal productions it was built from.
``assemble_lnf(productions, terminals)`` builds one from those lists directly.
HandLNF offers the accessors of LNF that ``support.lnf_reference`` reads
(``productions_of``, ``symbols_of``, ``literal``, ``n_productions``,
``n_terminals``), so the reference recognizer runs on both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from grammask.grammar.lnf import LNF
from support.mini_dfa import make_dfa


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
    terminals: list          # Terminal per terminal id (what its DFA or literal was built from)
    productions: list        # per nonterminal id: list of symbol lists (("t", id) | ("n", id))

    __hash__ = object.__hash__

    # The same array layout as grammask's LNF, so the same accessors.
    n_productions = LNF.n_productions
    n_terminals = LNF.n_terminals
    productions_of = LNF.productions_of
    symbols_of = LNF.symbols_of
    literal = LNF.literal


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
