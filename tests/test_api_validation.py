"""The public API checks its arguments before it changes anything, and long
outputs keep bounded memory by default.

Each misuse below must raise a ``GrammaskError`` subclass (the right one)
and leave the engine exactly as it was: same output, same step count, same
mask, and a later correct call still works.  Memory is checked by counting
what the engine keeps (steps, Earley sets and items), not by timing.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import grammask
from grammask import Status
from grammask.errors import (
    GrammaskError,
    IndexOutOfRange,
    InvalidArgument,
    InvalidArgumentType,
    LimitExceeded,
    TokenRejected,
    VocabularyError,
)

EOS = 0
PIECES = [b"[", b"12", b",", b"]", b"1", b" "]


@pytest.fixture(scope="module")
def vocab():
    return grammask.Vocabulary([None, *PIECES], eos_token_ids=[EOS])


@pytest.fixture(scope="module")
def compiled(vocab):
    grammar = grammask.Grammar.from_ebnf("start ::= '[' items ']'; items ::= #\"[0-9]+\" | items ',' #\"[0-9]+\";")
    return grammask.compile(grammar, vocab)


def tid(vocab, piece: bytes) -> int:
    return [None, *PIECES].index(piece)


def fingerprint(engine) -> tuple:
    return (engine.output_bytes(), engine.n_accepted, engine.compute_allowed_token_ids().tolist())


def started(compiled, vocab):
    engine = grammask.Engine(compiled)
    engine.try_accept_new_token(tid(vocab, b"["))
    engine.try_accept_new_token(tid(vocab, b"12"))
    return engine


BAD_LOGITS = [
    (lambda n: np.zeros(n, np.int32), InvalidArgumentType),
    (lambda n: np.zeros(n, np.int64), InvalidArgumentType),
    (lambda n: np.zeros(n, bool), InvalidArgumentType),
    (lambda n: [0.0] * n, InvalidArgumentType),
    (lambda n: np.zeros(n - 1, np.float32), VocabularyError),
    (lambda n: np.zeros((2, 2, n), np.float32), VocabularyError),
    (lambda n: _read_only(np.zeros(n, np.float32)), InvalidArgument),
    (lambda n: torch.zeros(n, dtype=torch.int32), InvalidArgumentType),
    (lambda n: torch.zeros(n, requires_grad=True), InvalidArgument),
]


def _read_only(array):
    array.flags.writeable = False
    return array


@pytest.mark.parametrize("make, error", BAD_LOGITS)
def test_bad_logits_are_refused_before_the_token_is_accepted(compiled, vocab, make, error):
    engine = started(compiled, vocab)
    before = fingerprint(engine)
    with pytest.raises(error):
        engine.modify_possible_logits(tid(vocab, b","), make(vocab.size))
    with pytest.raises(error):
        engine.mask_logits(make(vocab.size))
    assert fingerprint(engine) == before
    logits = np.zeros(vocab.size, np.float32)
    assert engine.modify_possible_logits(tid(vocab, b","), logits) is Status.ONGOING  # no double feed
    assert engine.output_bytes() == b"[12,"


BAD_BITMASKS = [
    (lambda w: np.zeros((1, w), np.uint8), 0, InvalidArgumentType),
    (lambda w: np.zeros((1, w), np.int16), 0, InvalidArgumentType),
    (lambda w: np.zeros((1, w), bool), 0, InvalidArgumentType),
    (lambda w: np.zeros((1, w), np.uint32), 0, InvalidArgumentType),
    (lambda w: [[0] * w], 0, InvalidArgumentType),
    (lambda w: np.zeros((1, w + 1), np.int32), 0, VocabularyError),
    (lambda w: np.zeros((2, w), np.int32), 2, IndexOutOfRange),
    (lambda w: np.zeros((2, w), np.int32), -1, IndexOutOfRange),
    (lambda w: np.zeros(w, np.int32), 1, IndexOutOfRange),
    (lambda w: np.zeros((2, w), np.int32), 1.0, InvalidArgumentType),
    (lambda w: np.zeros((2, w), np.int32), True, InvalidArgumentType),
    (lambda w: _read_only(np.zeros((1, w), np.int32)), 0, InvalidArgument),
    (lambda w: torch.zeros((1, w), dtype=torch.int64), 0, InvalidArgumentType),
]


@pytest.mark.parametrize("make, row, error", BAD_BITMASKS)
def test_bad_bitmasks_are_refused_and_nothing_is_written(compiled, vocab, make, row, error):
    engine = started(compiled, vocab)
    bitmask = make((vocab.size + 31) // 32)
    snapshot = np.array(bitmask, dtype=np.int64).copy() if not isinstance(bitmask, torch.Tensor) else None
    with pytest.raises(error):
        engine.fill_bitmask(bitmask, row)
    if snapshot is not None:
        assert (np.array(bitmask, dtype=np.int64) == snapshot).all()
    good = np.zeros((2, (vocab.size + 31) // 32), np.int32)
    engine.fill_bitmask(good, 1)
    assert good[1].any() and not good[0].any()


@pytest.mark.parametrize("argument, error", [(1.7, InvalidArgumentType), ("1", InvalidArgumentType),
                                             (True, InvalidArgumentType), (None, InvalidArgumentType),
                                             (-1, InvalidArgument), (3, InvalidArgument)])
def test_rollback_arguments(compiled, vocab, argument, error):
    engine = started(compiled, vocab)
    before = fingerprint(engine)
    with pytest.raises(error):
        engine.rollback(argument)
    assert fingerprint(engine) == before
    engine.rollback(np.int64(1))
    assert engine.output_bytes() == b"["


@pytest.mark.parametrize("argument", [3 * 10**9, 5, "12", [49, 50], None])
def test_accept_bytes_takes_bytes_only(compiled, vocab, argument):
    engine = started(compiled, vocab)
    before = fingerprint(engine)
    with pytest.raises(InvalidArgumentType):
        engine.try_accept_new_bytes(argument)
    assert fingerprint(engine) == before
    engine.try_accept_new_bytes(memoryview(b",3"))
    engine.try_accept_new_bytes(bytearray(b"4"))
    assert engine.output_bytes() == b"[12,34"


def test_mask_and_accept_agree_after_eos(compiled, vocab):
    engine = started(compiled, vocab)
    engine.try_accept_new_token(tid(vocab, b"]"))
    assert engine.try_accept_new_token(EOS) is Status.FINISHED
    assert engine.compute_allowed_token_ids().tolist() == [EOS]
    steps = engine.n_accepted
    assert engine.try_accept_new_token(EOS) is Status.FINISHED   # allowed by the mask: accepted, no-op
    assert engine.n_accepted == steps
    for token_id in range(1, vocab.size):
        assert not engine.is_token_allowed(token_id)
        with pytest.raises(TokenRejected):
            engine.try_accept_new_token(token_id)
    engine.rollback(1)
    assert engine.n_accepted == steps - 1 and engine.can_end()
    assert engine.compute_allowed_token_ids().tolist() == [EOS]   # "[12]" is complete: EOS only
    assert engine.try_accept_new_token(EOS) is Status.FINISHED


@pytest.mark.parametrize("field, value, error", [
    ("max_rules", 0, InvalidArgument), ("max_rules", "10", InvalidArgumentType),
    ("max_dfa_states", 1.5, InvalidArgumentType), ("eager_end", 1, InvalidArgumentType),
    ("canonical", "yes", InvalidArgumentType), ("max_rollback_bytes", -1, InvalidArgument),
    ("canonical_lookahead", -1, InvalidArgument), ("mask_cache_entries", True, InvalidArgumentType),
    ("canonical_lookahead_budget", 0, InvalidArgument), ("accept_non_canonical", None, InvalidArgumentType),
])
def test_config_is_checked_at_construction(field, value, error):
    with pytest.raises(error, match=field):
        grammask.Config(**{field: value})
    assert issubclass(error, GrammaskError)


def test_long_output_keeps_bounded_state_by_default(compiled, vocab):
    # 100,001 tokens of a JSON-like array: the engine keeps the steps of the
    # rollback window only, and the recognizer a bounded number of Earley sets.
    config = grammask.Config()
    assert config.max_rollback_bytes == 4096
    engine = grammask.Engine(compiled)
    engine.try_accept_new_token(tid(vocab, b"["))
    sizes = []
    for step in range(50_000):
        engine.try_accept_new_token(tid(vocab, b"12"))
        engine.try_accept_new_token(tid(vocab, b","))
        if step % 10_000 == 9_999:
            stats = engine._recognizer.stats()
            sizes.append((len(engine._steps), stats["n_sets"], stats["total_items"]))
    assert engine.n_accepted == 100_001
    assert len(engine.output_bytes()) == 1 + 150_000
    for n_steps, n_sets, n_items in sizes:
        assert n_steps <= 4096 and n_sets <= 3 * 4096 and n_items <= 10 * 4096
    engine.rollback(1000)                                     # within the window
    assert engine.output_bytes().endswith(b"12,12,")
    before = fingerprint(engine)
    with pytest.raises(LimitExceeded, match="max_rollback_bytes"):
        engine.rollback(5000)
    assert fingerprint(engine) == before
    unbounded = grammask.Engine(grammask.compile(compiled.grammar, vocab, grammask.Config(max_rollback_bytes=None)))
    unbounded.try_accept_new_bytes(b"[" + b"12," * 3000 + b"1")
    unbounded.rollback(1)
    assert unbounded.output_bytes() == b""


def test_is_token_allowed_takes_only_ints(compiled):
    """Regression (tests/test_api_fuzz.py): None, str, bytes and floats
    raised untyped TypeError / ValueError or were truncated to an id."""
    engine = grammask.Engine(compiled)
    for bad in (None, "1", b"1", 1.5, True):
        with pytest.raises(InvalidArgumentType):
            engine.is_token_allowed(bad)
    assert not engine.is_token_allowed(10**20) and not engine.is_token_allowed(-1)
    assert engine.is_token_allowed(np.int64(1))
