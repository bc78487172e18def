"""The Earley work of one step is bounded: ``Config.max_earley_work_per_byte``
and ``Config.max_earley_work_per_mask``.

A highly ambiguous grammar (``AMBIGUOUS``: every split of the output into
``s`` is a parse) spends about n² units of work on byte n and n³ on a mask
over a vocabulary whose tokens all fit.  Past a limit the call raises
``LimitExceeded`` naming the field, and the engine is exactly as before:
same output, same step count, same mask once the limit is raised; the
Earley core itself rolls back the bytes of a failed push.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import grammask
from grammask._core.earley import EarleyRecognizer
from grammask.grammar import builtin

AMBIGUOUS = """root ::= s
s ::= s s s | s t | t s | "a" | w | ""
t ::= s s | w "a" | ""
w ::= [abc]*"""

PIECES = [bytes(t) for n in range(1, 6) for t in itertools.product(b"abc", repeat=n)][:292]


@pytest.fixture(scope="module")
def vocab():
    return grammask.Vocabulary([None, *PIECES], eos_token_ids=[0])


def engine_for(vocab, **limits):
    grammar = grammask.Grammar.from_gbnf(AMBIGUOUS)
    return grammask.Engine(grammask.compile(grammar, vocab, grammask.Config(**limits)))


def test_defaults_leave_json_alone():
    """JSON on single printable bytes spends a tiny part of the budget (on
    Llama-3, real schemas with the canonical lookahead spend up to ~200,000)."""
    pieces = [bytes([b]) for b in range(32, 127)] + [b'{"', b'":', b'", "', b"true", b"null", b"12"]
    engine = grammask.Engine(grammask.compile(builtin("json"), grammask.Vocabulary([None, *pieces],
                                                                                 eos_token_ids=[0])))
    for text in [b'{"', b"a", b'":', b"[", b"12", b",", b"true", b"]"]:
        engine.compute_allowed_token_ids()
        engine.try_accept_new_token(pieces.index(text) + 1)
    assert 0 < engine.stats()["max_mask_work"] < grammask.Config().max_earley_work_per_mask // 1000


def test_mask_over_budget_names_the_field_and_changes_nothing(vocab):
    # the mask after 12 bytes spends about 68,000 units (scan items of one
    # set ended together, MaskComputer._fill_set)
    BUDGET = 50_000
    engine = engine_for(vocab, max_earley_work_per_mask=BUDGET)
    engine.try_accept_new_bytes(b"a" * 10)
    engine.try_accept_new_token(PIECES.index(b"ab") + 1)
    before = engine.output_bytes(), engine.n_accepted
    with pytest.raises(grammask.LimitExceeded) as info:
        engine.compute_allowed_token_ids()
    assert info.value.limit == "max_earley_work_per_mask" and info.value.maximum == BUDGET
    assert info.value.given > BUDGET
    assert (engine.output_bytes(), engine.n_accepted) == before
    with pytest.raises(grammask.LimitExceeded):
        engine.is_token_allowed(1)  # the mask is still not computed, and still over budget
    # Accepting is bounded per byte only: the engine still moves, and rolls back.
    engine.try_accept_new_token(1)
    engine.rollback(1)
    assert (engine.output_bytes(), engine.n_accepted) == before

    unbounded = engine_for(vocab, max_earley_work_per_mask=10**12)
    unbounded.try_accept_new_bytes(b"a" * 10)
    unbounded.try_accept_new_token(PIECES.index(b"ab") + 1)
    assert unbounded.stats()["max_mask_work"] == 0
    expected = unbounded.compute_allowed_token_ids()
    assert unbounded.stats()["max_mask_work"] > BUDGET
    same_state = grammask.Engine(unbounded.compiled)
    same_state.try_accept_new_bytes(engine.output_bytes())
    assert np.array_equal(same_state.compute_allowed_token_ids(), expected)


def test_accept_over_per_byte_limit_rolls_back_and_names_the_field(vocab):
    engine = engine_for(vocab, max_earley_work_per_byte=5_000, max_earley_work_per_mask=10**12)
    engine.try_accept_new_bytes(b"a" * 5)
    mask = engine.compute_allowed_token_ids()
    with pytest.raises(grammask.LimitExceeded) as info:
        engine.try_accept_new_bytes(b"a" * 200)
    assert info.value.limit == "max_earley_work_per_byte" and info.value.maximum == 5_000
    assert engine.output_bytes() == b"a" * 5 and engine.n_accepted == 1
    assert np.array_equal(engine.compute_allowed_token_ids(), mask)
    assert engine.stats()["recognizer"]["n_bytes"] == 5


def test_recognizer_error_stays_pending_until_raised():
    grammar = grammask.Grammar.from_gbnf(AMBIGUOUS)
    recognizer = EarleyRecognizer(grammar.lnf, max_work_per_set=10**9)
    assert recognizer.push_bytes(b"a" * 30)
    recognizer.limit_work(1_000, "some_budget")
    with pytest.raises(grammask.LimitExceeded) as info:
        recognizer.push_bytes(b"aaa")
    assert info.value.limit == "some_budget"
    assert recognizer.n_bytes == 30
    recognizer.limit_work(None)
    assert recognizer.push_bytes(b"aaa") and recognizer.n_bytes == 33


@pytest.mark.parametrize("field", ["max_earley_work_per_byte", "max_earley_work_per_mask"])
def test_config_checks_the_fields(field):
    with pytest.raises(grammask.InvalidArgument, match=field):
        grammask.Config(**{field: 0})
    with pytest.raises(grammask.InvalidArgumentType, match=field):
        grammask.Config(**{field: 1.5})
