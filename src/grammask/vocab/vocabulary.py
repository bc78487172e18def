"""Vocabulary: the exact bytes of every token id, the EOS ids and the special ids.

What it computes
    A model's vocabulary seen as bytes: token id -> the exact byte string the
    token adds to the output text.  The grammar engine works on bytes only, so
    every loader (``loaders_hf``, ``loaders_tiktoken``, ``loaders_sentencepiece``,
    ``gguf``, ``loaders_llama``) undoes its tokenizer's string encoding (GPT-2
    byte map, SentencePiece ``▁`` and ``<0xNN>`` byte pieces, WordPiece ``##``)
    before it gets here; the pitfall it avoids is kbnf issue 18 (HF strings
    used as bytes).

Data layout
    ``token_bytes``        a tuple by id of ``bytes`` or ``None`` (id unused);
                           it is also callable: ``vocab.token_bytes(token_id)``
                           returns one entry and checks the id.
    ``eos_token_ids``      tuple of ids, in the order given, without repeats.
    ``special_token_ids``  frozenset; always includes every EOS id.
    ``allowed_text_token_ids``  read-only ``np.int32`` array, ascending: the ids
                           that may appear as text (bytes not None, not empty,
                           not special).
    ``text_token_flags``   ``bytes`` by id: 1 for those same ids, else 0 (the
                           engine's accept tests an id with one index).
    ``tokenizer``, ``tokenizer_kind``  the source object and its kind
                           (``"tokenizers"``, ``"tiktoken"``, ``"sentencepiece"``,
                           ``"gguf"``, ``"llama"`` or ``None``) so the canonical
                           filter can read merges, ranks, scores, pre-tokenizer.
    ``gguf_metadata``      for GGUF vocabularies, the tokenizer metadata
                           (``grammask.vocab.gguf.GGUFTokenizerMetadata``).

Invariants
    * Special ids (control, unknown, unused, added special tokens, EOS) are
      never allowed as text, whatever bytes they carry.
    * Several ids with the same bytes all stay allowed (Mistral's ``<0x5F>``
      and ``_``): nothing here deduplicates.
    * Empty tokens are never allowed as text (they would let the mask loop).
    * The object is immutable; ``fingerprint`` (sha256 hex over the bytes, the
      EOS ids and the special ids) identifies the content and drives equality,
      hashing and the compile cache.
    * Pickling keeps the tokenizer only for kinds whose objects pickle cheaply
      (``tokenizers``, ``tiktoken``, ``sentencepiece``); a ``llama_cpp.Llama``
      is dropped (``tokenizer`` becomes None after unpickling).
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from grammask.errors import VocabularyError

TOKENIZER_KINDS = ("tokenizers", "tiktoken", "sentencepiece", "gguf", "llama", None)
_PICKLED_TOKENIZER_KINDS = ("tokenizers", "tiktoken", "sentencepiece")


class TokenBytesTable(tuple):
    """The vocabulary's bytes by id: a tuple that can also be called with an id.

    ``table[token_id]`` is plain tuple indexing; ``table(token_id)`` checks the
    id and raises ``VocabularyError`` for an id outside the vocabulary.
    """

    __slots__ = ()

    def __call__(self, token_id: int) -> Optional[bytes]:
        if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, bool):
            raise VocabularyError(f"token id must be an int, got {token_id!r}")
        if not 0 <= token_id < len(self):
            raise VocabularyError(
                f"token id {int(token_id)} is outside the vocabulary (size {len(self)})",
                token_id=int(token_id))
        return tuple.__getitem__(self, int(token_id))


def _as_id_tuple(ids: Any, size: int, what: str) -> tuple[int, ...]:
    """Validate a collection of token ids (or one id) and return them, unique, in order."""
    if ids is None:
        return ()
    if isinstance(ids, (int, np.integer)) and not isinstance(ids, bool):
        ids = (ids,)
    try:
        items = list(ids)
    except TypeError:
        raise VocabularyError(f"{what} must be an int or a collection of ints, got {ids!r}") from None
    result: list[int] = []
    seen: set[int] = set()
    for item in items:
        if not isinstance(item, (int, np.integer)) or isinstance(item, bool):
            raise VocabularyError(f"{what}: {item!r} is not an int token id")
        token_id = int(item)
        if not 0 <= token_id < size:
            raise VocabularyError(
                f"{what}: token id {token_id} is outside the vocabulary (size {size})",
                token_id=token_id)
        if token_id not in seen:
            seen.add(token_id)
            result.append(token_id)
    return tuple(result)


class Vocabulary:
    """Token id -> exact bytes, plus EOS and special ids.  See the module docstring."""

    __slots__ = ("token_bytes", "eos_token_ids", "special_token_ids", "allowed_text_token_ids",
                 "text_token_flags", "tokenizer", "tokenizer_kind", "gguf_metadata", "_fingerprint", "_text_ids")

    def __init__(self, token_bytes: Sequence[Optional[bytes]], eos_token_ids: Any,
                 special_token_ids: Iterable[int] = (), *, tokenizer: Any = None,
                 tokenizer_kind: Optional[str] = None, gguf_metadata: Any = None):
        if isinstance(token_bytes, (bytes, str)) or not hasattr(token_bytes, "__len__"):
            raise VocabularyError("token_bytes must be a list of bytes or None, one per token id")
        entries: list[Optional[bytes]] = list(token_bytes)
        if not set(map(type, entries)) <= {bytes, type(None)}:
            for token_id, data in enumerate(entries):
                if data is None or type(data) is bytes:
                    continue
                if not isinstance(data, (bytearray, memoryview, bytes)):
                    raise VocabularyError(
                        f"token {token_id}: bytes expected (or None for an unused id), "
                        f"got {type(data).__name__} {data!r:.60}", token_id=token_id)
                entries[token_id] = bytes(data)
        size = len(entries)
        if size == 0:
            raise VocabularyError("a vocabulary needs at least one token")
        if tokenizer_kind not in TOKENIZER_KINDS:
            raise VocabularyError(f"unknown tokenizer_kind {tokenizer_kind!r}; "
                                  f"expected one of {TOKENIZER_KINDS}")
        eos = _as_id_tuple(eos_token_ids, size, "eos_token_ids")
        if not eos:
            raise VocabularyError("a vocabulary needs at least one EOS token id (eos_token_ids)")
        special = frozenset(_as_id_tuple(special_token_ids, size, "special_token_ids")) | frozenset(eos)

        self.token_bytes = TokenBytesTable(entries)
        self.eos_token_ids = eos
        self.special_token_ids = special
        is_text = np.fromiter((data is not None and len(data) > 0 for data in entries),
                              dtype=bool, count=size)
        is_text[list(special)] = False
        allowed = np.flatnonzero(is_text).astype(np.int32)
        allowed.setflags(write=False)
        self.allowed_text_token_ids = allowed
        self.text_token_flags = is_text.tobytes()
        self.tokenizer = tokenizer
        self.tokenizer_kind = tokenizer_kind
        self.gguf_metadata = gguf_metadata
        self._fingerprint: Optional[str] = None
        self._text_ids: Optional[dict] = None

    # ------------------------------------------------------------------ facts
    @property
    def size(self) -> int:
        """Number of token ids (the logits' length), unused ids included."""
        return len(self.token_bytes)

    def __len__(self) -> int:
        return len(self.token_bytes)

    @property
    def fingerprint(self) -> str:
        """sha256 hex over the token bytes (None distinguished from b""), EOS and special ids."""
        if self._fingerprint is None:
            digest = hashlib.sha256(b"grammask-vocabulary-v1")
            digest.update(struct.pack("<q", self.size))
            # lengths (-1 for None) fix where each token's bytes start and end in the blob
            lengths = np.fromiter((-1 if data is None else len(data) for data in self.token_bytes),
                                  dtype="<i8", count=self.size)
            digest.update(lengths.tobytes())
            digest.update(b"".join(data for data in self.token_bytes if data is not None))
            digest.update(np.asarray(self.eos_token_ids, dtype="<i8").tobytes())
            digest.update(np.asarray(sorted(self.special_token_ids), dtype="<i8").tobytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    def is_special(self, token_id: int) -> bool:
        """True for ids that are never allowed as text (special, control, EOS)."""
        return token_id in self.special_token_ids

    def text_token_id(self, data: bytes) -> Optional[int]:
        """The lowest non-special token id whose bytes are ``data``, or None
        (a dict built on first use)."""
        if self._text_ids is None:
            table = self.token_bytes
            text_ids: dict = {}
            for token_id in self.allowed_text_token_ids.tolist():
                text_ids.setdefault(table[token_id], token_id)
            self._text_ids = text_ids
        return self._text_ids.get(bytes(data))

    def decode_bytes(self, token_ids: Iterable[int]) -> bytes:
        """Concatenate the bytes of ``token_ids`` (special tokens contribute their bytes too)."""
        table = self.token_bytes
        return b"".join(table(int(token_id)) or b"" for token_id in token_ids)

    # -------------------------------------------------------------- identity
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return (f"Vocabulary(size={self.size}, n_text_tokens={len(self.allowed_text_token_ids)}, "
                f"eos_token_ids={self.eos_token_ids}, n_special={len(self.special_token_ids)}, "
                f"tokenizer_kind={self.tokenizer_kind!r})")

    def __reduce__(self):
        tokenizer = self.tokenizer if self.tokenizer_kind in _PICKLED_TOKENIZER_KINDS else None
        return (_rebuild_vocabulary,
                (list(self.token_bytes), self.eos_token_ids, tuple(sorted(self.special_token_ids)),
                 tokenizer, self.tokenizer_kind, self.gguf_metadata))

    # --------------------------------------------------------------- loaders
    @classmethod
    def from_tokenizer(cls, tok: Any, eos_token_ids: Any = None) -> "Vocabulary":
        """From a ``tokenizers.Tokenizer`` or a transformers tokenizer (see ``loaders_hf``)."""
        from grammask.vocab.loaders_hf import vocabulary_from_tokenizer
        return vocabulary_from_tokenizer(cls, tok, eos_token_ids)

    @classmethod
    def from_tiktoken(cls, encoding: Any, eos_token_ids: Any = None) -> "Vocabulary":
        """From a ``tiktoken.Encoding`` (see ``loaders_tiktoken``)."""
        from grammask.vocab.loaders_tiktoken import vocabulary_from_tiktoken
        return vocabulary_from_tiktoken(cls, encoding, eos_token_ids)

    @classmethod
    def from_tekken(cls, path: Any, vocab_size: Optional[int] = None) -> "Vocabulary":
        """From a Mistral ``tekken*.json`` file, through tiktoken (see ``loaders_tiktoken``).

        ``vocab.tokenizer`` is a ``tiktoken.Encoding`` whose ``encode`` returns Mistral's ids.
        """
        from grammask.vocab.loaders_tiktoken import vocabulary_from_tekken
        return vocabulary_from_tekken(cls, path, vocab_size)

    @classmethod
    def from_sentencepiece(cls, model_path_or_processor: Any, eos_token_ids: Any = None) -> "Vocabulary":
        """From a SentencePiece model file or processor (see ``loaders_sentencepiece``)."""
        from grammask.vocab.loaders_sentencepiece import vocabulary_from_sentencepiece
        return vocabulary_from_sentencepiece(cls, model_path_or_processor, eos_token_ids)

    @classmethod
    def from_gguf(cls, path: Any, eos_token_ids: Any = None) -> "Vocabulary":
        """From a GGUF file's tokenizer metadata, without loading tensors (see ``gguf``)."""
        from grammask.vocab.gguf import vocabulary_from_gguf
        return vocabulary_from_gguf(cls, path, eos_token_ids)

    @classmethod
    def from_llama(cls, llm: Any, eos_token_ids: Any = None) -> "Vocabulary":
        """From a ``llama_cpp.Llama`` (see ``loaders_llama``)."""
        from grammask.vocab.loaders_llama import vocabulary_from_llama
        return vocabulary_from_llama(cls, llm, eos_token_ids)


def _rebuild_vocabulary(token_bytes, eos_token_ids, special_token_ids, tokenizer, tokenizer_kind,
                        gguf_metadata) -> Vocabulary:
    return Vocabulary(token_bytes, eos_token_ids, special_token_ids, tokenizer=tokenizer,
                      tokenizer_kind=tokenizer_kind, gguf_metadata=gguf_metadata)
