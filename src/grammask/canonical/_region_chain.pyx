# cython: language_level=3
"""A pre-token region's match chain and its shortening, walked in C.

What it computes
----------------
``ChainTable.match_chain(region, cuts)`` and ``ChainTable.shorten(region,
cuts, short)`` are ``region_chain.match_chain`` and ``region_chain.shorten``
(see that module for what a chain is and why regions of equal chains give
every token the same verdict) on the pattern's automaton table, with the
region held as two int arrays (code points and their class ids) and the cuts
as two more (offsets, pair verdicts), so the dozens of trial deletions a
shortening makes cost table walks and ``memmove`` instead of Python slices,
tuples and dicts.  ``ChainTable.trimmed(region, cuts, short)`` is
``PretokenizedBPE._trimmed`` without a partial character in one call: the
region's prefix up to its common boundary dropped (the boundary from
``_region_scan.ScanTable.common_boundary``), then shortened when longer than
``short``.  The filter trims, and past ``_SHORTEN_FROM`` characters shortens,
the region after every token it is asked about (the canonical lookahead's
candidates in whitespace and letter runs: a few thousand new regions per
hundred generations).

Layout
------
Automaton (``PretokenMachine.table``): ``trans`` int32[states, classes] (-1:
every thread dead), ``matched`` uint8[states, classes] (the closure before
reading that class reached the match), start state 0; ``class_of``
int16[0x110000] per code point; ``covering``: the pattern matches at every
position where text remains (``PretokenMachine.covering``).  A chain level is
three ints: the automaton state where the level's walk stopped (-1: every
thread dead), whether every cut strictly inside the level holds (1/0), and
the pair verdict of the cut at its end (1 holds, 0 merges, 2 no cut).

Invariants
----------
The results equal the Python functions' on every input whose cut verdicts
are ``True`` or ``False`` (the filter's states hold no other); ``shorten``
and ``trimmed`` return None for any other verdict, and ``trimmed`` where the
table does not decide the trim (the caller takes the Python path).  The
same deletions are tried in the same order, so the output is the same
region, not just one of equal chain.  Work: one table walk per level per
trial; buffers of the region's length, allocated per call.

Seeds: docs/design.md section 5; Cox 2009 (docs/references.md) for the
leftmost-first automaton whose states the chain holds.
"""

from cpython.unicode cimport PyUnicode_4BYTE_KIND, PyUnicode_FromKindAndData
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memmove

from grammask.canonical._machine_run cimport resume_match


cdef struct Region:
    Py_UCS4* chars      # code points (class representatives), n of them
    int* classes        # class id of each
    int n
    int* cut_offsets    # ascending, strictly inside (0, n)
    unsigned char* cut_holds  # 1: BPE keeps the pair apart, 0: it merges
    int n_cuts


cdef int _chain(const int[:, ::1] trans, const unsigned char[:, ::1] matched, bint covering,
                const Region* region, int* levels) noexcept nogil:
    """The chain of ``region`` into ``levels`` (three ints per level); returns the
    number of levels, or -1 where ``match_chain`` gives None."""
    cdef int n = region.n, start = 0, position = 0, n_levels = 0, state, best, end, verdict
    cdef bint holds
    while start < n:
        best = resume_match(trans, matched, region.classes, n, start, 0, -1, &state)
        if best == start:
            return -1
        if best < 0:
            if state < 0 or not covering:
                return -1
            end = n
        else:
            end = best
        holds = True
        while position < region.n_cuts and region.cut_offsets[position] < end:
            if region.cut_offsets[position] > start and not region.cut_holds[position]:
                holds = False
            position += 1
        verdict = 2
        if position < region.n_cuts and region.cut_offsets[position] == end:
            verdict = region.cut_holds[position]
        levels[3 * n_levels] = state
        levels[3 * n_levels + 1] = holds
        levels[3 * n_levels + 2] = verdict
        n_levels += 1
        start = end
    return n_levels


cdef bint _same_chain(const int[:, ::1] trans, const unsigned char[:, ::1] matched, bint covering,
                      const Region* region, const int* target, int n_target, int* scratch) noexcept nogil:
    """``region``'s chain equals ``target`` (``n_target`` levels)."""
    cdef int n_levels = _chain(trans, matched, covering, region, scratch), k
    if n_levels != n_target:
        return False
    for k in range(3 * n_levels):
        if scratch[k] != target[k]:
            return False
    return True


cdef void _copy(Region* to, const Region* source) noexcept nogil:
    memcpy(to.chars, source.chars, source.n * sizeof(Py_UCS4))
    memcpy(to.classes, source.classes, source.n * sizeof(int))
    memcpy(to.cut_offsets, source.cut_offsets, source.n_cuts * sizeof(int))
    memcpy(to.cut_holds, source.cut_holds, source.n_cuts)
    to.n = source.n
    to.n_cuts = source.n_cuts


