"""Grammar mask AND canonical filter, end to end (issue 6 item 6).

Oracle: the tokenizer's own ``encode(decode(ids)) == ids`` (decode with the
vocabulary's bytes, special tokens off). Random logits choose among the
allowed tokens under the shipped JSON grammar; every finished output must be
the canonical tokenization of its text, with no step where the engine had to
fall back to the grammar mask (``stats()["canonical_fallbacks"]``): the
canonical lookahead removes tokens such as ``t`` when the grammar then
forces ``rue`` and ``true`` is one token.  EOS is taken with probability 1/2
whenever it is allowed, so most runs end; outputs cut at MAX_STEPS must
still be a prefix the filter accepted at every step.
"""

from __future__ import annotations

import numpy as np
import pytest

import grammask
from grammask.grammar import builtin

N_RUNS = 500
MAX_STEPS = 32


def run_generations(vocab, encode, seed: int, n_runs: int = N_RUNS):
    compiled = grammask.compile(builtin("json"), vocab, grammask.Config(canonical=True))
    rng = np.random.default_rng(seed)
    eos = set(vocab.eos_token_ids)
    n_canonical = n_finished = n_fallbacks = n_non_canonical_accepts = 0
    for _ in range(n_runs):
        engine = grammask.Engine(compiled)
        ids = []
        for _ in range(MAX_STEPS):
            allowed = engine.compute_allowed_token_ids()
            assert allowed.size > 0
            if engine.can_end() and rng.random() < 0.5:
                token_id = vocab.eos_token_ids[0]
            else:
                text_ids = allowed[~np.isin(allowed, list(eos))]
                token_id = int(rng.choice(text_ids)) if text_ids.size else vocab.eos_token_ids[0]
            engine.try_accept_new_token(token_id)
            if token_id in eos:
                break
            ids.append(token_id)
        stats = engine.stats()
        n_fallbacks += stats["canonical_fallbacks"]
        n_non_canonical_accepts += stats["non_canonical_accepts"]
        if not engine.is_finished():
            continue
        n_finished += 1
        text = b"".join(vocab.token_bytes[t] for t in ids).decode("utf-8", errors="strict")
        n_canonical += encode(text) == ids
    return n_canonical, n_finished, n_fallbacks, n_non_canonical_accepts


def _check(name, result):
    n_canonical, n_finished, n_fallbacks, n_non_canonical_accepts = result
    print(f"{name}: {n_canonical}/{n_finished} finished outputs canonical ({N_RUNS} runs), "
          f"{n_fallbacks} fallback steps")
    assert n_finished >= N_RUNS // 10
    assert n_canonical == n_finished
    assert n_fallbacks == 0
    assert n_non_canonical_accepts == 0


def test_tekken_json_generations_are_canonical(tekken_vocab, tekken_encoding):
    _check("tekken", run_generations(
        tekken_vocab, lambda text: tekken_encoding.encode(text, disallowed_special=()), 1))


def test_cl100k_json_generations_are_canonical(cl100k_vocab, cl100k_encoding):
    _check("cl100k", run_generations(
        cl100k_vocab, lambda text: cl100k_encoding.encode(text, disallowed_special=()), 2))


def test_qwen2_json_generations_are_canonical(qwen_vocab, qwen_encoding):
    _check("qwen2", run_generations(
        qwen_vocab, lambda text: qwen_encoding.encode(text, disallowed_special=()), 3))


def test_mistral_sentencepiece_json_generations_are_canonical(mistral_v1_vocab, mistral_v1_processor):
    """SentencePiece adds a dummy-prefix space: the canonical output is the
    encoding of the text after it."""
    def encode(text):
        return mistral_v1_processor.encode(text[1:]) if text.startswith(" ") else None
    _check("mistral v1 (SentencePiece)", run_generations(mistral_v1_vocab, encode, 4))


def test_wordpiece_json_generations_are_canonical(bert_tokenizer):
    import tokenizers
    from grammask.vocab import Vocabulary
    tokenizer = tokenizers.Tokenizer.from_str(bert_tokenizer.to_str())  # a copy: the fixture is shared
    tokenizer.no_padding()
    tokenizer.no_truncation()
    vocab = Vocabulary.from_tokenizer(tokenizer, eos_token_ids=[tokenizer.token_to_id("[SEP]")])
    _check("all-MiniLM-L6-v2 (WordPiece)", run_generations(
        vocab, lambda text: tokenizer.encode(text, add_special_tokens=False).ids, 5))


def test_filter_off_is_often_non_canonical(tekken_vocab, tekken_encoding):
    """The same generation without the filter: the contrast the filter buys."""
    compiled = grammask.compile(builtin("json"), tekken_vocab, grammask.Config(canonical=False))
    rng = np.random.default_rng(3)
    n_non_canonical = 0
    for _ in range(50):
        engine = grammask.Engine(compiled)
        ids = []
        for _ in range(MAX_STEPS):
            allowed = [t for t in engine.compute_allowed_token_ids().tolist()
                       if t not in tekken_vocab.eos_token_ids]
            if not allowed:
                break
            token_id = int(rng.choice(allowed))
            engine.try_accept_new_token(token_id)
            ids.append(token_id)
        text = b"".join(tekken_vocab.token_bytes[t] for t in ids).decode("utf-8", errors="replace")
        n_non_canonical += tekken_encoding.encode(text, disallowed_special=()) != ids
    assert n_non_canonical > 25


def test_canonical_true_without_exact_filter_is_an_error():
    vocab = grammask.Vocabulary([None, b"a"], eos_token_ids=[0])
    with pytest.raises(grammask.VocabularyError, match="canonical"):
        grammask.compile(grammask.Grammar.from_ebnf("start ::= 'a';"), vocab, grammask.Config(canonical=True))


def test_rollback_restores_canonical_state(tekken_vocab, tekken_encoding):
    compiled = grammask.compile(builtin("json"), tekken_vocab, grammask.Config(canonical=True))
    engine = grammask.Engine(compiled)
    ids = tekken_encoding.encode('{"name": "Ada", "n": [1, 2]}', disallowed_special=())
    masks = []
    for token_id in ids:
        masks.append(engine.compute_allowed_token_ids().tolist())
        assert token_id in masks[-1]
        engine.try_accept_new_token(token_id)
    engine.rollback(3)
    assert engine.compute_allowed_token_ids().tolist() == masks[-3]
    assert engine.stats()["non_canonical_accepts"] == 0
