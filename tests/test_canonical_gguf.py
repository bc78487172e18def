"""Canonical filter of GGUF / llama.cpp vocabularies, checked against llama.cpp's own tokenizer.

Oracle: ``Llama(model_path, vocab_only=True).tokenize(text, add_bos=False,
special=False)`` (llama.cpp itself, not grammask code).  For varied texts
every prefix of llama.cpp's tokenization must be allowed step by step (by
``is_allowed`` and by the packed mask) and complete at the end; sequences
made non-canonical (a token split in two, a boundary moved by one byte) must
be refused at some step or be incomplete at the end; random JSON-grammar
generations must tokenize back to themselves.

Vocabularies: the SmolLM2 GGUF (pre-tokenizer ``smollm``) through
``from_gguf`` and ``from_llama``; the same vocabulary and merges written to
new GGUF files under other ``tokenizer.ggml.pre`` names (so llama.cpp runs
each pre-tokenizer family on real merges); Mistral v1's SentencePiece pieces
written as a ``llama`` GGUF; and llama.cpp's reference vocabularies (the
``ggml-vocab-*.gguf`` files of its ``models/`` folder, which ``./run test``
extracts from the llama-cpp-python 0.3.36 sdist into ``GGML_VOCAB_DIR``; a
missing file fails the test).
"""

from __future__ import annotations

import os
import struct

import llama_cpp
import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grammask
from grammask.canonical import build_canonical_filter
from grammask.canonical.gguf_source import PRETOKENIZERS
from grammask.grammar import builtin
from grammask.vocab import Vocabulary
from grammask.vocab.gguf import read_gguf_metadata


TEXTS = [
    "Hello world, it's 2024-11-22 and I'm   fine.\n\n  ok",
    "The quick brown fox jumps over the lazy dog. THE DOG'S BONE; we'll see, they've gone.",
    '{"a": [1, 2.5e10, -3], "b": {"c": null, "d": true}, "e": "x\\ny"}',
    '{\n  "name": "Zoë",\n  "tags": ["a", "b"],\n  "n": 12345678\n}',
    "def f(x):\n    if x > 0:\n        return x ** 2  # square\n\treturn -x\n",
    "for (int i = 0; i < 10; ++i) {\n    sum += a[i];\n}\n",
    "a1b22c333d4444 5 66 7777777 0.125 1,000,000",
    "日本語のテキスト 🙂 naïve café — “quotes” Ελληνικά русский العربية",
    "   leading   and trailing   ",
    "x\r\ny\n\n\nz\t\tw",
    "$$$ +++ === ... !!! ??? <<>> ~~~",
]

ALPHABET = list("aAbZzs'tdmlrevTS 0123456789\n\t\r.,;:!?\"{}[]()-_/\\#@$+=*<>é中ñ") + [
    "\u00a0", "🙂", "ß", "İ", "Ω", "١", "\u0301"]


def tokenize(llm, text: str) -> list:
    return llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)


def first_refusal(canonical, ids) -> int | None:
    """Index of the first token the filter refuses (by ``is_allowed`` or by the mask), else None."""
    state = canonical.initial_state()
    for index, token_id in enumerate(ids):
        keep = canonical.keep_bitset(state)
        by_mask = bool((int(keep[token_id >> 5]) >> (token_id & 31)) & 1)
        by_test = canonical.is_allowed(state, token_id)
        assert by_mask == by_test, (index, token_id)
        if not by_test:
            return index
        state = canonical.advance(state, token_id)
    return None if canonical.is_complete_canonical(state) else len(ids)


def assert_llama_tokenizations_accepted(llm, canonical, texts) -> None:
    for text in texts:
        ids = tokenize(llm, text)
        assert first_refusal(canonical, ids) is None, (text, ids)


def perturbations(vocab, ids):
    """(position, sequence) pairs with the same text as ids but another tokenization."""
    id_of = {}
    for token_id in vocab.allowed_text_token_ids.tolist():
        id_of.setdefault(vocab.token_bytes[token_id], token_id)
    for index, token_id in enumerate(ids):
        data = vocab.token_bytes[token_id]
        for cut in range(1, len(data)):
            left, right = id_of.get(data[:cut]), id_of.get(data[cut:])
            if left is not None and right is not None:
                yield index, ids[:index] + [left, right] + ids[index + 1:]
                break
        if index + 1 < len(ids):
            following = vocab.token_bytes[ids[index + 1]]
            left, right = id_of.get(data[:-1]), id_of.get(data[-1:] + following)
            if len(data) > 1 and left is not None and right is not None:
                yield index, ids[:index] + [left, right] + ids[index + 2:]


