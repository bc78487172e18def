"""Canonical lookahead (grammask.engine.lookahead): no joint grammar/canonical dead ends.

Oracle: toy tiktoken tokenizers (a pre-tokenizer regex and merge ranks made
up here) and finite grammars.  Every sentence of the grammar is encoded by
tiktoken itself; a token is *viable* after a prefix iff some sentence's
encoding starts with prefix + token, and EOS iff the prefix is a sentence's
whole encoding.  Walking every reachable state, the engine's mask must be
exactly the viable set: the grammar mask AND the canonical filter alone
allows dead tokens here (``t`` when the grammar then forces ``rue``), which
is what the lookahead removes.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grammask
from grammask.bitset import has as bitset_has, set_bit_ids


PATTERN = r"[a-z]+|[0-9]{1,3}|[^a-z0-9]+"
EOS = "<|endoftext|>"


def toy_encoding(merges):
    """A tiktoken encoding: the 256 bytes, then ``merges`` in rank order
    (each a concatenation of two earlier tokens), then EOS."""
    ranks = {bytes([b]): b for b in range(256)}
    for token in merges:
        if token not in ranks:
            ranks[token] = len(ranks)
    return tiktoken.Encoding(name=f"toy{abs(hash(tuple(merges)))}", pat_str=PATTERN,
                             mergeable_ranks=ranks, special_tokens={EOS: len(ranks)})


def sentences(words, n_max, separators=(",",)):
    """word (separator word){0, n_max - 1}."""
    for n in range(1, n_max + 1):
        for combo in itertools.product(words, repeat=n):
            for between in itertools.product(separators, repeat=n - 1):
                yield combo[0] + "".join(separator + word for separator, word in zip(between, combo[1:]))


def grammar_for(words, n_max, separators=(",",)):
    alternatives = " | ".join('"' + word + '"' for word in words)
    rest = " ".join(["(sep word"] * (n_max - 1)) + " " + " ".join([")?"] * (n_max - 1))
    separator_rule = " | ".join('"' + separator + '"' for separator in separators)
    source = f"start ::= word {rest if n_max > 1 else ''};\nword ::= {alternatives};\n"
    if n_max > 1:
        source += f"sep ::= {separator_rule};\n"
    return grammask.Grammar.from_ebnf(source)


def viable_table(encoding, texts):
    """prefix tuple -> set of next ids (EOS id when the prefix is complete)."""
    eos_id = encoding.encode_single_token(EOS)
    table = {}
    for text in texts:
        ids = tuple(encoding.encode(text))
        for cut in range(len(ids) + 1):
            table.setdefault(ids[:cut], set()).add(ids[cut] if cut < len(ids) else eos_id)
    return table


def check_all_states(encoding, words, n_max, lookahead=4):
    """The number of states walked (every mask equal to the oracle's)."""
    return walk_all_states(encoding, words, n_max, lookahead)[0]


def walk_all_states(encoding, words, n_max, lookahead=4, separators=(",",)):
    """Walks every reachable state checking its mask; (states walked, the compiled grammar)."""
    vocab = grammask.Vocabulary.from_tiktoken(encoding)
    compiled = grammask.compile(grammar_for(words, n_max, separators), vocab,
                                grammask.Config(canonical=True, canonical_lookahead=lookahead))
    table = viable_table(encoding, sentences(words, n_max, separators))
    eos_id = encoding.encode_single_token(EOS)
    stack = [(grammask.Engine(compiled), ())]
    n_states = 0
    while stack:
        engine, prefix = stack.pop()
        n_states += 1
        allowed = set(engine.compute_allowed_token_ids().tolist())
        assert allowed == table[prefix], (
            f"after {[encoding.decode([t]) for t in prefix]}: engine allows "
            f"{sorted(encoding.decode([t]) if t != eos_id else 'EOS' for t in allowed - table[prefix])} "
            f"that are not viable, forbids "
            f"{sorted(encoding.decode([t]) if t != eos_id else 'EOS' for t in table[prefix] - allowed)}")
        assert engine.stats()["canonical_fallbacks"] == 0
        for token_id in allowed - {eos_id}:
            child = engine.copy()
            child.try_accept_new_token(token_id)
            stack.append((child, prefix + (token_id,)))
    return n_states, compiled


KEYWORD_MERGES = [b"tr", b"ue", b"true", b"ru", b"nu", b"ll", b"null", b"no", b",t", b"12", b"123"]


def test_keywords_have_no_dead_ends():
    encoding = toy_encoding(KEYWORD_MERGES)
    assert check_all_states(encoding, ["true", "null", "no", "t"], 2) > 10


def test_without_lookahead_the_dead_end_is_real():
    """The oracle sees the dead end the lookahead removes: ``t`` is allowed
    by the canonical filter but every grammar continuation of it is not."""
    encoding = toy_encoding(KEYWORD_MERGES)
    vocab = grammask.Vocabulary.from_tiktoken(encoding)
    compiled = grammask.compile(grammar_for(["true", "null"], 1), vocab,
                                grammask.Config(canonical=True, canonical_lookahead=0))
    engine = grammask.Engine(compiled)
    t_id = encoding.encode_single_token(b"t")
    assert t_id in engine.compute_allowed_token_ids()
    assert t_id not in viable_table(encoding, ["true", "null"])[()]
    engine.try_accept_new_token(t_id)
    engine.compute_allowed_token_ids()
    assert engine.stats()["canonical_fallbacks"] == 1


def test_replayed_witnesses_keep_masks_exact():
    """Words repeated after commas reach the same canonical states in other
    grammar contexts, where the lookahead replays witnesses found before
    instead of searching; every mask stays the oracle's."""
    encoding = toy_encoding(KEYWORD_MERGES + [b"tru", b"nul"])
    n_states, compiled = walk_all_states(encoding, ["true", "null", "no", "t"], 3)
    assert n_states > 50
    assert compiled.lookahead.n_replayed > 0


def test_witnesses_ending_where_a_text_starts_keep_masks_exact():
    """Spaces and commas before words: the search after a separator token
    reaches the word's start, a state searched as from the start of a text,
    and its witnesses end there (``FROM_START``); replayed from the
    separator tokens of later words, they take that state's start verdict.
    Every mask stays the oracle's."""
    encoding = toy_encoding(KEYWORD_MERGES + [b" ,", b", ", b" , ", b"  "])
    n_states, compiled = walk_all_states(encoding, ["true", "null", "no"], 3,
                                         separators=(",", " ,", ", ", " , ", "  ,"))
    assert n_states > 200
    assert compiled.lookahead.n_replayed_from_start > 0


def test_witnesses_of_another_grammar_keep_masks_exact():
    """Witnesses are kept per vocabulary (``grammask.engine.witnesses``): a
    grammar walked after another one on the same tokenizer replays what the
    first found (more replays than when it is walked cold), and every mask
    of both stays the oracle's."""
    encoding = toy_encoding(KEYWORD_MERGES + [b" ,", b", ", b" , ", b"  "])
    later = (["true", "no", "t"], 2, (",", ", ", "  ,"))
    grammask.clear_caches(vocabularies=False)
    cold = walk_all_states(encoding, *later[:2], separators=later[2])[1].lookahead.n_replayed
    grammask.clear_caches(vocabularies=False)
    walk_all_states(encoding, ["true", "null", "no"], 3, separators=(",", " ,", ", ", " , ", "  ,"))
    warm = walk_all_states(encoding, *later[:2], separators=later[2])[1].lookahead.n_replayed
    assert warm > cold


def test_a_kept_witness_says_nothing_where_the_grammar_moved_on():
    """``t`` is alive before ``to`` (``o`` follows it canonically) and dead
    after the comma, where only ``true`` (one token) may follow: the witness
    kept for the fresh token ``t`` at the first word does not hold at the
    second, and the mask there is still the oracle's."""
    encoding = toy_encoding([b"tr", b"ue", b"true", b"nu", b"ll", b"null"])
    texts = [first + "," + second for first in ("to", "null") for second in ("true", "null")]
    vocab = grammask.Vocabulary.from_tiktoken(encoding)
    grammar = grammask.Grammar.from_ebnf('start ::= ("to" | "null") "," ("true" | "null");\n')
    compiled = grammask.compile(grammar, vocab, grammask.Config(canonical=True))
    table = viable_table(encoding, texts)
    t_id = encoding.encode_single_token(b"t")
    seen = []
    stack = [(grammask.Engine(compiled), ())]
    while stack:
        engine, prefix = stack.pop()
        allowed = set(engine.compute_allowed_token_ids().tolist())
        assert allowed == table[prefix], [encoding.decode([t]) for t in prefix]
        seen.append(t_id in table[prefix])
        for token_id in allowed - {encoding.encode_single_token(EOS)}:
            child = engine.copy()
            child.try_accept_new_token(token_id)
            stack.append((child, prefix + (token_id,)))
    assert True in seen and len(seen) > 8


def test_fixed_digit_counts_have_no_dead_ends():
    encoding = toy_encoding([b"12", b"123", b"23", b"34", b"234"])
    assert check_all_states(encoding, ["1234", "12", "2345"], 2) > 5


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_words_and_merges(data):
    alphabet = "abn1"
    words = data.draw(st.lists(st.text(alphabet, min_size=1, max_size=4), min_size=1, max_size=3,
                               unique=True))
    pieces = sorted({word[i:j] for word in words for i in range(len(word))
                     for j in range(i + 2, len(word) + 1)} | {"," + word[:2] for word in words})
    chosen = data.draw(st.lists(st.sampled_from(pieces), max_size=8, unique=True)) if pieces else []
    # Like a trained vocabulary, every token is what BPE makes of its own
    # bytes (tiktoken would also emit a merge-unreachable token for a whole
    # pre-token; the filter assumes trained vocabularies, where none exist:
    # cl100k, tekken and Qwen2 have 0).
    ranks = {bytes([b]): b for b in range(256)}
    merges = []
    for piece in sorted(chosen, key=len):
        data_bytes = piece.encode()
        ranks[data_bytes] = len(ranks)
        if plain_bpe(data_bytes, ranks) == [data_bytes]:
            merges.append(data_bytes)
        else:
            del ranks[data_bytes]
    check_all_states(toy_encoding(merges), words, 2)


def plain_bpe(data: bytes, ranks: dict) -> list:
    """BPE without tiktoken's whole-piece shortcut: merge the adjacent pair of
    lowest rank until none is a token."""
    parts = [data[i:i + 1] for i in range(len(data))]
    while True:
        pairs = [(ranks[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1)
                 if parts[i] + parts[i + 1] in ranks]
        if not pairs:
            return parts
        _, i = min(pairs)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def test_set_bit_ids_matches_numpy():
    """``set_bit_ids``, the search's compiled ``bit_ids`` (with an excluded
    bitset and a limit) and ``more_bits_than`` read the same bits as numpy's
    unpacking."""
    from grammask._core.candidate_bits import bit_ids, more_bits_than

    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=40, dtype=np.uint64).astype(np.uint32)
    bits[3] = 0
    expected = np.flatnonzero(np.unpackbits(bits.view(np.uint8), bitorder="little")).tolist()
    assert set_bit_ids(bits) == expected
    for limit in (-1, 0, 1, 31, 32, 33, len(expected) - 1, len(expected), len(expected) + 1):
        assert more_bits_than(bits, limit) == (len(expected) > limit), limit
    assert not more_bits_than(np.zeros(3, np.uint32), 0) and more_bits_than(np.zeros(3, np.uint32), -1)
    assert bit_ids(bits, None, -1) == expected
    exclude = rng.integers(0, 2**32, size=40, dtype=np.uint64).astype(np.uint32)
    kept = np.flatnonzero(np.unpackbits((bits & ~exclude).view(np.uint8), bitorder="little")).tolist()
    for limit in (-1, 0, 1, 17, len(kept), len(kept) + 5):
        assert bit_ids(bits, exclude, limit) == (kept if limit < 0 else kept[:limit])
    assert bit_ids(np.zeros(5, np.uint32), None, 1) == []
    with pytest.raises(ValueError):
        bit_ids(bits, exclude[:3], 1)


def test_engines_on_several_threads_share_one_lookahead():
    """Engines of one compiled grammar on four threads get the oracle's masks
    (the lookahead's caches and scratch bitsets are shared)."""
    from concurrent.futures import ThreadPoolExecutor
    encoding = toy_encoding(KEYWORD_MERGES)
    words = ["true", "null", "no", "t", "12"]
    with ThreadPoolExecutor(4) as pool:
        counts = list(pool.map(lambda _: check_all_states(encoding, words, 2), range(4)))
    assert len(set(counts)) == 1 and counts[0] > 10


def test_tiktoken_vocabulary_with_a_merge_unreachable_token_gets_no_filter():
    """tiktoken encodes the whole pre-token "aaba" as one token that BPE on
    its bytes cannot build ("aa" merges first); the filter would forbid it,
    so no filter is claimed exact for such a vocabulary."""
    encoding = toy_encoding([b"aa", b"ab", b"aba", b"aaba"])
    assert plain_bpe(b"aaba", {**{bytes([b]): b for b in range(256)}, b"aa": 256, b"ab": 257,
                               b"aba": 258, b"aaba": 259}) == [b"aa", b"b", b"a"]
    assert encoding.encode("aaba") == [encoding.encode_single_token(b"aaba")]
    from grammask.canonical import build_canonical_filter
    vocab = grammask.Vocabulary.from_tiktoken(encoding)
    assert build_canonical_filter(vocab) is None
    with pytest.raises(grammask.VocabularyError, match="canonical"):
        grammask.compile(grammar_for(["aaba"], 1), vocab, grammask.Config(canonical=True))


@pytest.mark.parametrize("texts", [['{"a": "hello world", "b": [1, 22, 333]}\n',
                                    "def f(x):\n    return x  + 1\n",
                                    "It's 2024... ok?!  \"quoted\"\n\n"]])
def test_fresh_tokens_reach_the_same_state_whatever_came_before(cl100k_vocab, cl100k_encoding, texts):
    """The lookahead keeps verdicts of fresh tokens per grammar state only:
    that needs ``advance(state, t) == advance(initial_state(), t)`` for every
    token of ``fresh_bitset(state)`` (checked on the states of real encodings)."""
    from grammask.canonical import build_canonical_filter
    canonical = build_canonical_filter(cl100k_vocab)
    initial = canonical.initial_state()
    rng = np.random.default_rng(0)
    n_checked = 0
    for text in texts:
        state = initial
        for token_id in cl100k_encoding.encode(text, disallowed_special=()):
            fresh = canonical.fresh_bitset(state)
            if fresh is not None:
                candidates = set_bit_ids(fresh & canonical.keep_bitset(state))
                for other in rng.choice(candidates, size=min(30, len(candidates)), replace=False).tolist():
                    assert canonical.backend.advance(state, other) == canonical.backend.advance(initial, other)
                    n_checked += 1
            state = canonical.advance(state, token_id)
    assert n_checked > 500


def test_candidate_bits_equal_the_numpy_expressions():
    """``_core.candidate_bits`` (the lookahead's per-mask split of its candidates, the removal
    of dead fresh ones, bit setting) equals the numpy expressions over the same bitsets, read
    bit by bit."""
    from grammask._core.candidate_bits import add_ids, clear_dead, has_candidates, split_candidates

    rng = np.random.default_rng(11)

    def words(n):
        return (rng.integers(0, 1 << 32, n, dtype=np.uint64) & rng.integers(0, 1 << 32, n, dtype=np.uint64)
                ).astype(np.uint32)

    def ids(bits):
        return [index * 32 + bit for index in range(len(bits)) for bit in range(32) if (int(bits[index]) >> bit) & 1]

    for _ in range(300):
        n = int(rng.integers(1, 80))
        bits, narrow, fresh, checked, dead = (words(n) for _ in range(5))
        if rng.random() < 0.2:
            narrow[:] = 0
        elif rng.random() < 0.5:
            # sparse, as in a mask: the passes skip blocks of 16 words without a candidate
            narrow[rng.random(n) < 0.9] = 0
        unknown, others, n_fresh = split_candidates(bits, narrow, fresh, checked)
        assert unknown == ids(bits & narrow & fresh & ~checked)
        assert others == ids(bits & narrow & ~fresh)
        assert n_fresh == len(ids(bits & narrow & fresh))
        assert split_candidates(bits, narrow, None, None) == ([], ids(bits & narrow), 0)
        assert split_candidates(bits, narrow, fresh, None)[0] == ids(bits & narrow & fresh)
        assert has_candidates(bits, narrow) == bool((bits & narrow).any())
        cleared = bits.copy()
        assert clear_dead(cleared, narrow, fresh, dead) == len(ids(bits & narrow & fresh & dead))
        assert np.array_equal(cleared, bits & ~(narrow & fresh & dead))
        target = np.zeros(n, np.uint32)
        chosen = [int(token_id) for token_id in rng.integers(0, 32 * n, 6)]
        add_ids(target, chosen)
        assert ids(target) == sorted(set(chosen))


def test_candidates_in_byte_order_sort_as_their_bytes(cl100k_vocab):
    """``in_byte_order`` through the vocabulary's byte-order permutation gives
    ``sorted(ids, key=token_bytes)`` (the order the lookahead visits
    candidates in), for few and many ids, on cl100k and on a toy vocabulary
    with tokens of equal bytes (ties by id) and ids outside the trie."""
    from grammask._core.candidate_bits import in_byte_order
    from grammask.engine.vocab_tables import vocabulary_tables

    rng = np.random.default_rng(5)
    toy = grammask.Vocabulary([b"b", b"ab", b"a", b"ab", b"", b"ba", b"a\xff", b"\x00", b"b"], 4)
    for vocab in (cl100k_vocab, toy):
        tables = vocabulary_tables(vocab)
        order, rank = tables.byte_order, tables.byte_rank
        assert sorted(order.tolist()) == list(range(vocab.size))
        assert np.array_equal(rank[order], np.arange(vocab.size))
        text_ids = [token_id for token_id in range(vocab.size) if vocab.token_bytes[token_id]
                    and not vocab.is_special(token_id)]
        for size in (0, 1, 2, 7, 47, 48, 49, 300, 5000):
            ids = sorted(rng.choice(text_ids, min(size, len(text_ids)), replace=False).tolist())
            assert in_byte_order(ids, rank, order) == sorted(ids, key=vocab.token_bytes.__getitem__)
    with pytest.raises(IndexError):
        in_byte_order([toy.size], rank, order)


@pytest.mark.parametrize("texts", [['{"a": "hello world", "b": [1, 22, 333]}\n',
                                    "def f(x):\n    return x  + 1\n",
                                    'It\'s 2024... ok?!  "quoted"\n\n{"name":"This is a very"}']])
def test_fresh_first_bytes_start_a_text(cl100k_vocab, cl100k_encoding, texts):
    """``fresh_first_bytes(state)``: every token starting with one of its bytes is allowed
    after ``state`` exactly when it is allowed at the start of a text, and leads to the
    state it leads to from there (what lets the lookahead search such states from the
    start, ``_alive_from_start``); checked on the states of real encodings, every token of
    a sample of each byte's tokens."""
    from grammask.canonical import build_canonical_filter
    canonical = build_canonical_filter(cl100k_vocab)
    initial = canonical.initial_state()
    by_first: dict = {}
    for token_id, data in enumerate(cl100k_vocab.token_bytes):
        if data:
            by_first.setdefault(data[0], []).append(token_id)
    rng = np.random.default_rng(3)
    n_checked = n_states = 0
    for text in texts:
        state = initial
        for token_id in cl100k_encoding.encode(text, disallowed_special=()):
            fresh_bytes = canonical.fresh_first_bytes(state)
            if fresh_bytes:
                n_states += any(fresh_bytes)
                for byte in (b for b in range(256) if (fresh_bytes[b >> 3] >> (b & 7)) & 1):
                    ids = by_first.get(byte, [])
                    for other in rng.choice(ids, size=min(12, len(ids)), replace=False).tolist():
                        assert canonical.is_allowed(state, other) == canonical.is_allowed(initial, other)
                        assert canonical.advance(state, other) == canonical.advance(initial, other)
                        n_checked += 1
            state = canonical.advance(state, token_id)
    assert n_states > 20 and n_checked > 2000


def test_settle_from_start_sorts_candidates_as_the_probes_say(cl100k_vocab):
    """``_core.candidate_states.settle_from_start`` against the same questions asked one
    probe at a time in Python (``push_probe``, ``next_bytes``, ``state_key``): refused,
    not narrow, keyed with a verdict or without one, or left to the search, on the fresh
    candidates of masks along a counted string and a JSON object."""
    from grammask._core.candidate_states import settle_from_start
    from grammask._core.mask_computer import next_bytes, pop_probe, push_probe
    from grammask.bitset import byte_set_within

    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 14},
                                               "n": {"type": "integer"}}, "required": ["name", "n"]}
    compiled = grammask.compile(grammask.Grammar.from_json_schema(schema), cl100k_vocab,
                                grammask.Config(canonical=True, canonical_lookahead_budget=20_001))
    canonical = compiled.canonical
    token_bytes = cl100k_vocab.token_bytes
    rng = np.random.default_rng(5)
    engine = grammask.Engine(compiled)
    n_keyed = n_compared = 0
    for piece in ['{"', 'name', '":"', 'This', ' is', ' a', ' very', '","', 'n', '":', '12', '}']:
        bits = engine.allowed_bitset()
        recognizer = engine._recognizer
        ids = [t for t in set_bit_ids(bits) if token_bytes[t]][:3000]
        ordered = np.asarray(sorted(ids, key=token_bytes.__getitem__), dtype=np.int32)
        rows, known = canonical.start_byte_table(ordered)
        verdicts = {}
        # a few kept verdicts, alive and dead, at keys the candidates reach
        for token_id in rng.choice(ordered, size=min(20, len(ordered)), replace=False).tolist():
            if push_probe(recognizer, token_bytes[token_id]):
                verdicts[recognizer.state_key()] = (bool(rng.random() < 0.5), int(rng.integers(0, 5)), ())
                pop_probe(recognizer, len(token_bytes[token_id]))
        depth = 3
        alive, dead, keyed, other = settle_from_start(recognizer, ordered, token_bytes, rows, known,
                                                      verdicts, depth)
        expected = {"alive": [], "dead": [], "keyed": [], "other": []}
        for token_id in ordered.tolist():
            data = token_bytes[token_id]
            if not push_probe(recognizer, data):
                expected["dead"].append(token_id)
                continue
            try:
                byte_set, narrow = next_bytes(recognizer, data[-1])
                start = rows[token_id].tobytes()
                if not narrow:
                    expected["alive"].append(token_id)
                elif recognizer.is_accepting() or not known[token_id] or not byte_set_within(byte_set, start):
                    expected["other"].append(token_id)
                else:
                    key = recognizer.state_key()
                    found = verdicts.get(key)
                    if found is not None and not found[0]:
                        expected["dead"].append(token_id)
                    elif found is not None and found[1] >= depth:
                        expected["alive"].append(token_id)
                    else:
                        expected["keyed"].append((token_id, key))
            finally:
                pop_probe(recognizer, len(data))
        assert (alive, dead, keyed, other) == (expected["alive"], expected["dead"], expected["keyed"],
                                                expected["other"]), piece
        n_keyed += len(keyed)
        n_compared += len(ordered)
        engine.try_accept_new_bytes(piece.encode())
    assert n_compared > 5000 and n_keyed > 10


