# cython: language_level=3
"""CompiledTables: one grammar's LNF arrays and terminal DFAs as flat C arrays.

What it computes: from an LNF object (docs/internals.md, "Normalized grammar:
LNF arrays" and "Terminal DFAs") it builds, once per grammar, the read-only
tables every ``EarleyRecognizer`` of that grammar reads in its ``nogil`` loops.
Building recognizers from prebuilt tables is then a few small allocations.

Data layout:
  * the LNF grammar arrays are kept as given (int32/uint8, C-contiguous) plus
    one derived per-symbol array, ``symbol_is_last[pos]`` (pos + 1 ends its
    production), so advancing a dot is ``pos + 1`` and "does this complete the
    production" is one load;
  * ``terminal_infos[t]``: literal start/length or DFA id;
  * all DFAs concatenated: ``class_maps`` (256 bytes per DFA), ``transitions``
    (each DFA's [n_states, n_classes] table, row-major), and per-state arrays
    indexed by a global state number ``dfa.state_base + state``:
    ``state_accepting``, ``state_can_continue`` (some byte leads to a live
    state) and ``state_allowed_bytes`` (4 x uint64: bit b of the 256-bit set is
    set iff byte b leads to a live state).

Invariants (checked here, so the recognizer's loops need no bounds checks):
  every offset array is non-decreasing and starts at 0 and ends at its array's
  length; every production has >= 1 symbol; every symbol id is in range; every
  literal has >= 1 byte; every DFA has n_states >= 2, 1 <= start < n_states,
  class_map values < n_classes, transition targets in [0, n_states); state 0 is
  dead (all its transitions go to 0 and it is not accepting).
Violations raise ``grammask.GrammarError`` naming the array and index.
Each DFA's checked per-state arrays are memoized by DFA content
(``_prepared_dfa``, ``PREPARED_DFA_CACHE_SIZE`` DFAs), so a DFA shared by
many grammars is checked and prepared once per process.
Transitions into states that cannot reach an accepting state are redirected
to 0 here, so "state != 0" means "can still match" even for untrimmed tables.
Recognizers point at ``view`` (a plain C struct) so their loops hold no Python
objects; the arrays behind it are owned by this object.
"""

import functools

import numpy as np

from grammask.errors import GrammarError

cimport cython
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, free


