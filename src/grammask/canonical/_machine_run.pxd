# cython: language_level=3
"""The leftmost-first match walk over a pre-token pattern's automaton table,
shared by ``_region_scan`` and ``_region_chain``.

What it computes: ``resume_match`` continues a match at ``pos`` in
``state`` (best end so far ``best``, -1: none) over class ids up to
``limit``; returns the best match end and puts in ``alive[0]`` the state at
``limit`` if threads still run there (the match is not decided yet), else
-1.  Layout: ``trans`` int32[states, classes] (-1: every thread dead),
``matched`` uint8[states, classes] (the closure before reading that class
reached the match), as ``PretokenMachine.table`` gives them.  Source: Cox
2009 (docs/references.md), the leftmost-first automaton.
"""


cdef inline int resume_match(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                             const int* text, int limit, int pos, int state, int best,
                             int* alive) noexcept nogil:
    cdef int c
    while pos < limit:
        c = text[pos]
        if matched[state, c]:
            best = pos
        state = trans[state, c]
        pos += 1
        if state < 0:
            alive[0] = -1
            return best
    alive[0] = state
    return best
