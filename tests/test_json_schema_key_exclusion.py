"""Additional-property keys built from the names' trie (``key_exclusion``).

Oracles, none of them the code under test:
- the regex construction it replaces (``strings.string_not_in_parts``,
  determinized by regex-automata): the same language, checked exactly by a
  product walk over both automata (``assert_same_language``);
- ``expected_key``, the documented language decided in Python from
  ``json.loads`` and the names (a string leaves the trie only with a raw
  printable ASCII character or with a character no name contains), on
  sampled strings: names, their prefixes and extensions, escaped spellings;
- ``jsonschema`` on whole instances (declared names must get their own
  schema, every other key the additionalProperties schema);
- the Earley recognizer's byte-by-byte verdicts for every token of a small
  vocabulary (the engine's masks walk the token trie over the DFA tables).
Small limits (``small_limits``) force the trie to be cut into many
terminals, so cuts at several depths are covered.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

import grammask
from grammask.config import Config
from grammask.errors import RegexError
from grammask.json_schema import key_exclusion
from grammask.json_schema.regex_text import PRINTABLE_ASCII, is_plain_text
from grammask.json_schema.strings import STRING_TAIL, string_not_in_parts
from grammask.terminals import KEY_SEPARATOR, compile_regex
from support.schema_matcher import SchemaMatcher

HAND_SETS = [
    ["a", "ab", "abc", "b", "", "é"],
    [f"property_{i}_name" for i in range(12)],
    [f"p{i}" for i in range(1200)] + ["p12x", "q", "q0"],
    ["\u4e2d", "\u4e2d\u6587", "caf\u00e9", "\U0001F600x", "x\U0001F600", "tab-here"],
    ["!", "~", "/", " ", "a b"],
]


def random_names(count: int, seed: int = 16) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8)) for _ in range(count)]


@pytest.fixture
def small_limits(monkeypatch):
    """Terminals of at most 60 states (the fallback alone has 30-40):
    the trie is cut deep."""
    monkeypatch.setattr(key_exclusion, "_DEFAULTS", Config(max_dfa_states=60, max_dfa_bytes=12_000))


def old_dfa(names):
    head, not_name = string_not_in_parts(names)
    branches = ([head + STRING_TAIL] if head else []) + ([not_name] if not_name else [])
    return compile_regex("(?:" + "|".join(branches) + ")", max_states=200_000, max_bytes=1 << 28)


def new_dfas(names):
    return [compile_regex(text, kind="key_exclusion", max_states=200_000, max_bytes=1 << 28)
            for text in key_exclusion.key_exclusion_patterns(names)]


def assert_same_language(reference, parts) -> None:
    """Exact: a walk over the product of ``reference`` and every part, one
    byte per joint class, finds no string accepted by one side only."""
    dfas = [reference] + parts
    class_lists = [dfa.class_map.tolist() for dfa in dfas]
    representatives = {}
    for byte in range(256):
        representatives.setdefault(tuple(classes[byte] for classes in class_lists), byte)
    start = (reference.start, frozenset((i, dfa.start) for i, dfa in enumerate(parts) if dfa.start))
    seen = {start}
    stack = [(start, b"")]
    while stack:
        (state, live), text = stack.pop()
        accepted = sum(parts[i].is_accepting(s) for i, s in live)
        assert accepted <= 1, f"parts overlap on {text!r}"
        assert reference.is_accepting(state) == bool(accepted), text
        for byte in representatives.values():
            following = (reference.step(state, byte),
                         frozenset((i, t) for i, s in live if (t := parts[i].step(s, byte))))
            if following not in seen:
                seen.add(following)
                stack.append((following, text + bytes([byte])))


SET_IDS = ["hand", "numbered", "long", "unicode", "ascii", "random1000"]


@pytest.mark.parametrize("names,limits", [(names, limits) for limits in ("default", "small")
                                          for names in HAND_SETS + [random_names(1000)]]
                         + [(random_names(3000), "default")],
                         ids=[f"{limits}-{name}" for limits in ("default", "small") for name in SET_IDS]
                         + ["default-random3000"])
def test_same_language_as_the_regex_construction(names, limits, request):
    if limits == "small":
        request.getfixturevalue("small_limits")
    parts = new_dfas(names)
    if limits == "small" and len(names) >= 12:
        assert len(parts) > 1
    assert_same_language(old_dfa(names), parts)


# ------------------------------------------------------------ sampled strings

def expected_key(text: str, names: set[str], prefixes: set[str]) -> bool:
    """The documented language, from the JSON text ``text`` (quotes
    included); ``prefixes``: every prefix of a name."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    if not isinstance(value, str) or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        return False
    if value in names:
        return False
    alphabet = set("".join(names))
    path, body = "", text[1:-1]
    while body:
        raw = body[0] != "\\"
        size = 1 if raw else (12 if body.startswith("\\u") and 0xD800 <= int(body[2:6], 16) <= 0xDBFF
                              else 6 if body.startswith("\\u") else 2)
        char = json.loads('"' + body[:size] + '"')
        if raw and path + char in prefixes:
            path, body = path + char, body[size:]
            continue
        printable = any(low <= ord(char) <= high for low, high in PRINTABLE_ASCII)
        return (raw and printable) or (char not in alphabet and (raw or not printable))
    return True


