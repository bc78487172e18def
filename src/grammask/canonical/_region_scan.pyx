# cython: language_level=3
"""Token-shape verdicts after a pre-token region, from the pattern's automaton table.

What it computes
----------------
``shape_group_verdicts`` gives, for every group of token shapes (a class
string S, maybe ending in an incomplete character), the canonical filter's
verdict after a region: 0 forbidden, 1 allowed iff BPE keeps the pair at the
token's start apart, 2 allowed.  It is ``PretokenizedBPE._verdict`` (regex
scans of region + S + probe) computed from the region's
``PretokenMachine`` signature instead: the scan of the pattern's matches runs
on the automaton's table over T + S + probe, where T is the region's text
after the end e of the best match found so far, and the first match resumes
in the automaton state the region left it in, with its best end at e.

Per probe (END, or one character of each class): the boundaries are the
ends of consecutive matches (each the last offset where the automaton
reached a match before its threads died or the text ended); the scan stops
at the first boundary at or past the end of S or at the first boundary that
is not a token cut.  The probe is feasible if no boundary fell inside a
token (inside S; at S's end when S ends in an incomplete character that is
part of a longer body), every cut whose pair verdict is "merge" is a
boundary, and then the start cut (variable verdict) either is a boundary
(verdict 2) or not (verdict 1).  The best probe wins.  The matches that end
inside T + S do not depend on the probe: they are scanned once per group,
and each probe resumes the match still running at S's end.  A position
where text remains and no match starts (impossible for a pattern
``PretokenMachine.covering`` accepts) gives -1: the caller scans instead.

Layout
------
Automaton (``PretokenMachine.table``): ``trans`` int32[states, classes]
(-1: every thread dead), ``matched`` uint8[states, classes] (the closure
before reading that class reached the match), ``end_match`` uint8[states]
(the closure at the end of the text did), start state 0.  Groups: class ids
of S jagged in ``group_classes`` / ``group_offsets``; probes jagged in
``probe_classes`` / ``probe_offsets`` (-1 = end of text);
``end_boundary_ok`` (0 when a boundary at S's end splits its incomplete
character from its body).  Region: ``tail`` (class ids of T), the state
``sigma`` after the region, the cuts from e on as offsets from e
(``cut_offsets``, ascending) with ``cut_holds`` (1: BPE keeps the pair
apart, 0: it merges), the start cut at offset len(T).

``ScanTable`` holds the table, the class of every code point and the
probes as typed views once; its ``run`` is ``PretokenMachine.run`` on the
table (the state after a text and its best match end), its
``common_boundary`` and ``complete_verdict`` are ``PretokenizedBPE``'s
region trim (the last boundary every probe puts inside a region) and its
end-of-text check on the same table (the region's consecutive matches run
in C over its class ids, and only the match still running at the region's
end reads a probe), and its ``complete_after`` is that check after each of many tokens appended to one
region (trim included; the canonical lookahead's candidates in trailing
whitespace), its ``fresh_first_classes`` says which first
characters of a token fix a pre-token boundary at the region's end for
every probe (``PretokenizedBPE.fresh_words``: the boundaries up to the
region's end, per probe, compared).

Invariants
----------
Exact against ``_verdict`` for regions whose every cut before e holds (the
caller's precondition); tested on random regions of real tokenizers.  Work
per group: len(T) + len(S) table steps plus a few per probe; one buffer
of ``_MAX_TEXT`` ids per call (a longer group gives -1).  The trim and the
end check take len(region) table steps plus one per probe; they give -1
where the table does not decide (an empty match or no match where text
remains) and the caller scans with the pattern instead.

Seeds: docs/design.md section 5; Tran-Thien 2024 (docs/references.md) for the
pre-tokenizer's part in canonicality; Cox 2009 (docs/references.md) for the
leftmost-first automaton.
"""

cimport cython
from libc.stdlib cimport free, malloc

from grammask.canonical._machine_run cimport resume_match


cdef int _MAX_TEXT = 512


cdef struct Chain:
    int merged_seen           # cuts with a merged pair found at boundaries
    bint start_is_boundary    # the token's start cut is a boundary