def _masks_along(compiled, vocab, texts) -> list:
    """Every mask along the tokenizer's own encodings of ``texts`` (each of
    their tokens allowed, no lookahead cutoff)."""
    masks = []
    for text in texts:
        engine = grammask.Engine(compiled)
        for token_id in vocab.tokenizer.encode(text, disallowed_special=()):
            masks.append(engine.allowed_bitset().copy())
            assert bitset_has(masks[-1], token_id), (text, vocab.token_bytes[token_id])
            engine.try_accept_new_token(token_id)
        assert engine.stats()["lookahead_cutoffs"] == 0
    return masks


def test_settled_candidates_give_the_masks_of_the_one_by_one_search(cl100k_vocab, monkeypatch):
    """Masks with the compiled pass over fresh candidates equal the masks of the search one
    candidate at a time (``SETTLE_MIN_CANDIDATES`` past any mask), along instances of a
    schema with counted strings, where hundreds of candidates end the count together."""
    from grammask.engine import lookahead

    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
                                               "tag": {"type": "string", "minLength": 2, "maxLength": 6},
                                               "n": {"type": "integer"}}, "required": ["name", "tag", "n"]}
    grammar = grammask.Grammar.from_json_schema(schema)
    texts = ['{"name":"This is a very","tag":"ab","n":12}', '{"name":"12345678901234567890","tag":"abcdef","n":-3}',
             '{"name":"","tag":"x y","n":0}']
    masks = {}
    for label, budget, minimum in (("settled", 400_001, lookahead.SETTLE_MIN_CANDIDATES),
                                   ("one by one", 400_002, 1 << 30)):
        monkeypatch.setattr(lookahead, "SETTLE_MIN_CANDIDATES", minimum)
        compiled = grammask.compile(grammar, cl100k_vocab,
                                    grammask.Config(canonical=True, canonical_lookahead_budget=budget))
        masks[label] = _masks_along(compiled, cl100k_vocab, texts)
    assert len(masks["settled"]) == len(masks["one by one"])
    for settled, searched in zip(masks["settled"], masks["one by one"]):
        assert np.array_equal(settled, searched)


