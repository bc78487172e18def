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

Layout
------
Token bitsets as in ``bitset.pxd``: uint32 words, token t at bit t % 32 of
word t // 32; every array of one call has the same number of words.

Invariants
----------
``checked`` is read only where ``fresh`` is given.  Only ``clear_dead`` and ``add_ids`` write, and only the bits named; the
results equal the numpy expressions they replace (tested in
``tests/test_lookahead.py``).
"""

cimport cython

from grammask._core.bitset cimport __builtin_ctz, __builtin_popcount
from grammask._core.types cimport word_t


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
    cdef Py_ssize_t n = bits.shape[0], index
    cdef word_t candidates, fresh_word
    cdef list unknown = [], other = []
    cdef Py_ssize_t n_fresh = 0
    cdef bint has_fresh = fresh is not None, has_checked = checked is not None
    if has_fresh:
        fresh_words = fresh
    for index in range(n):
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
    cdef Py_ssize_t index
    cdef word_t removed
    cdef Py_ssize_t n_removed = 0
    for index in range(bits.shape[0]):
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
    cdef Py_ssize_t index
    for index in range(bits.shape[0]):
        if bits[index] & narrow[index]:
            return True
    return False
