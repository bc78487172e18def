"""A small GGUF metadata reader for the tokenizer, and ``Vocabulary.from_gguf``.

What it computes
    ``read_gguf_metadata(path)`` parses only the key/value header of a GGUF
    file (llama.cpp's model format, ``ggml/docs/gguf.md``) through an mmap, so
    the tensors are never read: about 0.2 s for a 150k vocabulary, where the
    ``gguf`` package's reader takes 10-40 s.  ``GGUFTokenizerMetadata`` keeps
    what the vocabulary and the canonical filter need (tokens, token types,
    scores, merges, model and pre-tokenizer names, special ids).

File layout (all little-endian; big-endian files are detected by the version)
    magic ``GGUF`` | u32 version (2 or 3) | u64 n_tensors | u64 n_kv |
    n_kv x (string key | u32 value type | value) | tensor infos | data.
    A string is u64 length + UTF-8 bytes; an array is u32 element type +
    u64 count + elements.  Value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32,
    5 i32, 6 f32, 7 bool, 8 string, 9 array, 10 u64, 11 i64, 12 f64.

Token bytes (as llama.cpp's ``token_to_piece`` renders them)
    Token type (``tokenizer.ggml.token_type``): 1 normal, 2 unknown,
    3 control, 4 user-defined, 5 unused, 6 byte.  Unknown, control and unused
    tokens are special.  User-defined tokens are their text as UTF-8.  Normal
    tokens depend on ``tokenizer.ggml.model``: ``gpt2`` (byte-level BPE) undoes
    GPT-2's byte map; ``llama`` (SentencePiece BPE), ``t5`` (Unigram) and
    ``bert`` (WordPiece, where llama.cpp's converter already wrote word-initial
    tokens with ``▁`` and dropped ``##``, which is grammask's WordPiece
    convention) turn ``▁`` into a space; byte tokens ``<0xNN>`` are one byte.

EOS
    ``tokenizer.ggml.eos_token_id``, ``eot_token_id``, ``eom_token_id`` and
    every control token spelled as in ``encodings.END_TOKEN_NAMES``: the same
    end-of-generation set llama.cpp builds.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from grammask.errors import VocabularyError
from grammask.vocab.encodings import (
    END_TOKEN_NAMES,
    SENTENCEPIECE_SPACE,
    byte_level_to_bytes,
    byte_piece_value,
)

GGUF_MAGIC = b"GGUF"
TOKEN_TYPE_NORMAL, TOKEN_TYPE_UNKNOWN, TOKEN_TYPE_CONTROL = 1, 2, 3
TOKEN_TYPE_USER_DEFINED, TOKEN_TYPE_UNUSED, TOKEN_TYPE_BYTE = 4, 5, 6
_SPECIAL_TOKEN_TYPES = (TOKEN_TYPE_UNKNOWN, TOKEN_TYPE_CONTROL, TOKEN_TYPE_UNUSED)
_SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
                   10: "Q", 11: "q", 12: "d"}
_NUMPY_TYPES = {0: "u1", 1: "i1", 2: "u2", 3: "i2", 4: "u4", 5: "i4", 6: "f4", 7: "u1",
                10: "u8", 11: "i8", 12: "f8"}
_TYPE_STRING, _TYPE_ARRAY = 8, 9
_MODEL_KINDS = {"gpt2": "byte_level", "llama": "sentencepiece", "t5": "sentencepiece",
                "bert": "sentencepiece"}
_ID_KEYS = ("bos", "eos", "eot", "eom", "unknown", "padding", "seperator", "mask")


@dataclass
class GGUFTokenizerMetadata:
    """Tokenizer metadata of a GGUF file (arrays in file order, ids by token id)."""

    path: str
    version: int
    model: str                                  # tokenizer.ggml.model: gpt2, llama, bert, t5, ...
    pre: Optional[str]                          # tokenizer.ggml.pre: pre-tokenizer name (llama-bpe, smollm, ...)
    tokens: list[str]                           # tokenizer.ggml.tokens
    token_types: Optional[np.ndarray]           # int32[n_tokens], or None when absent
    scores: Optional[np.ndarray]                # float32[n_tokens], or None
    merges: Optional[list[str]]                 # "left right" pairs in priority order, or None
    special_ids: dict[str, int] = field(default_factory=dict)   # bos, eos, eot, ... -> id
    other: dict[str, Any] = field(default_factory=dict)         # every other scalar or string key

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


class _Cursor:
    """Sequential reader over a buffer with a fixed byte order."""

    __slots__ = ("buffer", "position", "order", "path")

    def __init__(self, buffer: Any, order: str, path: str):
        self.buffer = buffer
        self.position = 0
        self.order = order
        self.path = path

    def fail(self, what: str) -> VocabularyError:
        return VocabularyError(f"{self.path}: malformed GGUF file ({what} at byte {self.position})")

    def scalar(self, fmt: str) -> Any:
        try:
            (value,) = struct.unpack_from(self.order + fmt, self.buffer, self.position)
        except struct.error:
            raise self.fail("truncated value") from None
        self.position += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.scalar("Q")
        end = self.position + length
        if end > len(self.buffer):
            raise self.fail(f"string of {length} bytes past the end")
        data = self.buffer[self.position:end]
        self.position = end
        return data.decode("utf-8", errors="surrogateescape")

    def value(self, value_type: int, keep: bool) -> Any:
        """Read one value; arrays are returned only when ``keep`` (else skipped)."""
        if value_type in _SCALAR_FORMATS:
            return self.scalar(_SCALAR_FORMATS[value_type])
        if value_type == _TYPE_STRING:
            return self.string()
        if value_type != _TYPE_ARRAY:
            raise self.fail(f"unknown value type {value_type}")
        element_type = self.scalar("I")
        count = self.scalar("Q")
        if element_type in _NUMPY_TYPES:
            dtype = np.dtype(_NUMPY_TYPES[element_type]).newbyteorder(self.order)
            n_bytes = count * dtype.itemsize
            if self.position + n_bytes > len(self.buffer):
                raise self.fail(f"array of {count} elements past the end")
            array = None
            if keep:
                array = np.frombuffer(self.buffer, dtype=dtype, count=count, offset=self.position).copy()
            self.position += n_bytes
            return array
        if element_type == _TYPE_STRING:
            return self._string_array(count, keep)
        return [self.value(element_type, keep) for _ in range(count)]

    def _string_array(self, count: int, keep: bool) -> Optional[list[str]]:
        buffer, position, size = self.buffer, self.position, len(self.buffer)
        unpack_length = struct.Struct(self.order + "Q").unpack_from
        strings: list[str] = []
        append = strings.append
        for _ in range(count):
            if position + 8 > size:
                self.position = position
                raise self.fail("truncated string array")
            (length,) = unpack_length(buffer, position)
            position += 8
            end = position + length
            if end > size:
                self.position = position
                raise self.fail("string past the end")
            if keep:
                append(buffer[position:end].decode("utf-8", errors="surrogateescape"))
            position = end
        self.position = position
        return strings if keep else None


_KEPT_ARRAYS = ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.scores",
                "tokenizer.ggml.merges")


def read_gguf_metadata(path: Any) -> GGUFTokenizerMetadata:
    """Parse the key/value header of a GGUF file; tensors are not touched."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as file:
            if os.fstat(file.fileno()).st_size == 0:
                raise VocabularyError(f"{path}: not a GGUF file (empty)")
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return _parse(mapped, path)
    except (OSError, ValueError) as error:
        if isinstance(error, VocabularyError):
            raise
        raise VocabularyError(f"{path}: cannot read GGUF file ({error})") from None


