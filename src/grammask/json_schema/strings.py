"""JSON string regexes: lengths, ECMA-262 ``pattern``, key exclusion.

What it computes: regex text (Rust/Python common syntax) over the *encoded*
JSON string text, for constraints stated on the *decoded* string:

- ``string_regex(min, max)``: ``"`` + ``JSON_CHAR{min,max}`` + ``"``, where
  ``JSON_CHAR`` is every encoding of one character (``regex_text``), so
  ``minLength``/``maxLength`` count code points whether a character is
  written raw, as ``\\n`` or as ``\\u00e9`` (a surrogate pair is one).
- ``translate_pattern(p)``: the JSON Schema ``pattern`` (ECMA-262 syntax,
  *search* semantics: unanchored unless ``^``/``$`` say otherwise) parsed
  with Python's own regex parser (``re._parser``) and re-emitted character
  set by character set as ``json_char_regex`` alternatives.  Where ECMA-262
  (the specification) and Python's ``re`` (what validators such as
  ``jsonschema`` run) differ, the grammar accepts only what both accept, so
  it is never looser under either reading: ``\\d`` ``\\w`` are ASCII, ``\\s``
  is the white space both agree on, ``\\D`` ``\\W`` ``\\S`` exclude what either
  counts as digit/word/space, ``.`` excludes the four ECMA line
  terminators, ``$`` is the end of the string only.  ``^``/``$`` may sit
  anywhere outside a repeat (``^01$|^07$``, ``(^|,)x``, ``^([^,]|$)``): each
  piece of the pattern is kept as up to four regexes keyed by whether a
  ``^`` / ``$`` pinned it to the string's start / end (``_Anchored``), and
  only the unpinned sides get the ``.*`` of search semantics; a pattern
  with an empty match not pinned to both ends (``([A-Z]+)?``) matches every
  string and becomes ``.*`` itself.  Unsupported
  (``PatternUnsupported``, the message says why): backreferences,
  look-around, word boundaries, anchors inside a repeat other than ``?``,
  patterns no string matches (``/^x$/``: ``PatternMatchesNothing``, which
  the string node reads as "no string"), ``\\p{..}`` classes.
- ``translate_pattern_excluding(p)``: the same, and for a guarded run
  ``^(?:(?!X1)...(?!Xn)C)*$`` (negative look-aheads before each character)
  the run's regex with the regexes of the strings holding an ``Xi`` match,
  which the string node removes (a ``difference`` terminal).
- ``string_not_in_parts(names)``: strings whose decoded value is none of
  ``names`` (the keys of ``additionalProperties``), built from the names'
  trie (see the function for its shape and what it leaves out).  The
  translator uses it only for names containing ``"`` or ``\\``; other name
  sets get the same language as ``key_exclusion`` terminals, which skip the
  regex spelling and its determinization.

Invariant: every function either returns a regex whose language is exactly
the stated set of encoded strings, or raises ``PatternUnsupported``.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

import numpy as np

try:
    import re._constants as sre_constants
    import re._parser as sre_parse
except ImportError:  # Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

from grammask.json_schema.regex_text import (
    ALL_CHARACTERS, JSON_CHAR, MAX_CODE_POINT, MUST_ESCAPE, SURROGATE_HI, SURROGATE_LO,
    CodePointSet, alternation, char_class,
    complement_ranges, contains, group, intersect_ranges, json_char_regex,
    normalize_ranges, repeat,
)

ANY_STRING_CONTENT = repeat(JSON_CHAR, 0, None)

ECMA_DIGIT: CodePointSet = ((0x30, 0x39),)
ECMA_WORD: CodePointSet = normalize_ranges([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
ECMA_SPACE: CodePointSet = normalize_ranges([
    (0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
    (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)])
ECMA_LINE_TERMINATORS: CodePointSet = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))

MAX_CASE_FOLD_SET = 4096
"""Sets larger than this get ASCII-only case folding under ``(?i)``."""


class PatternUnsupported(Exception):
    """A pattern construct with no regular-language equivalent here."""


class PatternMatchesNothing(PatternUnsupported):
    """A pattern no string matches (an anchor where no position satisfies it)."""


def string_regex(n_min: int, n_max: Optional[int]) -> str:
    return '"' + repeat(JSON_CHAR, n_min, n_max) + '"'


# ------------------------------------------------------------------- patterns

_python_sets: dict[str, CodePointSet] = {}


def python_class(escape: str) -> CodePointSet:
    """The code points Python's ``re`` matches with ``\\d``, ``\\w`` or ``\\s``:
    the runs of matching characters in the text of every code point (two
    texts, below and above the surrogates), found by ``re`` itself in one
    pass (a ``match`` per code point took 0.4-0.6 s an escape)."""
    if escape not in _python_sets:
        runs = re.compile(f"(?:{escape})+")
        members = []
        for low, high in ((0, SURROGATE_LO - 1), (SURROGATE_HI + 1, MAX_CODE_POINT)):
            text = np.arange(low, high + 1, dtype="<u4").tobytes().decode("utf-32-le")
            members.extend((low + found.start(), low + found.end() - 1)
                           for found in runs.finditer(text))
        _python_sets[escape] = normalize_ranges(members)
    return _python_sets[escape]


def _category_set(category) -> CodePointSet:
    """Class escapes where ECMA-262 and Python's re agree (see the module
    docstring): \\d \\w \\s are the intersection of both meanings, \\D \\W \\S
    the complement of their union."""
    if category == sre_constants.CATEGORY_DIGIT:
        return ECMA_DIGIT
    if category == sre_constants.CATEGORY_WORD:
        return ECMA_WORD
    if category == sre_constants.CATEGORY_SPACE:
        return intersect_ranges(ECMA_SPACE, python_class(r"\s"))
    if category == sre_constants.CATEGORY_NOT_DIGIT:
        return complement_ranges(python_class(r"\d"))
    if category == sre_constants.CATEGORY_NOT_WORD:
        return complement_ranges(python_class(r"\w"))
    if category == sre_constants.CATEGORY_NOT_SPACE:
        return complement_ranges(normalize_ranges(ECMA_SPACE + python_class(r"\s")))
    raise PatternUnsupported(f"unsupported class escape {category}")


_CATEGORIES = (sre_constants.CATEGORY_DIGIT, sre_constants.CATEGORY_NOT_DIGIT,
               sre_constants.CATEGORY_WORD, sre_constants.CATEGORY_NOT_WORD,
               sre_constants.CATEGORY_SPACE, sre_constants.CATEGORY_NOT_SPACE)

_START_ANCHORS = (sre_constants.AT_BEGINNING, sre_constants.AT_BEGINNING_STRING)
_END_ANCHORS = (sre_constants.AT_END, sre_constants.AT_END_STRING)
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT)


def _ecma_to_python(pattern: str) -> str:
    """Rewrite the few ECMA spellings Python's parser reads differently."""
    pattern = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    return pattern.replace("[^]", "[\\s\\S]")


