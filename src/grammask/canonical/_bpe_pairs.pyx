# cython: language_level=3
"""Packed pair-forbidden bitsets of byte-pair encoding, walked over the spine indexes;
and the compiled loops of building a merge table.

What it computes
----------------
``SpineIndex.forbidden_words(first_id, out)`` sets, in the packed bitset
``out`` (uint32[ceil(V/32)], bit t%32 of word t//32 = token t), every token t2
that BPE would merge with ``first_id`` across their boundary: the adjacent
pair test of Tran-Thien 2024 (Algorithm 3) and docs/design.md section 5, as
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

Derived at construction, per crossing merge j = (r, l, q): the range
``merge_spine_start[j]..merge_spine_end[j]`` (int32) of l's spine group whose
parent priority is >= q, i.e. the tokens that merge j forbids after a token
whose right spine holds r below a parent of priority > q.  The per-step walk
then reads each group of merges sequentially and jumps once per merge to a
contiguous run of ``spine_tokens``: about one cache miss per merge instead of
a binary search over the spine priorities (the tables are ~10 MB, far larger
than the CPU caches, so misses dominate the cost of a step).

Invariants
----------
Bits are only ever set (OR), so the caller chooses the starting words (e.g.
the unreachable tokens).  Cost: the crossing merges below the spine's parent
priorities plus the tokens they forbid; no allocation.

``SpineIndex.pair_allowed(t1, t2)`` is the same test for one pair (the
canonical lookahead asks a few tokens after each of many hypothetical last
tokens), on the crossing merges of each left operand sorted by right operand
(``by_right`` / ``by_right_priorities``, derived at construction, about 12
bytes a merge, by a ``qsort`` of each group: a ``lexsort`` of all merges
took 110 ms of Llama-3's first filter-on mask in every process).

Also here: ``combine_words`` (a keep bitset from the cached region bitsets,
a pair bitset and the tokens always kept, in one pass), ``code_words`` (the packed tokens whose shape
has a given verdict) and, for ``MergeTable``'s build,
``enumerate_cuts`` (token byte strings split into two token byte strings)
and ``bpe_last_merges`` (BPE over token ids, an open-addressing table of
(left, right) -> merge; ``bpe.bpe_merge`` over bytes is the reference and
tests compare the trees with it and with tiktoken's own BPE).
"""

cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort

from grammask._core.bitset cimport bitset_add, n_words

import numpy as np


cdef struct RightMerge:
    int32_t right
    int64_t priority


cdef int _by_right_then_priority(const void* a, const void* b) noexcept nogil:
    """qsort's order of ``RightMerge``s: by right operand, then by priority."""
    cdef const RightMerge* x = <const RightMerge*>a
    cdef const RightMerge* y = <const RightMerge*>b
    if x.right != y.right:
        return -1 if x.right < y.right else 1
    if x.priority != y.priority:
        return -1 if x.priority < y.priority else 1
    return 0


cdef enum:
    INSERTION_SORT_MERGES = 24   # groups up to this size are sorted by insertion


cdef void _insertion_sort(RightMerge* merges, Py_ssize_t n) noexcept nogil:
    """Sort ``n`` merges by (right operand, priority) in place."""
    cdef Py_ssize_t index, slot
    cdef RightMerge moving
    for index in range(1, n):
        moving = merges[index]
        slot = index
        while slot > 0 and _by_right_then_priority(&merges[slot - 1], &moving) > 0:
            merges[slot] = merges[slot - 1]
            slot -= 1
        merges[slot] = moving


