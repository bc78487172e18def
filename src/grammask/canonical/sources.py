"""Reading BPE merge rules and pre-tokenizer patterns out of tokenizer objects.

What it computes
    ``tiktoken_rules(encoding)``: token bytes by id from ``_mergeable_ranks``,
    the merge rule "adjacent pieces a, b merge with priority rank(a + b)"
    (tiktoken's byte_pair_merge), the pattern ``_pat_str`` and the special ids.
    ``tokenizers_rules(tokenizer)``: from ``tokenizer.to_str()`` JSON of a
    ``BPE`` model: token bytes (byte-level alphabet undone), the merge rule
    "a, b merge with priority = index of (a, b) in the merge list", the Split
    pre-tokenizer's regex, the added (special) token ids.  Returns None for
    configurations whose exact rules are not known here (normalizers, several
    Split patterns, ``ignore_merges``, dropout, continuing-subword prefixes).

Data layout
    ``BPERules``: ``token_bytes`` list[bytes | None] by id, ``pair_rule``
    callable(bytes, bytes) -> int | None, ``pattern`` str | None,
    ``special_ids`` frozenset, ``vocab_size`` int, ``kind`` str.

Invariants
    Priorities are ranks or merge-list positions, never token ids (tiktoken's
    ranks are its ids by construction, which is the tokenizer's own rule).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from grammask.vocab.encodings import UNICODE_TO_BYTE

_STRICT_BYTE_LEVEL = {code_point: "\U00010000" for code_point in range(256)}
_STRICT_BYTE_LEVEL.update({ord(char): byte for char, byte in UNICODE_TO_BYTE.items()})
"""str.translate table undoing the GPT-2 byte map; every character outside it ends above 255, so
latin-1 encoding fails on exactly the strings that are not byte-level."""


def _byte_level(text: str) -> bytes:
    """The bytes a byte-level string spells; UnicodeEncodeError if a character is outside the map."""
    return text.translate(_STRICT_BYTE_LEVEL).encode("latin-1")


@dataclass
class BPERules:
    kind: str
    token_bytes: list
    pair_rule: Callable
    pattern: Optional[str]
    vocab_size: int
    special_ids: frozenset = field(default_factory=frozenset)
    label: str = ""
    rule_digest: str = ""
    """Digest of what the merge rule reads besides ``token_bytes`` (the merge list)."""


def tiktoken_rules(encoding: Any, vocab_size: Optional[int] = None) -> BPERules:
    ranks: dict = dict(encoding._mergeable_ranks)
    special = dict(getattr(encoding, "_special_tokens", {}) or {})
    size = vocab_size or max(encoding.n_vocab, max(ranks.values()) + 1)
    token_bytes: list = [None] * size
    for data, rank in ranks.items():
        if rank < size:
            token_bytes[rank] = data
    get = ranks.get

    def pair_rule(left: bytes, right: bytes) -> Optional[int]:
        return get(left + right)

    return BPERules("tiktoken", token_bytes, pair_rule, encoding._pat_str, size,
                    frozenset(special.values()), getattr(encoding, "name", "tiktoken"))


def _walk(component: Any):
    if isinstance(component, dict):
        yield component
        for value in component.values():
            yield from _walk(value)
    elif isinstance(component, list):
        for value in component:
            yield from _walk(value)


def tokenizers_rules(tokenizer: Any) -> Optional[BPERules]:
    config = json.loads(tokenizer.to_str())
    model = config.get("model") or {}
    if model.get("type") != "BPE" or model.get("dropout") or model.get("ignore_merges"):
        return None
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        return None
    if config.get("normalizer"):
        return None
    pre = config.get("pre_tokenizer") or {}
    parts = list(_walk(pre))
    splits = [part for part in parts if part.get("type") == "Split"]
    byte_levels = [part for part in parts if part.get("type") == "ByteLevel"]
    if not byte_levels or len(splits) > 1:
        return None
    if splits:
        split = splits[0]
        if split.get("behavior") != "Isolated" or split.get("invert"):
            return None
        pattern = split.get("pattern", {}).get("Regex")
        if pattern is None or any(level.get("use_regex") for level in byte_levels):
            return None
    elif byte_levels[0].get("use_regex", True):
        pattern = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    else:
        pattern = None
    if any(level.get("add_prefix_space") for level in byte_levels):
        return None
    vocab = model["vocab"]
    size = max(vocab.values()) + 1
    added = {entry["id"]: entry["content"] for entry in config.get("added_tokens", [])}
    size = max([size] + [token_id + 1 for token_id in added])
    token_bytes: list = [None] * size
    priority_of: dict = {}
    try:
        for token, token_id in vocab.items():
            if token_id not in added:
                token_bytes[token_id] = _byte_level(token)
        for index, merge in enumerate(model.get("merges", [])):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            priority_of.setdefault((_byte_level(left), _byte_level(right)), index)
    except UnicodeEncodeError:
        return None
    get = priority_of.get

    def pair_rule(left: bytes, right: bytes) -> Optional[int]:
        return get((left, right))

    digest = hashlib.sha256(json.dumps(model.get("merges", [])).encode("utf-8")).hexdigest()
    return BPERules("tokenizers", token_bytes, pair_rule, pattern, size, frozenset(added),
                    "tokenizers-bpe", digest)
