"""Vocabulary from a SentencePiece model (a ``.model`` file, its bytes, or a processor).

What it computes
    For each piece id: byte pieces (``<0xNN>``, byte fallback) are that one
    byte; other pieces spell text with ``▁`` (U+2581) for a space, so their
    bytes are the UTF-8 of the piece with ``▁`` replaced by a space.  Control
    (``<s>``, ``</s>``, ``[INST]``), unknown (``<unk>``) and unused pieces are
    special; their bytes are their spelling, for display only.

    The normalizer's dummy prefix means the first piece of an encoded text
    usually starts with ``▁``: those bytes keep the space (SentencePiece's
    decode drops one leading space of the whole text; the bytes here do not).

EOS
    ``eos_token_ids=None``: the processor's ``eos_id()`` plus every control
    piece spelled as in ``encodings.END_TOKEN_NAMES``.
"""

from __future__ import annotations

import os
from typing import Any

from grammask.errors import VocabularyError
from grammask.vocab.encodings import END_TOKEN_NAMES, sentencepiece_piece_to_bytes


def load_processor(model_path_or_processor: Any) -> Any:
    """A ``SentencePieceProcessor`` from a path, serialized model bytes, or a processor."""
    import sentencepiece

    if isinstance(model_path_or_processor, sentencepiece.SentencePieceProcessor):
        return model_path_or_processor
    processor = sentencepiece.SentencePieceProcessor()
    try:
        if isinstance(model_path_or_processor, (bytes, bytearray)):
            processor.LoadFromSerializedProto(bytes(model_path_or_processor))
        else:
            processor.Load(os.fspath(model_path_or_processor))
    except (OSError, RuntimeError, TypeError) as error:
        raise VocabularyError(f"cannot load SentencePiece model {model_path_or_processor!r:.200}: "
                              f"{error}") from None
    return processor


def vocabulary_from_sentencepiece(cls: type, model_path_or_processor: Any, eos_token_ids: Any = None):
    """``Vocabulary.from_sentencepiece``: see the module docstring."""
    processor = load_processor(model_path_or_processor)
    size = processor.get_piece_size()
    token_bytes = []
    special_ids = []
    control_ids_by_name = {}
    for token_id in range(size):
        piece = processor.id_to_piece(token_id)
        if processor.is_control(token_id) or processor.is_unknown(token_id) or processor.is_unused(token_id):
            special_ids.append(token_id)
            control_ids_by_name[piece] = token_id
            token_bytes.append(piece.encode("utf-8"))
        elif processor.is_byte(token_id):
            token_bytes.append(sentencepiece_piece_to_bytes(piece))
        else:
            token_bytes.append(piece.replace("\u2581", " ").encode("utf-8"))
    if eos_token_ids is None:
        eos_token_ids = [processor.eos_id()] if processor.eos_id() >= 0 else []
        eos_token_ids += [control_ids_by_name[name] for name in END_TOKEN_NAMES if name in control_ids_by_name]
        if not eos_token_ids:
            raise VocabularyError("this SentencePiece model defines no EOS piece; pass eos_token_ids=[...]")
    return cls(token_bytes, eos_token_ids, special_ids, tokenizer=processor,
               tokenizer_kind="sentencepiece")
