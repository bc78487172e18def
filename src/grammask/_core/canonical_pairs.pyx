# cython: language_level=3
"""Packed pair-forbidden bitsets of byte-pair encoding, walked over the spine indexes.

What it computes
----------------
``SpineIndex.forbidden_words(first_id, out)`` sets, in the packed bitset
``out`` (uint32[ceil(V/32)], bit t%32 of word t//32 = token t), every token t2
that BPE would merge with ``first_id`` across their boundary: the adjacent
pair test of Tran-Thien 2024 (Algorithm 3) and DESIGN.md section 5, as
``grammask.canonical.bpe.MergeTable`` states it.  Walking the right spine of
``first_id`` (node r with the priority p_r of r's parent merge inside the
token, infinite for the token itself), every crossing merge (r, l) of
priority q < p_r forbids the tokens whose left spine holds l with a parent
priority >= q.  The Python reference is ``MergeTable.forbidden_after`` (numpy,
sorted ids); tests check both against ``MergeTable.pair_allowed`` and BPE.

Layout (the arrays of ``MergeTable``, borrowed, never copied)
-------------------------------------------------------------
Crossing merges grouped by left operand r: ``merge_offsets[r]..[r+1]`` into
``merge_right`` (int32 right operand) and ``merge_priorities`` (int64,
ascending inside a group).  Left-spine membership grouped by spine node l:
``spine_offsets[l]..[l+1]`` into ``spine_tokens`` (int32) and
``spine_parent_priorities`` (int64, ascending inside a group).  Per token:
``merge_priority`` (int64, priority of the merge building it) and
``right_child`` (int32, -1 for base symbols).

Invariants
----------
Bits are only ever set (OR), so the caller chooses the starting words (e.g.
the unreachable tokens).  Cost: the crossing merges below the spine's parent
priorities plus the tokens they forbid; no allocation.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t

import numpy as np


cdef class SpineIndex:
    """The spine and crossing-merge indexes of one merge table, for pair-forbidden bitsets."""

    cdef const int64_t[::1] merge_offsets
    cdef const int32_t[::1] merge_right
    cdef const int64_t[::1] merge_priorities
    cdef const int64_t[::1] spine_offsets
    cdef const int32_t[::1] spine_tokens
    cdef const int64_t[::1] spine_parent_priorities
    cdef const int64_t[::1] merge_priority
    cdef const int32_t[::1] right_child
    cdef readonly int n_tokens
    cdef readonly int n_words

    def __init__(self, merge_offsets, merge_right, merge_priorities, spine_offsets, spine_tokens,
                 spine_parent_priorities, merge_priority, right_child):
        self.merge_offsets = np.ascontiguousarray(merge_offsets, dtype=np.int64)
        self.merge_right = np.ascontiguousarray(merge_right, dtype=np.int32)
        self.merge_priorities = np.ascontiguousarray(merge_priorities, dtype=np.int64)
        self.spine_offsets = np.ascontiguousarray(spine_offsets, dtype=np.int64)
        self.spine_tokens = np.ascontiguousarray(spine_tokens, dtype=np.int32)
        self.spine_parent_priorities = np.ascontiguousarray(spine_parent_priorities, dtype=np.int64)
        self.merge_priority = np.ascontiguousarray(merge_priority, dtype=np.int64)
        self.right_child = np.ascontiguousarray(right_child, dtype=np.int32)
        self.n_tokens = len(self.merge_priority)
        self.n_words = (self.n_tokens + 31) // 32

    def forbidden_words(self, int first_id, uint32_t[::1] out):
        """OR into ``out`` the tokens failing the pair test after ``first_id`` (a reachable token).

        Returns the number of (token, crossing merge) hits, for statistics."""
        if first_id < 0 or first_id >= self.n_tokens:
            raise IndexError(f"token id {first_id} outside 0..{self.n_tokens - 1}")
        if out.shape[0] < self.n_words:
            raise ValueError(f"bitset of {out.shape[0]} words, {self.n_words} needed")
        cdef int64_t n_hits = 0
        cdef int32_t node = first_id
        cdef int64_t parent = 0x7FFFFFFFFFFFFFFF
        cdef int64_t merge_index, merge_end, priority, low, high, middle, spine_end, k
        cdef int32_t left, token
        with nogil:
            while node >= 0:
                merge_index = self.merge_offsets[node]
                merge_end = self.merge_offsets[node + 1]
                while merge_index < merge_end:
                    priority = self.merge_priorities[merge_index]
                    if priority >= parent:
                        break
                    left = self.merge_right[merge_index]
                    low = self.spine_offsets[left]
                    spine_end = self.spine_offsets[left + 1]
                    high = spine_end
                    while low < high:
                        middle = (low + high) >> 1
                        if self.spine_parent_priorities[middle] < priority:
                            low = middle + 1
                        else:
                            high = middle
                    k = low
                    while k < spine_end:
                        token = self.spine_tokens[k]
                        out[token >> 5] |= (<uint32_t>1) << (token & 31)
                        k += 1
                    n_hits += spine_end - low
                    merge_index += 1
                parent = self.merge_priority[node]
                node = self.right_child[node]
        return n_hits


def combine_words(const uint32_t[::1] allowed, const uint32_t[::1] conditional,
                  const uint32_t[::1] pair_forbidden, uint32_t[::1] out):
    """out = allowed | (conditional & ~pair_forbidden), word by word (equal lengths)."""
    cdef Py_ssize_t n = out.shape[0]
    if allowed.shape[0] != n or conditional.shape[0] != n or pair_forbidden.shape[0] != n:
        raise ValueError("bitsets of different lengths")
    cdef Py_ssize_t index
    with nogil:
        for index in range(n):
            out[index] = allowed[index] | (conditional[index] & ~pair_forbidden[index])
