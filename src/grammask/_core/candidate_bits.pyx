# cython: language_level=3
"""The canonical lookahead's per-mask bitset bookkeeping in one pass each.

What it computes
----------------
``split_candidates(bits, narrow, fresh, checked)`` reads the candidates of a
mask (tokens set in both ``bits`` and ``narrow``) and returns (the fresh
candidates not yet ``checked``, the other candidates, how many are fresh),
ids ascending; ``fresh`` may be None (no token is fresh), ``checked`` None
(none checked yet).
``clear_dead(bits, narrow, fresh, dead)`` clears from ``bits`` the fresh
candidates set in ``dead`` and returns how many it cleared.
``add_ids(words, ids)`` sets the bits of ``ids``; ``has_candidates`` says
whether a mask has any candidate at all.  Together they replace
about a dozen whole-array numpy operations per mask
(``grammask.engine.lookahead``).
``bit_ids(words, exclude, limit)`` lists the ids set in ``words`` and not in
``exclude`` (None: none excluded), ascending, at most ``limit`` of them
(negative: all): the search's wide and narrow tokens of a grammar mask
without an intermediate bitset, and only as many as it tests.
``more_bits_than(words, limit)`` counts set bits only until they pass
``limit``.
``in_byte_order(ids, rank, order)`` sorts candidate ids by their tokens'
bytes through the vocabulary's byte-order permutation (``order`` lists
the ids in byte order, ``rank`` is its inverse): an insertion sort of the
ranks for a few ids, else the ranks set in a bitset and read back in order
(a pass over ``len(order) / 64`` words), where Python's ``sorted`` with the
bytes as keys took 1-4 ms for the thousands of candidates of a counted
string's end.

Layout
------
Token bitsets as in ``bitset.pxd``: uint32 words, token t at bit t % 32 of
word t // 32; every array of one call has the same number of words.  The
passes over a mask's candidates (``split_candidates``, ``clear_dead``,
``has_candidates``) test ``BLOCK_WORDS`` words at a time
(``bitset.block_overlap``) and skip the blocks without one: a mask has
hundreds of candidates among 4,000 words.

Invariants
----------
``checked`` is read only where ``fresh`` is given.  Only ``clear_dead`` and ``add_ids`` write, and only the bits named; the
results equal the numpy expressions they replace (tested in
``tests/test_lookahead.py``).
"""

cimport cython
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

from grammask._core.bitset cimport BLOCK_WORDS, __builtin_ctz, __builtin_popcount, block_overlap
from grammask._core.types cimport word_t

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil

cdef enum:
    INSERTION_SORT_IDS = 48   # fewer ids than this: insertion sort of their ranks


cdef inline void _append_ids(list out, word_t word, Py_ssize_t base):
    """Append the ids of ``word``'s set bits (word ``base >> 5``), ascending."""
    while word:
        out.append(base + __builtin_ctz(word))
        word &= word - 1


