"""Vocabulary from a Hugging Face ``tokenizers.Tokenizer`` or a transformers tokenizer.

What it computes
    The exact bytes of every id of a ``tokenizers`` tokenizer, by undoing the
    string encoding its model vocabulary uses.  The encoding is detected from
    the tokenizer's own components (their JSON state), in this order:

    ``byte_level``     a ``ByteLevel`` pre-tokenizer or decoder: tokens spell
                       bytes through GPT-2's byte map (``Ġ`` = space).  A token
                       with a character outside the map is taken as UTF-8
                       text, as the ``ByteLevel`` decoder does.
    ``wordpiece``      a ``WordPiece`` model: ``##x`` continues a word and
                       adds ``x``; any other token starts a word and adds a
                       space before it (convention below).
    ``sentencepiece``  a ``Metaspace`` pre-tokenizer/decoder, a ``Replace`` of
                       ``▁``, a ``ByteFallback`` decoder, byte fallback in the
                       model or a ``Unigram`` model: ``▁`` is a space and, with
                       byte fallback, ``<0xNN>`` is one byte.
    ``plain``          anything else: the token string as UTF-8.

    Added tokens (``get_added_tokens_decoder``) are matched on raw input text,
    so their bytes are their content as UTF-8; special ones are marked special.

WordPiece convention (text reconstruction is not concatenative there)
    BERT's decoder joins words with spaces and glues ``##`` pieces, then
    ``cleanup`` removes spaces before punctuation.  We give a word-initial
    token the bytes ``b" " + token`` and ``##x`` the bytes ``b"x"``, so the
    concatenated bytes of any id sequence are ``b" "`` followed by the
    decoder's output with ``cleanup=False``.  Output therefore begins with a
    space, and punctuation is preceded by one (``" hello , world"``): a grammar
    over a WordPiece vocabulary must allow that spacing.  Pieces spelled
    ``[unusedN]`` are reserved placeholders and are marked special, like the
    unknown token.

EOS
    Without ``eos_token_ids``: a transformers tokenizer's ``eos_token_id`` plus
    every special or added token whose spelling is in
    ``encodings.END_TOKEN_NAMES`` (end of text and end of turn).  If none is
    found, ``VocabularyError`` asks for ``eos_token_ids``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, Optional

from grammask.errors import VocabularyError
from grammask.vocab.encodings import (
    END_TOKEN_NAMES,
    SENTENCEPIECE_SPACE,
    byte_level_to_bytes,
    byte_piece_value,
)

_UNUSED_PIECE = re.compile(r"\[unused\d+\]")


def _component_state(component: Any) -> Any:
    """A tokenizers component's JSON state as Python data (None when absent)."""
    if component is None:
        return None
    return json.loads(component.__getstate__())


def _walk_types(state: Any) -> Iterator[dict]:
    """Every JSON object with a ``type`` inside a component state, nested ones included."""
    if isinstance(state, dict):
        if "type" in state:
            yield state
        for value in state.values():
            yield from _walk_types(value)
    elif isinstance(state, list):
        for value in state:
            yield from _walk_types(value)


def detect_string_encoding(tokenizer: Any) -> str:
    """``"byte_level"``, ``"wordpiece"``, ``"sentencepiece"`` or ``"plain"`` (module docstring)."""
    model_kind = type(tokenizer.model).__name__
    components = [_component_state(getattr(tokenizer, name, None))
                  for name in ("normalizer", "pre_tokenizer", "decoder")]
    types = [node for state in components for node in _walk_types(state)]
    type_names = {node["type"] for node in types}
    if "ByteLevel" in type_names:
        return "byte_level"
    if model_kind == "WordPiece":
        return "wordpiece"
    replaces_metaspace = any(
        node["type"] == "Replace" and SENTENCEPIECE_SPACE in json.dumps(node, ensure_ascii=False)
        for node in types)
    if (type_names & {"Metaspace", "ByteFallback"} or replaces_metaspace or model_kind == "Unigram"
            or getattr(tokenizer.model, "byte_fallback", False)):
        return "sentencepiece"
    return "plain"


def _has_byte_fallback(tokenizer: Any) -> bool:
    if getattr(tokenizer.model, "byte_fallback", False):
        return True
    decoder = _component_state(tokenizer.decoder)
    return any(node["type"] == "ByteFallback" for node in _walk_types(decoder))


