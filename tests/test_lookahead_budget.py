"""The canonical lookahead's bounded work, on Llama-3 (byte-level BPE with its pre-tokenizer).

Where a ``true``/``false`` value begins, every whitespace token is a narrow
candidate and the grammar loops through whitespace; searched once per
candidate down to its depth bound, that mask took about 230,000 work units
(7-12 s).  Witnesses replayed across whitespace states of one class settle
it in about 1,700 units (10,700 before witnesses could end where a search
from the start of a text takes over), within the default budget.  Checked
here by counting work, not by timing it:

- the default budget settles the instance without a cutoff;
- a budget of 1,000 units cuts short exactly the masks whose work with the
  default budget is larger (the value start among them): their work stays
  within the budget, and each is counted in ``lookahead_cutoffs``;
- with any budget, the mask lies between the full lookahead's mask and the
  mask without lookahead (undecided tokens stay, decided dead ends go).

Oracles: the same engine with ``canonical_lookahead=0`` (grammar and filter
only) bounds the mask from above, the full-budget mask from below; the
tokenizer's own ``encode`` gives the instance's tokens, which must stay allowed.
"""

from __future__ import annotations

import numpy as np

import grammask

SCHEMA = {"type": "object", "properties": {"flag": {"type": "boolean"}, "other": {"type": "boolean"}},
          "required": ["flag", "other"]}
TEXT = '{"flag":true,"other":false}'


def _masks(llama3_tokenizer, llama3_vocab, config, work=None):
    """(compiled grammar, engine after the instance, each mask as a set); the
    lookahead's work per mask is appended to ``work`` when given."""
    compiled = grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab, config)
    engine = grammask.Engine(compiled)
    masks = []
    for token_id in llama3_tokenizer.encode(TEXT, add_special_tokens=False).ids:
        if compiled.lookahead is not None:
            compiled.lookahead.max_work = 0
        allowed = engine.compute_allowed_token_ids()
        if work is not None:
            work.append(compiled.lookahead.max_work)
        assert token_id in set(allowed.tolist())
        masks.append(set(allowed.tolist()))
        engine.try_accept_new_token(token_id)
    return compiled, engine, masks


def test_default_budget_settles_the_instance(llama3_tokenizer, llama3_vocab):
    config = grammask.Config(mask_cache_entries=0)
    compiled, engine, _ = _masks(llama3_tokenizer, llama3_vocab, config)
    assert engine.stats()["lookahead_cutoffs"] == 0
    assert compiled.lookahead.max_work <= config.canonical_lookahead_budget


def test_budget_bounds_the_value_start_mask(llama3_tokenizer, llama3_vocab):
    full_work, cut_work = [], []
    # a budget no mask reaches, and a config of its own (a compiled grammar's lookahead keeps its verdicts)
    _masks(llama3_tokenizer, llama3_vocab, grammask.Config(mask_cache_entries=0, canonical_lookahead_budget=20_001),
           full_work)
    config = grammask.Config(mask_cache_entries=0, canonical_lookahead_budget=1000)
    _, engine, _ = _masks(llama3_tokenizer, llama3_vocab, config, cut_work)
    assert full_work[3] > config.canonical_lookahead_budget       # the value start of "flag"
    assert engine.stats()["lookahead_cutoffs"] == sum(work > config.canonical_lookahead_budget
                                                      for work in full_work)
    assert max(cut_work) <= config.canonical_lookahead_budget + 64


def test_small_budget_keeps_undecided_tokens_and_counts_the_cutoff(llama3_tokenizer, llama3_vocab):
    _, _, full = _masks(llama3_tokenizer, llama3_vocab,
                        grammask.Config(mask_cache_entries=0, canonical_lookahead_budget=10**6))
    _, _, unpruned = _masks(llama3_tokenizer, llama3_vocab,
                            grammask.Config(mask_cache_entries=0, canonical_lookahead=0))
    _, engine, cut = _masks(llama3_tokenizer, llama3_vocab,
                            grammask.Config(mask_cache_entries=0, canonical_lookahead_budget=40))
    assert engine.stats()["lookahead_cutoffs"] > 0
    assert any(f != u for f, u in zip(full, unpruned))          # the lookahead removes something here
    for f, c, u in zip(full, cut, unpruned):
        assert f <= c <= u
    assert any(c != f for f, c in zip(full, cut))               # and the small budget kept some of it
    assert np.all([len(c) > 0 for c in cut])