cdef bint _delete(Region* region, int start, int stop) noexcept nogil:
    """``region_chain._without`` in place: characters [start, stop) deleted (0 < start
    < stop < n), the cuts inside gone, the ones after moved back, the ones at
    ``start`` and ``stop`` merged; False (region left half-edited) when those two
    disagree."""
    cdef int width = stop - start, read, write = 0, offset
    cdef unsigned char verdict
    for read in range(region.n_cuts):
        offset = region.cut_offsets[read]
        verdict = region.cut_holds[read]
        if start < offset < stop:
            continue
        if offset >= stop:
            offset -= width
            if write and region.cut_offsets[write - 1] == offset:
                if region.cut_holds[write - 1] != verdict:
                    return False
                continue
        region.cut_offsets[write] = offset
        region.cut_holds[write] = verdict
        write += 1
    region.n_cuts = write
    memmove(region.chars + start, region.chars + stop, (region.n - stop) * sizeof(Py_UCS4))
    memmove(region.classes + start, region.classes + stop, (region.n - stop) * sizeof(int))
    region.n -= width
    return True


cdef bint _cut_runs(Region* region, int keep) noexcept nogil:
    """``region_chain._runs_cut`` in place: every run of one character longer than
    ``keep`` cut to its first character and its last ``keep - 1`` (never the last
    character), from the right; False when two merging cuts disagree."""
    cdef int index = region.n, start, stop
    while index > 0:
        start = index - 1
        while start > 0 and region.chars[start - 1] == region.chars[index - 1]:
            start -= 1
        stop = min(index - keep + 1, region.n - 1)
        if start + 1 < stop and not _delete(region, start + 1, stop):
            return False
        index = start
    return True


cdef void _shorten(const int[:, ::1] trans, const unsigned char[:, ::1] matched, bint covering,
                   Region* region, Region* trial, int short, int* target, int n_target,
                   int* scratch) noexcept nogil:
    """``region_chain.shorten``'s deletions on ``region`` (whose chain, ``n_target``
    levels, is ``target``), with ``trial`` as the buffer of each try."""
    cdef int keep, index = 1
    for keep in range(1, 4):
        _copy(trial, region)
        if (_cut_runs(trial, keep) and trial.n != region.n
                and _same_chain(trans, matched, covering, trial, target, n_target, scratch)):
            _copy(region, trial)
            break
    while region.n > short and index < region.n - 1:
        _copy(trial, region)
        if (_delete(trial, index, index + 1)
                and _same_chain(trans, matched, covering, trial, target, n_target, scratch)):
            _copy(region, trial)
        else:
            index += 1


cdef void _drop_prefix(Region* region, int cut) noexcept nogil:
    """The first ``cut`` characters (0 < cut <= n) dropped with the cuts at or before
    ``cut``; the other cuts shifted back."""
    cdef int read, write = 0
    for read in range(region.n_cuts):
        if region.cut_offsets[read] > cut:
            region.cut_offsets[write] = region.cut_offsets[read] - cut
            region.cut_holds[write] = region.cut_holds[read]
            write += 1
    region.n_cuts = write
    memmove(region.chars, region.chars + cut, (region.n - cut) * sizeof(Py_UCS4))
    memmove(region.classes, region.classes + cut, (region.n - cut) * sizeof(int))
    region.n -= cut


cdef int _allocate(Region* region, int n, int n_cuts) except -1:
    """Buffers for a region of up to ``n`` characters and ``n_cuts`` cuts (``_release`` frees them)."""
    region.chars = <Py_UCS4*> malloc((n + 1) * sizeof(Py_UCS4))
    region.classes = <int*> malloc((n + 1) * sizeof(int))
    region.cut_offsets = <int*> malloc((n_cuts + 1) * sizeof(int))
    region.cut_holds = <unsigned char*> malloc(n_cuts + 1)
    if region.chars == NULL or region.classes == NULL or region.cut_offsets == NULL or region.cut_holds == NULL:
        raise MemoryError()
    return 0


cdef void _release(Region* region) noexcept:
    free(region.chars)
    free(region.classes)
    free(region.cut_offsets)
    free(region.cut_holds)


