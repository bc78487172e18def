"""Canonical filters for GGUF vocabularies, following llama.cpp's own tokenizer.

What it computes
    ``filter_for_gguf_vocabulary(vocab)`` returns the ``CanonicalFilter`` of a
    Vocabulary built by ``Vocabulary.from_gguf`` (its ``gguf_metadata``) or by
    ``Vocabulary.from_llama`` (the GGUF file at ``llama.model_path``, read with
    the struct reader of ``grammask.vocab.gguf``: llama-cpp-python's
    ``Llama.metadata`` leaves out the arrays, so the merges are not reachable
    there), or None when no exact filter is known.  The oracle is llama.cpp's
    ``Llama.tokenize(text, add_bos=False, special=False)``.

    * ``tokenizer.ggml.model == "gpt2"`` (byte-level BPE): llama.cpp splits
      the text with a *sequence* of regexes named by ``tokenizer.ggml.pre``
      (``llm_tokenizer_bpe`` in llama.cpp's ``llama-vocab.cpp``); each regex
      runs inside the pieces of the previous one and text it does not match
      becomes a piece of its own.  ``PRETOKENIZERS`` maps each supported name
      to ONE regex (for the ``regex`` module) whose consecutive matches end
      exactly where llama.cpp's pieces end, which is what
      ``pretokenized_bpe.PretokenizedBPE`` needs.  Examples: ``gpt-2`` adds
      ``|\\s+`` for the unmatched single whitespace before a non-space;
      ``smollm`` / ``starcoder`` first isolate every ``\\p{N}``, so a digit
      ends the previous piece: ``\\s+(?!\\S)`` becomes ``\\s+(?![^\\s\\p{N}])``
      and ``?\\p{N}+`` becomes ``\\p{N}``.  Merge priorities are the positions
      in ``tokenizer.ggml.merges`` (llama.cpp's ``bpe_ranks``, first
      occurrence wins), never token ids.
    * ``tokenizer.ggml.model == "llama"`` (SentencePiece, llama.cpp's
      ``llm_tokenizer_spm``): merge the adjacent pair whose concatenation is
      a token of highest ``tokenizer.ggml.scores`` (leftmost on ties), chars
      that are not tokens as ``<0xNN>`` byte tokens, and a space in front of
      each text fragment when ``tokenizer.ggml.add_space_prefix`` (default
      true).  That is ``sentencepiece_bpe.SentencePieceBPE``'s model; it reads
      the pieces through ``GGUFPieces``, a read-only processor view.

Never a guess
    Unknown or missing ``tokenizer.ggml.pre`` names, other models (bert, t5,
    ...), ``ignore_merges`` pre-tokenizers (llama-bpe, tekken, ...) whose merge
    table leaves some token unreachable (llama.cpp emits such a token whole
    when it is a whole pre-token; the pair test cannot express that), merges
    whose result is not a token and ids whose GGUF text disagrees with the
    vocabulary's bytes all give None: ``Config(canonical=None)`` runs without
    a filter and ``Config(canonical=True)`` raises the engine's typed error.

Data layout
    Built filters are memoized per (content digest, vocabulary size, special
    ids) and pickled by ``factory``'s disk cache; the digest covers the
    format, model, pre-tokenizer name, pattern and ``ignore_merges``, token
    texts and types, scores, merges and ``add_space_prefix``.  ``GGUFTokenizerMetadata`` read for ``from_llama`` vocabularies is
    memoized per (path, size, mtime).

Invariants
    An id whose text is not in the GPT-2 byte alphabet, or whose text a later
    id repeats (llama.cpp's ``token_to_id`` keeps the last id), is never
    emitted by llama.cpp's BPE and never allowed here.  User-defined
    tokens (type 4) are cut out of the text before
    pre-tokenization by llama.cpp even with ``special=False``; like control
    tokens they are left to the grammar (never filtered) and start a fresh
    canonical state.  Seeds: docs/design.md sections 5 and 6; llama.cpp
    ``src/llama-vocab.cpp`` and ``src/unicode.cpp`` (read, not copied).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from grammask.canonical.filter import CanonicalFilter
from grammask.vocab.encodings import SENTENCEPIECE_SPACE, UNICODE_TO_BYTE, byte_level_to_bytes
from grammask.vocab.gguf import (
    TOKEN_TYPE_BYTE,
    TOKEN_TYPE_CONTROL,
    TOKEN_TYPE_NORMAL,
    TOKEN_TYPE_UNKNOWN,
    TOKEN_TYPE_UNUSED,
    TOKEN_TYPE_USER_DEFINED,
    GGUFTokenizerMetadata,
    read_gguf_metadata,
)

CACHE_FORMAT = "canonical-gguf-v4"

def _contractions(letter_class: str) -> str:
    """``'s|'t|'re|'ve|'m|'ll|'d`` with each letter matched as ``(?=letter_class)(?i:x)``.

    Exactly the letters of ``letter_class`` that fold to x (``[a-z]``: case-sensitive
    lowercase; ``[a-zA-Z]``: either ASCII case, never ``ſ`` or the Kelvin sign).  Written
    with ``(?i)`` letter atoms so the scanner keeps these letters apart only right
    after an apostrophe (``pretokenizer.CharClasses``' generic classes): a plain
    ``'s`` makes SmolLM2's 49k tokens fall into 23k shapes instead of 1.9k.
    """
    suffixes = ("s", "t", "re", "ve", "m", "ll", "d")
    return "'(?:" + "|".join("".join(f"(?={letter_class})(?i:{letter})" for letter in suffix)
                             for suffix in suffixes) + ")"


_CONTRACTIONS = _contractions("[a-z]")
_CONTRACTIONS_ANY_CASE = _contractions("[a-zA-Z]")

GPT2_PATTERN = _CONTRACTIONS + r"| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
"""llama.cpp's GPT-2 regex plus ``|\\s+``: the one piece it leaves unmatched is a single
whitespace character before a non-space, which ``\\s+`` takes alone."""

DIGITS_THEN_GPT2_PATTERN = (r"\p{N}|" + _CONTRACTIONS
                            + r"| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+(?![^\s\p{N}])|\s+")
"""``\\p{N}`` pieces first, then the GPT-2 regex inside the rest: a digit ends a piece."""

LLAMA3_PATTERN = (_CONTRACTIONS_ANY_CASE + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                  r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (_CONTRACTIONS_ANY_CASE + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN35_PATTERN = (_CONTRACTIONS_ANY_CASE + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
                  r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN_PATTERN = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+"
                  r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*"
                  r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
"""llama.cpp's rewrite of tekken's regex (upper = a letter other than a-z, lower = a
letter other than A-Z), not the original ``\\p{Lu}``/``\\p{Ll}`` one."""


@dataclass(frozen=True)
class PreTokenizer:
    """A ``tokenizer.ggml.pre`` value as llama.cpp reads it."""

    family: str            # llama.cpp's LLAMA_VOCAB_PRE_TYPE_* group
    pattern: str           # one regex with llama.cpp's piece ends (module docstring)
    ignore_merges: bool    # a whole pre-token that is a token is emitted as that token


def _names(names: str, family: str, pattern: str, ignore_merges: bool = False) -> dict:
    return {name: PreTokenizer(family, pattern, ignore_merges) for name in names.split()}


PRETOKENIZERS: dict = {
    **_names("gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert "
             "jina-v1-en jina-v2-code roberta-bpe mpt olmo jais trillion granite-docling exaone4",
             "gpt2", GPT2_PATTERN),
    **_names("starcoder refact command-r smollm codeshell exaone minerva-7b mellum2",
             "smollm", DIGITS_THEN_GPT2_PATTERN),
    **_names("llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2 jina-v5-nano",
             "llama3", LLAMA3_PATTERN, ignore_merges=True),
    **_names("dbrx smaug-bpe chatglm-bpe", "llama3", LLAMA3_PATTERN),
    **_names("glm4 glm5", "llama3", LLAMA3_PATTERN, ignore_merges=True),
    **_names("qwen2 deepseek-r1-qwen kormo f2llmv2 megrez stablelm2 hunyuan solar-open",
             "qwen2", QWEN2_PATTERN),
    **_names("qwen35", "qwen35", QWEN35_PATTERN),
    **_names("tekken", "tekken", TEKKEN_PATTERN, ignore_merges=True),
}
"""Supported ``tokenizer.ggml.pre`` names (llama.cpp's ``llama_vocab::impl::load``)."""

_NEVER_BPE_TYPES = (TOKEN_TYPE_UNKNOWN, TOKEN_TYPE_CONTROL, TOKEN_TYPE_UNUSED, TOKEN_TYPE_USER_DEFINED)

_BYTE_ALPHABET = frozenset(UNICODE_TO_BYTE)
_BUILT: dict = {}
_METADATA: dict = {}


# -- metadata --------------------------------------------------------------------
def gguf_metadata_of(vocab: Any) -> Optional[GGUFTokenizerMetadata]:
    """The GGUF tokenizer metadata behind a ``from_gguf`` or ``from_llama`` Vocabulary, or None."""
    kind = getattr(vocab, "tokenizer_kind", None)
    if kind == "gguf":
        return vocab.gguf_metadata
    if kind != "llama":
        return None
    path = getattr(vocab.tokenizer, "model_path", None)
    if not path or not os.path.exists(path):
        return None
    stat = os.stat(path)
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    metadata = _METADATA.get(key)
    if metadata is None:
        metadata = _METADATA[key] = read_gguf_metadata(path)
    return metadata


def _token_types(metadata: GGUFTokenizerMetadata) -> np.ndarray:
    if metadata.token_types is not None:
        return metadata.token_types
    return np.full(metadata.n_tokens, TOKEN_TYPE_NORMAL, dtype=np.int32)


def _digest(metadata: GGUFTokenizerMetadata, pattern: str) -> str:
    digest = hashlib.sha256(f"{CACHE_FORMAT}\0{metadata.model}\0{pattern}\0".encode("utf-8"))
    digest.update("\0".join(metadata.tokens).encode("utf-8", errors="surrogateescape"))
    digest.update(_token_types(metadata).astype("<i4").tobytes())
    if metadata.scores is not None:
        digest.update(metadata.scores.astype("<f4").tobytes())
    digest.update("\n".join(metadata.merges or ()).encode("utf-8", errors="surrogateescape"))
    digest.update(repr(metadata.other.get("tokenizer.ggml.add_space_prefix")).encode("utf-8"))
    return digest.hexdigest()


# -- byte-level BPE ----------------------------------------------------------------
def gguf_bpe_rules(metadata: GGUFTokenizerMetadata, vocab: Any):
    """``sources.BPERules`` of a ``gpt2`` GGUF tokenizer with a known pre-tokenizer, or None."""
    from grammask.canonical.sources import BPERules

    pre = PRETOKENIZERS.get(metadata.pre or "")
    if metadata.model != "gpt2" or pre is None or not metadata.merges:
        return None
    types = _token_types(metadata).tolist()
    token_bytes: list = [None] * vocab.size
    excluded = set(vocab.special_token_ids)
    emitted_id_of = {text: token_id for token_id, text in enumerate(metadata.tokens)}
    for token_id, (text, token_type) in enumerate(zip(metadata.tokens, types)):
        if token_type in _NEVER_BPE_TYPES or token_type == TOKEN_TYPE_BYTE:
            excluded.add(token_id)
            continue
        data = byte_level_to_bytes(text)
        if token_id >= vocab.size or vocab.token_bytes[token_id] != data:
            return None
        if token_id in excluded:
            continue
        emitted = emitted_id_of[text] == token_id and _BYTE_ALPHABET.issuperset(text)
        token_bytes[token_id] = data if emitted else _never_emitted(token_id)
    known = {data for data in token_bytes if data is not None}
    priority_of: dict = {}
    for index, merge in enumerate(metadata.merges):
        left, separator, right = merge.partition(" ")
        if not separator:
            return None
        key = (byte_level_to_bytes(left), byte_level_to_bytes(right))
        if key[0] + key[1] not in known:
            return None
        priority_of.setdefault(key, index)
    get = priority_of.get

    def pair_rule(left: bytes, right: bytes) -> Optional[int]:
        return get((left, right))

    return BPERules("gguf", token_bytes, pair_rule, pre.pattern, vocab.size, frozenset(excluded),
                    f"gguf-{metadata.pre}")


def _never_emitted(token_id: int) -> bytes:
    """Bytes for an id llama.cpp's BPE never emits: its text is not written in the GPT-2
    byte alphabet (BPE pieces always are; command-r has 1,403 emoji written as plain
    UTF-8 next to their byte-level twins), or a later id has the same text (llama.cpp's
    ``text_to_token`` keeps the last one).  Invalid UTF-8 and unique per id, so the merge
    table finds it unreachable and the pre-tokenizer state never allows it (``None``
    would mean "never filtered")."""
    return b"\xff\xff" + token_id.to_bytes(4, "little")


def _split_bytes(data: bytes) -> list:
    return [data[index:index + 1] for index in range(len(data))]


def _build_bpe(metadata: GGUFTokenizerMetadata, vocab: Any):
    """(label, PretokenizedBPE) or None (no exact filter); see the module docstring."""
    from grammask.canonical.bpe import MergeTable
    from grammask.canonical.pretokenized_bpe import PretokenizedBPE

    rules = gguf_bpe_rules(metadata, vocab)
    if rules is None:
        return None
    merges = MergeTable(rules.token_bytes, rules.pair_rule, _split_bytes)
    if PRETOKENIZERS[metadata.pre].ignore_merges and len(merges.unreachable_ids):
        return None
    backend = PretokenizedBPE(merges, rules.pattern, vocab.size, rules.special_ids)
    return f"gguf-bpe+pretokenizer({metadata.pre})", backend


# -- SentencePiece ------------------------------------------------------------------
class GGUFPieces:
    """A read-only ``SentencePieceProcessor`` view of a GGUF ``llama`` tokenizer.

    Answers the calls ``SentencePieceBPE`` makes: piece texts, kinds from
    ``tokenizer.ggml.token_type``, scores, and the dummy-prefix probe
    ``encode("x", out_type=str)`` from ``tokenizer.ggml.add_space_prefix``
    (llama.cpp's default for ``llama`` models is true).  User-defined tokens
    are reported as control tokens: llama.cpp cuts them out before BPE.
    """

    def __init__(self, metadata: GGUFTokenizerMetadata):
        self.metadata = metadata
        self.types = _token_types(metadata)
        self.scores = (metadata.scores if metadata.scores is not None
                       else np.zeros(metadata.n_tokens, dtype=np.float32))
        self.add_space_prefix = bool(metadata.other.get("tokenizer.ggml.add_space_prefix", True))

    def get_piece_size(self) -> int:
        return self.metadata.n_tokens

    def id_to_piece(self, token_id: int) -> str:
        return self.metadata.tokens[token_id]

    def get_score(self, token_id: int) -> float:
        return float(self.scores[token_id])

    def is_byte(self, token_id: int) -> bool:
        return int(self.types[token_id]) == TOKEN_TYPE_BYTE

    def is_control(self, token_id: int) -> bool:
        return int(self.types[token_id]) in (TOKEN_TYPE_CONTROL, TOKEN_TYPE_USER_DEFINED)

    def is_unknown(self, token_id: int) -> bool:
        return int(self.types[token_id]) == TOKEN_TYPE_UNKNOWN

    def is_unused(self, token_id: int) -> bool:
        return int(self.types[token_id]) == TOKEN_TYPE_UNUSED

    def encode(self, text: str, out_type: Any = str) -> list:
        """Only the dummy-prefix probe: the text as one piece, with ``▁`` if a prefix is added."""
        return [(SENTENCEPIECE_SPACE if self.add_space_prefix else "") + text.replace(" ", SENTENCEPIECE_SPACE)]


def _sentencepiece_consistent(metadata: GGUFTokenizerMetadata, vocab: Any) -> bool:
    """The vocabulary's bytes are the GGUF pieces (▁ as a space, <0xNN> as one byte)."""
    types = _token_types(metadata).tolist()
    for token_id, (text, token_type) in enumerate(zip(metadata.tokens, types)):
        if token_type in _NEVER_BPE_TYPES or token_type == TOKEN_TYPE_BYTE:
            continue
        if token_id >= vocab.size or vocab.token_bytes[token_id] != text.replace(
                SENTENCEPIECE_SPACE, " ").encode("utf-8", errors="surrogateescape"):
            return False
    return True


def _build_sentencepiece(metadata: GGUFTokenizerMetadata, vocab: Any):
    from grammask.canonical.sentencepiece_bpe import SentencePieceBPE

    if metadata.model != "llama" or metadata.scores is None or not _sentencepiece_consistent(metadata, vocab):
        return None
    if metadata.other.get("tokenizer.ggml.remove_extra_whitespaces"):
        return None
    backend = SentencePieceBPE(GGUFPieces(metadata), vocab.size, frozenset(vocab.special_token_ids))
    return "gguf-sentencepiece-bpe", backend


# -- entry point ----------------------------------------------------------------------
def filter_for_gguf_vocabulary(vocab: Any) -> Optional[CanonicalFilter]:
    """The canonical filter of a GGUF / llama.cpp Vocabulary, or None (module docstring)."""
    from grammask.canonical.factory import _cache_path, _load, _store

    metadata = gguf_metadata_of(vocab)
    if metadata is None:
        return None
    if metadata.model == "gpt2":
        pre = PRETOKENIZERS.get(metadata.pre or "")
        if pre is None:
            return None
        build, pattern = _build_bpe, f"{metadata.pre}\0{pre.ignore_merges}\0{pre.pattern}"
    elif metadata.model == "llama":
        build, pattern = _build_sentencepiece, ""
    else:
        return None
    key = (_digest(metadata, pattern), vocab.size, frozenset(vocab.special_token_ids))
    if key in _BUILT:
        return _BUILT[key]
    path = _cache_path(key)
    loaded = _load(path)
    if loaded is None:
        loaded = build(metadata, vocab) or ("none", None)
        _store(path, loaded)
    label, backend = loaded
    built = _BUILT[key] = CanonicalFilter(label, backend) if backend is not None else None
    return built
