# cython: language_level=3
"""Exit tries: every remainder of the tokens that pass a terminal's end, as one trie.

What it computes
----------------
When a terminal's automaton may end after a non-empty proper prefix p of a
token t, the rest ``t[len(p):]`` must be walked against the grammar after the
terminal (case b of ``terminal_tokens.pyx``).  The Earley set reached by
ending the terminal is the same whatever p was, so all remainders are walked
at once in an *exit trie*: ``merge_subtrees`` merges the subtrees below every
*exit node* (a vocabulary-trie node at which the terminal may end) under one
root, each merged node carrying the ids of the tokens whose remainder it
spells.  Tokens ending at an exit node itself are left out: their remainder
is empty.

Layout
------
The output is a ``TrieView`` (layout in ``trie_walk.pyx``).  While merging,
each merged node keeps the *source set* of vocabulary nodes it stands for as
a segment of one stack-like buffer; its children are the children of its
sources grouped by byte (stably sorted, ``_expand_children``), so the output
comes out in DFS preorder with children sorted by byte.

Invariants
----------
A merged node at depth d stands for source nodes at depth d below their exit
node, so the output's depth is at most the input trie's; its token ids are
the input's, so they stay below ``vocab_size``.
"""

from libc.stdint cimport int32_t
from libc.stdlib cimport free
from libc.string cimport memset

import numpy as np

from grammask._core.growable cimport Growable, growable_bytes, growable_empty, grow_push
from grammask._core.trie_walk cimport TrieView
from grammask._core.types cimport node_id_t


# Children of several sources are sorted by insertion up to this many, by a
# counting sort over the 256 bytes above.
cdef Py_ssize_t _INSERTION_SORT_MAX = 64


cdef inline object _as_array(const Growable* array):
    return np.frombuffer(growable_bytes(array), dtype=np.int32)


cpdef TrieView merge_subtrees(TrieView trie, object exit_nodes, Py_ssize_t vocab_size):
    """The trie of all remainders below ``exit_nodes`` (node ids of ``trie``)."""
    cdef const node_id_t[::1] sources0 = np.ascontiguousarray(exit_nodes, dtype=np.int32)
    cdef Growable buffer = growable_empty(), node_bytes = growable_empty()
    cdef Growable subtree_ends = growable_empty()
    cdef Growable token_offsets = growable_empty(), token_ids = growable_empty()
    cdef Growable frame_node = growable_empty(), frame_cursor = growable_empty()
    cdef Growable frame_end = growable_empty(), frame_base = growable_empty()
    cdef Py_ssize_t counts[257]
    cdef Py_ssize_t i, j, start, end, cursor, node, child, group_end, n_children
    cdef Py_ssize_t max_depth = 0
    cdef node_id_t source
    cdef int32_t b
    cdef bint ok = True
    try:
        with nogil:
            # Root node.
            ok = grow_push(&node_bytes, 0) and grow_push(&subtree_ends, 0) \
                and grow_push(&token_offsets, 0)
            # Sources of the root: the exit nodes; children are expanded below.
            start = buffer.size
            for i in range(sources0.shape[0]):
                ok = ok and grow_push(&buffer, sources0[i])
            ok = ok and _expand_children(trie, &buffer, start, buffer.size, counts)
            # Frames: (merged node, cursor into its children segment, segment end, base)
            ok = ok and grow_push(&frame_node, 0) \
                and grow_push(&frame_cursor, <int32_t>(start + sources0.shape[0])) \
                and grow_push(&frame_end, <int32_t>buffer.size) and grow_push(&frame_base, <int32_t>start)
            while ok and frame_node.size > 0:
                i = frame_node.size - 1
                cursor = frame_cursor.data[i]
                end = frame_end.data[i]
                if cursor >= end:
                    subtree_ends.data[frame_node.data[i]] = <int32_t>node_bytes.size
                    buffer.size = frame_base.data[i]
                    frame_node.size -= 1; frame_cursor.size -= 1; frame_end.size -= 1; frame_base.size -= 1
                    continue
                b = trie.node_bytes[buffer.data[cursor]]
                group_end = cursor
                while group_end < end and trie.node_bytes[buffer.data[group_end]] == b:
                    group_end += 1
                frame_cursor.data[i] = <int32_t>group_end
                node = node_bytes.size
                ok = ok and grow_push(&node_bytes, b) and grow_push(&subtree_ends, 0)
                for j in range(cursor, group_end):
                    source = buffer.data[j]
                    for child in range(trie.node_token_offsets[source], trie.node_token_offsets[source + 1]):
                        ok = ok and grow_push(&token_ids, trie.token_ids[child])
                ok = ok and grow_push(&token_offsets, <int32_t>token_ids.size)
                if frame_node.size > max_depth:
                    max_depth = frame_node.size
                # Children of this merged node: children of sources [cursor, group_end).
                start = buffer.size
                n_children = 0
                for j in range(cursor, group_end):
                    source = buffer.data[j]
                    if trie.node_subtree_ends[source] > source + 1:
                        n_children += 1
                        ok = ok and grow_push(&buffer, source)
                if n_children == 0:
                    buffer.size = start
                    subtree_ends.data[node] = <int32_t>node_bytes.size
                    continue
                ok = ok and _expand_children(trie, &buffer, start, buffer.size, counts)
                ok = ok and grow_push(&frame_node, <int32_t>node) \
                    and grow_push(&frame_cursor, <int32_t>(start + n_children)) \
                    and grow_push(&frame_end, <int32_t>buffer.size) and grow_push(&frame_base, <int32_t>start)
        if not ok:
            raise MemoryError()
        # token_offsets holds, per node in creation (= preorder) order, the
        # end of its tokens (the root's is 0); prepending 0 gives the starts.
        offsets = np.concatenate([np.zeros(1, dtype=np.int32), _as_array(&token_offsets)])
        return TrieView(_as_array(&node_bytes).astype(np.uint8), _as_array(&subtree_ends), offsets,
                        _as_array(&token_ids), max_depth + 1, vocab_size)
    finally:
        free(buffer.data); free(node_bytes.data); free(subtree_ends.data)
        free(token_offsets.data); free(token_ids.data)
        free(frame_node.data); free(frame_cursor.data); free(frame_end.data); free(frame_base.data)


