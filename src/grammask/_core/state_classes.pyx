"""Moore's partition refinement of a DFA's states, one row per input length.

What it computes
    ``state_classes_by_depth(transitions, accepting, depth)``: row d labels
    the states so that two states have equal labels iff they agree on
    dead-ness (state 0) and acceptance after every input of at most d
    bytes.  ``mask_computer`` keys token sets by row D (D = the longest
    token plus one: states that agree that far have the same sets) and
    keeps some rows for derived sets (docs/performance.md, sections 5
    and 7).

Data layout
    One ``Refinement`` per call: the partition in Valmari's layout (the
    states of block b are ``elems[start[b]:end[b]]``, ``loc`` inverts
    ``elems``, ``block`` names each state's block), the inverse transitions
    as offsets and sources, the states moved by the last round, and
    scratch arrays sized by the number of states (all malloc'ed, freed
    before returning).  Output: int32[depth + 1, n_states].

Invariants
    Block ids persist across rounds (a split block keeps its id for the
    group of its untouched states, or its largest group), so "moved"
    means "changed block"; a round only re-examines the predecessors of
    moved states, and every row equals the textbook round over all states
    (labels renumbered by first appearance; tests/test_token_sets.py).

Source
    E. F. Moore, Gedanken-experiments on sequential machines (1956);
    A. Valmari, Fast brief practical DFA minimization, IPL 112 (2012) for
    the partition layout.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy as np


def state_classes_by_depth(transitions, accepting, Py_ssize_t depth):
    """Row d (0 <= d <= ``depth``) labels the states of a DFA so that two
    states have equal labels iff they agree on dead-ness (state 0) and
    acceptance after every input of at most d bytes: Moore's partition
    refinement, one round per row (rows repeat once it is stable), labels
    numbered by first appearance (the dead state keeps 0).  Returns
    int32[depth + 1, n_states].

    A round only re-examines the states with a successor that changed
    block in the round before (``_refine_round``): the others keep their
    block together, so a counted product (``X{0,255}`` beside a pattern),
    whose rounds each split off the states one count from the bound, costs
    about its frontier per round instead of every state times every class."""
    cdef const int32_t[:, ::1] table = np.ascontiguousarray(transitions, dtype=np.int32)
    cdef Py_ssize_t n_states = table.shape[0], n_classes = table.shape[1]
    rows = np.empty((depth + 1, n_states), dtype=np.int32)
    cdef int32_t[:, ::1] out = rows
    first = np.asarray(accepting).astype(np.int32) + 1
    first[0] = 0
    rows[0] = first
    cdef Refinement r
    cdef Py_ssize_t d
    cdef bint stable = False
    if n_states == 0:
        return rows
    if not _refinement_init(&r, &table[0, 0], n_states, n_classes, &out[0, 0]):
        _refinement_free(&r)
        raise MemoryError()
    with nogil:
        for d in range(1, depth + 1):
            if not stable:
                stable = _refine_round(&r, d == 1)
            if stable:
                memcpy(&out[d, 0], &out[d - 1, 0], n_states * sizeof(int32_t))
            else:
                _label_row(&r, &out[d, 0])
    _refinement_free(&r)
    return rows


cdef struct Refinement:
    # The partition (Valmari's layout): the states of block b are
    # elems[start[b]:end[b]], loc[s] is s's index in elems, block[s] its block.
    const int32_t* table
    Py_ssize_t n_states, n_classes, n_blocks
    int32_t* elems
    int32_t* loc
    int32_t* block
    int32_t* start
    int32_t* end
    # predecessors of state t: sources[offsets[t]:offsets[t + 1]]
    int32_t* offsets
    int32_t* sources
    # states that changed block in the last round, and their count
    int32_t* moved
    Py_ssize_t n_moved
    # scratch: touched states, their count per block, affected blocks,
    # per-state group, per-group representative and size, a stamp per
    # state, the signature table's slots and their generation, new labels
    int32_t* touched
    int32_t* n_touched_in
    int32_t* affected
    int32_t* group
    int32_t* group_rep
    int32_t* group_size
    int32_t* buffer
    int64_t* stamp
    int64_t round_stamp
    int32_t* slot
    int64_t* slot_gen
    int64_t gen
    Py_ssize_t n_slots
    int32_t* label_of
    int64_t* label_stamp


cdef bint _refinement_init(Refinement* r, const int32_t* table, Py_ssize_t n, Py_ssize_t k,
                           const int32_t* row0) noexcept:
    """The partition of row 0 (dead, rejecting, accepting) and the inverse
    transitions; False when memory runs out."""
    cdef Py_ssize_t s, c, b, i
    memset(r, 0, sizeof(Refinement))
    r.table, r.n_states, r.n_classes = table, n, k
    r.n_slots = 1
    while r.n_slots < 2 * n + 2:
        r.n_slots *= 2
    cdef Py_ssize_t m = n + 1
    r.elems = <int32_t*>malloc(m * sizeof(int32_t))
    r.loc = <int32_t*>malloc(m * sizeof(int32_t))
    r.block = <int32_t*>malloc(m * sizeof(int32_t))
    r.start = <int32_t*>malloc(m * sizeof(int32_t))
    r.end = <int32_t*>malloc(m * sizeof(int32_t))
    r.offsets = <int32_t*>calloc(m + 1, sizeof(int32_t))
    r.sources = <int32_t*>malloc((n * k + 1) * sizeof(int32_t))
    r.moved = <int32_t*>malloc(m * sizeof(int32_t))
    r.touched = <int32_t*>malloc(m * sizeof(int32_t))
    r.n_touched_in = <int32_t*>calloc(m, sizeof(int32_t))
    r.affected = <int32_t*>malloc(m * sizeof(int32_t))
    r.group = <int32_t*>malloc(m * sizeof(int32_t))
    r.group_rep = <int32_t*>malloc(m * sizeof(int32_t))
    r.group_size = <int32_t*>malloc(m * sizeof(int32_t))
    r.buffer = <int32_t*>malloc(m * sizeof(int32_t))
    r.stamp = <int64_t*>calloc(m, sizeof(int64_t))
    r.slot = <int32_t*>malloc(r.n_slots * sizeof(int32_t))
    r.slot_gen = <int64_t*>calloc(r.n_slots, sizeof(int64_t))
    r.label_of = <int32_t*>malloc(m * sizeof(int32_t))
    r.label_stamp = <int64_t*>calloc(m, sizeof(int64_t))
    if (r.elems == NULL or r.loc == NULL or r.block == NULL or r.start == NULL or r.end == NULL
            or r.offsets == NULL or r.sources == NULL or r.moved == NULL or r.touched == NULL
            or r.n_touched_in == NULL or r.affected == NULL or r.group == NULL
            or r.group_rep == NULL or r.group_size == NULL or r.buffer == NULL or r.stamp == NULL
            or r.slot == NULL or r.slot_gen == NULL or r.label_of == NULL
            or r.label_stamp == NULL):
        return False
    # blocks of row 0 (labels 0, 1, 2), states in order within each
    cdef int32_t counts[3]
    counts[0] = counts[1] = counts[2] = 0
    for s in range(n):
        counts[row0[s]] += 1
    i = 0
    for b in range(3):
        if counts[b]:
            r.start[r.n_blocks] = <int32_t>i
            i += counts[b]
            r.end[r.n_blocks] = <int32_t>i
            counts[b] = <int32_t>r.n_blocks
            r.n_blocks += 1
    for s in range(n):
        b = counts[row0[s]]
        r.block[s] = <int32_t>b
    for b in range(r.n_blocks):
        r.group_size[b] = r.start[b]
    for s in range(n):
        b = r.block[s]
        r.elems[r.group_size[b]] = <int32_t>s
        r.loc[s] = r.group_size[b]
        r.group_size[b] += 1
    for s in range(n):
        for c in range(k):
            r.offsets[table[s * k + c] + 1] += 1
    for s in range(n):
        r.offsets[s + 1] += r.offsets[s]
    for s in range(n):
        r.group_size[s] = r.offsets[s]
    for s in range(n):
        for c in range(k):
            i = table[s * k + c]
            r.sources[r.group_size[i]] = <int32_t>s
            r.group_size[i] += 1
    return True


cdef void _refinement_free(Refinement* r) noexcept:
    free(r.elems); free(r.loc); free(r.block); free(r.start); free(r.end)
    free(r.offsets); free(r.sources); free(r.moved); free(r.touched); free(r.n_touched_in)
    free(r.affected); free(r.group); free(r.group_rep); free(r.group_size); free(r.buffer)
    free(r.stamp); free(r.slot); free(r.slot_gen); free(r.label_of); free(r.label_stamp)


cdef inline uint64_t _signature_hash(Refinement* r, Py_ssize_t s) noexcept nogil:
    cdef uint64_t key = 0x9E3779B97F4A7C15ULL
    cdef const int32_t* row = r.table + s * r.n_classes
    cdef Py_ssize_t c
    for c in range(r.n_classes):
        key = (key ^ <uint64_t>r.block[row[c]]) * 0xBF58476D1CE4E5B9ULL
    return key ^ (key >> 31)


cdef inline bint _same_signature(Refinement* r, Py_ssize_t s, Py_ssize_t t) noexcept nogil:
    cdef const int32_t* a = r.table + s * r.n_classes
    cdef const int32_t* b = r.table + t * r.n_classes
    cdef Py_ssize_t c
    for c in range(r.n_classes):
        if r.block[a[c]] != r.block[b[c]]:
            return False
    return True


cdef inline int32_t _group_of(Refinement* r, Py_ssize_t s, int32_t* n_groups) noexcept nogil:
    """The group of ``s``'s signature in the current block (a new one when
    no member examined so far has it)."""
    cdef Py_ssize_t position = <Py_ssize_t>(_signature_hash(r, s) & <uint64_t>(r.n_slots - 1))
    cdef int32_t g
    while r.slot_gen[position] == r.gen:
        g = r.slot[position]
        if _same_signature(r, r.group_rep[g], s):
            return g
        position = (position + 1) & (r.n_slots - 1)
    g = n_groups[0]
    n_groups[0] += 1
    r.slot_gen[position] = r.gen
    r.slot[position] = g
    r.group_rep[g] = <int32_t>s
    r.group_size[g] = 0
    return g


cdef bint _refine_round(Refinement* r, bint everything) noexcept nogil:
    """One Moore round on the partition (block ids persist: the group of a
    split block that keeps its untouched states, or its largest group,
    keeps the id).  Only the predecessors of the states moved in the last
    round can change block (every state on the first round, ``everything``):
    members of a block whose successors all kept their blocks had equal
    signatures and still do.  Returns True when no state moved (stable)."""
    cdef Py_ssize_t n_touched = 0, n_affected = 0, i, j, p, b, m, size, first, kept_group
    cdef Py_ssize_t n_moved = 0
    cdef int32_t n_groups, g, s, t
    r.round_stamp += 1
    if everything:
        for i in range(r.n_states):
            r.touched[n_touched] = <int32_t>i
            n_touched += 1
    else:
        for i in range(r.n_moved):
            t = r.moved[i]
            for j in range(r.offsets[t], r.offsets[t + 1]):
                s = r.sources[j]
                if r.stamp[s] != r.round_stamp:
                    r.stamp[s] = r.round_stamp
                    r.touched[n_touched] = s
                    n_touched += 1
    # move each block's touched states to the front of its range
    for i in range(n_touched):
        s = r.touched[i]
        b = r.block[s]
        if r.n_touched_in[b] == 0:
            r.affected[n_affected] = <int32_t>b
            n_affected += 1
        j = r.start[b] + r.n_touched_in[b]
        t = r.elems[j]
        r.elems[j], r.elems[r.loc[s]] = s, t
        r.loc[t], r.loc[s] = r.loc[s], <int32_t>j
        r.n_touched_in[b] += 1
    for i in range(n_affected):
        b = r.affected[i]
        m = r.n_touched_in[b]
        r.n_touched_in[b] = 0
        first = r.start[b]
        size = r.end[b] - first
        r.gen += 1
        n_groups = 0
        if m < size:
            _group_of(r, r.elems[first + m], &n_groups)  # group 0: the untouched states
            r.group_size[0] = <int32_t>(size - m)
        for j in range(first, first + m):
            g = _group_of(r, r.elems[j], &n_groups)
            r.group[r.elems[j]] = g
            r.group_size[g] += 1
        if n_groups == 1:
            continue
        kept_group = 0
        if m == size:
            for g in range(1, n_groups):
                if r.group_size[g] > r.group_size[kept_group]:
                    kept_group = g
        # the touched range by group, the kept group last (beside the untouched
        # states); group g > kept gets a new block id
        for g in range(n_groups):
            r.group_rep[g] = 0  # now: the next free index of the group in buffer
        p = 0
        for g in range(n_groups):
            if g != kept_group:
                r.group_rep[g] = <int32_t>p
                p += r.group_size[g]
        r.group_rep[kept_group] = <int32_t>p
        for j in range(first, first + m):
            s = r.elems[j]
            g = r.group[s]
            r.buffer[r.group_rep[g]] = s
            r.group_rep[g] += 1
        p = 0
        for g in range(n_groups):
            if g == kept_group:
                continue
            r.start[r.n_blocks] = <int32_t>(first + p)
            r.end[r.n_blocks] = <int32_t>(first + p + r.group_size[g])
            for j in range(p, p + r.group_size[g]):
                s = r.buffer[j]
                r.group[s] = <int32_t>r.n_blocks  # its new block, set after every block is done
                r.moved[n_moved] = s
                n_moved += 1
            p += r.group_size[g]
            r.n_blocks += 1
        for j in range(m):
            s = r.buffer[j]
            r.elems[first + j] = s
            r.loc[s] = <int32_t>(first + j)
        r.start[b] = <int32_t>(first + p)
    for i in range(n_moved):
        s = r.moved[i]
        r.block[s] = r.group[s]
    r.n_moved = n_moved
    return n_moved == 0


cdef void _label_row(Refinement* r, int32_t* row) noexcept nogil:
    """The partition as labels numbered by first appearance in state order."""
    cdef Py_ssize_t s
    cdef int32_t b, n_labels = 0
    r.round_stamp += 1
    for s in range(r.n_states):
        b = r.block[s]
        if r.label_stamp[b] != r.round_stamp:
            r.label_stamp[b] = r.round_stamp
            r.label_of[b] = n_labels
            n_labels += 1
        row[s] = r.label_of[b]