def parse_pattern(pattern: str):
    try:
        return sre_parse.parse(_ecma_to_python(pattern))
    except (re.error, OverflowError, RecursionError) as error:
        raise PatternUnsupported(f"cannot parse pattern {pattern!r}: {error}") from None


@functools.lru_cache(maxsize=4096)
def translate_pattern(pattern: str, ascii_escapes: bool = True) -> tuple[str, int, Optional[int]]:
    """(regex over encoded string content, min length, max length or None).

    ``ascii_escapes=False`` (used for ``formats.FORMAT_PATTERNS``) accepts printable ASCII
    characters only raw (see ``regex_text.json_char_regex``).  Memoized (a
    pure function of its arguments; the result is immutable): a schema's
    checks meet one pattern many times (a disjointness or negation test per
    branch pair re-reads the same ``pattern``: 4,210 calls on 72 patterns
    over the 150-schema MaskBench sample), and schemas share patterns.
    A pattern that raises is not memoized.
    """
    parsed = parse_pattern(pattern)
    flags = parsed.state.flags
    if flags & sre_constants.SRE_FLAG_MULTILINE:
        raise PatternUnsupported(f"multiline flag in pattern {pattern!r}")
    translator = _PatternTranslator(flags, ascii_escapes)
    regex, anchored_both = translator.top(list(parsed))
    low, high = parsed.getwidth()
    if not anchored_both or high >= sre_constants.MAXREPEAT:
        return regex, low, None
    return regex, low, high


