"""Terminal DFAs: regexes, literal sets and substring sets as byte-level tables.

What it computes: for a grammar terminal, a minimal deterministic automaton
over bytes, built by the Rust crate ``grammask._core._dfa_builder`` (regex-automata
0.4, then trimmed and minimized in Rust; see csrc/dfa/README.md).  Kinds:
``regex`` (full match of a Rust-syntax pattern), ``early_end`` (KBNF ``#e``:
the match ends at its first accepting state), ``complement`` (KBNF ``#ex``:
valid UTF-8 strings that contain no match), ``intersection`` (strings
fully matching each of several patterns, joined by
``INTERSECTION_SEPARATOR``, NUL, which no part may contain raw: made by the
JSON Schema translator, e.g. a ``pattern`` with length bounds),
``difference`` (strings of an intersection, the text before the first
``DIFFERENCE_SEPARATOR``, U+0001, matching none of the patterns after it,
separated by it: made by the translator for object keys, e.g. keys matching
one ``patternProperties`` pattern and no other), ``key_exclusion`` (KBNF
``#!``: JSON keys other than a set of names, built from the names' trie; the
pattern text is a prefix, a fallback regex, blocked characters and the
names, separated by ``KEY_SEPARATOR``, U+0001: made by the translator for
``additionalProperties`` keys, see ``csrc/dfa/src/name_trie.rs``),
``literals`` (a set of strings)
and ``substrings`` (KBNF ``#substrs``: substrings of a text that start and
end on character boundaries).

Data layout (docs/internals.md, "Terminal DFAs"): ``class_map`` uint8[256]
maps a byte to its class; ``transitions`` int32[n_states, n_classes] holds
plain state indices; ``accepting`` bool[n_states] says the bytes read so far
are a whole match (regex-automata's one-byte match delay is already
resolved); ``start`` is the start state and ``dead`` is always 0.  The numpy
arrays are read-only views of the bytes the crate returned.

Invariants: state 0 is a non-accepting sink; every other state is reachable
and can still reach an accepting state ("state != 0" means "still viable");
tables are minimal and canonically numbered, so equal languages give equal
tables (``==`` and ``hash`` compare table content, which the front end uses
to deduplicate terminals).  Bytes that are not valid UTF-8 lead to state 0.
An empty language is the one-state table with ``start == 0``.

Compiled DFAs are cached by their arguments, since grammars reuse patterns
(a regex terminal's DFA by pattern, kind and case flag, reused by requests
with larger limits: ``REGEX_DFAS``); the crate also keeps, per process, the pieces it builds a concatenation
from (``PIECE_CACHE``: JSON's member separator ``[ \t\n\r]{0,256}:...``
joined with each schema's value pattern, csrc/dfa/src/concat.rs).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from typing import Iterable

import numpy as np

from grammask._core import _dfa_builder
from grammask.config import Config
from grammask.errors import GrammarError, LimitExceeded, RegexError
from grammask.source import Source, Span

__all__ = ["DFA", "FORMAT_VERSION", "DIFFERENCE_SEPARATOR", "INTERSECTION_SEPARATOR", "KEY_SEPARATOR",
           "PRODUCT_KINDS", "REGEX_KINDS", "compile_regex", "compile_literals",
           "compile_substrings"]

FORMAT_VERSION = 1
"""Version of the table layout this module understands (the crate reports its own)."""

REGEX_KINDS = ("regex", "early_end", "complement", "intersection", "difference", "key_exclusion")

PRODUCT_KINDS = ("intersection", "difference")
"""Kinds whose DFA is a product of several regexes' DFAs: a grammar's
terminals of these kinds are bounded by ``Config.max_product_dfa_states``
and ``max_product_dfa_bytes`` instead of ``max_dfa_states`` and
``max_dfa_bytes`` (``grammar.terminal_keys``)."""

INTERSECTION_SEPARATOR = "\0"
"""Separates the patterns of an ``intersection`` terminal in its pattern text."""

DIFFERENCE_SEPARATOR = "\x01"
"""Separates the kept intersection of a ``difference`` terminal from each removed pattern."""

KEY_SEPARATOR = "\x01"
"""Separates the prefix, fallback, blocked characters and names of a ``key_exclusion`` terminal."""

_DEFAULTS = Config()
_CACHE_SIZE = 4096
_SOURCE_PREVIEW_CHARS = 60


class DFA:
    """A minimal byte-level DFA with numpy views of its tables (see the module docstring)."""

    __slots__ = ("kind", "source", "format_version", "n_states", "n_classes", "start",
                 "class_map", "transitions", "accepting", "_class_list", "_flat_transitions",
                 "_accepting_list", "_buffers", "_nonempty")

    dead = 0
    """The dead state: non-accepting, every byte leads back to it."""

    def __init__(self, kind: str, source: str, format_version: int, n_states: int,
                 n_classes: int, start: int, class_map: bytes, transitions: bytes,
                 accepting: bytes):
        if format_version != FORMAT_VERSION:
            raise GrammarError(
                f"DFA table format {format_version} is not supported (expected {FORMAT_VERSION}); "
                "rebuild grammask so the Rust crate and the Python layer match")
        if (len(class_map) != 256 or len(accepting) != n_states
                or len(transitions) != 4 * n_states * n_classes):
            raise GrammarError("DFA tables have inconsistent sizes")
        self.kind = kind
        self.source = source
        self.format_version = format_version
        self.n_states = n_states
        self.n_classes = n_classes
        self.start = start
        self._buffers = (bytes(class_map), bytes(transitions), bytes(accepting))
        self.class_map = np.frombuffer(self._buffers[0], dtype=np.uint8)
        self.transitions = (np.frombuffer(self._buffers[1], dtype="<i4")
                            .astype(np.int32, copy=False).reshape(n_states, n_classes))
        self.accepting = np.frombuffer(self._buffers[2], dtype=np.bool_)
        self._class_list = self.class_map.tolist()
        self._flat_transitions = memoryview(np.ascontiguousarray(self.transitions).reshape(-1))
        self._accepting_list = self.accepting.tolist()
        self._nonempty = start != 0 and bool((self.transitions[start] != 0).any())

    @classmethod
    def _from_tables(cls, kind: str, source: str, tables: dict) -> DFA:
        return cls(kind, source, tables["format_version"], tables["n_states"],
                   tables["n_classes"], tables["start"], tables["class_map"],
                   tables["transitions"], tables["accepting"])

    def step(self, state: int, byte: int) -> int:
        """The state after reading ``byte`` in ``state`` (0 when no match can follow)."""
        return self._flat_transitions[state * self.n_classes + self._class_list[byte]]

    def is_accepting(self, state: int) -> bool:
        """Whether the bytes that led to ``state`` form a whole match."""
        return self._accepting_list[state]

    def run(self, data: bytes, state: int | None = None) -> int:
        """The state after reading ``data`` from ``state`` (default: the start state)."""
        current = self.start if state is None else state
        flat = self._flat_transitions
        classes = self._class_list
        n_classes = self.n_classes
        for byte in data:
            current = flat[current * n_classes + classes[byte]]
            if current == 0:
                return 0
        return current

    def fullmatch(self, data: bytes | str) -> bool:
        """Whether all of ``data`` (bytes, or a str taken as UTF-8) is a match."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        return self._accepting_list[self.run(data)]

    @property
    def matches_empty(self) -> bool:
        """Whether the empty string is a match."""
        return self._accepting_list[self.start]

    @property
    def has_nonempty_match(self) -> bool:
        """Whether a string of at least one byte matches (some byte leads
        from the start state to a live state)."""
        return self._nonempty

    @property
    def is_empty_language(self) -> bool:
        """Whether nothing at all matches (the start state is dead)."""
        return self.start == 0

    @property
    def table_bytes(self) -> int:
        """Size of the exported tables in bytes."""
        return sum(len(buffer) for buffer in self._buffers)

    def dump(self) -> str:
        """One line per state: markers (D dead, > start, * accepting) and its
        transitions grouped by target, byte ranges in hex."""
        lines = []
        for state in range(self.n_states):
            marks = ("D" if state == 0 else " ") + (">" if state == self.start else " ") + (
                "*" if self._accepting_list[state] else " ")
            targets: dict[int, list[int]] = {}
            for byte in range(256):
                target = self.step(state, byte)
                if target != 0:
                    targets.setdefault(target, []).append(byte)
            edges = ", ".join(f"{_byte_ranges(bytes_)} => {target}"
                              for target, bytes_ in sorted(targets.items()))
            lines.append(f"{marks}{state:06}: {edges}")
        return "\n".join(lines)

    def _key(self) -> tuple:
        return (self.start, self.n_classes) + self._buffers

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DFA):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self):
        return (DFA, (self.kind, self.source, self.format_version, self.n_states,
                      self.n_classes, self.start) + self._buffers)

    def __repr__(self) -> str:
        return (f"DFA(kind={self.kind!r}, source={_preview(self.source)}, "
                f"n_states={self.n_states}, n_classes={self.n_classes})")