@cython.boundscheck(False)
@cython.wraparound(False)
def split_candidates(const word_t[::1] bits, const word_t[::1] narrow, fresh, const word_t[::1] checked):
    """(unchecked fresh candidate ids, other candidate ids, number of fresh candidates)."""
    cdef const word_t[::1] fresh_words
    cdef Py_ssize_t n = bits.shape[0], index, block, start
    cdef word_t candidates, fresh_word
    cdef list unknown = [], other = []
    cdef Py_ssize_t n_fresh = 0
    cdef bint has_fresh = fresh is not None, has_checked = checked is not None
    if has_fresh:
        fresh_words = fresh
    for block in range((n + BLOCK_WORDS - 1) // BLOCK_WORDS):
        start = block * BLOCK_WORDS
        if not block_overlap(&bits[0], &narrow[0], start, min(start + BLOCK_WORDS, n)):
            continue
        for index in range(start, min(start + BLOCK_WORDS, n)):
            candidates = bits[index] & narrow[index]
            if not candidates:
                continue
            fresh_word = fresh_words[index] & candidates if has_fresh else 0
            if fresh_word:
                n_fresh += __builtin_popcount(fresh_word)
                _append_ids(unknown, fresh_word & ~checked[index] if has_checked else fresh_word,
                            index << 5)
            _append_ids(other, candidates & ~fresh_word, index << 5)
    return unknown, other, n_fresh


@cython.boundscheck(False)
@cython.wraparound(False)
def clear_dead(word_t[::1] bits, const word_t[::1] narrow, const word_t[::1] fresh,
               const word_t[::1] dead):
    """Clear the fresh candidates set in ``dead`` from ``bits``; returns how many."""
    cdef Py_ssize_t index, block, start, n = bits.shape[0]
    cdef word_t removed
    cdef Py_ssize_t n_removed = 0
    for block in range((n + BLOCK_WORDS - 1) // BLOCK_WORDS):
        start = block * BLOCK_WORDS
        if not block_overlap(&narrow[0], &dead[0], start, min(start + BLOCK_WORDS, n)):
            continue
        for index in range(start, min(start + BLOCK_WORDS, n)):
            removed = bits[index] & narrow[index] & fresh[index] & dead[index]
            if removed:
                bits[index] &= ~removed
                n_removed += __builtin_popcount(removed)
    return n_removed


@cython.boundscheck(False)
@cython.wraparound(False)
def add_ids(word_t[::1] words, list ids):
    """Set the bits of ``ids`` (each below 32 * len(words)) in place."""
    cdef Py_ssize_t token_id
    for token_id in ids:
        words[token_id >> 5] |= (<word_t> 1) << (token_id & 31)


@cython.boundscheck(False)
@cython.wraparound(False)
def has_candidates(const word_t[::1] bits, const word_t[::1] narrow):
    """Some token is set in both ``bits`` and ``narrow``."""
    cdef Py_ssize_t block, start, n = bits.shape[0]
    for block in range((n + BLOCK_WORDS - 1) // BLOCK_WORDS):
        start = block * BLOCK_WORDS
        if block_overlap(&bits[0], &narrow[0], start, min(start + BLOCK_WORDS, n)):
            return True
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
def in_byte_order(list ids, const int32_t[::1] rank, const int32_t[::1] order):
    """``ids`` (distinct token ids below ``len(rank)``) as a new list in the
    order of their ranks: ``sorted(ids, key=token_bytes.__getitem__)`` when
    ``order`` lists the vocabulary's ids in byte order and ``rank`` is its
    inverse (``rank[order[r]] == r``)."""
    cdef Py_ssize_t n = len(ids), index, slot, n_words, word_index
    cdef Py_ssize_t n_ranks = order.shape[0]
    cdef int32_t key
    cdef int32_t* keys
    cdef uint64_t* words
    cdef uint64_t word
    cdef list out = []
    if n == 0:
        return out
    for index in range(n):
        key = ids[index]
        if not 0 <= key < rank.shape[0] or not 0 <= rank[key] < n_ranks:
            raise IndexError(f"token id {key} has no rank")
    if n <= INSERTION_SORT_IDS:
        keys = <int32_t*>malloc(n * sizeof(int32_t))
        if keys == NULL:
            raise MemoryError()
        for index in range(n):
            key = rank[<int32_t>ids[index]]
            slot = index
            while slot > 0 and keys[slot - 1] > key:
                keys[slot] = keys[slot - 1]
                slot -= 1
            keys[slot] = key
        for index in range(n):
            out.append(order[keys[index]])
        free(keys)
        return out
    n_words = (n_ranks + 63) >> 6
    words = <uint64_t*>calloc(n_words, sizeof(uint64_t))
    if words == NULL:
        raise MemoryError()
    for index in range(n):
        key = rank[<int32_t>ids[index]]
        words[key >> 6] |= (<uint64_t>1) << (key & 63)
    for word_index in range(n_words):
        word = words[word_index]
        while word:
            out.append(order[(word_index << 6) + __builtin_ctzll(word)])
            word &= word - 1
    free(words)
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
def bit_ids(const word_t[::1] words, exclude, Py_ssize_t limit):
    """Ids set in ``words`` and not in ``exclude`` (a bitset of the same
    length, or None), ascending, the first ``limit`` (negative: all)."""
    cdef const word_t[::1] excluded
    cdef bint has_exclude = exclude is not None
    cdef Py_ssize_t index, n = words.shape[0]
    cdef word_t word
    cdef list out = []
    if has_exclude:
        excluded = exclude
        if excluded.shape[0] != n:
            raise ValueError("bitsets of different lengths")
    if limit == 0:
        return out
    for index in range(n):
        word = words[index] & ~excluded[index] if has_exclude else words[index]
        while word:
            out.append((index << 5) + __builtin_ctz(word))
            if len(out) == limit:
                return out
            word &= word - 1
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
def more_bits_than(const word_t[::1] words, Py_ssize_t limit):
    """More than ``limit`` bits are set in ``words``: a count that stops as
    soon as it passes the limit (the search asks whether a grammar mask of
    100,000 tokens holds over 512, or its narrow part over 16)."""
    cdef Py_ssize_t index, count = 0
    for index in range(words.shape[0]):
        count += __builtin_popcount(words[index])
        if count > limit:
            return True
    return False