def _contiguous(array, dtype, name):
    try:
        result = np.ascontiguousarray(np.asarray(array), dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise GrammarError(f"LNF field {name!r} is not convertible to {np.dtype(dtype)}: {exc}")
    if result.ndim != 1:
        result = result.reshape(-1)
    return result


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _first_step_below(const int32_t[::1] offsets, int64_t least) noexcept:
    """The first i with ``offsets[i + 1] - offsets[i] < least``, or -1."""
    cdef Py_ssize_t i
    for i in range(offsets.shape[0] - 1):
        if <int64_t>offsets[i + 1] - offsets[i] < least:
            return i
    return -1


def _check_offsets(const int32_t[::1] offsets, Py_ssize_t n_rows, Py_ssize_t total, name):
    if offsets.shape[0] != n_rows + 1:
        raise GrammarError(f"LNF field {name!r} has {offsets.shape[0]} entries, expected {n_rows + 1}")
    if offsets[0] != 0 or offsets[n_rows] != total:
        raise GrammarError(f"LNF field {name!r} must run from 0 to {total}")
    cdef Py_ssize_t bad = _first_step_below(offsets, 0)
    if bad >= 0:
        raise GrammarError(f"LNF field {name!r} decreases at index {bad}")


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _lhs_agrees(const int32_t[::1] nt_offsets, const int32_t[::1] production_lhs) noexcept:
    """Every production between ``nt_offsets[n]`` and ``nt_offsets[n + 1]``
    has left-hand side n (the offsets already checked: from 0 to the
    number of productions, non-decreasing)."""
    cdef Py_ssize_t nonterminal, production
    for nonterminal in range(nt_offsets.shape[0] - 1):
        for production in range(nt_offsets[nonterminal], nt_offsets[nonterminal + 1]):
            if production_lhs[production] != nonterminal:
                return False
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
def _check_symbols(const uint8_t[::1] symbol_kinds, const int32_t[::1] symbol_ids,
                   int64_t n_nonterminals, int64_t n_terminals):
    """Every symbol kind is 0 (terminal) or 1 (nonterminal) and every id is
    in range for its kind; an error names the first bad id by its index
    among the symbols of its kind (nonterminals reported first)."""
    cdef Py_ssize_t symbol, bad_nt = -1, bad_t = -1
    cdef int32_t symbol_id
    for symbol in range(symbol_kinds.shape[0]):
        symbol_id = symbol_ids[symbol]
        if symbol_kinds[symbol] == 1:
            if bad_nt < 0 and (symbol_id < 0 or symbol_id >= n_nonterminals):
                bad_nt = symbol
        elif symbol_kinds[symbol] == 0:
            if bad_t < 0 and (symbol_id < 0 or symbol_id >= n_terminals):
                bad_t = symbol
        else:
            raise GrammarError("LNF symbol_kinds must be 0 (terminal) or 1 (nonterminal)")
    for bad, kind, bound, name in ((bad_nt, 1, n_nonterminals, "nonterminals"),
                                   (bad_t, 0, n_terminals, "terminals")):
        if bad >= 0:
            position = sum(1 for symbol in range(bad) if symbol_kinds[symbol] == kind)
            raise GrammarError(f"LNF field 'symbol_ids ({name})'[{position}] = {symbol_ids[bad]} "
                               f"is outside [0, {bound})")


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _keep_alive_targets(const int32_t[:, ::1] table, const uint8_t[::1] accepting,
                              int32_t[:, ::1] out, uint8_t[::1] alive, int32_t[::1] sources,
                              int32_t[::1] offsets, int32_t[::1] queue) noexcept nogil:
    """``out``: ``table`` with every transition into a state that cannot reach
    an accepting state sent to the dead state 0, so "state != 0" means "still
    viable" even for an untrimmed table.  The states that can (``alive``) are
    the accepting ones closed under predecessors, found by one breadth-first
    pass over the reversed transitions (``offsets``/``sources``: per target,
    the source of each transition into it, with multiplicity).  Transitions
    into state 0 are left out of the reversal: state 0 is never alive (the
    caller checked it is a non-accepting sink), so the search never asks
    for its sources, and most transitions of a table lead there."""
    cdef Py_ssize_t n_states = table.shape[0], n_classes = table.shape[1]
    cdef Py_ssize_t state, column, target, head = 0, tail = 0
    cdef int32_t position
    for state in range(n_states + 1):
        offsets[state] = 0
    for state in range(n_states):
        for column in range(n_classes):
            target = table[state, column]
            if target != 0:
                offsets[target + 1] += 1
    for state in range(n_states):
        offsets[state + 1] += offsets[state]
    for state in range(n_states):
        for column in range(n_classes):
            target = table[state, column]
            if target != 0:
                position = offsets[target]
                sources[position] = <int32_t>state
                offsets[target] = position + 1
    # offsets[t] now ends t's sources; they start at offsets[t - 1] (0 for t = 0).
    for state in range(n_states):
        alive[state] = accepting[state]
        if accepting[state]:
            queue[tail] = <int32_t>state
            tail += 1
    while head < tail:
        target = queue[head]
        head += 1
        for position in range(offsets[target - 1] if target > 0 else 0, offsets[target]):
            state = sources[position]
            if not alive[state]:
                alive[state] = 1
                queue[tail] = <int32_t>state
                tail += 1
    for state in range(n_states):
        for column in range(n_classes):
            target = table[state, column]
            out[state, column] = <int32_t>target if alive[target] else 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _live_bytes(const int32_t[:, ::1] table, const uint8_t[::1] class_map,
                      uint8_t[::1] can_continue, uint64_t[::1] allowed,
                      uint64_t[::1] class_bytes) noexcept nogil:
    """Per state: ``allowed`` (4 x uint64, bit b set iff byte b leads to a
    state other than 0) and ``can_continue`` (some byte does).  A state's set
    is the union of the byte sets of its live classes (``class_bytes``, 4 x
    uint64 per class, zeroed by the caller)."""
    cdef Py_ssize_t n_states = table.shape[0], n_classes = table.shape[1]
    cdef Py_ssize_t state, column, byte
    cdef uint64_t word0, word1, word2, word3
    for byte in range(256):
        class_bytes[4 * class_map[byte] + (byte >> 6)] |= (<uint64_t>1) << (byte & 63)
    for state in range(n_states):
        # one pass over the row; a live class adds its four words
        word0 = word1 = word2 = word3 = 0
        for column in range(n_classes):
            if table[state, column] != 0:
                word0 |= class_bytes[4 * column]
                word1 |= class_bytes[4 * column + 1]
                word2 |= class_bytes[4 * column + 2]
                word3 |= class_bytes[4 * column + 3]
        allowed[4 * state] = word0
        allowed[4 * state + 1] = word1
        allowed[4 * state + 2] = word2
        allowed[4 * state + 3] = word3
        can_continue[state] = (word0 | word1 | word2 | word3) != 0


PREPARED_DFA_CACHE_SIZE = 4096
"""DFAs whose checked per-state arrays ``_prepared_dfa`` keeps (as many as
``grammask.terminals`` keeps compiled DFAs).  Grammars translated from JSON
Schema share their string, number and whitespace DFAs, so most DFAs of a
compile were prepared by an earlier one."""


def _prepared_dfa(dfa):
    """``_checked_dfa(dfa)``, memoized for DFAs hashed and compared by content
    (their class defines ``__eq__`` and ``__hash__``, as
    ``grammask.terminals.DFA`` does: equal DFAs have equal tables, so a hit
    is exact); other objects are checked anew."""
    kind = type(dfa)
    if kind.__eq__ is object.__eq__ or kind.__hash__ is None or kind.__hash__ is object.__hash__:
        return _checked_dfa(dfa)
    return _cached_checked_dfa(dfa)


@functools.lru_cache(maxsize=PREPARED_DFA_CACHE_SIZE)
def _cached_checked_dfa(dfa):
    return _checked_dfa(dfa)


def clear_prepared_dfas():
    """Forget the memoized DFA arrays (``grammask.clear_caches``)."""
    _cached_checked_dfa.cache_clear()


def _checked_dfa(dfa):
    """One DFA's tables as ``CompiledTables`` concatenates them, read-only:
    (transitions [n_states, n_classes] int32 with hopeless targets sent to 0,
    class_map uint8[256], accepting uint8, can_continue uint8, allowed bytes
    (4 x uint64 per state), start).  GrammarError when an invariant fails."""
    table = np.ascontiguousarray(np.asarray(dfa.transitions), dtype=np.int32)
    class_map = _contiguous(dfa.class_map, np.uint8, "class_map")
    accepting = _contiguous(dfa.accepting, np.bool_, "accepting")
    start = int(dfa.start)
    if table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 1:
        raise GrammarError("transitions must be [n_states >= 2, n_classes >= 1]")
    n_states, n_classes = table.shape
    if len(class_map) != 256 or not _classes_below(class_map, n_classes):
        raise GrammarError(f"class_map must have 256 entries < n_classes={n_classes}")
    if len(accepting) != n_states:
        raise GrammarError(f"accepting has {len(accepting)} entries, expected {n_states}")
    if not _targets_in_range(table):
        raise GrammarError(f"a transition is outside [0, {n_states})")
    if not _first_row_dead(table) or accepting[0]:
        raise GrammarError("state 0 must be a dead, non-accepting sink")
    if not 1 <= start < n_states:
        raise GrammarError(f"start state {start} is outside [1, {n_states})")
    accepting_bytes = accepting.astype(np.uint8)
    viable = np.empty_like(table)
    _keep_alive_targets(table, accepting_bytes, viable, np.empty(n_states, dtype=np.uint8),
                        np.empty(n_states * n_classes, dtype=np.int32),
                        np.empty(n_states + 1, dtype=np.int32), np.empty(n_states, dtype=np.int32))
    class_map = class_map.copy()
    can_continue = np.empty(n_states, dtype=np.uint8)
    allowed = np.empty(4 * n_states, dtype=np.uint64)
    _live_bytes(viable, class_map, can_continue, allowed, np.zeros(4 * n_classes, dtype=np.uint64))
    parts = (viable, class_map, accepting_bytes, can_continue, allowed)
    for array in parts:
        array.setflags(write=False)
    return parts + (start,)


cdef class CompiledTables:
    """Immutable flat tables of one LNF grammar; share one between recognizers."""

    def __cinit__(self):
        self.terminal_infos = NULL
        self.dfa_infos = NULL

    def __dealloc__(self):
        free(self.terminal_infos)
        free(self.dfa_infos)

    def __init__(self, lnf):
        cdef Py_ssize_t i, n_dfas
        self.lnf = lnf
        nt_offsets = _contiguous(lnf.nonterminal_production_offsets, np.int32, "nonterminal_production_offsets")
        production_lhs = _contiguous(lnf.production_lhs, np.int32, "production_lhs")
        symbol_offsets = _contiguous(lnf.production_symbol_offsets, np.int32, "production_symbol_offsets")
        symbol_kinds = _contiguous(lnf.symbol_kinds, np.uint8, "symbol_kinds")
        symbol_ids = _contiguous(lnf.symbol_ids, np.int32, "symbol_ids")
        terminal_kinds = _contiguous(lnf.terminal_kinds, np.uint8, "terminal_kinds")
        literal_offsets = _contiguous(lnf.terminal_literal_offsets, np.int32, "terminal_literal_offsets")
        literal_bytes = _contiguous(lnf.literal_bytes, np.uint8, "literal_bytes")
        dfa_ids = _contiguous(lnf.terminal_dfa_ids, np.int32, "terminal_dfa_ids")
        dfas = list(lnf.dfas)

        n_nonterminals = len(nt_offsets) - 1
        n_productions = len(production_lhs)
        n_symbols = len(symbol_kinds)
        n_terminals = len(terminal_kinds)
        if n_nonterminals < 1:
            raise GrammarError("LNF has no nonterminals")
        _check_offsets(nt_offsets, n_nonterminals, n_productions, "nonterminal_production_offsets")
        _check_offsets(symbol_offsets, n_productions, n_symbols, "production_symbol_offsets")
        empty = _first_step_below(symbol_offsets, 1)
        if empty >= 0:
            raise GrammarError(f"LNF has an empty production (index {empty})")
        if not _lhs_agrees(nt_offsets, production_lhs):
            raise GrammarError("LNF production_lhs disagrees with nonterminal_production_offsets")
        if len(symbol_ids) != n_symbols:
            raise GrammarError("LNF symbol_ids and symbol_kinds differ in length")
        _check_symbols(symbol_kinds, symbol_ids, n_nonterminals, n_terminals)
        start_id = int(lnf.start_id)
        if not 0 <= start_id < n_nonterminals:
            raise GrammarError(f"LNF start_id {start_id} is outside [0, {n_nonterminals})")
        _check_offsets(literal_offsets, n_terminals, len(literal_bytes), "terminal_literal_offsets")
        if len(dfa_ids) != n_terminals:
            raise GrammarError("LNF terminal_dfa_ids and terminal_kinds differ in length")

        symbol_is_last = np.zeros(n_symbols, dtype=np.uint8)
        symbol_is_last[symbol_offsets[1:] - 1] = 1

        # Per-DFA tables, concatenated.
        n_dfas = len(dfas)
        class_maps = np.zeros(max(n_dfas, 1) * 256, dtype=np.uint8)
        transition_parts, accepting_parts, continue_parts, allowed_parts = [], [], [], []
        self.dfa_infos = <DfaInfo*>malloc(max(n_dfas, 1) * sizeof(DfaInfo))
        self.terminal_infos = <TerminalInfo*>malloc(max(n_terminals, 1) * sizeof(TerminalInfo))
        if self.dfa_infos == NULL or self.terminal_infos == NULL:
            raise MemoryError()
        cdef int64_t transitions_start = 0, state_base = 0
        for i, dfa in enumerate(dfas):
            try:
                table, class_map, accepting, can_continue, allowed, start = _prepared_dfa(dfa)
            except GrammarError as error:
                raise GrammarError(f"DFA {i}: {error}") from None
            n_states, n_classes = table.shape
            class_maps[i * 256:(i + 1) * 256] = class_map
            transition_parts.append(table.reshape(-1))
            accepting_parts.append(accepting)
            continue_parts.append(can_continue)
            allowed_parts.append(allowed)
            self.dfa_infos[i].transitions_start = transitions_start
            self.dfa_infos[i].class_map_start = i * 256
            self.dfa_infos[i].state_base = state_base
            self.dfa_infos[i].n_states = n_states
            self.dfa_infos[i].n_classes = n_classes
            self.dfa_infos[i].start = start
            transitions_start += n_states * n_classes
            state_base += n_states

        def concat(parts, dtype):
            return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(1, dtype), dtype=dtype)

        transitions = concat(transition_parts, np.int32)
        state_accepting = concat(accepting_parts, np.uint8)
        state_can_continue = concat(continue_parts, np.uint8)
        state_allowed = concat(allowed_parts, np.uint64)

        cdef const uint8_t[::1] kinds_view = terminal_kinds
        cdef const int32_t[::1] literal_view = literal_offsets
        cdef const int32_t[::1] dfa_id_view = dfa_ids
        cdef int kind
        cdef int32_t length
        for i in range(n_terminals):
            kind = kinds_view[i]
            length = literal_view[i + 1] - literal_view[i]
            if kind == 0:
                if length < 1:
                    raise GrammarError(f"LNF literal terminal {i} is empty")
                self.terminal_infos[i].is_dfa = 0
                self.terminal_infos[i].literal_start = literal_view[i]
                self.terminal_infos[i].literal_len = length
                self.terminal_infos[i].dfa_id = -1
            elif kind == 1:
                if not 0 <= dfa_id_view[i] < n_dfas:
                    raise GrammarError(f"LNF DFA terminal {i} refers to DFA {dfa_id_view[i]} of {n_dfas}")
                self.terminal_infos[i].is_dfa = 1
                self.terminal_infos[i].literal_start = 0
                self.terminal_infos[i].literal_len = 0
                self.terminal_infos[i].dfa_id = dfa_id_view[i]
            else:
                raise GrammarError(f"LNF terminal {i} has unknown kind {kind}")

        if len(literal_bytes) == 0:
            literal_bytes = np.zeros(1, dtype=np.uint8)
        if n_symbols == 0:
            symbol_kinds = np.zeros(1, dtype=np.uint8)
            symbol_ids = np.zeros(1, dtype=np.int32)
            symbol_is_last = np.zeros(1, dtype=np.uint8)
        self._owners = (nt_offsets, symbol_offsets, symbol_kinds, symbol_ids, symbol_is_last,
                        literal_bytes, class_maps, transitions, state_accepting,
                        state_can_continue, state_allowed)
        self.view.start_id = start_id
        self.view.start_accepts_empty = bool(lnf.start_accepts_empty)
        self.view.n_nonterminals = n_nonterminals
        self.view.n_productions = n_productions
        self.view.n_symbols = n_symbols
        self.view.n_terminals = n_terminals
        self.view.n_dfa_states = state_base
        self.view.nonterminal_production_offsets = _int32_pointer(nt_offsets)
        self.view.production_symbol_offsets = _int32_pointer(symbol_offsets)
        self.view.symbol_is_nonterminal = _uint8_pointer(symbol_kinds)
        self.view.symbol_ids = _int32_pointer(symbol_ids)
        self.view.symbol_is_last = _uint8_pointer(symbol_is_last)
        self.view.terminal_infos = self.terminal_infos
        self.view.literal_bytes = _uint8_pointer(literal_bytes)
        self.view.dfa_infos = self.dfa_infos
        self.view.class_maps = _uint8_pointer(class_maps)
        self.view.transitions = _int32_pointer(transitions)
        self.view.state_accepting = _uint8_pointer(state_accepting)
        self.view.state_can_continue = _uint8_pointer(state_can_continue)
        self.view.state_allowed_bytes = _uint64_pointer(state_allowed)

    @property
    def start_id(self):
        return self.view.start_id

    @property
    def start_accepts_empty(self):
        return bool(self.view.start_accepts_empty)

    @property
    def n_nonterminals(self):
        return self.view.n_nonterminals

    @property
    def n_symbols(self):
        return self.view.n_symbols

    @property
    def n_terminals(self):
        return self.view.n_terminals

    @property
    def n_dfa_states(self):
        return self.view.n_dfa_states

    def __reduce__(self):
        return (CompiledTables, (self.lnf,))


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _targets_in_range(const int32_t[:, ::1] table) noexcept:
    """Every transition target is a state: in [0, n_states)."""
    cdef Py_ssize_t state, column, n_states = table.shape[0]
    cdef int32_t target
    for state in range(n_states):
        for column in range(table.shape[1]):
            target = table[state, column]
            if target < 0 or target >= n_states:
                return False
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _classes_below(const uint8_t[::1] class_map, Py_ssize_t n_classes) noexcept:
    """Every class of ``class_map`` is below ``n_classes``."""
    cdef Py_ssize_t byte
    for byte in range(class_map.shape[0]):
        if class_map[byte] >= n_classes:
            return False
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _first_row_dead(const int32_t[:, ::1] table) noexcept:
    """Every transition of state 0 goes to state 0."""
    cdef Py_ssize_t column
    for column in range(table.shape[1]):
        if table[0, column] != 0:
            return False
    return True


cdef const int32_t* _int32_pointer(const int32_t[::1] view):
    return &view[0]


cdef const uint8_t* _uint8_pointer(const uint8_t[::1] view):
    return &view[0]


cdef const uint64_t* _uint64_pointer(const uint64_t[::1] view):
    return &view[0]
