"""Choosing and building the canonical filter for a tokenizer object.

What it computes
    ``filter_for_tokenizer(tokenizer, vocab_size, special_ids)`` recognizes a
    ``tiktoken.Encoding`` (``_mergeable_ranks`` + ``_pat_str``), a
    ``tokenizers.Tokenizer`` or a transformers fast tokenizer (its
    ``backend_tokenizer``) with a byte-level BPE model, a SentencePiece
    processor (BPE models), or a WordPiece ``tokenizers`` model, and returns
    a ``CanonicalFilter``; None when no exact filter is known.
    Built backends are memoized per tokenizer fingerprint in this process
    (``clear_built()`` forgets them) and
    pickled under ``cache_dir()`` (``$GRAMMASK_CACHE_DIR``, default
    ``~/.cache/grammask``; ``GRAMMASK_NO_DISK_CACHE=1`` turns it off), keyed
    by a sha256 over the format version (``format_version()``: the layout
    constant, the ``regex`` release, whose Unicode tables make the character
    classes a backend keeps, and the bytes of this package's modules, whose
    output the tables are), token bytes, merge rule and pattern,
    with the derived tables a backend's ``prepare_for_disk`` builds first
    (a pickle without them, from before, still loads: they are built on use).

Invariants
    Token ids are the tokenizer's own ids; ``vocab_size`` (a Vocabulary's
    size) may exceed the tokenizer's table, extra ids are left alone.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import pickle
import pkgutil
from typing import Any, Callable, Optional

from grammask.canonical.bpe import MergeTable
from grammask.canonical.filter import CanonicalFilter
from grammask.canonical.pretokenized_bpe import PretokenizedBPE
from grammask.canonical.sources import BPERules, tiktoken_rules, tokenizers_rules
from grammask.config import cache_dir, disk_caches_enabled

_BUILT: dict = {}


def clear_built() -> None:
    """Forget the filters built in this process (the disk cache stays)."""
    _BUILT.clear()


def _split_bytes(data: bytes) -> list:
    return [data[index:index + 1] for index in range(len(data))]


CACHE_FORMAT = "canonical-bpe-v2"

_format_version: Optional[str] = None


def format_version() -> str:
    """``CACHE_FORMAT``, the ``regex`` release and a digest of the bytes of
    every module of ``grammask.canonical`` (compiled ones included), once per
    process: a pickle written by another release of either can never be
    read (one built with an older ``regex`` gave Llama-3's filter other
    character classes, and forbade a canonical space after a run of 36)."""
    global _format_version
    if _format_version is None:
        import regex

        import grammask.canonical as package
        digest = hashlib.sha256(f"{CACHE_FORMAT}\0regex {regex.__version__}\0".encode("utf-8"))
        for module in sorted(module.name for module in pkgutil.iter_modules(package.__path__)):
            origin = importlib.util.find_spec(f"{package.__name__}.{module}").origin
            with open(origin, "rb") as file:
                digest.update(hashlib.sha256(file.read()).digest())
        _format_version = digest.hexdigest()
    return _format_version


def _tiktoken_digest(encoding: Any) -> str:
    """sha256 over what tiktoken's encode reads: pattern, ranks, special tokens."""
    digest = hashlib.sha256()
    digest.update((CACHE_FORMAT + "\0tiktoken\0" + encoding._pat_str).encode("utf-8"))
    for data, rank in sorted(encoding._mergeable_ranks.items(), key=lambda item: item[1]):
        digest.update(rank.to_bytes(4, "little") + len(data).to_bytes(2, "little") + data)
    specials = sorted((getattr(encoding, "_special_tokens", {}) or {}).items())
    digest.update(repr(specials).encode("utf-8"))
    return digest.hexdigest()


def _tokenizers_digest(tokenizer: Any) -> str:
    return hashlib.sha256((CACHE_FORMAT + "\0tokenizers\0" + tokenizer.to_str()).encode("utf-8")).hexdigest()


