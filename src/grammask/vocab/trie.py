"""TokenTrie: a flat, DFS-preorder trie over the bytes of a vocabulary's text tokens.

What it computes
    The trie the mask walk descends (llguidance's toktrie layout, docs/design.md
    section 4): one node per distinct non-empty prefix of the allowed text
    tokens' bytes, numbered in depth-first preorder with children sorted by
    byte, so a subtree is a contiguous range of node numbers and the walk is a
    loop over an array with push on descent and pop on return.

Data layout (numpy, C-contiguous, read-only)
    ``node_bytes``          ``uint8[n_nodes]``: the byte on the edge into node n
                            (node 0 is the root; its entry is 0 and meaningless).
    ``node_subtree_ends``   ``int32[n_nodes]``: the subtree of n is ``[n, end)``;
                            n's first child is n+1 when n+1 < end; the next
                            sibling of a child c is ``end(c)`` when that is < end(n).
    ``node_depths``         ``int32[n_nodes]``: bytes from the root (root 0).
    ``node_token_offsets``  ``int32[n_nodes+1]``: the ids whose bytes end exactly
                            at node n are ``token_ids[off[n]:off[n+1]]`` (several
                            ids may share bytes; all are kept, ascending).
    ``token_ids``           ``int32[n_text_tokens]``: every allowed text id once.
    ``token_end_nodes``     ``int32[vocab.size]``: the node where id's bytes end,
                            -1 for ids that are not text (special, empty, None).
    ``first_byte_ranges``   ``int32[256, 2]``: ``[start, end)`` of the subtree
                            under the root's child with that byte, ``(0, 0)``
                            when no token starts with it.
    ``max_depth``           the longest token, in bytes.

Construction (sort-based, no per-node Python loop)
    Sort the distinct byte strings s_0 < s_1 < ... .  Sorted order is the
    preorder of the trie, and string i adds the nodes for its prefixes longer
    than l_i = lcp(s_{i-1}, s_i) (l_0 = 0): ``len(s_i) - l_i >= 1`` nodes, the
    last of which is s_i's end node.  The subtree of a node at depth d ends at
    the first later node of depth <= d, found per depth with a binary search.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from grammask.errors import VocabularyError


def _longest_common_prefixes(blob: np.ndarray, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """lcp[i] = common prefix length of strings i-1 and i (lcp[0] = 0), column by column."""
    n_strings = len(lengths)
    lcps = np.zeros(n_strings, dtype=np.int64)
    if n_strings < 2:
        return lcps
    active = np.arange(1, n_strings)
    column = 0
    while active.size:
        previous = active - 1
        fits = (lengths[previous] > column) & (lengths[active] > column)
        active = active[fits]
        previous = previous[fits]
        same = blob[offsets[active] + column] == blob[offsets[previous] + column]
        active = active[same]
        lcps[active] += 1
        column += 1
    return lcps


def _subtree_ends(depths: np.ndarray) -> np.ndarray:
    """For each node n, the end of its preorder subtree: n + (number of nodes under n, n included).

    The parent of a node at depth d is the last node before it at depth d-1
    (preorder), found by a binary search within the two levels; subtree sizes
    then accumulate from the deepest level up.  O(n_nodes log n_nodes).
    """
    n_nodes = len(depths)
    order = np.argsort(depths, kind="stable")
    max_depth = int(depths.max())
    level_starts = np.searchsorted(depths[order], np.arange(max_depth + 2))
    levels = [order[level_starts[depth]:level_starts[depth + 1]] for depth in range(max_depth + 1)]
    parents = np.zeros(n_nodes, dtype=np.int64)
    for depth in range(1, max_depth + 1):
        above = levels[depth - 1]
        parents[levels[depth]] = above[np.searchsorted(above, levels[depth]) - 1]
    sizes = np.ones(n_nodes, dtype=np.int64)
    for depth in range(max_depth, 0, -1):
        np.add.at(sizes, parents[levels[depth]], sizes[levels[depth]])
    return np.arange(n_nodes, dtype=np.int64) + sizes


class TokenTrie:
    """Flat DFS-preorder byte trie over a vocabulary's allowed text tokens (module docstring)."""

    __slots__ = ("node_bytes", "node_subtree_ends", "node_depths", "node_token_offsets",
                 "token_ids", "token_end_nodes", "first_byte_ranges", "max_depth", "vocab_size")

    def __init__(self, node_bytes, node_subtree_ends, node_depths, node_token_offsets, token_ids,
                 token_end_nodes, vocab_size: int):
        self.node_bytes = node_bytes
        self.node_subtree_ends = node_subtree_ends
        self.node_depths = node_depths
        self.node_token_offsets = node_token_offsets
        self.token_ids = token_ids
        self.token_end_nodes = token_end_nodes
        self.vocab_size = vocab_size
        self.max_depth = int(node_depths.max())
        ranges = np.zeros((256, 2), dtype=np.int32)
        child = 1
        root_end = int(node_subtree_ends[0])
        while child < root_end:
            ranges[node_bytes[child]] = (child, node_subtree_ends[child])
            child = int(node_subtree_ends[child])
        self.first_byte_ranges = ranges
        for array in (node_bytes, node_subtree_ends, node_depths, node_token_offsets, token_ids,
                      token_end_nodes, ranges):
            array.setflags(write=False)

    @property
    def n_nodes(self) -> int:
        return len(self.node_bytes)

    @property
    def n_tokens(self) -> int:
        return len(self.token_ids)

    @classmethod
    def from_vocabulary(cls, vocab: Any) -> "TokenTrie":
        """Build the trie over ``vocab.allowed_text_token_ids``."""
        allowed = np.asarray(vocab.allowed_text_token_ids, dtype=np.int64)
        table = vocab.token_bytes
        return cls.from_token_bytes([table[token_id] for token_id in allowed.tolist()], allowed,
                                    vocab.size)

    @classmethod
    def from_token_bytes(cls, datas: list, token_ids: Any, vocab_size: int) -> "TokenTrie":
        """Build from parallel lists of non-empty byte strings and their ids."""
        token_ids = np.asarray(token_ids, dtype=np.int64)
        if len(datas) != len(token_ids):
            raise VocabularyError("token bytes and token ids differ in length")
        ascending = np.argsort(token_ids, kind="stable")
        ids_by_bytes: dict[bytes, list[int]] = {}
        for index, token_id in zip(ascending.tolist(), token_ids[ascending].tolist()):
            data = datas[index]
            if not data:
                raise VocabularyError(f"token {token_id}: an empty token cannot enter the trie",
                                      token_id=token_id)
            ids_by_bytes.setdefault(data, []).append(token_id)
        distinct = sorted(ids_by_bytes)
        groups = [ids_by_bytes[data] for data in distinct]   # ids ascending within a group
        n_ids_per_group = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
        sorted_ids = np.fromiter(itertools.chain.from_iterable(groups), dtype=np.int64,
                                 count=len(token_ids))
        lengths = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
        offsets = np.cumsum(lengths) - lengths
        blob = np.frombuffer(b"".join(distinct), dtype=np.uint8)
        lcps = _longest_common_prefixes(blob, offsets, lengths)
        n_new = lengths - lcps
        first_nodes = 1 + np.cumsum(n_new) - n_new
        n_nodes = 1 + int(n_new.sum())
        owner = np.repeat(np.arange(len(distinct)), n_new)
        node_index = np.arange(1, n_nodes)
        depths_tail = lcps[owner] + 1 + (node_index - first_nodes[owner])
        node_depths = np.zeros(n_nodes, dtype=np.int32)
        node_depths[1:] = depths_tail
        node_bytes = np.zeros(n_nodes, dtype=np.uint8)
        node_bytes[1:] = blob[offsets[owner] + depths_tail - 1]
        end_node_of_group = first_nodes + n_new - 1
        token_nodes = np.repeat(end_node_of_group, n_ids_per_group)
        counts = np.zeros(n_nodes, dtype=np.int64)
        counts[end_node_of_group] = n_ids_per_group
        node_token_offsets = np.zeros(n_nodes + 1, dtype=np.int32)
        node_token_offsets[1:] = np.cumsum(counts)
        # ids are ordered by (bytes, id), i.e. by end node then id: grouped per node
        token_end_nodes = np.full(vocab_size, -1, dtype=np.int32)
        token_end_nodes[sorted_ids] = token_nodes
        node_subtree_ends = _subtree_ends(node_depths).astype(np.int32)
        return cls(node_bytes, node_subtree_ends, node_depths, node_token_offsets,
                   np.ascontiguousarray(sorted_ids, dtype=np.int32), token_end_nodes, vocab_size)

    def node_tokens(self, node: int) -> np.ndarray:
        """The ids whose bytes end exactly at ``node``."""
        return self.token_ids[self.node_token_offsets[node]:self.node_token_offsets[node + 1]]

    def children(self, node: int) -> list[int]:
        """Children of ``node`` in byte order."""
        result = []
        child = node + 1
        end = int(self.node_subtree_ends[node])
        while child < end:
            result.append(child)
            child = int(self.node_subtree_ends[child])
        return result

    def __repr__(self) -> str:
        return f"TokenTrie(n_nodes={self.n_nodes}, n_tokens={self.n_tokens}, max_depth={self.max_depth})"
