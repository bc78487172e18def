"""The engine-facing canonical filter: states, forbidden ids, bitset masking, caching.

What it computes
    ``CanonicalFilter`` wraps one tokenizer's canonicality rules (a *backend*:
    pure BPE, pre-tokenized byte-level BPE, SentencePiece BPE or WordPiece)
    behind the interface the engine calls: ``initial_state``, ``advance``,
    ``forbidden_token_ids``, ``apply``, ``is_allowed``,
    ``is_complete_canonical``.  Token t is allowed after ids iff ids + [t] is a
    prefix of the canonical encoding of some text starting with their bytes.
    Special tokens are outside the filter: never forbidden here (the engine
    decides about EOS, e.g. with ``is_complete_canonical``).

Data layout
    States are immutable and hashable (the engine keeps a stack of them for
    rollback).  Per state, a *keep* bitset (uint32[ceil(V/32)], bit t%32 of
    word t//32 set = t allowed) is cached in an LRU of ``cache_size`` states
    (16 KB each for 131k tokens: 16 MB for the default 1,024), so ``apply``
    on a repeated state is one vectorized AND; forbidden id arrays are made
    from it on demand; ``advance`` transitions are cached too (FIFO of
    65,536).  The byte-level BPE backend adds LRUs of packed region and pair
    bitsets (256 each: 8 and 4 MB at most for 131k tokens) and
    ``fresh_bitset`` results (in the region LRU); ``start_byte_table`` keeps
    32 bytes per token (4 MB at 131k tokens) for the filter's life.

Threads
    One filter serves every engine of its vocabulary, on any thread
    (``grammask.engine.batch``): a re-entrant lock serializes the calls that
    read or fill its caches or the backend's, so an LRU is never reordered
    under a reader and a half-built entry is never seen.  Keep bitsets are
    never modified once cached, so ``apply`` ANDs outside the lock.

EOS and obligations
    ``is_complete_canonical(state)`` says whether the tokens so far are the
    canonical encoding of their text if it ended now; it is False while a
    character is incomplete or while the pre-tokenizer still needs a
    following character (e.g. cl100k's ``[  ][ ]``, canonical only if a digit
    or similar follows).  The engine may forbid EOS when it is False.

Backend protocol
    ``initial_state()``, ``advance(state, token_id)``,
    ``allowed_mask(state) -> bool[V]``, ``is_allowed(state, token_id)``,
    ``is_complete(state)``, ``vocab_size``, ``never_filtered_ids`` (ids left
    alone: special and unused).  Optional: ``allowed_words(state, extra)``
    (the mask as a packed bitset, OR ``extra``), ``fresh_words(state)`` (see ``fresh_bitset``),
    ``fresh_first_bytes(state)`` (see ``fresh_first_bytes`` and
    ``start_byte_table``), ``state_class(state)`` (see ``state_class``),
    ``complete_after(state, token_ids)`` (see ``complete_after``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Iterable, Optional

import numpy as np

from grammask import bitset

_NO_START_BYTES = bytes(32)
"""``start_byte_table``'s row of a token whose state the backend cannot tell."""


