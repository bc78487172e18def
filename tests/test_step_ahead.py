"""Tokens accepted and masks computed on a worker (``grammask.engine.step_ahead``).

Oracle: every token's bytes pushed into a copy of the engine's Earley
recognizer (brute force, independent of the token sets and of the thread
that computed the mask).  Vocabulary: every printable ASCII byte plus JSON
pieces of several bytes, and an EOS; grammar: a small JSON Schema.
"""

from __future__ import annotations

import random

import pytest

import grammask
from grammask.engine.step_ahead import StepAhead
from grammask.vocab import Vocabulary

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "age": {"type": "integer"}, "ok": {"type": "boolean"}},
          "required": ["name"], "additionalProperties": False}
PIECES = [b'{"', b'":', b'","', b'name', b'age', b'ok', b'true', b'false', b'", "', b'}', b'12', b'Ada', b' L']
TOKENS = [bytes([value]) for value in range(32, 127)] + PIECES + [b""]
EOS = len(TOKENS) - 1


@pytest.fixture(scope="module")
def compiled():
    vocab = Vocabulary(TOKENS, [EOS])
    return grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), vocab, grammask.Config(canonical=False))


def brute_force(engine) -> list[int]:
    recognizer = engine._recognizer
    allowed = [token_id for token_id in range(EOS) if recognizer.copy().push_bytes(TOKENS[token_id])]
    if recognizer.is_accepting():
        allowed.append(EOS)
    return allowed


def random_walk(compiled, seed: int) -> list[list[int]]:
    """Random allowed tokens in batches of one to three (a sampled token and its forced ones)."""
    rng = random.Random(seed)
    engine = grammask.Engine(compiled)
    batches = []
    while len(batches) < 40:
        batch = []
        for _ in range(rng.randint(1, 3)):
            allowed = [t for t in engine.compute_allowed_token_ids().tolist() if t != EOS]
            if not allowed or (engine.can_end() and rng.random() < 0.3):
                break
            token_id = rng.choice(allowed)
            engine.try_accept_new_token(token_id)
            batch.append(token_id)
        if not batch:
            break
        batches.append(batch)
    return batches


@pytest.mark.parametrize("seed", range(6))
def test_masks_after_worker_steps_are_the_brute_force_masks(compiled, seed):
    batches = random_walk(compiled, seed)
    engine = grammask.Engine(compiled)
    ahead = StepAhead(engine)
    try:
        for batch in batches:
            ahead.submit(batch)
            assert ahead.wait() == tuple(batch)
            assert engine.compute_allowed_token_ids().tolist() == brute_force(engine)
        assert ahead.n_jobs == len(batches)
    finally:
        ahead.close()
    expected = b"".join(TOKENS[t] for batch in batches for t in batch)
    assert engine.output_bytes() == expected


def test_a_refused_token_is_raised_by_wait_and_leaves_the_earlier_ones_accepted(compiled):
    engine = grammask.Engine(compiled)
    ahead = StepAhead(engine)
    open_brace = TOKENS.index(b'{"')
    try:
        ahead.submit([open_brace, TOKENS.index(b"}")])
        with pytest.raises(grammask.TokenRejected):
            ahead.wait()
        assert engine.output_bytes() == b'{"'
        assert engine.compute_allowed_token_ids().tolist() == brute_force(engine)
        ahead.submit([TOKENS.index(b"name")])        # the worker goes on after an error
        assert ahead.wait() == (TOKENS.index(b"name"),)
        assert engine.output_bytes() == b'{"name'
    finally:
        ahead.close()


def test_submit_needs_the_previous_wait_and_a_live_worker(compiled):
    engine = grammask.Engine(compiled)
    ahead = StepAhead(engine)
    assert ahead.wait() == () and not ahead.pending
    ahead.submit([TOKENS.index(b'{"')])
    with pytest.raises(grammask.InvalidArgument, match="not waited for"):
        ahead.submit([TOKENS.index(b"name")])
    ahead.close()                                  # waits for the pending job first
    assert engine.output_bytes() == b'{"' and not ahead.pending
    with pytest.raises(grammask.InvalidArgument, match="closed"):
        ahead.submit([TOKENS.index(b"name")])


def test_shutdown_ends_the_thread_after_its_job(compiled):
    engine = grammask.Engine(compiled)
    ahead = StepAhead(engine)
    ahead.submit([TOKENS.index(b'{"'), TOKENS.index(b"name")])
    ahead.shutdown()
    ahead._thread.join(timeout=30)
    assert not ahead._thread.is_alive()
    assert ahead.wait() == (TOKENS.index(b'{"'), TOKENS.index(b"name"))
    assert engine.output_bytes() == b'{"name'
