"""``format: regex`` as a context-free grammar: the JSON strings that spell a
regular expression valid both in ECMA-262 (with and without the ``u`` flag)
and in Python's ``re`` (what ``jsonschema``'s format checker compiles).

What it computes: ``regex_format_node(translator)``, the grammar node of a
JSON string whose decoded text is a pattern of the grammar below.  Groups
nest, so the language is not regular (``formats.NOT_ENFORCED`` said so);
everything between two parentheses is, and sits in one regex terminal.

Data layout: the pattern grammar, over decoded characters (each terminal is
turned into a regex over the JSON string text by
``strings.translate_pattern(..., ascii_escapes=False)``: printable ASCII raw
only, every other character in any JSON spelling)::

    sequence(d) = FLAT? (unit(d) FLAT?)*
    unit(d)     = OPEN sequence(d+1) (CLOSE | CLOSE_QUANTIFIED)
                | OPEN_LOOKAHEAD sequence(d+1) CLOSE
                | LOOKBEHIND
    FLAT        = (term | "|")+          term = atom quantifier? | ^ | $ | \\b | \\B
    atom        = a character other than ^$\\.*+?()[]{}| | "." | an escape | a class

``d`` counts the groups open, at most ``MAX_GROUP_NESTING`` (rules
``sequence(1)`` .. ``sequence(MAX_GROUP_NESTING + 1)``, the deepest
without groups).  Escapes: ``\\d \\D \\s \\S \\w \\W \\f \\n \\r \\t \\v``,
``\\xHH``, ``\\uHHHH`` and an escaped syntax character or ``/`` (``\\b``,
``\\-`` too inside a class).  Quantifiers: ``* + ?``, ``{n}``, ``{n,}``,
``{n,m}`` with n <= m, numbers of at most three digits (n of at most two
in ``{n,m}``), each lazy or not.
A class is ``[``, an optional ``^``, items (a character other than
``\\ ] [ -``, an escape, or a range ``a-z`` of printable ASCII characters in
order), with ``-`` allowed first, last and right after a range (a literal
there in both dialects) and ``^`` escaped.  A lookbehind holds one or more
single-character atoms and no group (Python needs a fixed width).

Invariant: every string of the language compiles in Python's ``re`` and as
an ECMA-262 ``RegExp`` with and without ``u`` (``tests/test_json_schema_regex_format.py``
checks both on random strings and random walks).  Stricter than both, and
documented in ``formats.GRAMMAR_FORMATS`` (the grammar refuses them): back
references, named groups, inline flags and other ``(?`` forms one of the
two dialects lacks, a lookbehind that is not a run of single characters,
quantifier numbers of four digits or more, ranges between escapes or
non-ASCII characters, an empty class, a raw ``[`` inside a class, ``-``
between two class items other than after a range, ``--``, a raw ``^``
inside a class, ``{``, ``}`` and ``]`` unescaped outside a class (Python
and ECMA-262 without ``u`` read them as literals, ECMA-262 with ``u``
refuses them), ``\\0`` and other escapes only one dialect has, and groups
nested deeper than ``MAX_GROUP_NESTING`` (Python's parser recurses per
group and fails with ``RecursionError`` a few hundred levels deep).

Sources: ECMA-262 section 22.2.1 (Patterns, with its early errors); Python's
``re`` syntax (``sre_parse``).
"""

from __future__ import annotations

import functools
from typing import Any

from grammask.json_schema import strings
from grammask.json_schema.numbers import nonnegative_integer_range
from grammask.json_schema.regex_text import (
    alternation, char_class, escape_char, intersect_ranges, subtract_ranges,
)

MAX_GROUP_NESTING = 32
"""Most groups open at once in an accepted pattern (see the module docstring)."""

_HEX = "[0-9A-Fa-f]"
_SYNTAX_ESCAPED = "[\\^$\\\\.*+?()\\[\\]{}|/]"
"""A syntax character or ``/`` after a backslash: a literal in both dialects."""

_CHAR_ESCAPE = f"\\\\(?:[fnrtv]|x{_HEX}{{2}}|u{_HEX}{{4}}|{_SYNTAX_ESCAPED})"
_CLASS_ESCAPE = "\\\\[dDsSwW]"
_PATTERN_CHAR = "[^\\^$\\\\.*+?()\\[\\]{}|]"
_ASSERTION = "\\^|\\$|\\\\[bB]"

