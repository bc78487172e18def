# cython: language_level=3
"""Token bitsets to what a sampler reads: ``-inf`` for every token a mask
disallows, or the allowed ids.

What it computes
----------------
``mask_rows(logits, bits, vocab_size)`` sets, in every row of a float32 or
float64 ``[rows, V']`` array, the logit of each token whose bit is clear in
the token bitset ``bits`` (``bitset.pxd``) to ``-inf``, in place.  Columns
from ``vocab_size`` on (padded model vocabularies) are always disallowed.
``copy_row(bitmask, row, bits)`` copies ``bits`` into row ``row`` of a
C-contiguous int32 ``[rows, n_words]`` array (xgrammar's bitmask layout)
with one ``memcpy``, and says False, copying nothing, where the row does
not fit (``grammask.engine.logits.write_bitmask`` then takes numpy's copy
and its typed errors).
``allowed_ids(bits, vocab_size)`` is the sorted int32 array of the set
tokens below ``vocab_size`` (``bitset.token_ids``, numpy's unpack and
nonzero over V bytes, is the reference), counted with popcounts and read
off with count-trailing-zeros, a word at a time.

Layout
------
Rows may be strided (llama-cpp-python passes a non-contiguous view: a
float32 every 12 bytes); a row is walked by pointer and byte stride.  The
loop goes a bitset word (32 tokens) at a time: an all-ones word inside the
vocabulary is skipped, an all-zeros word written without testing bits, and
in a mixed word only the clear bits are visited (count-trailing-zeros).

Invariants
----------
Only ``-inf`` is written, and only to disallowed columns; allowed logits are
left untouched.
"""

cimport cython
from libc.stdint cimport int32_t
from libc.string cimport memcpy

import numpy as np

from grammask._core.bitset cimport __builtin_ctz, __builtin_popcount, bitset_ids_into
from grammask._core.types cimport word_t


cdef void mask_row(char* row, Py_ssize_t stride, Py_ssize_t n, const word_t* bits,
                   Py_ssize_t n_words, Py_ssize_t vocab_size, real_t minus_inf) noexcept nogil:
    """For the ``n`` logits at ``row`` (``stride`` bytes apart): -inf for
    every t whose bit is clear, and for every t >= vocab_size."""
    cdef Py_ssize_t word_index, t, base, limit
    cdef word_t clear
    for word_index in range(n_words):
        base = word_index * 32
        if base >= n:
            return
        clear = ~bits[word_index]
        if vocab_size <= base:
            clear = <word_t>0xFFFFFFFFu     # columns from vocab_size on are never allowed
        elif vocab_size < base + 32:
            clear |= <word_t>0xFFFFFFFFu << (vocab_size - base)
        if clear == 0:
            continue
        limit = base + 32
        if limit > n:
            limit = n
            clear &= (<word_t>1 << (limit - base)) - 1
        if clear == <word_t>0xFFFFFFFFu:
            for t in range(base, limit):
                (<real_t*>(row + t * stride))[0] = minus_inf
        else:
            while clear:
                t = base + __builtin_ctz(clear)
                (<real_t*>(row + t * stride))[0] = minus_inf
                clear &= clear - 1
    for t in range(n_words * 32, n):
        (<real_t*>(row + t * stride))[0] = minus_inf


def mask_rows(real_t[:, :] logits, const word_t[::1] bits, Py_ssize_t vocab_size):
    """Set logits of disallowed tokens to -inf in every row, in place."""
    cdef Py_ssize_t r
    cdef real_t minus_inf = -float("inf")
    cdef Py_ssize_t n = logits.shape[1], stride = logits.strides[1]
    if logits.shape[0] == 0 or n == 0:
        return
    with nogil:
        for r in range(logits.shape[0]):
            mask_row(<char*>&logits[r, 0], stride, n, &bits[0], bits.shape[0], vocab_size,
                     minus_inf)


def copy_row(int32_t[:, ::1] bitmask, Py_ssize_t row, const word_t[::1] bits):
    """Copy ``bits`` into row ``row`` of ``bitmask``; False (nothing copied)
    unless the row exists and is as long as ``bits``."""
    cdef Py_ssize_t n_words = bits.shape[0]
    if bitmask.shape[1] != n_words or not 0 <= row < bitmask.shape[0]:
        return False
    if n_words:
        memcpy(&bitmask[row, 0], &bits[0], n_words * sizeof(word_t))
    return True


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
