# cython: language_level=3
"""Token bitsets to what a sampler reads: ``-inf`` for every token a mask
disallows, or the allowed ids.

What it computes
----------------
``mask_rows(logits, bits, vocab_size)`` sets, in every row of a float32 or
float64 ``[rows, V']`` array, the logit of each token whose bit is clear in
the token bitset ``bits`` (``bitset.pxd``) to ``-inf``, in place.  Columns
from ``vocab_size`` on (padded model vocabularies) are always disallowed.
``allowed_ids(bits, vocab_size)`` is the sorted int32 array of the set
tokens below ``vocab_size`` (``bitset.token_ids``, numpy's unpack and
nonzero over V bytes, is the reference), counted with popcounts and read
off with count-trailing-zeros, a word at a time.

Layout
------
Rows may be strided (llama-cpp-python passes a non-contiguous view).  The
loop goes a bitset word (32 tokens) at a time: an all-ones word inside the
vocabulary is skipped, an all-zeros word written without testing bits.

Invariants
----------
Only ``-inf`` is written, and only to disallowed columns; allowed logits are
left untouched.
"""

cimport cython
from libc.stdint cimport int32_t

import numpy as np

from grammask._core.bitset cimport __builtin_popcount, bitset_ids_into
from grammask._core.types cimport word_t


cdef void mask_row(real_t[:] row, const word_t* bits, Py_ssize_t n_words,
                   Py_ssize_t vocab_size, real_t minus_inf) noexcept nogil:
    """row[t] = -inf for every t whose bit is clear; t >= vocab_size too."""
    cdef Py_ssize_t n = row.shape[0]
    cdef Py_ssize_t word_index, t, base, limit
    cdef word_t word
    for word_index in range(n_words):
        base = word_index * 32
        if base >= n:
            return
        word = bits[word_index]
        if word == <word_t>0xFFFFFFFFu and base + 32 <= vocab_size:
            continue
        limit = base + 32
        if limit > n:
            limit = n
        if word == 0:
            for t in range(base, limit):
                row[t] = minus_inf
        else:
            for t in range(base, limit):
                if t >= vocab_size or not ((word >> (t - base)) & 1):
                    row[t] = minus_inf
    for t in range(n_words * 32, n):
        row[t] = minus_inf


def mask_rows(real_t[:, :] logits, const word_t[::1] bits, Py_ssize_t vocab_size):
    """Set logits of disallowed tokens to -inf in every row, in place."""
    cdef Py_ssize_t r
    cdef real_t minus_inf = -float("inf")
    with nogil:
        for r in range(logits.shape[0]):
            mask_row(logits[r], &bits[0], bits.shape[0], vocab_size, minus_inf)


@cython.boundscheck(False)
@cython.wraparound(False)
def allowed_ids(const word_t[::1] bits, Py_ssize_t vocab_size):
    """Sorted np.int32 array of the tokens set in ``bits`` below ``vocab_size``."""
    cdef Py_ssize_t n_words = min(bits.shape[0], (vocab_size + 31) >> 5), i, count = 0
    cdef word_t last_mask = 0xFFFFFFFFu
    if n_words and vocab_size < n_words * 32:
        last_mask = (<word_t> 1 << (vocab_size & 31)) - 1
    with nogil:
        for i in range(n_words):
            count += __builtin_popcount(bits[i] & (last_mask if i == n_words - 1 else <word_t> 0xFFFFFFFFu))
    out = np.empty(count, dtype=np.int32)
    cdef int32_t[::1] ids = out
    if count:
        with nogil:
            bitset_ids_into(&bits[0], n_words, vocab_size, &ids[0], count)
    return out