cdef inline int _take_boundary(Chain* chain, int boundary, int n_region, int start_cut,
                               const int[::1] cut_offsets, const unsigned char[::1] cut_holds,
                               bint end_boundary_ok) noexcept nogil:
    """Record a boundary: 0 the probe is infeasible, 1 go on scanning, 2 the scan is done."""
    cdef int k
    if boundary >= n_region:
        if boundary == n_region:
            if not end_boundary_ok:
                return 0
            if boundary == start_cut:
                chain.start_is_boundary = True
        return 2
    if boundary == start_cut:
        chain.start_is_boundary = True
    else:
        for k in range(cut_offsets.shape[0]):
            if cut_offsets[k] == boundary:
                if not cut_holds[k]:
                    chain.merged_seen += 1
                break
        else:
            return 0
    return 1


cdef inline int _resume(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                        const unsigned char[::1] end_match, const int* text, int length,
                        int pos, int state, int best) noexcept nogil:
    """End of the match running at ``pos`` in ``state`` once the rest of the text is read."""
    cdef int alive
    best = resume_match(trans, matched, text, length, pos, state, best, &alive)
    if alive >= 0 and end_match[alive]:
        best = length
    return best


cdef inline int _chain_verdict(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                               const unsigned char[::1] end_match, const int* text, int length,
                               Chain chain, int boundary, int n_region, int start_cut,
                               const int[::1] cut_offsets, const unsigned char[::1] cut_holds,
                               int n_merged, bint end_boundary_ok) noexcept nogil:
    """One probe's verdict, from the end ``boundary`` of the match the probe decided on
    (-1: a position where text remains and no match starts; not a covering pattern)."""
    cdef int status, position
    while True:
        status = _take_boundary(&chain, boundary, n_region, start_cut, cut_offsets, cut_holds,
                                end_boundary_ok)
        if status == 0:
            return 0
        if status == 2:
            break
        position = boundary
        boundary = _resume(trans, matched, end_match, text, length, position, 0, -1)
        if boundary <= position:
            return -1
    if chain.merged_seen < n_merged:
        return 0
    return 2 if chain.start_is_boundary else 1


cdef inline int _group_verdict(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                               const unsigned char[::1] end_match, int* text, int n_region,
                               int sigma, int start_cut, const int[::1] cut_offsets,
                               const unsigned char[::1] cut_holds, int n_merged,
                               const int[::1] probe_classes, long long probe_start,
                               long long probe_end, bint end_boundary_ok) noexcept nogil:
    """The best verdict over a group's probes (-1: see ``_chain_verdict``).  The matches
    that end inside T + S do not depend on the probe: they are scanned once, and each probe
    resumes the match still running at S's end."""
    cdef Chain chain
    cdef int alive, best, position, state, length, verdict, best_verdict = 0
    cdef long long p
    chain.merged_seen = 0
    chain.start_is_boundary = False
    # the region's match resumes after T in state sigma, its best end at e (offset 0)
    position, state, best = start_cut, sigma, 0
    while True:
        best = resume_match(trans, matched, text, n_region, position, state, best, &alive)
        if alive >= 0:
            break
        if state == 0 and best <= position:
            return -1
        if _take_boundary(&chain, best, n_region, start_cut, cut_offsets, cut_holds,
                          end_boundary_ok) == 0:
            return 0
        position, state, best = best, 0, -1
    for p in range(probe_start, probe_end):
        length = n_region
        if probe_classes[p] >= 0:
            text[length] = probe_classes[p]
            length += 1
        verdict = _chain_verdict(trans, matched, end_match, text, length, chain,
                                 _resume(trans, matched, end_match, text, length, n_region, alive, best),
                                 n_region, start_cut, cut_offsets, cut_holds, n_merged, end_boundary_ok)
        if verdict < 0:
            return -1
        if verdict > best_verdict:
            best_verdict = verdict
            if verdict == 2:
                break
    return best_verdict


