# cython: language_level=3
"""The canonical lookahead's narrow-token test, shared by the trie walk, the
per-terminal token sets and the mask computer.

A token is *narrow* when the grammar allows at most ``NARROW_BYTE_LIMIT``
distinct bytes right after it, and no space unless the token itself ends in
whitespace (a keyword's interior, a fixed count of digits, a forced
separator, a whitespace run before structure).  Only there is the canonical
filter's verdict "allowed" likely to lead into a state where no canonical
token fits the grammar (a space after a non-space character starts a new
pre-token in every supported tokenizer), so only narrow tokens are
re-checked by the engine's canonical lookahead (``grammask.engine.lookahead``).
"""

from libc.stdint cimport uint8_t, uint64_t

from grammask._core.bitset cimport byte_set_count


cdef enum:
    NARROW_BYTE_LIMIT = 16


cdef inline bint is_space(uint8_t byte) noexcept nogil:
    return byte == 0x20 or (0x09 <= byte <= 0x0D)


cdef inline bint is_narrow(const uint64_t* next_byte_set, uint8_t last_byte) noexcept nogil:
    """The bytes allowed after a token ending in ``last_byte`` are few enough."""
    if (next_byte_set[0] >> 0x20) & 1 and not is_space(last_byte):
        return False
    return byte_set_count(next_byte_set) <= NARROW_BYTE_LIMIT
