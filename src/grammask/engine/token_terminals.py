"""Token terminals joined with a vocabulary: precomputed token sets and their steps.

What it computes
    A grammar's token terminals (``grammask.grammar.token_terminals``:
    ``paragraph_token!``, ``any!``) stand in the byte-level recognizer as a
    reserved byte each.  ``TokenTerminals`` turns them into token-level
    steps: where the recognizer can take a reserved byte, the mask gains the
    kind's whole token set (a precomputed bitset, no trie walk); accepting a
    token of that set pushes the reserved byte instead of the token's bytes.
    Tokens that hold a reserved byte never pass through the byte-level path
    (the grammar matches such a byte only as a token terminal).

    Token sets (``token_set``): ``paragraph``: every non-special token whose
    bytes are non-empty UTF-8 without a line break (``\\n`` or ``\\r``), Koo
    et al.'s PARAGRAPH_TOKEN; ``any``: every non-special token with bytes.

Data layout
    Bitsets over the vocabulary (``grammask.bitset``: bit t % 32 of word
    t // 32), one per kind the grammar uses, keyed by its reserved byte, and
    one of the tokens holding any of those bytes; built once per vocabulary
    and kind (``VocabularyTables.token_terminal_bits``), shared read-only.

Invariants
    ``apply`` only changes the mask at states that can take a reserved byte
    or where a token holds one; ``reserved_byte_for`` answers for exactly the
    tokens ``apply`` adds, so accept and the mask agree.  A token that the
    byte-level grammar allows is accepted as bytes (the ordinary path wins,
    as in Koo et al.'s heuristic), so each token has one meaning per state.

Source: Koo, Liu and He, "Automata-based constraints for language model
decoding", section 2.5.1 (terminal labels mapped to precomputed masks).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from grammask import bitset
from grammask.grammar.token_terminals import RESERVED_BYTES

LINE_BREAKS = (b"\n", b"\r")


def token_set(vocab, kind: str) -> np.ndarray:
    """The bitset of the tokens one token terminal of ``kind`` matches."""
    bits = np.zeros(bitset.n_words(vocab.size), dtype=np.uint32)
    for token_id, data in enumerate(vocab.token_bytes):
        if not data or vocab.is_special(token_id):
            continue
        if kind == "paragraph":
            if any(mark in data for mark in LINE_BREAKS):
                continue
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
        bitset.add(bits, token_id)
    return bits


def tokens_holding(vocab, byte: int) -> np.ndarray:
    """The bitset of the tokens whose bytes contain ``byte``."""
    bits = np.zeros(bitset.n_words(vocab.size), dtype=np.uint32)
    needle = bytes([byte])
    for token_id, data in enumerate(vocab.token_bytes):
        if data and needle in data:
            bitset.add(bits, token_id)
    return bits


class TokenTerminals:
    """The token terminals of one compiled grammar (see the module docstring)."""

    def __init__(self, kinds, tables):
        self.sets = {RESERVED_BYTES[kind]: tables.token_terminal_bits(kind) for kind in sorted(kinds)}
        holding = [tables.tokens_holding(byte) for byte in self.sets]
        self.holding_reserved = np.bitwise_or.reduce(holding) if len(holding) > 1 else holding[0]
        self.outside_reserved = ~self.holding_reserved
        self._reserved = bytes(self.sets)

    def stands_for_token(self, byte: int) -> bool:
        """``byte`` is the reserved byte of one of the grammar's token terminals."""
        return byte in self.sets

    def holds_reserved(self, data: bytes) -> bool:
        return any(byte in self.sets for byte in data)

    def _open_bytes(self, recognizer) -> list:
        """The reserved bytes the recognizer can take now."""
        allowed = recognizer.allowed_first_bytes()
        return [byte for byte in self.sets if allowed[byte >> 3] >> (byte & 7) & 1]

    def apply(self, recognizer, bits: np.ndarray) -> None:
        """Turn the byte-level mask in ``bits`` into the token-level one:
        drop tokens holding a reserved byte, add each open terminal's set."""
        np.bitwise_and(bits, self.outside_reserved, out=bits)
        for byte in self._open_bytes(recognizer):
            np.bitwise_or(bits, self.sets[byte], out=bits)

    def reserved_byte_for(self, recognizer, token_id: int) -> Optional[int]:
        """The reserved byte through which ``token_id`` is accepted now (a
        terminal open here whose set holds it), or None."""
        for byte in self._open_bytes(recognizer):
            if bitset.has(self.sets[byte], token_id):
                return byte
        return None
