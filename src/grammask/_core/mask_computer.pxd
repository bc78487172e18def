# cython: language_level=3
"""The grammar mask over the Earley core (see mask_computer.pyx)."""

from grammask._core.earley cimport EarleyRecognizer
from grammask._core.earley_tables cimport CompiledTables
from grammask._core.terminal_tokens cimport TerminalTokens
from grammask._core.trie_walk cimport TrieView, WalkScratch
from grammask._core.types cimport state_id_t, terminal_id_t, word_t


cdef class MaskComputer:
    cdef readonly TrieView vocab_trie
    cdef readonly CompiledTables tables
    cdef readonly Py_ssize_t vocab_size
    cdef readonly Py_ssize_t n_words
    cdef readonly object state_representatives   # int32[n_dfa_states]: smallest state of each class
    cdef const state_id_t[::1] _representatives
    cdef dict cache                              # (id(trie), terminal, progress) -> TerminalTokens
    cdef dict bitset_pool                        # bitset bytes -> the one shared inside bitset
    cdef dict trie_pool                          # (id(trie), exit nodes digest) -> exit trie
    cdef object lock                             # guards the three dicts' writes

    cpdef TerminalTokens terminal_tokens(self, TrieView trie, terminal_id_t terminal_id,
                                         state_id_t progress)
    cdef int _fill_level(self, EarleyRecognizer recognizer, TrieView trie, word_t* out,
                         word_t* narrow, WalkScratch scratch) except -1
