"""Terminal keys of the normalized grammar and their DFAs.

After flattening, a grammar symbol is either a nonterminal name (``str``) or a
terminal key (``tuple``), so symbols hash and compare cheaply:

==================================  ===============================================
key                                 meaning
==================================  ===============================================
``("lit", bytes)``                  these exact bytes (never empty)
``("class", ((lo, hi), ...))``      one code point in the ranges, as UTF-8; ranges
                                    sorted, disjoint, non-adjacent, surrogates removed
``("regex", pattern, kind, ci)``    a Rust regex, kind regex/early_end/complement/
                                    intersection/difference, or a key exclusion
                                    (``terminals.KEY_SEPARATOR``)
``("substrs", text)``               any substring of ``text``
``("literals", (bytes, ...))``      any one of the sorted byte strings (made by
                                    ``compile_literal_alternations``)
==================================  ===============================================

``TerminalCompiler`` turns the DFA-backed keys into ``grammask.terminals.DFA``
objects (each compiled once) and answers the two questions normalization asks
of a terminal: is its language empty, and does it match the empty string.
``key_to_kbnf`` prints a key as KBNF source (used by ``to_ebnf``);
``terminal_spelling`` is its memoized form that orders and fingerprints terminals.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Optional

from grammask import terminals
from grammask.config import Config
from grammask.errors import GrammarError, LimitExceeded, RegexError
from grammask.grammar.ast import AnyChar, CharClass
from grammask.grammar.regex_bounds import check_repetitions
from grammask.grammar.token_terminals import KIND_OF_BYTE, SPELLING
from grammask.source import Span

MAX_CODE_POINT = 0x10FFFF
SURROGATE_LOW, SURROGATE_HIGH = 0xD800, 0xDFFF
CLASS_SPECIAL_CHARS = set("\\[]^-&~")
_REGEX_SPECIAL = re.compile(r"[\\.+*?()|\[\]{}^$#&\-~]")
"""Characters ``regex_escape`` prefixes with a backslash."""
_KBNF_ESCAPES = (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"),
                 ("\0", "\\u{0}"), ("\x01", "\\u{1}"))
"""Characters ``kbnf_string`` spells as escapes, as (character, escape) in
the order it replaces them (the backslash first, so the escapes' own
backslashes stay single): two-character ones, and the separators of
multi-part regex terminals (NUL, U+0001) as ``\\u{X}`` at once, so a long
key-exclusion text stays on the fast path; every other character it prints
as itself, or as ``\\u{X}`` when not printable.  One ``str.replace`` per
character that occurs (a C scan) instead of ``str.translate`` (a table
lookup per character, about five times slower on a 300-character pattern)."""


@functools.lru_cache(maxsize=8192)
def class_ranges(node) -> tuple[tuple[int, int], ...]:
    """Positive, sorted, merged code-point ranges of a CharClass or AnyChar,
    without surrogates (which have no UTF-8 encoding)."""
    if isinstance(node, AnyChar):
        raw = [(0, MAX_CODE_POINT)]
    else:
        raw = merge_ranges(node.ranges)
        if node.negated:
            complement, low = [], 0
            for start, end in raw:
                if start > low:
                    complement.append((low, start - 1))
                low = end + 1
            if low <= MAX_CODE_POINT:
                complement.append((low, MAX_CODE_POINT))
            raw = complement
    pieces = []
    for start, end in raw:
        if start < SURROGATE_LOW:
            pieces.append((start, min(end, SURROGATE_LOW - 1)))
        if end > SURROGATE_HIGH:
            pieces.append((max(start, SURROGATE_HIGH + 1), end))
    return merge_ranges(pieces)


def merge_ranges(ranges) -> tuple[tuple[int, int], ...]:
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((start, end) for start, end in merged)


def class_key(node: CharClass | AnyChar) -> tuple:
    """The terminal key of a class: a literal when it holds one code point."""
    ranges = class_ranges(node)
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return ("lit", chr(ranges[0][0]).encode("utf-8"))
    return ("class", ranges)


def _class_char(code: int) -> str:
    """One class member, raw when that is unambiguous inside a Rust class."""
    char = chr(code)
    if char in CLASS_SPECIAL_CHARS or not (char.isprintable() or char in "\t\n\r"):
        return "\\x{%X}" % code
    return char


def class_pattern(ranges) -> str:
    """A Rust regex matching one code point of ``ranges``."""
    parts = []
    for start, end in ranges:
        parts.append(_class_char(start) if start == end else f"{_class_char(start)}-{_class_char(end)}")
    return "[" + "".join(parts) + "]"


def literals_pattern(values) -> str:
    """A Rust regex for an alternation of UTF-8 literals (for printing)."""
    return "(?:" + "|".join(regex_escape(_utf8(value)) for value in values) + ")"


def regex_escape(text: str) -> str:
    """``text`` as a Rust regex matching exactly it."""
    escaped = _REGEX_SPECIAL.sub(r"\\\g<0>", text)
    if escaped.isprintable():
        return escaped
    return "".join(char if char.isprintable() else "\\x{%X}" % ord(char) for char in escaped)


def _utf8(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as error:
        raise GrammarError(f"literal {value!r} is not UTF-8 and cannot be printed as KBNF") from error


def kbnf_string(text: str) -> str:
    """``text`` as a KBNF double-quoted string (reads back to the same text)."""
    escaped = text
    for char, escape in _KBNF_ESCAPES:
        if char in escaped:
            escaped = escaped.replace(char, escape)
    if not escaped.isprintable():
        escaped = "".join(char if char.isprintable() else "\\u{%X}" % ord(char) for char in escaped)
    return '"' + escaped + '"'


def _literal_kbnf(value: bytes) -> str:
    """A literal as KBNF: strings, with the bytes reserved for token terminals
    printed as the token terminals they stand for."""
    pieces, text = [], bytearray()
    for byte in value:
        if byte in KIND_OF_BYTE:
            if text:
                pieces.append(kbnf_string(_utf8(bytes(text))))
                text.clear()
            pieces.append(SPELLING[KIND_OF_BYTE[byte]])
        else:
            text.append(byte)
    if text:
        pieces.append(kbnf_string(_utf8(bytes(text))))
    return pieces[0] if len(pieces) == 1 else "(" + " ".join(pieces) + ")"


def key_to_kbnf(key: tuple) -> str:
    kind = key[0]
    if kind == "lit":
        return _literal_kbnf(key[1])
    if kind == "class":
        return "#" + kbnf_string(class_pattern(key[1]))
    if kind == "regex":
        _, pattern, regex_kind, case_insensitive = key
        if case_insensitive:
            pattern = f"(?i:{pattern})"
        prefix = {"regex": "#", "early_end": "#e", "complement": "#ex",
                  "intersection": "#&", "difference": "#-", "key_exclusion": "#!"}[regex_kind]
        return prefix + kbnf_string(pattern)
    if kind == "substrs":
        return "#substrs" + kbnf_string(key[1])
    if kind == "literals":
        return "#" + kbnf_string(literals_pattern(key[1]))
    raise ValueError(f"unknown terminal key {key!r}")


@functools.lru_cache(maxsize=4096)
def terminal_spelling(key: tuple) -> tuple[int, str]:
    """The spelling that orders and fingerprints a terminal: ``(1, KBNF
    printout)``, or ``(2, repr(key))`` for a key KBNF cannot print (a
    non-UTF-8 literal).  Memoized per process for 4,096 keys: grammars
    translated from JSON Schema share most of their terminals (string,
    number, whitespace), and printing a long pattern dominates otherwise."""
    try:
        return 1, key_to_kbnf(key)
    except GrammarError:
        return 2, repr(key)


def _states_field(key: tuple) -> str:
    """The Config field bounding the states of the key's DFA:
    ``max_product_dfa_states`` for an intersection or difference
    (``terminals.PRODUCT_KINDS``), else ``max_dfa_states``."""
    return ("max_product_dfa_states" if key[0] == "regex" and key[2] in terminals.PRODUCT_KINDS
            else "max_dfa_states")


def _bytes_field(key: tuple) -> str:
    """The Config field bounding the bytes of the key's DFA while it is
    built: ``max_product_dfa_bytes`` for an intersection or difference, else
    ``max_dfa_bytes`` (as ``_states_field``)."""
    return "max_product_dfa_bytes" if _states_field(key) == "max_product_dfa_states" \
        else "max_dfa_bytes"


def _regex_part(key: tuple) -> str:
    """The regex text of a regex key: a key exclusion's fallback pattern, else the pattern."""
    if key[2] != "key_exclusion":
        return key[1]
    parts = key[1].split(terminals.KEY_SEPARATOR)
    return parts[1] if len(parts) > 1 else ""


