# cython: language_level=3
"""Base class of byte recognizers (interface in recognizer.pxd).

The base class recognizes the empty language: every push fails, nothing is
accepting, no byte is allowed.  Subclasses (``grammask._core.earley``) override
all four calls.
"""

from libc.stdint cimport uint8_t, uint64_t


cdef class ByteRecognizer:
    cdef bint try_push_byte(self, uint8_t byte) noexcept nogil:
        return False

    cdef void pop_bytes(self, Py_ssize_t n_bytes) noexcept nogil:
        pass

    cdef bint accepting(self) noexcept nogil:
        return False

    cdef void allowed_bytes(self, uint64_t* bitset4) noexcept nogil:
        bitset4[0] = 0
        bitset4[1] = 0
        bitset4[2] = 0
        bitset4[3] = 0
