"""The byte path of every node of a preorder trie (``trie_walk.pyx``'s layout),
rebuilt from edge bytes and subtree ends alone: the oracle the token-set and
exit-trie tests read tries with."""

from __future__ import annotations


def preorder_paths(node_bytes, ends) -> list[bytes]:
    """Bytes from the root to each node: a node's parent is the innermost open
    subtree before it."""
    node_bytes, ends = [int(b) for b in node_bytes], [int(e) for e in ends]
    paths = [b""] * len(node_bytes)
    stack = [0]
    for node in range(1, len(node_bytes)):
        while ends[stack[-1]] <= node:
            stack.pop()
        paths[node] = paths[stack[-1]] + bytes([node_bytes[node]])
        stack.append(node)
    return paths
