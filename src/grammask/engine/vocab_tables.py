"""What a vocabulary contributes to every grammar compiled for it.

What it computes
    ``vocabulary_tables(vocab)`` returns the ``VocabularyTables`` of a
    vocabulary: its token trie (and the trie's C view for the mask walk),
    the one-byte tokens (``byte_tokens``) the canonical lookahead tries first,
    the per-terminal token sets every grammar for it shares
    (``token_sets``, a ``TokenSetStore``), and its canonical filter (or
    None), built on first use.  A 131k-token
    vocabulary's trie takes seconds, so tables are built once per
    vocabulary and shared by every grammar.

Data layout
    A process-wide ``LRU`` of 8 entries keyed by the vocabulary's
    fingerprint.  ``byte_tokens[b]`` is the smallest non-special token id
    spelling exactly byte b, or -1.

Invariants
    Tables are immutable once built, except the canonical filter, built at
    most once under a lock.  ``clear()`` only forgets tables; grammars
    compiled from them keep theirs.
"""

from __future__ import annotations

import threading

from grammask._core.token_set_store import TokenSetStore
from grammask._core.trie_walk import TrieView
from grammask.engine.lru import LRU
from grammask.vocab import TokenTrie, Vocabulary

_TABLES = LRU(8)


class VocabularyTables:
    """The trie (as C views), one-byte tokens and canonical filter of one vocabulary."""

    def __init__(self, vocab: Vocabulary):
        self.trie = TokenTrie.from_vocabulary(vocab)
        self.trie_view = TrieView.from_token_trie(self.trie)
        self.byte_tokens = _byte_tokens(vocab)
        self.token_sets = TokenSetStore()
        self._canonical = None
        self._canonical_built = False
        self._lock = threading.Lock()
        self._vocab = vocab

    def canonical_filter(self):
        """The vocabulary's canonical filter, or None when none is exact for it."""
        with self._lock:
            if not self._canonical_built:
                self._canonical = _build_canonical(self._vocab)
                self._canonical_built = True
            return self._canonical


def vocabulary_tables(vocab: Vocabulary) -> VocabularyTables:
    """The cached tables of ``vocab`` (built on first use)."""
    return _TABLES.get_or_build(vocab.fingerprint, lambda: VocabularyTables(vocab))


def clear() -> None:
    """Forget every vocabulary's tables."""
    _TABLES.clear()


def clear_token_sets() -> None:
    """Forget the shared token sets of every vocabulary, keeping its trie
    and canonical filter."""
    for tables in _TABLES.values():
        tables.token_sets.clear()


def _byte_tokens(vocab: Vocabulary) -> list:
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