cdef class SpineIndex:
    """The spine and crossing-merge indexes of one merge table, for pair-forbidden bitsets and single pair tests."""

    cdef const int64_t[::1] merge_offsets
    cdef const int32_t[::1] merge_right
    cdef const int64_t[::1] merge_priorities
    cdef const int64_t[::1] spine_offsets
    cdef const int32_t[::1] spine_tokens
    cdef const int64_t[::1] spine_parent_priorities
    cdef const int64_t[::1] merge_priority
    cdef const int32_t[::1] left_child
    cdef const int32_t[::1] right_child
    cdef const uint8_t[::1] reachable
    cdef int32_t[::1] merge_spine_start
    cdef int32_t[::1] merge_spine_end
    cdef int32_t[::1] by_right
    cdef int64_t[::1] by_right_priorities
    cdef readonly int n_tokens
    cdef readonly int n_words

    def __init__(self, merge_offsets, merge_right, merge_priorities, spine_offsets, spine_tokens,
                 spine_parent_priorities, merge_priority, left_child, right_child, reachable):
        self.merge_offsets = np.ascontiguousarray(merge_offsets, dtype=np.int64)
        self.merge_right = np.ascontiguousarray(merge_right, dtype=np.int32)
        self.merge_priorities = np.ascontiguousarray(merge_priorities, dtype=np.int64)
        self.spine_offsets = np.ascontiguousarray(spine_offsets, dtype=np.int64)
        self.spine_tokens = np.ascontiguousarray(spine_tokens, dtype=np.int32)
        self.spine_parent_priorities = np.ascontiguousarray(spine_parent_priorities, dtype=np.int64)
        self.merge_priority = np.ascontiguousarray(merge_priority, dtype=np.int64)
        self.left_child = np.ascontiguousarray(left_child, dtype=np.int32)
        self.right_child = np.ascontiguousarray(right_child, dtype=np.int32)
        self.reachable = np.ascontiguousarray(reachable, dtype=np.uint8)
        self.n_tokens = len(self.merge_priority)
        self.n_words = n_words(self.n_tokens)
        if len(self.spine_tokens) >= 0x7FFFFFFF:
            raise OverflowError(f"{len(self.spine_tokens)} spine entries exceed int32 offsets")
        n_merges = len(self.merge_right)
        self.merge_spine_start = np.empty(n_merges, dtype=np.int32)
        self.merge_spine_end = np.empty(n_merges, dtype=np.int32)
        self._derive_merge_ranges(n_merges)
        self.by_right = np.empty(n_merges, dtype=np.int32)
        self.by_right_priorities = np.empty(n_merges, dtype=np.int64)
        if self._sort_groups_by_right(n_merges) != 0:
            raise MemoryError()

    cdef int _sort_groups_by_right(self, Py_ssize_t n_merges) noexcept nogil:
        """``by_right`` / ``by_right_priorities``: each left operand's group of
        crossing merges sorted by (right operand, priority); -1 without memory."""
        cdef RightMerge* merges = <RightMerge*>malloc(max(n_merges, 1) * sizeof(RightMerge))
        cdef Py_ssize_t index, token
        cdef int64_t start, end
        if merges == NULL:
            return -1
        for index in range(n_merges):
            merges[index].right = self.merge_right[index]
            merges[index].priority = self.merge_priorities[index]
        for token in range(self.n_tokens):
            start = self.merge_offsets[token]
            end = self.merge_offsets[token + 1]
            if end - start > INSERTION_SORT_MERGES:
                qsort(&merges[start], end - start, sizeof(RightMerge), _by_right_then_priority)
            elif end - start > 1:
                _insertion_sort(&merges[start], end - start)
        for index in range(n_merges):
            self.by_right[index] = merges[index].right
            self.by_right_priorities[index] = merges[index].priority
        free(merges)
        return 0

    cdef void _derive_merge_ranges(self, Py_ssize_t n_merges) noexcept nogil:
        """For each merge j, the run of its right operand's spine group with parent >= its priority."""
        cdef Py_ssize_t merge_index
        cdef int64_t low, high, middle, priority
        cdef int32_t left
        for merge_index in range(n_merges):
            left = self.merge_right[merge_index]
            priority = self.merge_priorities[merge_index]
            low = self.spine_offsets[left]
            high = self.spine_offsets[left + 1]
            self.merge_spine_end[merge_index] = <int32_t>high
            while low < high:
                middle = (low + high) >> 1
                if self.spine_parent_priorities[middle] < priority:
                    low = middle + 1
                else:
                    high = middle
            self.merge_spine_start[merge_index] = <int32_t>low

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
        cdef int64_t merge_index, merge_end
        cdef int32_t k, spine_end, token
        with nogil:
            while node >= 0:
                merge_index = self.merge_offsets[node]
                merge_end = self.merge_offsets[node + 1]
                while merge_index < merge_end:
                    if self.merge_priorities[merge_index] >= parent:
                        break
                    k = self.merge_spine_start[merge_index]
                    spine_end = self.merge_spine_end[merge_index]
                    n_hits += spine_end - k
                    while k < spine_end:
                        token = self.spine_tokens[k]
                        bitset_add(&out[0], token)
                        k += 1
                    merge_index += 1
                parent = self.merge_priority[node]
                node = self.right_child[node]
        return n_hits

    def pair_allowed(self, int first_id, int second_id):
        """True iff BPE keeps ``first_id`` and ``second_id`` apart (False when
        either is unreachable): for each node r of t1's right spine, each node l
        of t2's left spine is looked up by binary search in r's crossing merges
        sorted by right operand (of a pair listed twice the larger priority
        counts).  Cost: the two spines' lengths times a binary search."""
        if not (0 <= first_id < self.n_tokens and 0 <= second_id < self.n_tokens):
            raise IndexError(f"token ids {first_id}, {second_id} outside 0..{self.n_tokens - 1}")
        return self._pair_allowed(first_id, second_id)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef bint _pair_allowed(self, int32_t first_id, int32_t second_id) noexcept nogil:
        cdef int32_t left_node, right_node = first_id
        cdef int64_t left_parent, right_parent = 0x7FFFFFFFFFFFFFFF, start, low, high, middle, priority
        if not (self.reachable[first_id] and self.reachable[second_id]):
            return False
        while right_node >= 0:
            start = self.merge_offsets[right_node]
            left_node = second_id
            left_parent = 0x7FFFFFFFFFFFFFFF
            while left_node >= 0:
                # the last entry of right operand left_node in right_node's group
                low = start
                high = self.merge_offsets[right_node + 1]
                while low < high:
                    middle = (low + high) >> 1
                    if self.by_right[middle] <= left_node:
                        low = middle + 1
                    else:
                        high = middle
                if low > start and self.by_right[low - 1] == left_node:
                    priority = self.by_right_priorities[low - 1]
                    if priority < right_parent and priority <= left_parent:
                        return False
                left_parent = self.merge_priority[left_node]
                left_node = self.left_child[left_node]
            right_parent = self.merge_priority[right_node]
            right_node = self.right_child[right_node]
        return True


