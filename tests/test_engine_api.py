"""The Engine API contract (docs/design.md section 2): names, ending rules,
rejection leaves state unchanged, rollback/copy/reset, bitmask layout,
logits masking for numpy and torch, and the pitfalls of docs/design.md section 10
that concern the engine (special tokens as text, duplicate-bytes ids, eager
end cutting ``[0-9]+`` short)."""

from __future__ import annotations

import numpy as np
import pytest

import grammask
from grammask import Status, TokenRejected

EOS, EOT, SPECIAL = 0, 1, 2
PIECES = [b"1", b"2", b"12", b"a", b"b", b"ab", b"[", b"]", b",", b" ", b"", b"1", b"<s>"]


@pytest.fixture(scope="module")
def vocab():
    # 0 EOS, 1 end-of-turn (also EOS), 2 special carrying printable bytes,
    # then text pieces; id 13 is an empty token, id 14 duplicates "1".
    token_bytes = [b"</s>", b"<eot>", b"1"] + PIECES
    return grammask.Vocabulary(token_bytes, eos_token_ids=[EOS, EOT], special_token_ids=[SPECIAL])


def token_id(vocab, data, nth=0):
    ids = [t for t in range(vocab.size) if vocab.token_bytes[t] == data and not vocab.is_special(t)]
    return ids[nth]


@pytest.fixture(scope="module")
def digits(vocab):
    return grammask.compile(grammask.Grammar.from_ebnf('start ::= #"[0-9]+";'), vocab)


@pytest.fixture(scope="module")
def lists(vocab):
    grammar = grammask.Grammar.from_ebnf("""
        start ::= '[' items? ']';
        items ::= item | items ',' ' '? item;
        item ::= #"[0-9]+" | #"[ab]+";
    """)
    return grammask.compile(grammar, vocab)


def allowed_bytes(engine):
    vocab = engine.vocab
    return sorted({vocab.token_bytes[t] for t in engine.compute_allowed_token_ids()
                   if t not in vocab.eos_token_ids})


def test_eos_exactly_when_complete_and_continuation_stays(vocab, digits):
    engine = grammask.Engine(digits)
    assert not engine.can_end()
    ids = engine.compute_allowed_token_ids()
    assert EOS not in ids and EOT not in ids
    assert engine.try_accept_new_token(token_id(vocab, b"1")) is Status.ONGOING
    ids = engine.compute_allowed_token_ids()
    assert EOS in ids and EOT in ids
    assert token_id(vocab, b"12") in ids  # [0-9]+ is not cut to one token (kbnf pitfall)
    assert engine.can_end() and not engine.is_finished()
    assert engine.try_accept_new_token(EOT) is Status.FINISHED
    assert engine.is_finished()
    assert engine.compute_allowed_token_ids().tolist() == [EOS, EOT]
    with pytest.raises(TokenRejected):
        engine.try_accept_new_token(token_id(vocab, b"1"))


def test_eager_end(vocab):
    compiled = grammask.compile(grammask.Grammar.from_ebnf('start ::= #"[0-9]+";'), vocab,
                                grammask.Config(eager_end=True))
    engine = grammask.Engine(compiled)
    assert engine.try_accept_new_token(token_id(vocab, b"1")) is Status.FINISHED
    assert engine.compute_allowed_token_ids().tolist() == [EOS, EOT]


def test_nothing_can_follow_means_finished(vocab):
    engine = grammask.Engine(grammask.Grammar.from_ebnf("start ::= 'ab';"), vocab)
    engine.try_accept_new_token(token_id(vocab, b"a"))
    assert not engine.is_finished()
    assert engine.try_accept_new_token(token_id(vocab, b"b")) is Status.FINISHED
    assert engine.compute_allowed_token_ids().tolist() == [EOS, EOT]


def test_rejection_leaves_state_unchanged(vocab, lists):
    engine = grammask.Engine(lists)
    engine.try_accept_new_token(token_id(vocab, b"["))
    engine.try_accept_new_token(token_id(vocab, b"1"))
    before = engine.compute_allowed_token_ids().copy()
    for bad in (token_id(vocab, b"[") , SPECIAL, EOS, token_id(vocab, b""), 10_000, -1):
        with pytest.raises(TokenRejected):
            engine.try_accept_new_token(bad)
        assert engine.compute_allowed_token_ids().tolist() == before.tolist()
    with pytest.raises(TokenRejected) as info:
        engine.try_accept_new_bytes(b",a[")
    assert info.value.offset == 2
    assert engine.compute_allowed_token_ids().tolist() == before.tolist()
    assert engine.output_bytes() == b"[1"


def test_special_tokens_never_allowed_as_text(vocab, digits):
    # SPECIAL carries b"1", which the grammar allows as text.
    engine = grammask.Engine(digits)
    assert SPECIAL not in engine.compute_allowed_token_ids()
    with pytest.raises(TokenRejected):
        engine.try_accept_new_token(SPECIAL)