def _model_token_bytes(token: str, encoding: str, byte_fallback: bool,
                       continuing_prefix: str) -> bytes:
    if encoding == "byte_level":
        return byte_level_to_bytes(token)
    if encoding == "wordpiece":
        if continuing_prefix and token.startswith(continuing_prefix):
            return token[len(continuing_prefix):].encode("utf-8")
        return b" " + token.encode("utf-8")
    if encoding == "sentencepiece":
        if byte_fallback:
            byte = byte_piece_value(token)
            if byte is not None:
                return bytes([byte])
        return token.replace(SENTENCEPIECE_SPACE, " ").encode("utf-8")
    return token.encode("utf-8")


def _unknown_token(tokenizer: Any) -> Optional[str]:
    token = getattr(tokenizer.model, "unk_token", None)
    return token if isinstance(token, str) else None


def token_bytes_from_tokenizers(tokenizer: Any) -> tuple[list[Optional[bytes]], set[int], dict[str, int]]:
    """(bytes by id, special ids, spelling -> id of added and special tokens)."""
    encoding = detect_string_encoding(tokenizer)
    byte_fallback = encoding == "sentencepiece" and _has_byte_fallback(tokenizer)
    continuing_prefix = getattr(tokenizer.model, "continuing_subword_prefix", None) or ""
    if encoding == "wordpiece" and not continuing_prefix:
        continuing_prefix = "##"
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    added = tokenizer.get_added_tokens_decoder()
    if not vocab:
        raise VocabularyError("the tokenizer has an empty vocabulary")
    size = max(max(vocab.values()), max(added, default=-1)) + 1
    token_bytes: list[Optional[bytes]] = [None] * size
    special_ids: set[int] = set()
    for token, token_id in vocab.items():
        if token_id in added:
            continue
        token_bytes[token_id] = _model_token_bytes(token, encoding, byte_fallback, continuing_prefix)
        if encoding == "wordpiece" and _UNUSED_PIECE.fullmatch(token):
            special_ids.add(token_id)
    named_ids: dict[str, int] = {}
    for token_id, added_token in added.items():
        token_bytes[token_id] = added_token.content.encode("utf-8")
        named_ids[added_token.content] = token_id
        if added_token.special:
            special_ids.add(token_id)
    unknown = _unknown_token(tokenizer)
    if unknown is not None and unknown in vocab:
        special_ids.add(vocab[unknown])
    return token_bytes, special_ids, named_ids


def _is_transformers_tokenizer(tok: Any) -> bool:
    return hasattr(tok, "backend_tokenizer") or hasattr(tok, "sp_model") or hasattr(tok, "all_special_ids")


def _transformers_eos_ids(tok: Any) -> list[int]:
    eos = getattr(tok, "eos_token_id", None)
    if eos is None:
        return []
    return list(eos) if isinstance(eos, (list, tuple)) else [eos]


def vocabulary_from_tokenizer(cls: type, tok: Any, eos_token_ids: Any = None):
    """``Vocabulary.from_tokenizer``: see the module docstring."""
    import tokenizers

    extra_special: set[int] = set()
    default_eos: list[int] = []
    source = tok
    if not isinstance(tok, tokenizers.Tokenizer):
        if not _is_transformers_tokenizer(tok):
            raise VocabularyError(
                f"from_tokenizer expects a tokenizers.Tokenizer or a transformers tokenizer, "
                f"got {type(tok).__name__}")
        default_eos = _transformers_eos_ids(tok)
        extra_special = set(getattr(tok, "all_special_ids", ()) or ())
        backend = getattr(tok, "backend_tokenizer", None)
        if backend is None:
            if hasattr(tok, "sp_model"):
                from grammask.vocab.loaders_sentencepiece import vocabulary_from_sentencepiece
                return vocabulary_from_sentencepiece(
                    cls, tok.sp_model, eos_token_ids if eos_token_ids is not None else default_eos or None)
            raise VocabularyError(
                f"{type(tok).__name__} has no backend_tokenizer (a slow tokenizer); "
                "load the fast tokenizer or pass its SentencePiece model to from_sentencepiece")
        source = backend
    token_bytes, special_ids, named_ids = token_bytes_from_tokenizers(source)
    special_ids |= {token_id for token_id in extra_special if 0 <= token_id < len(token_bytes)}
    if eos_token_ids is None:
        found = [named_ids[name] for name in END_TOKEN_NAMES if name in named_ids]
        eos_token_ids = list(dict.fromkeys(default_eos + found))
        if not eos_token_ids:
            raise VocabularyError(
                "cannot tell the EOS token of this tokenizer (no eos_token_id and none of "
                f"{', '.join(END_TOKEN_NAMES)} among its added tokens); pass eos_token_ids=[...]")
    return cls(token_bytes, eos_token_ids, special_ids, tokenizer=source, tokenizer_kind="tokenizers")