@cython.boundscheck(False)
@cython.wraparound(False)
def shape_group_verdicts(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                         const unsigned char[::1] end_match, int sigma, const int[::1] tail,
                         const int[::1] cut_offsets, const unsigned char[::1] cut_holds,
                         const int[::1] group_classes, const long long[::1] group_offsets,
                         const int[::1] probe_classes, const long long[::1] probe_offsets,
                         const unsigned char[::1] end_boundary_ok, signed char[::1] out):
    """Fill ``out[g]`` with group g's verdict after the region; see the module docstring."""
    cdef Py_ssize_t n_groups = out.shape[0], g, p
    cdef int n_tail = tail.shape[0], n_shape, best_verdict, k, n_merged = 0
    cdef int* text
    if n_tail + 1 > _MAX_TEXT:
        out[:] = -1  # the region's text after its best match is too long for the buffer
        return
    text = <int*> malloc(_MAX_TEXT * sizeof(int))
    if text == NULL:
        raise MemoryError()
    for k in range(cut_holds.shape[0]):
        if not cut_holds[k]:
            n_merged += 1
    try:
        with nogil:
            for k in range(n_tail):
                text[k] = tail[k]
            for g in range(n_groups):
                n_shape = <int> (group_offsets[g + 1] - group_offsets[g])
                if n_tail + n_shape + 1 > _MAX_TEXT:
                    out[g] = -1  # too long for the buffer: the caller scans it
                    continue
                for k in range(n_shape):
                    text[n_tail + k] = group_classes[group_offsets[g] + k]
                best_verdict = _group_verdict(trans, matched, end_match, text, n_tail + n_shape, sigma,
                                              n_tail, cut_offsets, cut_holds, n_merged, probe_classes,
                                              probe_offsets[g], probe_offsets[g + 1], end_boundary_ok[g])
                out[g] = best_verdict
    finally:
        free(text)


cdef int* _region_classes(str region, const short[::1] class_of, Py_ssize_t room=1) except NULL:
    """The class ids of ``region``'s characters in a new buffer with ``room`` more ints
    after them (the caller frees it)."""
    cdef Py_ssize_t n = len(region), k = 0
    cdef Py_UCS4 char
    cdef int* text = <int*> malloc((n + room) * sizeof(int))
    if text == NULL:
        raise MemoryError()
    for char in region:
        text[k] = class_of[char]
        k += 1
    return text


cdef int _common_boundary(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                          const unsigned char[::1] end_match, const int* text, int n,
                          const int[::1] probes, int cut, int resume_pos, int resume_state,
                          int resume_best) noexcept nogil:
    """``common_boundary`` on the region's class ids, its matches chained from
    ``cut`` (0, or where ``_decided_matches`` stopped on a prefix of the text), the
    first one resumed at ``resume_pos`` in ``resume_state`` with best end
    ``resume_best`` when ``resume_pos > cut`` (``_decided_matches`` walked it that
    far)."""
    cdef int best, alive, agreed, end, state, p, probe
    while cut < n:
        if resume_pos > cut:
            best = resume_match(trans, matched, text, n, resume_pos, resume_state, resume_best, &alive)
            resume_pos = 0
        else:
            best = resume_match(trans, matched, text, n, cut, 0, -1, &alive)
        if alive < 0:
            if best <= cut:
                return -1
            cut = best
            continue
        agreed = -2
        for p in range(probes.shape[0]):
            probe = probes[p]
            end = best
            if probe < 0:
                if end_match[alive]:
                    end = n
            else:
                if matched[alive, probe]:
                    end = n
                state = trans[alive, probe]
                if state >= 0 and end_match[state]:
                    end = n + 1
            if agreed == -2:
                agreed = end
            elif end != agreed:
                return cut
        if agreed <= cut or agreed > n:
            return cut
        cut = agreed
    return cut


cdef int _complete_verdict(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                           const unsigned char[::1] end_match, const int* text, int n,
                           const int* cut_offsets, const unsigned char* cut_holds,
                           int n_cuts, int position, int k, int resume_pos, int resume_state,
                           int resume_best) noexcept nogil:
    """``complete_verdict`` on the region's class ids and the cuts as two arrays, its
    matches chained from ``position`` with the cuts before ``k`` checked (0 and 0, or
    where ``_decided_matches`` stopped on a prefix of the text), the first one resumed
    as in ``_common_boundary``."""
    cdef int best
    while position < n:
        if resume_pos > position:
            best = _resume(trans, matched, end_match, text, n, resume_pos, resume_state, resume_best)
            resume_pos = 0
        else:
            best = _resume(trans, matched, end_match, text, n, position, 0, -1)
        if best <= position:
            return -1
        if best < n:
            while k < n_cuts and cut_offsets[k] < best:
                if not cut_holds[k]:
                    return 0
                k += 1
            if k == n_cuts or cut_offsets[k] != best:
                return 0
            k += 1
        position = best
    while k < n_cuts:
        if not cut_holds[k]:
            return 0
        k += 1
    return 1


