"""The canonical filter inside long runs that fix no pre-token boundary (whitespace, letters).

Inside such a run the pre-token region would grow with every token; the
filter keeps a shorter region with the same match chain
(``canonical.region_chain``).  Checked here on cl100k, Llama-3, Qwen2 and
tekken against independent oracles: the tokenizer's own encode (every token
of the canonical encoding of a text with 1,000+ characters of mixed
whitespace or of letters is allowed; the end check after sampled tokens
equals "encode of the text gives these tokens"; a token that some
one-character continuation makes part of the canonical encoding is
allowed) and the pattern's regex (``regex``) scanned over the whole,
unshortened region, which must give every sampled token the verdict the
shortened state gives.  The state's size and the number of distinct region
signatures stay bounded over 2,000 whitespace tokens (work counted, not
time).
"""

from __future__ import annotations

import random

import pytest

from grammask.canonical import build_canonical_filter, pretokenized_bpe

_FILTERS: dict = {}

_PROBES = ("", " ", "a", "A", "1", ".", "\n", "'", "\t", "é", "日", "!", "x", '"', "}")
"""One-character continuations (and the end of the text) the encode oracle tries after a token."""


def _encoder(name, request):
    if name == "llama3":
        tokenizer = request.getfixturevalue("llama3_tokenizer")
        return tokenizer, lambda text: tokenizer.encode(text, add_special_tokens=False).ids
    encoding = request.getfixturevalue({"cl100k": "cl100k_encoding", "qwen2": "qwen_encoding",
                                        "tekken": "tekken_encoding"}[name])
    return encoding, lambda text: encoding.encode(text, disallowed_special=())


@pytest.fixture(params=["cl100k", "llama3", "qwen2", "tekken"], scope="module")
def filter_and_encode(request):
    """(filter, encode, token texts): one filter per tokenizer; token texts None where a
    token's bytes are not whole UTF-8 characters or the filter leaves it alone."""
    if request.param not in _FILTERS:
        source, encode = _encoder(request.param, request)
        flt = build_canonical_filter(source)
        merges = flt.backend.merges
        texts = []
        for token_id in range(flt.vocab_size):
            data = merges.token_bytes[token_id] if token_id < merges.n_tokens else None
            try:
                text = None if data is None or token_id in flt.backend.never_filtered_ids else data.decode()
            except UnicodeDecodeError:
                text = None
            texts.append(text)
        _FILTERS[request.param] = (flt, encode, texts)
    return _FILTERS[request.param]


def _whitespace_run(rng: random.Random, pieces: int) -> str:
    return "".join(rng.choice([" ", "  ", "\n", "\t", "\n  ", "\r\n", "    ", "\t\t"]) for _ in range(pieces))


def _texts(rng: random.Random) -> list:
    """Heads followed by 1,000+ characters of mixed whitespace, of spaces after a newline, or of letters."""
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(1200))
    return [
        '{"a": 1}' + _whitespace_run(rng, 700),
        '{"a": [1,' + _whitespace_run(rng, 700) + "2]}",
        '{"a":\n' + " " * 1100,
        "x " + letters,
        "x " + letters[:1000].upper() + " y",
    ]


def _check_position(flt, encode, texts, rng, ids, prefix_text, state, k):
    """At prefix ids[:k] (text ``prefix_text``, filter state ``state``): for every whitespace
    token and a sample of others, the end check after it equals the encode oracle, and a
    token that a one-character continuation makes canonical is allowed."""
    keep = flt.keep_bitset(state)
    candidates = [t for t, text in enumerate(texts) if text is not None and not text.strip()]
    candidates += rng.sample([t for t, text in enumerate(texts) if text and text.strip()], 150)
    for token_id in candidates:
        allowed = bool((keep[token_id >> 5] >> (token_id & 31)) & 1)
        assert allowed == flt.is_allowed(state, token_id)
        expected = ids[:k] + [token_id]
        text = prefix_text + texts[token_id]
        if allowed:
            after = flt.advance(state, token_id)
            assert flt.is_complete_canonical(after) == (encode(text) == expected), (k, texts[token_id])
        else:
            for probe in _PROBES:
                assert encode(text + probe)[:k + 1] != expected, (k, texts[token_id], probe)


