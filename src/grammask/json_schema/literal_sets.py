"""A large set of literal texts as a few regexes, each a trie with shared suffixes.

What it computes: ``literal_set_regexes(texts)`` returns regex texts (the
common Rust/Python syntax of ``regex_text``) whose union matches exactly the
given texts.  An ``enum`` of 100,000 numbers becomes a handful of terminals
instead of 100,000 (one DFA each), so its cost is linear in the total length
of the texts.

Construction: the texts are sorted and cut into chunks whose prefix trie has
at most ``CHUNK_TRIE_NODES`` nodes (consecutive sorted texts share prefixes,
so a chunk's node count grows by ``len(text) - common prefix with the
previous text``); this bounds each regex's automaton well below the default
``max_dfa_states``.  Within a chunk, equal subtries are merged (hash-consing
bottom-up: a node is identified by whether it ends a text and by its sorted
``(character, child id)`` edges, so the merged graph is the minimal acyclic
automaton over characters), and the edges of a node leading to the same
merged child are one character class.  The regex is written top-down:

    node   ::= edge                     one edge, no text ends here
             | (?:edge|edge|...)        several edges
             | (?:edge|...)?            a text also ends here
    edge   ::= class node(child)

So ``0``..``99999`` is ``(?:0|[1-9](?:[0-9](?:[0-9](?:[0-9][0-9]?)?)?)?)``-like
text of a few dozen characters.

Invariants: the union of the returned regexes is exactly the set of texts
(the written text unfolds the merged graph, which is the trie with equal
subtries identified, so it spells exactly the trie's language); a written
regex is never longer than its chunk's trie (a class of k edges replaces k
subtries); its group nesting is at most ``MAX_NESTING`` (a chunk that would
nest deeper, such as ``a``, ``aa``, ``aaa``..., is written as a flat
alternation of its escaped texts instead; the DFA builder's parser refuses
nesting past 250).  Every step is iterative, so long texts are safe.
"""

from __future__ import annotations

from grammask.json_schema.regex_text import char_class, escape_char, escape_literal

CHUNK_TRIE_NODES = 2000
"""Most prefix-trie nodes (characters) of one regex; at up to 4 UTF-8 bytes a
character its automaton stays under the default 10,000 DFA states."""

MAX_NESTING = 100
"""Deepest group nesting written; deeper chunks are flat alternations."""


def literal_set_regexes(texts) -> list[str]:
    """Regexes whose union matches exactly ``texts`` (see the module docstring)."""
    chunks: list[list[str]] = []
    size = CHUNK_TRIE_NODES + 1
    previous = ""
    for text in sorted(set(texts)):
        shared = 0
        limit = min(len(previous), len(text))
        while shared < limit and previous[shared] == text[shared]:
            shared += 1
        added = len(text) - shared
        if size + added > CHUNK_TRIE_NODES:
            chunks.append([])
            size = len(text)
        else:
            size += added
        chunks[-1].append(text)
        previous = text
    return [_chunk_regex(chunk) for chunk in chunks]


def _chunk_regex(texts: list[str]) -> str:
    """One regex matching exactly ``texts`` (sorted, distinct)."""
    # Trie: node i has children[i] (character -> node) and ends[i].
    children: list[dict[str, int]] = [{}]
    ends = [False]
    for text in texts:
        node = 0
        for char in text:
            following = children[node].get(char)
            if following is None:
                following = len(children)
                children[node][char] = following
                children.append({})
                ends.append(False)
            node = following
        ends[node] = True
    # Hash-consing bottom-up: a child always has a larger index than its parent.
    merged_id = [0] * len(children)
    signatures: dict[tuple, int] = {}
    shapes: list[tuple[bool, list[tuple[str, int]]]] = []
    for node in range(len(children) - 1, -1, -1):
        edges = tuple(sorted((char, merged_id[child]) for char, child in children[node].items()))
        signature = (ends[node], edges)
        identity = signatures.get(signature)
        if identity is None:
            identity = signatures[signature] = len(shapes)
            by_child: dict[int, list[str]] = {}
            for char, child_id in edges:
                by_child.setdefault(child_id, []).append(char)
            shapes.append((ends[node], [(_label(chars), child_id) for child_id, chars in by_child.items()]))
        merged_id[node] = identity
    pieces = _write(shapes, merged_id[0])
    if pieces is None:
        return "(?:" + "|".join(escape_literal(text) for text in texts) + ")"
    return "".join(pieces)


def _label(chars: list[str]) -> str:
    """Regex of one character among ``chars``."""
    if len(chars) == 1:
        return escape_char(ord(chars[0]))
    return char_class(tuple((ord(char), ord(char)) for char in chars))


def _write(shapes, root_id: int):
    """The regex pieces of merged node ``root_id``, or None past ``MAX_NESTING``."""
    pieces: list[str] = []
    # Work items: an int is a merged node to write, a str is text to append,
    # a 1-tuple holds the text closing a group.
    stack: list = [root_id]
    depth = 0
    while stack:
        item = stack.pop()
        if item.__class__ is str:
            pieces.append(item)
            continue
        if item.__class__ is tuple:
            depth -= 1
            pieces.append(item[0])
            continue
        ends, edges = shapes[item]
        if not edges:
            continue
        if len(edges) == 1 and not ends:
            label, child_id = edges[0]
            pieces.append(label)
            stack.append(child_id)
            continue
        depth += 1
        if depth > MAX_NESTING:
            return None
        pieces.append("(?:")
        stack.append((")?" if ends else ")",))
        for index in range(len(edges) - 1, -1, -1):
            label, child_id = edges[index]
            stack.append(child_id)
            stack.append(label if index == 0 else "|" + label)
    return pieces
