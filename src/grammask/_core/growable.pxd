# cython: language_level=3
"""A growable int32 array for the core's build loops (``nogil``).

``data[0:size]`` are the values, ``capacity`` the allocated length; the
owner frees ``data``.  ``grow_push`` doubles the capacity when full and
returns False, leaving the array as it was, when memory runs out.
"""

from libc.stdint cimport int32_t
from libc.stdlib cimport realloc
from cpython.bytes cimport PyBytes_FromStringAndSize


cdef struct Growable:
    int32_t* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef inline Growable growable_empty() noexcept nogil:
    cdef Growable array
    array.data = NULL
    array.size = 0
    array.capacity = 0
    return array


cdef inline bint grow_push(Growable* array, int32_t value) noexcept nogil:
    cdef int32_t* bigger
    cdef Py_ssize_t capacity
    if array.size == array.capacity:
        capacity = array.capacity * 2 if array.capacity else 64
        bigger = <int32_t*>realloc(array.data, capacity * sizeof(int32_t))
        if not bigger:
            return False
        array.data = bigger
        array.capacity = capacity
    array.data[array.size] = value
    array.size += 1
    return True


cdef inline bytes growable_bytes(const Growable* array):
    """The values as native-order int32 bytes (``np.frombuffer(..., np.int32)``)."""
    if array.size == 0:
        return b""
    return PyBytes_FromStringAndSize(<const char*>array.data, array.size * sizeof(int32_t))