def test_duplicate_bytes_ids_all_allowed_and_empty_never(vocab, digits):
    engine = grammask.Engine(digits)
    ids = engine.compute_allowed_token_ids().tolist()
    assert token_id(vocab, b"1", 0) in ids and token_id(vocab, b"1", 1) in ids
    assert token_id(vocab, b"") not in ids


def test_rollback_copy_reset(vocab, lists):
    engine = grammask.Engine(lists)
    steps = [b"[", b"12", b",", b" ", b"ab"]
    masks = [engine.compute_allowed_token_ids().tolist()]
    for data in steps:
        engine.try_accept_new_token(token_id(vocab, data))
        masks.append(engine.compute_allowed_token_ids().tolist())
    clone = engine.copy()
    engine.rollback(2)
    assert engine.compute_allowed_token_ids().tolist() == masks[3]
    assert engine.output_bytes() == b"[12,"
    assert clone.output_bytes() == b"[12, ab"
    assert clone.compute_allowed_token_ids().tolist() == masks[5]
    clone.try_accept_new_token(token_id(vocab, b"]"))
    assert clone.try_accept_new_token(EOS) is Status.FINISHED
    clone.rollback(1)
    assert clone.can_end() and clone.n_accepted == 6
    assert clone.try_accept_new_token(EOS) is Status.FINISHED  # EOS can be accepted again
    engine.reset()
    assert engine.compute_allowed_token_ids().tolist() == masks[0]
    with pytest.raises(ValueError):
        engine.rollback(1)


