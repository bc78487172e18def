"""compile(): a grammar joined with a vocabulary and a Config, cached per process.

What it computes
    ``compile(grammar, vocab, config)`` joins a normalized grammar (LNF
    arrays), a vocabulary (token bytes, EOS and special ids) and a Config into
    an immutable ``CompiledGrammar``: the Earley core's flat tables, the token
    trie, a ``MaskComputer`` (per-terminal token sets, filled lazily under a
    lock), for a grammar without token-level filters the ``MaskStep`` that
    computes its whole mask in one GIL-free call, the token-level steps of
    its token terminals
    (``grammask.engine.token_terminals``), the canonical filter when exact for
    the vocabulary's tokenizer and the grammar has no token terminals,
    its lookahead (``grammask.engine.lookahead``), and a cache of whole masks.
    ``clear_caches()`` forgets every process-wide cache.

Data layout
    Compiled grammars sit in a process-wide ``LRU`` of 32 entries keyed by
    (grammar fingerprint, vocabulary fingerprint, Config); per-vocabulary
    tables in ``vocabulary_tables``.  ``mask_cache`` maps (the recognizer's
    exact ``state_key()``, canonical state) to (read-only mask bitset,
    canonical fallbacks counted while computing it, whether it is empty).

Invariants
    A CompiledGrammar is immutable and thread-safe apart from its caches,
    which lock their writes; share one between many Engines.  Equal mask
    cache keys have equal grammar masks, acceptance and lookahead verdicts
    (the state key is the recognizer's future, compaction-invariant).

Seeds: the kbnf post (docs/references.md) (compile once,
many sequences), xgrammar's ``GrammarCompiler`` / ``CompiledGrammar`` split.
"""

from __future__ import annotations

import sys
from typing import Optional

import numpy as np

from grammask._core.earley import compiled_tables
from grammask._core.earley_tables import clear_prepared_dfas
from grammask._core.mask_computer import MaskComputer, MaskStep, clear_hubs
from grammask._core.token_set_store import clear_digests
from grammask.bitset import n_words, word_masks
from grammask.config import Config
from grammask.engine import vocab_tables
from grammask.engine.lookahead import CanonicalLookahead
from grammask.engine.lru import LRU
from grammask.engine.vocab_tables import vocabulary_tables
from grammask.engine.token_terminals import TokenTerminals
from grammask.errors import InvalidArgument, VocabularyError
from grammask.grammar.terminal_keys import clear_compiled_terminals
from grammask.vocab import Vocabulary

_COMPILED = LRU(32)


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
        tables = vocabulary_tables(vocab)
        self.trie = tables.trie
        self.mask_computer = MaskComputer(self.tables, tables.trie_view, vocab.size,
                                          store=tables.token_sets)
        self.n_words = n_words(vocab.size)
        self.eos_token_ids = np.asarray(vocab.eos_token_ids, dtype=np.int32)
        self.eos_word_masks = word_masks(vocab.eos_token_ids, self.n_words)
        kinds = getattr(grammar, "token_terminal_kinds", frozenset())
        self.token_terminals = TokenTerminals(kinds, tables) if kinds else None
        if kinds and config.canonical:
            raise InvalidArgument(
                "Config(canonical=True) with token terminals (paragraph_token!, any!): such a grammar "
                "chooses tokens itself; use canonical=None (the filter is then off) or False")
        if config.canonical is False or kinds:
            self.canonical = None
        else:
            self.canonical = tables.canonical_filter()
            if config.canonical and self.canonical is None:
                raise VocabularyError(
                    "Config(canonical=True) but no exact canonical filter is known for this "
                    f"vocabulary's tokenizer ({vocab.tokenizer_kind}); use canonical=None or False")
        self.mask_cache = LRU(config.mask_cache_entries) if config.mask_cache_entries > 0 else None
        self.mask_step = (MaskStep(self.n_words, self.eos_word_masks, config.max_earley_work_per_mask,
                                   config.eager_end)
                          if self.canonical is None and self.token_terminals is None else None)
        self.lookahead = None
        if self.canonical is not None and config.canonical_lookahead > 0:
            self.lookahead = CanonicalLookahead(self.mask_computer, self.canonical, vocab.token_bytes,
                                                tables.byte_tokens, self.n_words,
                                                (tables.byte_order, tables.byte_rank),
                                                config.canonical_lookahead,
                                                budget=config.canonical_lookahead_budget,
                                                shared=tables.witnesses)

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


def clear_caches(vocabularies: bool = True) -> None:
    """Forget every process-wide cache, so the next ``compile`` starts cold.

    Always: compiled grammars, terminal DFAs (those the grammar front end's
    terminal compilers share too, and their prepared Earley tables, digests
    and hubs) and the token sets grammars share per vocabulary.
    With ``vocabularies`` (the default), also the per-vocabulary tables
    (token trie, canonical filter) and the canonical filters built per
    tokenizer; ``vocabularies=False`` keeps them (they take seconds for a
    large vocabulary).  The canonical filters' and the token sets' disk
    caches are left alone.  Existing
    engines and compiled grammars keep working: they hold what they use."""
    _COMPILED.clear()
    clear_compiled_terminals()
    terminals = sys.modules.get("grammask.terminals")
    if terminals is not None:
        for value in vars(terminals).values():
            if not isinstance(value, type) and callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
    clear_prepared_dfas()
    clear_digests()
    clear_hubs()
    vocab_tables.clear_token_sets()
    if vocabularies:
        vocab_tables.clear()
        if "grammask.canonical" in sys.modules:
            from grammask.canonical import clear_built_filters
            clear_built_filters()