def _parse(buffer: Any, path: str) -> GGUFTokenizerMetadata:
    if buffer[:4] != GGUF_MAGIC:
        raise VocabularyError(f"{path}: not a GGUF file (magic {bytes(buffer[:4])!r})")
    if len(buffer) < 24:
        raise VocabularyError(f"{path}: malformed GGUF file (header truncated at {len(buffer)} bytes)")
    (version,) = struct.unpack_from("<I", buffer, 4)
    order = "<"
    if version & 0xFFFF == 0:
        order = ">"
        (version,) = struct.unpack_from(">I", buffer, 4)
    if version not in (2, 3):
        raise VocabularyError(f"{path}: GGUF version {version} is not supported (2 and 3 are)")
    cursor = _Cursor(buffer, order, path)
    cursor.position = 8
    cursor.scalar("Q")                     # n_tensors: the tensors are not read
    n_kv = cursor.scalar("Q")
    arrays: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for _ in range(n_kv):
        key = cursor.string()
        value_type = cursor.scalar("I")
        keep = key in _KEPT_ARRAYS
        value = cursor.value(value_type, keep)
        if keep:
            arrays[key] = value
        elif value_type != _TYPE_ARRAY:
            scalars[key] = value
    tokens = arrays.get("tokenizer.ggml.tokens")
    if not tokens:
        raise VocabularyError(f"{path}: the GGUF file has no tokenizer.ggml.tokens")
    token_types = arrays.get("tokenizer.ggml.token_type")
    scores = arrays.get("tokenizer.ggml.scores")
    for name, array in (("token_type", token_types), ("scores", scores)):
        if array is not None and len(array) != len(tokens):
            raise VocabularyError(f"{path}: tokenizer.ggml.{name} has {len(array)} entries "
                                  f"for {len(tokens)} tokens")
    special_ids = {}
    for name in _ID_KEYS:
        token_id = scalars.pop(f"tokenizer.ggml.{name}_token_id", None)
        if token_id is not None and 0 <= int(token_id) < len(tokens):
            special_ids[name] = int(token_id)
    return GGUFTokenizerMetadata(
        path=path, version=version,
        model=str(scalars.pop("tokenizer.ggml.model", "")),
        pre=scalars.pop("tokenizer.ggml.pre", None),
        tokens=tokens,
        token_types=token_types.astype(np.int32) if token_types is not None else None,
        scores=scores.astype(np.float32) if scores is not None else None,
        merges=arrays.get("tokenizer.ggml.merges"),
        special_ids=special_ids,
        other=scalars,
    )