def combine_words(const uint32_t[::1] allowed, const uint32_t[::1] conditional, pair_forbidden,
                  const uint32_t[::1] extra, uint32_t[::1] out):
    """out = allowed | (conditional & ~pair_forbidden) | extra, word by word (equal
    lengths); ``pair_forbidden`` None: no pair test (every conditional word kept)."""
    cdef const uint32_t[::1] pair
    cdef Py_ssize_t n = out.shape[0]
    cdef Py_ssize_t index
    if allowed.shape[0] != n or conditional.shape[0] != n or extra.shape[0] != n:
        raise ValueError("bitsets of different lengths")
    if pair_forbidden is None:
        with nogil:
            for index in range(n):
                out[index] = allowed[index] | conditional[index] | extra[index]
        return
    pair = pair_forbidden
    if pair.shape[0] != n:
        raise ValueError("bitsets of different lengths")
    with nogil:
        for index in range(n):
            out[index] = allowed[index] | (conditional[index] & ~pair[index]) | extra[index]


@cython.boundscheck(False)
@cython.wraparound(False)
def code_words(const signed char[::1] codes, const int32_t[::1] index, uint32_t[::1] out_two,
               uint32_t[::1] out_one):
    """Set in ``out_two`` (``out_one``) the bit of every token t with ``codes[index[t]]``
    equal to 2 (1); ``index[t]`` outside ``codes`` (-1): neither.  ``index`` has one entry
    per token and both bitsets cover them.  The packed form of ``codes[index] == 2`` and
    ``== 1`` in one pass, a word at a time, without the V-byte gather and ``packbits``:
    both bits of each shape are first put in a table indexed by the shape plus one (entry
    0: neither), so a token costs one load and two shifts (a third of the time of testing
    its code twice)."""
    cdef Py_ssize_t n_tokens = index.shape[0], word_index, token, end
    cdef Py_ssize_t n_codes = codes.shape[0], shape
    cdef uint32_t at, two, one, both, offset
    cdef uint8_t* table
    if out_two.shape[0] < n_words(n_tokens) or out_one.shape[0] < n_words(n_tokens):
        raise ValueError("a bitset does not cover every token")
    table = <uint8_t*>malloc(n_codes + 1)
    if table == NULL:
        raise MemoryError()
    table[0] = 0
    for shape in range(n_codes):
        table[shape + 1] = (codes[shape] == 2) | ((codes[shape] == 1) << 1)
    with nogil:
        for word_index in range(n_words(n_tokens)):
            two = one = 0
            token = word_index << 5
            end = min(token + 32, n_tokens)
            offset = 0
            while token < end:
                # branch-free: shapes are in no order, so a branch would mispredict often
                at = (<uint32_t> index[token]) + 1
                both = table[at if at <= <uint32_t> n_codes else 0]
                two |= (both & 1) << offset
                one |= (both >> 1) << offset
                token += 1
                offset += 1
            out_two[word_index] |= two
            out_one[word_index] |= one
    free(table)