cdef bint _expand_children(TrieView trie, Growable* buffer, Py_ssize_t start, Py_ssize_t end,
                           Py_ssize_t* counts) noexcept nogil:
    """Append, after ``buffer[start:end]`` (the sources), the children of all
    sources sorted by byte (stable); the sources stay in place.  One source's
    children are already sorted; a few are sorted by insertion; many by a
    counting sort over the 256 bytes (whose cost, clearing and summing 257
    counters, would dominate for the one- or two-child nodes that make up
    most of a trie)."""
    cdef Py_ssize_t i, j, b, total, source, child, out
    cdef int32_t moving
    out = buffer.size
    for i in range(start, end):
        source = buffer.data[i]
        child = source + 1
        while child < trie.node_subtree_ends[source]:
            if not grow_push(buffer, <int32_t>child):
                return False
            child = trie.node_subtree_ends[child]
    total = buffer.size - out
    if end - start == 1:
        return True
    if total <= _INSERTION_SORT_MAX:
        for i in range(out + 1, buffer.size):
            moving = buffer.data[i]
            b = trie.node_bytes[moving]
            j = i
            while j > out and trie.node_bytes[buffer.data[j - 1]] > b:
                buffer.data[j] = buffer.data[j - 1]
                j -= 1
            buffer.data[j] = moving
        return True
    memset(counts, 0, 257 * sizeof(Py_ssize_t))
    for i in range(out, buffer.size):
        counts[trie.node_bytes[buffer.data[i]] + 1] += 1
    for b in range(256):
        counts[b + 1] += counts[b]
    buffer.size = out
    for i in range(total):
        if not grow_push(buffer, 0):
            return False
    for i in range(start, end):
        source = buffer.data[i]
        child = source + 1
        while child < trie.node_subtree_ends[source]:
            b = trie.node_bytes[child]
            buffer.data[out + counts[b]] = <int32_t>child
            counts[b] += 1
            child = trie.node_subtree_ends[child]
    return True
