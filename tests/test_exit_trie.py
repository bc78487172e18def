"""Exit tries (``exit_trie.merge_subtrees``) against a brute-force oracle.

Oracle: for exit nodes spelling prefixes p1..pk of a vocabulary trie, the
merged trie must spell exactly the non-empty remainders ``t[len(p):]`` of the
tokens t below some pi, each path carrying (as a multiset) the ids of the
tokens whose remainder it spells, once per exit node it passes through; the
layout must stay a valid preorder trie with children sorted by byte.  The
alphabets include wide ones so that nodes with many children from several
sources take the counting sort, not only the insertion sort.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask._core.exit_trie import merge_subtrees
from grammask._core.trie_walk import TrieView
from grammask.vocab import TokenTrie, Vocabulary
from support.trie_paths import preorder_paths


ALPHABETS = [b"ab", b"abc\xff", bytes(range(0x20, 0x7f)), bytes(range(256))]


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_merged_trie_spells_every_remainder(data):
    alphabet = data.draw(st.sampled_from(ALPHABETS))
    piece = st.binary(min_size=1, max_size=4).map(lambda b: bytes(alphabet[x % len(alphabet)] for x in b))
    tokens = data.draw(st.lists(piece, min_size=1, max_size=120, unique=True))
    vocab = Vocabulary([None, *tokens], eos_token_ids=[0])
    trie = TokenTrie.from_vocabulary(vocab)
    view = TrieView.from_token_trie(trie)
    paths = preorder_paths(trie.node_bytes, trie.node_subtree_ends)
    candidates = list(range(1, trie.n_nodes))
    exits = sorted(data.draw(st.lists(st.sampled_from(candidates), max_size=12, unique=True))
                   if candidates else [])
    merged = merge_subtrees(view, np.asarray(exits, dtype=np.int32), vocab.size)

    expected: dict[bytes, Counter] = {}
    for node in exits:
        prefix = paths[node]
        for token_id, token in enumerate(vocab.token_bytes):
            if token is not None and len(token) > len(prefix) and token.startswith(prefix):
                remainder = token[len(prefix):]
                for cut in range(1, len(remainder) + 1):
                    expected.setdefault(remainder[:cut], Counter())
                expected[remainder][token_id] += 1

    m_bytes, m_ends, m_offsets, m_ids = merged.arrays()
    m_paths = preorder_paths(m_bytes, m_ends)
    got = {m_paths[node]: Counter(m_ids[m_offsets[node]:m_offsets[node + 1]].tolist())
           for node in range(1, merged.n_nodes)}
    assert got == expected
    assert m_paths == sorted(m_paths)          # preorder, children sorted by byte
    assert len(set(m_paths)) == len(m_paths)   # each remainder spelled once
    assert merged.max_depth >= max((len(path) for path in m_paths), default=0)


def test_many_children_from_several_sources_come_out_sorted():
    """Two exit nodes with 100 one-byte children each (byte order reversed
    between them): the root's 200 children take the counting sort."""
    tails = [bytes([b]) for b in range(0x30, 0x30 + 100)]
    tokens = [b"a", b"b"] + [b"a" + tail for tail in tails] + [b"b" + tail for tail in reversed(tails)]
    vocab = Vocabulary([None, *tokens], eos_token_ids=[0])
    trie = TokenTrie.from_vocabulary(vocab)
    view = TrieView.from_token_trie(trie)
    paths = preorder_paths(trie.node_bytes, trie.node_subtree_ends)
    exits = np.asarray([paths.index(b"a"), paths.index(b"b")], dtype=np.int32)
    m_bytes, m_ends, m_offsets, m_ids = merge_subtrees(view, exits, vocab.size).arrays()
    m_paths = preorder_paths(m_bytes, m_ends)
    assert m_paths == [b""] + tails
    for node, tail in enumerate(tails, start=1):
        ids = sorted(m_ids[m_offsets[node]:m_offsets[node + 1]].tolist())
        assert ids == sorted([tokens.index(b"a" + tail) + 1, tokens.index(b"b" + tail) + 1])