# ---- build-time helpers of MergeTable -------------------------------------------

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject


def enumerate_cuts(list token_bytes, dict id_of):
    """Every cut of every token's bytes whose two sides are both token bytes.

    Returns int32 arrays (token id, left id, right id), in token-id order then
    cut order; ids are ``id_of`` values (the first id of those bytes)."""
    cdef Py_ssize_t token_id, cut, length, n_cuts = 0, count = 0
    cdef object data
    cdef const char* buffer
    cdef PyObject* left
    cdef PyObject* right
    for data in token_bytes:
        if data is not None and PyBytes_GET_SIZE(data) > 1:
            n_cuts += PyBytes_GET_SIZE(data) - 1
    tokens_array = np.empty(n_cuts, dtype=np.int32)
    lefts_array = np.empty(n_cuts, dtype=np.int32)
    rights_array = np.empty(n_cuts, dtype=np.int32)
    cdef int32_t[::1] tokens = tokens_array
    cdef int32_t[::1] lefts = lefts_array
    cdef int32_t[::1] rights = rights_array
    for token_id in range(len(token_bytes)):
        data = token_bytes[token_id]
        if data is None:
            continue
        length = PyBytes_GET_SIZE(data)
        buffer = PyBytes_AS_STRING(data)
        for cut in range(1, length):
            left = PyDict_GetItem(id_of, PyBytes_FromStringAndSize(buffer, cut))
            if left is NULL:
                continue
            right = PyDict_GetItem(id_of, PyBytes_FromStringAndSize(buffer + cut, length - cut))
            if right is NULL:
                continue
            tokens[count] = token_id
            lefts[count] = <object>left
            rights[count] = <object>right
            count += 1
    return tokens_array[:count].copy(), lefts_array[:count].copy(), rights_array[:count].copy()


cdef inline uint64_t _pair_key(int32_t left, int32_t right) noexcept nogil:
    return ((<uint64_t><uint32_t>left) << 32) | (<uint64_t><uint32_t>right)


cdef inline Py_ssize_t _slot(uint64_t key, Py_ssize_t mask) noexcept nogil:
    return <Py_ssize_t>(((key * <uint64_t>0x9E3779B97F4A7C15) >> 29) & <uint64_t>mask)