def assert_perturbations_refused(llm, vocab, canonical, texts) -> int:
    n_checked = 0
    for text in texts:
        ids = tokenize(llm, text)
        for index, perturbed in perturbations(vocab, ids):
            if perturbed == tokenize(llm, vocab.decode_bytes(perturbed).decode("utf-8")):
                continue
            refused_at = first_refusal(canonical, perturbed)
            assert refused_at is not None and refused_at >= index, (text, index, perturbed)
            n_checked += 1
    return n_checked


# ------------------------------------------------------------------ one regex == llama.cpp's sequence
_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_ANY_CASE = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
LLAMA_CPP_REGEXES = {
    "gpt-2": [_GPT2],
    "smollm": [r"\p{N}", _GPT2],
    "llama-bpe": [_ANY_CASE + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                  r"|\s+(?!\S)|\s+"],
    "qwen2": [_ANY_CASE + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
              r"|\s+(?!\S)|\s+"],
    "qwen35": [_ANY_CASE + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+"],
}
"""llama.cpp's regex lists (llama-vocab.cpp, llm_tokenizer_bpe), applied as it applies them."""


def llama_cpp_piece_ends(regexes, text: str) -> list:
    """Piece ends of llama.cpp's unicode_regex_split: each regex runs inside every piece of the
    previous one (lookarounds stop at the piece's end) and unmatched text is a piece too."""
    lengths = [len(text)]
    for pattern in regexes:
        compiled = regex.compile(pattern)
        split, start = [], 0
        for length in lengths:
            chunk = text[start:start + length]
            position = 0
            for match in compiled.finditer(chunk):
                split += [match.start() - position, match.end() - match.start()]
                position = match.end()
            split.append(len(chunk) - position)
            start += length
        lengths = [length for length in split if length]
    return np.cumsum(lengths).tolist()


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(LLAMA_CPP_REGEXES)),
       st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=30).map("".join))
def test_one_regex_ends_pieces_where_llama_cpp_does(pre, text):
    single = regex.compile(PRETOKENIZERS[pre].pattern)
    assert [match.end() for match in single.finditer(text)] == llama_cpp_piece_ends(LLAMA_CPP_REGEXES[pre], text)


def test_contractions_keep_llama_cpp_case_rules():
    """gpt-2's contractions are lowercase only; llama-bpe's take either ASCII case; neither
    takes the long s, which case-folds to s."""
    assert [m.group() for m in regex.finditer(PRETOKENIZERS["gpt-2"].pattern, "IT'S it's ſ'ſ")] == \
        ["IT", "'", "S", " it", "'s", " ſ", "'", "ſ"]
    assert [m.group() for m in regex.finditer(PRETOKENIZERS["llama-bpe"].pattern, "IT'S it's 'ſ")] == \
        ["IT", "'S", " it", "'s", " '", "ſ"]


# ------------------------------------------------------------------ GGUF writing
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def _value(value_type: int, value) -> bytes:
    if value_type == STRING:
        data = value.encode("utf-8", errors="surrogateescape")
        return struct.pack("<Q", len(data)) + data
    if value_type == ARRAY:
        element_type, items = value
        if element_type in (I32, F32):
            body = np.asarray(items, dtype="<i4" if element_type == I32 else "<f4").tobytes()
        else:
            body = b"".join(_value(element_type, item) for item in items)
        return struct.pack("<IQ", element_type, len(items)) + body
    return struct.pack({U32: "<I", BOOL: "<?", F32: "<f"}[value_type], value)


def write_gguf(path, entries) -> str:
    """A version-3 GGUF file with these (key, type, value) entries and no tensors."""
    parts = [b"GGUF", struct.pack("<IQQ", 3, 0, len(entries))]
    for key, value_type, value in entries:
        parts += [_value(STRING, key), struct.pack("<I", value_type), _value(value_type, value)]
    path.write_bytes(b"".join(parts))
    return str(path)


HPARAMS = [("general.architecture", STRING, "llama"), ("llama.block_count", U32, 1),
           ("llama.context_length", U32, 512), ("llama.embedding_length", U32, 64),
           ("llama.feed_forward_length", U32, 128), ("llama.attention.head_count", U32, 4),
           ("llama.attention.head_count_kv", U32, 4), ("llama.rope.dimension_count", U32, 16),
           ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5)]


