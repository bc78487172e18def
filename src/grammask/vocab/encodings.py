"""String encodings that tokenizers use for token bytes, and how to undo them.

What it computes
    ``byte_level_to_bytes``  GPT-2's byte-to-unicode map reversed: byte-level BPE
                             vocabularies (GPT-2, Llama-3, Qwen2, SmolLM2) spell
                             each byte 0-255 as one printable code point
                             (``Ġ`` = space, ``Ċ`` = newline, printable ASCII as
                             itself).  Radford et al. 2019, ``bytes_to_unicode``.
    ``sentencepiece_piece_to_bytes``  SentencePiece pieces: ``▁`` (U+2581) is a
                             space, ``<0xNN>`` byte-fallback pieces are one byte.
    ``END_TOKEN_NAMES``      spellings of end-of-sequence and end-of-turn tokens
                             used to find EOS ids when a tokenizer does not say.

Invariants
    ``byte_level_to_bytes`` inverts the map exactly on strings over its 256
    code points; any other string is taken as UTF-8 text.
"""

from __future__ import annotations

import re
from typing import Optional

SENTENCEPIECE_SPACE = "\u2581"
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")

END_TOKEN_NAMES = (
    "</s>", "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<|eom_id|>", "<|im_end|>",
    "<end_of_turn>", "<eos>", "<|end|>", "<|eot|>", "<|return|>", "<|end\u2581of\u2581sentence|>",
    "[SEP]",
)
"""Token spellings taken as EOS when the caller gives no ``eos_token_ids``:
the end-of-text token and the end-of-turn tokens of chat models (Llama-3
``<|eot_id|>``/``<|eom_id|>``, ChatML ``<|im_end|>``, Gemma ``<end_of_turn>``,
Phi-3 ``<|end|>``); ``[SEP]`` ends a BERT sequence."""


def _gpt2_bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> code point map (printable bytes map to themselves)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
                 + list(range(ord("\xae"), ord("\xff") + 1)))
    code_points = list(printable)
    n_shifted = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            code_points.append(256 + n_shifted)
            n_shifted += 1
    return {byte: chr(code_point) for byte, code_point in zip(printable, code_points)}


BYTE_TO_UNICODE: dict[int, str] = _gpt2_bytes_to_unicode()
UNICODE_TO_BYTE: dict[str, int] = {char: byte for byte, char in BYTE_TO_UNICODE.items()}


# str.translate table: map characters -> the code point equal to their byte (then
# latin-1 encodes them as that byte); code points <= 255 outside the map -> a
# character latin-1 cannot encode, so such strings fall back to UTF-8.
_OUTSIDE_MAP = "\U00010000"
_BYTE_LEVEL_TABLE = {code_point: _OUTSIDE_MAP for code_point in range(256)}
_BYTE_LEVEL_TABLE.update({ord(char): byte for char, byte in UNICODE_TO_BYTE.items()})


def byte_level_to_bytes(token: str) -> bytes:
    """Undo the GPT-2 byte map.  A token with a character outside the map is not
    byte-level (an added token written as text): its UTF-8 is returned, as the
    ``tokenizers`` ByteLevel decoder does."""
    try:
        return token.translate(_BYTE_LEVEL_TABLE).encode("latin-1")
    except UnicodeEncodeError:
        return token.encode("utf-8", errors="surrogateescape")


def byte_piece_value(piece: str) -> Optional[int]:
    """The byte of a ``<0xNN>`` byte-fallback piece, else None."""
    match = _BYTE_PIECE.fullmatch(piece)
    return int(match.group(1), 16) if match else None


def sentencepiece_piece_to_bytes(piece: str) -> bytes:
    """``<0xNN>`` -> one byte; otherwise ``▁`` -> space and UTF-8."""
    byte = byte_piece_value(piece)
    if byte is not None:
        return bytes([byte])
    return piece.replace(SENTENCEPIECE_SPACE, " ").encode("utf-8")
