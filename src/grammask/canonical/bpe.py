"""Merge trees, spines and the adjacent-pair canonicality test of byte-pair encoding.

What it computes
    For a BPE vocabulary given as token bytes plus a *merge rule*
    (``pair_rule(left_bytes, right_bytes) -> priority | None``, lower priority
    merges first, ties go to the leftmost pair), ``MergeTable`` derives each
    token's merge tree by running BPE on the token's own bytes, and answers:

    * ``pair_allowed(t1, t2)``: BPE(bytes(t1) + bytes(t2)) == [t1, t2];
    * ``forbidden_after(t1)``: every t2 for which that fails (sorted int32);
    * ``forbidden_words(t1, n_words)``: the same set as a packed uint32
      bitset, from the compiled spine walk (``_bpe_pairs``), the
      per-step path (a few microseconds; ``forbidden_after`` is its numpy
      reference).

    Pair test (Tran-Thien 2024, Algorithm 3; Vieira et al. 2025; Berglund et
    al.): walking the *right spine* of t1 (t1, its right child, that child's
    right child, ...) and the *left spine* of t2, the pair conflicts iff some
    spine nodes r, l can merge with priority q such that q < priority of r's
    parent merge inside t1 (strict: on a tie the parent, to the left, wins)
    and q <= priority of l's parent merge inside t2 (on a tie the crossing
    merge, to the left, wins).  The whole token is its own spine root with an
    infinite parent priority.  Priorities come from ranks / merge lists /
    scores, never from token ids.

Data layout
    Per token id: ``merge_priority`` (int64, priority of the merge that builds
    the token, ``NO_PRIORITY`` for base symbols and unreachable tokens),
    ``left_child`` / ``right_child`` (int32, -1 for base symbols),
    ``reachable`` (bool: BPE on the token's bytes yields the token).
    Crossing merges, grouped by left operand: ``merge_offsets[r]..[r+1]`` into
    ``merge_right`` (right operand id) and ``merge_priorities`` (sorted
    ascending within each group).  Left-spine membership, grouped by the
    spine node l: ``spine_offsets[l]..[l+1]`` into ``spine_tokens`` (tokens
    whose left spine holds l) and ``spine_parent_priorities`` (priority of
    l's parent inside that token, ascending; ``NO_PRIORITY`` when l is the
    token itself).  Memory is O(sum of spine lengths + number of merges), not
    O(V^2): forbidden sets are derived per step and cached by the caller
    (16 MB of arrays for tekken's 131k tokens).

Build (about 0.5 s for 131k tokens)
    ``enumerate_cuts`` (compiled) lists every cut of every token's bytes into
    two token byte strings; the merge rule prices each cut once (these are
    the candidate merges); ``bpe_last_merges`` (compiled) runs BPE over token
    ids on every token's base symbols with those merges and keeps its last
    merge.  Exact because each rule joins two token byte strings into a token
    (tiktoken ranks of the concatenation, merge lists of vocabulary entries,
    SentencePiece piece scores), so BPE over bytes never holds a non-token
    piece; tokens whose base symbols are not all tokens run the reference
    ``bpe_merge`` over bytes.  The spine index is built level by level with
    numpy.  The merge rule and the bytes -> id dict are dropped after the
    build.

Invariants
    A token's children are the operands of the last merge BPE makes on its
    own bytes; unreachable tokens (BPE of their bytes is not the token; e.g.
    588 in Llama-3.2's merge list, none in cl100k) are in ``unreachable_ids``
    and in every ``forbidden_after`` result, since BPE never emits them.
    ``pair_allowed`` (compiled binary searches along the spines) and
    ``forbidden_after`` (vectorized over the index) must agree; tests check
    both against brute force.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from grammask import bitset
from grammask.canonical._bpe_pairs import SpineIndex, bpe_last_merges, enumerate_cuts

NO_PRIORITY = np.iinfo(np.int64).max
"""Priority of 'no parent merge' (the spine root) and of base symbols."""

PairRule = Callable[[bytes, bytes], Optional[int]]

_CHUNK = 1 << 16
"""Candidate merges passed to the merge rule per batch (bounds the build's temporary lists)."""


def bpe_merge(pieces: list, pair_rule: PairRule) -> tuple[list, Optional[tuple]]:
    """Run BPE on a list of byte strings.

    Repeatedly merges the adjacent pair of lowest priority (leftmost on ties)
    until no pair merges.  Returns the merged pieces and the last merge made,
    ``(left, right, priority)`` or None.
    """
    parts = list(pieces)
    priorities = [pair_rule(parts[i], parts[i + 1]) for i in range(len(parts) - 1)]
    last_merge = None
    while parts:
        best_index = -1
        best = None
        for index, priority in enumerate(priorities):
            if priority is not None and (best is None or priority < best):
                best = priority
                best_index = index
        if best_index < 0:
            break
        last_merge = (parts[best_index], parts[best_index + 1], best)
        parts[best_index:best_index + 2] = [parts[best_index] + parts[best_index + 1]]
        del priorities[best_index]
        if best_index > 0:
            priorities[best_index - 1] = pair_rule(parts[best_index - 1], parts[best_index])
        if best_index < len(parts) - 1:
            priorities[best_index] = pair_rule(parts[best_index], parts[best_index + 1])
    return parts, last_merge


_SPLIT_PROBE = b"ab \xc3\xa9\xe2\x82\xac\xf0\x9f\x8e\x89\xff\x80z"


def _splits_into_bytes(split_base: Callable[[bytes], list]) -> bool:
    """Whether ``split_base`` cuts data into single bytes (byte-level BPE), judged on a probe mixing
    ASCII, multi-byte UTF-8 and invalid bytes."""
    try:
        return list(split_base(_SPLIT_PROBE)) == [_SPLIT_PROBE[i:i + 1] for i in range(len(_SPLIT_PROBE))]
    except (UnicodeDecodeError, ValueError):
        return False


def _ranges_to_indices(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenate ``arange(s, e)`` for each (s, e) pair, vectorized."""
    lengths = ends - starts
    keep = lengths > 0
    starts, lengths = starts[keep], lengths[keep]
    if len(starts) == 0:
        return np.zeros(0, dtype=np.int64)
    total = int(lengths.sum())
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return np.arange(total, dtype=np.int64) + offsets


class MergeTable:
    """Merge trees of a BPE vocabulary and the pair test; see the module docstring.

    ``token_bytes[i]`` is token i's bytes (None: unused or special, never
    part of BPE).  ``base_ids`` are the symbols BPE starts from (bytes for
    byte-level BPE, characters for SentencePiece); ``split_base(data)`` cuts a
    token's bytes into those symbols.
    """

    def __init__(self, token_bytes: Sequence[Optional[bytes]], pair_rule: PairRule,
                 split_base: Callable[[bytes], list]):
        self.n_tokens = len(token_bytes)
        self.token_bytes = list(token_bytes)
        self.pair_rule = pair_rule
        self.id_of: dict[bytes, int] = {}
        for token_id, data in enumerate(token_bytes):
            if data is not None and data not in self.id_of:
                self.id_of[data] = token_id
        n = self.n_tokens
        self.merge_priority = np.full(n, NO_PRIORITY, dtype=np.int64)
        self.left_child = np.full(n, -1, dtype=np.int32)
        self.right_child = np.full(n, -1, dtype=np.int32)
        self.reachable = np.zeros(n, dtype=bool)
        self._enumerate_merges()
        self._derive_merge_trees(split_base)
        # A child may itself be unreachable only in broken tables; then so is the parent.
        changed = True
        while changed:
            has_children = self.left_child >= 0
            bad = has_children & self.reachable & ~(
                self.reachable[np.maximum(self.left_child, 0)]
                & self.reachable[np.maximum(self.right_child, 0)])
            changed = bool(bad.any())
            self.reachable[bad] = False
        self.unreachable_ids = np.flatnonzero(
            ~self.reachable & np.array([d is not None for d in token_bytes], dtype=bool)
        ).astype(np.int32)
        self._build_merge_index()
        self._build_spine_index()
        # build-only: the rule's own tables and the bytes -> id dict (~10 MB at 131k tokens)
        del self.pair_rule, self.id_of
        self._index()

    # -- construction -------------------------------------------------------
    def _enumerate_merges(self) -> None:
        """Candidate merges: every cut of a token's bytes into two token byte strings that the
        merge rule joins, as (left id, right id, priority, result id) arrays (``_candidate_*``)."""
        cut_tokens, lefts, rights = enumerate_cuts(self.token_bytes, self.id_of)
        token_bytes, rule = self.token_bytes, self.pair_rule
        n_cuts = len(cut_tokens)
        priorities = np.zeros(n_cuts, dtype=np.int64)
        merges = np.zeros(n_cuts, dtype=bool)
        for start in range(0, n_cuts, _CHUNK):
            chunk = [rule(token_bytes[left], token_bytes[right]) for left, right in
                     zip(lefts[start:start + _CHUNK].tolist(), rights[start:start + _CHUNK].tolist())]
            merges[start:start + len(chunk)] = [priority is not None for priority in chunk]
            priorities[start:start + len(chunk)] = [0 if priority is None else priority for priority in chunk]
        id_of = self.id_of
        self._candidate_left = lefts[merges]
        self._candidate_right = rights[merges]
        self._candidate_priority = priorities[merges]
        first_ids = np.asarray([id_of[token_bytes[t]] for t in np.unique(cut_tokens).tolist()], dtype=np.int32)
        first_of = np.zeros(self.n_tokens, dtype=np.int32)
        first_of[np.unique(cut_tokens)] = first_ids
        self._candidate_result = first_of[cut_tokens[merges]]

    def _derive_merge_trees(self, split_base: Callable[[bytes], list]) -> None:
        """Children and merge priority of every token: the last merge BPE makes on its own bytes.

        Runs BPE over ids (``_bpe_pairs.bpe_last_merges``) on the
        candidate merges; exact because every rule joins two token byte
        strings into a token (tiktoken ranks of the concatenation, merge lists
        of vocabulary entries, SentencePiece piece scores), so BPE on bytes
        never holds a piece that is not a token.  A token whose base symbols
        are not all tokens runs the reference ``bpe_merge`` over bytes."""
        id_of = self.id_of
        first = [token_id for token_id, data in enumerate(self.token_bytes)
                 if data is not None and id_of.get(data) == token_id]
        datas = [self.token_bytes[token_id] for token_id in first]
        if _splits_into_bytes(split_base):
            byte_ids = np.asarray([id_of.get(bytes([value]), -1) for value in range(256)], dtype=np.int32)
            lengths = np.fromiter((len(data) for data in datas), dtype=np.int64, count=len(datas))
            pieces = byte_ids[np.frombuffer(b"".join(datas), dtype=np.uint8)]
        else:
            bases = [split_base(data) for data in datas]
            lengths = np.fromiter((len(base) for base in bases), dtype=np.int64, count=len(bases))
            pieces = np.asarray([id_of.get(piece, -1) for base in bases for piece in base], dtype=np.int32)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        first_array = np.asarray(first, dtype=np.int64)
        owner = np.repeat(np.arange(len(first)), lengths)
        missing = np.bincount(owner[pieces < 0], minlength=len(first)) > 0
        single = (lengths == 1) & ~missing
        self.reachable[first_array[single]] = True
        multi = np.flatnonzero((lengths > 1) & ~missing)
        piece_index = _ranges_to_indices(offsets[multi], offsets[multi + 1])
        multi_offsets = np.concatenate(([0], np.cumsum(lengths[multi]))).astype(np.int32)
        final, last_left, last_right, last_priority = bpe_last_merges(
            multi_offsets, np.ascontiguousarray(pieces[piece_index], dtype=np.int32),
            self._candidate_left, self._candidate_right, self._candidate_priority, self._candidate_result)
        tokens = first_array[multi]
        built = (final == tokens) & (last_left >= 0)
        self.merge_priority[tokens[built]] = last_priority[built]
        self.left_child[tokens[built]] = last_left[built]
        self.right_child[tokens[built]] = last_right[built]
        self.reachable[tokens[built]] = True
        for index in np.flatnonzero(missing).tolist():
            self._derive_by_reference(int(first_array[index]), split_base)

    def _derive_by_reference(self, token_id: int, split_base: Callable[[bytes], list]) -> None:
        """The merge tree of one token by ``bpe_merge`` over its bytes."""
        base = split_base(self.token_bytes[token_id])
        if len(base) == 1:
            self.reachable[token_id] = True
            return
        parts, last_merge = bpe_merge(base, self.pair_rule)
        if len(parts) != 1 or last_merge is None:
            return
        left_id, right_id = self.id_of.get(last_merge[0]), self.id_of.get(last_merge[1])
        if left_id is None or right_id is None:
            return
        self.merge_priority[token_id] = last_merge[2]
        self.left_child[token_id] = left_id
        self.right_child[token_id] = right_id
        self.reachable[token_id] = True

    def _build_merge_index(self) -> None:
        """All crossing merges (r, l) -> priority, grouped by r, sorted by priority.

        Every rule whose operands are reachable tokens counts, even when its
        result is unreachable on its own bytes: in context it still fires."""
        lefts, rights = self._candidate_left, self._candidate_right
        priorities = self._candidate_priority
        keep = self.reachable[lefts] & self.reachable[rights]
        lefts_array = lefts[keep].astype(np.int64)
        priorities = priorities[keep]
        order = np.lexsort((priorities, lefts_array))
        self.merge_right = rights[keep][order].astype(np.int32)
        self.merge_priorities = priorities[order]
        counts = np.bincount(lefts_array, minlength=self.n_tokens)
        self.merge_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.n_merges = len(self.merge_right)
        for name in ("_candidate_left", "_candidate_right", "_candidate_priority", "_candidate_result"):
            delattr(self, name)

    def _build_spine_index(self) -> None:
        """Left-spine membership of every reachable token, grouped by spine node (see module docstring).

        Built level by level: all tokens start as their own spine root (parent
        priority ``NO_PRIORITY``); each level follows the left child."""
        tokens = np.flatnonzero(self.reachable).astype(np.int64)
        node_levels, token_levels, parent_levels = [tokens], [tokens], [np.full(len(tokens), NO_PRIORITY)]
        nodes = tokens
        while True:
            has_child = self.left_child[nodes] >= 0
            if not has_child.any():
                break
            tokens = tokens[has_child]
            parents = self.merge_priority[nodes[has_child]]
            nodes = self.left_child[nodes[has_child]].astype(np.int64)
            node_levels.append(nodes)
            token_levels.append(tokens)
            parent_levels.append(parents)
        nodes_array = np.concatenate(node_levels)
        parent_array = np.concatenate(parent_levels).astype(np.int64)
        order = np.lexsort((parent_array, nodes_array))
        self.spine_tokens = np.concatenate(token_levels)[order].astype(np.int32)
        self.spine_parent_priorities = parent_array[order]
        counts = np.bincount(nodes_array, minlength=self.n_tokens)
        self.spine_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    # -- queries ------------------------------------------------------------
    def pair_allowed(self, first_id: int, second_id: int) -> bool:
        """True iff BPE keeps ``first_id`` and ``second_id`` apart (both reachable).

        Computed by the compiled spine test (``_bpe_pairs.SpineIndex.pair_allowed``)."""
        return self._index().pair_allowed(first_id, second_id)

    def _index(self) -> SpineIndex:
        """The compiled spine index (``_bpe_pairs``), built with the table and
        again when it is unpickled (40 ms for Llama-3's 280,000 crossing
        merges: with the filter's tables, not in a decoding step)."""
        index = self.__dict__.get("_spine_index")
        if index is None:
            index = self._spine_index = SpineIndex(
                self.merge_offsets, self.merge_right, self.merge_priorities, self.spine_offsets,
                self.spine_tokens, self.spine_parent_priorities, self.merge_priority, self.left_child,
                self.right_child, self.reachable)
            self._unreachable_words = bitset.from_ids(self.unreachable_ids, index.n_words)
        return index

    def __getstate__(self) -> dict:
        """Pickled without the compiled lookup tables (rebuilt by ``__setstate__``)."""
        state = dict(self.__dict__)
        for name in ("pair_rule", "id_of", "_spine_index", "_unreachable_words", "_spelled"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._index()

    def forbidden_words(self, first_id: int, n_words: int) -> np.ndarray:
        """``forbidden_after(first_id)`` as a packed uint32[n_words] bitset (bit t%32 of word t//32).

        Computed by the compiled spine walk (``_bpe_pairs``);
        ``n_words`` >= ceil(n_tokens / 32) (ids past the table stay clear).
        """
        index = self._index()
        out = np.zeros(n_words, dtype=np.uint32)
        if not self.reachable[first_id]:
            out[:index.n_words] = self._spelled_words()
            return out
        out[:index.n_words] = self._unreachable_words
        index.forbidden_words(first_id, out)
        return out

    def _spelled_words(self) -> np.ndarray:
        """Packed bitset of the ids with bytes: what an unreachable token
        forbids after it (kept once: 17 ms per query on Llama-3 before)."""
        words = self.__dict__.get("_spelled")
        if words is None:
            spelled = np.flatnonzero(np.array([data is not None for data in self.token_bytes]))
            words = self._spelled = bitset.from_ids(spelled, self._index().n_words)
        return words

    def right_spine(self, token_id: int) -> list:
        """[(node, parent priority)] from the token down its right children."""
        spine = [(token_id, NO_PRIORITY)]
        node = token_id
        while self.right_child[node] >= 0:
            parent_priority = int(self.merge_priority[node])
            node = int(self.right_child[node])
            spine.append((node, parent_priority))
        return spine

    def forbidden_after(self, first_id: int) -> np.ndarray:
        """Sorted int32 ids t2 with ``pair_allowed(first_id, t2)`` false (unreachable ids included)."""
        if not self.reachable[first_id]:
            return np.flatnonzero(np.array([d is not None for d in self.token_bytes])).astype(np.int32)
        chunks = [self.unreachable_ids.astype(np.int64)]
        for right_node, right_parent in self.right_spine(first_id):
            start, end = self.merge_offsets[right_node], self.merge_offsets[right_node + 1]
            if start == end:
                continue
            cut = start + int(np.searchsorted(self.merge_priorities[start:end], right_parent, side="left"))
            if cut == start:
                continue
            lefts = self.merge_right[start:cut]
            priorities = self.merge_priorities[start:cut]
            spine_starts = self.spine_offsets[lefts]
            spine_ends = self.spine_offsets[lefts + 1]
            firsts = _batched_lower_bound(self.spine_parent_priorities, spine_starts, spine_ends, priorities)
            chunks.append(self.spine_tokens[_ranges_to_indices(firsts, spine_ends)].astype(np.int64))
        forbidden = np.zeros(self.n_tokens, dtype=bool)
        for chunk in chunks:
            forbidden[chunk] = True
        return np.flatnonzero(forbidden).astype(np.int32)



def _batched_lower_bound(values: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                         keys: np.ndarray) -> np.ndarray:
    """For each i, the first index j in [starts[i], ends[i]) with values[j] >= keys[i].

    ``values`` is sorted ascending inside each range.  Binary search run on all
    ranges at once (about log2(max range) numpy passes).
    """
    low = starts.copy()
    high = ends.copy()
    while True:
        active = low < high
        if not active.any():
            return low
        middle = (low + high) // 2
        go_right = active & (values[np.minimum(middle, len(values) - 1)] < keys)
        go_left = active & ~go_right
        low = np.where(go_right, middle + 1, low)
        high = np.where(go_left, middle, high)