def bpe_entries(tokens, token_types, merges, pre: str, eos_id: int) -> list:
    return HPARAMS + [
        ("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, pre),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, list(tokens))),
        ("tokenizer.ggml.token_type", ARRAY, (I32, list(token_types))),
        ("tokenizer.ggml.merges", ARRAY, (STRING, list(merges))),
        ("tokenizer.ggml.eos_token_id", U32, eos_id)]


def load(path):
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    return llm, Vocabulary.from_gguf(path)


# ------------------------------------------------------------------ SmolLM2 (smollm)
@pytest.fixture(scope="module")
def smollm2_filter(smollm2_vocab):
    canonical = build_canonical_filter(smollm2_vocab)
    assert canonical is not None and canonical.name == "gguf-bpe+pretokenizer(smollm)"
    return canonical


def test_from_gguf_and_from_llama_get_the_filter(smollm2_vocab, smollm2_llama, smollm2_filter):
    assert smollm2_vocab.gguf_metadata.pre == "smollm"
    from_llama = build_canonical_filter(Vocabulary.from_llama(smollm2_llama))
    assert from_llama is not None and from_llama.name == smollm2_filter.name
    compiled = grammask.compile(builtin("json"), smollm2_vocab, grammask.Config(canonical=True))
    assert compiled.canonical is not None
    # On by default for GGUF vocabularies too, and off with Config(canonical=False).
    assert grammask.compile(builtin("json"), smollm2_vocab, grammask.Config()).canonical is not None
    assert grammask.compile(builtin("json"), smollm2_vocab, grammask.Config(canonical=False)).canonical is None


def test_smollm2_prefixes_of_llama_cpp_tokenizations_are_accepted(smollm2_llama, smollm2_filter):
    assert_llama_tokenizations_accepted(smollm2_llama, smollm2_filter, TEXTS)


def test_from_llama_filter_accepts_llama_cpp_tokenizations(smollm2_llama):
    canonical = build_canonical_filter(Vocabulary.from_llama(smollm2_llama))
    assert_llama_tokenizations_accepted(smollm2_llama, canonical, TEXTS)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=24).map("".join))
def test_smollm2_random_texts(smollm2_llama, smollm2_filter, text):
    assert_llama_tokenizations_accepted(smollm2_llama, smollm2_filter, [text])


def test_smollm2_perturbed_sequences_are_refused(smollm2_llama, smollm2_vocab, smollm2_filter):
    assert assert_perturbations_refused(smollm2_llama, smollm2_vocab, smollm2_filter, TEXTS) > 50


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(ALPHABET), min_size=2, max_size=20).map("".join))
def test_smollm2_random_perturbations_are_refused(smollm2_llama, smollm2_vocab, smollm2_filter, text):
    assert_perturbations_refused(smollm2_llama, smollm2_vocab, smollm2_filter, [text])


# ------------------------------------------- the SmolLM2 merges under other pre-tokenizer names
VARIANT_PRES = ["gpt-2", "starcoder", "llama-bpe", "dbrx", "qwen2", "qwen35", "tekken"]


@pytest.fixture(scope="module")
def smollm2_variants(smollm2_gguf_path, tmp_path_factory):
    metadata = read_gguf_metadata(smollm2_gguf_path)
    folder = tmp_path_factory.mktemp("gguf-variants")
    paths = {}
    for pre in VARIANT_PRES:
        paths[pre] = write_gguf(folder / f"smollm2-{pre}.gguf", bpe_entries(
            metadata.tokens, metadata.token_types.tolist(), metadata.merges, pre, metadata.special_ids["eos"]))
    return paths


@pytest.mark.parametrize("pre", VARIANT_PRES)
def test_pre_tokenizer_families_match_llama_cpp(smollm2_variants, pre):
    llm, vocab = load(smollm2_variants[pre])
    canonical = build_canonical_filter(vocab)
    assert canonical is not None and canonical.name == f"gguf-bpe+pretokenizer({pre})"
    assert_llama_tokenizations_accepted(llm, canonical, TEXTS)
    rng = np.random.default_rng(len(pre))
    texts = ["".join(rng.choice(ALPHABET, size=int(rng.integers(1, 30)))) for _ in range(60)]
    assert_llama_tokenizations_accepted(llm, canonical, texts)
    assert assert_perturbations_refused(llm, vocab, canonical, TEXTS) > 50


def test_families_split_differently(smollm2_variants):
    """The variants are not all one tokenizer: llama.cpp splits digits and spaces per family."""
    text = "x   12345 it's\n\n  y"
    seen = {tuple(tokenize(load(smollm2_variants[pre])[0], text)) for pre in VARIANT_PRES}
    assert len(seen) >= 3


