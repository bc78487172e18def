# cython: language_level=3
"""Token bitsets to logits: ``-inf`` for every token a mask disallows.

What it computes
----------------
``mask_rows(logits, bits, vocab_size)`` sets, in every row of a float32 or
float64 ``[rows, V']`` array, the logit of each token whose bit is clear in
the token bitset ``bits`` (``bitset.pxd``) to ``-inf``, in place.  Columns
from ``vocab_size`` on (padded model vocabularies) are always disallowed.

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
