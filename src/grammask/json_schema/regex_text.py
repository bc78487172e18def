"""Regex text for the JSON Schema translator: escaping, code point sets, digit ranges.

What it computes: pattern text in the common subset of Rust ``regex`` syntax
(what grammask's DFA terminals run) and Python ``re`` syntax (what the tests'
independent oracles run), for

- single characters and sets of code points (``char_class``);
- every JSON *encoding* of one character from a set (``json_char_regex``): the
  raw UTF-8 form where JSON allows it unescaped, the two-character escapes
  (``\\"``, ``\\\\``, ``\\/``, ``\\b``, ``\\f``, ``\\n``, ``\\r``, ``\\t``) and the
  ``\\uXXXX`` forms (hex digits in either case; characters above U+FFFF as a
  surrogate pair of two ``\\u`` escapes).  So a JSON string constraint stated
  on decoded characters (length, pattern, const) holds exactly on the encoded
  text, whatever escapes a writer chose (docs/design.md section 10: peers reject
  ``\\uXXXX``);
- fixed-width digit ranges in any base (``fixed_width_range``): the
  classic decomposition of ``[lo, hi]`` into at most ``2 * width`` prefix
  branches, used for hex escapes here and for integer ranges in
  ``numbers.py``.

Data layout: a code point set is a tuple of inclusive ``(lo, hi)`` pairs,
sorted, disjoint and non-adjacent (``normalize_ranges`` establishes this).
Surrogate code points (U+D800..U+DFFF) are never members of a set: they are
not characters, and a lone ``\\uD8xx`` escape is rejected (RFC 8259 section
8.2 leaves its meaning undefined).

Escaping rule (valid in both dialects): ASCII letters and digits and ``<``,
``>``, space stay as they are (Rust forbids escaping ``<``/``>``); other ASCII
punctuation is backslash-escaped (Rust allows escaping any other ASCII
punctuation, including ``&``, ``-`` and ``~``, which are set operators inside
its classes); control characters are ``\\xHH``; non-ASCII code points are
``\\uXXXX`` or ``\\UXXXXXXXX`` (exact digit counts, accepted by both).
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

MAX_CODE_POINT = 0x10FFFF
SURROGATE_LO = 0xD800
SURROGATE_HI = 0xDFFF

CodePointSet = tuple[tuple[int, int], ...]

ALL_CHARACTERS: CodePointSet = ((0, SURROGATE_LO - 1), (SURROGATE_HI + 1, MAX_CODE_POINT))

# JSON's two-character escapes: decoded code point -> escape letter.
SHORT_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r",
                 0x09: "t"}

# Code points JSON forbids unescaped inside a string.
MUST_ESCAPE: CodePointSet = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C))


def normalize_ranges(ranges: Iterable[tuple[int, int]]) -> CodePointSet:
    """Sort, merge overlapping/adjacent pairs and drop surrogates."""
    pieces = []
    for lo, hi in ranges:
        if lo > hi:
            continue
        if lo <= SURROGATE_HI and hi >= SURROGATE_LO:
            if lo < SURROGATE_LO:
                pieces.append((lo, SURROGATE_LO - 1))
            if hi > SURROGATE_HI:
                pieces.append((SURROGATE_HI + 1, hi))
        else:
            pieces.append((lo, hi))
    pieces.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in pieces:
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def complement_ranges(ranges: CodePointSet) -> CodePointSet:
    """All characters (surrogates excluded) outside ``ranges``."""
    result = []
    next_lo = 0
    for lo, hi in normalize_ranges(ranges):
        if lo > next_lo:
            result.append((next_lo, lo - 1))
        next_lo = hi + 1
    if next_lo <= MAX_CODE_POINT:
        result.append((next_lo, MAX_CODE_POINT))
    return normalize_ranges(result)


def intersect_ranges(a: CodePointSet, b: CodePointSet) -> CodePointSet:
    result = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            result.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return normalize_ranges(result)


def subtract_ranges(a: CodePointSet, b: CodePointSet) -> CodePointSet:
    return intersect_ranges(a, complement_ranges(b))


def contains(ranges: CodePointSet, code_point: int) -> bool:
    return any(lo <= code_point <= hi for lo, hi in ranges)


def escape_char(code_point: int) -> str:
    """One code point as regex text that matches exactly that character."""
    if code_point < 0x80:
        char = chr(code_point)
        if char.isalnum() or char in "<> ":
            return char
        if code_point < 0x20 or code_point == 0x7F:
            return f"\\x{code_point:02X}"
        return "\\" + char
    if code_point <= 0xFFFF:
        return f"\\u{code_point:04X}"
    return f"\\U{code_point:08X}"


def escape_literal(text: str) -> str:
    return "".join(escape_char(ord(char)) for char in text)


def char_class(ranges: CodePointSet) -> str:
    """A regex matching one character of a non-empty set (a class or a single char)."""
    ranges = normalize_ranges(ranges)
    if not ranges:
        raise ValueError("empty code point set has no regex")
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return escape_char(ranges[0][0])
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(escape_char(lo))
        elif hi == lo + 1:
            parts.append(escape_char(lo) + escape_char(hi))
        else:
            parts.append(f"{escape_char(lo)}-{escape_char(hi)}")
    return "[" + "".join(parts) + "]"


def alternation(branches: list[str]) -> str:
    """``(?:a|b|...)``, or the single branch itself."""
    unique = list(dict.fromkeys(branches))
    if len(unique) == 1:
        return unique[0]
    return "(?:" + "|".join(unique) + ")"


def group(text: str) -> str:
    """Wrap ``text`` so a following quantifier applies to all of it."""
    if len(text) == 1 or (text.startswith("(?:") and _is_one_group(text)):
        return text
    if text.startswith("[") and text.endswith("]") and text.count("[") == 1:
        return text
    return f"(?:{text})"


_HIDDEN = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]?", re.S)
"""An escape (it hides the next character) or a bracket class (to its first
unescaped ``]``): text whose parentheses are no groups."""

_NOT_PARENS = re.compile(r"[^()]+")


@functools.lru_cache(maxsize=4096)
def _is_one_group(text: str) -> bool:
    """No group of ``text`` closes at depth 0 before its last character (so a
    text opening with ``(?:`` is that one group).  Escapes and classes become
    one placeholder character each, keeping the order of what remains; the
    parentheses left are then counted.  Memoized: the translator wraps the
    same alternations again and again (150 MaskBench schemas: 29,624 calls,
    260 distinct texts)."""
    visible = _HIDDEN.sub("x", text)
    parens = _NOT_PARENS.sub("", visible)
    depth = 0
    for position, char in enumerate(parens):
        if char == "(":
            depth += 1
            continue
        depth -= 1
        if depth == 0:
            return position == len(parens) - 1 and visible.endswith(")")
    return True


def repeat(text: str, n_min: int, n_max: int | None) -> str:
    """``text`` repeated ``n_min`` to ``n_max`` times (None: unbounded)."""
    if n_max is not None and n_max == 0:
        return ""
    if n_min == 1 and n_max == 1:
        return text
    atom = group(text)
    if n_max is None:
        suffix = "*" if n_min == 0 else "+" if n_min == 1 else f"{{{n_min},}}"
    elif n_min == n_max:
        suffix = f"{{{n_min}}}"
    elif n_min == 0 and n_max == 1:
        suffix = "?"
    else:
        suffix = f"{{{n_min},{n_max}}}"
    return atom + suffix


# ---------------------------------------------------------------- digit ranges

def digit_class(lo: int, hi: int, base: int = 10) -> str:
    """One digit with value in ``[lo, hi]``; hex letters in both cases."""
    if base == 10:
        return escape_char(48 + lo) if lo == hi else f"[{lo}-{hi}]"
    ranges = []
    if lo <= 9:
        ranges.append((48 + lo, 48 + min(hi, 9)))
    if hi >= 10:
        first = max(lo, 10) - 10
        last = hi - 10
        ranges.append((0x61 + first, 0x61 + last))
        ranges.append((0x41 + first, 0x41 + last))
    return char_class(normalize_ranges(ranges))


def to_digits(value: int, width: int, base: int) -> list[int]:
    digits = []
    for _ in range(width):
        digits.append(value % base)
        value //= base
    return digits[::-1]


def fixed_width_range(lo: int, hi: int, width: int, base: int = 10) -> str:
    """Strings of exactly ``width`` digits (leading zeros included) whose value is in [lo, hi]."""
    if not 0 <= lo <= hi < base ** width:
        raise ValueError(f"bad range [{lo}, {hi}] for width {width}")
    return _range_digits(to_digits(lo, width, base), to_digits(hi, width, base), base)


def _range_digits(lo: list[int], hi: list[int], base: int) -> str:
    width = len(lo)
    if width == 0:
        return ""
    top = base - 1
    if all(d == 0 for d in lo) and all(d == top for d in hi):
        return repeat(digit_class(0, top, base), width, width)
    if lo[0] == hi[0]:
        return digit_class(lo[0], lo[0], base) + _range_digits(lo[1:], hi[1:], base)
    rest = width - 1
    branches = []
    low_full = all(d == 0 for d in lo[1:])
    high_full = all(d == top for d in hi[1:])
    first_full = lo[0] if low_full else lo[0] + 1
    last_full = hi[0] if high_full else hi[0] - 1
    if not low_full:
        branches.append(digit_class(lo[0], lo[0], base)
                        + _range_digits(lo[1:], [top] * rest, base))
    if first_full <= last_full:
        branches.append(digit_class(first_full, last_full, base)
                        + repeat(digit_class(0, top, base), rest, rest))
    if not high_full:
        branches.append(digit_class(hi[0], hi[0], base)
                        + _range_digits([0] * rest, hi[1:], base))
    return alternation(branches)


# ------------------------------------------------------ JSON-encoded characters

def _hex4_ranges(ranges: CodePointSet) -> list[str]:
    return ["\\\\u" + fixed_width_range(lo, hi, 4, 16) for lo, hi in ranges]


def _surrogate_pair_branches(lo: int, hi: int) -> list[str]:
    """``\\uHHHH\\uLLLL`` pairs for astral code points in [lo, hi] (both > U+FFFF)."""
    def split(code_point: int) -> tuple[int, int]:
        offset = code_point - 0x10000
        return 0xD800 + (offset >> 10), 0xDC00 + (offset & 0x3FF)

    high_lo, low_lo = split(lo)
    high_hi, low_hi = split(hi)

    def pair(high_a: int, high_b: int, low_a: int, low_b: int) -> str:
        return ("\\\\u" + fixed_width_range(high_a, high_b, 4, 16)
                + "\\\\u" + fixed_width_range(low_a, low_b, 4, 16))

    if high_lo == high_hi:
        return [pair(high_lo, high_lo, low_lo, low_hi)]
    branches = []
    first_full = high_lo if low_lo == 0xDC00 else high_lo + 1
    last_full = high_hi if low_hi == 0xDFFF else high_hi - 1
    if low_lo != 0xDC00:
        branches.append(pair(high_lo, high_lo, low_lo, 0xDFFF))
    if first_full <= last_full:
        branches.append(pair(first_full, last_full, 0xDC00, 0xDFFF))
    if low_hi != 0xDFFF:
        branches.append(pair(high_hi, high_hi, 0xDC00, low_hi))
    return branches


_json_char_cache: dict[tuple[CodePointSet, bool], str] = {}

PRINTABLE_ASCII: CodePointSet = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E))
"""Printable ASCII without ``"`` and ``\\``: what json.dumps always writes raw."""


def json_char_regex(ranges: CodePointSet, ascii_escapes: bool = True) -> str:
    """Every JSON string encoding of one character from ``ranges`` (non-empty).

    ``ascii_escapes=False`` drops the escaped spellings (``\\u0041``, ``\\/``)
    of PRINTABLE_ASCII members: the canonical spelling used for literal
    strings (keys, enum/const) and formats, whose DFAs stay small.
    """
    ranges = normalize_ranges(ranges)
    cached = _json_char_cache.get((ranges, ascii_escapes))
    if cached is not None:
        return cached
    if not ranges:
        raise ValueError("empty code point set has no regex")
    branches = []
    raw = subtract_ranges(ranges, MUST_ESCAPE)
    if raw:
        branches.append(char_class(raw))
    escaped = ranges if ascii_escapes else subtract_ranges(ranges, PRINTABLE_ASCII)
    short = sorted(letter for code_point, letter in SHORT_ESCAPES.items()
                   if contains(escaped, code_point))
    if short:
        letters = normalize_ranges((ord(letter), ord(letter)) for letter in short)
        branches.append("\\\\" + char_class(letters))
    bmp = intersect_ranges(escaped, ((0, 0xFFFF),))
    branches.extend(_hex4_ranges(bmp))
    astral = intersect_ranges(ranges, ((0x10000, MAX_CODE_POINT),))
    for lo, hi in astral:
        branches.extend(_surrogate_pair_branches(lo, hi))
    text = alternation(branches)
    if len(_json_char_cache) < 4096:
        _json_char_cache[ranges, ascii_escapes] = text
    return text


JSON_CHAR = json_char_regex(ALL_CHARACTERS)
"""Any one JSON string character, in any of its encodings."""


_PLAIN_TEXT = re.compile(r'[\x20\x21\x23-\x5B\x5D-\x7E]*')


def is_plain_text(text: str) -> bool:
    """Whether every character of ``text`` is PRINTABLE_ASCII (one spelling only):
    0x20-0x7E but ``"`` (0x22) and ``\\`` (0x5C)."""
    return _PLAIN_TEXT.fullmatch(text) is not None


def json_string_literal_regex(text: str, ascii_escapes: bool = False) -> str:
    """JSON encodings of the string ``text``, quotes included.

    By default the canonical spellings: printable ASCII raw, other
    characters raw or escaped (``\\u00e9``, ``\\n``, ``\\"``), which covers
    ``json.dumps`` with and without ``ensure_ascii``.  ``ascii_escapes=True``
    accepts every spelling.  A lone surrogate (only an escape can spell it)
    is matched as its ``\\uXXXX`` forms.
    """
    parts = []
    for char in text:
        code_point = ord(char)
        if SURROGATE_LO <= code_point <= SURROGATE_HI:
            parts.append("\\\\u" + fixed_width_range(code_point, code_point, 4, 16))
        elif not ascii_escapes and contains(PRINTABLE_ASCII, code_point):
            parts.append(escape_char(code_point))
        else:
            parts.append(group(json_char_regex(((code_point, code_point),), ascii_escapes)))
    return '"' + "".join(parts) + '"'
