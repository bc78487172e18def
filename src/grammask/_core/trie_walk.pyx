# cython: language_level=3
"""The token-trie walk: which tokens of a trie a byte recognizer accepts.

What it computes
----------------
For a recognizer state, the token bitset (``bitset.pxd``) of the tokens t of
a trie such that pushing the bytes of t succeeds (docs/design.md section 2,
"Exactness").  This is steps 1-2 of the mask's derivation (llguidance's
``docs/toktrie.md``; the later steps are in ``terminal_tokens.pyx`` and
``mask_computer.pyx``):

1. Naive: push every token's bytes into a fresh copy of the recognizer.
2. Trie walk (``walk_trie``): tokens sharing a prefix share the pushes of
   that prefix.  Walk a flat DFS-preorder trie, push a byte per edge, pop on
   return, skip a subtree when its byte is not in the recognizer's byte set
   of allowed bytes.  Works over any ``ByteRecognizer`` (Earley core, a DFA,
   a test stub).

Layout
------
A trie (vocabulary or exit trie) is four arrays in DFS preorder: node 0 is
the root; ``node_bytes[n]`` is the byte on the edge into n; the subtree of n
is ``[n, node_subtree_ends[n])``; the first child of n is n + 1 when
n + 1 < end(n) and the next sibling of child c is end(c); children are sorted
by byte; tokens whose bytes end at n are
``token_ids[node_token_offsets[n]:node_token_offsets[n + 1]]``;
``node_heights[n]`` is the length of the longest path down from n;
``root_child[b]`` is the root's child on byte b (-1: none), exact when
``roots_by_byte`` (the root's children have distinct bytes in ascending
order, checked at construction), so a walk may start from the children on
the bytes a state allows instead of testing each of them.

Invariants
----------
Checked by ``TrieView.__init__``, in compiled loops (a trie read from disk
is checked on every load): every token id is in ``[0, vocab_size)`` (bitset
writes stay in bounds); the token offsets start at 0, never decrease and end
at the number of token ids; subtree ends are in ``(n, n_nodes]`` and nest
(the walk's stack depth is at most the trie's depth, and the stack is
allocated with ``max_depth + 2`` frames).  The walk leaves the recognizer in the state
it started in.
"""

from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, free

import numpy as np

from grammask._core.bitset cimport bitset_add, byte_set_has, n_words
from grammask._core.narrow cimport is_narrow
from grammask._core.recognizer cimport ByteRecognizer
from grammask._core.types cimport node_id_t, word_t


cdef class TrieView:
    """C views over a trie's arrays (vocabulary trie or exit trie)."""

    def __init__(self, node_bytes, node_subtree_ends, node_token_offsets, token_ids,
                 Py_ssize_t max_depth, Py_ssize_t vocab_size, owner=None):
        self.owner = owner
        self.node_bytes = np.ascontiguousarray(node_bytes, dtype=np.uint8)
        self.node_subtree_ends = np.ascontiguousarray(node_subtree_ends, dtype=np.int32)
        self.node_token_offsets = np.ascontiguousarray(node_token_offsets, dtype=np.int32)
        self.token_ids = np.ascontiguousarray(token_ids, dtype=np.int32)
        self.n_nodes = self.node_bytes.shape[0]
        self.max_depth = max_depth
        self.n_words = n_words(vocab_size)
        if self.n_nodes < 1 or self.node_subtree_ends.shape[0] != self.n_nodes \
                or self.node_token_offsets.shape[0] != self.n_nodes + 1:
            raise ValueError("malformed trie arrays")
        if not _ends_in_range(self.node_subtree_ends):
            raise ValueError("malformed trie: subtree ends out of range")
        if not _offsets_cover(self.node_token_offsets, self.token_ids.shape[0]):
            raise ValueError("malformed trie: token offsets do not cover the token ids in order")
        if not all_within(self.token_ids, 0, vocab_size):
            raise ValueError("malformed trie: token id out of range")
        self.node_heights = _subtree_heights(self.node_subtree_ends)
        self.roots_by_byte = _index_roots(self.node_bytes, self.node_subtree_ends, self.root_child)

    def arrays(self):
        """(node_bytes, node_subtree_ends, node_token_offsets, token_ids) as
        read-only numpy views, for inspection."""
        return (np.asarray(self.node_bytes), np.asarray(self.node_subtree_ends),
                np.asarray(self.node_token_offsets), np.asarray(self.token_ids))

    @classmethod
    def from_token_trie(cls, trie):
        return cls(trie.node_bytes, trie.node_subtree_ends, trie.node_token_offsets,
                   trie.token_ids, trie.max_depth, trie.vocab_size, owner=trie)