def _normal_token_bytes(text: str, encoding: str) -> bytes:
    if encoding == "byte_level":
        return byte_level_to_bytes(text)
    return text.replace(SENTENCEPIECE_SPACE, " ").encode("utf-8", errors="surrogateescape")


def token_bytes_from_gguf(metadata: GGUFTokenizerMetadata) -> tuple[list[Optional[bytes]], list[int]]:
    """(bytes by id, special ids) from GGUF tokenizer metadata (module docstring)."""
    encoding = _MODEL_KINDS.get(metadata.model)
    if encoding is None:
        raise VocabularyError(f"{metadata.path}: tokenizer model {metadata.model!r} is not supported "
                              f"(supported: {', '.join(sorted(_MODEL_KINDS))})")
    n_tokens = metadata.n_tokens
    token_types = (metadata.token_types.tolist() if metadata.token_types is not None
                   else [TOKEN_TYPE_NORMAL] * n_tokens)
    token_bytes: list[Optional[bytes]] = []
    special_ids: list[int] = []
    for token_id, (text, token_type) in enumerate(zip(metadata.tokens, token_types)):
        if token_type in _SPECIAL_TOKEN_TYPES:
            special_ids.append(token_id)
            token_bytes.append(text.encode("utf-8", errors="surrogateescape"))
        elif token_type == TOKEN_TYPE_USER_DEFINED:
            token_bytes.append(text.encode("utf-8", errors="surrogateescape"))
        elif token_type == TOKEN_TYPE_BYTE:
            byte = byte_piece_value(text)
            if byte is None:
                raise VocabularyError(f"{metadata.path}: byte token {token_id} is spelled {text!r}, "
                                      "not <0xNN>", token_id=token_id)
            token_bytes.append(bytes([byte]))
        else:
            token_bytes.append(_normal_token_bytes(text, encoding))
    return token_bytes, special_ids


def gguf_eos_ids(metadata: GGUFTokenizerMetadata, special_ids: list[int]) -> list[int]:
    """End-of-generation ids: eos, eot, eom and control tokens named like an end token."""
    eos_ids = [metadata.special_ids[name] for name in ("eos", "eot", "eom") if name in metadata.special_ids]
    special = set(special_ids)
    names = set(END_TOKEN_NAMES)
    eos_ids += [token_id for token_id, text in enumerate(metadata.tokens)
                if token_id in special and text in names]
    return list(dict.fromkeys(eos_ids))


def vocabulary_from_gguf(cls: type, path: Any, eos_token_ids: Any = None):
    """``Vocabulary.from_gguf``: see the module docstring."""
    metadata = read_gguf_metadata(path)
    token_bytes, special_ids = token_bytes_from_gguf(metadata)
    if eos_token_ids is None:
        eos_token_ids = gguf_eos_ids(metadata, special_ids)
        if not eos_token_ids:
            raise VocabularyError(f"{metadata.path}: no EOS id in the GGUF metadata; pass eos_token_ids=[...]")
    return cls(token_bytes, eos_token_ids, special_ids, tokenizer=None, tokenizer_kind="gguf",
               gguf_metadata=metadata)
