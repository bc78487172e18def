# cython: language_level=3
"""Token bitsets to logits (see logits.pyx)."""

from grammask._core.types cimport word_t


ctypedef fused real_t:
    float
    double


cdef void mask_row(char* row, Py_ssize_t stride, Py_ssize_t n, const word_t* bits,
                   Py_ssize_t n_words, Py_ssize_t vocab_size, real_t minus_inf) noexcept nogil
