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
    cdef readonly list content_keys              # per terminal: DFA digest or literal bytes
    cdef readonly object store                   # TokenSetStore shared by the vocabulary's grammars
    cdef dict cache                              # (trie, terminal, progress) -> TerminalTokens
    cdef dict hubs                               # DFA id -> hub state (see _hub)
    cdef dict hub_keys                           # DFA id -> (hub language digest, an accepting state)
    cdef dict last_built                         # (trie, DFA id) -> (state, TerminalTokens) built last
    cdef readonly list depth_classes             # per DFA: int32[KEPT_CLASS_ROWS, n_states] (state_classes_by_depth)
    cdef object lock                             # guards the cache's writes

    cpdef TerminalTokens terminal_tokens(self, TrieView trie, terminal_id_t terminal_id,
                                         state_id_t progress)
    cdef state_id_t _hub(self, Py_ssize_t dfa_id)
    cdef int _fill_level(self, EarleyRecognizer recognizer, TrieView trie, word_t* out,
                         word_t* narrow, WalkScratch scratch) except -1
