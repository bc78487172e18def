"""Nodes for ``type: string``: ``minLength`` / ``maxLength``, ``pattern``, ``format``.

What it computes: ``string_node(translator, schema, pointer)``, the node of
the JSON strings a schema's string keywords allow.  A ``pattern`` and an
asserted ``format`` each become one regex over the string's JSON encoding
(``strings.translate_pattern_excluding`` of the pattern or of
``formats.FORMAT_PATTERNS``; a pattern every string matches, such as
``([A-Z]+)?``, adds nothing; one no string matches, ``/^x$/``, leaves no
string; a guarded run's look-aheads, ``^((?!mode).)*$``, are regexes the
strings must not match, removed by a ``difference`` terminal); lengths alone
become ``string_with_length``.  Several of them (pattern, format, and the
length bounds when the pattern's own width does not imply them) become one
``intersection`` terminal (``GrammarBuilder.rx_all``: the product of their
DFAs, built by the Rust crate), so each is enforced exactly: the pattern's
search semantics are already in its regex (``.*`` sides unless anchored),
and the length regex counts decoded code points in any escape spelling.
``format: regex`` alone is the context-free grammar of
``regex_format`` (``formats.GRAMMAR_FORMATS``); beside a pattern or length
bounds it is warned about and not enforced.
A format of the specification that grammask does not assert is warned
about with the reason from ``formats.NOT_ENFORCED`` and not enforced; a
format the specification does not define (``url``, ``byte``, a project's
own name) is an annotation for every validator, so ignoring it is exact
and silent.  An asserted format looser than specified (``formats.looseness``:
hostname's A-labels, and its 253-character limit unless a ``maxLength`` or
``pattern`` enforced beside it is as short) is warned; a ``maxLength`` at or
above a format's uncounted limit (``formats.UNCOUNTED_MAX_LENGTH``) is implied
by the format, so it is not intersected either (that warning covers it).
When the intersection with the length bounds exceeds the DFA limits and
the format has a plain subset (``formats.PLAIN_SUBSETS``: email without
quoted local parts or address literals), the bounds are counted beside
that subset instead (stricter, as before email was exact).  Still warned: when the
intersection's DFA exceeds the default DFA limits
(``Config.max_product_dfa_states``, 50,000, for a product with the length
bounds, ``max_dfa_states`` for patterns and format alone, and
``max_dfa_bytes``; the length product grows with the bound times the
pattern's states: ``format: uri`` with ``maxLength: 255`` has 42,197, a
word count ``^(?:\\S+\\s+){0,K}\\S+$`` with ``maxLength`` 68k and more), the
length bounds are dropped, then a guarded run's look-aheads (their
difference), then each pattern (several in a merged ``allOf``; tried from
the last) whose regex does not fit the intersection of the format and the
patterns kept so far.

Invariant: lengths count code points, in any escape spelling; a terminal
never ends inside free text (the closing quote sits in the last terminal).
"""

from __future__ import annotations

from typing import Any, Optional

from grammask.config import Config
from grammask.errors import LimitExceeded
from grammask.json_schema import formats, strings
from grammask.json_schema.builder import NEVER
from grammask.json_schema.regex_format import regex_format_node
from grammask.json_schema.regex_text import repeat as repeat_text
from grammask.terminals import DIFFERENCE_SEPARATOR, INTERSECTION_SEPARATOR, compile_regex

_DEFAULTS = Config()


