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
- a grammar compiled later for the vocabulary replays the witnesses an
  earlier one found (they are kept per vocabulary): its value start costs
  a fraction of the work, with the same masks;
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
    lookahead's work per mask is appended to ``work`` when given.  The
    vocabulary's shared witnesses are forgotten first, so every run searches
    cold (``grammask.engine.witnesses``)."""
    grammask.clear_caches(vocabularies=False)
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


def test_a_later_grammar_replays_the_witnesses_of_an_earlier_one(llama3_tokenizer, llama3_vocab):
    """Another schema with a boolean member, compiled after ``SCHEMA`` without
    forgetting the shared witnesses: its masks equal the ones it gets cold,
    and its value start costs less than a fifth of the cold work."""
    schema = {"type": "object", "properties": {"enabled": {"type": "boolean"}, "n": {"type": "integer"}},
              "required": ["enabled", "n"]}
    text = '{"enabled":false,"n":12}'

    def run(work, budget):
        # a budget of its own: a new compiled grammar, whose lookahead has no verdicts of its own yet
        config = grammask.Config(mask_cache_entries=0, canonical_lookahead_budget=budget)
        compiled = grammask.compile(grammask.Grammar.from_json_schema(schema), llama3_vocab, config)
        engine = grammask.Engine(compiled)
        masks = []
        for token_id in llama3_tokenizer.encode(text, add_special_tokens=False).ids:
            compiled.lookahead.max_work = 0
            masks.append(engine.allowed_bitset().copy())
            work.append(compiled.lookahead.max_work)
            engine.try_accept_new_token(token_id)
        assert engine.stats()["lookahead_cutoffs"] == 0
        return masks

    cold_work, warm_work = [], []
    grammask.clear_caches(vocabularies=False)
    cold = run(cold_work, 20_003)
    _masks(llama3_tokenizer, llama3_vocab, grammask.Config(mask_cache_entries=0))
    warm = run(warm_work, 20_004)
    assert len(cold) == len(warm)
    for cold_mask, warm_mask in zip(cold, warm):
        assert np.array_equal(cold_mask, warm_mask)
    assert cold_work[3] > 500 and warm_work[3] * 5 < cold_work[3]     # the value start of "enabled"


def test_a_witness_found_one_by_one_goes_back_to_the_compiled_replay(llama3_tokenizer, llama3_vocab):
    """After ``[[103`` (generic JSON), the 423 whitespace tokens are narrow
    fresh candidates and no witness kept from before holds for them; once the
    first search finds one (a comma, a tab and a comma), the candidates left
    are replayed in compiled passes instead of one by one: fewer than 40 are
    decided one by one (441 were).  Oracle: the tokenizer's own ``encode``;
    a whitespace token is allowed iff one of a few continuations (a comma or
    a bracket, after nothing or one whitespace character) keeps the prefix's
    tokens and the token itself as the start of the canonical encoding."""
    from grammask.grammar import builtin

    grammask.clear_caches(vocabularies=False)
    compiled = grammask.compile(builtin("json"), llama3_vocab, grammask.Config(canonical=True))
    engine = grammask.Engine(compiled)
    prefix = "[[103"
    prefix_ids = llama3_tokenizer.encode(prefix, add_special_tokens=False).ids
    for token_id in prefix_ids:
        engine.try_accept_new_token(token_id)
    lookahead = compiled.lookahead
    one_by_one = []
    alive_here = lookahead._alive_here

    def counted(*args):
        one_by_one.append(args)
        return alive_here(*args)

    lookahead._alive_here = counted
    allowed = set(engine.compute_allowed_token_ids().tolist())
    assert len(one_by_one) < 40

    def canonical_after(token_id: int) -> bool:
        text = llama3_vocab.token_bytes(token_id).decode()
        for tail in (",", "]", "\t,", " ,", "\n,", "\t]"):
            ids = llama3_tokenizer.encode(prefix + text + tail, add_special_tokens=False).ids
            if ids[:len(prefix_ids) + 1] == prefix_ids + [token_id]:
                return True
        return False

    whitespace = [token_id for token_id in range(llama3_vocab.size)
                  if llama3_vocab.token_bytes(token_id) and not llama3_vocab.token_bytes(token_id).strip(b" \t\n\r")]
    assert len(whitespace) > 400
    assert [token_id for token_id in whitespace if (token_id in allowed) != canonical_after(token_id)] == []