cdef int _decided_matches(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                          const int* text, int n, const int* cut_offsets, const unsigned char* cut_holds,
                          int n_cuts, bint check_cuts, int* k_out, int* resume) noexcept nogil:
    """The start of the match still running at the end of ``text[:n]`` after the
    matches that end inside it (their threads die before its end, so any text
    appended leaves them as they are): where ``_common_boundary`` and
    ``_complete_verdict`` chained from 0 over a longer text reach the same state;
    ``resume`` gets (n, the automaton state there, its best end so far) of that
    running match (n = 0: none), for them to resume it after ``text[:n]``.
    With ``check_cuts``, ``k_out[0]`` is the cuts passed as ``_complete_verdict``
    checks them, and -1 or -2 is returned when that check already gives -1 or 0
    on these matches (the cuts at or past ``n`` are not read)."""
    cdef int position = 0, best, alive, k = 0
    resume[0] = 0
    while position < n:
        best = resume_match(trans, matched, text, n, position, 0, -1, &alive)
        if alive >= 0:
            resume[0] = n
            resume[1] = alive
            resume[2] = best
            break
        if best <= position:
            return -1 if check_cuts else position
        if check_cuts:
            while k < n_cuts and cut_offsets[k] < best:
                if not cut_holds[k]:
                    return -2
                k += 1
            if k == n_cuts or cut_offsets[k] != best:
                return -2
            k += 1
        position = best
    k_out[0] = k
    return position


cdef int _fresh_resumed(const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                        const unsigned char[::1] end_match, int* text, int n,
                        const int[::1] probes, int start, int n_decided, int run_state,
                        int run_best, int* reference, int* ends) noexcept nogil:
    """``ScanTable.fresh_first_classes``' verdict for the text ``text[:n + 1]`` (the region
    and a first character): 2, 1, 0, or -1 undecided.  The region's ``n_decided``
    matches that end before its end whatever follows (the last at ``start``) are the
    same for every probe; the match running from ``start`` at the region's end (state
    ``run_state``, best end ``run_best``; ``start == n``: none, a boundary at the end is
    decided) is resumed over the first character and each probe, and the matches after
    it inside the region scanned, their ends up to the region's end compared between
    probes (``reference``, ``ends``: buffers of n + 1)."""
    cdef int p, length, end, position, count, k, n_reference = -1
    cdef int* found
    if start == n:
        return 2 if n_decided == 1 else 1
    for p in range(probes.shape[0]):
        length = n + 1
        if probes[p] >= 0:
            text[length] = probes[p]
            length += 1
        found = reference if n_reference < 0 else ends
        count = 0
        position = start
        end = _resume(trans, matched, end_match, text, length, n, run_state, run_best)
        while True:
            if end <= position:
                return -1
            if end > n:
                break
            found[count] = end
            count += 1
            if end == n:
                break
            position = end
            end = _resume(trans, matched, end_match, text, length, position, 0, -1)
        if n_reference < 0:
            n_reference = count
            continue
        if count != n_reference:
            return 0
        for k in range(count):
            if ends[k] != reference[k]:
                return 0
    if n_reference <= 0 or reference[n_reference - 1] != n:
        return 0
    return 2 if n_decided == 0 and n_reference == 1 else 1