def translate_pattern_excluding(pattern: str, ascii_escapes: bool = True
                                ) -> tuple[str, list[str], int, Optional[int]]:
    """``translate_pattern``'s (regex, min length, max length or None) and
    the regexes of the strings it excludes beside it (over the same encoded
    content, each to be matched in full): empty unless the pattern is a
    run of one character class, each position guarded by negative
    look-aheads, ``^(?:(?!X1)...(?!Xn)C){m,M}$`` (``^((?!mode).)*$``).

    That form is exact as ``C{m,M}`` minus the strings holding a match of
    some ``Xi``: the run visits every position of the string (``$`` is its
    end), and a look-ahead at a position reads the rest of the string, so
    an ``Xi`` match may start at no position.  The ``Xi`` must be free of
    anchors and never empty (``(?!)`` of an empty match fails everywhere),
    and read alike by ECMA-262 and Python (``_read_alike``): the strings
    removed are those holding a match, so a reading of ``Xi`` narrower
    than either (``\\s``, ``.``) would accept what one of them rejects.
    Raises ``PatternUnsupported`` like ``translate_pattern`` otherwise."""
    try:
        content, low, high = translate_pattern(pattern, ascii_escapes=ascii_escapes)
        return content, [], low, high
    except PatternMatchesNothing:
        raise
    except PatternUnsupported:
        guarded = _guarded_run(parse_pattern(pattern), ascii_escapes)
        if guarded is None:
            raise
        return guarded


def _guarded_run(parsed, ascii_escapes: bool) -> Optional[tuple[str, list[str], int, Optional[int]]]:
    """``translate_pattern_excluding``'s result for the guarded-run form, or None."""
    items = list(parsed)
    flags = sre_constants.SRE_FLAG_MULTILINE | sre_constants.SRE_FLAG_IGNORECASE
    if not ascii_escapes or parsed.state.flags & flags or len(items) != 3 \
            or items[0] not in [(sre_constants.AT, anchor) for anchor in _START_ANCHORS] \
            or items[2] not in [(sre_constants.AT, anchor) for anchor in _END_ANCHORS] \
            or items[1][0] not in _REPEATS:
        return None
    n_min, n_max, body = items[1][1]
    body = list(body)
    if len(body) == 1 and body[0][0] == sre_constants.SUBPATTERN \
            and not body[0][1][1] and not body[0][1][2]:
        body = list(body[0][1][3])
    if len(body) < 2 or body[-1][0] not in _ONE_CHARACTER \
            or any(op != sre_constants.ASSERT_NOT or argument[0] != 1 for op, argument in body[:-1]):
        return None
    translator = _PatternTranslator(parsed.state.flags, ascii_escapes)
    removed = []
    try:
        for _, (_, inner) in body[:-1]:
            inner = list(inner)
            if not _read_alike(inner) or _nullable(inner):
                return None
            removed.append(ANY_STRING_CONTENT + translator.sequence(inner) + ANY_STRING_CONTENT)
        character = translator.item(*body[-1])
    except PatternUnsupported:
        return None
    high = None if n_max >= sre_constants.MAXREPEAT else n_max
    return repeat(character, n_min, high), removed, n_min, high


_ONE_CHARACTER = (sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.ANY,
                  sre_constants.IN)


def _read_alike(items) -> bool:
    """Whether parsed ``items`` match the same strings under ECMA-262 and
    Python's ``re``: literals, classes of literals and ranges, groups
    without flags, alternations and repeats (no ``.``, class escapes,
    anchors or look-arounds)."""
    for op, argument in items:
        if op in (sre_constants.LITERAL, sre_constants.NOT_LITERAL):
            continue
        if op == sre_constants.IN:
            if any(kind not in (sre_constants.NEGATE, sre_constants.LITERAL, sre_constants.RANGE)
                   for kind, _ in argument):
                return False
        elif op == sre_constants.BRANCH:
            if not all(_read_alike(branch) for branch in argument[1]):
                return False
        elif op == sre_constants.SUBPATTERN:
            if argument[1] or argument[2] or not _read_alike(argument[3]):
                return False
        elif op in _REPEATS:
            if not _read_alike(argument[2]):
                return False
        else:
            return False
    return True


