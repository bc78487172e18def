"""Vocabulary from a loaded ``llama_cpp.Llama`` (llama-cpp-python).

What it computes
    Each id's bytes are llama.cpp's own rendering, ``llama_token_to_piece``
    with ``special=False`` and a buffer grown until the piece fits
    (``Llama.detokenize`` truncates long tokens to 32 bytes, docs/design.md
    section 6).  Ids with the control, unknown or unused attribute
    (``llama_vocab_get_attr``) are special; their bytes are their text
    (``llama_vocab_get_text``), for display only.  EOS: every id for which
    ``llama_vocab_is_eog`` holds (eos, end-of-turn, ...), eos first.

Invariants
    Works with ``Llama(..., vocab_only=True)``: only the vocabulary is used.
    The Llama object is kept as ``tokenizer`` but is not pickled.
"""

from __future__ import annotations

import ctypes
from typing import Any

from grammask.errors import VocabularyError

_INITIAL_BUFFER = 256


def _llama_vocab_pointer(llm: Any) -> Any:
    model = getattr(llm, "_model", None)
    vocab = getattr(model, "vocab", None)
    if vocab is None:
        raise VocabularyError(f"from_llama expects a llama_cpp.Llama, got {type(llm).__name__}")
    return vocab


def _piece(llama_cpp: Any, vocab: Any, token_id: int, buffer: Any) -> tuple[bytes, Any]:
    n_bytes = llama_cpp.llama_token_to_piece(vocab, token_id, buffer, len(buffer), 0, False)
    if n_bytes < 0:
        buffer = ctypes.create_string_buffer(-n_bytes)
        n_bytes = llama_cpp.llama_token_to_piece(vocab, token_id, buffer, len(buffer), 0, False)
        if n_bytes < 0:
            raise VocabularyError(f"llama_token_to_piece failed for token {token_id}", token_id=token_id)
    return buffer.raw[:n_bytes], buffer


def vocabulary_from_llama(cls: type, llm: Any, eos_token_ids: Any = None):
    """``Vocabulary.from_llama``: see the module docstring."""
    import llama_cpp

    vocab = _llama_vocab_pointer(llm)
    size = llama_cpp.llama_vocab_n_tokens(vocab)
    special_mask = (llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
                    | llama_cpp.LLAMA_TOKEN_ATTR_UNUSED)
    buffer = ctypes.create_string_buffer(_INITIAL_BUFFER)
    token_bytes = []
    special_ids = []
    end_ids = []
    for token_id in range(size):
        attributes = llama_cpp.llama_vocab_get_attr(vocab, token_id)
        if attributes & special_mask:
            special_ids.append(token_id)
            token_bytes.append(llama_cpp.llama_vocab_get_text(vocab, token_id) or b"")
        else:
            data, buffer = _piece(llama_cpp, vocab, token_id, buffer)
            token_bytes.append(data)
        if llama_cpp.llama_vocab_is_eog(vocab, token_id):
            end_ids.append(token_id)
    if eos_token_ids is None:
        eos = llm.token_eos()
        eos_token_ids = ([eos] if 0 <= eos < size else []) + [token_id for token_id in end_ids if token_id != eos]
        if not eos_token_ids:
            raise VocabularyError("the llama.cpp vocabulary has no end-of-generation token; "
                                  "pass eos_token_ids=[...]")
    return cls(token_bytes, eos_token_ids, special_ids, tokenizer=llm, tokenizer_kind="llama")
