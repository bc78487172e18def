"""Canonicality for WordPiece (BERT MaxMatch) tokenizers: live trie nodes of the current word.

What it computes
    BERT normalizes (clean text, lowercase, strip accents, spaces around CJK
    characters), splits words at whitespace and around every punctuation
    character, and encodes each word greedily: the longest vocabulary entry
    at the word start, then the longest ``##`` entry at each following
    position.  With grammask's WordPiece bytes (a word-initial token is
    ``b" " + token``, ``##x`` is ``b"x"``; see ``vocab/loaders_hf.py``) a
    sequence is canonical iff

    * every token is a fixed point of the normalizer, a word-initial token is
      one pre-token word (a single punctuation or CJK character, or a run of
      other non-space characters) and a ``##`` token continues a word of the
      latter kind with such characters (no word over ``max_input_chars_per_word``);
    * greedy matching chose each token: no vocabulary entry (of the same
      kind, initial or ``##``) starting where a token starts runs *past* that
      token's end inside the word.

    Last-token dependence fails here ({a, abc, ##b, ##c}: a ##b and ##b ##c
    are fine, a ##b ##c is not), so the state keeps, for each token of the
    current word, the trie node reached by reading the word from that token's
    start (Song et al. 2021, Fast WordPiece; Cognetta and Okazaki section
    5.1), as long as the node can still grow into an entry.  A ``##`` token
    is forbidden iff, from one of those live nodes, a prefix of it completes
    an entry: the ## tokens starting with the missing suffix of any entry
    below a live node (a contiguous range of the sorted ## spellings).

Data layout
    Two tries (initial entries, ``##`` entries) as ``node_children``
    (list of dicts char -> node) and ``node_is_entry`` (bool list).
    ``WordPieceState`` (frozen): ``last_id``, ``word_kind`` (0 no word yet,
    1 open word, 2 closed single-character word), ``word_length`` (chars),
    ``live`` (tuple of (trie, node) pairs, trie 0 = initial, 1 = ``##``).

Fresh tokens
    A word-initial token (and an id without text) starts its state afresh,
    and outside an open word so does a ``##`` token: ``fresh_words`` gives
    these as a packed bitset (``_initial_words``, or every id), so the
    canonical lookahead keeps their verdicts per grammar state
    (``engine.lookahead``).

Invariants
    Every word ends when the text ends, so ``is_complete`` holds for every
    state reached through allowed tokens.  Special tokens are never filtered.
"""

from __future__ import annotations

import bisect
import json
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

from grammask import bitset

INITIAL, CONTINUATION = 0, 1


@dataclass(frozen=True)
class WordPieceState:
    last_id: int = -1
    word_kind: int = 0
    word_length: int = 0
    live: tuple = ()


def is_bert_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_bert_cjk(char: str) -> bool:
    code = ord(char)
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F or 0x2B820 <= code <= 0x2CEAF
            or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F)


