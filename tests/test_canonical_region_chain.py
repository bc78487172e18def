"""The compiled match chain, shortening and trim, and the memoized region step of ``advance``.

``_region_chain.ChainTable`` must give exactly what the Python reference in
``canonical.region_chain`` gives (the same chain, the same shortened region
and cuts, not just an equivalent one) on random class strings with random
cuts; its trim must equal the compiled scan's common boundary followed by
that shortening, and the states along random walks over real vocabularies
must equal those of the Python memos and scans.
``PretokenizedBPE._advance`` memoizes the region part of its result on the
state's region part, the token's shape and the pair verdict; the states it
returns must equal the ones computed afresh (``_region_step``) along random
walks after many different last tokens.  Run on cl100k, Llama-3, Qwen2 and
tekken; the filter's agreement with the tokenizers' own encode is checked in
``test_canonical_long_runs`` and ``test_canonical_pretokenized``.
"""

from __future__ import annotations

import pickle
import random

import pytest

from grammask.canonical import build_canonical_filter, region_chain

_BACKENDS: dict = {}

_ALPHABET = " \n\t\r\x00aA1'.,\"{}:é日!-"
"""Characters the random regions are drawn from (class representatives are taken of them)."""


@pytest.fixture(params=["cl100k", "llama3", "qwen2", "tekken"], scope="module")
def backend(request):
    """A fresh (unpickled) backend per tokenizer, so memos start empty."""
    if request.param not in _BACKENDS:
        if request.param == "llama3":
            source = request.getfixturevalue("llama3_tokenizer")
        else:
            source = request.getfixturevalue({"cl100k": "cl100k_encoding", "qwen2": "qwen_encoding",
                                              "tekken": "tekken_encoding"}[request.param])
        _BACKENDS[request.param] = build_canonical_filter(source).backend
    return pickle.loads(pickle.dumps(_BACKENDS[request.param]))


def _random_regions(backend, rng: random.Random, count: int):
    """(region, cuts) pairs: class strings of 1-30 characters (runs of one character
    likely), ascending cuts strictly inside with random verdicts."""
    for _ in range(count):
        chars = []
        while len(chars) < rng.randint(1, 30):
            chars += rng.choice(_ALPHABET) * rng.choice((1, 1, 2, 5, 9))
        region = backend.classes.represent_many(["".join(chars)])[0]
        offsets = sorted(rng.sample(range(1, len(region)), min(len(region) - 1, rng.randint(0, 8))))
        yield region, tuple((offset, rng.random() < 0.75) for offset in offsets)


def test_compiled_chain_and_shorten_equal_the_reference(backend):
    scan, table = backend._compiled_scans(), backend._chain_table()
    covering = backend._machine.covering
    for region, cuts in _random_regions(backend, random.Random(31), 3000):
        assert table.match_chain(region, cuts) == region_chain.match_chain(scan, covering, region, cuts)
        assert table.shorten(region, cuts) == region_chain.shorten(scan, covering, region, cuts), (region, cuts)
        assert table.shorten(region, cuts, 2) == region_chain.shorten(scan, covering, region, cuts, 2)


def test_shorten_declines_verdicts_that_are_not_booleans(backend):
    table = backend._chain_table()
    region = backend.classes.represent_many(["  \n   \n  "])[0]
    assert table.shorten(region, ((2, 1),)) is None
    assert table.match_chain(region, ((2, None),)) is None


def _reference_trimmed(backend, region: str, cuts: tuple, short: int = 4):
    """``_trimmed``'s region and cuts without a partial character, from the Python parts:
    the compiled scan's common boundary (None where it does not decide), the cuts up to
    it dropped, then ``region_chain.shorten`` past ``short`` characters."""
    cut = backend._compiled_scans().common_boundary(region)
    if cut < 0:
        return None
    if cut:
        cuts = tuple((offset - cut, verdict) for offset, verdict in cuts if offset > cut)
        region = region[cut:]
    if len(region) > short:
        region, cuts = region_chain.shorten(backend._compiled_scans(), backend._machine.covering, region, cuts)
    return region, cuts


def test_compiled_trim_equals_the_reference(backend):
    table = backend._chain_table()
    for region, cuts in _random_regions(backend, random.Random(37), 3000):
        assert table.trimmed(region, cuts) == _reference_trimmed(backend, region, cuts), (region, cuts)


def test_states_along_random_walks_equal_the_python_path(backend, monkeypatch):
    """States after every token of random walks (whitespace runs likely) with the
    compiled trim equal those of the Python memos and scans (``_chain_table`` and its
    memo off), which ``test_canonical_long_runs`` checks against the tokenizers."""
    rng = random.Random(5)
    token_ids = [token_id for token_id in range(backend.vocab_size) if backend._shape_index[token_id] >= 0]
    whitespace = [token_id for token_id in token_ids if not backend.shapes[backend._shape_index[token_id]][0].strip()]
    reference = pickle.loads(pickle.dumps(backend))
    reference._compiled_scans()
    monkeypatch.setattr(reference, "_chain_table", lambda: _PythonChain(reference))
    state = expected = backend.initial_state()
    for _ in range(600):
        token_id = rng.choice(whitespace if rng.random() < 0.7 else token_ids)
        pair_ok = backend._pair_ok(state, token_id)
        state = backend._region_step(state, token_id, pair_ok)
        expected = reference._region_step(expected, token_id, pair_ok)
        assert state == expected


class _PythonChain:
    """A stand-in for ``ChainTable`` that declines every trim and shortens in Python."""

    def __init__(self, backend):
        self.backend = backend

    def trimmed(self, region, cuts, short=4):
        return None

    def shorten(self, region, cuts):
        return None


def test_memoized_advance_equals_the_region_step(backend):
    """Random walks, each token asked after several last tokens of the same region:
    the memoized state equals ``_region_step``'s, last token included."""
    rng = random.Random(9)
    token_ids = [token_id for token_id in range(backend.vocab_size) if backend._shape_index[token_id] >= 0]
    whitespace = [token_id for token_id in token_ids if not backend.shapes[backend._shape_index[token_id]][0].strip()]
    state = backend.initial_state()
    for _ in range(400):
        pool = whitespace if rng.random() < 0.5 else token_ids
        for next_id in rng.sample(pool, 6) + [rng.randrange(backend.vocab_size)]:
            for last_id in (state.last_id, rng.choice(token_ids)):
                probe = state._replace(last_id=last_id)
                pair_ok = backend._pair_ok(probe, next_id)
                assert backend._advance(probe, next_id, pair_ok) == backend._region_step(probe, next_id, pair_ok)
        state = backend.advance(state, rng.choice(pool))
