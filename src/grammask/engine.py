"""compile() and Engine: per-step token masks for one sequence.

What it computes
    ``compile(grammar, vocab, config)`` joins a normalized grammar (LNF
    arrays), a vocabulary (token bytes, EOS and special ids) and a Config into
    an immutable ``CompiledGrammar``: the Earley core's flat tables, the token
    trie, a ``MaskComputer`` (per-terminal token sets, filled lazily under a
    lock) and, when exact for the vocabulary's tokenizer, the canonical
    filter.  ``Engine`` is the cheap per-sequence state over it: an Earley
    recognizer, the accepted-token history and the canonical states.

Data layout
    The mask is a uint32 bitset ``bits[ceil(V/32)]``: bit ``t % 32`` of word
    ``t // 32`` is token t.  ``fill_bitmask`` writes it as int32 (same bits,
    xgrammar's layout); ids and logits masks are derived from it.
    ``_steps`` holds one entry per accepted step (a token, EOS, or a byte
    string): ``(token_id or None, n_bytes, canonical_state)``; rollback pops
    entries and the recognizer's bytes.

Invariants
    * A rejected token, byte string, or logits array of the wrong size raises
      a typed error and leaves the engine exactly as it was.
    * EOS is allowed exactly when the bytes so far form a sentence; with
      ``Config(eager_end=True)`` it is then the only allowed token.  After EOS
      has been accepted only EOS stays allowed (so generation loops stop).
    * The grammar mask is exact; the canonical filter and its lookahead
      (``grammask.lookahead``) only remove tokens, EOS needs the tokens to be
      canonical as they stand, and both are skipped for a step (counted in
      ``stats()["canonical_fallbacks"]``) when nothing would be left.
    * ``try_accept_new_token(t)`` succeeds exactly when ``is_token_allowed(t)``
      (unless ``Config.accept_non_canonical``, which lets the grammar alone decide).
    * The current mask is computed at most once per state (``_bits_valid``),
      and whole masks are shared between engines through
      ``CompiledGrammar.mask_cache``, keyed by the recognizer's exact
      ``state_key()`` and the canonical state.

Seeds: ``constrained-decoding-engine-implementation-kbnf.txt`` (engine API,
mask from an Earley recognizer over a token trie), ``lab-12-01-regex-fsm-token-masks.txt``
(the guarantees: never a dead end, EOS only when complete).
"""

from __future__ import annotations

import enum
import threading
import warnings
from collections import OrderedDict
from typing import Optional

import numpy as np

from grammask._core.earley import EarleyRecognizer, compiled_tables
from grammask._core.mask import MaskComputer, TrieView, mask_rows, pop_probe, push_probe
from grammask.config import Config
from grammask.errors import TokenRejected, VocabularyError
from grammask.lookahead import CanonicalLookahead
from grammask.vocab import TokenTrie, Vocabulary


class DeadEndWarning(RuntimeWarning):
    """The output is not complete, yet no token of the vocabulary can
    continue it (the grammar needs bytes no token spells)."""


class Status(enum.Enum):
    ONGOING = "ongoing"
    FINISHED = "finished"


# ---------------------------------------------------------------------------
# Compilation
# ---------------------------------------------------------------------------

