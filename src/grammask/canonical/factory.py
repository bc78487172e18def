"""Choosing and building the canonical filter for a tokenizer object.

What it computes
    ``filter_for_tokenizer(tokenizer, vocab_size, special_ids)`` recognizes a
    ``tiktoken.Encoding`` (``_mergeable_ranks`` + ``_pat_str``), a
    ``tokenizers.Tokenizer`` or a transformers fast tokenizer (its
    ``backend_tokenizer``) with a byte-level BPE model, a SentencePiece
    processor (BPE models), or a WordPiece ``tokenizers`` model, and returns
    a ``CanonicalFilter``; None when no exact filter is known.
    Built backends are memoized per tokenizer fingerprint in this process.

Invariants
    Token ids are the tokenizer's own ids; ``vocab_size`` (a Vocabulary's
    size) may exceed the tokenizer's table, extra ids are left alone.
"""

from __future__ import annotations

import hashlib
from typing import Any, Optional

from grammask.canonical.bpe import MergeTable
from grammask.canonical.filter import CanonicalFilter
from grammask.canonical.pretokenized_bpe import PretokenizedBPE
from grammask.canonical.sources import BPERules, tiktoken_rules, tokenizers_rules

_BUILT: dict = {}


def _split_bytes(data: bytes) -> list:
    return [data[index:index + 1] for index in range(len(data))]


def _fingerprint(rules: BPERules) -> str:
    digest = hashlib.sha256()
    digest.update((rules.pattern or "").encode("utf-8"))
    for data in rules.token_bytes:
        digest.update(b"\x00" if data is None else len(data).to_bytes(2, "little") + data)
    return digest.hexdigest()


def _bpe_filter(rules: BPERules, vocab_size: Optional[int], special_ids: frozenset) -> Optional[CanonicalFilter]:
    if rules.pattern is None:
        return None
    size = max(vocab_size or 0, rules.vocab_size)
    key = (_fingerprint(rules), size, special_ids | rules.special_ids)
    built = _BUILT.get(key)
    if built is None:
        merges = MergeTable(rules.token_bytes, rules.pair_rule, _split_bytes)
        backend = PretokenizedBPE(merges, rules.pattern, size, special_ids | rules.special_ids)
        built = _BUILT[key] = CanonicalFilter(f"bpe+pretokenizer({rules.label})", backend)
    return built


def filter_for_tokenizer(tokenizer: Any, vocab_size: Optional[int] = None,
                         special_ids: frozenset = frozenset()) -> Optional[CanonicalFilter]:
    if hasattr(tokenizer, "_mergeable_ranks") and hasattr(tokenizer, "_pat_str"):
        return _bpe_filter(tiktoken_rules(tokenizer), vocab_size, special_ids)
    backend_tokenizer = getattr(tokenizer, "backend_tokenizer", None)
    if backend_tokenizer is not None:
        tokenizer = backend_tokenizer
    if hasattr(tokenizer, "to_str"):
        rules = tokenizers_rules(tokenizer)
        if rules is not None:
            return _bpe_filter(rules, vocab_size, special_ids)
        return None
    return None
