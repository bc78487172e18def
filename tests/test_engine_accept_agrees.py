"""With the canonical filter on, accepting a token agrees with the mask.

``try_accept_new_token(t)`` succeeds exactly when ``is_token_allowed(t)``:
checked for every token id of real vocabularies (Llama-3's byte-level BPE,
tekken) at states reached by random walks through the masks.  A refused
token leaves the engine as it was (same output, same mask), and a refusal by
the canonical filter says so.  ``Config(accept_non_canonical=True)`` is the
documented opt-out: the grammar alone decides, the token is counted.

Oracle for the canonical case: the tokenizer's own ``encode`` (after
``{"``, Llama-3 spells ``user`` as one token, so ``u`` then ``ser`` is not
what it produces).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import grammask
from grammask.errors import TokenRejected
from grammask.grammar import builtin

SCHEMA = {"type": "object", "properties": {"user": {"type": "string"}, "admin": {"type": "boolean"},
                                           "n": {"type": "integer"}}, "required": ["user"]}


def _assert_agreement(engine) -> int:
    """Accept every token id once (rolling back each success); returns how
    many the mask allowed."""
    before_output = engine.output_bytes()
    before_mask = engine.compute_allowed_token_ids()
    allowed = set(before_mask.tolist())
    for token_id in range(engine.compiled.vocab.size):
        expected = engine.is_token_allowed(token_id)
        try:
            engine.try_accept_new_token(token_id)
        except TokenRejected:
            assert not expected, f"token {token_id} is in the mask but accept refused it"
            continue
        assert expected, f"token {token_id} is outside the mask but accept took it"
        engine.rollback(1)
    assert engine.output_bytes() == before_output
    assert np.array_equal(engine.compute_allowed_token_ids(), before_mask)
    return len(allowed)


@pytest.mark.parametrize("vocab_name", ["llama3_vocab", "tekken_vocab"])
@pytest.mark.parametrize("grammar_name", ["json", "schema"])
def test_accept_agrees_with_mask_on_sampled_states(request, vocab_name, grammar_name):
    vocab = request.getfixturevalue(vocab_name)
    grammar = builtin("json") if grammar_name == "json" else grammask.Grammar.from_json_schema(SCHEMA)
    engine = grammask.Engine(grammask.compile(grammar, vocab))
    assert engine.compiled.canonical is not None
    rng = random.Random(f"{vocab_name}-{grammar_name}")
    checked = 0
    for step in range(8):
        if step in (2, 7):
            checked += _assert_agreement(engine) > 0
        allowed = [t for t in engine.compute_allowed_token_ids().tolist() if t not in vocab.eos_token_ids]
        if not allowed:
            break
        engine.try_accept_new_token(rng.choice(allowed))
    assert checked == 2


def test_non_canonical_token_is_refused_and_named(llama3_tokenizer, llama3_vocab):
    compiled = grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab)
    ids = {text: llama3_vocab.text_token_id(text.encode()) for text in ['{"', "u", "ser", "user"]}
    assert llama3_tokenizer.encode('{"user":', add_special_tokens=False).ids[:2] == [ids['{"'], ids["user"]]
    engine = grammask.Engine(compiled)
    engine.try_accept_new_token(ids['{"'])
    engine.try_accept_new_token(ids["u"])
    output, mask = engine.output_bytes(), engine.compute_allowed_token_ids()
    assert not engine.is_token_allowed(ids["ser"])
    with pytest.raises(TokenRejected, match="not canonical here") as raised:
        engine.try_accept_new_token(ids["ser"])
    assert raised.value.token_id == ids["ser"]
    assert engine.output_bytes() == output
    assert np.array_equal(engine.compute_allowed_token_ids(), mask)

    lenient = grammask.Engine(grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab,
                                               grammask.Config(accept_non_canonical=True)))
    for text in ['{"', "u", "ser"]:
        lenient.try_accept_new_token(ids[text])
    assert lenient.output_bytes() == b'{"user'
    assert lenient.stats()["non_canonical_accepts"] == 1