class _PatternTranslator:
    def __init__(self, flags: int, ascii_escapes: bool):
        self.ascii_escapes = ascii_escapes
        self.ignore_case = bool(flags & sre_constants.SRE_FLAG_IGNORECASE)
        self.dot_all = bool(flags & sre_constants.SRE_FLAG_DOTALL)

    def top(self, items: list) -> tuple[str, bool]:
        """The regex of the whole pattern (search semantics) and whether every
        way to match it is anchored at both ends of the string."""
        pieces = self.anchored(items)
        if not pieces:
            raise PatternMatchesNothing("matches no string: an anchor sits where no string "
                                        "position satisfies it")
        if any(nullable for key, (_, nullable) in pieces.items() if key != (True, True)):
            # An empty match at the start or end of any string (``(x+)?``,
            # ``^a*``): every string matches, and the plain regex keeps the
            # intersections with lengths small.
            return ANY_STRING_CONTENT, False
        branches = []
        for (at_start, at_end), (regex, _) in pieces.items():
            branches.append(("" if at_start else ANY_STRING_CONTENT) + regex
                            + ("" if at_end else ANY_STRING_CONTENT))
        return alternation(branches), set(pieces) == {(True, True)}

    def anchored(self, items) -> "_Anchored":
        """A sequence as ``_Anchored`` pieces, resolving ``^``/``$`` anywhere
        outside a repeat (see ``_Anchored``)."""
        result: _Anchored = {(False, False): ("", True)}
        for op, argument in items:
            result = _concatenate(result, self.anchored_item(op, argument))
        return result

    def anchored_item(self, op, argument) -> "_Anchored":
        if op == sre_constants.AT:
            if argument in _START_ANCHORS:
                return {(True, False): ("", True)}
            if argument in _END_ANCHORS:
                return {(False, True): ("", True)}
            raise PatternUnsupported(_AT_REASONS.get(argument, f"unsupported assertion {argument}"))
        if op == sre_constants.BRANCH:
            result: _Anchored = {}
            for branch in argument[1]:
                result = _union(result, self.anchored(branch))
            return result
        if op == sre_constants.SUBPATTERN and _has_anchor([(op, argument)]):
            _, add_flags, del_flags, inner = argument
            saved = (self.ignore_case, self.dot_all)
            self.set_flags(add_flags, del_flags)
            try:
                pieces = self.anchored(inner)
            finally:
                self.ignore_case, self.dot_all = saved
            return {key: (group(regex) if regex else "", nullable)
                    for key, (regex, nullable) in pieces.items()}
        if op in _REPEATS and _has_anchor(argument[2]):
            n_min, n_max, inner = argument
            if (n_min, n_max) != (0, 1):
                raise PatternUnsupported("an anchor inside a repeat other than '?'")
            return _union(self.anchored(inner), {(False, False): ("", True)})
        regex = self.item(op, argument)
        return {(False, False): (regex, _nullable([(op, argument)]))}

    def set_flags(self, add_flags: int, del_flags: int) -> None:
        if add_flags & sre_constants.SRE_FLAG_IGNORECASE:
            self.ignore_case = True
        if del_flags & sre_constants.SRE_FLAG_IGNORECASE:
            self.ignore_case = False
        if add_flags & sre_constants.SRE_FLAG_DOTALL:
            self.dot_all = True

    def sequence(self, items) -> str:
        return "".join(self.item(op, argument) for op, argument in items)

    def chars(self, members: CodePointSet) -> str:
        return group(json_char_regex(members, self.ascii_escapes))

    def item(self, op, argument) -> str:
        if op == sre_constants.LITERAL:
            return self.chars(self.fold(((argument, argument),)))
        if op == sre_constants.NOT_LITERAL:
            return self.chars(complement_ranges(self.fold(((argument, argument),))))
        if op == sre_constants.ANY:
            members = ALL_CHARACTERS if self.dot_all else complement_ranges(ECMA_LINE_TERMINATORS)
            return self.chars(members)
        if op == sre_constants.IN:
            return self.chars(self.char_set(argument))
        if op == sre_constants.BRANCH:
            return alternation([self.sequence(branch) for branch in argument[1]])
        if op == sre_constants.SUBPATTERN:
            _, add_flags, del_flags, inner = argument
            saved = (self.ignore_case, self.dot_all)
            self.set_flags(add_flags, del_flags)
            try:
                return "(?:" + self.sequence(inner) + ")"
            finally:
                self.ignore_case, self.dot_all = saved
        if op in _REPEATS:
            n_min, n_max, inner = argument
            body = self.sequence(inner)
            if not body:
                return ""
            return repeat(body, n_min, None if n_max >= sre_constants.MAXREPEAT else n_max)
        raise PatternUnsupported(_CONSTRUCT_REASONS.get(op, f"unsupported pattern construct {op}"))

    def char_set(self, items) -> CodePointSet:
        negate = False
        ranges: list[tuple[int, int]] = []
        for op, argument in items:
            if op == sre_constants.NEGATE:
                negate = True
            elif op == sre_constants.LITERAL:
                ranges.append((argument, argument))
            elif op == sre_constants.RANGE:
                ranges.append(argument)
            elif op == sre_constants.CATEGORY and argument in _CATEGORIES:
                ranges.extend(_category_set(argument))
            else:
                raise PatternUnsupported(f"unsupported class item {op} {argument}")
        members = self.fold(normalize_ranges(ranges))
        return complement_ranges(members) if negate else members

    def fold(self, ranges: CodePointSet) -> CodePointSet:
        """Add case variants of members when the pattern ignores case."""
        if not self.ignore_case:
            return normalize_ranges(ranges)
        extra = []
        size = sum(hi - lo + 1 for lo, hi in ranges)
        for lo, hi in ranges:
            if size <= MAX_CASE_FOLD_SET:
                span = range(lo, hi + 1)
            else:
                span = range(max(lo, 0x41), min(hi, 0x7A) + 1)
            for code_point in span:
                for variant in (chr(code_point).lower(), chr(code_point).upper()):
                    if len(variant) == 1:
                        extra.append((ord(variant), ord(variant)))
        return normalize_ranges(list(ranges) + extra)