_CLASS_RAW = "[^\\\\\\]\\[\\-^]"
"""A class item written raw: any character but ``\\ ] [ - ^`` (a raw ``^``
first would negate the class)."""
_CLASS_CHAR_ESCAPE = f"\\\\(?:[fnrtvb]|x{_HEX}{{2}}|u{_HEX}{{4}}|{_SYNTAX_ESCAPED}|-)"


_RANGE_ENDS = subtract_ranges(((0x20, 0x7E),), tuple((ord(c), ord(c)) for c in "\\][-^"))
"""Class range ends written raw: printable ASCII but ``\\ ] [ - ^``."""


def _ranges() -> str:
    """Class ranges in order between ends of ``_RANGE_ENDS``: ``a-z``, ``!-/``."""
    return alternation([
        f"{escape_char(low)}-{char_class(intersect_ranges(_RANGE_ENDS, ((low, 0x7E),)))}"
        for first, last in _RANGE_ENDS for low in range(first, last + 1)])


def _pairs() -> str:
    """``n,m`` with n <= m, n of at most two digits and m of at most three
    (canonical decimals)."""
    return alternation([f"{n},{nonnegative_integer_range(n, 999)}" for n in range(100)])


@functools.lru_cache(maxsize=1)
def _patterns() -> dict[str, str]:
    """The terminals' regexes over decoded characters."""
    single = f"(?:{_CLASS_RAW}|{_CLASS_CHAR_ESCAPE}|{_CLASS_ESCAPE})"
    ranges = _ranges()
    # a "-" right after a range is a literal in both dialects; "--" never
    items = f"(?:{ranges}-?|{single})*(?:{ranges}|{single})-?"
    klass = f"\\[\\^?-?{items}\\]|\\[\\^?-\\]"
    number = nonnegative_integer_range(0, 999)
    quantifier = f"(?:[*+?]|\\{{{number}\\}}|\\{{{number},\\}}|\\{{{_pairs()}\\}})\\??"
    atom = f"(?:{_PATTERN_CHAR}|\\.|{_CHAR_ESCAPE}|{_CLASS_ESCAPE}|{klass})"
    term = f"(?:{atom}(?:{quantifier})?|{_ASSERTION})"
    return {
        "flat": f"(?:{term}|\\|)+",
        "open": "\\((?:\\?:)?",
        "open_lookahead": "\\(\\?[=!]",
        "close": "\\)",
        "close_quantified": f"\\){quantifier}",
        "lookbehind": f"\\(\\?<[=!]{atom}+\\)",
    }


@functools.lru_cache(maxsize=1)
def _json_texts() -> dict[str, str]:
    """The terminals' regexes over the JSON string text."""
    return {name: strings.translate_pattern(f"^(?:{pattern})$", ascii_escapes=False)[0]
            for name, pattern in _patterns().items()}


def regex_format_node(translator) -> Any:
    """A JSON string (quotes included) holding a pattern of the module's
    grammar; its rules are made once per translation (``shared_rule``)."""
    return translator.shared_rule(_RULE_KEY, "regex_format", lambda: _string(translator))


_RULE_KEY = ("format", "regex")
"""The key of the grammar's rule among the translator's shared rules."""


def _string(translator) -> Any:
    rx = {name: translator.rx(text) for name, text in _json_texts().items()}

    def sequence(inner):
        unit = rx["lookbehind"] if inner is None else translator.alt([
            translator.seq(rx["open"], inner, translator.alt([rx["close"],
                                                              rx["close_quantified"]])),
            translator.seq(rx["open_lookahead"], inner, rx["close"]),
            rx["lookbehind"]])
        flat = translator.repeat(rx["flat"], 0, 1)
        return translator.seq(flat, translator.repeat(translator.seq(unit, flat), 0, None))

    inner = None
    for depth in range(MAX_GROUP_NESTING + 1, 0, -1):
        inner = translator.define(translator.fresh_name(f"regex_format_{depth}"), sequence(inner))
    return translator.seq(translator.lit('"'), inner, translator.lit('"'))