def all_within(const int32_t[::1] values, Py_ssize_t low, Py_ssize_t high):
    """Every value is in ``[low, high)`` (the range check ``TrieView`` applies
    to its token ids, for other arrays of ids or nodes read from disk)."""
    cdef Py_ssize_t i
    cdef bint within = True
    with nogil:
        for i in range(values.shape[0]):
            if values[i] < low or values[i] >= high:
                within = False
                break
    return within


cdef bint _index_roots(const uint8_t[::1] node_bytes, const node_id_t[::1] ends,
                       node_id_t* root_child) noexcept nogil:
    """Fill ``root_child`` (256 entries, -1 for a byte no child of the root
    has) and return whether the root's children have distinct bytes in
    ascending order, so that visiting the children of a byte set in byte
    order visits them in preorder (a walk may then start from the bytes it
    allows instead of testing every child: a date's digit state on a 131k
    vocabulary tests 10 of 256).  Subtree ends in range assumed."""
    cdef Py_ssize_t byte
    cdef node_id_t child = 1
    cdef int last = -1
    cdef bint ordered = True
    for byte in range(256):
        root_child[byte] = -1
    while child < ends[0]:
        if node_bytes[child] <= last:
            ordered = False
        last = node_bytes[child]
        root_child[node_bytes[child]] = child
        child = ends[child]
    return ordered


cdef bint _ends_in_range(const node_id_t[::1] ends) noexcept nogil:
    """The root's subtree is the whole trie and every node's subtree end is
    in ``(node, n_nodes]`` (``_subtree_heights`` checks that they nest)."""
    cdef Py_ssize_t n = ends.shape[0], node
    if ends[0] != n:
        return False
    for node in range(n):
        if ends[node] <= node or ends[node] > n:
            return False
    return True


cdef bint _offsets_cover(const int32_t[::1] offsets, Py_ssize_t n_ids) noexcept nogil:
    """The token offsets start at 0, never decrease and end at ``n_ids``
    (a walk reads ``token_ids[offsets[n]:offsets[n + 1]]``)."""
    cdef Py_ssize_t i, n = offsets.shape[0]
    if offsets[0] != 0 or offsets[n - 1] != n_ids:
        return False
    for i in range(1, n):
        if offsets[i] < offsets[i - 1]:
            return False
    return True


cdef object _subtree_heights(const node_id_t[::1] ends):
    """For each node, the edges of the longest path down from it (0 for a
    leaf): a preorder trie's children come after their parent, so one pass
    from the last node up, with each node's parent found on a stack of open
    subtrees in a first pass, is enough.  Raises ``ValueError`` when a
    subtree does not nest in its parent's (ends in range assumed:
    ``_ends_in_range``)."""
    cdef Py_ssize_t n = ends.shape[0], node, top = 0
    cdef bint nested = True
    heights = np.zeros(n, dtype=np.int32)
    parents = np.zeros(n, dtype=np.int32)
    cdef int32_t[::1] height = heights
    cdef int32_t[::1] parent = parents
    cdef node_id_t* stack = <node_id_t*>malloc((n + 1) * sizeof(node_id_t))
    if stack == NULL:
        raise MemoryError()
    try:
        with nogil:
            stack[0] = 0
            for node in range(1, n):
                while ends[stack[top]] <= node:
                    top -= 1
                if ends[node] > ends[stack[top]]:
                    nested = False
                    break
                parent[node] = stack[top]
                top += 1
                stack[top] = node
            for node in range(n - 1, 0, -1):
                if height[node] + 1 > height[parent[node]]:
                    height[parent[node]] = height[node] + 1
    finally:
        free(stack)
    if not nested:
        raise ValueError("malformed trie: a subtree does not nest in its parent's")
    return heights


