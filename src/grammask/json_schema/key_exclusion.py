"""Additional-property keys as terminals built from the names' trie.

What it computes: ``key_exclusion_patterns(names)``: pattern texts of
``key_exclusion`` terminals (``terminals.KEY_SEPARATOR``; the Rust crate
builds each DFA straight from the names' trie, ``csrc/dfa/src/name_trie.rs``)
whose union is exactly the language of ``strings.string_not_in_parts``: JSON
strings, quotes included, whose decoded value is none of ``names``, where a
string leaves the trie only with a printable ASCII character written raw or
with a character no name contains (in the spellings ``json_char_regex``
gives it without ASCII escapes).  Each terminal is::

    prefix      '"' + path, a path of the trie from its root
    fallback    one character leaving the trie, then the rest of the string
                (``fallback_pattern``; the same for every terminal)
    blocked     the characters after ``path`` that other terminals own
    names       the names starting with ``path``, without it

``key_not_in(translator, names)`` is the node of those keys (the terminals,
or the regexes of ``string_not_in_parts`` where a name has a character
JSON escapes), for the objects' additional members and the member verdicts'
extra members.

The whole trie in one terminal fits the DFA limits only for small or
regular name sets: 20,000 random 8-letter names have a minimal DFA of about
44,500 states.  ``_parts`` cuts the trie top-down over the sorted names (the
names under a path are one run of them): a node is one terminal when its
table fits the default ``Config`` limits, ``max_dfa_bytes`` counted on the
unminimized table as the crate builds it (one state per byte-trie node,
classes the fallback's refined by the names' bytes) and ``max_dfa_states``
on that count too, or, when only the count is too large (shared endings
such as ``p0``..``p19999`` minimize far below it), on the built DFA (a trial
build, which the terminal compiler's cache then reuses).  Otherwise the node
gets a terminal of its own (every child blocked: the closing quote and the
fallback right after the path) and each child is cut in turn, except
under a node with a name whose bytes alone reach ``max_dfa_states`` (a
name of thousands of characters: the states along it are in whichever
terminal holds its end, so no cut fits, and cutting on would write one
terminal per character, each spelling the whole path).  The compiler then
refuses that terminal under the config's limits, and a config with
smaller limits than the defaults may refuse others (``LimitExceeded`` at
compile time, naming the field).

Invariants: the terminals' languages are disjoint (a string has one longest
trie path, and exactly one terminal owns that path's node: the deepest cut
on it) and their union is the language above.  Names containing ``"``,
``\\`` or a control character (which JSON escapes, so the trie's raw steps
would be wrong) give None: the caller keeps the regex construction, which
spells those characters escaped.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Optional

from grammask.config import Config
from grammask.errors import LimitExceeded
from grammask.json_schema.regex_text import (
    MUST_ESCAPE, PRINTABLE_ASCII, complement_ranges, group, json_char_regex, normalize_ranges,
)
from grammask.json_schema.strings import STRING_TAIL, string_not_in_parts
from grammask.terminals import KEY_SEPARATOR, compile_regex

_DEFAULTS = Config()

_MUST_ESCAPE = re.compile("[" + "".join(f"\\u{low:04x}-\\u{high:04x}" for low, high in MUST_ESCAPE) + "]")
"""A character JSON strings must escape (``regex_text.MUST_ESCAPE``)."""

_PRINTABLE = frozenset(chr(code) for low, high in PRINTABLE_ASCII for code in range(low, high + 1))
"""The characters of ``regex_text.PRINTABLE_ASCII``."""


def key_exclusion_patterns(names: list[str]) -> Optional[list[str]]:
    """The terminals' pattern texts (see the module docstring), or None when
    a name contains a character JSON must escape (``"``, ``\\``, controls)."""
    if any(_MUST_ESCAPE.search(name) for name in names):
        return None
    unique = sorted(set(names))
    joined = "".join(unique)
    fallback, n_fallback, class_bytes = _fallback_table("".join(sorted(set(joined) - _PRINTABLE)))
    # The crate's classes: the fallback's, each byte of a name its own.
    own = set(joined.encode("utf-8")) | {0x22}
    n_classes = len(own) + sum(1 for members in class_bytes if not members <= own)
    return _parts(unique, fallback, n_fallback, n_classes)


def key_not_in(translator, names: list[str]) -> Any:
    """Keys that are none of ``names``: terminals built from the names' trie
    (``key_exclusion_patterns``), or, for names JSON escapes characters of,
    the regexes of ``string_not_in_parts``."""
    patterns = key_exclusion_patterns(names)
    if patterns is not None:
        return translator.alt([translator.rx_keys(text) for text in patterns])
    head, not_name = string_not_in_parts(names)
    tail = translator.string_tail()
    alternatives = []
    if head is not None:
        alternatives.append(translator.seq(translator.rx(head), tail))
    if not_name is not None:
        alternatives.append(translator.rx(not_name))
    return translator.alt(alternatives)


@functools.lru_cache(maxsize=1024)
def _fallback_table(alphabet: str) -> tuple[str, int, tuple[frozenset, ...]]:
    """For names whose characters outside printable ASCII are those of
    ``alphabet``: the fallback pattern, the number of states of its DFA and
    the bytes of each of its byte classes.  The fallback leaves the trie with
    any printable ASCII character, so the names' printable ASCII characters
    do not change it: memoized, all-ASCII names share one entry."""
    fallback = fallback_pattern([alphabet])
    table = compile_regex(fallback)
    members: dict[int, set[int]] = {}
    for byte, label in enumerate(table.class_map.tolist()):
        members.setdefault(label, set()).add(byte)
    return fallback, table.n_states, tuple(frozenset(bytes_) for bytes_ in members.values())


def fallback_pattern(names: list[str]) -> str:
    """One character that leaves the trie anywhere (printable ASCII raw, or a
    character of no name), then the rest of the string and its quote."""
    alphabet = normalize_ranges((ord(c), ord(c)) for c in set("".join(names)))
    leaving = normalize_ranges(PRINTABLE_ASCII + complement_ranges(alphabet))
    return group(json_char_regex(leaving, ascii_escapes=False)) + STRING_TAIL


def _parts(names: list[str], fallback: str, n_fallback: int, n_classes: int) -> list[str]:
    """The pattern texts, cutting the trie of the sorted ``names`` top-down."""
    lengths = [len(name.encode("utf-8")) for name in names]
    added = _added_bytes(names)
    parts = []
    pending = [(0, len(names), "")]
    while pending:
        low, high, path = pending.pop()
        prefix = '"' + path
        depth = len(path.encode("utf-8"))
        trie_nodes = 1 + lengths[low] - depth + added[high] - added[low + 1]
        n_states = 2 + len(prefix.encode("utf-8")) + n_fallback + trie_nodes
        text = None
        if 2 + max(lengths[low:high]) + n_fallback >= _DEFAULTS.max_dfa_states:
            text = _whole(prefix, fallback, names, low, high, path)   # no cut fits: see the docstring
        elif 256 + (4 * n_classes + 1) * n_states <= _DEFAULTS.max_dfa_bytes:
            text = _whole(prefix, fallback, names, low, high, path)
            if n_states > _DEFAULTS.max_dfa_states and not _fits(text):
                text = None
        if text is not None:
            parts.append(text)
            continue
        ends_name = names[low] == path
        children = _children(names, low + ends_name, high, len(path))
        blocked = "".join(names[start][len(path)] for start, _ in children)
        parts.append(KEY_SEPARATOR.join([prefix, fallback, blocked] + ([""] if ends_name else [])))
        pending.extend((start, end, path + names[start][len(path)]) for start, end in reversed(children))
    return parts


def _whole(prefix: str, fallback: str, names: list[str], low: int, high: int, path: str) -> str:
    """The text of one terminal for every name of ``names[low:high]`` (under ``path``)."""
    return KEY_SEPARATOR.join([prefix, fallback, ""] + [name[len(path):] for name in names[low:high]])


def _added_bytes(names: list[str]) -> list[int]:
    """Prefix sums of the bytes each sorted name adds to the byte trie of
    the names before it (its length past the common prefix with the
    previous name)."""
    sums = [0]
    previous = b""
    for name in names:
        data = name.encode("utf-8")
        common = 0
        limit = min(len(previous), len(data))
        while common < limit and previous[common] == data[common]:
            common += 1
        sums.append(sums[-1] + len(data) - common)
        previous = data
    return sums


def _children(names: list[str], low: int, high: int, depth: int) -> list[tuple[int, int]]:
    """The runs of ``names[low:high]`` (all longer than ``depth``) sharing
    their character at ``depth``."""
    runs = []
    while low < high:
        char = names[low][depth]
        end = low + 1
        while end < high and names[end][depth] == char:
            end += 1
        runs.append((low, end))
        low = end
    return runs


def _fits(text: str) -> bool:
    """Whether the terminal's DFA fits the default limits (built and cached)."""
    try:
        compile_regex(text, kind="key_exclusion", max_states=_DEFAULTS.max_dfa_states,
                      max_bytes=_DEFAULTS.max_dfa_bytes)
    except LimitExceeded:
        return False
    return True
