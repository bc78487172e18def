"""from_tokenizer on SentencePiece-style ``tokenizers`` files and on transformers tokenizers.

No SentencePiece-style ``tokenizer.json`` ships offline, so the two layouts
Hugging Face uses for Llama-2/Mistral (the older ``Prepend``+``Replace``
normalizer with a ``Replace``/``ByteFallback``/``Fuse``/``Strip`` decoder, and
the newer ``Metaspace`` pre-tokenizer and decoder) are rebuilt here from
Mistral's SentencePiece model: pieces as the vocabulary, merges derived from
piece scores (the conversion transformers performs).  Oracles: the
tokenizer's own decode, and the SentencePiece loader on the same model.
"""

from __future__ import annotations

import pytest
import tokenizers

from grammask.vocab import Vocabulary
from grammask.vocab.loaders_hf import detect_string_encoding
from support.sample_texts import SAMPLE_TEXTS


def merges_from_scores(processor) -> list[tuple[str, str]]:
    """Every (left, right) split of a piece into two pieces, best-scoring merged piece first."""
    pieces = {processor.id_to_piece(i): i for i in range(processor.get_piece_size())
              if not (processor.is_control(i) or processor.is_unknown(i) or processor.is_byte(i))}
    merges = []
    for piece, piece_id in pieces.items():
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in pieces and right in pieces:
                merges.append((-processor.get_score(piece_id), pieces[left], pieces[right], left, right))
    merges.sort()
    return [(left, right) for *_, left, right in merges]


def spm_style_tokenizer(processor, layout: str):
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    vocab = {processor.id_to_piece(i): i for i in range(processor.get_piece_size())}
    tokenizer = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges_from_scores(processor),
                                                unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    if layout == "replace":
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
        tokenizer.decoder = decoders.Sequence(
            [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
             decoders.Strip(" ", 1, 0)])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first",
                                                           split=False)
        tokenizer.decoder = decoders.Sequence(
            [decoders.ByteFallback(), decoders.Metaspace(replacement="\u2581", prepend_scheme="first",
                                                         split=False)])
    tokenizer.add_special_tokens(["<unk>", "<s>", "</s>"])
    return tokenizer


@pytest.fixture(scope="module", params=["replace", "metaspace"])
def spm_style(request, mistral_v1_processor):
    return spm_style_tokenizer(mistral_v1_processor, request.param)


def test_detection(spm_style, llama3_tokenizer, bert_tokenizer):
    assert detect_string_encoding(spm_style) == "sentencepiece"
    assert detect_string_encoding(llama3_tokenizer) == "byte_level"
    assert detect_string_encoding(bert_tokenizer) == "wordpiece"


def test_spm_style_bytes_equal_the_sentencepiece_loader(spm_style, mistral_v1_vocab):
    vocab = Vocabulary.from_tokenizer(spm_style)
    assert list(vocab.token_bytes) == list(mistral_v1_vocab.token_bytes)
    assert vocab.special_token_ids == frozenset({0, 1, 2})
    assert vocab.eos_token_ids == (2,)


@pytest.mark.parametrize("text", SAMPLE_TEXTS + ["rare glyphs \U00013000 \ua66e force byte fallback"])
def test_spm_style_round_trip(spm_style, text):
    vocab = Vocabulary.from_tokenizer(spm_style)
    ids = spm_style.encode(text, add_special_tokens=False).ids
    assert not set(ids) & vocab.special_token_ids
    rebuilt = vocab.decode_bytes(ids)
    # Prepend always adds "▁"; Metaspace(prepend_scheme="first") only when the text
    # does not already start with a space.  Both decoders drop one leading space.
    metaspace = spm_style.pre_tokenizer is not None
    prefix = b"" if metaspace and text.startswith(" ") else b" "
    assert rebuilt == prefix + text.encode("utf-8")
    assert rebuilt[1:] == spm_style.decode(ids).encode("utf-8")


def test_non_special_added_tokens_are_text(mistral_v1_processor):
    tokenizer = spm_style_tokenizer(mistral_v1_processor, "metaspace")
    tokenizer.add_tokens(["<tool_call>"])
    vocab = Vocabulary.from_tokenizer(tokenizer)
    token_id = tokenizer.token_to_id("<tool_call>")
    assert vocab.token_bytes(token_id) == b"<tool_call>"
    assert token_id in set(vocab.allowed_text_token_ids.tolist())
    ids = tokenizer.encode("a <tool_call> b", add_special_tokens=False).ids
    assert token_id in ids
    assert vocab.decode_bytes(ids) == b" a <tool_call> b"


# ----------------------------------------------------------------- transformers
def test_transformers_fast_tokenizer(llama3_tokenizer, llama3_vocab):
    import transformers
    wrapped = transformers.PreTrainedTokenizerFast(tokenizer_object=llama3_tokenizer,
                                                   eos_token="<|eot_id|>")
    vocab = Vocabulary.from_tokenizer(wrapped)
    assert list(vocab.token_bytes) == list(llama3_vocab.token_bytes)
    # the tokenizer's eos first, then the other end-of-text / end-of-turn tokens
    assert vocab.eos_token_ids == (128009, 128001, 128008)
    assert vocab.special_token_ids == llama3_vocab.special_token_ids
    text = SAMPLE_TEXTS[1]
    ids = wrapped.encode(text, add_special_tokens=False)
    assert vocab.decode_bytes(ids) == text.encode("utf-8") == wrapped.decode(ids).encode("utf-8")


class SlowSentencePieceTokenizer:
    """The attributes a transformers 4 slow (SentencePiece) tokenizer exposes, and nothing else."""

    def __init__(self, processor):
        self.sp_model = processor
        self.eos_token_id = processor.eos_id()
        self.all_special_ids = [processor.unk_id(), processor.bos_id(), processor.eos_id()]


def test_slow_sentencepiece_tokenizer_goes_through_its_model(mistral_v1_processor, mistral_v1_vocab):
    vocab = Vocabulary.from_tokenizer(SlowSentencePieceTokenizer(mistral_v1_processor))
    assert vocab == mistral_v1_vocab
    assert vocab.tokenizer_kind == "sentencepiece"