def bpe_last_merges(const int32_t[::1] piece_offsets, const int32_t[::1] pieces,
                    const int32_t[::1] merge_left, const int32_t[::1] merge_right,
                    const int64_t[::1] merge_priority, const int32_t[::1] merge_result):
    """BPE over token ids: for each token, run byte-pair merging on its base pieces.

    Token i's base piece ids are ``pieces[piece_offsets[i]:piece_offsets[i+1]]``;
    merges are (left id, right id) -> (priority, result id), the first entry
    of a repeated pair counting.  Each step merges the adjacent pair of lowest
    priority, leftmost on ties (``bpe.bpe_merge`` over bytes is the
    reference).  Returns int32 ``final`` (the single piece left, -1 if several)
    and the last merge's int32 left / right ids and int64 priority (-1 / -1 /
    0 when no merge happened)."""
    cdef Py_ssize_t n_tokens = piece_offsets.shape[0] - 1
    cdef Py_ssize_t n_merges = merge_left.shape[0]
    cdef Py_ssize_t capacity = 1
    while capacity < 2 * n_merges + 2:
        capacity <<= 1
    cdef Py_ssize_t mask = capacity - 1
    table_keys_array = np.zeros(capacity, dtype=np.uint64)
    table_index_array = np.full(capacity, -1, dtype=np.int64)
    cdef uint64_t[::1] table_keys = table_keys_array
    cdef int64_t[::1] table_index = table_index_array
    final_array = np.full(n_tokens, -1, dtype=np.int32)
    last_left_array = np.full(n_tokens, -1, dtype=np.int32)
    last_right_array = np.full(n_tokens, -1, dtype=np.int32)
    last_priority_array = np.zeros(n_tokens, dtype=np.int64)
    cdef int32_t[::1] final = final_array
    cdef int32_t[::1] last_left = last_left_array
    cdef int32_t[::1] last_right = last_right_array
    cdef int64_t[::1] last_priority = last_priority_array
    cdef Py_ssize_t max_pieces = 1
    cdef Py_ssize_t token
    for token in range(n_tokens):
        if piece_offsets[token + 1] - piece_offsets[token] > max_pieces:
            max_pieces = piece_offsets[token + 1] - piece_offsets[token]
    work_array = np.empty(max_pieces, dtype=np.int32)
    cdef int32_t[::1] work = work_array
    cdef Py_ssize_t merge_index, slot, n, index, best_index
    cdef uint64_t key
    cdef int64_t best, priority, found
    with nogil:
        for merge_index in range(n_merges):
            key = _pair_key(merge_left[merge_index], merge_right[merge_index])
            slot = _slot(key, mask)
            while table_index[slot] >= 0 and table_keys[slot] != key:
                slot = (slot + 1) & mask
            if table_index[slot] < 0:
                table_keys[slot] = key
                table_index[slot] = merge_index
        for token in range(n_tokens):
            n = piece_offsets[token + 1] - piece_offsets[token]
            for index in range(n):
                work[index] = pieces[piece_offsets[token] + index]
            while n > 1:
                best = -1
                best_index = -1
                found = -1
                for index in range(n - 1):
                    key = _pair_key(work[index], work[index + 1])
                    slot = _slot(key, mask)
                    while table_index[slot] >= 0 and table_keys[slot] != key:
                        slot = (slot + 1) & mask
                    if table_index[slot] < 0:
                        continue
                    priority = merge_priority[table_index[slot]]
                    if best_index < 0 or priority < best:
                        best = priority
                        best_index = index
                        found = table_index[slot]
                if best_index < 0:
                    break
                last_left[token] = work[best_index]
                last_right[token] = work[best_index + 1]
                last_priority[token] = best
                work[best_index] = merge_result[found]
                for index in range(best_index + 1, n - 1):
                    work[index] = work[index + 1]
                n -= 1
            if n == 1:
                final[token] = work[0]
    return final_array, last_left_array, last_right_array, last_priority_array
