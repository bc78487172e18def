"""Engine masks on real vocabularies, checked against brute force.

Oracle: every text token's bytes pushed into a fresh copy of the Earley
recognizer (independent of the trie walk, of the per-terminal token sets and
of the exit tries).  Workloads: the shared benchmark inputs of docs/design.md
section 7, encoded with Mistral's tekken tokenizer (131,072 tokens) as the
benchmark does; cl100k for a second byte-level vocabulary.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import grammask
from grammask._core.earley import EarleyRecognizer

WORKLOADS = pathlib.Path(__file__).resolve().parent / "workloads" / "bench"


def read(name: str) -> str:
    return (WORKLOADS / name).read_text(encoding="utf-8")


def brute_force(recognizer: EarleyRecognizer, vocab: grammask.Vocabulary) -> list[int]:
    allowed = []
    for token_id in vocab.allowed_text_token_ids.tolist():
        probe = recognizer.copy()
        if probe.push_bytes(vocab.token_bytes[token_id]):
            allowed.append(token_id)
    if recognizer.is_accepting():
        allowed.extend(vocab.eos_token_ids)
    return sorted(allowed)


CASES = {
    "generic_json": (lambda: grammask.Grammar.from_ebnf(_json_text()), "generic_document.json"),
    "arith": (lambda: grammask.Grammar.from_ebnf(read("arith.kbnf")), "arith.input.txt"),
    "regex_email": (lambda: grammask.Grammar.from_regex(read("regex_email.regex").strip("\n")),
                    "regex_email.input.txt"),
    "ticket_schema": (lambda: grammask.Grammar.from_json_schema(read("ticket_schema.json")),
                      "ticket_instance.json"),
}


def _json_text() -> str:
    from grammask.grammar import builtin_text
    return builtin_text("json")


@pytest.mark.parametrize("name", sorted(CASES))
def test_tekken_masks_equal_brute_force(name, tekken_vocab, tekken_encoding):
    make_grammar, input_name = CASES[name]
    config = grammask.Config(canonical=False)
    compiled = grammask.compile(make_grammar(), tekken_vocab, config)
    engine = grammask.Engine(compiled)
    token_ids = tekken_encoding.encode(read(input_name), disallowed_special=())
    check_steps = set(np.linspace(0, len(token_ids), 6).astype(int).tolist())
    for step, token_id in enumerate(token_ids + [None]):
        mask = engine.compute_allowed_token_ids()
        if step in check_steps:
            assert mask.tolist() == brute_force(engine._recognizer, tekken_vocab), f"step {step}"
        if token_id is None:
            break
        assert token_id in mask, f"input token {token_id} at step {step} not allowed"
        engine.try_accept_new_token(token_id)
    assert engine.can_end()
    assert set(tekken_vocab.eos_token_ids) <= set(engine.compute_allowed_token_ids().tolist())


def test_cl100k_random_generation_stays_in_grammar(cl100k_vocab):
    """Random sampling from the mask under the arithmetic grammar: every
    accepted token was in the mask, the mask is never empty, and finished
    outputs are sentences (checked by a fresh recognizer)."""
    grammar = grammask.Grammar.from_ebnf(read("arith.kbnf"))
    compiled = grammask.compile(grammar, cl100k_vocab, grammask.Config(canonical=False))
    rng = np.random.default_rng(7)
    for _ in range(5):
        engine = grammask.Engine(compiled)
        for _ in range(40):
            mask = engine.compute_allowed_token_ids()
            assert mask.size > 0
            token_id = int(rng.choice(mask))
            engine.try_accept_new_token(token_id)
            if engine.is_finished():
                break
        output = engine.output_bytes()
        fresh = EarleyRecognizer(compiled.tables)
        assert fresh.push_bytes(output)
        assert fresh.is_accepting() == engine.can_end() or engine.is_finished()


def test_dead_end_is_reported():
    """A grammar needing a byte that no token spells: the mask is empty
    before the output is complete, and the engine says so."""
    vocab = grammask.Vocabulary([None, b"a", b"b"], eos_token_ids=[0])
    engine = grammask.Engine(grammask.Grammar.from_ebnf("start ::= 'a' 'c';"), vocab)
    engine.try_accept_new_token(1)
    with pytest.warns(grammask.DeadEndWarning):
        assert engine.compute_allowed_token_ids().size == 0
    assert engine.stats()["dead_ends"] == 1


def test_warnings_point_at_the_callers_line():
    """Every warning grammask emits names the user's file and line, however
    deep in the package it arises and whether the module that warns runs as
    Python or compiled by Cython (which has no frames to count): dead ends
    from each way of asking for a mask, a JSON Schema approximation and an
    unused rule."""
    import inspect
    import warnings

    vocab = grammask.Vocabulary([None, b"a", b"b"], eos_token_ids=[0])
    grammar = grammask.Grammar.from_ebnf("start ::= 'a' 'c';")

    def dead_engine():
        engine = grammask.Engine(grammar, vocab)
        engine.try_accept_new_token(1)
        return engine

    bits = np.zeros((1, 1), dtype=np.int32)
    calls = [
        lambda: dead_engine().compute_allowed_token_ids(),
        lambda: dead_engine().fill_bitmask(bits),
        lambda: grammask.fill_next_token_bitmask_batch([dead_engine()], bits),
        lambda: grammask.Grammar.from_json_schema({"type": "array", "uniqueItems": True,
                                                   "items": {"type": "object"}}),
        lambda: grammask.Grammar.from_ebnf('start ::= "a";\nunused ::= "b";'),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught, inspect.getsource(call)
        for warning in caught:
            assert (warning.filename, warning.lineno) == (__file__, call.__code__.co_firstlineno), \
                (warning.category.__name__, warning.filename, warning.lineno)