_Anchored = dict
"""A pattern piece as ``{(at_start, at_end): (regex, nullable)}``: the union,
over the keys, of the strings ``regex`` matches, where ``at_start`` says the
match must begin at the start of the whole string (a ``^`` was resolved
into it) and ``at_end`` that it must end at the end (a ``$``); ``nullable``
says whether ``regex`` matches the empty string.  At most four keys: pieces
with the same key merge by alternation, which keeps ``nullable`` exact."""

_AT_REASONS = {
    sre_constants.AT_BOUNDARY: "word boundary \\b is a look-around (not supported)",
    sre_constants.AT_NON_BOUNDARY: "non-boundary \\B is a look-around (not supported)",
}


_CONSTRUCT_REASONS = {
    sre_constants.ASSERT: "look-ahead/look-behind (?=..) (?<=..) is not supported",
    sre_constants.ASSERT_NOT: "negative look-ahead/look-behind (?!..) (?<!..) is not supported",
    sre_constants.GROUPREF: "a backreference is not a regular construct",
}


def _union(a: "_Anchored", b: "_Anchored") -> "_Anchored":
    result = dict(a)
    for key, (regex, nullable) in b.items():
        if key in result:
            old_regex, old_nullable = result[key]
            result[key] = (alternation([group(old_regex) if old_regex else "",
                                        group(regex) if regex else ""]), old_nullable or nullable)
        else:
            result[key] = (regex, nullable)
    return result


def _concatenate(a: "_Anchored", b: "_Anchored") -> "_Anchored":
    """``a`` then ``b``.  A ``$`` of ``a`` leaves ``b`` only its empty match;
    a ``^`` of ``b`` leaves ``a`` only its empty match (at the start); both
    at once (``$`` then ``^``) hold only for the empty string."""
    result: _Anchored = {}
    for (start_a, end_a), (regex_a, nullable_a) in a.items():
        for (start_b, end_b), (regex_b, nullable_b) in b.items():
            if end_a and start_b:
                if nullable_a and nullable_b:
                    result = _union(result, {(True, True): ("", True)})
            elif end_a:
                if nullable_b:
                    result = _union(result, {(start_a, True): (regex_a, nullable_a)})
            elif start_b:
                if nullable_a:
                    result = _union(result, {(True, end_b): (regex_b, nullable_b)})
            else:
                result = _union(result, {(start_a, end_b): (regex_a + regex_b,
                                                            nullable_a and nullable_b)})
    return result


def _has_anchor(items) -> bool:
    for op, argument in items:
        if op == sre_constants.AT:
            return True
        if op == sre_constants.BRANCH and any(_has_anchor(branch) for branch in argument[1]):
            return True
        if op == sre_constants.SUBPATTERN and _has_anchor(argument[3]):
            return True
        if op in _REPEATS and _has_anchor(argument[2]):
            return True
    return False


def _nullable(items) -> bool:
    """Whether anchor-free parsed ``items`` match the empty string."""
    return sre_parse.SubPattern(sre_parse.State(), list(items)).getwidth()[0] == 0



