"""Canonical-tokenization filters: which next tokens keep the output canonically tokenized.

``build_canonical_filter(vocab_or_tokenizer)`` returns a ``CanonicalFilter``
(see ``filter.py`` for the interface the engine calls) or None when no exact
filter is known for the tokenizer.  Backends: byte-level BPE with a
pre-tokenizer regex (``pretokenized_bpe``), SentencePiece BPE
(``sentencepiece_bpe``), WordPiece (``wordpiece``); the BPE pair test lives
in ``bpe``, its compiled loops in ``_bpe_pairs`` (Cython).  GGUF / llama.cpp vocabularies take their rules from the GGUF
metadata (``gguf_source``).  Seeds: docs/design.md section 5.
"""

from __future__ import annotations

from typing import Any, Optional

from grammask.canonical.filter import CanonicalFilter

__all__ = ["CanonicalFilter", "build_canonical_filter", "clear_built_filters"]


def _source_of(vocab_or_tokenizer: Any):
    """(tokenizer object, vocab size or None, extra special ids) from a Vocabulary or a tokenizer."""
    tokenizer = getattr(vocab_or_tokenizer, "tokenizer", None)
    if tokenizer is not None and hasattr(vocab_or_tokenizer, "special_token_ids"):
        return tokenizer, vocab_or_tokenizer.size, frozenset(vocab_or_tokenizer.special_token_ids)
    return vocab_or_tokenizer, None, frozenset()


def build_canonical_filter(vocab_or_tokenizer: Any) -> Optional[CanonicalFilter]:
    """A canonical filter for this vocabulary / tokenizer, or None if none is exact for it."""
    from grammask.canonical.factory import filter_for_tokenizer

    if getattr(vocab_or_tokenizer, "tokenizer_kind", None) in ("gguf", "llama"):
        from grammask.canonical.gguf_source import filter_for_gguf_vocabulary
        return filter_for_gguf_vocabulary(vocab_or_tokenizer)
    tokenizer, vocab_size, special_ids = _source_of(vocab_or_tokenizer)
    if tokenizer is None:
        return None
    return filter_for_tokenizer(tokenizer, vocab_size, special_ids)


def clear_built_filters() -> None:
    """Forget every filter built in this process, for tokenizers and GGUF
    vocabularies alike (the disk cache stays)."""
    import sys

    from grammask.canonical.factory import clear_built

    clear_built()
    gguf_source = sys.modules.get("grammask.canonical.gguf_source")
    if gguf_source is not None:
        gguf_source._BUILT.clear()
