"""``grammask.clear_caches()`` empties the process-wide caches, and the
Engine's usage errors are typed (``grammask.UsageError`` subclasses that are
still the built-in ``ValueError`` / ``TypeError`` / ``IndexError``)."""

from __future__ import annotations

import numpy as np
import pytest

import grammask
from grammask._core import earley_tables, token_set_store
from grammask.engine.vocab_tables import vocabulary_tables

PIECES = [b"</s>", b"1", b"2", b"12", b"[", b"]", b","]
EOS = 0


@pytest.fixture(scope="module")
def vocab():
    return grammask.Vocabulary(PIECES, eos_token_ids=[EOS])


@pytest.fixture(scope="module")
def grammar():
    return grammask.Grammar.from_ebnf("start ::= '[' items ']'; items ::= #\"[0-9]+\" | items ',' #\"[0-9]+\";")


def ids(vocab, *pieces):
    return [vocab.token_bytes.index(piece) for piece in pieces]


def test_clear_caches_forgets_compiled_grammars_and_vocabulary_tables(vocab, grammar):
    compiled = grammask.compile(grammar, vocab)
    tables = vocabulary_tables(vocab)
    assert grammask.compile(grammar, vocab) is compiled
    assert earley_tables._cached_checked_dfa.cache_info().currsize > 0
    assert token_set_store._cached_digest.cache_info().currsize > 0
    grammask.clear_caches(vocabularies=False)
    assert earley_tables._cached_checked_dfa.cache_info().currsize == 0
    assert token_set_store._cached_digest.cache_info().currsize == 0
    recompiled = grammask.compile(grammar, vocab)
    assert recompiled is not compiled and vocabulary_tables(vocab) is tables
    grammask.clear_caches()
    assert vocabulary_tables(vocab) is not tables
    # What existed keeps working.
    engine = grammask.Engine(compiled)
    for token_id in ids(vocab, b"[", b"12", b"]"):
        engine.try_accept_new_token(token_id)
    assert engine.can_end()


def test_clear_caches_forgets_the_terminal_compilers_shared_dfas():
    from grammask.grammar import terminal_keys

    grammask.Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    assert terminal_keys._COMPILED
    grammask.clear_caches(vocabularies=False)
    assert not terminal_keys._COMPILED


def test_clear_caches_forgets_built_canonical_filters(bert_tokenizer):
    from grammask.canonical import build_canonical_filter

    built = build_canonical_filter(bert_tokenizer)
    assert built is not None and build_canonical_filter(bert_tokenizer) is built
    grammask.clear_caches()
    assert build_canonical_filter(bert_tokenizer) is not built


def test_engine_usage_errors_are_typed(vocab, grammar):
    compiled = grammask.compile(grammar, vocab, grammask.Config(max_rollback_bytes=16))
    with pytest.raises(grammask.InvalidArgumentType) as caught:
        grammask.Engine(compiled, vocab)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, grammask.GrammaskError)
    with pytest.raises(TypeError):
        grammask.Engine(grammar)
    engine = grammask.Engine(compiled)
    with pytest.raises(grammask.InvalidArgument) as caught:
        engine.rollback(1)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, grammask.UsageError)
    bitmask = np.zeros((2, compiled.n_words), dtype=np.int32)
    with pytest.raises(grammask.IndexOutOfRange) as caught:
        engine.fill_bitmask(bitmask, row=2)
    assert isinstance(caught.value, IndexError)
    engine.try_accept_new_token(ids(vocab, b"[")[0])
    with pytest.raises(grammask.InvalidArgument):
        engine.seed_canonical_context([1])
    for _ in range(200):
        engine.try_accept_new_token(ids(vocab, b"12")[0])
        engine.try_accept_new_token(ids(vocab, b",")[0])
    with pytest.raises(grammask.LimitExceeded) as caught:
        engine.rollback(300)
    assert caught.value.limit == "max_rollback_bytes" and isinstance(caught.value, ValueError)
    assert engine.n_accepted == 401


def test_warnings_live_in_errors():
    from grammask import errors, integrations

    assert grammask.DeadEndWarning is errors.DeadEndWarning
    assert grammask.IncompleteOutputWarning is errors.IncompleteOutputWarning
    assert integrations.IncompleteOutputWarning is errors.IncompleteOutputWarning