def sample_keys(names: list[str], rng: random.Random, count: int) -> list[str]:
    pieces = ["a", "b", "z", "é", "\u4e2d", "\U0001F600", " ", "~", "\t", '"', "\\", "0", "\u2028"]
    samples = []
    for _ in range(count):
        name = rng.choice(names)
        kind = rng.randrange(6)
        if kind == 0:
            value = name
        elif kind == 1:
            value = name[:rng.randrange(len(name) + 1)]
        elif kind == 2:
            value = name + rng.choice(pieces)
        elif kind == 3:
            cut = rng.randrange(len(name) + 1)
            value = name[:cut] + rng.choice(pieces) + name[cut:]
        else:
            value = "".join(rng.choice(pieces + list(name)) for _ in range(rng.randrange(5)))
        samples.append(json.dumps(value))
        samples.append(json.dumps(value, ensure_ascii=False))
        if value:
            # one character escaped: \u0061bc for "abc", \" and \\ as \u0022 / \u005c, pairs for astral
            index = rng.randrange(len(value))
            char = value[index]
            escaped = json.dumps(char)[1:-1] if ord(char) > 0xFFFF else "\\u%04x" % ord(char)
            body = json.dumps(value[:index], ensure_ascii=False)[1:-1]
            rest = json.dumps(value[index + 1:], ensure_ascii=False)[1:-1]
            samples.append('"' + body + escaped + rest + '"')
    return samples


@pytest.mark.parametrize("names", HAND_SETS + [random_names(1000)], ids=SET_IDS)
def test_sampled_keys_against_the_documented_language(names, small_limits):
    rng = random.Random(len(names))
    parts = new_dfas(names)
    unique = set(names)
    prefixes = {name[:end] for name in unique for end in range(len(name) + 1)}
    for text in sample_keys(names, rng, 400) + ['""', '"\\/"', '"\\ud800"', '"a', 'a"']:
        accepted = [dfa.fullmatch(text.encode("utf-8")) for dfa in parts]
        assert sum(accepted) == expected_key(text, unique, prefixes), text


def test_names_with_quotes_or_backslashes_keep_the_regex_construction():
    assert key_exclusion.key_exclusion_patterns(['a"b', "c"]) is None
    assert key_exclusion.key_exclusion_patterns(["a\\b"]) is None
    with pytest.raises(RegexError):
        compile_regex(KEY_SEPARATOR.join(['"', "x", "", 'a"b']), kind="key_exclusion")
    with pytest.raises(RegexError):
        compile_regex('"' + KEY_SEPARATOR + "x", kind="key_exclusion")
    with pytest.raises(RegexError):
        grammask.Grammar.from_ebnf('start ::= #!"x";')


# ------------------------------------------------------------------ schemas

def schema_for(names):
    return {"type": "object", "properties": {name: {"type": "integer"} for name in names},
            "additionalProperties": {"type": "string"}}


@pytest.mark.parametrize("names", [HAND_SETS[0], ["\u4e2d", "\u4e2d\u6587", "caf\u00e9", "\U0001F600x"],
                                   HAND_SETS[4], random_names(200)],
                         ids=["hand", "unicode", "ascii", "random200"])
