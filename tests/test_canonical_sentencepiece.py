"""SentencePiece BPE canonical filter (Mistral v1 / v3 models).  Oracle: ``sp.encode``."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
import sentencepiece as spm
import mistral_common

from grammask import bitset
from grammask.canonical import build_canonical_filter


MODELS = ["tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"]
_LOADED: dict = {}


@pytest.fixture(params=MODELS, scope="module")
def model(request):
    if request.param not in _LOADED:
        path = os.path.join(os.path.dirname(mistral_common.__file__), "data", request.param)
        processor = spm.SentencePieceProcessor(model_file=path)
        _LOADED[request.param] = (processor, build_canonical_filter(processor))
    return _LOADED[request.param]


def _bytes_of(processor, token_id):
    piece = processor.id_to_piece(token_id)
    if processor.is_byte(token_id):
        return bytes([int(piece[3:5], 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


def _oracle_canonical(processor, ids):
    data = b"".join(_bytes_of(processor, t) for t in ids)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.startswith(" ") and processor.encode(text[1:]) == list(ids)


TEXTS = [
    "Hello world, this is a test.  And \"quoted\" stuff\n\n  indented 12345 digits 3.14159",
    '{\n  "name": "Alice",\n  "age": 30,\n  "tags": ["a", "b"]\n}',
    '{"name":"Bob","items":[1,2,3],"ok":true}',
    "def f(x):\n    return x  + 1\n\tpass",
    "héllo wörld 日本語のテキスト 🎉 ☃ 𝄞 Ελληνικά",
    "   leading and trailing   ",
]


@pytest.mark.parametrize("text", TEXTS)
def test_every_prefix_of_the_encoding_is_accepted(model, text):
    processor, flt = model
    assert flt.name == "sentencepiece-bpe"
    ids = processor.encode(text)
    state = flt.initial_state()
    for step, token_id in enumerate(ids):
        assert token_id not in set(flt.forbidden_token_ids(state).tolist()), (text, step)
        assert flt.is_allowed(state, token_id)
        state = flt.advance(state, token_id)
    assert flt.is_complete_canonical(state)


def test_first_token_needs_the_dummy_prefix(model):
    processor, flt = model
    state = flt.initial_state()
    assert not flt.is_allowed(state, processor.piece_to_id("Hello"))
    assert flt.is_allowed(state, processor.piece_to_id("\u2581Hello"))


def test_byte_fallback_only_for_characters_absent_from_the_vocabulary(model):
    processor, flt = model
    state = flt.advance(flt.initial_state(), processor.piece_to_id("\u2581"))
    byte_a = processor.piece_to_id("<0x61>")  # "a" is a piece: never byte-spelled
    assert not flt.is_allowed(state, byte_a)
    newline = processor.piece_to_id("<0x0A>")  # "\n" is not a piece
    assert flt.is_allowed(state, newline)
    lead = processor.piece_to_id("<0xF0>")  # 𝄞 = F0 9D 84 9E, not a piece
    assert flt.is_allowed(state, lead)
    state = flt.advance(state, lead)
    assert not flt.is_complete_canonical(state)
    assert not flt.is_allowed(state, processor.piece_to_id("\u2581a"))
    for value in (0x9D, 0x84, 0x9E):
        token_id = processor.piece_to_id(f"<0x{value:02X}>")
        assert flt.is_allowed(state, token_id)
        state = flt.advance(state, token_id)
    assert flt.is_complete_canonical(state)


def test_pair_test_matches_sentencepiece_on_sampled_pairs(model):
    processor, flt = model
    table = flt.backend.merges
    firsts = [i for i, d in enumerate(table.token_bytes) if d is not None and d.startswith(b" ")]
    seconds = [i for i, d in enumerate(table.token_bytes) if d is not None]
    rng = random.Random(2)
    for _ in range(1500):
        first = rng.choice(firsts)
        forbidden = table.forbidden_after(first)
        second = int(rng.choice(forbidden)) if rng.random() < 0.5 and len(forbidden) else rng.choice(seconds)
        expected = _oracle_canonical(processor, [first, second])
        state = flt.advance(flt.initial_state(), first)
        assert flt.is_allowed(state, second) == expected, (processor.id_to_piece(first), processor.id_to_piece(second))
        assert bitset.has(flt.keep_bitset(state), second) == expected
        assert (second not in set(forbidden.tolist())) == expected


def test_random_walks_are_canonical(model):
    processor, flt = model
    rng = random.Random(4)
    for _ in range(4):
        state = flt.initial_state()
        ids = []
        for _ in range(60):
            mask = np.ones(flt.vocab_size, dtype=bool)
            mask[flt.forbidden_token_ids(state)] = False
            mask[list(flt.backend.never_filtered_ids)] = False
            allowed = np.flatnonzero(mask)
            assert len(allowed)
            token_id = int(rng.choice(allowed.tolist()))
            ids.append(token_id)
            state = flt.advance(state, token_id)
            assert flt.is_complete_canonical(state) == _oracle_canonical(processor, ids), ids


def test_fresh_tokens_end_in_the_state_they_reach_from_the_start(model):
    """``fresh_words``: the state after a fresh token is the one it reaches
    from the initial state (what the lookahead's per-grammar-state verdicts
    rely on), on states of random canonical walks, byte-spelled characters
    included."""
    processor, flt = model
    rng = random.Random(5)
    byte_ids = [int(i) for i in flt.backend.byte_token_ids if i >= 0]
    is_byte = set(byte_ids)
    start = flt.initial_state()
    n_partial = 0
    for _ in range(3):
        state = start
        for _ in range(40):
            fresh = flt.fresh_bitset(state)
            n_partial += fresh is None
            if fresh is not None:
                for token_id in rng.sample(range(flt.vocab_size), 200) + byte_ids[::16]:
                    if bitset.has(fresh, token_id):
                        assert flt.advance(state, token_id) == flt.advance(start, token_id)
            allowed = bitset.token_ids(flt.keep_bitset(state), flt.vocab_size)
            allowed = [t for t in allowed.tolist() if t not in flt.backend.never_filtered_ids]
            # favour byte tokens so walks pass through open byte-spelled characters
            bytes_allowed = [t for t in allowed if t in is_byte]
            token_id = rng.choice(bytes_allowed if bytes_allowed and rng.random() < 0.5 else allowed)
            state = flt.advance(state, token_id)
    assert n_partial