def _byte_ranges(sorted_bytes: list[int]) -> str:
    ranges = []
    low = previous = sorted_bytes[0]
    for byte in sorted_bytes[1:] + [None]:
        if byte is not None and byte == previous + 1:
            previous = byte
            continue
        ranges.append(f"{low:02X}" if low == previous else f"{low:02X}-{previous:02X}")
        if byte is not None:
            low = previous = byte
    return "|".join(ranges)


def _preview(text: str) -> str:
    shown = repr(text)
    if len(shown) > _SOURCE_PREVIEW_CHARS:
        shown = shown[:_SOURCE_PREVIEW_CHARS - 3] + "..."
    return shown


def _check_limits(max_states: int, max_bytes: int) -> tuple[int, int]:
    for name, value in (("max_states", max_states), ("max_bytes", max_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    return max_states, max_bytes


def _first_unencodable(text: str) -> int | None:
    """Offset of the first character that is not valid in UTF-8 (a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def _raise_build_error(error: Exception, pattern: str, what: str) -> None:
    kind, reason, position, limit, given, maximum = error.args
    if kind == "limit":
        raise LimitExceeded(limit, given, maximum, what=f"DFA of {what}") from None
    if kind == "syntax" and position is not None:
        excerpt = Source(pattern, name="<regex>").excerpt(Span(position, position + 1))
        raise RegexError(f"invalid regex {_preview(pattern)} at character {position}: "
                         f"{reason}\n{excerpt}", pattern=pattern, position=position,
                         reason=reason) from None
    label = {"syntax": "invalid regex", "unsupported": "unsupported regex",
             "internal": "DFA construction failed for regex"}[kind]
    raise RegexError(f"{label} {_preview(pattern)}: {reason}", pattern=pattern, position=None,
                     reason=reason) from None


def compile_regex(pattern: str, *, kind: str = "regex", case_insensitive: bool = False,
                  max_states: int = _DEFAULTS.max_dfa_states,
                  max_bytes: int = _DEFAULTS.max_dfa_bytes) -> DFA:
    """Minimal DFA of a Rust-syntax regex, anchored at both ends.

    ``kind``: ``"regex"`` (full matches), ``"early_end"`` (ends at the first
    match), ``"complement"`` (valid UTF-8 strings containing no match) or
    ``"intersection"`` (full matches of every ``INTERSECTION_SEPARATOR``-joined part)
    or ``"difference"`` (full matches of the intersection before the first
    ``DIFFERENCE_SEPARATOR`` and of no pattern after it) or ``"key_exclusion"``
    (see the module docstring; not case-insensitive).
    Raises ``RegexError`` (invalid or unsupported pattern, with ``position``
    as a character offset) or ``LimitExceeded`` (``max_dfa_states`` /
    ``max_dfa_bytes``).
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, got {type(pattern).__name__}")
    if kind not in REGEX_KINDS:
        raise ValueError(f"kind must be one of {', '.join(REGEX_KINDS)}; got {kind!r}")
    bad = _first_unencodable(pattern)
    if bad is not None:
        raise RegexError(f"regex {_preview(pattern)} contains a lone surrogate at character {bad}",
                         pattern=pattern, position=bad, reason="not valid Unicode")
    max_states, max_bytes = _check_limits(max_states, max_bytes)
    key = (pattern, kind, bool(case_insensitive))
    dfa = REGEX_DFAS.get(key, max_states, max_bytes)
    if dfa is None:
        dfa = _build_regex(pattern, kind, bool(case_insensitive), max_states, max_bytes)
        REGEX_DFAS.put(key, max_states, max_bytes, dfa)
    return dfa


def _build_regex(pattern: str, kind: str, case_insensitive: bool, max_states: int,
                 max_bytes: int) -> DFA:
    """The crate's build of a regex terminal, uncached (``compile_regex`` caches it)."""
    try:
        tables = _dfa_builder.build_regex_table(pattern, kind, case_insensitive, max_states,
                                                max_bytes)
    except _dfa_builder.DfaBuildError as error:
        _raise_build_error(error, pattern, f"regex {_preview(pattern)}")
    flag = "(?i)" if case_insensitive else ""
    return DFA._from_tables(kind, flag + pattern, tables)


class _RegexDFAs:
    """The cache of regex terminals' DFAs: per (pattern, kind, case flag), the
    DFA with the limits it was built within.  A request whose limits are at
    least as large takes it instead of building again (the translator tries
    patterns within a small budget, the grammar then asks within the
    config's).

    Why that is exact: a build within smaller limits passed every check a
    build within larger ones makes, and its table is the unique minimal
    one, so the larger build would give the same table.  The other way is
    not taken: a table built within large limits may have needed them on
    the way (intermediate products), so a smaller request builds and may
    fail; its DFA then replaces the entry (the smaller limits serve more
    requests).  Failures are not kept.  At most ``_CACHE_SIZE`` keys, the
    least recently used dropped first; one lock guards the entries
    (grammars may be compiled on several threads)."""

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[str, str, bool], tuple[int, int, DFA]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, bool], max_states: int, max_bytes: int) -> DFA | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] > max_states or entry[1] > max_bytes:
                return None
            self._entries.move_to_end(key)
            return entry[2]

    def put(self, key: tuple[str, str, bool], max_states: int, max_bytes: int, dfa: DFA) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and not (max_states <= entry[0] and max_bytes <= entry[1]):
                return
            self._entries[key] = (max_states, max_bytes, dfa)
            self._entries.move_to_end(key)
            if len(self._entries) > _CACHE_SIZE:
                self._entries.popitem(last=False)

    def cache_clear(self) -> None:
        with self._lock:
            self._entries.clear()