COMPILED_TERMINALS_SIZE = 4096
"""DFAs ``_COMPILED`` keeps (first in, first out)."""

_COMPILED: dict[tuple, object] = {}
"""(key, states limit, bytes limit, ``max_repetition``) to the DFA a
``TerminalCompiler`` of this process built for them.  Grammars translated
from JSON Schema share most terminals (strings, numbers, whitespace, member
separators), and a build is a pure function of these four (failures raise
and are not kept), so a later grammar takes the DFA without the checks and
the ``terminals`` cache lookup again."""
_COMPILED_LOCK = threading.Lock()


def clear_compiled_terminals() -> None:
    """Forget every DFA in ``_COMPILED`` (``grammask.clear_caches``)."""
    with _COMPILED_LOCK:
        _COMPILED.clear()


class TerminalCompiler:
    """Compiles DFA-backed terminal keys once each (``_COMPILED`` shares
    them between the compilers of a process) and answers emptiness and
    nullability.  ``origins`` maps a key to (rule name, Span, Source) for
    error messages."""

    def __init__(self, config: Config):
        self.config = config
        self.dfas: dict[tuple, object] = {}
        self.refused: set[tuple] = set()
        self.origins: dict[tuple, tuple[str, Optional[Span], object]] = {}
        self.joins: dict[tuple, Optional[tuple]] = {}
        """``regular._concatenation``'s answers: (first pattern, second
        pattern, case-insensitive) to the joined key, or None."""

    def dfa(self, key: tuple):
        dfa = self.dfas.get(key)
        if dfa is None:
            dfa = self.dfas[key] = self._compile(key)
        return dfa

    def try_dfa(self, key: tuple, max_states: int, max_bytes: int):
        """The DFA of ``key`` built within the given (smaller) budget, or None
        when it does not fit or the regex engine refuses it (for speculative
        rewrites that have a fallback).  A refusal is remembered per key and
        budget, so a rewrite tried again by a later pass costs nothing (a
        refused join can take a tenth of a second to fail)."""
        dfa = self.dfas.get(key)
        if dfa is None:
            attempt = (key, max_states, max_bytes)
            if attempt in self.refused:
                return None
            try:
                dfa = self.dfas[key] = self._compile(key, min(max_states, self._states_limit(key)),
                                                     min(max_bytes, self._bytes_limit(key)))
            except (LimitExceeded, RegexError):
                self.refused.add(attempt)
                return None
        return dfa

    def _states_limit(self, key: tuple) -> int:
        """The Config's states limit for the key's DFA (``_states_field``)."""
        return getattr(self.config, _states_field(key))

    def _bytes_limit(self, key: tuple) -> int:
        """The Config's bytes limit for the key's DFA (``_bytes_field``)."""
        return getattr(self.config, _bytes_field(key))

    def _compile(self, key: tuple, max_states: int | None = None, max_bytes: int | None = None):
        """The key's DFA within the limits (the Config's by default), from
        ``_COMPILED`` when a grammar of this process built it before."""
        max_states = max_states or self._states_limit(key)
        max_bytes = max_bytes or self._bytes_limit(key)
        memo_key = (key, max_states, max_bytes, self.config.max_repetition)
        dfa = _COMPILED.get(memo_key)
        if dfa is None:
            dfa = self._build(key, max_states, max_bytes)
            with _COMPILED_LOCK:
                _COMPILED[memo_key] = dfa
                if len(_COMPILED) > COMPILED_TERMINALS_SIZE:
                    del _COMPILED[next(iter(_COMPILED))]
        return dfa

    def _build(self, key: tuple, max_states: int, max_bytes: int):
        limits = {"max_states": max_states, "max_bytes": max_bytes}
        kind = key[0]
        try:
            if kind == "class":
                return terminals.compile_regex(class_pattern(key[1]), **limits)
            if kind == "regex":
                states_limit = _states_field(key)
                check_repetitions(_regex_part(key), self.config.max_repetition, limits["max_states"],
                                  states_limit)
                try:
                    return terminals.compile_regex(key[1], kind=key[2], case_insensitive=key[3],
                                                   **limits)
                except LimitExceeded as error:
                    field = {"max_dfa_states": states_limit,
                             "max_dfa_bytes": _bytes_field(key)}.get(error.limit, error.limit)
                    if field == error.limit:
                        raise
                    raise LimitExceeded(field, error.given, error.maximum,
                                        f"DFA of the {key[2]} terminal") from None
            if kind == "substrs":
                return terminals.compile_substrings(key[1], **limits)
            if kind == "literals":
                return terminals.compile_literals([value.decode("utf-8") for value in key[1]], **limits)
        except RegexError as error:
            raise self._located(key, error) from error
        raise ValueError(f"terminal key {key!r} has no DFA")

    def _located(self, key: tuple, error: RegexError) -> RegexError:
        rule, span, source = self.origins.get(key, (None, None, None))
        where = f" in rule '{rule}'" if rule else ""
        excerpt = ""
        if span is not None and source is not None:
            line, column = source.line_column(span.start)
            where += f" (line {line}, column {column})"
            excerpt = "\n" + source.excerpt(span)
        position = f" at character {error.position} of the pattern" if error.position is not None else ""
        return RegexError(f"invalid regex {key[1]!r}{position}{where}: {error.reason or error}{excerpt}",
                          pattern=error.pattern or str(key[1]), position=error.position,
                          reason=error.reason or str(error))

    def is_empty(self, key: tuple) -> bool:
        """The terminal's language is empty."""
        if key[0] == "lit":
            return False
        if key[0] == "class":
            return not key[1]
        return self.dfa(key).is_empty_language

    def has_nonempty_match(self, key: tuple) -> bool:
        """Some string of at least one byte matches (what a terminal stands
        for once nullable elimination made it optional)."""
        if key[0] == "lit":
            return True
        if key[0] == "class":
            return bool(key[1])
        return self.dfa(key).has_nonempty_match

    def is_nullable(self, key: tuple) -> bool:
        """The terminal matches the empty string."""
        if key[0] in ("lit", "class"):
            return False
        return bool(self.dfa(key).matches_empty)