def string_node(translator, schema: dict, pointer: str) -> Any:
    n_min = _non_negative_int(translator, schema, "minLength", pointer) or 0
    n_max = _non_negative_int(translator, schema, "maxLength", pointer)
    if n_max is not None and n_max < n_min:
        return NEVER
    for keyword in ("pattern", "format"):
        if schema.get(keyword) is not None and not isinstance(schema[keyword], str):
            raise translator.error(pointer, f"{keyword} must be a string")
    format_name = schema.get("format")
    if format_name in formats.NOT_ENFORCED:
        translator.warn("format", pointer,
                        f"format {format_name!r} not enforced: {formats.NOT_ENFORCED[format_name]}")
    constraints = formats.asserted_patterns(schema)
    if format_name in formats.GRAMMAR_FORMATS:
        if not constraints and n_min == 0 and n_max is None:
            return regex_format_node(translator)
        translator.warn("format", pointer,
                        f"format {format_name!r} not enforced beside a pattern or length bounds: "
                        f"{formats.GRAMMAR_FORMATS[format_name]}")
    parts = []
    labels = []
    removed: list[str] = []
    min_implied = max_implied = True
    for keyword, constraint, ascii_escapes in constraints:
        try:
            content, excluded, low, high = strings.translate_pattern_excluding(
                constraint, ascii_escapes=ascii_escapes)
        except strings.PatternMatchesNothing:
            return NEVER  # ``/^x$/``: ``re.search`` finds it in no string
        except strings.PatternUnsupported as error:
            translator.warn(keyword, pointer, f"{error}; not enforced")
            continue
        removed.extend('"' + regex + '"' for regex in excluded)
        if content == strings.ANY_STRING_CONTENT and not excluded:
            continue  # every string matches (``([A-Z]+)?``)
        parts.append('"' + content + '"')
        labels.append((keyword, constraint if keyword == "pattern" else format_name, high))
        widest = high
        if keyword == "format" and high is None:  # the specified limit (warned if not counted)
            widest = formats.UNCOUNTED_MAX_LENGTH.get(format_name)
        min_implied = min_implied and n_min <= low
        max_implied = max_implied and (n_max is None or (widest is not None and widest <= n_max))
    if not parts:
        return string_with_length(translator, n_min, n_max)
    node, bounds = _constrained(translator, pointer, constraints, parts, labels, removed,
                                 0 if min_implied else n_min, None if max_implied else n_max)
    loose = formats.looseness(format_name, bounds)
    if loose is not None:
        translator.warn("format", pointer, loose)
    return node


def _constrained(translator, pointer: str, constraints: list, parts: list[str], labels: list,
                 removed: list[str], n_min: int, n_max: Optional[int]) -> tuple[Any, list]:
    """The node of the strings matching the regexes ``parts`` (``labels``:
    their (keyword, pattern or format name, most characters)) and none of
    ``removed`` (a guarded run's look-aheads) within n_min..n_max
    characters (the bounds the regexes do not imply), and the
    most-characters bounds it enforces (None: unbounded); what does not fit
    the DFA limits is dropped and warned."""
    if n_min > 0 or n_max is not None:
        length = strings.string_regex(n_min, n_max)
        node = _all_of(translator, parts + [length], removed, counted=True)
        if node is None and any(keyword == "format" and name in formats.PLAIN_SUBSETS
                                for keyword, name, _ in labels):
            node = _all_of(translator, [_plain_subset(part, label)
                                        for part, label in zip(parts, labels)] + [length], removed,
                           counted=True)
        if node is not None:
            return node, [n_max] + [high for _, _, high in labels]
        translator.warn("maxLength" if n_max is not None else "minLength", pointer,
                        f"length bounds not enforced together with {_names(constraints)}: "
                        f"the DFA of their intersection exceeds the DFA size limits")
    node = _all_of(translator, parts, removed)
    if node is not None:
        return node, [high for _, _, high in labels]
    if removed:
        translator.warn("pattern", pointer, "the look-aheads of a pattern are not enforced: the "
                                            "DFA of the difference exceeds the DFA size limits")
        return _constrained(translator, pointer, constraints, parts, labels, [], 0, None)
    kept = [parts[-1]]
    highs = [labels[-1][2]]
    dropped = []
    for (keyword, constraint, high), part in zip(labels[-2::-1], parts[-2::-1]):
        if _all_of(translator, kept + [part]) is None:
            dropped.append((keyword, constraint))
        else:
            kept.append(part)
            highs.append(high)
    translator.warn(dropped[0][0], pointer,
                    f"{', '.join(f'{k} {c!r}' for k, c in dropped)} not enforced: the DFA of the "
                    f"intersection of all {len(parts)} exceeds the DFA size limits")
    return _all_of(translator, kept), highs


