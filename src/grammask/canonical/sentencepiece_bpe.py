"""Canonicality for SentencePiece BPE models with byte fallback (Mistral v1 / v3, Llama-2 style).

What it computes
    SentencePiece BPE normalizes the text (spaces become ``▁``; with a dummy
    prefix a ``▁`` is put in front), splits it into characters and repeatedly
    merges the adjacent pair whose concatenation is a piece of highest score
    (leftmost on ties).  A character that is not a piece never merges and is
    spelled with ``<0xNN>`` byte-fallback tokens, its full UTF-8, one token
    per byte.  So a sequence is canonical iff:

    * the first token starts with ``▁`` (dummy prefix), if the model adds one;
    * every adjacent pair of normal pieces passes the BPE pair test
      (``bpe.MergeTable`` over characters, priority = rank of the merged
      piece's score, never its id);
    * byte tokens come in complete groups, each the UTF-8 of one character
      that is not a piece; such a character blocks merges, so pairs across
      it are free.

    Token bytes follow the Vocabulary convention: ``▁`` read as a space,
    ``<0xNN>`` as the byte NN.  The oracle is ``sp.encode(text)`` of the
    decoded bytes minus the dummy-prefix space.

Data layout
    ``SentencePieceState`` (frozen): ``last_id`` (-1 at the start),
    ``last_is_byte`` (the last token closed a byte-spelled character),
    ``partial`` (bytes of a byte-spelled character still open).
    ``is_piece_char``: bool[0x110000] (single-character normal pieces);
    ``byte_token_ids``: int32[256].  Packed uint32 bitsets (bit t%32 of word
    t//32) of the reachable normal pieces, of those starting with a space,
    of the byte tokens that open a character, and of every id:
    ``allowed_words`` combines them with the compiled pair test
    (``MergeTable.forbidden_words``) instead of building a bool[V] mask.

Fresh tokens
    Outside a byte-spelled character the state after a token depends on the
    token alone (``advance`` keeps nothing of the state before but
    ``partial``), so ``fresh_words`` is every id there: the canonical
    lookahead then keeps its verdicts per grammar state
    (``engine.lookahead``), which repeats inside a string where the
    canonical state does not.

Invariants
    Control, unknown, unused and user-defined pieces are left to the engine
    (never filtered); text spelling a user-defined symbol character by
    character is not prevented (SentencePiece would match the symbol).
    Seeds: docs/design.md section 5; Tran-Thien 2024 (docs/references.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from grammask import bitset
from grammask.canonical.bpe import MergeTable
from grammask.canonical.pretokenizer import N_CODE_POINTS, utf8_completion_range

SPACE_MARK = "\u2581"


@dataclass(frozen=True)
class SentencePieceState:
    last_id: int = -1
    last_is_byte: bool = False
    partial: bytes = b""


def _split_chars(data: bytes) -> list:
    text = data.decode("utf-8")
    return [char.encode("utf-8") for char in text]


class SentencePieceBPE:
    """Backend for ``filter.CanonicalFilter`` over a ``sentencepiece.SentencePieceProcessor`` BPE model."""

    def __init__(self, processor: Any, vocab_size: int = 0, special_ids=frozenset()):
        n_pieces = processor.get_piece_size()
        self.vocab_size = max(vocab_size, n_pieces)
        token_bytes: list = [None] * n_pieces
        self.byte_token_ids = np.full(256, -1, dtype=np.int32)
        never = set(int(i) for i in special_ids)
        scores = {}
        for token_id in range(n_pieces):
            piece = processor.id_to_piece(token_id)
            if processor.is_byte(token_id):
                self.byte_token_ids[int(piece[3:5], 16)] = token_id
            elif processor.is_control(token_id) or processor.is_unknown(token_id) or processor.is_unused(
                    token_id) or _is_user_defined(processor, token_id):
                never.add(token_id)
            else:
                token_bytes[token_id] = piece.replace(SPACE_MARK, " ").encode("utf-8")
                scores[token_bytes[token_id]] = processor.get_score(token_id)
        ranks = {score: rank for rank, score in enumerate(sorted(set(scores.values()), reverse=True))}
        priority_of = {data: ranks[score] for data, score in scores.items()}
        get = priority_of.get

        def pair_rule(left: bytes, right: bytes):
            return get(left + right)

        self.merges = MergeTable(token_bytes, pair_rule, _split_chars)
        self.never_filtered_ids = frozenset(never) | frozenset(range(n_pieces, self.vocab_size))
        self.is_piece_char = np.zeros(N_CODE_POINTS, dtype=bool)
        for data in token_bytes:
            if data is not None:
                text = data.decode("utf-8")
                if len(text) == 1:
                    self.is_piece_char[ord(text)] = True
        first_piece = processor.encode("x", out_type=str)
        self.dummy_prefix = bool(first_piece) and first_piece[0].startswith(SPACE_MARK)
        normal = np.array([data is not None for data in token_bytes] + [False] * (self.vocab_size - n_pieces))
        self.normal_reachable = normal.copy()
        self.normal_reachable[:n_pieces] &= self.merges.reachable
        self.starts_with_space = np.zeros(self.vocab_size, dtype=bool)
        self.starts_with_space[[i for i, d in enumerate(token_bytes) if d is not None and d.startswith(b" ")]] = True
        self.byte_value_of = {int(token_id): value for value, token_id in enumerate(self.byte_token_ids)
                              if token_id >= 0}
        self.byte_starts = np.array([self._opens_unknown(bytes([value])) for value in range(256)])
        n_words = bitset.n_words(self.vocab_size)
        self._normal_words = bitset.from_flags(self.normal_reachable)
        self._first_words = bitset.from_flags(self.normal_reachable & self.starts_with_space)
        byte_start_ids = self.byte_token_ids[self.byte_starts]
        self._byte_start_ids = byte_start_ids[byte_start_ids >= 0]
        self._byte_start_words = bitset.from_ids(self._byte_start_ids, n_words)
        self._all_words = bitset.from_flags(np.ones(self.vocab_size, dtype=bool))

    def _opens_unknown(self, lead: bytes) -> bool:
        """Some character that is not a piece has UTF-8 starting with ``lead``."""
        if len(lead) == 1 and lead[0] < 0x80:
            return not self.is_piece_char[lead[0]]
        span = utf8_completion_range(lead)
        if span is None:
            if len(lead) > 1:
                try:
                    return not self.is_piece_char[ord(lead.decode("utf-8"))]
                except UnicodeDecodeError:
                    return False
            return False
        low, high = span
        chunk = self.is_piece_char[low:high + 1]
        surrogate_low, surrogate_high = max(low, 0xD800), min(high, 0xDFFF)
        n_surrogates = max(0, surrogate_high - surrogate_low + 1)
        return int((~chunk).sum()) > n_surrogates

    # -- backend protocol -------------------------------------------------------
    def initial_state(self) -> SentencePieceState:
        return SentencePieceState()

    def _byte_value(self, token_id: int) -> int:
        return self.byte_value_of.get(token_id, -1)

    def advance(self, state: SentencePieceState, token_id: int) -> SentencePieceState:
        """The state after ``token_id``; a special token (e.g. BOS) starts a fresh text."""
        if token_id in self.never_filtered_ids or not 0 <= token_id < self.vocab_size:
            return SentencePieceState()
        value = self._byte_value(token_id)
        if value >= 0:
            data = state.partial + bytes([value])
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return SentencePieceState(token_id, False, data)
            return SentencePieceState(token_id, True, b"")
        return SentencePieceState(token_id, False, b"")

    def allowed_mask(self, state: SentencePieceState) -> np.ndarray:
        allowed = np.zeros(self.vocab_size, dtype=bool)
        if state.partial:
            for value in range(0x80, 0xC0):
                if self._continues_unknown(state.partial + bytes([value])):
                    allowed[self.byte_token_ids[value]] = True
            return allowed
        if state.last_id < 0:
            if self.dummy_prefix:
                return self.normal_reachable & self.starts_with_space
            allowed[:] = self.normal_reachable
        else:
            allowed[:] = self.normal_reachable
            if not state.last_is_byte:
                allowed[self.merges.forbidden_after(state.last_id)] = False
        allowed[self._byte_start_ids] = True
        return allowed

    def allowed_words(self, state: SentencePieceState, extra: Optional[np.ndarray] = None) -> np.ndarray:
        """``allowed_mask`` as a packed uint32 bitset; ``extra``: bits set in the
        result as well (the filter's never-filtered tokens)."""
        if state.partial:
            words = bitset.from_flags(self.allowed_mask(state))
        elif state.last_id < 0 and self.dummy_prefix:
            words = self._first_words.copy()
        else:
            words = self._normal_words.copy()
            if state.last_id >= 0 and not state.last_is_byte:
                words &= ~self.merges.forbidden_words(state.last_id, len(words))
            words |= self._byte_start_words
        if extra is not None:
            words |= extra
        return words

    def fresh_words(self, state: SentencePieceState):
        """Packed bitset of the tokens t with ``advance(state, t) ==
        advance(initial_state(), t)``: every id outside a byte-spelled
        character, None inside one (see "Fresh tokens")."""
        return None if state.partial else self._all_words

    def _continues_unknown(self, data: bytes) -> bool:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return utf8_completion_range(data) is not None and self._opens_unknown(data)
        return len(text) == 1 and not self.is_piece_char[ord(text)]

    def is_allowed(self, state: SentencePieceState, token_id: int) -> bool:
        if not 0 <= token_id < self.vocab_size:
            return False
        value = self._byte_value(token_id)
        if value >= 0:
            if state.partial:
                return self._continues_unknown(state.partial + bytes([value]))
            return bool(self.byte_starts[value]) and not (state.last_id < 0 and self.dummy_prefix)
        if state.partial or not self.normal_reachable[token_id]:
            return False
        if state.last_id < 0:
            return bool(self.starts_with_space[token_id]) or not self.dummy_prefix
        if state.last_is_byte:
            return True
        return self.merges.pair_allowed(state.last_id, token_id)

    def is_complete(self, state: SentencePieceState) -> bool:
        return not state.partial


def _is_user_defined(processor: Any, token_id: int) -> bool:
    """User-defined symbols (v3's ``[REFERENCE_DOC_i]``...) are matched as whole strings before
    BPE; SentencePiece gives them score 0 while BPE pieces score -rank."""
    return processor.get_score(token_id) == 0.0 and len(processor.id_to_piece(token_id)) > 1


def is_bpe_processor(processor: Any) -> bool:
    """SentencePiece BPE models score normal pieces -rank (integers, decreasing with id);
    unigram models store log-probabilities.  Without protobuf this is how we tell them apart."""
    scores = []
    for token_id in range(processor.get_piece_size()):
        if processor.is_byte(token_id) or processor.is_control(token_id) or processor.is_unknown(token_id) \
                or processor.is_unused(token_id):
            continue
        scores.append(processor.get_score(token_id))
    values = np.asarray(scores, dtype=np.float64)
    if len(values) < 2 or not np.all(values == np.round(values)):
        return False
    return bool(np.mean(np.diff(values) <= 0) > 0.99)