def _is_space(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


class _Trie:
    def __init__(self):
        self.children: list = [{}]
        self.is_entry: list = [False]

    def insert(self, text: str) -> None:
        node = 0
        for char in text:
            child = self.children[node].get(char)
            if child is None:
                child = len(self.children)
                self.children.append({})
                self.is_entry.append(False)
                self.children[node][char] = child
            node = child
        self.is_entry[node] = True

    def entry_suffixes(self, node: int) -> list:
        """Suffixes p (non-empty) such that node + p is an entry."""
        out = []
        stack = [(node, "")]
        while stack:
            current, suffix = stack.pop()
            for char, child in self.children[current].items():
                if self.is_entry[child]:
                    out.append(suffix + char)
                stack.append((child, suffix + char))
        return out


class WordPiece:
    """Backend for ``filter.CanonicalFilter`` over a ``tokenizers`` WordPiece tokenizer."""

    def __init__(self, tokenizer: Any, vocab_size: int = 0, special_ids=frozenset()):
        config = json.loads(tokenizer.to_str())
        model = config["model"]
        prefix = model.get("continuing_subword_prefix", "##")
        self.max_word_chars = int(model.get("max_input_chars_per_word", 100))
        vocab: dict = model["vocab"]
        added = {entry["id"] for entry in config.get("added_tokens", [])}
        self.vocab_size = max([vocab_size, max(vocab.values()) + 1] + [i + 1 for i in added])
        normalizer = tokenizer.normalizer
        self.tries = (_Trie(), _Trie())
        self.token_text: list = [None] * self.vocab_size
        self.token_kind = np.full(self.vocab_size, -1, dtype=np.int8)
        self.word_initial_ok = np.zeros(self.vocab_size, dtype=bool)
        self.continuation_ok = np.zeros(self.vocab_size, dtype=bool)
        self.single_char_word = np.zeros(self.vocab_size, dtype=bool)
        never = set(int(i) for i in special_ids) | added
        for token, token_id in vocab.items():
            if token_id in never:
                continue
            kind = CONTINUATION if token.startswith(prefix) and len(token) > len(prefix) else INITIAL
            text = token[len(prefix):] if kind == CONTINUATION else token
            self.tries[kind].insert(text)
            self.token_text[token_id] = text
            self.token_kind[token_id] = kind
            if normalizer is not None and normalizer.normalize_str(text).strip(" ") != text:
                continue
            if any(_is_space(char) or unicodedata.category(char) in ("Cc", "Cf") for char in text):
                continue
            splitting = [is_bert_punctuation(char) or is_bert_cjk(char) for char in text]
            if kind == INITIAL:
                if len(text) == 1 and splitting[0]:
                    self.word_initial_ok[token_id] = True
                    self.single_char_word[token_id] = True
                elif not any(splitting):
                    self.word_initial_ok[token_id] = len(text) <= self.max_word_chars
            elif not any(splitting):
                self.continuation_ok[token_id] = True
        self.never_filtered_ids = frozenset(never) | frozenset(
            i for i in range(self.vocab_size) if self.token_text[i] is None)
        continuation_ids = [i for i in range(self.vocab_size) if self.continuation_ok[i]]
        continuation_ids.sort(key=lambda i: self.token_text[i])
        self.sorted_continuation_ids = np.asarray(continuation_ids, dtype=np.int64)
        self.sorted_continuation_texts = [self.token_text[i] for i in continuation_ids]
        self.token_lengths = np.asarray([len(t) if t is not None else 0 for t in self.token_text], dtype=np.int64)
        self._suffix_cache: dict = {}
        self._initial_words = bitset.from_flags(self.token_kind != CONTINUATION)
        self._all_words = bitset.from_flags(np.ones(self.vocab_size, dtype=bool))

    # -- helpers ------------------------------------------------------------
    def _walk(self, trie: int, node: int, text: str):
        """(reached an entry past the start, final node or -1 if it fell off the trie)."""
        children = self.tries[trie].children
        is_entry = self.tries[trie].is_entry
        for char in text:
            node = children[node].get(char, -1)
            if node < 0:
                return False, -1
            if is_entry[node]:
                return True, node
        return False, node

    def _node_of(self, trie: int, text: str) -> int:
        """Trie node spelling ``text`` (an entry, so it exists)."""
        node = 0
        children = self.tries[trie].children
        for char in text:
            node = children[node][char]
        return node

    def _forbidden_by(self, trie: int, node: int) -> np.ndarray:
        """## token ids that would complete an entry below ``node``."""
        key = (trie, node)
        found = self._suffix_cache.get(key)
        if found is None:
            texts = self.sorted_continuation_texts
            chunks = []
            for suffix in self.tries[trie].entry_suffixes(node):
                start = bisect.bisect_left(texts, suffix)
                end = bisect.bisect_left(texts, suffix + "\U0010ffff")
                if end > start:
                    chunks.append(self.sorted_continuation_ids[start:end])
            found = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
            self._suffix_cache[key] = found
        return found

    # -- backend protocol -----------------------------------------------------
    def initial_state(self) -> WordPieceState:
        return WordPieceState()

    def is_allowed(self, state: WordPieceState, token_id: int) -> bool:
        if not 0 <= token_id < self.vocab_size:
            return False
        if self.word_initial_ok[token_id]:
            return True
        if not self.continuation_ok[token_id] or state.word_kind != 1:
            return False
        text = self.token_text[token_id]
        if state.word_length + len(text) > self.max_word_chars:
            return False
        return not any(self._walk(trie, node, text)[0] for trie, node in state.live)

    def allowed_mask(self, state: WordPieceState) -> np.ndarray:
        allowed = self.word_initial_ok.copy()
        if state.word_kind == 1:
            continuation = self.continuation_ok.copy()
            for trie, node in state.live:
                continuation[self._forbidden_by(trie, node)] = False
            continuation &= self.token_lengths <= self.max_word_chars - state.word_length
            allowed |= continuation
        return allowed

    def advance(self, state: WordPieceState, token_id: int) -> WordPieceState:
        if not 0 <= token_id < self.vocab_size or self.token_text[token_id] is None:
            return WordPieceState()
        text = self.token_text[token_id]
        kind = int(self.token_kind[token_id])
        live = []
        length = len(text)
        if kind == CONTINUATION and state.word_kind == 1:
            length += state.word_length
            for trie, node in state.live:
                hit, reached = self._walk(trie, node, text)
                if not hit and reached >= 0 and self.tries[trie].children[reached]:
                    live.append((trie, reached))
        own_node = self._node_of(kind, text)
        if self.tries[kind].children[own_node]:
            live.append((kind, own_node))
        word_kind = 2 if self.single_char_word[token_id] else 1
        return WordPieceState(token_id, word_kind, length, tuple(live))

    def fresh_words(self, state: WordPieceState) -> np.ndarray:
        """Packed bitset of the tokens t with ``advance(state, t) ==
        advance(initial_state(), t)`` (see "Fresh tokens")."""
        return self._initial_words if state.word_kind == 1 else self._all_words

    def is_complete(self, state: WordPieceState) -> bool:
        return True
