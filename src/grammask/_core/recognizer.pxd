# cython: language_level=3
"""The byte-recognizer interface the token-trie walk talks to (llguidance's
toktrie idea): four ``nogil`` calls, so the mask walk works over the Earley
core, a single DFA or a test stub alike.  See docs/internals.md, "Byte
recognizers".
"""

from libc.stdint cimport uint8_t, uint64_t


cdef class ByteRecognizer:
    # Push one byte.  True: the byte extends a viable prefix and is now
    # consumed.  False: it does not, and the state is exactly as before.
    cdef bint try_push_byte(self, uint8_t byte) noexcept nogil
    # Undo the last n_bytes successful pushes (n_bytes <= pushes since the
    # state the caller wants back).
    cdef void pop_bytes(self, Py_ssize_t n_bytes) noexcept nogil
    # The bytes pushed so far form a complete sentence.
    cdef bint accepting(self) noexcept nogil
    # Writes the 256-bit set of bytes that try_push_byte would accept now:
    # bit (b & 63) of bitset4[b >> 6] is set iff byte b is pushable.
    cdef void allowed_bytes(self, uint64_t* bitset4) noexcept nogil
