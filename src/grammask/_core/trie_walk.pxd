# cython: language_level=3
"""Flat tries and the byte-by-byte trie walk (layout in trie_walk.pyx)."""

from libc.stdint cimport uint8_t, int32_t, uint64_t

from grammask._core.recognizer cimport ByteRecognizer
from grammask._core.types cimport node_id_t, token_id_t, word_t


cdef class TrieView:
    cdef readonly object owner                     # keeps the arrays' owner alive
    cdef const uint8_t[::1] node_bytes             # [n_nodes] byte on the edge into the node
    cdef const node_id_t[::1] node_subtree_ends    # [n_nodes] subtree of n is [n, end)
    cdef const int32_t[::1] node_token_offsets     # [n_nodes + 1] into token_ids
    cdef const token_id_t[::1] token_ids           # tokens ending at each node, by node
    cdef readonly object node_heights              # [n_nodes] int32: longest path down from each node
    cdef readonly Py_ssize_t n_nodes
    cdef readonly Py_ssize_t max_depth             # longest root-to-node path, in edges
    cdef readonly Py_ssize_t n_words               # words of a bitset over the vocabulary
    cdef node_id_t root_child[256]                 # the root's child on each byte, -1: none
    cdef readonly bint roots_by_byte               # root_child is exact: the root's children
                                                   # have distinct, ascending bytes
    cdef object __weakref__                        # exit tries sit in weak pools


cdef struct WalkFrames:
    # n_frames frames of the walk's explicit stack (one thread at a time)
    node_id_t* next_child
    node_id_t* child_end
    uint64_t* allowed                              # 4 words (a byte set) per frame
    Py_ssize_t n_frames


cdef bint frames_init(WalkFrames* frames, Py_ssize_t max_depth) noexcept nogil
cdef void frames_free(WalkFrames* frames) noexcept nogil
cdef Py_ssize_t walk_trie(ByteRecognizer recognizer, TrieView trie, word_t* bits,
                          WalkFrames* frames, word_t* narrow=*) noexcept nogil