class _LRU:
    """A small thread-safe LRU map (compile cache, per-vocabulary tables)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(self, key, build):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = build()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return value

    def get(self, key):
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def clear(self):
        with self._lock:
            self._items.clear()


_COMPILED = _LRU(32)
_VOCAB_TABLES = _LRU(8)


class _VocabularyTables:
    """What a vocabulary contributes to every grammar: its trie (as C views)
    and its canonical filter (or None), built once per vocabulary."""

    def __init__(self, vocab: Vocabulary):
        self.trie = TokenTrie.from_vocabulary(vocab)
        self.trie_view = TrieView.from_token_trie(self.trie)
        self.byte_tokens = _byte_tokens(vocab)
        self._canonical = None
        self._canonical_built = False
        self._lock = threading.Lock()
        self._vocab = vocab

    def canonical_filter(self):
        with self._lock:
            if not self._canonical_built:
                self._canonical = _build_canonical(self._vocab)
                self._canonical_built = True
            return self._canonical


def _byte_tokens(vocab: Vocabulary) -> list:
    """byte_tokens[b]: the smallest non-special token id spelling exactly
    byte b, or -1."""
    found = [-1] * 256
    for token_id, data in enumerate(vocab.token_bytes):
        if data is not None and len(data) == 1 and found[data[0]] < 0 and not vocab.is_special(token_id):
            found[data[0]] = token_id
    return found


def _build_canonical(vocab: Vocabulary):
    try:
        from grammask.canonical import build_canonical_filter
    except ImportError:
        return None
    return build_canonical_filter(vocab)


OPT_IN_CANONICAL_KINDS = frozenset({"gguf", "llama"})
"""Vocabularies whose canonical filter runs only with ``Config(canonical=True)``:
on SmolLM2 through llama.cpp it made the demo's mask 15 ms per token instead
of 1 ms (new pre-token regions are costly on that pre-tokenizer), and a
prompt ending in a space (seeded into the filter) forbids ``{`` after it."""


class CompiledGrammar:
    """An immutable, thread-safe grammar x vocabulary x config product.

    Share one CompiledGrammar between many Engines (one per sequence)."""

    def __init__(self, grammar, vocab: Vocabulary, config: Config):
        if not isinstance(vocab, Vocabulary):
            raise VocabularyError(f"expected a grammask.Vocabulary, got {type(vocab).__name__}")
        self.grammar = grammar
        self.vocab = vocab
        self.config = config
        self.tables = compiled_tables(grammar.lnf)
        vocab_tables = _VOCAB_TABLES.get_or_build(vocab.fingerprint, lambda: _VocabularyTables(vocab))
        self.trie = vocab_tables.trie
        self.mask_computer = MaskComputer(self.tables, vocab_tables.trie_view, vocab.size)
        self.n_words = (vocab.size + 31) // 32
        self.eos_token_ids = np.asarray(vocab.eos_token_ids, dtype=np.int32)
        if config.canonical is False or (config.canonical is None
                                         and vocab.tokenizer_kind in OPT_IN_CANONICAL_KINDS):
            self.canonical = None
        else:
            self.canonical = vocab_tables.canonical_filter()
            if config.canonical and self.canonical is None:
                raise VocabularyError(
                    "Config(canonical=True) but no exact canonical filter is known for this "
                    f"vocabulary's tokenizer ({vocab.tokenizer_kind}); use canonical=None or False")
        # Whole masks by (Earley state key, canonical state): the key is the
        # recognizer's future (compaction-invariant), so equal keys have
        # equal grammar masks, acceptance and lookahead verdicts.
        self.mask_cache = _LRU(config.mask_cache_entries) if config.mask_cache_entries > 0 else None
        self.lookahead = None
        if self.canonical is not None and config.canonical_lookahead > 0:
            self.lookahead = CanonicalLookahead(self.mask_computer, self.canonical, vocab.token_bytes,
                                                vocab_tables.byte_tokens, self.n_words,
                                                config.canonical_lookahead,
                                                budget=config.canonical_lookahead_budget)

    @property
    def vocab_size(self) -> int:
        return self.vocab.size

    def __repr__(self) -> str:
        return (f"CompiledGrammar(vocab_size={self.vocab.size}, "
                f"canonical={getattr(self.canonical, 'name', None)!r})")


def compile(grammar, vocab: Vocabulary, config: Optional[Config] = None) -> CompiledGrammar:
    """Compile ``grammar`` for ``vocab``; cached by grammar fingerprint,
    vocabulary fingerprint and config."""
    config = config or Config()
    key = (grammar.fingerprint, vocab.fingerprint, config)
    return _COMPILED.get_or_build(key, lambda: CompiledGrammar(grammar, vocab, config))


# ---------------------------------------------------------------------------
# Engine
# ---------------------------------------------------------------------------

class Engine:
    """Per-sequence decoding state: accept tokens, compute masks, roll back.

    ``Engine(compiled)`` or ``Engine(grammar, vocab, config=None)``."""

    def __init__(self, grammar_or_compiled, vocab: Optional[Vocabulary] = None,
                 config: Optional[Config] = None):
        if isinstance(grammar_or_compiled, CompiledGrammar):
            if vocab is not None or config is not None:
                raise TypeError("Engine(compiled) takes no vocab or config")
            self._set_compiled(grammar_or_compiled)
        else:
            if vocab is None:
                raise TypeError("Engine(grammar, vocab, config=None): vocab is required")
            self._set_compiled(compile(grammar_or_compiled, vocab, config))

    # -- setup -------------------------------------------------------------

    def _set_compiled(self, compiled: CompiledGrammar):
        self.compiled = compiled
        self._bits = np.zeros(compiled.n_words, dtype=np.uint32)
        self._narrow = np.zeros(compiled.n_words, dtype=np.uint32) if compiled.lookahead else None
        self._stats = {"n_steps": 0, "canonical_fallbacks": 0, "non_canonical_accepts": 0,
                       "dead_ends": 0, "lookahead_pruned": 0, "lookahead_cutoffs": 0,
                       "mask_cache_hits": 0}
        self.reset()

    def initialize(self, grammar, vocab: Vocabulary, config: Optional[Config] = None) -> None:
        """Seed API: (re)initialize this engine on a grammar and vocabulary."""
        self._set_compiled(compile(grammar, vocab, config))

    def reset(self) -> None:
        """Back to the empty output."""
        config = self.compiled.config
        self._recognizer = EarleyRecognizer(self.compiled.tables, max_items=config.max_earley_items,
                                            rollback_horizon=config.max_rollback_bytes)
        self._steps: list = []
        self._finished_by_eos = False
        canonical = self.compiled.canonical
        self._canonical_state = canonical.initial_state() if canonical is not None else None
        self._bits_valid = False

    def seed_canonical_context(self, context_token_ids) -> None:
        """Seed the canonical filter with the prompt's last tokens (only
        before the first accepted token)."""
        if self._steps:
            raise ValueError("seed_canonical_context must be called before the first token")
        canonical = self.compiled.canonical
        if canonical is not None:
            self._canonical_state = canonical.initial_state(tuple(int(t) for t in context_token_ids))
            self._bits_valid = False

    def copy(self) -> "Engine":
        """An independent engine in the same state (sharing the compiled grammar)."""
        clone = Engine.__new__(Engine)
        clone.compiled = self.compiled
        clone._bits = self._bits.copy()
        clone._narrow = None if self._narrow is None else self._narrow.copy()
        clone._bits_valid = self._bits_valid
        clone._stats = dict(self._stats)
        clone._recognizer = self._recognizer.copy()
        clone._steps = list(self._steps)
        clone._finished_by_eos = self._finished_by_eos
        clone._canonical_state = self._canonical_state
        return clone

    # -- queries -------------------------------------------------------------

    @property
    def vocab(self) -> Vocabulary:
        return self.compiled.vocab

    @property
    def n_accepted(self) -> int:
        """Steps accepted so far (tokens, EOS and byte strings)."""
        return len(self._steps)

    def is_finished(self) -> bool:
        """EOS was accepted, or the output is complete and nothing can follow
        (or the config ends eagerly at the first complete match)."""
        if self._finished_by_eos:
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
        if self._finished_by_eos or not self._recognizer.is_accepting():
            return False
        if self.compiled.canonical is None or not self.compiled.vocab.eos_token_ids:
            return True
        eos_id = self.compiled.vocab.eos_token_ids[0]
        return bool((int(self._current_bits()[eos_id >> 5]) >> (eos_id & 31)) & 1)

    def output_bytes(self) -> bytes:
        """The bytes accepted so far."""
        parts = []
        for _, _, data, _ in self._steps:
            if data is not None:
                parts.append(data)
        return b"".join(parts)

    def stats(self) -> dict:
        stats = dict(self._stats)
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
        leaves that part out), so accept and ``is_token_allowed`` agree."""
        vocab = self.compiled.vocab
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise TokenRejected(f"token id must be an int, got {token_id!r}", token_id=None)
        token_id = int(token_id)
        if not 0 <= token_id < vocab.size:
            raise TokenRejected(f"token id {token_id} is outside the vocabulary (size {vocab.size})",
                                token_id=token_id)
        if self._finished_by_eos:
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
            self._finished_by_eos = True
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
        """Accept raw bytes as one step (all or nothing)."""
        data = bytes(data)
        if self._finished_by_eos:
            raise TokenRejected("bytes after EOS: the output is finished", data=data)
        if not data:
            return self._status()
        if self.compiled.config.eager_end and self._recognizer.is_accepting():
            raise TokenRejected("bytes rejected: the output is complete and eager_end is set",
                                data=data)
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
        previous_canonical = self._canonical_state
        canonical = self.compiled.canonical
        if canonical is not None and token_id is not None and data is not None:
            if not canonical.is_allowed(self._canonical_state, token_id):
                self._stats["non_canonical_accepts"] += 1  # accept_non_canonical, or a fallback mask
            self._canonical_state = canonical.advance(self._canonical_state, token_id)
        self._steps.append((token_id, n_bytes, data, previous_canonical))
        self._stats["n_steps"] += 1
        self._bits_valid = False

    def rollback(self, n_tokens: int) -> None:
        """Undo the last ``n_tokens`` accepted steps."""
        n_tokens = int(n_tokens)
        if n_tokens < 0 or n_tokens > len(self._steps):
            raise ValueError(f"cannot roll back {n_tokens} steps: {len(self._steps)} accepted")
        if n_tokens == 0:
            return
        popped = self._steps[-n_tokens:]
        n_bytes = sum(step[1] for step in popped)
        try:
            self._recognizer.pop(n_bytes)
        except ValueError as error:
            raise ValueError(
                f"cannot roll back {n_tokens} steps ({n_bytes} bytes): beyond "
                f"Config.max_rollback_bytes={self.compiled.config.max_rollback_bytes}") from error
        del self._steps[-n_tokens:]
        self._canonical_state = popped[0][3]
        if any(step[2] is None and step[0] is not None for step in popped):
            self._finished_by_eos = False
        self._bits_valid = False

    # -- masks ---------------------------------------------------------------

    def _current_bits(self) -> np.ndarray:
        if self._bits_valid:
            return self._bits
        bits = self._bits
        if self._finished_by_eos:
            bits[:] = 0
            self._set_eos(bits)
        else:
            self._fill_mask(bits)
            if not bits.any():
                self._stats["dead_ends"] += 1
                warnings.warn(
                    f"dead end after {len(self.output_bytes())} bytes: the output is not a complete "
                    f"sentence and no token of the vocabulary can continue it; allowed next bytes: "
                    f"{_byte_list(self._recognizer.allowed_first_bytes())}",
                    DeadEndWarning, stacklevel=3)
        self._bits_valid = True
        return bits

    def _fill_mask(self, bits: np.ndarray) -> None:
        """The mask of the current (unfinished) state into ``bits``, through
        the compiled grammar's whole-mask cache."""
        compiled = self.compiled
        cache = compiled.mask_cache
        if cache is not None:
            key = (self._recognizer.state_key(), self._canonical_state)
            found = cache.get(key)
            if found is not None:
                bits[:] = found[0]
                self._stats["canonical_fallbacks"] += found[1]
                self._stats["mask_cache_hits"] += 1
                return
        n_fallbacks = self._stats["canonical_fallbacks"]
        compiled.mask_computer.fill(self._recognizer, bits, self._narrow)
        may_end = self._recognizer.is_accepting()
        if compiled.canonical is not None:
            may_end = self._apply_canonical(bits, may_end)
        if may_end:
            if compiled.config.eager_end:
                bits[:] = 0
            self._set_eos(bits)
        if cache is not None:
            cached = bits.copy()
            cached.flags.writeable = False
            cache.put(key, (cached, self._stats["canonical_fallbacks"] - n_fallbacks))

    def _set_eos(self, bits: np.ndarray) -> None:
        for token_id in self.compiled.vocab.eos_token_ids:
            bits[token_id >> 5] |= np.uint32(1 << (token_id & 31))

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
        if not bits.any():
            return may_end
        grammar_bits = bits.copy()
        canonical.apply(state, bits)
        if compiled.lookahead is not None and bits.any():
            n_removed, cut_off = compiled.lookahead.prune(self._recognizer, state, bits, self._narrow)
            self._stats["lookahead_pruned"] += n_removed
            self._stats["lookahead_cutoffs"] += cut_off
        if bits.any() or canonical_end:
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
        bits = self._current_bits()
        flags = np.unpackbits(bits.view(np.uint8), bitorder="little")[: self.compiled.vocab.size]
        return np.flatnonzero(flags).astype(np.int32)

    def is_token_allowed(self, token_id: int) -> bool:
        bits = self._current_bits()
        token_id = int(token_id)
        return 0 <= token_id < self.compiled.vocab.size and bool((bits[token_id >> 5] >> (token_id & 31)) & 1)

    def fill_bitmask(self, bitmask, row: int = 0) -> None:
        """Write the mask into row ``row`` of an int32 [rows, ceil(V/32)]
        array (numpy or torch), xgrammar's layout."""
        bits = self._current_bits()
        n_words = self.compiled.n_words
        shape = tuple(bitmask.shape)
        if len(shape) == 1:
            if shape[0] != n_words:
                raise VocabularyError(f"bitmask has {shape[0]} words, expected {n_words}")
            target_row = None
        elif len(shape) == 2:
            if shape[1] != n_words:
                raise VocabularyError(f"bitmask rows have {shape[1]} words, expected {n_words}")
            if not 0 <= row < shape[0]:
                raise IndexError(f"row {row} outside a bitmask of {shape[0]} rows")
            target_row = row
        else:
            raise VocabularyError(f"bitmask must be 1-D or 2-D, got shape {shape}")
        words = bits.view(np.int32)
        if isinstance(bitmask, np.ndarray):
            if target_row is None:
                bitmask[:] = words
            else:
                bitmask[target_row, :] = words
            return
        import torch
        source = torch.from_numpy(words.copy()).to(bitmask.device)
        if target_row is None:
            bitmask.copy_(source)
        else:
            bitmask[target_row].copy_(source)

    def mask_logits(self, logits):
        """Set disallowed tokens' logits to -inf, in place; numpy or torch,
        1-D or [rows, V] (every row gets this engine's mask), contiguous or
        strided.  The last dimension must be at least the vocabulary size;
        extra columns (padded model vocabularies) are disallowed."""
        self._check_logits(logits)
        bits = self._current_bits()
        apply_bitset(logits, bits, self.compiled.vocab.size)
        return logits

    def _check_logits(self, logits) -> None:
        shape = tuple(getattr(logits, "shape", ()))
        size = self.compiled.vocab.size
        if len(shape) not in (1, 2):
            raise VocabularyError(f"logits must be 1-D or [rows, V], got shape {shape}")
        if shape[-1] < size:
            raise VocabularyError(
                f"logits have {shape[-1]} entries but the vocabulary has {size} tokens")

    def modify_possible_logits(self, token_id, logits) -> Status:
        """Seed API: accept ``token_id`` (None at the first step), then mask
        ``logits`` in place.  Returns the Status after accepting."""
        self._check_logits(logits)
        status = self.try_accept_new_token(token_id) if token_id is not None else self._status()
        self.mask_logits(logits)
        return status

    def __repr__(self) -> str:
        return (f"Engine(steps={len(self._steps)}, finished={self.is_finished()}, "
                f"can_end={self.can_end()})")


