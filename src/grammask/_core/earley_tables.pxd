# cython: language_level=3
"""Flat C views of one grammar's LNF arrays and terminal DFAs, shared by every
Earley recognizer of that grammar (see earley_tables.pyx for the layout)."""

from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t


cdef struct TerminalInfo:
    int32_t is_dfa          # 0: literal, 1: DFA terminal
    int32_t literal_start   # first byte in literal_bytes (literals only)
    int32_t literal_len     # >= 1 for literals, 0 for DFA terminals
    int32_t dfa_id          # index into dfa_infos, -1 for literals


cdef struct DfaInfo:
    int64_t transitions_start  # first int32 of this DFA's [n_states, n_classes] table in transitions
    int64_t class_map_start    # first byte of this DFA's 256-entry class map in class_maps
    int64_t state_base         # global index of this DFA's state 0 in the per-state arrays
    int32_t n_states
    int32_t n_classes
    int32_t start              # start state, in [1, n_states)


# Everything the recognizer's nogil loops read, as plain C (no Python
# objects): CompiledTables owns the memory, recognizers point at ``view``.
cdef struct GrammarView:
    int32_t start_id
    bint start_accepts_empty
    Py_ssize_t n_nonterminals
    Py_ssize_t n_productions
    Py_ssize_t n_symbols
    Py_ssize_t n_terminals
    Py_ssize_t n_dfa_states     # over all DFAs
    # Grammar (flat symbol array; a "dot" is an index into it)
    const int32_t* nonterminal_production_offsets  # [n_nonterminals + 1]
    const int32_t* production_symbol_offsets       # [n_productions + 1]
    const uint8_t* symbol_is_nonterminal           # [n_symbols]
    const int32_t* symbol_ids                      # [n_symbols] terminal or nonterminal id
    const uint8_t* symbol_is_last                  # [n_symbols] last symbol of its production
    # Terminals
    const TerminalInfo* terminal_infos             # [n_terminals]
    const uint8_t* literal_bytes
    const DfaInfo* dfa_infos                       # [len(lnf.dfas)]
    const uint8_t* class_maps                      # [n_dfas * 256]
    const int32_t* transitions                     # concatenated tables
    const uint8_t* state_accepting                 # [n_dfa_states] by global state
    const uint8_t* state_can_continue              # [n_dfa_states] some byte leads to a live state
    const uint64_t* state_allowed_bytes            # [n_dfa_states * 4] 256-bit sets of live bytes


cdef class CompiledTables:
    # Python-side owners of the memory behind view's pointers.
    cdef object _owners
    cdef TerminalInfo* terminal_infos
    cdef DfaInfo* dfa_infos
    cdef readonly object lnf
    cdef GrammarView view