def finite_pattern_strings(pattern: str, limit: int = 64) -> Optional[list[str]]:
    """The strings a pattern matches in full, when it is anchored at both
    ends and its language is finite with at most ``limit`` strings (e.g.
    ``^(Materials|Signals)$``); None otherwise."""
    try:
        parsed = parse_pattern(pattern)
    except PatternUnsupported:
        return None
    if parsed.state.flags & (sre_constants.SRE_FLAG_IGNORECASE | sre_constants.SRE_FLAG_MULTILINE):
        return None
    return _finite_top(list(parsed), limit)


def _finite_top(items: list, limit: int) -> Optional[list[str]]:
    if len(items) == 1 and items[0][0] == sre_constants.BRANCH:
        result: list[str] = []
        for branch in items[0][1][1]:
            strings = _finite_top(list(branch), limit)
            if strings is None:
                return None
            result.extend(strings)
        return list(dict.fromkeys(result)) if len(result) <= limit else None
    if len(items) == 1 and items[0][0] == sre_constants.SUBPATTERN and not items[0][1][1]:
        return _finite_top(list(items[0][1][3]), limit)
    if len(items) < 2 or items[0][0] != sre_constants.AT \
            or items[0][1] not in _START_ANCHORS or items[-1][0] != sre_constants.AT \
            or items[-1][1] not in _END_ANCHORS:
        return None
    return _finite_sequence(items[1:-1], limit)


def _finite_sequence(items, limit: int) -> Optional[list[str]]:
    strings = [""]
    for op, argument in items:
        if op == sre_constants.LITERAL:
            options = [chr(argument)]
        elif op == sre_constants.IN and all(kind in (sre_constants.LITERAL, sre_constants.RANGE)
                                           for kind, _ in argument):
            options = []
            for kind, value in argument:
                low, high = (value, value) if kind == sre_constants.LITERAL else value
                options.extend(chr(c) for c in range(low, high + 1))
        elif op == sre_constants.BRANCH:
            options = []
            for branch in argument[1]:
                inner = _finite_sequence(branch, limit)
                if inner is None:
                    return None
                options.extend(inner)
        elif op == sre_constants.SUBPATTERN and not argument[1] and not argument[2]:
            options = _finite_sequence(argument[3], limit)
        elif op in _REPEATS and argument[1] < sre_constants.MAXREPEAT:
            inner = _finite_sequence(argument[2], limit)
            if inner is None:
                return None
            options = []
            for count in range(argument[0], argument[1] + 1):
                repeated = [""]
                for _ in range(count):
                    repeated = [a + b for a in repeated for b in inner]
                    if len(repeated) > limit:
                        return None
                options.extend(repeated)
        else:
            return None
        if options is None:
            return None
        strings = [a + b for a in strings for b in options]
        if len(strings) > limit:
            return None
    return list(dict.fromkeys(strings))


# ------------------------------------------------------------- key exclusion

STRING_TAIL = ANY_STRING_CONTENT + '"'
"""The rest of any JSON string up to its closing quote (one shared terminal)."""


def string_not_in_parts(names: list[str]) -> tuple[Optional[str], Optional[str]]:
    """JSON strings (quotes included) whose decoded value is not in ``names``,
    as ``(head, not_name)``: the strings are ``head STRING_TAIL`` or
    ``not_name`` (either may be None).  Shape::

        head     = " ( DIVERGE | PREFIX FOREIGN )
        not_name = " NOT_NAME "

    - ``DIVERGE``: a path of the names' trie, then a printable ASCII
      character that no name continues that path with;
    - ``PREFIX FOREIGN``: any trie path, then a character no name contains
      at all;
    - ``NOT_NAME``: a trie path ending where no name ends (proper prefixes,
      and the empty string unless it is a name).

    The costly "anything up to the quote" part is the shared STRING_TAIL
    terminal, so each object's key terminal stays small and builds fast.
    Every string accepted differs from every name.  Not accepted (stricter,
    never looser): strings that leave the trie with an escaped spelling of a
    character some name uses or of a printable ASCII character (json.dumps
    writes neither), or with a non-ASCII character some name uses.
    """
    nodes = _shared_trie(names)
    diverge: list[str] = []     # DIVERGE from each node ("" when none)
    paths: list[str] = []       # trie paths from each node, ending anywhere
    off_names: list[str] = []   # trie paths ending where no name ends, or _NOTHING
    for ends_name, children in nodes:
        leaving = _leaving_class(tuple(char for char, _ in children))
        branches = [leaving] if leaving else []
        branches.extend(_factored(children, diverge, ""))
        diverge.append(alternation(branches) if branches else "")
        paths.append(_optional_paths(_factored(children, paths, _NOTHING), True))
        off_names.append(_optional_paths(_factored(children, off_names, _NOTHING), not ends_name))
    alphabet = normalize_ranges((ord(c), ord(c)) for c in set("".join(names)))
    foreign = complement_ranges(alphabet)
    branches = []
    if diverge[-1]:
        branches.append(diverge[-1])
    if foreign:
        branches.append(paths[-1] + group(json_char_regex(foreign, ascii_escapes=False)))
    head = '"' + alternation(branches) if branches else None
    not_name = off_names[-1]
    return head, (None if not_name == _NOTHING else '"' + not_name + '"')