def test_long_runs_match_the_tokenizers_encode(filter_and_encode):
    flt, encode, texts = filter_and_encode
    rng = random.Random(5)
    for text in _texts(rng):
        ids = encode(text)
        state = flt.initial_state()
        prefix_text = ""
        checks = set(rng.sample(range(len(ids)), 3)) | {len(ids)}
        for k, token_id in enumerate(ids):
            if k in checks:
                _check_position(flt, encode, texts, rng, ids, prefix_text, state, k)
            assert flt.is_allowed(state, token_id), (text[:20], k)
            state = flt.advance(state, token_id)
            prefix_text += texts[token_id]
        assert flt.is_complete_canonical(state)
        _check_position(flt, encode, texts, rng, ids, prefix_text, state, len(ids))


def test_shortened_regions_give_the_verdicts_of_the_whole_region(filter_and_encode, monkeypatch):
    """After every token of runs of 150+ characters, the shortened state's mask and end
    check equal those of the state that keeps the whole region; at the run's end, the
    verdict of sampled tokens equals the regex scans of the whole region (the pattern's
    own matches over every character since the last fixed boundary, ``_verdict``)."""
    flt, encode, texts = filter_and_encode
    backend = flt.backend
    rng = random.Random(9)
    sample = rng.sample([t for t, text in enumerate(texts) if text], 40)
    sample += [t for t, text in enumerate(texts) if text is not None and not text.strip()][:40]
    for text, run_at_end in (('{"a": 1}' + _whitespace_run(rng, 150), True),
                             ('{"a": 1}' + _whitespace_run(rng, 150) + "1}", False),
                             ("x " + "ab" * 150, True), ('{"a":\n' + " " * 300, True)):
        short = whole = backend.initial_state()
        for token_id in encode(text):
            short = backend.advance(short, token_id)
            with monkeypatch.context() as patch:
                patch.setattr(pretokenized_bpe, "_SHORTEN_FROM", 1 << 30)
                whole = backend.advance(whole, token_id)
                whole_words = backend.allowed_words(whole)
                whole_complete = backend.is_complete(whole)
            assert (backend.allowed_words(short) == whole_words).all(), (text[:12], whole.region)
            assert backend.is_complete(short) == whole_complete
        if not run_at_end:
            continue
        assert len(whole.region) > 100 and len(short.region) <= 8
        for token_id in sample:
            _lead, body, tail = backend._token_parts(token_id)
            assert backend.token_verdict(short, token_id) == backend._verdict(whole, "", body, tail, False), (
                text[:12], texts[token_id])


def test_random_whitespace_walks_keep_the_whole_regions_masks(filter_and_encode, monkeypatch):
    """Walks of 200 whitespace tokens drawn from the mask of the state that keeps the whole
    region (so cuts fall where no canonical encoding puts them): after every token the
    shortened state's mask and end check equal the whole region's."""
    flt, _encode, texts = filter_and_encode
    backend = flt.backend
    whitespace = [t for t, text in enumerate(texts) if text is not None and not text.strip() and len(text) <= 4]
    rng = random.Random(13)
    for _walk in range(2):
        short = whole = backend.initial_state()
        for _step in range(200):
            with monkeypatch.context() as patch:
                patch.setattr(pretokenized_bpe, "_SHORTEN_FROM", 1 << 30)
                whole_words = backend.allowed_words(whole)
                choices = [t for t in whitespace if (whole_words[t >> 5] >> (t & 31)) & 1]
                token_id = rng.choice(choices)
                whole = backend.advance(whole, token_id)
                whole_words = backend.allowed_words(whole)
                whole_complete = backend.is_complete(whole)
            short = backend.advance(short, token_id)
            assert (backend.allowed_words(short) == whole_words).all(), (whole.region, whole.cuts)
            assert backend.is_complete(short) == whole_complete


def test_states_stay_bounded_in_a_long_whitespace_run(filter_and_encode):
    """2,000+ whitespace tokens: few distinct states and region signatures, none long."""
    flt, encode, _texts_ = filter_and_encode
    backend = flt.backend
    rng = random.Random(3)
    ids = encode('{"a": 1}' + _whitespace_run(rng, 5000))
    assert len(ids) > 2000
    state = flt.initial_state()
    states, signatures = set(), set()
    for token_id in ids:
        state = flt.advance(state, token_id)
        states.add((state.region, state.cuts, state.partial))
        signatures.add(backend._region_key(state))
    assert max(len(region) for region, _cuts, _partial in states) <= 8
    assert len(states) <= 64 and len(signatures) <= 64, (len(states), len(signatures))
