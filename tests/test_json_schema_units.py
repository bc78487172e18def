"""Unit tests of the JSON Schema regex builders against independent oracles.

Oracles: Python integers / fractions for number ranges, ``json.dumps`` for
string encodings, Python ``re`` (with ECMA adjustments) for patterns,
``datetime`` / ``ipaddress`` / ``uuid`` for formats.  The regexes are run
with Python ``re`` here (they are written in the Rust/Python common subset);
the end-to-end tests run them through the Rust DFAs.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import uuid
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.json_schema.numbers import (
    Bound, decimal_places_regex, integer_range,
    integer_regex, number_regex,
)
from grammask.json_schema.regex_text import (
    JSON_CHAR, fixed_width_range, is_plain_text, json_char_regex, json_string_literal_regex,
    normalize_ranges,
)
from grammask.json_schema.formats import FORMAT_PATTERNS
from grammask.json_schema.strings import (
    STRING_TAIL, PatternUnsupported, string_not_in_parts, string_regex,
    translate_pattern,
)


def full(regex: str, text: str) -> bool:
    return re.fullmatch(regex, text) is not None


# ------------------------------------------------------------------ integers

@pytest.mark.parametrize("lo", [None, -120, -37, -10, -9, -1, 0, 1, 9, 10, 99, 100, 101])
@pytest.mark.parametrize("hi", [None, -100, -10, -1, 0, 1, 5, 9, 10, 42, 99, 100, 999])
def test_integer_range_exhaustive_small(lo, hi):
    regex = integer_range(lo, hi)
    for value in range(-1200, 1201):
        inside = (lo is None or value >= lo) and (hi is None or value <= hi)
        assert (regex is not None and full(regex, str(value))) == inside, (lo, hi, value)
    if regex is not None:
        for text in ("", "-", "00", "01", "-01", "+1", "1.5", "1e2"):
            assert not full(regex, text), text


@settings(max_examples=300, deadline=None)
@given(st.integers(-10**30, 10**30), st.integers(0, 10**25), st.integers(-10**31, 10**31))
def test_integer_range_large_hypothesis(lo, width, probe):
    hi = lo + width
    regex = integer_range(lo, hi)
    for value in (probe, lo, hi, lo - 1, hi + 1, (lo + hi) // 2):
        assert full(regex, str(value)) == (lo <= value <= hi), (lo, hi, value)


def test_integer_regex_accepts_zero_fraction_and_negative_zero():
    regex = integer_regex(Bound(Fraction(-3), False), Bound(Fraction(7, 2), True))
    accepted = {"-3", "0", "-0", "3", "3.0", "2.000", "-3.0"}
    for text in accepted:
        assert full(regex, text), text
    for text in ("-4", "4", "3.5", "1.01", "4.0", "1e0"):
        assert not full(regex, text), text


def test_no_sixteen_digit_cap():
    regex = integer_regex(None, None)
    assert full(regex, "12345678901234567890123456789")
    bounded = integer_regex(Bound(Fraction(0), False), Bound(Fraction(10**20), False))
    assert full(bounded, str(10**20)) and not full(bounded, str(10**20 + 1))


# ------------------------------------------------------------------- decimals

_DECIMALS = [Fraction(Decimal(x)) for x in ("-2.5", "-1", "-0.05", "0", "0.5", "1.25", "3", "10.05")]


def _spellings(value: Fraction) -> list[str]:
    text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    forms = [text, text + ("0" if "." in text else ".0")]
    if value == 0:
        forms += ["-0", "-0.0"]
    return forms


@pytest.mark.parametrize("low", [None] + [(v, s) for v in _DECIMALS for s in (False, True)])
@pytest.mark.parametrize("high", [None] + [(v, s) for v in _DECIMALS for s in (False, True)])
def test_number_bounds_exhaustive_grid(low, high):
    low_bound = None if low is None else Bound(*low)
    high_bound = None if high is None else Bound(*high)
    regex = number_regex(low_bound, high_bound)
    for hundredths in range(-1200, 1201, 1):
        value = Fraction(hundredths, 100)
        inside = (low_bound is None or (value > low_bound.value if low_bound.strict
                                        else value >= low_bound.value)) and \
                 (high_bound is None or (value < high_bound.value if high_bound.strict
                                         else value <= high_bound.value))
        for text in _spellings(value):
            assert (regex is not None and full(regex, text)) == inside, (low, high, text)


@settings(max_examples=200, deadline=None)
@given(st.decimals(-1000, 1000, places=3), st.booleans(), st.decimals(-1000, 1000, places=3),
       st.booleans(), st.decimals(-2000, 2000, places=4))
def test_number_bounds_hypothesis(low, low_strict, high, high_strict, probe):
    low_bound = Bound(Fraction(low), low_strict)
    high_bound = Bound(Fraction(high), high_strict)
    regex = number_regex(low_bound, high_bound)
    value = Fraction(probe)
    inside = (value > low_bound.value if low_strict else value >= low_bound.value) and \
             (value < high_bound.value if high_strict else value <= high_bound.value)
    text = format(probe.normalize() if probe != 0 else Decimal(0), "f")
    assert (regex is not None and full(regex, text)) == inside, (low, high, text)


def test_zero_bounds_keep_exponents():
    positive = number_regex(Bound(Fraction(0), True), None)
    for text in ("1e5", "0.1E-3", "2", "0.0001"):
        assert full(positive, text), text
    for text in ("0", "0e5", "-1e5", "-0.0", "0.000"):
        assert not full(positive, text), text
    non_positive = number_regex(None, Bound(Fraction(0), False))
    assert full(non_positive, "-1e5") and full(non_positive, "0e3") and not full(non_positive, "1")


def test_decimal_places():
    places = decimal_places_regex(2)
    assert full(places, "1.25") and full(places, "1.250") and not full(places, "1.255")
    assert full(places, "-3") and not full(places, "1e2")


# ------------------------------------------------------------ string encodings

@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x90), max_size=6) | st.text(max_size=6))
def test_plain_text_is_what_json_dumps_leaves_alone(text):
    """Oracle: ``json.dumps`` (ASCII output) writes a plain text between its
    quotes unchanged, and changes every other text."""
    assert is_plain_text(text) == (json.dumps(text) == '"' + text + '"'
                                   and all(" " <= c <= "~" for c in text))


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=8))
def test_any_string_in_any_dumps_spelling(text):
    for encoded in (json.dumps(text), json.dumps(text, ensure_ascii=False)):
        assert full(string_regex(0, None), encoded)
        assert full(string_regex(len(text), len(text)), encoded)
        if text:
            assert not full(string_regex(len(text) + 1, None), encoded)
            assert not full(string_regex(0, len(text) - 1), encoded)


def test_hex_escapes_in_either_case_and_surrogate_pairs():
    for spelling in ('"\\u00e9"', '"\\u00E9"', '"\\ud83d\\ude00"', '"\\uD83D\\uDE00"'):
        assert full(string_regex(1, 1), spelling), spelling
    for spelling in ('"\\ud83d"', '"\\ude00x"', '"\\u12"', '"\\x41"', '"\x01"'):
        assert not full(string_regex(0, None), spelling), spelling


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0x10FFFF), st.integers(0, 300))
def test_json_char_sets(code_point, width):
    if 0xD800 <= code_point <= 0xDFFF:
        return
    members = normalize_ranges([(max(0, code_point - width), code_point + width)])
    outside = normalize_ranges([(code_point + width + 1, code_point + 2 * width + 1)])
    char = chr(code_point)
    for encoded in (json.dumps(char)[1:-1], json.dumps(char, ensure_ascii=False)[1:-1]):
        assert full(json_char_regex(members), encoded)
        if outside:
            assert not full(json_char_regex(outside), encoded)


def test_fixed_width_hex_ranges():
    regex = fixed_width_range(0x0A5, 0x3F0, 3, 16)
    for value in range(0, 0x1000):
        for text in (f"{value:03x}", f"{value:03X}"):
            assert full(regex, text) == (0x0A5 <= value <= 0x3F0), text


def test_literal_canonical_spellings():
    regex = json_string_literal_regex('a"é\n/')
    for spelling in (json.dumps('a"é\n/'), json.dumps('a"é\n/', ensure_ascii=False),
                     '"a\\u0022\\u00E9\\u000a/"'):
        assert full(regex, spelling), spelling
    assert not full(regex, '"\\u0061\\"\\u00e9\\n/"')
    assert full(json_string_literal_regex("a", ascii_escapes=True), '"\\u0061"')
    assert full(JSON_CHAR, "\\/")


# ------------------------------------------------------------------- patterns

_PATTERNS = [r"^[a-z]+$", r"abc", r"^a|b$", r"^\d{3}-\d{2}$", r"(?i)^ab$", r"^.*$", r'^[^"]*$',
             r"x+y?", r"^(foo|bar)\s?$", r"^$", r"é", r"^[\u0000-\u001f]$", r"^a{2,3}b*$",
             r"[0-9]", r"^\w+@\w+\.com$", r"^(?:a|bc)+$"]
_ALPHABET = ["a", "b", "c", "x", "y", "z", "A", "B", "1", "2", "-", " ", '"', "\\", "\n", "é",
             "\U0001F600", "f", "o", "r", "@", ".", "m", "_"]


def _ecma_search(pattern: str, text: str) -> bool:
    """ECMA-262 semantics through Python re: $ only at the end, ASCII \\d \\w."""
    adjusted = pattern.replace("$", r"\Z")
    return re.search(adjusted, text, re.ASCII if ("\\w" in pattern or "\\d" in pattern)
                     else 0) is not None


@pytest.mark.parametrize("pattern", _PATTERNS)
@settings(max_examples=250, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), max_size=7))
def test_pattern_matches_ecma_search_on_encoded_strings(pattern, chars):
    text = "".join(chars)
    content, _, _ = translate_pattern(pattern)
    expected = _ecma_search(pattern, text)
    for encoded in (json.dumps(text), json.dumps(text, ensure_ascii=False)):
        assert full('"' + content + '"', encoded) == expected, (pattern, encoded)


def test_pattern_length_range():
    assert translate_pattern(r"^\d{3}-\d{2}$")[1:] == (6, 6)
    assert translate_pattern(r"^a+$")[1:] == (1, None)
    assert translate_pattern(r"abc")[1:] == (3, None)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"a(?=b)", r"a(?!b)", r"\bword\b", r"a^b",
                                     r"\p{L}", r"(?m)^a$"])
def test_unsupported_pattern_constructs(pattern):
    with pytest.raises(PatternUnsupported):
        translate_pattern(pattern)


# -------------------------------------------------------------------- formats

def _format_regex(name):
    return '"' + translate_pattern(FORMAT_PATTERNS[name], ascii_escapes=False)[0] + '"'


def test_date_format_exact_against_datetime():
    regex = _format_regex("date")
    for year in list(range(1, 40)) + list(range(1890, 2110)) + [2400, 2800, 9999]:
        for month in range(0, 14):
            for day in (0, 1, 28, 29, 30, 31, 32):
                text = f"{year:04d}-{month:02d}-{day:02d}"
                try:
                    datetime.date.fromisoformat(text)
                    valid = True
                except ValueError:
                    valid = False
                assert full(regex, json.dumps(text)) == valid, text


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime.datetime(1, 1, 1)), st.booleans())
def test_date_time_and_time_formats(moment, utc):
    suffix = "Z" if utc else "+05:30"
    text = moment.isoformat() + suffix
    assert full(_format_regex("date-time"), json.dumps(text))
    assert full(_format_regex("time"), json.dumps(moment.time().isoformat() + suffix))
    assert not full(_format_regex("date-time"), json.dumps(moment.isoformat()))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.uuids())
def test_ipv4_and_uuid_formats(address, identifier):
    assert full(_format_regex("ipv4"), json.dumps(str(ipaddress.IPv4Address(address))))
    assert full(_format_regex("uuid"), json.dumps(str(identifier)))
    assert full(_format_regex("uuid"), json.dumps(str(identifier).upper()))


@pytest.mark.parametrize("text", ["256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "a.b.c.d"])
def test_ipv4_rejects(text):
    try:
        ipaddress.IPv4Address(text)
        valid = True
    except ValueError:
        valid = False
    assert full(_format_regex("ipv4"), json.dumps(text)) == valid


def test_email_uri_uuid_examples():
    assert full(_format_regex("email"), '"joe.bloggs@example.com"')
    assert not full(_format_regex("email"), '"joe@"')
    assert full(_format_regex("uri"), '"https://example.com/a?b=c#d"')
    assert not full(_format_regex("uri"), '"//no-scheme"')
    assert not full(_format_regex("uuid"), json.dumps(str(uuid.uuid4())[:-1]))


# ------------------------------------------------------------- key exclusion

def not_in_regex(names):
    head, not_name = string_not_in_parts(names)
    branches = ([head + STRING_TAIL] if head else []) + ([not_name] if not_name else [])
    return "(?:" + "|".join(branches) + ")"


@pytest.mark.parametrize("names", [["a", "ab", "abc", "b", "", "é"],
                                   [f"property_{i}_name" for i in range(12)]])
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "é", '"', "p", "r", "o", "_", "1", "ü"]),
                max_size=5))
def test_not_in_names_never_accepts_a_name(names, chars):
    regex = not_in_regex(names)
    text = "".join(chars)
    for encoded in (json.dumps(text), json.dumps(text, ensure_ascii=False)):
        if text in names:
            assert not full(regex, encoded), encoded
    if text not in names and all(c.isascii() or c not in "".join(names) for c in text):
        assert full(regex, json.dumps(text, ensure_ascii=False)), text
        assert full(regex, json.dumps(text)), text


NUMBERED_NAMES = [f"p{i}" for i in range(1200)] + ["p12x", "q", "q0"]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(["p", "q", "x", "0", "1", "2", "9", "é", '"']), max_size=6))
def test_not_in_names_with_shared_endings(chars):
    """Equal subtrees of the names' trie are spelled once (a class of the
    characters leading to them); the language is still every other string."""
    regex = not_in_regex(NUMBERED_NAMES)
    text = "".join(chars)
    for encoded in (json.dumps(text), json.dumps(text, ensure_ascii=False)):
        assert full(regex, encoded) == (text not in NUMBERED_NAMES), encoded


def test_not_in_names_spells_equal_subtrees_once():
    head, not_name = string_not_in_parts([f"p{i}" for i in range(20000)])
    assert len(head) < 2000 and len(not_name) < 100


def test_not_in_rejects_escaped_spellings_of_names():
    regex = not_in_regex(["ab"])
    assert not full(regex, '"\\u0061b"') and not full(regex, '"ab"')
    assert full(regex, '"abc"') and full(regex, '"a"') and full(regex, '""')
    assert full(regex, '"\\u00e9"') and full(regex, '"a\\n"')


@pytest.mark.parametrize("low,high", [((0, True), (1, False)), ((-1, False), (0, True)),
                                      ((0, False), None), (None, (0, False)),
                                      ((5, False), (7, False)), ((-7, True), (-5, True))])
def test_exponent_spellings_keep_the_sign_and_range(low, high):
    low_bound = None if low is None else Bound(Fraction(low[0]), low[1])
    high_bound = None if high is None else Bound(Fraction(high[0]), high[1])
    regex = number_regex(low_bound, high_bound)
    for mantissa in ("2", "-2", "9.5", "-9.5", "1", "-1", "0", "-0"):
        for exponent in ("-4493", "-3", "-1", "0", "+0", "1", "5", "00", "-01"):
            text = f"{mantissa}E{exponent}"
            value = Fraction(Decimal(text))
            inside = ((low_bound is None or (value > low_bound.value if low_bound.strict
                                             else value >= low_bound.value))
                      and (high_bound is None or (value < high_bound.value if high_bound.strict
                                                  else value <= high_bound.value)))
            if regex is not None and full(regex, text):
                assert inside, (low, high, text)


@pytest.mark.parametrize("pattern,expected", [
    ("^(a|bc)$", ["a", "bc"]), ("^x[0-2]$", ["x0", "x1", "x2"]), ("^ab?$", ["a", "ab"]),
    ("^a+$", None), ("a|b", None), ("^(?i)a$", None), ("^[a-z]{3}$", None)])
def test_finite_pattern_strings(pattern, expected):
    from grammask.json_schema.strings import finite_pattern_strings

    result = finite_pattern_strings(pattern)
    assert (None if result is None else sorted(result)) == expected
    for text in result or []:
        assert re.fullmatch(pattern, text)


@pytest.mark.parametrize("schema", [
    {"type": "number", "multipleOf": 1, "minimum": 0, "maximum": 1_000_000},
    {"type": "number", "multipleOf": 1, "exclusiveMinimum": -1e9, "maximum": 1e9},
    {"type": "number", "multipleOf": 1.0, "minimum": 0.5},
    {"type": "number", "multipleOf": 1, "exclusiveMaximum": 7},
])
def test_multiple_of_one_with_wide_bounds_is_exact(schema):
    # A regression: 100.1 was accepted (the bounded case gave up after 256
    # multiples).  Oracle: jsonschema on each text; no warning is raised.
    import warnings

    import jsonschema

    import grammask

    vocab = grammask.Vocabulary([None] + [bytes([b]) for b in b"0123456789.-eE+"], eos_token_ids=[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = grammask.compile(grammask.Grammar.from_json_schema(schema), vocab)
    validator = jsonschema.Draft202012Validator(schema)
    for text in ["100.1", "100", "100.0", "0", "-5", "7", "6", "1000000", "1000001", "1.5", "-0", "0.50"]:
        engine = grammask.Engine(compiled)
        try:
            engine.try_accept_new_bytes(text.encode())
            accepted = engine.can_end()
        except grammask.TokenRejected:
            accepted = False
        assert accepted == validator.is_valid(json.loads(text)), text


def test_translator_helper_rules_left_unused_do_not_warn():
    # A translated schema may leave helper rules unreachable (here the
    # `not: {not: ...}` of a MaskBench schema); they are pruned silently: the
    # "never used" warning is for rules a user wrote.
    import warnings as warnings_module

    import grammask

    schema = {"allOf": [{"enum": [{"foo": "baz"}]},
                        {"not": {"not": {"anyOf": [{"properties": {"bar": {"type": "integer"}}, "required": ["bar"]},
                                                   {"properties": {"foo": {"type": "string"}},
                                                    "required": ["foo"]}]}}}]}
    with warnings_module.catch_warnings(record=True) as caught:
        warnings_module.simplefilter("always")
        grammar = grammask.Grammar.from_json_schema(schema)
    assert not [w for w in caught if "never used" in str(w.message)]
    assert grammar.warnings == []
    with pytest.warns(UserWarning, match="rule 'unused' .*is never used"):
        grammask.Grammar.from_ebnf("start ::= 'a'; unused ::= 'b';")


def test_formats_no_draft_defines_are_silent_annotations_and_bad_formats_are_typed_errors():
    import warnings as warnings_module

    import grammask
    from grammask.errors import GrammarError

    with warnings_module.catch_warnings():
        warnings_module.simplefilter("error")
        grammask.Grammar.from_json_schema({"type": "string", "format": "url"})     # OpenAPI's, no draft's
    with pytest.warns(grammask.GrammarWarning, match="'idn-hostname' not enforced"):
        grammask.Grammar.from_json_schema({"type": "string", "format": "idn-hostname"})
    with pytest.warns(grammask.GrammarWarning, match="'regex' not enforced beside a pattern"):
        grammask.Grammar.from_json_schema({"type": "string", "format": "regex", "maxLength": 9})
    for schema in ({"type": "string", "format": ["x"]},
                   {"oneOf": [{"type": "string", "format": {"a": 1}}, {"type": "integer"}]}):
        with pytest.raises(GrammarError, match="format must be a string"):
            grammask.Grammar.from_json_schema(schema)


def _one_group_by_scanning(text: str) -> bool:
    """Reference for ``regex_text._is_one_group``: one character at a time, an
    escape hiding the next character, a bracket class running to its first
    unescaped ``]``, parentheses counted outside classes."""
    depth, escaped, in_class = 0, False, False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0 and index != len(text) - 1:
                return False
    return True


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(st.text(alphabet="()[]\\ab?:|\n", max_size=16), st.booleans())
def test_one_group_test_equals_a_character_scan(text, opened):
    """``_is_one_group`` (escapes and classes removed by one regex substitution,
    then the parentheses counted; memoized) agrees with a character-by-character
    scan, on texts with and without a leading ``(?:``."""
    from grammask.json_schema.regex_text import _is_one_group

    text = "(?:" + text if opened else text
    assert _is_one_group(text) == _one_group_by_scanning(text)
