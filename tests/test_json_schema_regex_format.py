"""``format: regex`` is the context-free grammar of ``regex_format``: never
looser than Python's ``re`` (``jsonschema``'s format checker) or ECMA-262
(``RegExp`` with and without ``u``, through node when it is installed), and
it accepts the patterns of the subset its docstring lists.

Oracles: ``re.compile`` and ``jsonschema`` (draft 2020-12 with the format
checker) on hand-written patterns, on random strings over the regex syntax
characters and on random patterns of the subset (Hypothesis, derandomized by
the conftest profile); random walks through the grammar must compile in both
dialects.  The JSON-Schema-Test-Suite's ``optional/format/regex`` cases and
the instances of the MaskBench schemas this made silent are checked too."""

from __future__ import annotations

import json
import pathlib
import random
import re
import shutil
import subprocess
import warnings

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grammask.json_schema.regex_format import MAX_GROUP_NESTING
from support.schema_matcher import SchemaMatcher, schema_ordered

SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string",
          "format": "regex"}
MATCHER = SchemaMatcher(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
NODE = shutil.which("node")
SUITE = (pathlib.Path(__file__).parent / "workloads" / "json-schema-test-suite" / "optional"
         / "format" / "regex.json")
MASKBENCH = pathlib.Path(__file__).resolve().parents[2] / "shared" / "workloads" / "maskbench"

ACCEPTED = [
    "", "a", "^example$", "([abc])+\\s+$", "^\\s*(it|describe)\\(\\s*['\"]([^'\"]+)['\"]",
    "^\\s*describe\\(\\s*['\"]([^'\"]+)['\"]\\s*,\\s*function\\(\\s*\\)\\s*\\{",
    "^[a-z0-9-]+(\\.[a-z0-9-]+)*$", "(?:a|b)*?c{2,5}d{3}e{0,}f+?", "[-a]|[a-]|[^-]|[\\d-]",
    "(?=a)(?!b)(?<=c)(?<!d\\.[ef])", "\\x41\\u00e9\\/\\\\\\^\\$\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|",
    "[\\b\\-\\]\\[\\\\]", "é+ü|日本", "(|)", "()*", "a{99,100}", "a{0,999}?", "\\bword\\B",
    "[ -~]", "[!-/]", ".*", "a|b|", "((((a))))", "[a-zA-Z0-9-_]", "[a-z-0-9]", "[a-b-c]", "(" * MAX_GROUP_NESTING + ")" * MAX_GROUP_NESTING,
]
"""Patterns the grammar accepts (each valid in both dialects)."""

REFUSED_INVALID = [
    "^(abc]", "[", "(", ")", "a**", "*a", "a{2}{3}", "a|*", "[z-a]", "[\\d-z]", "(?<name>x)",
    "\\", "a{3,2}", "[^]", "(?", "Invalid regex pattern [",
]
"""Patterns Python's ``re`` refuses (the first two and the last are MaskBench
instances' values): refused."""

REFUSED_STRICTER = [
    "(a)\\1", "(?P<n>a)", "(?i)a", "(?#c)", "a{,5}", "a{1000}", "a{100,200}", "{", "}", "]",
    "x{", "[]", "[a-z--]", "[a--]", "[[]", "[\\.-_]", "[\\x01-\\x1f]", "\\0", "\\A", "\\Z", "\\q", "(?<=a+)", "(?<=(a))",
    "[\\u0041-\\u0042]", "[а-я]", "a++", "(" * (MAX_GROUP_NESTING + 1) + ")" * (MAX_GROUP_NESTING + 1),
]
"""Patterns outside the documented subset (some valid in one dialect or both): refused."""


def python_valid(pattern: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            re.compile(pattern)
        except (re.error, RecursionError, OverflowError):
            return False
    return True


def ecma_valid(patterns: list[str]) -> list[bool]:
    """Whether each pattern compiles as a RegExp both without and with ``u``."""
    script = ("const lines = require('fs').readFileSync(0, 'utf8').split('\\n').filter(x => x);"
              "for (const l of lines) { const p = JSON.parse(l); let ok = true;"
              "try { new RegExp(p); new RegExp(p, 'u'); } catch (e) { ok = false; }"
              "console.log(ok ? 1 : 0); }")
    done = subprocess.run([NODE, "-e", script], input="\n".join(json.dumps(p) for p in patterns),
                          capture_output=True, text=True, check=True, timeout=60)
    return [line == "1" for line in done.stdout.split()]


def accepts(pattern: str) -> bool:
    return MATCHER.accepts(json.dumps(pattern)) and MATCHER.accepts(
        json.dumps(pattern, ensure_ascii=False))


def test_plain_regex_format_is_silent():
    assert MATCHER.warnings == []


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_subset_patterns_are_accepted_and_valid(pattern):
    assert accepts(pattern), pattern
    assert python_valid(pattern) and VALIDATOR.is_valid(pattern), pattern


@pytest.mark.parametrize("pattern", REFUSED_INVALID + REFUSED_STRICTER)
def test_other_patterns_are_refused(pattern):
    assert not MATCHER.accepts(json.dumps(pattern)), pattern


def test_refused_invalid_patterns_are_invalid_for_python_or_ecma():
    ecma = ecma_valid(REFUSED_INVALID) if NODE else [True] * len(REFUSED_INVALID)
    for pattern, ecma_ok in zip(REFUSED_INVALID, ecma):
        assert not (python_valid(pattern) and ecma_ok), pattern


@pytest.mark.skipif(NODE is None, reason="node (ECMA-262 RegExp) is not installed")
def test_accepted_patterns_are_ecma_valid():
    assert all(ecma_valid(ACCEPTED)), [p for p, ok in zip(ACCEPTED, ecma_valid(ACCEPTED)) if not ok]


def test_suite_cases():
    for group in json.loads(SUITE.read_text(encoding="utf-8")):
        for case in group["tests"]:
            if isinstance(case["data"], str):
                assert accepts(case["data"]) == case["valid"], case


SYNTAX = list("()[]{}|^$\\.*+?-,:=!<>PabdsuxBZ019é/\"")


@given(st.lists(st.sampled_from(SYNTAX), max_size=14).map("".join))
def test_random_strings_accepted_only_if_valid(pattern):
    if accepts(pattern):
        assert python_valid(pattern) and VALIDATOR.is_valid(pattern), pattern
        if NODE:
            assert ecma_valid([pattern]) == [True], pattern


_LITERAL = st.sampled_from(["a", "b", "é", "-", ",", "/", "\\.", "\\(", "\\d", "\\s", "\\w",
                            "\\x2f", "\\u00e9", "\\n", "\\\\", ".", "\\{", "\\]"])
_CLASS = st.builds(lambda negated, items: "[" + negated + "".join(items) + "]",
                   st.sampled_from(["", "^"]),
                   st.lists(st.sampled_from(["a", "0-9", "a-z", "_", "\\d", "\\-", "é", ".", "$"]),
                            min_size=1, max_size=3))
_QUANTIFIER = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,}", "{0,3}", "{12,120}", "*?"])


def _patterns(depth: int):
    atom = st.one_of(_LITERAL, _CLASS)
    term = st.one_of(st.builds(str.__add__, atom, _QUANTIFIER), st.sampled_from(["^", "$", "\\b"]))
    if depth > 0:
        group = st.builds(lambda opening, inner, quantifier: opening + inner + ")" + quantifier,
                          st.sampled_from(["(", "(?:"]), _patterns(depth - 1), _QUANTIFIER)
        look = st.builds(lambda opening, inner: opening + inner + ")",
                         st.sampled_from(["(?=", "(?!"]), _patterns(depth - 1))
        term = st.one_of(term, group, look)
    sequence = st.lists(term, max_size=4).map("".join)
    return st.lists(sequence, min_size=1, max_size=3).map("|".join)


@given(_patterns(3))
def test_random_subset_patterns_are_accepted(pattern):
    assert python_valid(pattern), pattern
    assert accepts(pattern), pattern


def test_random_walks_compile_in_both_dialects():
    rng = random.Random(7)
    walks = [MATCHER.random_walk(rng, max_bytes=60) for _ in range(300)]
    patterns = [json.loads(walk) for walk in walks if walk is not None]
    assert len(patterns) > 150
    assert len({p for p in patterns if "(" in p}) > 10
    for pattern in patterns:
        assert python_valid(pattern) and VALIDATOR.is_valid(pattern), pattern
    if NODE:
        assert all(ecma_valid(patterns)), [p for p, ok in zip(patterns, ecma_valid(patterns))
                                           if not ok]


def _maskbench_patterns() -> list[str]:
    found = set()

    def walk(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "pattern" and isinstance(item, str):
                    found.add(item)
                if key == "patternProperties" and isinstance(item, dict):
                    found.update(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(MASKBENCH.glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")).get("schema"))
    return sorted(found)


def test_real_patterns_of_maskbench_schemas():
    """The ``pattern`` and ``patternProperties`` regexes of the MaskBench
    schemas: none accepted that a dialect refuses, and all but a few of
    those both accept are in the subset."""
    if not MASKBENCH.is_dir():
        pytest.skip(f"{MASKBENCH} is not beside the checkout")
    patterns = _maskbench_patterns()
    accepted = [pattern for pattern in patterns if accepts(pattern)]
    assert len(patterns) > 1000
    assert all(python_valid(pattern) for pattern in accepted)
    if NODE:
        assert all(ecma_valid(accepted))
        valid = [p for p, ok in zip(patterns, ecma_valid(patterns)) if ok and python_valid(p)]
        assert len(accepted) >= 0.99 * len(valid)


def test_beside_a_pattern_or_length_bounds_it_warns():
    for extra in ({"pattern": "^a"}, {"minLength": 1}, {"maxLength": 9}):
        matcher = SchemaMatcher({**SCHEMA, **extra})
        assert [w.keyword for w in matcher.warnings] == ["format"], extra
        assert "not enforced beside a pattern or length bounds" in str(matcher.warnings[0])


def test_not_of_regex_format_warns():
    matcher = SchemaMatcher({"type": "string", "not": {"format": "regex"}})
    assert [w.keyword for w in matcher.warnings] == ["not"]


def test_property_names_in_regex_format():
    schema = {"type": "object", "propertyNames": {"format": "regex"}}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    for instance in ({}, {"a": 1}, {"[": 1}, {"(a)": 1, "b": 2}, {"a": 1, "(": 2}, {"\\d+": []}):
        assert matcher.accepts(json.dumps(instance)) == validator.is_valid(instance), instance


@pytest.mark.parametrize("name", ["Github_hard---o16749", "Github_hard---o53084",
                                  "JsonSchemaStore---chutzpah", "JsonSchemaStore---jfrog-pipelines"])
def test_maskbench_schemas_are_silent_and_agree_on_their_instances(name):
    path = MASKBENCH / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is not beside the checkout")
    document = json.loads(path.read_text(encoding="utf-8"))
    matcher = SchemaMatcher(document["schema"])
    assert matcher.warnings == []
    validator = jsonschema.validators.validator_for(document["schema"])(
        document["schema"], format_checker=jsonschema.FormatChecker())
    for index, case in enumerate(document.get("tests", [])):
        # members in the schema's order: the default grammar's (MaskBench lists some otherwise)
        data = schema_ordered(case["data"], document["schema"])
        text = json.dumps(data, separators=(",", ":"))
        if validator.is_valid(data):
            # o53084's second instance nests a schema whose members come in another order
            assert matcher.accepts(text) or (name, index) == ("Github_hard---o53084", 1), name
        else:
            assert not matcher.accepts(text), (name, text[:200])