REGEX_DFAS = _RegexDFAs()


def compile_literals(strings: Iterable[str], *, case_insensitive: bool = False,
                     max_states: int = _DEFAULTS.max_dfa_states,
                     max_bytes: int = _DEFAULTS.max_dfa_bytes) -> DFA:
    """Minimal DFA accepting exactly the given strings (UTF-8 encoded).

    An empty collection gives the empty language; ``""`` in it makes the DFA
    match the empty string.  Case-insensitive sets use Unicode simple case
    folding (as Rust's regex ``(?i)`` does).
    """
    if isinstance(strings, (str, bytes)):
        raise TypeError("strings must be a collection of str, not a single string")
    unique = set()
    for string in strings:
        if not isinstance(string, str):
            raise TypeError(f"literal strings must be str, got {type(string).__name__}")
        if _first_unencodable(string) is not None:
            raise GrammarError(f"literal {_preview(string)} contains a lone surrogate")
        unique.add(string)
    max_states, max_bytes = _check_limits(max_states, max_bytes)
    return _compile_literals_cached(tuple(sorted(unique)), bool(case_insensitive), max_states,
                                    max_bytes)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compile_literals_cached(strings: tuple[str, ...], case_insensitive: bool, max_states: int,
                             max_bytes: int) -> DFA:
    description = " | ".join(repr(s) for s in strings[:8]) + (" | ..." if len(strings) > 8 else "")
    source = f"literals {description}" + (" (case-insensitive)" if case_insensitive else "")
    try:
        tables = _dfa_builder.build_literals_table(list(strings), case_insensitive, max_states,
                                                   max_bytes)
    except _dfa_builder.DfaBuildError as error:
        _raise_build_error(error, source, f"{len(strings)} literals")
    return DFA._from_tables("literals", source, tables)