def _byte_list(allowed) -> str:
    """Printable list of the bytes set in a 32-byte bitset or 256 flags."""
    flags = np.unpackbits(np.frombuffer(bytes(allowed), dtype=np.uint8), bitorder="little") \
        if len(allowed) == 32 else np.asarray(allowed, dtype=bool)
    return ", ".join(repr(bytes([b])) for b in np.flatnonzero(flags)) or "none"


def apply_bitset(logits, bits: np.ndarray, vocab_size: int) -> None:
    """Mask ``logits`` (numpy or torch, 1-D or 2-D) in place with ``bits``."""
    if isinstance(logits, np.ndarray):
        _apply_numpy(logits, bits, vocab_size)
        return
    import torch
    if isinstance(logits, torch.Tensor):
        if logits.device.type == "cpu" and logits.dtype in (torch.float32, torch.float64) \
                and not logits.requires_grad:
            _apply_numpy(logits.numpy(), bits, vocab_size)
            return
        allowed = _allowed_flags(bits, logits.shape[-1], vocab_size)
        keep = torch.from_numpy(allowed).to(logits.device)
        logits.masked_fill_(~keep, float("-inf"))
        return
    raise VocabularyError(f"logits must be a numpy array or a torch tensor, got {type(logits).__name__}")


def _apply_numpy(logits: np.ndarray, bits: np.ndarray, vocab_size: int) -> None:
    rows = logits if logits.ndim == 2 else logits[None, :]
    if rows.dtype in (np.float32, np.float64):
        if not rows.flags.writeable:
            raise VocabularyError("logits array is read-only")
        mask_rows(rows, bits, vocab_size)
    else:
        rows[:, ~_allowed_flags(bits, rows.shape[-1], vocab_size)] = -np.inf


def _allowed_flags(bits: np.ndarray, n_columns: int, vocab_size: int) -> np.ndarray:
    flags = np.unpackbits(bits.view(np.uint8), bitorder="little").astype(bool)
    allowed = np.zeros(n_columns, dtype=bool)
    n = min(vocab_size, len(flags), n_columns)
    allowed[:n] = flags[:n]
    return allowed
