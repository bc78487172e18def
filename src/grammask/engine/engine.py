"""Engine: per-step token masks for one sequence.

What it computes
    ``Engine`` is the cheap per-sequence state over a ``CompiledGrammar``
    (``grammask.engine.compiled``): an Earley recognizer, the accepted-step
    history and the canonical filter's state.  It accepts tokens, EOS or raw
    bytes, rolls back, and gives the current mask as a bitset, ids, an int32
    bitmask row or ``-inf`` logits (``grammask.engine.logits``).

Data layout
    The mask is a token bitset ``bits[ceil(V/32)]`` (``grammask.bitset``:
    bit ``t % 32`` of word ``t // 32`` is token t); ``fill_bitmask`` writes
    it as int32 (same bits, xgrammar's layout); ids and logits masks are
    derived from it.  ``_steps`` is a deque of the accepted steps still
    within the rollback window (a token, EOS, or a byte string):
    ``(token_id or None, bytes pushed into the recognizer, canonical state
    before the step, output bytes)``, EOS the only token step of 0 bytes
    (the pushed and output counts differ only for a token accepted by a
    token terminal, ``grammask.engine.token_terminals``, which pushes one
    reserved byte); a step is dropped from the left once rolling
    back to it would pass ``Config.max_rollback_bytes`` (the recognizer
    compacts its Earley sets by the same window), so memory stays bounded
    on long outputs.  ``_output`` is the output's bytes, ``_n_steps`` the
    count of every step.  Rollback pops entries and the recognizer's bytes
    and restores the canonical state of the first popped entry.  ``_mask``
    (``grammask._core.mask_computer.MaskState``) holds the bits, the
    recognizer, whether the bits are valid and EOS accepted, and the most
    work a mask took, where ``grammask.engine.batch`` reads them from C.

Invariants
    * A rejected token, byte string, or logits array of the wrong size raises
      a typed error and leaves the engine exactly as it was; so does a step
      past a work limit (``LimitExceeded``: ``Config.max_earley_work_per_byte``
      while accepting, ``Config.max_earley_work_per_mask`` for a mask, which
      ``stats()["max_mask_work"]`` measures).
    * EOS is allowed exactly when the bytes so far form a sentence; with
      ``Config(eager_end=True)`` it is then the only allowed token.  After EOS
      has been accepted only EOS stays allowed (so generation loops stop),
      and accepting it again changes nothing.
    * The grammar mask is exact; the canonical filter and its lookahead
      (``grammask.engine.lookahead``) only remove tokens, EOS needs the
      tokens to be canonical as they stand, and both are skipped for a step
      (counted in ``stats()["canonical_fallbacks"]``) when nothing would be
      left.
    * ``try_accept_new_token(t)`` succeeds exactly when ``is_token_allowed(t)``
      (unless ``Config.accept_non_canonical``, which lets the grammar alone decide).
    * The current mask is computed at most once per state (``_mask.valid``),
      and whole masks are shared between engines through
      ``CompiledGrammar.mask_cache``, keyed by the recognizer's exact
      ``state_key()`` and the canonical state.

Seeds: the kbnf post (docs/references.md) (engine API,
mask from an Earley recognizer over a token trie), the outlines lab (docs/references.md)
(the guarantees: never a dead end, EOS only when complete).
"""

from __future__ import annotations

import collections
import enum
import itertools
from typing import Optional

import numpy as np

from grammask import bitset
from grammask._core.earley import EarleyRecognizer
from grammask._core.logits import allowed_ids
from grammask._core.mask_computer import MaskState, pop_probe, push_probe
from grammask.config import Config
from grammask.engine import forced
from grammask.engine.compiled import CompiledGrammar, compile
from grammask.engine.logits import apply_mask, check_logits, write_bitmask
from grammask.errors import (
    DeadEndWarning,
    InvalidArgument,
    InvalidArgumentType,
    LimitExceeded,
    TokenRejected,
    warn_caller,
)
from grammask.vocab import Vocabulary

__all__ = ["Engine", "Status"]