def _bpe_filter(source_digest: str, make_rules: Callable[[], Optional[BPERules]],
                vocab_size: Optional[int], special_ids: frozenset) -> Optional[CanonicalFilter]:
    """The filter for a byte-level BPE source, from memory, the disk cache, or built."""
    key = (source_digest, vocab_size, special_ids)
    if key in _BUILT:
        return _BUILT[key]
    path = _cache_path(key)
    loaded = _load(path)
    if loaded is None:
        rules = make_rules()
        if rules is None or rules.pattern is None:
            _BUILT[key] = None
            return None
        size = max(vocab_size or 0, rules.vocab_size)
        merges = MergeTable(rules.token_bytes, rules.pair_rule, _split_bytes)
        backend = PretokenizedBPE(merges, rules.pattern, size, special_ids | rules.special_ids)
        loaded = (f"bpe+pretokenizer({rules.label})", backend)
        _store(path, loaded)
    built = _BUILT[key] = CanonicalFilter(*loaded)
    return built


def _cache_path(key: tuple) -> str:
    digest = hashlib.sha256(repr((format_version(), key[0], key[1], sorted(key[2]))).encode("utf-8")).hexdigest()[:32]
    return os.path.join(cache_dir(), f"{CACHE_FORMAT}-{digest}.pkl")


def _load(path: str):
    """A backend pickled by ``_store`` in the user's own cache directory, or None."""
    if not disk_caches_enabled() or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as file:
            return pickle.load(file)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None


def _store(path: str, backend) -> None:
    """Pickle ``backend`` ((label, backend) pair) to ``path``, first building what
    its ``prepare_for_disk`` says the pickle should keep."""
    if not disk_caches_enabled():
        return
    prepare = getattr(backend[1], "prepare_for_disk", None)
    if prepare is not None:
        prepare()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "wb") as file:
            pickle.dump(backend, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except OSError:
        pass


def _sentencepiece_filter(processor: Any, vocab_size: Optional[int], special_ids: frozenset):
    from grammask.canonical.sentencepiece_bpe import SentencePieceBPE, is_bpe_processor

    key = ("sentencepiece", id(processor), vocab_size, special_ids)
    built = _BUILT.get(key)
    if built is None:
        if not is_bpe_processor(processor):
            return None
        backend = SentencePieceBPE(processor, vocab_size or 0, special_ids)
        built = _BUILT[key] = CanonicalFilter("sentencepiece-bpe", backend)
    return built


def _is_bert_wordpiece(tokenizer: Any) -> bool:
    """WordPiece with BERT's normalizer and pre-tokenizer: the configuration ``wordpiece`` models."""
    if type(getattr(tokenizer, "model", None)).__name__ != "WordPiece":
        return False
    config = json.loads(tokenizer.to_str())
    return ((config.get("model") or {}).get("type") == "WordPiece"
            and (config.get("normalizer") or {}).get("type") == "BertNormalizer"
            and (config.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer")


def _wordpiece_filter(tokenizer: Any, vocab_size: Optional[int], special_ids: frozenset):
    from grammask.canonical.wordpiece import WordPiece

    key = ("wordpiece", hashlib.sha256(tokenizer.to_str().encode("utf-8")).hexdigest(), vocab_size, special_ids)
    built = _BUILT.get(key)
    if built is None:
        built = _BUILT[key] = CanonicalFilter("wordpiece", WordPiece(tokenizer, vocab_size or 0, special_ids))
    return built


def filter_for_tokenizer(tokenizer: Any, vocab_size: Optional[int] = None,
                         special_ids: frozenset = frozenset()) -> Optional[CanonicalFilter]:
    if hasattr(tokenizer, "id_to_piece") and hasattr(tokenizer, "get_score"):
        return _sentencepiece_filter(tokenizer, vocab_size, special_ids)
    if hasattr(tokenizer, "_mergeable_ranks") and hasattr(tokenizer, "_pat_str"):
        built = _bpe_filter(_tiktoken_digest(tokenizer), lambda: tiktoken_rules(tokenizer), vocab_size,
                            special_ids)
        # tiktoken emits a token for a whole pre-token even when merges cannot
        # build it; the BPE backend never allows such a token, so a vocabulary
        # that has one (trained ones do not: cl100k, tekken, Qwen2) gets no filter.
        if built is not None and len(built.backend.merges.unreachable_ids):
            return None
        return built
    backend_tokenizer = getattr(tokenizer, "backend_tokenizer", None)
    if backend_tokenizer is not None:
        tokenizer = backend_tokenizer
    if hasattr(tokenizer, "to_str"):
        if _is_bert_wordpiece(tokenizer):
            return _wordpiece_filter(tokenizer, vocab_size, special_ids)
        return _bpe_filter(_tokenizers_digest(tokenizer), lambda: tokenizers_rules(tokenizer), vocab_size,
                           special_ids)
    return None