cdef class ScanTable:
    """A pre-tokenizer automaton's table (``PretokenMachine.table``), the class of every
    code point and the probe classes, held as typed views once, so a region's walk costs
    the walk alone (converting five arrays at every call cost several microseconds, more
    than the walks the canonical lookahead asks for)."""

    cdef const int[:, ::1] trans
    cdef const unsigned char[:, ::1] matched
    cdef const unsigned char[::1] end_match
    cdef const short[::1] class_of
    cdef const int[::1] probes

    def __init__(self, const int[:, ::1] trans, const unsigned char[:, ::1] matched,
                 const unsigned char[::1] end_match, const short[::1] class_of,
                 const int[::1] probes):
        self.trans = trans
        self.matched = matched
        self.end_match = end_match
        self.class_of = class_of
        self.probes = probes

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def run(self, str text):
        """(state after ``text`` from the start state, -1 once every thread died; end of the
        best match so far, -1 if none): ``PretokenMachine.run`` on the table."""
        cdef int n = <int> len(text), alive, best
        cdef int* classes = _region_classes(text, self.class_of)
        with nogil:
            best = resume_match(self.trans, self.matched, classes, n, 0, 0, -1, &alive)
        free(classes)
        return alive, best

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def common_boundary(self, str region):
        """The last pre-token boundary inside ``region`` that every continuation among the
        probes (class ids, -1 = the end of the text) puts there, 0 if none; -1 where the
        table does not decide.  Matches that end before the region's end are the same for
        every probe; the one running at the end is resumed with each probe, and a boundary
        counts when every probe ends it at the same offset within the region."""
        cdef int n = <int> len(region), cut
        cdef int* text = _region_classes(region, self.class_of)
        with nogil:
            cut = _common_boundary(self.trans, self.matched, self.end_match, text, n, self.probes, 0, 0, 0, -1)
        free(text)
        return cut

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def complete_verdict(self, str region, tuple cuts):
        """1 if ``region`` ended here is tokenized canonically at its ``cuts`` ((offset, pair
        verdict) pairs, ascending, strictly inside; verdict True: BPE keeps the pair there
        apart): every boundary before the end is a cut and every cut that is not a boundary
        holds; else 0; -1 where the table does not decide."""
        cdef int n = <int> len(region), n_cuts = <int> len(cuts), verdict, k
        cdef int* text = _region_classes(region, self.class_of)
        cdef int* offsets = <int*> malloc((n_cuts + 1) * sizeof(int))
        cdef unsigned char* holds = <unsigned char*> malloc(n_cuts + 1)
        try:
            if offsets == NULL or holds == NULL:
                raise MemoryError()
            for k in range(n_cuts):
                offsets[k] = cuts[k][0]
                holds[k] = cuts[k][1] is True
            with nogil:
                verdict = _complete_verdict(self.trans, self.matched, self.end_match, text, n,
                                            offsets, holds, n_cuts, 0, 0, 0, 0, -1)
        finally:
            free(text)
            free(offsets)
            free(holds)
        return verdict

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def complete_after(self, str region, tuple cuts, list texts, const unsigned char[::1] start_holds,
                       signed char[::1] out):
        """Fill ``out[k]`` with ``complete_verdict`` of the region after a token whose text
        is ``texts[k]`` (no partial character at either end): the text appended, a start
        cut at the region's old end (when it had one) with verdict ``start_holds[k]``,
        then trimmed at its ``common_boundary`` (the cuts up to the trim dropped, the rest
        shifted) as ``PretokenizedBPE._trimmed`` does; -1 where the table does not decide
        the trim or the check.  The region is walked once (``_decided_matches``: the
        matches that end inside it, and the one running at its end as far as the
        region goes), so a token costs its text, the probes and the matches after
        the region, not the region's length (trailing whitespace grows one region
        for as long as it runs); a trim past 0 walks the trimmed text whole."""
        cdef int n_region = <int> len(region), n_cuts = <int> len(cuts), longest = 0
        cdef int k, j, n, cut, n_kept, verdict, trim_start, check_start, check_k = 0
        cdef int trim_resume[3]
        cdef int check_resume[3]
        cdef Py_ssize_t t, n_texts = len(texts)
        cdef Py_UCS4 char
        cdef str text
        for t in range(n_texts):
            longest = max(longest, <int> len(<str> texts[t]))
        cdef int* classes = _region_classes(region, self.class_of, longest + 1)
        cdef int* offsets = <int*> malloc((n_cuts + 2) * sizeof(int))
        cdef unsigned char* holds = <unsigned char*> malloc(n_cuts + 2)
        cdef int* kept_offsets = <int*> malloc((n_cuts + 2) * sizeof(int))
        cdef unsigned char* kept_holds = <unsigned char*> malloc(n_cuts + 2)
        try:
            if offsets == NULL or holds == NULL or kept_offsets == NULL or kept_holds == NULL:
                raise MemoryError()
            for k in range(n_cuts):
                offsets[k] = cuts[k][0]
                holds[k] = cuts[k][1] is True
            with nogil:
                trim_start = _decided_matches(self.trans, self.matched, classes, n_region, offsets, holds,
                                              n_cuts, False, &check_k, trim_resume)
                check_start = _decided_matches(self.trans, self.matched, classes, n_region, offsets, holds,
                                               n_cuts, True, &check_k, check_resume)
            for t in range(n_texts):
                text = texts[t]
                n = n_region
                for char in text:
                    classes[n] = self.class_of[char]
                    n += 1
                k = n_cuts
                if n_region:
                    offsets[k] = n_region
                    holds[k] = start_holds[t] != 0
                    k += 1
                with nogil:
                    cut = _common_boundary(self.trans, self.matched, self.end_match, classes, n, self.probes,
                                           trim_start, trim_resume[0], trim_resume[1], trim_resume[2])
                    if cut < 0:
                        verdict = -1
                    elif cut == 0:
                        verdict = check_start if check_start < 0 else _complete_verdict(
                            self.trans, self.matched, self.end_match, classes, n, offsets, holds, k,
                            check_start, check_k, check_resume[0], check_resume[1], check_resume[2])
                        if verdict == -2:
                            verdict = 0
                    else:
                        n_kept = 0
                        for j in range(k):
                            if offsets[j] > cut:
                                kept_offsets[n_kept] = offsets[j] - cut
                                kept_holds[n_kept] = holds[j]
                                n_kept += 1
                        verdict = _complete_verdict(self.trans, self.matched, self.end_match, classes + cut,
                                                    n - cut, kept_offsets, kept_holds, n_kept, 0, 0, 0, 0, -1)
                out[t] = verdict
        finally:
            free(classes)
            free(offsets)
            free(holds)
            free(kept_offsets)
            free(kept_holds)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def fresh_first_classes(self, str region, const int[::1] first_classes, signed char[::1] out):
        """Fill ``out[k]`` with 1 when every continuation of ``region`` that starts with a
        character of class ``first_classes[k]`` (-1: none, verdict 0), followed by each
        probe, puts the same pre-token boundaries inside the region, the last one at its
        end (a token starting with that class then begins a fresh pre-token), 2 when that
        end is the only one (no boundary falls strictly inside the region), else 0.
        Returns 0, or -1 when the table does not decide (a position where text remains and
        no match starts, or a region longer than the buffer): the caller scans with the
        pattern instead."""
        cdef int n = <int> len(region), k, verdict, status = 0
        cdef int start = 0, n_decided = 0, run_state = 0, run_best = -1, best, alive
        cdef bint decided = True
        cdef int* text
        cdef int* reference
        cdef int* ends
        if n + 2 > _MAX_TEXT:
            return -1
        # the region, a first character and a probe; then two buffers of boundaries
        text = _region_classes(region, self.class_of, 2 + 2 * (n + 2))
        reference = text + (n + 2)
        ends = reference + (n + 2)
        with nogil:
            # the matches that end inside the region whatever follows, once; then the one
            # still running at its end, which each first character and probe resume
            while start < n:
                best = resume_match(self.trans, self.matched, text, n, start, 0, -1, &alive)
                if alive >= 0:
                    run_state, run_best = alive, best
                    break
                if best <= start:
                    decided = False
                    break
                n_decided += 1
                start = best
            for k in range(first_classes.shape[0]):
                if first_classes[k] < 0:
                    out[k] = 0
                    continue
                text[n] = first_classes[k]
                verdict = -1
                if decided:
                    verdict = _fresh_resumed(self.trans, self.matched, self.end_match, text, n,
                                             self.probes, start, n_decided, run_state, run_best,
                                             reference, ends)
                if verdict < 0:
                    status = -1
                    break
                out[k] = verdict
        free(text)
        return status