# ------------------------------------------------------------------ no filter: never a guess
def test_unknown_pre_tokenizer_gives_no_filter(smollm2_gguf_path, tmp_path):
    metadata = read_gguf_metadata(smollm2_gguf_path)
    assert "deepseek-llm" not in PRETOKENIZERS
    for pre in ("deepseek-llm", "not-a-pre-tokenizer"):
        path = write_gguf(tmp_path / f"{pre}.gguf", bpe_entries(
            metadata.tokens, metadata.token_types.tolist(), metadata.merges, pre, 2))
        # another EOS id: the engine caches a vocabulary's tables (and filter) by its bytes
        # fingerprint, which the SmolLM2 file under "smollm" shares
        vocab = Vocabulary.from_gguf(path, eos_token_ids=[1])
        assert build_canonical_filter(vocab) is None
        assert grammask.compile(builtin("json"), vocab, grammask.Config()).canonical is None
        with pytest.raises(grammask.VocabularyError, match="canonical"):
            grammask.compile(builtin("json"), vocab, grammask.Config(canonical=True))


def test_ignore_merges_with_an_unreachable_token_gives_no_filter(tmp_path):
    """llama.cpp emits a whole pre-token that is a token even when BPE cannot reach it."""
    tokens = ["<eos>", "a", "b", "c", "bc", "ab", "abc", "Ġ"]
    types = [3, 1, 1, 1, 1, 1, 1, 1]
    merges = ["b c", "a b"]          # "abc" needs "a bc", which is not a merge: unreachable
    paths = {pre: write_gguf(tmp_path / f"{pre}.gguf", bpe_entries(tokens, types, merges, pre, 0))
             for pre in ("llama-bpe", "gpt-2")}
    llm_llama3, vocab_llama3 = load(paths["llama-bpe"])
    assert tokenize(llm_llama3, "abc") == [6]
    assert build_canonical_filter(vocab_llama3) is None
    llm_gpt2, vocab_gpt2 = load(paths["gpt-2"])
    assert tokenize(llm_gpt2, "abc") == [1, 4]
    canonical = build_canonical_filter(vocab_gpt2)
    assert canonical is not None
    assert first_refusal(canonical, [1, 4]) is None
    assert first_refusal(canonical, [6]) == 0


def test_other_tokenizer_models_give_no_filter(tmp_path):
    tokens = ["[PAD]", "[SEP]", "▁a", "b"]
    path = write_gguf(tmp_path / "bert.gguf", HPARAMS + [
        ("tokenizer.ggml.model", STRING, "bert"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        ("tokenizer.ggml.token_type", ARRAY, (I32, [3, 3, 1, 1])),
        ("tokenizer.ggml.eos_token_id", U32, 1)])
    assert build_canonical_filter(Vocabulary.from_gguf(path)) is None


# ------------------------------------------------------------------ SentencePiece (llama model)
@pytest.fixture(scope="module", params=[True, False], ids=["space-prefix", "no-space-prefix"])
def mistral_gguf(request, mistral_v1_processor, tmp_path_factory):
    processor = mistral_v1_processor
    n_pieces = processor.get_piece_size()
    types = [2 if processor.is_unknown(i) else 3 if processor.is_control(i)
             else 6 if processor.is_byte(i) else 1 for i in range(n_pieces)]
    entries = HPARAMS + [
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, [processor.id_to_piece(i) for i in range(n_pieces)])),
        ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
        ("tokenizer.ggml.scores", ARRAY, (F32, [processor.get_score(i) for i in range(n_pieces)])),
        ("tokenizer.ggml.eos_token_id", U32, processor.eos_id()),
        ("tokenizer.ggml.add_space_prefix", BOOL, request.param)]
    path = write_gguf(tmp_path_factory.mktemp("spm") / f"mistral-{request.param}.gguf", entries)
    llm, vocab = load(path)
    canonical = build_canonical_filter(vocab)
    assert canonical is not None and canonical.name == "gguf-sentencepiece-bpe"
    return llm, vocab, canonical, request.param


def test_sentencepiece_gguf_prefixes_are_accepted(mistral_gguf):
    llm, vocab, canonical, space_prefix = mistral_gguf
    for text in TEXTS:
        ids = tokenize(llm, text)
        assert vocab.decode_bytes(ids) == (b" " if space_prefix else b"") + text.encode("utf-8")
    assert_llama_tokenizations_accepted(llm, canonical, TEXTS)
    rng = np.random.default_rng(5)
    texts = ["".join(rng.choice(ALPHABET, size=int(rng.integers(1, 30)))) for _ in range(60)]
    assert_llama_tokenizations_accepted(llm, canonical, texts)


