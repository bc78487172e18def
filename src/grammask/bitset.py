"""Token bitsets and byte sets on the Python side (the Cython side is
``grammask/_core/bitset.pxd``; both describe the same two layouts).

What it computes
    Reads and writes of token masks and byte sets, so no other module spells
    the layouts out: the token ids of a mask, its size, one token's bit,
    per-column flags for logits, and the bytes of a byte set.

Data layout
    Token bitset: a ``uint32`` array of ``n_words(V) = ceil(V / 32)`` words;
    token t is bit ``t % 32`` of word ``t // 32``.  Viewed as int32 it is
    xgrammar's bitmask layout; viewed as bytes, token t is bit ``t % 8`` of
    byte ``t // 8``.

    Byte set: 256 bits as 32 ``bytes``, byte b at bit ``b % 8`` of byte
    ``b // 8`` (what ``EarleyRecognizer.allowed_first_bytes`` and
    ``mask_computer.next_bytes`` return; the same bits as the core's four
    little-endian uint64 words).

Invariants
    Helpers never resize a bitset; ids passed in are in
    ``[0, 32 * len(bits))``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "n_words", "has", "add", "discard", "from_flags", "from_ids", "set_bit_ids", "token_ids",
    "column_flags",
    "byte_set_values", "byte_set_within", "byte_list",
]


def n_words(n_tokens: int) -> int:
    """Words of a token bitset over ``n_tokens`` tokens."""
    return (n_tokens + 31) >> 5


def has(bits: np.ndarray, token_id: int) -> bool:
    """Token ``token_id``'s bit is set."""
    return bool((int(bits[token_id >> 5]) >> (token_id & 31)) & 1)


def add(bits: np.ndarray, token_id: int) -> None:
    """Set token ``token_id``'s bit, in place."""
    bits[token_id >> 5] |= np.uint32(1 << (token_id & 31))


def discard(bits: np.ndarray, token_id: int) -> None:
    """Clear token ``token_id``'s bit, in place."""
    bits[token_id >> 5] &= np.uint32(~(1 << (token_id & 31)) & 0xFFFFFFFF)


def from_flags(flags: np.ndarray) -> np.ndarray:
    """The token bitset of a bool[V] array (token t set where ``flags[t]``)."""
    padded = np.zeros(n_words(len(flags)) * 32, dtype=bool)
    padded[:len(flags)] = flags
    return np.packbits(padded, bitorder="little").view("<u4").astype(np.uint32)


def from_ids(token_ids, n_words: int) -> np.ndarray:
    """A token bitset of ``n_words`` words with the bits of ``token_ids`` set."""
    words = np.zeros(n_words, dtype=np.uint32)
    token_ids = np.asarray(token_ids, dtype=np.int64)
    np.bitwise_or.at(words, token_ids >> 5, np.uint32(1) << (token_ids & 31).astype(np.uint32))
    return words


def set_bit_ids(bits: np.ndarray) -> list:
    """Ids of the set bits of a token bitset, ascending."""
    ids = []
    for word_index in np.flatnonzero(bits).tolist():
        word = int(bits[word_index])
        base = word_index << 5
        while word:
            low = word & -word
            ids.append(base + low.bit_length() - 1)
            word ^= low
    return ids


def token_ids(bits: np.ndarray, n_tokens: int) -> np.ndarray:
    """Sorted int32 array of the set tokens below ``n_tokens``."""
    flags = np.unpackbits(bits.view(np.uint8), bitorder="little")[:n_tokens]
    return np.flatnonzero(flags).astype(np.int32)


def is_empty(bits: np.ndarray) -> bool:
    """No bit is set (``np.count_nonzero``: a third of ``not bits.any()``'s
    time on a 4,000-word bitset, which a mask pays every step)."""
    return np.count_nonzero(bits) == 0


def word_masks(token_ids, n_words: int) -> tuple:
    """``(word index, np.uint32 mask)`` per bitset word holding one of
    ``token_ids``: setting a few known bits is then one OR per word."""
    words: dict = {}
    for token_id in token_ids:
        if 0 <= token_id < n_words * 32:
            words[token_id >> 5] = words.get(token_id >> 5, 0) | (1 << (token_id & 31))
    return tuple((word, np.uint32(mask)) for word, mask in sorted(words.items()))


def column_flags(bits: np.ndarray, n_columns: int, n_tokens: int) -> np.ndarray:
    """bool[n_columns]: True where the column is a token (< ``n_tokens``)
    whose bit is set; padding columns past the vocabulary are False."""
    flags = np.unpackbits(bits.view(np.uint8), bitorder="little").astype(bool)
    allowed = np.zeros(n_columns, dtype=bool)
    n = min(n_tokens, len(flags), n_columns)
    allowed[:n] = flags[:n]
    return allowed


def byte_set_values(byte_set: bytes) -> list:
    """The bytes in a 32-byte byte set, ascending."""
    values = []
    remaining = int.from_bytes(byte_set, "little")
    while remaining:
        low = remaining & -remaining
        values.append(low.bit_length() - 1)
        remaining ^= low
    return values


def byte_set_within(byte_set: bytes, other: bytes) -> bool:
    """Every byte of the 32-byte set ``byte_set`` is in ``other``."""
    return not int.from_bytes(byte_set, "little") & ~int.from_bytes(other, "little")


def byte_list(byte_set: bytes) -> str:
    """Printable list of the bytes in a byte set (for messages)."""
    return ", ".join(repr(bytes([b])) for b in byte_set_values(byte_set)) or "none"