def test_schema_instances_against_jsonschema(names, small_limits):
    """Exact when every name is printable ASCII (``json.dumps`` with or
    without ``ensure_ascii``); never looser, whatever the names."""
    schema = schema_for(names)
    matcher = SchemaMatcher(schema)
    assert not matcher.warnings
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(7)
    keys = [json.loads(text) for text in sample_keys(names, rng, 60)]
    for key in keys:
        for value in (1, "x"):
            instance = {key: value}
            valid = validator.is_valid(instance)
            for text in (json.dumps(instance), json.dumps(instance, ensure_ascii=False)):
                if all(is_plain_text(name) for name in names):
                    assert matcher.accepts(text) == valid, text
                elif matcher.accepts(text):
                    assert valid, text
    # An escaped spelling of a name is never an extra key (stricter, never looser).
    for name in filter(None, names):
        first = "\\u%04x" % ord(name[0]) if ord(name[0]) <= 0xFFFF else json.dumps(name[0])[1:-1]
        spelled = '{"' + first + json.dumps(name[1:], ensure_ascii=False)[1:-1] + '": "x"}'
        assert not matcher.accepts(spelled), spelled


def test_random_walks_stay_valid(small_limits):
    names = random_names(100)
    schema = schema_for(names)
    matcher = SchemaMatcher(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(3)
    for _ in range(40):
        output = matcher.random_walk(rng)
        if output is not None:
            assert validator.is_valid(json.loads(output)), output


def test_masks_equal_byte_by_byte_verdicts(small_limits):
    names = ["ab", "abc", "b", "\u00e9a", "ba"]
    matcher = SchemaMatcher(schema_for(names), whitespace="compact")
    pieces = [bytes([b]) for b in b'{}":,1abcx\\u0'] + [
        b'{"', b'":', b'"a', b'ab', b'abc', b'bc"', b'\\u00', b'61', b'e9', '\u00e9'.encode(), b'\xc3',
        b'\xa9', b'"x"', b'ba"', b'c"']
    vocab = grammask.Vocabulary([None, *pieces], eos_token_ids=[0])
    engine = grammask.Engine(grammask.compile(matcher.grammar, vocab))
    rng = random.Random(5)
    output = b""
    for _ in range(30):
        mask = engine.compute_allowed_token_ids().tolist()
        expected = [token for token in range(1, vocab.size) if matcher.viable(output + pieces[token - 1])]
        if matcher.accepts(output):
            expected.insert(0, 0)
        assert mask == expected, output
        choices = [token for token in mask if token != 0]
        if not choices:
            break
        token = rng.choice(choices)
        engine.try_accept_new_token(token)
        output += pieces[token - 1]


def test_kbnf_round_trip():
    grammar = grammask.Grammar.from_json_schema(schema_for(random_names(50)))
    text = grammar.to_ebnf()
    assert "#!" in text
    assert grammask.Grammar.from_ebnf(text).to_ebnf() == text


ESCAPED_NAMES = ['a"b', "c\\d", "e\nf", "g\th", "plain"]


def test_names_json_escapes_use_the_regex_construction():
    assert key_exclusion.key_exclusion_patterns(ESCAPED_NAMES) is None
    assert key_exclusion.key_exclusion_patterns(["plain", "x\x1fy"]) is None


@pytest.mark.parametrize("key", [
    '"a"', '"a\\""', '"a\\"b"', '"a\\u0022b"', '"a\\"c"', '"a""', '"a"x"', '"c\\\\d"', '"c\\\\"',
    '"c\\d"', '"e\\nf"', '"e\\u000af"', '"e\nf"', '"e\nx"', '"e\\nx"', '"g\th"', '"g\tx"', '"g\\tx"',
    '"plainx"', '"x"', '"\\u0022"'])
def test_names_json_escapes_never_accept_invalid_json(key):
    """Declared names holding ``"``, ``\\`` or control characters: an extra
    key never holds them raw (invalid JSON) and never decodes to a declared
    name; oracle ``json.loads`` + ``jsonschema``."""
    schema = {"type": "object", "properties": {name: {"type": "integer"} for name in ESCAPED_NAMES},
              "additionalProperties": {"type": "string"}}
    matcher = SchemaMatcher(schema)
    for value in ("1", '"s"'):
        text = "{" + key + ":" + value + "}"
        try:
            valid = jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))
        except json.JSONDecodeError:
            valid = False
        if not valid:
            assert not matcher.accepts(text), text
