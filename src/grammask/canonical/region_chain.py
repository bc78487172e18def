"""A pre-token region's match chain, and the shortest region with the same chain found by deletion.

What it computes
    ``PretokenizedBPE`` keeps the *region*: the text since the last pre-token
    boundary that every continuation keeps, with the token cuts inside it.
    Inside a run that fixes no boundary (a whitespace run holding a newline
    under ``\\s*[\\r\\n]+``, a long word under ``\\p{L}+``) the region grows
    with every token, and with it every per-step cost that reads it.
    ``match_chain(scan, covering, region, cuts)`` is what the filter's
    verdicts after a region depend on; ``shorten`` deletes characters from the
    region while its chain stays the same, so a run of any length leaves a
    region of a few characters and the states inside it repeat.

    The chain, for a region R of n characters starting at a boundary: run the
    pattern's automaton from R's start; it ends in state s_0 (-1 when every
    thread died) with the best match end e_0 so far (n when no match yet and
    the pattern covers every character).  Level 0 is (s_0, h_0, v_0): h_0 says
    whether every cut strictly inside (0, e_0) holds (BPE keeps the pair
    there apart), v_0 is the cut's pair verdict at e_0 (None: no cut there;
    None also when e_0 = n).  If e_0 < n, level 1 is the same over R[e_0:],
    and so on until a level ends at n.

    Why equal chains give equal verdicts.  For a continuation X, the first
    match of R + X either ends past R's end (a thread of s_0 reaches the
    match on X; then no boundary falls inside R and every cut must hold:
    the AND of all h_i and v_i) or at e_0 (every thread of s_0 dies on X
    without a match; then e_0 is a boundary, so it must be a cut, v_0 not
    None, and the cuts inside (0, e_0) must hold, h_0), and the matches
    after e_0 are those of R[e_0:] + X, level 1 onwards.  Which case holds
    and everything the scan then finds in X depend on the states s_i only,
    so two regions with equal chains have, for every continuation, the same
    boundaries up to a shift and the same feasibility: the same verdict for
    every token, the same end check, trim and fresh first characters.
    Appending a token keeps chains equal (the new state and best end of each
    level depend on s_i and the token only), so the states after it are
    equivalent too.

Data layout
    A chain is a tuple of (state, holds, verdict at the end) per level, the
    states those of ``PretokenMachine.table`` (``_region_scan.ScanTable.run``).
    ``shorten`` returns (region, cuts) in the filter's layout: cuts are
    ascending (offset, pair verdict) strictly inside the region.

Invariants and cost
    ``shorten`` only returns a region whose chain equals the input's (and
    the input when the chain is None: an empty match, or a pattern that
    does not cover every character).  It deletes characters, never the
    first or the last: first every run of one character cut to one, two or
    three characters at once (a few tries), then, while the region is
    longer than 4 characters, one at a time; the cuts inside a deleted
    stretch go and the cuts at its two ends merge when their verdicts
    agree.  Each try is a chain: one compiled table walk per level (about
    2 us on a short region).  On the real patterns a whitespace, letter,
    CJK or punctuation run shortens to 4 characters or fewer.  Exactness is tested against the tokenizers'
    own encode after long runs and against the state that keeps the whole
    region.

Seeds: docs/design.md section 5; Cox 2009 (docs/references.md) for the
leftmost-first automaton whose states the chain holds.
"""

from __future__ import annotations

from typing import Optional


def match_chain(scan, covering: bool, region: str, cuts: tuple) -> Optional[tuple]:
    """The region's chain of (automaton state, cuts inside hold, pair verdict at the end) per
    match level (see the module docstring); None where it does not apply."""
    n_region = len(region)
    verdict_at = dict(cuts)
    chain = []
    start = 0
    position = 0
    while start < n_region:
        state, best = scan.run(region[start:] if start else region)
        if best == 0:
            return None
        if best < 0:
            if state < 0 or not covering:
                return None
            end = n_region
        else:
            end = start + best
        holds = True
        while position < len(cuts) and cuts[position][0] < end:
            offset, verdict = cuts[position]
            if offset > start and verdict is not True:
                holds = False
            position += 1
        chain.append((state, holds, verdict_at.get(end)))
        start = end
    return tuple(chain)


def _without(region: str, cuts: tuple, start: int, stop: int) -> Optional[tuple]:
    """(region, cuts) with characters [start, stop) deleted (0 < start < stop < len): the
    cuts inside go, the cuts after move back, and the cuts at ``start`` and ``stop``
    merge when their verdicts agree (else None)."""
    moved = []
    for offset, verdict in cuts:
        if start < offset < stop:
            continue
        if offset >= stop:
            offset -= stop - start
            if moved and moved[-1][0] == offset:
                if moved[-1][1] != verdict:
                    return None
                continue
        moved.append((offset, verdict))
    return region[:start] + region[stop:], tuple(moved)


def _runs_cut(region: str, cuts: tuple, keep: int) -> Optional[tuple]:
    """(region, cuts) with every run of one character longer than ``keep`` cut to its first
    character and its last ``keep - 1`` (never the region's last character), by ``_without``
    from the right; None when two merging cuts disagree."""
    index = len(region)
    while index > 0 and cuts is not None:
        start = index - 1
        while start > 0 and region[start - 1] == region[index - 1]:
            start -= 1
        stop = min(index - keep + 1, len(region) - 1)
        if start + 1 < stop:
            found = _without(region, cuts, start + 1, stop)
            if found is None:
                return None
            region, cuts = found
        index = start
    return region, cuts


def shorten(scan, covering: bool, region: str, cuts: tuple, short: int = 4) -> tuple:
    """(region, cuts) with the same ``match_chain`` and, where deletions reach it, at most
    ``short`` characters (the input itself when there is no chain): first every run of one
    character cut to one, two or three characters (the first of these that keeps the
    chain), then, while longer than ``short``, one character at a time."""
    target = match_chain(scan, covering, region, cuts)
    if target is None:
        return region, cuts
    for keep in (1, 2, 3):
        candidate = _runs_cut(region, cuts, keep)
        if candidate is not None and candidate[0] != region and match_chain(scan, covering, *candidate) == target:
            region, cuts = candidate
            break
    index = 1
    while len(region) > short and index < len(region) - 1:
        candidate = _without(region, cuts, index, index + 1)
        if candidate is not None and match_chain(scan, covering, *candidate) == target:
            region, cuts = candidate
        else:
            index += 1
    return region, cuts
