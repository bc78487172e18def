"""BatchMasker (grammask.engine.batch): a batch's bitmask and logits rows equal
one-by-one Engine.fill_bitmask / Engine.mask_logits calls on twin engines
(replayed to the same tokens, never shared with the batch), for a mix of
regex, GBNF and JSON Schema grammars on the Llama-3 vocabulary (with the
canonical filter, and without: masks computed in C, with and without the
whole-mask cache, cold token sets, errors), finished engines, None rows,
row subsets and permuted rows, numpy and torch, 1, 2, 4 and 11 threads;
engines on several Python threads over one CompiledGrammar give the masks of
a sequential run; every typed error leaves the output untouched."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import grammask
from grammask import (
    BatchMasker,
    IndexOutOfRange,
    InvalidArgument,
    InvalidArgumentType,
    LimitExceeded,
    VocabularyError,
)

torch = pytest.importorskip("torch")

SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer", "minimum": 0},
    "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}}},
    "required": ["name", "age"]}
GBNF = 'root ::= "(" expr ")"\nexpr ::= term (("+" | "*") term)*\nterm ::= [0-9]+ | "(" expr ")"\n'
REGEX = r"[a-z]{2,8}@[a-z]{2,6}\.(com|org|net)"
INSTANCES = {
    "json": json.dumps({"name": "Ada Lovelace", "age": 36, "tags": ["red", "blue"]},
                       separators=(",", ":")),
    "gbnf": "(12+(3*45)+678)",
    "regex": "grace@navy.org",
}


@pytest.fixture(scope="module")
def compiled(llama3_vocab):
    grammars = {"json": grammask.Grammar.from_json_schema(SCHEMA),
                "gbnf": grammask.Grammar.from_gbnf(GBNF),
                "regex": grammask.Grammar.from_regex(REGEX)}
    return {name: grammask.compile(grammar, llama3_vocab) for name, grammar in grammars.items()}


@pytest.fixture(scope="module")
def token_ids(llama3_tokenizer):
    return {name: llama3_tokenizer.encode(text, add_special_tokens=False).ids
            for name, text in INSTANCES.items()}


ROW_SPECS = [("json", 0), ("regex", 3), None, ("gbnf", 5), ("json", 7), ("regex", "end"),
             ("gbnf", "eos"), None, ("json", "eos"), ("gbnf", 0), ("regex", 1), ("json", 2)]
"""(grammar, tokens accepted: a count, all of them, or all and then EOS);
None for an unconstrained row."""


def make_engines(compiled, token_ids, specs=ROW_SPECS):
    engines = []
    for spec in specs:
        if spec is None:
            engines.append(None)
            continue
        name, steps = spec
        engine = grammask.Engine(compiled[name])
        ids = token_ids[name] if steps in ("end", "eos") else token_ids[name][:steps]
        for token_id in ids:
            engine.try_accept_new_token(token_id)
        if steps == "eos":
            engine.try_accept_new_token(compiled[name].vocab.eos_token_ids[0])
            assert engine.is_finished()
        engines.append(engine)
    return engines


def one_by_one_bitmask(engines, n_rows, rows, n_words):
    expected = np.full((n_rows, n_words), 12345, dtype=np.int32)
    for row, engine in zip(rows, engines):
        if engine is None:
            expected[row] = -1
        else:
            engine.fill_bitmask(expected, row)
    return expected


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_fill_bitmask_equals_one_by_one(compiled, token_ids, threads, kind):
    n_words = compiled["json"].n_words
    engines = make_engines(compiled, token_ids)
    rows = list(range(len(engines)))
    expected = one_by_one_bitmask(make_engines(compiled, token_ids), len(rows), rows, n_words)
    bitmask = np.full((len(rows), n_words), 12345, dtype=np.int32)
    if kind == "torch":
        bitmask = torch.from_numpy(bitmask)
    with BatchMasker(threads) as masker:
        masker.fill_bitmask(engines, bitmask)
        got = np.asarray(bitmask)
        np.testing.assert_array_equal(got, expected)
        assert (got[2] == -1).all() and (got[7] == -1).all()
        finished = engines[6].compiled.vocab.eos_token_ids
        assert sorted(np.flatnonzero(np.unpackbits(got[6].view(np.uint8), bitorder="little"))) \
            == sorted(finished)
        # Accepting a token each and masking again still matches.
        twins = make_engines(compiled, token_ids)
        for batch_engine, twin in zip(engines, twins):
            if batch_engine is not None and not batch_engine.is_finished():
                token = int(batch_engine.compute_allowed_token_ids()[0])
                batch_engine.try_accept_new_token(token)
                twin.try_accept_new_token(token)
        masker.fill_bitmask(engines, bitmask)
        np.testing.assert_array_equal(np.asarray(bitmask), one_by_one_bitmask(twins, len(rows), rows,
                                                                              n_words))


@pytest.mark.parametrize("threads", [1, 2])
def test_rows_subset_writes_only_those_rows(compiled, token_ids, threads):
    n_words = compiled["json"].n_words
    specs = ROW_SPECS[:5]
    rows = [9, 0, 4, 13, 2]
    engines = make_engines(compiled, token_ids, specs)
    expected = one_by_one_bitmask(make_engines(compiled, token_ids, specs), 16, rows, n_words)
    bitmask = np.full((16, n_words), 12345, dtype=np.int32)
    with BatchMasker(threads) as masker:
        masker.fill_bitmask(engines, bitmask, rows=np.asarray(rows))
    np.testing.assert_array_equal(bitmask, expected)
    untouched = sorted(set(range(16)) - set(rows))
    assert (bitmask[untouched] == 12345).all()


def test_one_call_form_and_empty_batch(compiled, token_ids):
    n_words = compiled["json"].n_words
    engines = make_engines(compiled, token_ids)
    bitmask = np.zeros((len(engines), n_words), dtype=np.int32)
    grammask.fill_next_token_bitmask_batch(engines, bitmask, threads=2)
    rows = list(range(len(engines)))
    np.testing.assert_array_equal(
        bitmask, one_by_one_bitmask(make_engines(compiled, token_ids), len(rows), rows, n_words))
    empty = np.full((3, n_words), 7, dtype=np.int32)
    with BatchMasker(2) as masker:
        masker.fill_bitmask([], empty)
    assert (empty == 7).all()


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("kind, dtype", [("numpy", np.float32), ("numpy", np.float16),
                                         ("torch", np.float32), ("torch", np.float64)])
def test_mask_logits_equals_one_by_one(compiled, token_ids, threads, kind, dtype):
    vocab_size = compiled["json"].vocab.size
    engines = make_engines(compiled, token_ids)
    rows = [3, 0, 1, 2, 11, 5, 6, 4, 8, 9, 10, 7]
    width = vocab_size + 43  # a padded model vocabulary
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((len(rows) + 1, width)).astype(dtype)
    expected = logits.copy()
    for row, twin in zip(rows, make_engines(compiled, token_ids)):
        if twin is not None:
            twin.mask_logits(expected[row])
    target = torch.from_numpy(logits) if kind == "torch" else logits
    with BatchMasker(threads) as masker:
        assert masker.mask_logits(engines, target, rows=rows) is target
    np.testing.assert_array_equal(np.asarray(target), expected)
    untouched = [12] + [row for row, spec in zip(rows, ROW_SPECS) if spec is None]
    assert np.isfinite(np.asarray(target)[untouched]).all()


def test_engines_on_threads_share_one_compiled_grammar(llama3_vocab, token_ids):
    """Several Python threads, each stepping its own engines over one shared
    CompiledGrammar built cold (token sets, mask cache and canonical filter
    filled concurrently), see the masks of a sequential run."""
    grammask.clear_caches(vocabularies=False)
    shared = grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab)
    assert shared.canonical is not None and shared.lookahead is not None  # shared too

    def run(engine, ids, out, barrier=None):
        if barrier is not None:
            barrier.wait()
        for token_id in ids:
            out.append(engine.allowed_bitset().copy())
            engine.try_accept_new_token(token_id)
        out.append(engine.allowed_bitset().copy())

    ids = token_ids["json"]
    starts = [0, 1, 3, 5, 8, 0]
    concurrent = [[] for _ in starts]
    barrier = threading.Barrier(len(starts))
    engines = []
    for start in starts:
        engine = grammask.Engine(shared)
        for token_id in ids[:start]:
            engine.try_accept_new_token(token_id)
        engines.append(engine)
    threads = [threading.Thread(target=run, args=(engine, ids[start:], out, barrier))
               for engine, start, out in zip(engines, starts, concurrent)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    grammask.clear_caches(vocabularies=False)
    alone = grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab)
    assert alone is not shared
    for start, out in zip(starts, concurrent):
        engine = grammask.Engine(alone)
        for token_id in ids[:start]:
            engine.try_accept_new_token(token_id)
        sequential = []
        run(engine, ids[start:], sequential)
        assert len(out) == len(sequential)
        for got, want in zip(out, sequential):
            np.testing.assert_array_equal(got, want)


def test_a_failing_mask_writes_nothing(llama3_vocab, compiled, token_ids):
    tight = grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab,
                             grammask.Config(max_earley_work_per_mask=1, mask_cache_entries=0))
    failing = grammask.Engine(tight)
    with pytest.raises(LimitExceeded):
        failing.allowed_bitset()
    engines = make_engines(compiled, token_ids, ROW_SPECS[:4]) + [failing]
    bitmask = np.full((5, compiled["json"].n_words), 12345, dtype=np.int32)
    logits = np.zeros((5, llama3_vocab.size), dtype=np.float32)
    with BatchMasker(2) as masker:
        with pytest.raises(LimitExceeded):
            masker.fill_bitmask(engines, bitmask)
        with pytest.raises(LimitExceeded):
            masker.mask_logits(engines, logits)
    assert (bitmask == 12345).all() and (logits == 0).all()


def error_cases(compiled, token_ids):
    """(call, engines, output, rows, error) for every validation rule."""
    n_words = compiled["json"].n_words
    vocab_size = compiled["json"].vocab.size
    engines = make_engines(compiled, token_ids, ROW_SPECS[:3])
    bits = lambda shape=(4, n_words), dtype=np.int32: np.full(shape, 5, dtype=dtype)  # noqa: E731
    logits = lambda shape=(4, vocab_size), dtype=np.float32: np.ones(shape, dtype=dtype)  # noqa: E731
    read_only = bits()
    read_only.flags.writeable = False
    small = grammask.Vocabulary([b"</s>", b"a", b"b"], eos_token_ids=[0])
    other = grammask.Engine(grammask.Grammar.from_regex("a+"), small)
    grad = torch.ones((4, vocab_size), requires_grad=True)
    return [
        ("fill_bitmask", engines, bits().tolist(), None, InvalidArgumentType),
        ("fill_bitmask", engines, bits(dtype=np.int64), None, InvalidArgumentType),
        ("fill_bitmask", engines, torch.zeros((4, n_words), dtype=torch.int64), None, InvalidArgumentType),
        ("fill_bitmask", engines, read_only, None, InvalidArgument),
        ("fill_bitmask", engines, bits((n_words,)), None, VocabularyError),
        ("fill_bitmask", engines, bits((4, n_words + 1)), None, VocabularyError),
        ("fill_bitmask", engines + [other], bits(), None, VocabularyError),
        ("fill_bitmask", engines[0], bits(), None, InvalidArgumentType),
        ("fill_bitmask", engines + ["engine"], bits(), None, InvalidArgumentType),
        ("fill_bitmask", engines + [engines[0]], bits(), None, InvalidArgument),
        ("fill_bitmask", engines, bits(), [0, 1], InvalidArgument),
        ("fill_bitmask", engines, bits(), [0, 1, 1], InvalidArgument),
        ("fill_bitmask", engines, bits(), [0, 1, 4], IndexOutOfRange),
        ("fill_bitmask", engines, bits(), [0, -1, 2], IndexOutOfRange),
        ("fill_bitmask", engines, bits(), [0, 1, 2.0], InvalidArgumentType),
        ("fill_bitmask", engines, bits(), [0, 1, True], InvalidArgumentType),
        ("fill_bitmask", engines, bits(), 3, InvalidArgumentType),
        ("mask_logits", engines, logits().tolist(), None, InvalidArgumentType),
        ("mask_logits", engines, logits(dtype=np.int32), None, InvalidArgumentType),
        ("mask_logits", engines, logits((vocab_size,)), None, VocabularyError),
        ("mask_logits", engines, logits((4, vocab_size - 1)), None, VocabularyError),
        ("mask_logits", engines, grad, None, InvalidArgument),
        ("mask_logits", engines + [engines[1]], logits(), None, InvalidArgument),
        ("mask_logits", engines, logits(), [3, 2, 3], InvalidArgument),
        ("mask_logits", engines, logits(), [0, 1, 9], IndexOutOfRange),
    ]


@pytest.fixture(scope="module")
def plain(llama3_vocab):
    """The grammars compiled without token-level filters (each mask one
    GIL-free ``MaskStep``), with the whole-mask cache (256) and without (0)."""
    return {cache: {name: grammask.compile(grammar, llama3_vocab,
                                           grammask.Config(canonical=False, mask_cache_entries=cache))
                    for name, grammar in (("json", grammask.Grammar.from_json_schema(SCHEMA)),
                                          ("gbnf", grammask.Grammar.from_gbnf(GBNF)),
                                          ("regex", grammask.Grammar.from_regex(REGEX)))}
            for cache in (0, 256)}


def assert_same_engines(got, want, work=True):
    """Engines stepped alike agree on what a batch leaves behind: output,
    the current mask (without computing it again) and, with ``work`` (no
    whole-mask cache hits for one but not the other), the work statistics."""
    for engine, twin in zip(got, want):
        if engine is None:
            continue
        assert engine.output_bytes() == twin.output_bytes()
        np.testing.assert_array_equal(engine.allowed_bitset(), twin.allowed_bitset())
        if work:
            assert engine.stats()["max_mask_work"] == twin.stats()["max_mask_work"]


@pytest.mark.parametrize("threads", [1, 2, 4, 11])
@pytest.mark.parametrize("cache", [0, 256])
def test_plain_grammars_step_by_step_equal_one_by_one(plain, token_ids, threads, cache):
    """Masks computed in C by the batch (token sets, exit tries, EOS, rows
    copied by the threads) equal the one-by-one ones at every step of every
    instance, finished and None rows included; with 11 threads, more than a
    batch has job segments (``MAX_SEGMENTS``), so helpers share one."""
    compiled = plain[cache]
    n_words = compiled["json"].n_words
    engines = make_engines(compiled, token_ids)
    twins = make_engines(compiled, token_ids)
    rows = list(range(len(engines)))
    bitmask = np.full((len(rows), n_words), 12345, dtype=np.int32)
    with BatchMasker(threads) as masker:
        for _ in range(max(len(ids) for ids in token_ids.values()) + 2):
            masker.fill_bitmask(engines, bitmask)
            np.testing.assert_array_equal(bitmask, one_by_one_bitmask(twins, len(rows), rows, n_words))
            assert_same_engines(engines, twins, work=cache == 0)
            for engine, twin in zip(engines, twins):
                if engine is not None and not engine.is_finished():
                    allowed = engine.compute_allowed_token_ids()
                    token = int(allowed[len(allowed) // 2])
                    engine.try_accept_new_token(token)
                    twin.try_accept_new_token(token)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("grammars", ["canonical", "plain"])
def test_permuted_rows_give_permuted_results(compiled, plain, token_ids, threads, grammars):
    """The same engines written to permuted rows give the rows permuted,
    wherever the masks come from (a fresh computation, or masks already
    valid from the call before)."""
    chosen = compiled if grammars == "canonical" else plain[0]
    n_words = chosen["json"].n_words
    engines = make_engines(chosen, token_ids)
    n = len(engines)
    reference = np.full((n, n_words), 12345, dtype=np.int32)
    rng = np.random.default_rng(7)
    with BatchMasker(threads) as masker:
        masker.fill_bitmask(make_engines(chosen, token_ids), reference)
        for fresh in (True, False):
            if fresh:
                engines = make_engines(chosen, token_ids)
            permutation = rng.permutation(n + 3)[:n]
            bitmask = np.full((n + 3, n_words), 12345, dtype=np.int32)
            masker.fill_bitmask(engines, bitmask, rows=permutation)
            np.testing.assert_array_equal(bitmask[permutation], reference)
            untouched = sorted(set(range(n + 3)) - set(permutation.tolist()))
            assert (bitmask[untouched] == 12345).all()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("grammars", ["canonical", "plain"])
def test_masks_known_before_the_call_equal_one_by_one(compiled, plain, token_ids, threads, grammars):
    """Engines whose mask is already known (asked for by ``allowed_bitset``
    or by an earlier call, nothing accepted since) beside engines whose mask
    the call computes: every row equals the one-by-one mask, and a second
    call with nothing accepted in between writes the same rows."""
    grammar_set = compiled if grammars == "canonical" else plain[0]
    n_words = grammar_set["json"].n_words
    engines = make_engines(grammar_set, token_ids)
    for engine in engines[::2]:
        if engine is not None:
            engine.allowed_bitset()
    rows = list(range(len(engines)))
    expected = one_by_one_bitmask(make_engines(grammar_set, token_ids), len(rows), rows, n_words)
    with BatchMasker(threads) as masker:
        for _ in range(2):
            bitmask = np.full((len(rows), n_words), 12345, dtype=np.int32)
            masker.fill_bitmask(engines, bitmask)
            np.testing.assert_array_equal(bitmask, expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_cold_token_sets_in_a_batch(llama3_vocab, token_ids, threads):
    """A grammar compiled cold: the batch's GIL-free jobs miss token sets,
    which the ordinary way then builds; masks equal one-by-one ones
    computed on another cold compile."""
    config = grammask.Config(canonical=False, mask_cache_entries=0)

    def cold():
        grammask.clear_caches(vocabularies=False)
        return {"json": grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab, config)}

    specs = [("json", 0), ("json", 4), ("json", 9), ("json", "end")]
    twins = make_engines(cold(), token_ids, specs)
    n_words = twins[0].compiled.n_words
    expected = one_by_one_bitmask(twins, len(specs), range(len(specs)), n_words)
    engines = make_engines(cold(), token_ids, specs)
    assert engines[0].stats()["n_cached_terminal_states"] == 0
    bitmask = np.zeros((len(specs), n_words), dtype=np.int32)
    with BatchMasker(threads) as masker:
        masker.fill_bitmask(engines, bitmask)
    np.testing.assert_array_equal(bitmask, expected)
    assert_same_engines(engines, twins)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failing_plain_mask_writes_nothing(llama3_vocab, plain, token_ids, threads):
    """A mask past its work budget in the batch's C step raises the error
    one-by-one raises, writes no row and leaves its engine as it was (it
    still accepts tokens); the other engines' masks are right."""
    tight = grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), llama3_vocab,
                             grammask.Config(canonical=False, mask_cache_entries=0,
                                             max_earley_work_per_mask=1))
    alone = grammask.Engine(tight)
    with pytest.raises(LimitExceeded) as one_by_one:
        alone.allowed_bitset()
    failing = grammask.Engine(tight)
    engines = make_engines(plain[0], token_ids, ROW_SPECS[:4]) + [failing]
    bitmask = np.full((5, tight.n_words), 12345, dtype=np.int32)
    with BatchMasker(threads) as masker:
        with pytest.raises(LimitExceeded) as batched:
            masker.fill_bitmask(engines, bitmask)
    assert str(batched.value) == str(one_by_one.value)
    assert (bitmask == 12345).all()
    assert_same_engines(engines[:4], make_engines(plain[0], token_ids, ROW_SPECS[:4]))
    ids = token_ids["json"]
    failing.try_accept_new_token(ids[0])
    alone.try_accept_new_token(ids[0])
    assert failing.output_bytes() == alone.output_bytes()


def test_typed_errors_leave_the_output_untouched(compiled, token_ids):
    with BatchMasker(2) as masker:
        for call, engines, output, rows, error in error_cases(compiled, token_ids):
            before = output.detach().clone() if isinstance(output, torch.Tensor) else \
                (np.array(output) if not isinstance(output, list) else list(output))
            with pytest.raises(error):
                getattr(masker, call)(engines, output, rows)
            if isinstance(output, torch.Tensor):
                assert torch.equal(output.detach(), before)
            else:
                np.testing.assert_array_equal(np.asarray(output), np.asarray(before))


def test_threads_argument_and_closing():
    for bad, error in ((0, InvalidArgument), (-2, InvalidArgument), (1.5, InvalidArgumentType),
                       (True, InvalidArgumentType)):
        with pytest.raises(error):
            BatchMasker(bad)
    masker = BatchMasker()
    assert 1 <= masker.threads
    masker.close()
    masker.close()
    with pytest.raises(InvalidArgument):
        masker.fill_bitmask([], np.zeros((1, 1), dtype=np.int32))
