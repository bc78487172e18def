"""What the canonical lookahead learns about a tokenizer, shared by every grammar of its vocabulary.

What it computes
    Nothing itself: a ``SharedWitnesses`` holds what the canonical lookahead
    (``grammask.engine.lookahead``) finds about the *tokenizer* while it
    searches one grammar, so that a grammar compiled later for the same
    vocabulary (a new JSON schema per request, say) replays it instead of
    searching again:

    * witnesses: the tokens after a candidate that ended a search alive,
      with their bytes, the canonical state they were found from and a
      serial number; kept per (canonical state, next allowed bytes)
      (``exact``), per (that state's class, next allowed bytes)
      (``by_class``), the one found last (``latest``), and, for a fresh
      candidate, per (token, bytes the grammar allowed where it was a
      candidate) (``fresh``) and, a few of them, per token
      (``fresh_by_token``), in the compiled replay's form;
    * the filter's verdicts on a witness's tokens from a canonical state
      (``filter_memo``), and the canonical state after each fresh token
      (``fresh_states``).

    None of it is a verdict about a grammar.  A witness is replayed against
    the grammar that asks (its bytes probed in that grammar's recognizer,
    the state after them checked there, the filter's part checked from the
    canonical state at hand unless it was found from that state), so one
    found in another grammar shows a token alive exactly as one found in
    this grammar does, and where that grammar differs it fails and the
    search decides.  Verdicts that depend on a grammar (keyed by its
    recognizer's state keys) stay in each grammar's lookahead.

Data layout
    Bounded FIFOs (``OrderedDict``) of ``cache_size`` entries each, in the
    tuple forms ``grammask.engine.lookahead`` documents; ``fresh_states``
    holds at most one state per token.  An entry is a few hundred bytes (a
    tuple of a few token ids, their bytes and a reference to a canonical
    state the filter keeps anyway), so a full FIFO of 65,536 entries holds
    tens of megabytes; before, every compiled grammar held FIFOs of that
    size of its own.

Invariants
    ``lock`` is held by every ``CanonicalLookahead.prune`` of the
    vocabulary's grammars, so the FIFOs are never reordered under a reader
    and the search's scratch state is never used by two threads (the
    search is Python under the GIL anyway).  ``clear_caches`` forgets the
    store with the token sets (``grammask.engine.vocab_tables``).

Seeds: Tran-Thien 2024 (docs/references.md): the tokenizer's automaton is
one per vocabulary, intersected with each constraint, so what is learnt
about it alone is shared by every constraint.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["SharedWitnesses"]


class SharedWitnesses:
    """Witnesses and filter facts of one vocabulary's canonical lookaheads; see the module docstring."""

    def __init__(self, cache_size: int = 1 << 16):
        self.cache_size = cache_size
        self.lock = threading.Lock()
        self.exact: OrderedDict = OrderedDict()
        self.by_class: OrderedDict = OrderedDict()
        self.fresh: OrderedDict = OrderedDict()
        self.fresh_by_token: OrderedDict = OrderedDict()
        self.filter_memo: OrderedDict = OrderedDict()
        self.fresh_states: dict = {}
        self.latest = None
        self.serial = 0

    def keep(self, fifo: OrderedDict, key, value) -> None:
        """Put ``value`` under ``key`` in one of the bounded FIFOs."""
        fifo[key] = value
        if len(fifo) > self.cache_size:
            fifo.popitem(last=False)