def _shared_trie(names: list[str]) -> list[tuple[bool, tuple[tuple[str, int], ...]]]:
    """The names' trie with equal subtrees stored once: node ``i`` is (some
    name ends here, its ``(char, child)`` pairs sorted by char); children
    come before their parents, the root is last.  One pass over the sorted
    names with a stack of the open nodes along the current name (each
    ``[ends here, (char, child) pairs so far]``): a node is closed (looked up
    by its shape, stored if new) when the next name leaves it, so the work
    is one step per trie node."""
    nodes: list[tuple[bool, tuple[tuple[str, int], ...]]] = []
    index_of: dict[tuple, int] = {}
    stack: list[list] = [[False, []]]
    path = ""

    def close_below(depth: int) -> None:
        while len(stack) > depth + 1:
            ends, children = stack.pop()
            shape = (ends, tuple(children))
            index = index_of.get(shape)
            if index is None:
                index = index_of[shape] = len(nodes)
                nodes.append(shape)
            stack[-1][1].append((path[len(stack) - 1], index))

    for name in sorted(set(names)):
        common = 0
        limit = min(len(path), len(name))
        while common < limit and path[common] == name[common]:
            common += 1
        close_below(common)
        path = name
        stack.extend([False, []] for _ in range(len(name) - common))
        stack[-1][0] = True
    close_below(0)
    nodes.append((stack[0][0], tuple(stack[0][1])))   # deeper than any subtree: new
    return nodes


_NOTHING = "(?:NOTHING)"
_PLAIN_ASCII_CODES = tuple(c for c in range(0x20, 0x7F) if c not in (0x22, 0x5C))


@functools.lru_cache(maxsize=4096)
def _leaving_class(children: tuple[str, ...]) -> Optional[str]:
    """The class of printable ASCII characters (not ``"`` or ``\\``) outside ``children``."""
    excluded = {ord(c) for c in children}
    runs: list[list[int]] = []
    for code in _PLAIN_ASCII_CODES:
        if code in excluded:
            continue
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return char_class(tuple((lo, hi) for lo, hi in runs)) if runs else None


def _factored(children: tuple[tuple[str, int], ...], texts: list[str], nothing: str) -> list[str]:
    """Branches ``c texts[child]`` for the children whose text is not
    ``nothing``, children with equal text joined in one class (``[0-9]X`` for
    ``0X|1X|...|9X``): names sharing their endings (``p0`` .. ``p19999``)
    give a pattern of a few hundred characters instead of one spelling
    every name.  A character JSON must escape (``"``, ``\\``, controls)
    is matched in every JSON spelling of it, never raw."""
    by_text: dict[str, list[tuple[int, int]]] = {}
    escaped: list[str] = []
    for char, child in children:
        text = texts[child]
        if text == nothing:
            continue
        if contains(MUST_ESCAPE, ord(char)):
            escaped.append(group(json_char_regex(((ord(char), ord(char)),))) + text)
        else:
            by_text.setdefault(text, []).append((ord(char), ord(char)))
    return [char_class(chars) + text for text, chars in by_text.items()] + escaped


def _optional_paths(branches: list[str], may_end: bool) -> str:
    """The paths through ``branches``, or the empty one too when ``may_end``."""
    if not branches:
        return "" if may_end else _NOTHING
    body = "(?:" + "|".join(branches) + ")"
    return body + "?" if may_end else body