cdef class ChainTable:
    """A pre-tokenizer automaton's table and the class of every code point, as typed
    views, for ``match_chain``, ``shorten`` and ``trimmed`` (see the module docstring);
    ``scan``: the same table's ``_region_scan.ScanTable`` (its ``common_boundary``)."""

    cdef const int[:, ::1] trans
    cdef const unsigned char[:, ::1] matched
    cdef const short[::1] class_of
    cdef bint covering
    cdef object scan

    def __init__(self, const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                 const short[::1] class_of, bint covering, scan):
        self.trans = trans
        self.matched = matched
        self.class_of = class_of
        self.covering = covering
        self.scan = scan

    cdef int _load(self, str text, tuple cuts, Region* region) except -2:
        """Fill ``region`` (buffers from ``_allocate``) from ``text`` and ``cuts``; returns
        0, or -1 when a cut verdict is neither True nor False."""
        cdef Py_ssize_t k = 0
        cdef Py_UCS4 char
        cdef object verdict
        for char in text:
            region.chars[k] = char
            region.classes[k] = self.class_of[char]
            k += 1
        region.n = <int> k
        region.n_cuts = <int> len(cuts)
        for k in range(region.n_cuts):
            region.cut_offsets[k] = cuts[k][0]
            verdict = cuts[k][1]
            if verdict is not True and verdict is not False:
                return -1
            region.cut_holds[k] = verdict is True
        return 0

    def match_chain(self, str region, tuple cuts):
        """``region_chain.match_chain`` on this table: a tuple of (state, holds, pair
        verdict at the end: True, False or None) per level, or None (also for a cut
        verdict neither True nor False)."""
        cdef int n = <int> len(region), n_levels, k
        cdef Region loaded
        cdef int* levels = <int*> malloc(3 * (n + 1) * sizeof(int))
        cdef list chain = []
        loaded.chars = NULL
        loaded.classes = NULL
        loaded.cut_offsets = NULL
        loaded.cut_holds = NULL
        try:
            if levels == NULL:
                raise MemoryError()
            _allocate(&loaded, n, <int> len(cuts))
            if self._load(region, cuts, &loaded) < 0:
                return None
            n_levels = _chain(self.trans, self.matched, self.covering, &loaded, levels)
            if n_levels < 0:
                return None
            for k in range(n_levels):
                chain.append((levels[3 * k], levels[3 * k + 1] == 1,
                              None if levels[3 * k + 2] == 2 else levels[3 * k + 2] == 1))
            return tuple(chain)
        finally:
            free(levels)
            _release(&loaded)

    def shorten(self, str region, tuple cuts, int short=4):
        """``region_chain.shorten`` on this table: (region, cuts) with the same chain and,
        where deletions reach it, at most ``short`` characters; the input itself when it
        has no chain or no deletion keeps it; None when a cut verdict is neither True
        nor False (the caller takes the Python path)."""
        return self._trim_and_shorten(region, cuts, 0, short, True)

    def trimmed(self, str region, tuple cuts, int short=4):
        """``PretokenizedBPE._trimmed``'s region and cuts for a region without a partial
        character: the prefix up to the region's ``ScanTable.common_boundary`` dropped
        (the cuts up to it with it, the others shifted), then ``shorten`` when more than
        ``short`` characters are left; None where the table does not decide the trim or
        a cut verdict is neither True nor False (the caller takes the Python path)."""
        cdef int cut = self.scan.common_boundary(region)
        if cut < 0:
            return None
        return self._trim_and_shorten(region, cuts, cut, short, False)

    cdef object _trim_and_shorten(self, str region, tuple cuts, int cut, int short, bint always):
        """(region, cuts) with the first ``cut`` characters dropped, then, when longer than
        ``short`` (or ``always``), shortened as ``region_chain.shorten`` does (the same
        chain and, where deletions reach it, at most ``short`` characters); the input
        itself when nothing changed; None when a cut verdict is neither True nor False."""
        cdef int n = <int> len(region), n_cuts = <int> len(cuts), n_target, k
        cdef Region current, trial
        cdef int* target = <int*> malloc(6 * (n + 1) * sizeof(int))
        cdef int* scratch = target + 3 * (n + 1)
        cdef list kept = []
        current.chars = trial.chars = NULL
        current.classes = trial.classes = NULL
        current.cut_offsets = trial.cut_offsets = NULL
        current.cut_holds = trial.cut_holds = NULL
        try:
            if target == NULL:
                raise MemoryError()
            _allocate(&current, n, n_cuts)
            _allocate(&trial, n, n_cuts)
            if self._load(region, cuts, &current) < 0:
                return None
            with nogil:
                if cut:
                    _drop_prefix(&current, cut)
                n_target = 0
                if always or current.n > short:
                    n_target = _chain(self.trans, self.matched, self.covering, &current, target)
                    if n_target >= 0:
                        _shorten(self.trans, self.matched, self.covering, &current, &trial, short,
                                 target, n_target, scratch)
            if current.n == n:
                return region, cuts
            for k in range(current.n_cuts):
                kept.append((current.cut_offsets[k], current.cut_holds[k] == 1))
            return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, current.chars, current.n), tuple(kept)
        finally:
            free(target)
            _release(&current)
            _release(&trial)