def test_sentencepiece_gguf_perturbations_are_refused(mistral_gguf):
    llm, vocab, canonical, space_prefix = mistral_gguf
    n_checked = 0
    for text in TEXTS:
        ids = tokenize(llm, text)
        for index, perturbed in perturbations(vocab, ids):
            decoded = vocab.decode_bytes(perturbed).decode("utf-8")
            if space_prefix:
                if not decoded.startswith(" "):
                    assert first_refusal(canonical, perturbed) == 0
                    continue
                decoded = decoded[1:]
            if perturbed == tokenize(llm, decoded):
                continue
            refused_at = first_refusal(canonical, perturbed)
            assert refused_at is not None and refused_at >= index, (text, index, perturbed)
            n_checked += 1
    assert n_checked > 50


# ------------------------------------------------------------------ llama.cpp's reference vocabularies
REFERENCE_VOCABS = {"gpt-2": True, "starcoder": True, "refact": True, "mpt": True, "qwen2": True,
                    "qwen35": True, "command-r": True, "llama-spm": True, "phi-3": True,
                    "llama-bpe": False, "deepseek-llm": False, "deepseek-coder": False, "falcon": False}
"""ggml-vocab name -> filter expected (llama-bpe: ignore_merges with unreachable tokens)."""


GGML_VOCAB_DIR = os.environ.get("GRAMMASK_GGML_VOCAB_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "grammask", "ggml-vocab-0.3.36")
"""llama.cpp's ``models/`` folder: where ``./run test`` puts it, unless the
environment names another copy."""


@pytest.mark.parametrize("name", sorted(REFERENCE_VOCABS))
def test_llama_cpp_reference_vocabularies(name):
    path = os.path.join(GGML_VOCAB_DIR, f"ggml-vocab-{name}.gguf")
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: ./run test extracts llama.cpp's reference vocabularies "
                    "there from the llama-cpp-python 0.3.36 sdist (or set GRAMMASK_GGML_VOCAB_DIR "
                    "to llama.cpp's models/ folder)", pytrace=False)
    llm, vocab = load(path)
    canonical = build_canonical_filter(vocab)
    assert (canonical is not None) == REFERENCE_VOCABS[name]
    if canonical is None:
        return
    texts = list(TEXTS)
    if os.path.exists(path + ".inp"):
        with open(path + ".inp", encoding="utf-8") as file:
            texts += [text for text in file.read().split("\n__ggml_vocab_test__\n") if text]
    assert_llama_tokenizations_accepted(llm, canonical, texts)


# ------------------------------------------------------------------ constrained generation
N_RUNS = 60
MAX_STEPS = 64


def test_random_json_generations_tokenize_back(smollm2_vocab, smollm2_llama, capsys):
    compiled = grammask.compile(builtin("json"), smollm2_vocab, grammask.Config(canonical=True))
    rng = np.random.default_rng(11)
    eos_ids = set(smollm2_vocab.eos_token_ids)
    n_canonical = n_finished = n_fallbacks = n_silent = 0
    for _ in range(N_RUNS):
        engine = grammask.Engine(compiled)
        ids = []
        for _ in range(MAX_STEPS):
            allowed = engine.compute_allowed_token_ids()
            text_ids = allowed[~np.isin(allowed, list(eos_ids))]
            if (engine.can_end() and rng.random() < 0.8) or not text_ids.size:
                engine.try_accept_new_token(smollm2_vocab.eos_token_ids[0])
                break
            token_id = int(rng.choice(text_ids))
            engine.try_accept_new_token(token_id)
            ids.append(token_id)
        fallbacks = engine.stats()["canonical_fallbacks"]
        n_fallbacks += fallbacks
        if not engine.is_finished():
            continue
        n_finished += 1
        canonical = tokenize(smollm2_llama, smollm2_vocab.decode_bytes(ids).decode("utf-8")) == ids
        n_canonical += canonical
        n_silent += not canonical and fallbacks == 0
    with capsys.disabled():
        print(f"\nSmolLM2 JSON generations: {n_canonical}/{n_finished} finished outputs equal llama.cpp's "
              f"tokenization ({N_RUNS} runs), {n_fallbacks} fallback steps, "
              f"{n_silent} non-canonical without a fallback")
    assert n_finished >= N_RUNS // 4
    assert n_silent == 0
    assert n_canonical >= n_finished // 2
