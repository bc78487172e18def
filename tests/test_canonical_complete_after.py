"""The canonical filter's batched end check after many tokens against the tokenizers' own encode.

``CanonicalFilter.complete_after(state, ids)`` says, for each token t, whether
the tokens so far followed by t are the canonical encoding of their text
(``_region_scan.ScanTable.complete_after``: the region's decided matches walked
once, then each token's text, trim and end check).  The canonical lookahead
asks it for every candidate after which the grammar may end (trailing
whitespace).  Checked here against tiktoken's own ``encode`` of the text
(the independent oracle) on states after real encodings of JSON-like texts
ending in long whitespace runs, words and numbers, for every whitespace
token and a sample of the others that the filter allows there (the
lookahead's candidates are tokens of the filtered mask); and against the one-by-one path
(``advance`` then ``is_complete_canonical``), which the lookahead used before.
"""

from __future__ import annotations

import random

import pytest

from grammask.canonical import build_canonical_filter

_FILTERS: dict = {}


@pytest.fixture(params=["cl100k", "tekken"], scope="module")
def encoding_and_filter(request):
    """(encoding, its canonical filter): conftest's encodings, one filter each."""
    if request.param not in _FILTERS:
        encoding = request.getfixturevalue(f"{request.param}_encoding")
        _FILTERS[request.param] = (encoding, build_canonical_filter(encoding))
    return _FILTERS[request.param]


def _texts(rng: random.Random) -> list:
    """JSON-like texts ending in whitespace runs (up to 300 characters), words, numbers."""
    spaces = [" ", "  ", "\n", "\t", "\n  ", "\r\n", "    "]
    texts = []
    for _ in range(24):
        run = "".join(rng.choice(spaces) for _ in range(rng.randrange(0, 60)))
        head = rng.choice(['{"a": 1}', '[1, 2]', '{"name": "x y"}', "true", '"abc"', "12.5"])
        texts.append(head + run)
        texts.append(head + run + rng.choice(["x", "word", "12", '"', "}", " it"]))
    return texts


def test_complete_after_matches_the_tokenizers_encode(encoding_and_filter):
    encoding, flt = encoding_and_filter
    n_vocab = flt.vocab_size
    never = flt.backend.never_filtered_ids
    token_bytes = [None if t in never else encoding.decode_single_token_bytes(t) for t in range(n_vocab)]
    whitespace = [t for t, data in enumerate(token_bytes) if data and not data.strip()]
    others = [t for t, data in enumerate(token_bytes) if data and data.strip()]
    rng = random.Random(41)
    n_decided = n_complete = n_asked = 0
    for text in _texts(rng):
        ids = encoding.encode(text, disallowed_special=())
        state = flt.initial_state(ids)
        # the lookahead asks about tokens of the mask, which the filter allows
        candidates = [t for t in whitespace + rng.sample(others, 400) if flt.is_allowed(state, t)]
        found = flt.complete_after(state, candidates)
        assert found is not None
        data = b"".join(token_bytes[t] for t in ids)
        for token_id, verdict in zip(candidates, found.tolist()):
            n_asked += 1
            one_by_one = flt.is_complete_canonical(flt.advance(state, token_id))
            if verdict < 0:
                continue
            assert verdict == one_by_one, (text, token_id)
            n_decided += 1
            try:
                full = (data + token_bytes[token_id]).decode("utf-8")
            except UnicodeDecodeError:
                assert verdict == 0
                continue
            expected = encoding.encode(full, disallowed_special=()) == ids + [token_id]
            assert verdict == expected, (text, token_bytes[token_id])
            n_complete += verdict
    assert n_decided > 0.9 * n_asked
    assert 0 < n_complete < n_decided
