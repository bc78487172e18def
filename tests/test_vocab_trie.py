"""TokenTrie invariants, checked against a brute-force set of prefixes."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.errors import VocabularyError
from grammask.vocab import TokenTrie, Vocabulary


def node_paths(trie: TokenTrie) -> list[bytes]:
    """Bytes from the root to each node, rebuilt from depths and edge bytes alone."""
    paths = [b""]
    by_depth = [b""]
    for node in range(1, trie.n_nodes):
        depth = int(trie.node_depths[node])
        path = by_depth[depth - 1] + bytes([int(trie.node_bytes[node])])
        del by_depth[depth:]
        by_depth.append(path)
        paths.append(path)
    return paths


def check_against_brute_force(vocab: Vocabulary, trie: TokenTrie) -> None:
    text_ids = [token_id for token_id in range(vocab.size)
                if vocab.token_bytes[token_id] and token_id not in vocab.special_token_ids]
    prefixes = {b""}
    ids_by_bytes: dict[bytes, list[int]] = {}
    for token_id in text_ids:
        data = vocab.token_bytes[token_id]
        ids_by_bytes.setdefault(data, []).append(token_id)
        prefixes.update(data[:length] for length in range(1, len(data) + 1))
    paths = node_paths(trie)
    # one node per distinct prefix, in preorder with children sorted by byte = sorted order
    assert paths == sorted(prefixes)
    assert trie.n_nodes == len(prefixes)
    assert trie.node_depths.tolist() == [len(path) for path in paths]
    assert trie.max_depth == max(len(path) for path in paths)
    for node, path in enumerate(paths):
        end = int(trie.node_subtree_ends[node])
        expected_end = node + sum(1 for other in paths if other.startswith(path))
        assert end == expected_end, (node, path)
        assert all(other.startswith(path) for other in paths[node:end])
        assert sorted(trie.node_tokens(node).tolist()) == trie.node_tokens(node).tolist()
        assert trie.node_tokens(node).tolist() == sorted(ids_by_bytes.get(path, []))
        for child in trie.children(node):
            assert paths[child][:-1] == path
    assert sorted(trie.token_ids.tolist()) == text_ids
    assert trie.token_ids.dtype == np.int32 and trie.node_subtree_ends.dtype == np.int32
    for token_id in range(vocab.size):
        node = int(trie.token_end_nodes[token_id])
        if token_id in text_ids:
            assert paths[node] == vocab.token_bytes[token_id]
        else:
            assert node == -1
    for byte in range(256):
        start, end = trie.first_byte_ranges[byte].tolist()
        members = [node for node, path in enumerate(paths) if path[:1] == bytes([byte])]
        if members:
            assert (start, end) == (members[0], members[-1] + 1)
            assert paths[start] == bytes([byte])
        else:
            assert (start, end) == (0, 0)


def test_small_trie_by_hand():
    vocab = Vocabulary([b"ab", b"a", b"b", b"abc", b"ab", b"</s>", b"", None], eos_token_ids=[5])
    trie = TokenTrie.from_vocabulary(vocab)
    # nodes: root, a, ab, abc, b
    assert trie.node_bytes.tolist() == [0, ord("a"), ord("b"), ord("c"), ord("b")]
    assert trie.node_depths.tolist() == [0, 1, 2, 3, 1]
    assert trie.node_subtree_ends.tolist() == [5, 4, 4, 4, 5]
    assert trie.node_token_offsets.tolist() == [0, 0, 1, 3, 4, 5]
    assert trie.token_ids.tolist() == [1, 0, 4, 3, 2]
    assert trie.token_end_nodes.tolist() == [2, 1, 4, 3, 2, -1, -1, -1]
    assert trie.first_byte_ranges[ord("a")].tolist() == [1, 4]
    assert trie.first_byte_ranges[ord("b")].tolist() == [4, 5]
    assert trie.max_depth == 3
    assert trie.children(0) == [1, 4]
    check_against_brute_force(vocab, trie)


def test_arrays_are_read_only():
    trie = TokenTrie.from_vocabulary(Vocabulary([b"a", b"b"], eos_token_ids=[1]))
    with pytest.raises(ValueError):
        trie.node_bytes[0] = 1


def test_trie_with_no_text_tokens_is_a_root():
    trie = TokenTrie.from_vocabulary(Vocabulary([b"", None, b"</s>"], eos_token_ids=[2]))
    assert trie.n_nodes == 1 and trie.n_tokens == 0
    assert trie.node_subtree_ends.tolist() == [1]
    assert trie.node_token_offsets.tolist() == [0, 0]


def test_empty_token_cannot_enter_the_trie():
    with pytest.raises(VocabularyError) as error:
        TokenTrie.from_token_bytes([b"a", b""], [0, 7], 8)
    assert error.value.token_id == 7


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=5),
                          st.sampled_from([b"a", b"ab", b"abc", b"\xff", b"\x00", b"b"])),
                min_size=1, max_size=40), st.data())
def test_random_tries_match_brute_force(token_bytes, data):
    size = len(token_bytes)
    eos = data.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=2))
    special = data.draw(st.lists(st.integers(0, size - 1), max_size=4))
    vocab = Vocabulary(token_bytes, eos, special)
    check_against_brute_force(vocab, TokenTrie.from_vocabulary(vocab))


def test_real_vocabulary_trie_against_brute_force(llama3_vocab):
    trie = TokenTrie.from_vocabulary(llama3_vocab)
    paths = node_paths(trie)
    prefixes = {b""}
    for token_id in llama3_vocab.allowed_text_token_ids.tolist():
        data = llama3_vocab.token_bytes[token_id]
        prefixes.update(data[:length] for length in range(1, len(data) + 1))
    assert paths == sorted(prefixes)
    # subtree ends: the next node whose path does not extend this one (sorted order)
    for node in range(0, trie.n_nodes, 997):
        end = int(trie.node_subtree_ends[node])
        assert all(path.startswith(paths[node]) for path in paths[node:end])
        assert end == trie.n_nodes or not paths[end].startswith(paths[node])
    for token_id in llama3_vocab.allowed_text_token_ids.tolist()[::101]:
        assert paths[int(trie.token_end_nodes[token_id])] == llama3_vocab.token_bytes[token_id]


def test_trie_on_tekken_ends_every_text_token_at_its_bytes(tekken_vocab):
    """Every text token of the 131k vocabulary ends at the node spelling its
    bytes (the build time is measured in benchmarks/bench_vocab.py)."""
    trie = TokenTrie.from_vocabulary(tekken_vocab)
    assert trie.n_tokens == 130_072
    for token_id in tekken_vocab.allowed_text_token_ids.tolist()[::97]:
        node = int(trie.token_end_nodes[token_id])
        assert int(trie.node_depths[node]) == len(tekken_vocab.token_bytes[token_id])
        ids = trie.token_ids[trie.node_token_offsets[node]:trie.node_token_offsets[node + 1]]
        assert token_id in ids.tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=4), min_size=1, max_size=25), st.randoms())
def test_input_order_does_not_matter(datas, random):
    ids = list(range(len(datas)))
    reference = TokenTrie.from_token_bytes(datas, ids, len(datas))
    order = ids[:]
    random.shuffle(order)
    shuffled = TokenTrie.from_token_bytes([datas[i] for i in order], order, len(datas))
    for name in ("node_bytes", "node_subtree_ends", "node_depths", "node_token_offsets", "token_ids",
                 "token_end_nodes", "first_byte_ranges"):
        assert np.array_equal(getattr(reference, name), getattr(shuffled, name)), name


def test_trie_view_refuses_malformed_arrays():
    """``TrieView`` checks every array a walk indexes (a trie may come from
    disk): subtree ends in range and nested, token offsets a non-decreasing
    cover of the token ids, token ids inside the vocabulary."""
    from grammask._core.trie_walk import TrieView

    trie = TokenTrie.from_vocabulary(Vocabulary([b"abc", b"a", b"ab", b"b", b"ac", b"</s>"], eos_token_ids=[5]))
    node_bytes, ends, offsets, ids = (np.array(array) for array in (
        trie.node_bytes, trie.node_subtree_ends, trie.node_token_offsets, trie.token_ids))
    TrieView(node_bytes, ends, offsets, ids, trie.max_depth, 6)
    bad_cases = []
    for node, end in ((0, len(node_bytes) - 1), (2, 2), (1, len(node_bytes) + 1)):
        broken = ends.copy()
        broken[node] = end
        bad_cases.append((broken, offsets, ids))
    crossing = ends.copy()   # node 2 (under 1) ends past its parent's subtree
    crossing[2] = ends[1] + 1
    assert ends[1] + 1 <= len(node_bytes)
    bad_cases.append((crossing, offsets, ids))
    for broken in (np.concatenate([[1], offsets[1:]]), np.concatenate([offsets[:-1], [len(ids) - 1]])):
        bad_cases.append((ends, broken.astype(np.int32), ids))
    swapped = offsets.copy()
    swapped[1], swapped[2] = offsets[2] + 1, offsets[1]
    bad_cases.append((ends, swapped, ids))
    for token in (-1, 6):
        broken = ids.copy()
        broken[0] = token
        bad_cases.append((ends, offsets, broken))
    for case_ends, case_offsets, case_ids in bad_cases:
        with pytest.raises(ValueError):
            TrieView(node_bytes, case_ends, case_offsets, case_ids, trie.max_depth, 6)
