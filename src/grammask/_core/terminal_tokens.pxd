# cython: language_level=3
"""Per-terminal token sets (see terminal_tokens.pyx)."""

from libc.stdint cimport int32_t

from grammask._core.earley_tables cimport CompiledTables
from grammask._core.trie_walk cimport TrieView
from grammask._core.types cimport state_id_t, terminal_id_t, token_id_t, word_t


cdef class TerminalTokens:
    cdef readonly object inside_ids                  # sorted int32 ids, or None when dense
    cdef readonly object inside_bits                 # uint32 token bitset, or None when sparse
    cdef readonly TrieView exit_trie                 # merged remainders, or None
    cdef readonly state_id_t end_state               # a state where the terminal may end, -1 none
    cdef readonly Py_ssize_t n_exit_nodes
    cdef readonly object exit_nodes                  # sorted int32 trie nodes the exit trie merges
    cdef readonly Py_ssize_t n_inside                # tokens in the inside set
    cdef readonly object narrow_ids
    cdef readonly object closing_ids
    cdef readonly object closing_space_ids
    cdef readonly Py_ssize_t nbytes                  # its arrays, plus 16 bytes per exit-trie node
    cdef const token_id_t[::1] _inside_ids
    cdef const word_t[::1] _inside_bits
    cdef const token_id_t[::1] _narrow_ids
    cdef const token_id_t[::1] _closing_ids
    cdef const token_id_t[::1] _closing_space_ids
    cdef bint dense

    cdef int _fill(self, inside_ids, inside_bits, TrieView exit_trie, state_id_t end_state,
                   exit_nodes, Py_ssize_t n_inside, narrow_ids, closing_ids,
                   closing_space_ids) except -1
    cdef void or_inside(self, word_t* bits) noexcept nogil


cpdef TerminalTokens build_terminal_tokens(CompiledTables tables, TrieView vocab_trie,
                                           terminal_id_t terminal_id, state_id_t progress,
                                           Py_ssize_t vocab_size, object bitset_pool=*,
                                           object trie_pool=*)


cpdef TerminalTokens build_terminal_tokens_relative(
        CompiledTables tables, TrieView vocab_trie, terminal_id_t terminal_id,
        state_id_t progress, Py_ssize_t vocab_size, TerminalTokens base,
        state_id_t base_state, const int32_t[:, ::1] depth_classes=*,
        const int32_t[::1] height_rows=*, object bitset_pool=*, object trie_pool=*)