class Status(enum.Enum):
    ONGOING = "ongoing"
    FINISHED = "finished"


class Engine:
    """Per-sequence decoding state: accept tokens, compute masks, roll back.

    ``Engine(compiled)`` or ``Engine(grammar, vocab, config=None)``."""

    def __init__(self, grammar_or_compiled, vocab: Optional[Vocabulary] = None,
                 config: Optional[Config] = None):
        if isinstance(grammar_or_compiled, CompiledGrammar):
            if vocab is not None or config is not None:
                raise InvalidArgumentType("Engine(compiled) takes no vocab or config")
            self._set_compiled(grammar_or_compiled)
        else:
            if vocab is None:
                raise InvalidArgumentType("Engine(grammar, vocab, config=None): vocab is required")
            self._set_compiled(compile(grammar_or_compiled, vocab, config))

    # -- setup -------------------------------------------------------------

    def _set_compiled(self, compiled: CompiledGrammar):
        self.compiled = compiled
        self._set_fast_accept()
        self._bits = np.zeros(compiled.n_words, dtype=np.uint32)
        self._narrow = np.zeros(compiled.n_words, dtype=np.uint32) if compiled.lookahead else None
        self._mask = MaskState(compiled.mask_computer, compiled.mask_step,
                               compiled.mask_cache is not None, self._bits)
        self._stats = {"n_steps": 0, "canonical_fallbacks": 0, "non_canonical_accepts": 0,
                       "dead_ends": 0, "lookahead_pruned": 0, "lookahead_cutoffs": 0,
                       "mask_cache_hits": 0}
        self.reset()

    def _set_fast_accept(self) -> None:
        """What ``try_accept_new_token``'s common case reads: the vocabulary's
        text flags and bytes, and whether the grammar alone decides a text
        token (no token terminals, no canonical check, no eager end)."""
        compiled = self.compiled
        self._text_flags = compiled.vocab.text_token_flags
        self._token_bytes = compiled.vocab.token_bytes
        self._fast_accept = (compiled.token_terminals is None and not compiled.config.eager_end
                             and not self._canonical_checked())

    def initialize(self, grammar, vocab: Vocabulary, config: Optional[Config] = None) -> None:
        """Seed API: (re)initialize this engine on a grammar and vocabulary."""
        self._set_compiled(compile(grammar, vocab, config))

    def reset(self) -> None:
        """Back to the empty output."""
        config = self.compiled.config
        self._recognizer = EarleyRecognizer(self.compiled.tables, max_items=config.max_earley_items,
                                            rollback_horizon=config.max_rollback_bytes,
                                            max_work_per_set=config.max_earley_work_per_byte)
        self._steps: collections.deque = collections.deque()
        self._output = bytearray()
        self._window_bytes = 0
        self._n_steps = 0
        self._mask.recognizer = self._recognizer
        self._mask.finished = False
        canonical = self.compiled.canonical
        self._canonical_state = canonical.initial_state() if canonical is not None else None
        self._mask.valid = False

    def seed_canonical_context(self, context_token_ids) -> None:
        """Seed the canonical filter with the prompt's last tokens (only
        before the first accepted token)."""
        if self._n_steps:
            raise InvalidArgument("seed_canonical_context must be called before the first token")
        canonical = self.compiled.canonical
        if canonical is not None:
            self._canonical_state = canonical.initial_state(tuple(int(t) for t in context_token_ids))
            self._mask.valid = False

    def copy(self) -> "Engine":
        """An independent engine in the same state (sharing the compiled grammar)."""
        clone = Engine.__new__(Engine)
        clone.compiled = self.compiled
        clone._set_fast_accept()
        clone._bits = self._bits.copy()
        clone._narrow = None if self._narrow is None else self._narrow.copy()
        clone._stats = dict(self._stats)
        clone._recognizer = self._recognizer.copy()
        clone._mask = self._mask.copy(clone._bits, clone._recognizer)
        clone._steps = collections.deque(self._steps)
        clone._output = bytearray(self._output)
        clone._window_bytes = self._window_bytes
        clone._n_steps = self._n_steps
        clone._canonical_state = self._canonical_state
        return clone

    # -- queries -------------------------------------------------------------

    @property
    def vocab(self) -> Vocabulary:
        return self.compiled.vocab

    @property
    def n_accepted(self) -> int:
        """Steps accepted so far (tokens, EOS and byte strings)."""
        return self._n_steps

    def is_finished(self) -> bool:
        """EOS was accepted, or the output is complete and nothing can follow
        (or the config ends eagerly at the first complete match)."""
        if self._mask.finished:
            return True
        if not self._recognizer.is_accepting():
            return False
        if self.compiled.config.eager_end:
            return True
        return not any(self._recognizer.allowed_first_bytes())

    def can_end(self) -> bool:
        """EOS is allowed now: the output so far is a complete sentence (and,
        with the canonical filter, its tokens are canonical as they stand;
        i.e. EOS is in the current mask)."""
        if self._mask.finished or not self._recognizer.is_accepting():
            return False
        if self.compiled.canonical is None or not self.compiled.vocab.eos_token_ids:
            return True
        eos_id = self.compiled.vocab.eos_token_ids[0]
        return bitset.has(self._current_bits(), eos_id)

    def output_bytes(self) -> bytes:
        """The bytes accepted so far."""
        return bytes(self._output)

    def stats(self) -> dict:
        stats = dict(self._stats)
        stats["max_mask_work"] = self._mask.max_work
        stats["n_cached_terminal_states"] = self.compiled.mask_computer.n_cached_terminal_states
        stats["recognizer"] = self._recognizer.stats()
        return stats

    def _status(self) -> Status:
        return Status.FINISHED if self.is_finished() else Status.ONGOING

    # -- accepting -----------------------------------------------------------

    def try_accept_new_token(self, token_id) -> Status:
        """Accept one token id; raise TokenRejected (state unchanged) if the
        mask does not allow it: the grammar, and with a canonical filter the
        filter and its lookahead too (``Config.accept_non_canonical=True``
        leaves that part out), so accept and ``is_token_allowed`` agree.

        A text token (``Vocabulary.text_token_flags``) the grammar alone
        decides (``_set_fast_accept``) is pushed at once; anything else, or
        a push the grammar refuses, takes ``_accept_checked``, which checks
        every case in order and says why it refuses."""
        if (type(token_id) is int and self._fast_accept and 0 <= token_id < len(self._text_flags)
                and self._text_flags[token_id] and not self._mask.finished):
            data = self._token_bytes[token_id]
            if self._recognizer.push_bytes(data):
                self._push_step(token_id, len(data), data)
                return self._status()
        return self._accept_checked(token_id)

    def _accept_checked(self, token_id) -> Status:
        """``try_accept_new_token`` with every check, in order."""
        vocab = self.compiled.vocab
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise TokenRejected(f"token id must be an int, got {token_id!r}", token_id=None)
        token_id = int(token_id)
        if not 0 <= token_id < vocab.size:
            raise TokenRejected(f"token id {token_id} is outside the vocabulary (size {vocab.size})",
                                token_id=token_id)
        if self._mask.finished:
            if token_id in vocab.eos_token_ids:
                return Status.FINISHED  # the mask after EOS is EOS alone: accepting it again is a no-op
            raise TokenRejected(f"token {token_id} after EOS: the output is finished",
                                token_id=token_id)
        if token_id in vocab.eos_token_ids:
            if not self._recognizer.is_accepting():
                raise TokenRejected(
                    f"EOS token {token_id} rejected: the output so far is not a complete sentence",
                    token_id=token_id)
            if self._canonical_checked() and not self.is_token_allowed(token_id):
                raise TokenRejected(
                    f"EOS token {token_id} rejected: the output is complete, but its tokens are not "
                    "canonical as they stand (Config.accept_non_canonical=True accepts it)",
                    token_id=token_id)
            self._push_step(token_id, 0, None)
            self._mask.finished = True
            return Status.FINISHED
        if vocab.is_special(token_id):
            raise TokenRejected(f"special token {token_id} is never allowed as text",
                                token_id=token_id)
        data = vocab.token_bytes[token_id]
        if not data:
            raise TokenRejected(f"token {token_id} has no bytes", token_id=token_id)
        if self.compiled.config.eager_end and self._recognizer.is_accepting():
            raise TokenRejected(
                f"token {token_id} rejected: the output is complete and eager_end is set",
                token_id=token_id, data=data)
        terminals = self.compiled.token_terminals
        if terminals is not None and (terminals.holds_reserved(data) or not self._grammar_allows(data)):
            byte = terminals.reserved_byte_for(self._recognizer, token_id)
            if byte is not None:
                self._recognizer.push_bytes(bytes([byte]))
                self._push_step(token_id, 1, data)
                return self._status()
            if terminals.holds_reserved(data):
                raise TokenRejected(
                    f"token {token_id} ({data!r}) rejected: it holds a byte reserved for token terminals "
                    "and no token terminal here matches it", token_id=token_id, data=data)
        if self._canonical_checked() and not self.is_token_allowed(token_id) and self._grammar_allows(data):
            raise TokenRejected(self._non_canonical_message(token_id, data), token_id=token_id, data=data)
        self._push_data(data, token_id)
        return self._status()

    def _canonical_checked(self) -> bool:
        """Accepting a token checks it against the whole mask (canonical
        filter and lookahead included), not just the grammar."""
        return self.compiled.canonical is not None and not self.compiled.config.accept_non_canonical

    def _grammar_allows(self, data: bytes) -> bool:
        """The grammar accepts ``data`` next (probed; the state is unchanged)."""
        if not push_probe(self._recognizer, data):
            return False
        pop_probe(self._recognizer, len(data))
        return True

    def _non_canonical_message(self, token_id: int, data: bytes) -> str:
        """Why a grammar-allowed token is outside the mask, naming the
        longest allowed token that spells a prefix of it."""
        vocab = self.compiled.vocab
        instead = "no allowed token spells a prefix of it"
        for length in range(len(data) - 1, 0, -1):
            other = vocab.text_token_id(data[:length])
            if other is not None and self.is_token_allowed(other):
                instead = f"the allowed token {other} ({data[:length]!r}) spells its longest prefix"
                break
        return (f"token {token_id} ({data!r}) rejected: the grammar allows it, but the model's tokenizer "
                "would not produce this token sequence (not canonical here, or no canonical "
                f"continuation follows it); {instead} (Config.accept_non_canonical=True accepts it)")

    def try_accept_new_bytes(self, data) -> Status:
        """Accept raw bytes (bytes, bytearray or memoryview) as one step (all
        or nothing)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidArgumentType(
                f"try_accept_new_bytes takes bytes, bytearray or memoryview, got {type(data).__name__}")
        data = bytes(data)
        if self._mask.finished:
            raise TokenRejected("bytes after EOS: the output is finished", data=data)
        if not data:
            return self._status()
        if self.compiled.config.eager_end and self._recognizer.is_accepting():
            raise TokenRejected("bytes rejected: the output is complete and eager_end is set",
                                data=data)
        terminals = self.compiled.token_terminals
        if terminals is not None and terminals.holds_reserved(data):
            raise TokenRejected("bytes rejected: they hold a byte reserved for the grammar's token "
                                "terminals, which only whole tokens match", data=data)
        self._push_data(data, None)
        return self._status()

    def _push_data(self, data: bytes, token_id: Optional[int]) -> None:
        recognizer = self._recognizer
        if not recognizer.push_bytes(data):
            offset = self._failing_offset(data)
            what = f"token {token_id} ({data!r})" if token_id is not None else f"bytes {data!r}"
            raise TokenRejected(
                f"{what} rejected: the grammar stops matching at byte {offset} of it "
                f"(after {len(self.output_bytes())} bytes of output)",
                token_id=token_id, data=data, offset=offset)
        self._push_step(token_id, len(data), data)

    def _failing_offset(self, data: bytes) -> int:
        recognizer = self._recognizer
        n_pushed = 0
        for byte in data:
            if not recognizer.push_byte(byte):
                break
            n_pushed += 1
        recognizer.pop(n_pushed)
        return n_pushed

    def _push_step(self, token_id: Optional[int], n_bytes: int, data: Optional[bytes]) -> None:
        """Record a step that pushed ``n_bytes`` into the recognizer and
        appended ``data`` to the output."""
        previous_canonical = self._canonical_state
        canonical = self.compiled.canonical
        if canonical is not None and token_id is not None and data is not None:
            if not canonical.is_allowed(self._canonical_state, token_id):
                self._stats["non_canonical_accepts"] += 1  # accept_non_canonical, or a fallback mask
            self._canonical_state = canonical.advance(self._canonical_state, token_id)
        steps = self._steps
        steps.append((token_id, n_bytes, previous_canonical, len(data) if data else 0))
        if data:
            self._output += data
        self._window_bytes += n_bytes
        self._n_steps += 1
        horizon = self.compiled.config.max_rollback_bytes
        if horizon is not None:
            # A step is kept while rolling back to it stays within the window.
            while steps and self._window_bytes > horizon:
                self._window_bytes -= steps.popleft()[1]
        self._stats["n_steps"] += 1
        self._mask.valid = False

    def rollback(self, n_tokens: int) -> None:
        """Undo the last ``n_tokens`` accepted steps (as far back as
        ``Config.max_rollback_bytes`` allows)."""
        if isinstance(n_tokens, bool) or not isinstance(n_tokens, (int, np.integer)):
            raise InvalidArgumentType(f"rollback takes an int, got {type(n_tokens).__name__}")
        n_tokens = int(n_tokens)
        if n_tokens < 0 or n_tokens > self._n_steps:
            raise InvalidArgument(f"cannot roll back {n_tokens} steps: {self._n_steps} accepted")
        if n_tokens == 0:
            return
        steps = self._steps
        if n_tokens > len(steps):
            raise LimitExceeded(
                "max_rollback_bytes", self._window_bytes, self.compiled.config.max_rollback_bytes,
                f"cannot roll back {n_tokens} steps: the last {len(steps)} are within the window")
        popped = list(itertools.islice(steps, len(steps) - n_tokens, len(steps)))
        n_bytes = sum(step[1] for step in popped)
        try:
            self._recognizer.pop(n_bytes)
        except ValueError as error:
            raise LimitExceeded(
                "max_rollback_bytes", n_bytes, self.compiled.config.max_rollback_bytes,
                f"cannot roll back {n_tokens} steps ({n_bytes} bytes)") from error
        for _ in range(n_tokens):
            steps.pop()
        n_output = sum(step[3] for step in popped)
        if n_output:
            del self._output[-n_output:]
        self._window_bytes -= n_bytes
        self._n_steps -= n_tokens
        self._canonical_state = popped[0][2]
        if any(step[0] is not None and step[1] == 0 and step[0] in self.compiled.vocab.eos_token_ids
               for step in popped):
            self._mask.finished = False
        self._mask.valid = False

    # -- masks ---------------------------------------------------------------

    def _current_bits(self) -> np.ndarray:
        if not self._mask.valid:
            if self._mask.finished:
                self._bits[:] = 0
                self._set_eos(self._bits)
                self._mask.valid = True
            else:
                key = self._mask_cache_key()
                empty = self._take_cached_mask(key)
                if empty is None:
                    empty = self._compute_mask(key)
                if empty:
                    self._warn_dead_end()
        return self._bits

    def _mask_cache_key(self):
        """The current (unfinished) state's key in the compiled grammar's
        whole-mask cache; None without a cache."""
        if self.compiled.mask_cache is None:
            return None
        return (self._recognizer.state_key(), self._canonical_state)

    def _take_cached_mask(self, key) -> Optional[bool]:
        """Copy the cached mask of ``key`` into the engine's bits (valid
        now): whether it is empty; None when not cached."""
        found = None if key is None else self.compiled.mask_cache.get(key)
        if found is None:
            return None
        self._bits[:] = found[0]
        self._stats["canonical_fallbacks"] += found[1]
        self._stats["mask_cache_hits"] += 1
        self._mask.valid = True
        return found[2]

    def _compute_mask(self, key) -> bool:
        """Compute the current (unfinished) state's mask into the engine's
        bits (valid now), cached under ``key``: whether it is empty.  A
        grammar without token-level filters takes one GIL-free call
        (``MaskComputer.fill_mask``, which ``grammask.engine.batch`` runs
        for many engines at once)."""
        compiled = self.compiled
        if compiled.mask_step is not None:
            work, empty = compiled.mask_computer.fill_mask(self._recognizer, self._bits,
                                                           compiled.mask_step)
            return self._mask_computed(key, work, empty, 0)
        bits = self._bits
        n_fallbacks = self._stats["canonical_fallbacks"]
        recognizer = self._recognizer
        recognizer.limit_work(compiled.config.max_earley_work_per_mask, "max_earley_work_per_mask")
        try:
            compiled.mask_computer.fill(recognizer, bits, self._narrow)
            if compiled.token_terminals is not None:
                compiled.token_terminals.apply(recognizer, bits)
            may_end = recognizer.is_accepting()
            if compiled.canonical is not None:
                may_end = self._apply_canonical(bits, may_end)
            work = recognizer.work_spent
        finally:
            recognizer.limit_work(None)
        if may_end:
            if compiled.config.eager_end:
                bits[:] = 0
            self._set_eos(bits)
        return self._mask_computed(key, work, bitset.is_empty(bits),
                                   self._stats["canonical_fallbacks"] - n_fallbacks)

    def _mask_computed(self, key, work: int, empty: bool, n_fallbacks: int) -> bool:
        """Record a mask just computed into the engine's bits (valid now):
        its work, and its cache entry under ``key`` (with the canonical
        fallbacks counted while computing it).  Returns ``empty``."""
        self._mask.max_work = max(self._mask.max_work, work)
        if key is not None:
            self._cache_mask(key, n_fallbacks, empty)
        self._mask.valid = True
        return empty

    def _mask_ready(self) -> bool:
        """The current mask is known, or cannot fail (EOS accepted)."""
        return self._mask.valid or self._mask.finished

    def _queue_cached_mask(self, batch, row: int, tag: int) -> Optional[tuple]:
        """A batch's first phase of the mask of an engine whose grammar has
        a whole-mask cache and a ``MaskStep`` (``grammask.engine.batch``;
        ``MaskBatch.add_states`` queues the others): (job index, cache key)
        of the GIL-free job queued on ``batch`` under ``tag``, its mask
        copied into row ``row`` (-1: none); None when no job is needed
        (valid, finished, found in the cache: taken) or possible (token-level
        filters: ``allowed_bitset`` computes the mask then)."""
        if self._mask.valid or self._mask.finished or self.compiled.mask_step is None:
            return None
        key = self._mask_cache_key()
        empty = self._take_cached_mask(key)
        if empty is not None:
            if empty:
                self._warn_dead_end()
            return None
        return batch.add_state(self._mask, row, tag), key

    def _cache_mask(self, key, n_fallbacks: int, empty: bool) -> None:
        """Put the mask just computed in the grammar's whole-mask cache."""
        cached = self._bits.copy()
        cached.flags.writeable = False
        self.compiled.mask_cache.put(key, (cached, n_fallbacks, empty))

    def _warn_dead_end(self) -> None:
        self._stats["dead_ends"] += 1
        warn_caller(
            f"dead end after {len(self.output_bytes())} bytes: the output is not a complete "
            f"sentence and no token of the vocabulary can continue it; allowed next bytes: "
            f"{bitset.byte_list(self._recognizer.allowed_first_bytes())}",
            DeadEndWarning)

    def _set_eos(self, bits: np.ndarray) -> None:
        for word, mask in self.compiled.eos_word_masks:
            bits[word] |= mask

    def _apply_canonical(self, bits: np.ndarray, may_end: bool) -> bool:
        """AND the grammar mask in ``bits`` with the canonical filter, then drop
        joint dead ends (``CanonicalLookahead``).  Returns whether EOS stays
        allowed: the grammar accepts and the tokens are canonical as they
        stand.  When nothing would be left, the step falls back to the
        grammar mask (and EOS to the grammar's verdict), counted in
        ``stats()["canonical_fallbacks"]``."""
        compiled = self.compiled
        canonical = compiled.canonical
        state = self._canonical_state
        canonical_end = may_end and canonical.is_complete_canonical(state)
        if bitset.is_empty(bits):
            return may_end
        grammar_bits = bits.copy()
        canonical.apply(state, bits)
        if compiled.lookahead is not None and not bitset.is_empty(bits):
            n_removed, cut_off = compiled.lookahead.prune(self._recognizer, state, bits, self._narrow)
            self._stats["lookahead_pruned"] += n_removed
            self._stats["lookahead_cutoffs"] += cut_off
        if canonical_end or not bitset.is_empty(bits):
            return canonical_end
        bits[:] = grammar_bits
        self._stats["canonical_fallbacks"] += 1
        return may_end

    def allowed_bitset(self) -> np.ndarray:
        """The current mask as a read-only uint32 bitset (bit t%32 of word t//32)."""
        view = self._current_bits().view()
        view.flags.writeable = False
        return view

    def compute_allowed_token_ids(self) -> np.ndarray:
        """Sorted np.int32 array of the allowed token ids (EOS included when allowed)."""
        return allowed_ids(self._current_bits(), self.compiled.vocab.size)

    def is_token_allowed(self, token_id: int) -> bool:
        """Token ``token_id`` is in the current mask (False for an id outside
        the vocabulary); InvalidArgumentType unless it is an int."""
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise InvalidArgumentType(f"token id must be an int, got {token_id!r}")
        bits = self._current_bits()
        token_id = int(token_id)
        return 0 <= token_id < self.compiled.vocab.size and bitset.has(bits, token_id)

    def forced_bytes(self, max_bytes: int = 256) -> bytes:
        """The bytes every continuation of the output starts with (at most
        ``max_bytes``; empty when the output is complete or branches next).
        The engine is unchanged (``grammask.engine.forced``)."""
        return forced.forced_bytes(self, max_bytes)

    def compute_forced_tokens(self, max_tokens: int = 64) -> list:
        """The token ids every allowed continuation starts with (jump-forward
        tokens; at most ``max_tokens``, never EOS): with a canonical filter,
        what the model's tokenizer would produce for the forced text, up to
        where that tokenization still depends on what follows.  Accepting
        them in order always succeeds; the engine itself is unchanged
        (``grammask.engine.forced``)."""
        return forced.forced_tokens(self, max_tokens)

    def fill_bitmask(self, bitmask, row: int = 0) -> None:
        """Write the mask into row ``row`` of an int32 [rows, ceil(V/32)]
        array (numpy or torch), xgrammar's layout."""
        write_bitmask(bitmask, self._current_bits(), row)

    def mask_logits(self, logits):
        """Set disallowed tokens' logits to -inf, in place; numpy or torch,
        1-D or [rows, V] (every row gets this engine's mask), contiguous or
        strided.  The last dimension must be at least the vocabulary size;
        extra columns (padded model vocabularies) are disallowed."""
        check_logits(logits, self.compiled.vocab.size)
        apply_mask(logits, self._current_bits(), self.compiled.vocab.size)
        return logits

    def modify_possible_logits(self, token_id, logits) -> Status:
        """Seed API: accept ``token_id`` (None at the first step), then mask
        ``logits`` in place.  Returns the Status after accepting."""
        check_logits(logits, self.compiled.vocab.size)
        status = self.try_accept_new_token(token_id) if token_id is not None else self._status()
        self.mask_logits(logits)
        return status

    def __repr__(self) -> str:
        return (f"Engine(steps={self._n_steps}, finished={self.is_finished()}, "
                f"can_end={self.can_end()})")
