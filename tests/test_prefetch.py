"""Token sets built ahead (``grammask.engine.prefetch``) leave every mask exact.

Oracle: every text token's bytes pushed into a copy of the engine's Earley
recognizer (independent of the trie walks, the token sets and the order in
which they were built).  Vocabulary: SmolLM2's (49,152 tokens), the demo's;
grammar: the demo's person schema, whose counted strings are the DFAs the
prefetch walks.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import grammask
from grammask.engine.prefetch import TokenSetPrefetch

SCHEMA = pathlib.Path(__file__).resolve().parents[1] / "examples" / "schemas" / "person.json"
DOCUMENT = ('{"name": "Ada Lovelace", "born": 1815, "birthplace": "London, England",\n'
            ' "occupation": "Mathematician", "known_for": ["the first published algorithm"]}')


def brute_force(recognizer, vocab) -> list[int]:
    allowed = [token_id for token_id in vocab.allowed_text_token_ids.tolist()
               if recognizer.copy().push_bytes(vocab.token_bytes[token_id])]
    if recognizer.is_accepting():
        allowed.extend(vocab.eos_token_ids)
    return sorted(allowed)


@pytest.fixture
def fresh_sets(monkeypatch):
    """No disk tier and no token set of an earlier test: the prefetch builds."""
    monkeypatch.setenv("GRAMMASK_NO_DISK_CACHE", "1")
    grammask.clear_caches(vocabularies=False)
    yield
    grammask.clear_caches(vocabularies=False)


def decode(engine, vocab, check_steps=()) -> tuple[list[int], int]:
    """The document's tokens (longest allowed token first) and the token sets
    the store built meanwhile; masks at ``check_steps`` checked by brute force."""
    store = engine.compiled.mask_computer.store
    builds = store.builds
    text, steps = DOCUMENT.encode(), []
    while True:
        allowed = engine.compute_allowed_token_ids().tolist()
        if len(steps) in check_steps:
            assert allowed == brute_force(engine._recognizer, vocab), f"step {len(steps)}"
        if not text:
            break
        token_id = max((t for t in allowed if t not in vocab.eos_token_ids
                        and text.startswith(vocab.token_bytes[t])),
                       key=lambda t: len(vocab.token_bytes[t]))
        steps.append(token_id)
        engine.try_accept_new_token(token_id)
        text = text[len(vocab.token_bytes[token_id]):]
    assert engine.can_end()
    return steps, store.builds - builds


def compile_person(vocab):
    grammar = grammask.Grammar.from_json_schema(json.loads(SCHEMA.read_text()))
    return grammask.compile(grammar, vocab, grammask.Config(canonical=False))


def test_prefetched_sets_give_the_brute_force_masks(smollm2_vocab, fresh_sets):
    vocab = smollm2_vocab
    steps, builds_on_demand = decode(grammask.Engine(compile_person(vocab)), vocab)
    grammask.clear_caches(vocabularies=False)
    engine = grammask.Engine(compile_person(vocab))
    prefetch = TokenSetPrefetch(engine, max_sets=300)
    prefetch.join()
    assert prefetch.error is None
    assert prefetch.n_built == 300
    checked = set(np.linspace(0, len(steps), 7).astype(int).tolist())
    prefetched_steps, builds_left = decode(engine, vocab, checked)
    assert prefetched_steps == steps
    # most sets the decoding needs were among the cheapest states
    assert builds_left <= builds_on_demand // 2, (builds_left, builds_on_demand)


def test_stop_ends_the_thread_and_a_copy_is_prefetched(smollm2_vocab, fresh_sets):
    grammar = grammask.Grammar.from_regex(r"[a-z ]{1,40}\.")
    compiled = grammask.compile(grammar, smollm2_vocab, grammask.Config(canonical=False))
    engine = grammask.Engine(compiled)
    prefetch = TokenSetPrefetch(engine)
    prefetch.stop()
    assert not prefetch.is_alive()
    assert prefetch.error is None
    assert engine.output_bytes() == b"" and engine.stats()["mask_cache_hits"] == 0