def compile_substrings(text: str, *, max_states: int = _DEFAULTS.max_dfa_states,
                       max_bytes: int = _DEFAULTS.max_dfa_bytes) -> DFA:
    """Minimal DFA of every substring of ``text`` (including ``""``) that starts
    and ends on a character boundary."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if _first_unencodable(text) is not None:
        raise GrammarError(f"substring text {_preview(text)} contains a lone surrogate")
    max_states, max_bytes = _check_limits(max_states, max_bytes)
    return _compile_substrings_cached(text, max_states, max_bytes)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compile_substrings_cached(text: str, max_states: int, max_bytes: int) -> DFA:
    source = f"substrings of {_preview(text)}"
    try:
        tables = _dfa_builder.build_substrings_table(text, max_states, max_bytes)
    except _dfa_builder.DfaBuildError as error:
        _raise_build_error(error, source, source)
    return DFA._from_tables("substrings", source, tables)


class _PieceCache:
    """The crate's cache of concatenation pieces, exposed with a ``cache_clear``
    like the caches above, so ``clear_caches`` (which calls every one in this
    module) makes the next build of a joined pattern start cold too."""

    @staticmethod
    def cache_clear() -> None:
        _dfa_builder.clear_piece_cache()


PIECE_CACHE = _PieceCache()