def _plain_subset(part: str, label: tuple) -> str:
    """``part``, or for a format with a plain subset (``formats.PLAIN_SUBSETS``)
    the regex of that subset."""
    keyword, name, _ = label
    if keyword != "format" or name not in formats.PLAIN_SUBSETS:
        return part
    return '"' + strings.translate_pattern(formats.PLAIN_SUBSETS[name], ascii_escapes=False)[0] + '"'


def _all_of(translator, parts: list[str], removed: Optional[list[str]] = None,
            counted: bool = False) -> Optional[Any]:
    """One terminal for the strings matching every regex of ``parts`` and
    none of ``removed``, or None when the DFA of their intersection
    (difference) exceeds the default DFA limits (``max_dfa_bytes``, and
    ``Config.max_product_dfa_states`` when ``counted``, one of ``parts``
    counting the length, else ``max_dfa_states``: products of patterns alone
    keep the plain limit)."""
    if removed:
        text = DIFFERENCE_SEPARATOR.join([INTERSECTION_SEPARATOR.join(parts)] + removed)
        kind = "difference"
    elif len(parts) == 1:
        return translator.rx(parts[0])
    else:
        text, kind = INTERSECTION_SEPARATOR.join(parts), "intersection"
    try:
        compile_regex(text, kind=kind, max_states=_DEFAULTS.max_product_dfa_states if counted
                      else _DEFAULTS.max_dfa_states)
    except LimitExceeded:
        return None
    return translator.rx_minus(parts, removed or [])


def _names(constraints: list) -> str:
    return " and ".join(dict.fromkeys(keyword for keyword, _, _ in constraints))


def string_with_length(translator, n_min: int, n_max: Optional[int]) -> Any:
    """A string of n_min..n_max characters.

    Up to ``max_string_regex_repeat`` (``k``) characters the count sits
    in one regex.  Beyond, chunks count the rest exactly and
    *unambiguously*: the minimum is ``C^(m // k) X{m % k}`` with
    ``C = X{k}``; the optional rest of up to ``M`` characters, with
    ``M = q k + r``, is ``C{0,q-1} X{0,k-1}"`` or ``C^q X{0,r}"``: a
    length decides the split, full chunks have one accepting point
    each, and the closing quote sits in the last terminal, so a terminal
    never ends inside free text (which keeps token masks cheap: see
    docs/performance.md).  Powers are built by doubling (``times``), so
    grammars stay O(log N) rules and DFAs O(k) states.
    """
    limit = translator.options.max_string_regex_repeat
    if n_max is None and n_min == 0:
        return translator.generic("string")
    if n_min <= limit and (n_max is None or n_max <= limit):
        return translator.rx(strings.string_regex(n_min, n_max))
    full = _char_regex(translator, limit, limit)
    n_chunks, n_single = divmod(n_min, limit)
    fixed = translator.seq(translator.times(full, n_chunks),
                           _char_regex(translator, n_single, n_single) if n_single else None)
    short_tail = translator.rx(repeat_text(strings.JSON_CHAR, 0, limit - 1) + '"')
    if n_max is None:
        rest = translator.seq(translator.repeat(full, 0, None), short_tail)
    else:
        n_chunks, n_tail = divmod(n_max - n_min, limit)
        exact = translator.seq(translator.times(full, n_chunks),
                               translator.rx(repeat_text(strings.JSON_CHAR, 0, n_tail) + '"'))
        short = translator.seq(translator.counted(full, 0, n_chunks - 1),
                               short_tail) if n_chunks else NEVER
        rest = translator.alt([short, exact])
    return translator.seq(translator.lit('"'), fixed, rest)


def _char_regex(translator, n_min: int, n_max: Optional[int]):
    return translator.rx(repeat_text(strings.JSON_CHAR, n_min, n_max))


def _non_negative_int(translator, schema: dict, keyword: str, pointer: str):
    """A length keyword's value; unlike ``keywords.count_keyword``, an explicit
    null is an error here."""
    if keyword not in schema:
        return None
    value = schema[keyword]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise translator.error(pointer, f"{keyword} must be a non-negative integer")
    return value
