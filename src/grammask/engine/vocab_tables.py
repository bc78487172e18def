"""What a vocabulary contributes to every grammar compiled for it.

What it computes
    ``vocabulary_tables(vocab)`` returns the ``VocabularyTables`` of a
    vocabulary: its token trie (and the trie's C view for the mask walk),
    the subtree heights below the root's children that token-set builds
    estimate their cost from (``mask_computer.root_subtree_heights``),
    the one-byte tokens (``byte_tokens``) the canonical lookahead tries first,
    the tokens in byte order (``byte_order``, its inverse ``byte_rank``: the
    order in which the lookahead visits candidates),
    the per-terminal token sets every grammar for it shares
    (``token_sets``, a ``TokenSetStore`` whose disk tier keeps them across
    processes, ``token_set_disk.py``), the canonical lookahead's witnesses
    (``witnesses``, ``grammask.engine.witnesses``), the token sets of token terminals
    (``token_terminal_bits``, ``grammask.engine.token_terminals``) and its
    canonical filter (or None), each built on first use.  A 131k-token
    vocabulary's trie takes seconds, so tables are built once per
    vocabulary and shared by every grammar.

Data layout
    A process-wide ``LRU`` of 8 entries keyed by the vocabulary's
    fingerprint.  ``byte_tokens[b]`` is the smallest non-special token id
    spelling exactly byte b, or -1.  ``byte_order`` (int32[V]) lists the
    trie's tokens in the trie's preorder, which is the order of their bytes
    (ties by id), then the other ids ascending; ``byte_rank[byte_order[r]]
    == r``.

Invariants
    Tables are immutable once built, except the canonical filter and the
    token terminals' bitsets, each built at most once under a lock, and the
    witnesses, which the lookaheads fill under the store's own lock.
    ``clear()`` only forgets tables; grammars compiled from them keep theirs.
"""

from __future__ import annotations

import threading

import numpy as np

from grammask._core.mask_computer import root_subtree_heights
from grammask._core.token_set_disk import TokenSetDisk
from grammask._core.token_set_store import TokenSetStore
from grammask._core.trie_walk import TrieView
from grammask.engine.lru import LRU
from grammask.engine.token_terminals import token_set, tokens_holding
from grammask.engine.witnesses import SharedWitnesses
from grammask.vocab import TokenTrie, Vocabulary

_TABLES = LRU(8)


class VocabularyTables:
    """The trie (as C views), one-byte tokens and canonical filter of one vocabulary."""

    def __init__(self, vocab: Vocabulary):
        self.trie = TokenTrie.from_vocabulary(vocab)
        self.trie_view = TrieView.from_token_trie(self.trie)
        # the token-set builds' cost estimates read it (a pass over the trie,
        # 2 ms on 128k tokens: part of the vocabulary's build, not a first mask's)
        root_subtree_heights(self.trie_view)
        self.byte_tokens = _byte_tokens(vocab)
        self.byte_order, self.byte_rank = _byte_order(self.trie, vocab.size)
        self.token_sets = TokenSetStore(disk=TokenSetDisk(self.trie_view, vocab.size))
        self.witnesses = SharedWitnesses()
        self._token_terminal_bits: dict = {}
        self._canonical = None
        self._canonical_built = False
        self._lock = threading.Lock()
        self._vocab = vocab

    def token_terminal_bits(self, kind: str):
        """The read-only bitset of the tokens a token terminal of ``kind`` matches."""
        return self._cached_bits(("kind", kind), lambda: token_set(self._vocab, kind))

    def tokens_holding(self, byte: int):
        """The read-only bitset of the tokens whose bytes contain ``byte``."""
        return self._cached_bits(("byte", byte), lambda: tokens_holding(self._vocab, byte))

    def _cached_bits(self, key, build):
        with self._lock:
            bits = self._token_terminal_bits.get(key)
            if bits is None:
                bits = build()
                bits.flags.writeable = False
                self._token_terminal_bits[key] = bits
            return bits

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
    """Forget the shared token sets and lookahead witnesses of every
    vocabulary, keeping its trie and canonical filter (grammars compiled
    before keep the witnesses they hold)."""
    for tables in _TABLES.values():
        tables.token_sets.clear()
        tables.witnesses = SharedWitnesses()


def _byte_tokens(vocab: Vocabulary) -> list:
    found = [-1] * 256
    for token_id, data in enumerate(vocab.token_bytes):
        if data is not None and len(data) == 1 and found[data[0]] < 0 and not vocab.is_special(token_id):
            found[data[0]] = token_id
    return found


def _byte_order(trie: TokenTrie, vocab_size: int) -> tuple:
    """(``byte_order``, ``byte_rank``), read-only int32[vocab_size] each (see
    the module docstring): the trie's token ids are stored in preorder, children
    in byte order, so they come in the order of their bytes."""
    in_trie = np.asarray(trie.token_ids, dtype=np.int32)
    outside = np.ones(vocab_size, dtype=bool)
    outside[in_trie] = False
    order = np.concatenate([in_trie, np.flatnonzero(outside).astype(np.int32)])
    rank = np.empty(vocab_size, dtype=np.int32)
    rank[order] = np.arange(vocab_size, dtype=np.int32)
    order.flags.writeable = False
    rank.flags.writeable = False
    return order, rank


def _build_canonical(vocab: Vocabulary):
    try:
        from grammask.canonical import build_canonical_filter
    except ImportError:
        return None
    return build_canonical_filter(vocab)
