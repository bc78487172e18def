# cython: language_level=3
"""The two bitset layouts of the core, as inline ``nogil`` helpers (the
Python side is ``grammask.bitset``).

Token bitsets
    Token t is bit ``t % 32`` of word ``t // 32`` of a ``word_t`` (uint32)
    array of ``n_words(V) = ceil(V / 32)`` words.  Single tokens are written
    and read through ``bitset_add`` / ``bitset_has``; loops that go a word
    (32 tokens) at a time rely on the same layout (``bitset_ids_into`` reads
    the ids back).  Callers keep ``token_id < n_words * 32``.

Byte sets
    A set of bytes is 256 bits in four ``uint64_t`` words: byte b is bit
    ``b % 64`` of word ``b // 64``.  Python sees the same bits as 32 bytes,
    byte b at bit ``b % 8`` of byte ``b // 8`` (``byte_set_to_bytes``; the
    words' little-endian memory).  There is no other byte-set encoding.
"""

from libc.stdint cimport uint8_t, uint64_t
from cpython.bytes cimport PyBytes_FromStringAndSize

from grammask._core.types cimport token_id_t, word_t


cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_popcount(unsigned int x) nogil
    int __builtin_ctz(unsigned int x) nogil    # undefined for 0: callers test the word first
    int __builtin_ctzll(unsigned long long x) nogil


cdef enum:
    BLOCK_WORDS = 16   # words a pass over sparse candidates tests at once (``block_overlap``)


cdef inline Py_ssize_t n_words(Py_ssize_t n_tokens) noexcept nogil:
    return (n_tokens + 31) >> 5


cdef inline word_t block_overlap(const word_t* a, const word_t* b, Py_ssize_t start,
                                 Py_ssize_t end) noexcept nogil:
    """The OR of ``a[i] & b[i]`` over words [start, end): zero when the two
    bitsets share no token there.  A loop without a branch, which the compiler
    vectorizes: a pass over a mask's few candidates tests ``BLOCK_WORDS`` words
    at once and skips the empty blocks (a word-at-a-time loop with a branch per
    word ran at a third of this speed over 4,000-word bitsets)."""
    cdef word_t any_common = 0
    cdef Py_ssize_t i
    for i in range(start, end):
        any_common |= a[i] & b[i]
    return any_common


cdef inline void bitset_add(word_t* bits, token_id_t token_id) noexcept nogil:
    bits[token_id >> 5] |= (<word_t>1) << (token_id & 31)


cdef inline bint bitset_has(const word_t* bits, token_id_t token_id) noexcept nogil:
    return (bits[token_id >> 5] >> (token_id & 31)) & 1


cdef inline void bitset_add_ids(word_t* bits, const token_id_t[::1] token_ids) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(token_ids.shape[0]):
        bitset_add(bits, token_ids[i])


cdef inline Py_ssize_t bitset_ids_into(const word_t* bits, Py_ssize_t n_bit_words, Py_ssize_t limit,
                                       token_id_t* ids, Py_ssize_t capacity) noexcept nogil:
    """Write the ids set in ``bits`` below ``limit`` to ``ids``, ascending, at most
    ``capacity`` of them; returns how many (count-trailing-zeros, a word at a time)."""
    cdef Py_ssize_t i, token, n = 0
    cdef word_t word
    for i in range(n_bit_words):
        word = bits[i]
        while word:
            token = (i << 5) + __builtin_ctz(word)
            if token >= limit or n >= capacity:
                return n
            ids[n] = <token_id_t> token
            n += 1
            word &= word - 1
    return n


cdef inline bint byte_set_has(const uint64_t* byte_set, uint8_t byte) noexcept nogil:
    return (byte_set[byte >> 6] >> (byte & 63)) & 1


cdef inline bint byte_set_within(const uint64_t* byte_set, const uint64_t* other) noexcept nogil:
    """Every byte of ``byte_set`` is in ``other``."""
    return not ((byte_set[0] & ~other[0]) | (byte_set[1] & ~other[1]) | (byte_set[2] & ~other[2])
                | (byte_set[3] & ~other[3]))


cdef inline int byte_set_members(const uint64_t* byte_set, uint8_t* out) noexcept nogil:
    """Write the bytes of a 256-bit set to ``out`` (at most 256) in
    ascending order; returns how many."""
    cdef int n = 0, word
    cdef uint64_t bits
    for word in range(4):
        bits = byte_set[word]
        while bits:
            out[n] = <uint8_t>(64 * word + __builtin_ctzll(bits))
            n += 1
            bits &= bits - 1
    return n


cdef inline int byte_set_count(const uint64_t* byte_set) noexcept nogil:
    return (__builtin_popcountll(byte_set[0]) + __builtin_popcountll(byte_set[1])
            + __builtin_popcountll(byte_set[2]) + __builtin_popcountll(byte_set[3]))


cdef inline bytes byte_set_to_bytes(const uint64_t* byte_set):
    """The 32-byte form of a byte set (whatever the machine's byte order)."""
    cdef uint8_t out[32]
    cdef int i
    for i in range(32):
        out[i] = <uint8_t>(byte_set[i >> 3] >> (8 * (i & 7)))
    return PyBytes_FromStringAndSize(<const char*>out, 32)