def test_bitmask_layout_matches_ids(vocab, lists):
    engine = grammask.Engine(lists)
    engine.try_accept_new_token(token_id(vocab, b"["))
    n_words = (vocab.size + 31) // 32
    bitmask = np.zeros((3, n_words), dtype=np.int32)
    engine.fill_bitmask(bitmask, row=1)
    assert not bitmask[0].any() and not bitmask[2].any()
    words = bitmask[1].view(np.uint32)
    from_bits = [t for t in range(vocab.size) if (words[t // 32] >> (t % 32)) & 1]
    assert from_bits == engine.compute_allowed_token_ids().tolist()
    with pytest.raises(grammask.VocabularyError):
        engine.fill_bitmask(np.zeros((1, n_words + 1), dtype=np.int32))
    with pytest.raises(grammask.IndexOutOfRange):
        engine.fill_bitmask(bitmask, row=-1)
    read_only = np.zeros((1, n_words), dtype=np.int32)
    read_only.flags.writeable = False
    with pytest.raises(grammask.InvalidArgument):
        engine.fill_bitmask(read_only)
    # the memcpy path's neighbours: a 1-D array, a strided one, a numpy row index
    one_d = np.zeros(n_words, dtype=np.int32)
    engine.fill_bitmask(one_d)
    strided = np.zeros((n_words, 2), dtype=np.int32).T
    engine.fill_bitmask(strided, row=np.int64(1))
    assert (one_d == bitmask[1]).all() and (strided[1] == bitmask[1]).all() and not strided[0].any()


@pytest.mark.parametrize("vocab_size", [1, 31, 32, 33, 1000, 128257])
def test_allowed_ids_match_the_unpacked_bits(vocab_size):
    """``_core.logits.allowed_ids`` (popcount and count-trailing-zeros) equals numpy's
    unpack and nonzero (``bitset.token_ids``) on random bitsets of every density, the
    padding bits past the vocabulary set, and on a bitset shorter than the vocabulary."""
    from grammask import bitset
    from grammask._core.logits import allowed_ids

    rng = np.random.default_rng(vocab_size)
    for density in (0.0, 0.001, 0.3, 1.0):
        flags = rng.random(vocab_size) < density
        bits = bitset.from_flags(flags)
        if vocab_size % 32:
            bits[-1] |= np.uint32(0xFFFFFFFF) << np.uint32(vocab_size % 32)
        assert allowed_ids(bits, vocab_size).dtype == np.int32
        assert allowed_ids(bits, vocab_size).tolist() == np.flatnonzero(flags).tolist()
        assert allowed_ids(bits, vocab_size).tolist() == bitset.token_ids(bits, vocab_size).tolist()
    short = bitset.from_flags(np.ones(min(vocab_size, 64), dtype=bool))
    assert allowed_ids(short, vocab_size + 64).tolist() == list(range(min(vocab_size, 64)))


@pytest.mark.parametrize("vocab_size", [1, 31, 32, 33, 1000, 49152])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mask_rows_matches_the_unpacked_bits(vocab_size, dtype):
    """``_core.logits.mask_rows`` writes -inf exactly where numpy's unpacked
    bits are clear and at every padded column, on random bitsets of every
    density (padding bits past the vocabulary set or not), over contiguous,
    strided (llama-cpp-python's 12-byte stride), reversed and 2-D rows, and
    leaves every other value and the bytes between strided values untouched."""
    from grammask import bitset
    from grammask._core.logits import mask_rows

    rng = np.random.default_rng(vocab_size)
    for density in (0.0, 0.02, 0.5, 0.98, 1.0):
        flags = rng.random(vocab_size) < density
        bits = bitset.from_flags(flags)
        if vocab_size % 32 and density > 0.5:
            bits[-1] |= np.uint32(0xFFFFFFFF) << np.uint32(vocab_size % 32)
        for width in (vocab_size, vocab_size + 37):
            expected_allowed = np.zeros(width, dtype=bool)
            expected_allowed[:vocab_size] = flags
            values = rng.standard_normal(width).astype(dtype)
            backing = np.tile(values[:, None], (1, 3))
            contiguous = values.copy()
            reversed_row = values[::-1].copy()[::-1]
            rows = np.tile(values, (3, 1))
            for target in (contiguous[None, :], backing[:, 0][None, :], reversed_row[None, :], rows):
                mask_rows(target, bits, vocab_size)
                for row in target:
                    assert (np.isneginf(row) == ~expected_allowed).all()
                    assert (row[expected_allowed] == values[expected_allowed]).all()
            assert (backing[:, 1:] == values[:, None]).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_mask_logits_numpy(vocab, lists, dtype):
    engine = grammask.Engine(lists)
    allowed = set(engine.compute_allowed_token_ids().tolist())
    logits = np.arange(vocab.size + 5, dtype=dtype)  # padded model vocabulary
    engine.mask_logits(logits)
    for t in range(vocab.size + 5):
        assert np.isneginf(logits[t]) == (t not in allowed)
    # strided, as llama-cpp-python passes scores, and [rows, V]
    backing = np.zeros((vocab.size, 2), dtype=np.float32)
    strided = backing[:, 0]
    assert not strided.flags.c_contiguous
    engine.mask_logits(strided)
    assert [t for t in range(vocab.size) if not np.isneginf(strided[t])] == sorted(allowed)
    assert not np.isneginf(backing[:, 1]).any()
    rows = np.zeros((3, vocab.size), dtype=np.float32)
    engine.mask_logits(rows)
    for row in rows:
        assert [t for t in range(vocab.size) if not np.isneginf(row[t])] == sorted(allowed)


def test_wrong_logits_leave_state_unchanged(vocab, lists):
    engine = grammask.Engine(lists)
    with pytest.raises(grammask.VocabularyError):
        engine.modify_possible_logits(token_id(vocab, b"["), np.zeros(vocab.size - 1, np.float32))
    assert engine.n_accepted == 0
    logits = np.zeros(vocab.size, np.float32)
    assert engine.modify_possible_logits(None, logits) is Status.ONGOING
    assert engine.modify_possible_logits(token_id(vocab, b"["), logits) is Status.ONGOING
    assert engine.output_bytes() == b"["


def test_mask_logits_torch(vocab, lists):
    import torch
    engine = grammask.Engine(lists)
    allowed = engine.compute_allowed_token_ids().tolist()
    for shape, dtype in [((vocab.size,), torch.float32), ((2, vocab.size), torch.float32),
                         ((2, vocab.size + 3), torch.bfloat16)]:
        logits = torch.zeros(shape, dtype=dtype)
        engine.mask_logits(logits)
        rows = logits.reshape(-1, shape[-1])
        for row in rows:
            kept = [t for t in range(shape[-1]) if not torch.isneginf(row[t])]
            assert kept == allowed


def test_seed_api_initialize(vocab):
    engine = grammask.Engine(grammask.Grammar.from_ebnf("start ::= 'a';"), vocab)
    engine.initialize(grammask.Grammar.from_ebnf("start ::= 'b';"), vocab)
    assert allowed_bytes(engine) == [b"b"]


def test_compile_cache_and_thread_safety(vocab):
    import threading
    grammar_text = 'start ::= #"[ab]+" "," #"[0-9]+";'
    first = grammask.compile(grammask.Grammar.from_ebnf(grammar_text), vocab)
    second = grammask.compile(grammask.Grammar.from_ebnf(grammar_text), vocab)
    assert first is second
    results = []

    def run():
        engine = grammask.Engine(first)
        out = []
        for data in (b"a", b"b", b","):
            out.append(engine.compute_allowed_token_ids().tolist())
            engine.try_accept_new_token(token_id(vocab, data))
        results.append(out)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and all(r == results[0] for r in results)


def test_rollback_horizon_bounds_memory_and_rollback(vocab):
    grammar = grammask.Grammar.from_ebnf("start ::= '[' items ']'; items ::= #\"[0-9]+\" | items ',' #\"[0-9]+\";")
    compiled = grammask.compile(grammar, vocab, grammask.Config(max_rollback_bytes=16))
    engine = grammask.Engine(compiled)
    engine.try_accept_new_token(token_id(vocab, b"["))
    for _ in range(3000):
        engine.try_accept_new_token(token_id(vocab, b"12"))
        engine.try_accept_new_token(token_id(vocab, b","))
    engine.try_accept_new_token(token_id(vocab, b"1"))
    assert engine._recognizer.stats()["memory_bytes"] < 2_000_000
    engine.rollback(2)  # within the horizon
    assert engine.output_bytes().endswith(b"12,12")
    before = engine.compute_allowed_token_ids().tolist()
    with pytest.raises(ValueError, match="max_rollback_bytes"):
        engine.rollback(5000)
    assert engine.compute_allowed_token_ids().tolist() == before