class CanonicalFilter:
    """Per-step canonical-tokenization mask for one tokenizer; see the module docstring."""

    def __init__(self, name: str, backend: Any, cache_size: int = 1024):
        self.name = name
        self.backend = backend
        self.vocab_size = int(backend.vocab_size)
        self.n_words = bitset.n_words(self.vocab_size)
        never = np.zeros(self.vocab_size, dtype=bool)
        ids = np.asarray(sorted(backend.never_filtered_ids), dtype=np.int64)
        never[ids[(ids >= 0) & (ids < self.vocab_size)]] = True
        self._never_ids = frozenset(np.flatnonzero(never).tolist())   # is_allowed's test, per token
        # the bits every keep bitset has: the never-filtered tokens and the last word's padding
        self._kept_words = bitset.from_flags(never)
        n_padding = self.n_words * 32 - self.vocab_size
        if n_padding:
            self._kept_words[-1] |= np.uint32(((1 << n_padding) - 1) << (32 - n_padding))
        self._cache: OrderedDict = OrderedDict()
        self.cache_size = cache_size
        self._transitions: OrderedDict = OrderedDict()
        self.transition_cache_size = 1 << 16
        self.n_cache_misses = 0
        self._lock = threading.RLock()
        self._state_class = getattr(backend, "state_class", None)

    def __repr__(self) -> str:
        return f"CanonicalFilter({self.name!r}, vocab_size={self.vocab_size})"

    # -- states -------------------------------------------------------------
    def initial_state(self, context_token_ids: Iterable[int] = ()):
        """The state at the start of the output, optionally after the prompt's last tokens.

        The given tokens are replayed from the start of a text (a special
        token such as BOS starts a fresh text), so pass the prompt's tail
        after its last special token; a few tokens suffice for byte-level
        BPE (the region since the last fixed pre-token boundary) and for
        WordPiece (the current word).
        """
        with self._lock:
            state = self.backend.initial_state()
            for token_id in context_token_ids:
                state = self.backend.advance(state, int(token_id))
            return state

    def advance(self, state, token_id: int):
        """The state after ``token_id`` (a new object; ``state`` is unchanged); transitions are cached."""
        key = (state, token_id)
        found = self._transitions.get(key)   # a read needs no lock (the GIL keeps it whole)
        if found is not None:
            return found
        with self._lock:
            found = self._transitions.get(key)
            if found is None:
                found = self.backend.advance(state, int(token_id))
                self._transitions[key] = found
                if len(self._transitions) > self.transition_cache_size:
                    self._transitions.popitem(last=False)
            return found

    def advance_all(self, state, token_ids: list) -> list:
        """``[advance(state, t) for t in token_ids]`` (ints): the cached
        transitions, and the others through the backend's ``advance_all``
        when it has one (what the calls share read once), else one by one,
        cached as ``advance`` caches them."""
        transitions = self._transitions
        states = [transitions.get((state, token_id)) for token_id in token_ids]
        missing = [index for index, found in enumerate(states) if found is None]
        if not missing:
            return states
        ids = [token_ids[index] for index in missing]
        advance_all = getattr(self.backend, "advance_all", None)
        with self._lock:
            computed = (advance_all(state, ids) if advance_all is not None
                        else [self.backend.advance(state, int(token_id)) for token_id in ids])
            for index, token_id, after in zip(missing, ids, computed):
                states[index] = transitions[(state, token_id)] = after
            while len(transitions) > self.transition_cache_size:
                transitions.popitem(last=False)
        return states

    # -- masks ----------------------------------------------------------------
    def _entry(self, state):
        """[forbidden ids or None (computed on demand), keep words] for ``state``, LRU-cached."""
        with self._lock:
            return self._entry_locked(state)

    def _entry_locked(self, state):
        entry = self._cache.get(state)
        if entry is not None:
            self._cache.move_to_end(state)
            return entry
        self.n_cache_misses += 1
        if hasattr(self.backend, "allowed_words"):
            keep = self.backend.allowed_words(state, self._kept_words)
        else:
            keep = bitset.from_flags(self.backend.allowed_mask(state)) | self._kept_words
        entry = [None, keep]
        self._cache[state] = entry
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return entry

    def forbidden_token_ids(self, state) -> np.ndarray:
        """Sorted int32 ids that would make the sequence non-canonical as the next token."""
        with self._lock:
            entry = self._entry_locked(state)
            if entry[0] is None:
                entry[0] = bitset.token_ids(~entry[1], self.vocab_size)
            return entry[0]

    def keep_bitset(self, state) -> np.ndarray:
        """uint32[ceil(V/32)]: bit set = token allowed by the filter (special tokens always set)."""
        return self._entry(state)[1]

    def apply(self, state, bitset: np.ndarray) -> np.ndarray:
        """Clear the forbidden tokens' bits of an int32/uint32 bitset (1-D, ceil(V/32) words) in place."""
        keep = self._entry(state)[1]
        np.bitwise_and(bitset, keep.view(bitset.dtype)[:bitset.shape[-1]], out=bitset)
        return bitset

    def is_allowed(self, state, token_id: int) -> bool:
        token_id = int(token_id)
        if not 0 <= token_id < self.vocab_size:
            return False
        if token_id in self._never_ids:
            return True
        with self._lock:
            entry = self._cache.get(state)
            if entry is not None:
                return bitset.has(entry[1], token_id)
            return bool(self.backend.is_allowed(state, token_id))

    def fresh_bitset(self, state) -> Optional[np.ndarray]:
        """uint32 bitset of the tokens whose state after them does not depend
        on ``state`` (``advance(state, t) == advance(initial_state(), t)``),
        or None when the backend cannot tell (see ``PretokenizedBPE.fresh_words``)."""
        fresh_words = getattr(self.backend, "fresh_words", None)
        if fresh_words is None:
            return None
        with self._lock:
            return fresh_words(state)

    def start_byte_table(self, token_ids: np.ndarray) -> Optional[tuple]:
        """(uint64[V, 4] byte sets, uint8[V] known): row t is ``fresh_first_bytes``
        of the state after t from ``initial_state()`` (no byte when the backend
        cannot tell), the backend's whole table when its pickle kept one
        (``start_byte_rows``), else filled for the ``token_ids`` not known yet
        and kept for the filter's life (32 bytes per token: 4 MB at 131k
        tokens); None when the backend has no ``fresh_first_bytes``.  The
        canonical lookahead's compiled pass over fresh candidates reads it
        (``_core.candidate_states.settle_from_start``)."""
        fresh_first_bytes = getattr(self.backend, "fresh_first_bytes", None)
        if fresh_first_bytes is None:
            return None
        with self._lock:
            table = self.__dict__.get("_start_bytes")
            if table is None:
                stored = getattr(self.backend, "start_byte_rows", lambda: None)()
                if stored is not None and len(stored) >= self.vocab_size:
                    table = (stored[:self.vocab_size], np.ones(self.vocab_size, dtype=np.uint8))
                else:
                    table = (np.zeros((self.vocab_size, 4), dtype=np.uint64),
                             np.zeros(self.vocab_size, dtype=np.uint8))
                self._start_bytes = table
            rows, known = table
            token_ids = np.asarray(token_ids, dtype=np.int64)
            missing = token_ids[known[token_ids] == 0]
            if len(missing):
                # the backend's own transitions: these one-off states would
                # only push the working set out of the transition cache
                advance, initial = self.backend.advance, self.backend.initial_state()
                found = [fresh_first_bytes(advance(initial, token_id)) for token_id in missing.tolist()]
                rows[missing] = np.frombuffer(b"".join([row or _NO_START_BYTES for row in found]),
                                              dtype=np.uint64).reshape(-1, 4)
                known[missing] = 1
            return table

    def fresh_first_bytes(self, state) -> Optional[bytes]:
        """A 32-byte set of the bytes b such that every token starting with b is
        fresh after ``state`` and allowed there exactly when it is allowed from
        ``initial_state()``, or None (the backend cannot tell; see
        ``PretokenizedBPE.fresh_first_bytes``)."""
        fresh_first_bytes = getattr(self.backend, "fresh_first_bytes", None)
        if fresh_first_bytes is None:
            return None
        with self._lock:
            return fresh_first_bytes(state)

    def complete_after(self, state, token_ids) -> Optional[np.ndarray]:
        """int8 per id of ``token_ids``: 1 when ``is_complete_canonical(advance(state,
        t))``, 0 when not, -1 when the backend does not decide it in its batch (ask
        one by one); None when the backend has no such batch (its optional
        ``complete_after``) or none from ``state`` (``token_ids`` may be empty to ask).
        The canonical lookahead asks it for the candidates after which the grammar
        may end, hundreds of whitespace tokens at every step of trailing whitespace."""
        complete_after = getattr(self.backend, "complete_after", None)
        if complete_after is None:
            return None
        with self._lock:
            return complete_after(state, token_ids)

    def state_class(self, state):
        """A hashable class of ``state`` that states which usually allow the
        same continuations share (the backend's ``state_class`` when it has
        one, a pure function of the state, so it is called without the
        filter's lock; else the state itself).  A hint for caches of *candidates*
        (the canonical lookahead's witnesses, asked for every narrow candidate
        of a mask): whatever is concluded from it must be checked on the
        state itself."""
        state_class = self._state_class
        return state if state_class is None else state_class(state)

    def is_complete_canonical(self, state) -> bool:
        """The tokens so far are the canonical encoding of their text if the text ended here."""
        with self._lock:
            return bool(self.backend.is_complete(state))