def test_replayed_fresh_witnesses_give_the_masks_of_the_search(cl100k_vocab, monkeypatch):
    """Masks with kept witnesses replayed (the compiled pass over fresh
    candidates, witnesses ending where a search from the start of a text takes
    over) equal the masks of the search alone, along indented instances, where
    every whitespace token before a member or a value is a candidate and the
    members' names change from one position to the next."""
    from grammask.engine import lookahead

    schema = {"type": "object", "properties": {
        "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
        "size": {"type": "integer"}, "extra": {"type": "object", "properties": {"flag": {"type": "boolean"},
                                                                                "note": {"type": "string"}}}}}
    grammar = grammask.Grammar.from_json_schema(schema)
    texts = ['{\n  "name": "a b",\n  "tags": [\n    "x",\n    "y"\n  ],\n  "size": 3,\n'
             '  "extra": {\n    "flag": true,\n    "note": "ok"\n  }\n}',
             '{"name":"n",\n\t"size": 12, "extra": {"flag": false, "note": "z"}}']
    masks, lookaheads = {}, {}
    for label, budget in (("replayed", 400_003), ("searched", 400_004)):
        if label == "searched":
            monkeypatch.setattr(lookahead.CanonicalLookahead, "_witness_holds", lambda *args: False)
            monkeypatch.setattr(lookahead.CanonicalLookahead, "_replay_fresh_witnesses",
                                lambda self, recognizer, ids, position, decided: ids)
        compiled = grammask.compile(grammar, cl100k_vocab,
                                    grammask.Config(canonical=True, canonical_lookahead_budget=budget))
        masks[label] = _masks_along(compiled, cl100k_vocab, texts)
        lookaheads[label] = compiled.lookahead
    assert lookaheads["replayed"].n_replayed_from_start > 10
    assert len(masks["replayed"]) == len(masks["searched"])
    for replayed, searched in zip(masks["replayed"], masks["searched"]):
        assert np.array_equal(replayed, searched)