cdef inline void _set_node_tokens(TrieView trie, node_id_t node, word_t* bits) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(trie.node_token_offsets[node], trie.node_token_offsets[node + 1]):
        bitset_add(bits, trie.token_ids[i])


cdef Py_ssize_t walk_trie(ByteRecognizer recognizer, TrieView trie, word_t* bits,
                          WalkFrames* frames, word_t* narrow=NULL) noexcept nogil:
    """Mark every token of ``trie`` whose bytes the recognizer accepts from its
    current state; the recognizer ends where it started.  ``frames`` holds at
    least ``trie.max_depth + 2`` frames (``frames_init``).  With
    ``narrow``, also mark there the accepted tokens that are narrow
    (``narrow.pxd``).  Returns the number of successful pushes (work done)."""
    cdef Py_ssize_t depth = 0
    cdef Py_ssize_t n_pushes = 0
    cdef node_id_t child
    cdef uint8_t byte
    cdef bint has_children
    cdef uint64_t after_leaf[4]
    cdef node_id_t* next_child = frames.next_child
    cdef node_id_t* child_end = frames.child_end
    cdef uint64_t* allowed = frames.allowed
    next_child[0] = 1
    child_end[0] = trie.node_subtree_ends[0]
    recognizer.allowed_bytes(allowed)
    while depth >= 0:
        child = next_child[depth]
        if child >= child_end[depth]:
            if depth > 0:
                recognizer.pop_bytes(1)
            depth -= 1
            continue
        next_child[depth] = trie.node_subtree_ends[child]
        byte = trie.node_bytes[child]
        if not byte_set_has(allowed + 4 * depth, byte) or not recognizer.try_push_byte(byte):
            continue
        n_pushes += 1
        _set_node_tokens(trie, child, bits)
        has_children = trie.node_subtree_ends[child] > child + 1
        if has_children:
            # Invariant: depth + 1 <= depth of child <= max_depth.
            depth += 1
            next_child[depth] = child + 1
            child_end[depth] = trie.node_subtree_ends[child]
            recognizer.allowed_bytes(allowed + 4 * depth)
            if narrow != NULL and is_narrow(allowed + 4 * depth, byte):
                _set_node_tokens(trie, child, narrow)
        else:
            if narrow != NULL and trie.node_token_offsets[child + 1] > trie.node_token_offsets[child]:
                recognizer.allowed_bytes(after_leaf)
                if is_narrow(after_leaf, byte):
                    _set_node_tokens(trie, child, narrow)
            recognizer.pop_bytes(1)
    return n_pushes


cdef bint frames_init(WalkFrames* frames, Py_ssize_t max_depth) noexcept nogil:
    """Allocate ``max_depth + 2`` frames; False (nothing held) when memory
    runs out.  The owner calls ``frames_free``."""
    frames.n_frames = max_depth + 2
    frames.next_child = <node_id_t*>malloc(frames.n_frames * sizeof(node_id_t))
    frames.child_end = <node_id_t*>malloc(frames.n_frames * sizeof(node_id_t))
    frames.allowed = <uint64_t*>malloc(4 * frames.n_frames * sizeof(uint64_t))
    if not frames.next_child or not frames.child_end or not frames.allowed:
        frames_free(frames)
        return False
    return True


cdef void frames_free(WalkFrames* frames) noexcept nogil:
    free(frames.next_child)
    free(frames.child_end)
    free(frames.allowed)
    frames.next_child = NULL
    frames.child_end = NULL
    frames.allowed = NULL
    frames.n_frames = 0


def fill_walk(ByteRecognizer recognizer, TrieView trie, word_t[::1] bits):
    """Plain trie walk from the recognizer's state into ``bits`` (OR-ed in).
    Returns the number of pushes."""
    if bits.shape[0] < trie.n_words:
        raise ValueError("bitset too short for the trie's vocabulary")
    cdef WalkFrames frames
    cdef Py_ssize_t n_pushes
    if not frames_init(&frames, trie.max_depth):
        raise MemoryError()
    with nogil:
        n_pushes = walk_trie(recognizer, trie, &bits[0], &frames)
        frames_free(&frames)
    return n_pushes
