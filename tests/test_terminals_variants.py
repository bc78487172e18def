"""Terminal variants: early end (``#e``), complement (``#ex``), literal sets
and substring sets (``#substrs``), each against a plain Python reference:

- early end: a full match (``regex`` module) no proper prefix of which is a full match;
- complement: valid UTF-8 in which ``regex.search`` finds no match;
- literals: membership in the Python set (``regex`` with IGNORECASE for
  case-insensitive sets);
- substrings: valid UTF-8 whose text is ``in`` the source text.
Inputs include samples, edits, byte slices cutting characters and invalid UTF-8.
"""

from __future__ import annotations

import pickle

import pytest
import regex
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from grammask.errors import GrammarError, LimitExceeded, RegexError
from grammask.terminals import DFA, compile_literals, compile_regex, compile_substrings
from support.terminals_corpus import (CASE_POOL, CHAR_POOL, escape_literal, near_inputs, patterns,
                              reference_minimal_size)

TEST_MAX_BYTES = 1 << 20
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def compile_or_reject(pattern: str, kind: str) -> DFA:
    """The DFA, or a rejected example when the random pattern is too big for
    the test's byte limit (determinizing Unicode classes under nested
    repetition can blow up before minimization)."""
    try:
        return compile_regex(pattern, kind=kind, max_bytes=TEST_MAX_BYTES)
    except LimitExceeded:
        reject()


def decoded(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def with_context(inputs: list[bytes], rng) -> list[bytes]:
    """The inputs, plus each one between random pool characters (so a
    match may sit inside a longer string)."""
    wrapped = []
    for data in inputs:
        left = "".join(rng.choice(CHAR_POOL) for _ in range(rng.randint(0, 2))).encode()
        right = "".join(rng.choice(CHAR_POOL) for _ in range(rng.randint(0, 2))).encode()
        wrapped.append(left + data + right)
    return inputs + wrapped


@SETTINGS
@given(tree=patterns, rng=st.randoms(use_true_random=False))
def test_early_end_matches_end_at_the_first_match(tree, rng):
    pattern = tree.render()
    dfa = compile_or_reject(pattern, "early_end")
    assert dfa.kind == "early_end"
    for data in near_inputs(tree, rng, n_samples=3):
        text = decoded(data)
        expected = (text is not None and regex.fullmatch(pattern, text) is not None
                    and not any(regex.fullmatch(pattern, text[:end]) for end in range(len(text))))
        assert dfa.fullmatch(data) == expected, (pattern, data)
    assert reference_minimal_size(dfa) == dfa.n_states


@SETTINGS
@given(tree=patterns, rng=st.randoms(use_true_random=False))
def test_complement_accepts_exactly_strings_without_a_match(tree, rng):
    pattern = tree.render()
    dfa = compile_or_reject(pattern, "complement")
    assert dfa.kind == "complement"
    for data in with_context(near_inputs(tree, rng, n_samples=2), rng):
        text = decoded(data)
        expected = text is not None and regex.search(pattern, text) is None
        assert dfa.fullmatch(data) == expected, (pattern, data)
    assert reference_minimal_size(dfa) == dfa.n_states


@pytest.mark.parametrize("pattern, accepted, rejected", [
    ("\\*/", [b"", b"a*b/", b"*", "é*".encode()], [b"*/", b"x*/y", b"\xff"]),
    ("a$", [b"ab", b"", b"b"], [b"a", b"ba"]),
    ("^a", [b"ba", b"b"], [b"a", b"ab"]),
    ("x*", [], [b"", b"y"]),
])
def test_complement_fixed_cases(pattern, accepted, rejected):
    dfa = compile_regex(pattern, kind="complement")
    for data in accepted:
        assert dfa.fullmatch(data), data
    for data in rejected:
        assert not dfa.fullmatch(data), data


def test_complement_of_nullable_pattern_is_the_empty_language():
    dfa = compile_regex("a*", kind="complement")
    assert dfa.is_empty_language and dfa.n_states == 1 and dfa.start == dfa.dead


words = st.lists(st.text(alphabet=CHAR_POOL, max_size=4), max_size=6)


@SETTINGS
@given(strings=words, probes=st.lists(st.text(alphabet=CHAR_POOL, max_size=5), max_size=8),
       cut=st.integers(0, 12))
def test_literal_sets_accept_exactly_their_members(strings, probes, cut):
    dfa = compile_literals(strings)
    assert dfa.kind == "literals"
    members = set(strings)
    candidates = [s.encode() for s in strings + probes]
    candidates += [s.encode()[:cut] for s in strings] + [s.encode() + b"a" for s in strings]
    candidates += [s.encode() + b"\xff" for s in strings]
    for data in candidates:
        assert dfa.fullmatch(data) == (decoded(data) in members), data
    assert reference_minimal_size(dfa) == dfa.n_states
    alternation = "|".join("".join(escape_literal(c) for c in s) for s in strings)
    if strings:
        assert compile_regex(alternation) == dfa


@SETTINGS
@given(strings=st.lists(st.text(alphabet=CASE_POOL, min_size=1, max_size=3), min_size=1,
                        max_size=4),
       probes=st.lists(st.text(alphabet=CASE_POOL, max_size=3), max_size=8))
def test_case_insensitive_literal_sets(strings, probes):
    dfa = compile_literals(strings, case_insensitive=True)
    oracle = regex.compile("|".join(regex.escape(s) for s in strings), flags=regex.IGNORECASE)
    for text in probes + [s.swapcase() for s in strings] + [s.upper() for s in strings]:
        assert dfa.fullmatch(text.encode()) == (oracle.fullmatch(text) is not None), text


def test_literal_edge_cases():
    assert compile_literals([]).is_empty_language
    assert compile_literals([""]).fullmatch(b"") and not compile_literals([""]).fullmatch(b"a")
    assert compile_literals(["b", "a"]) is compile_literals(("a", "b", "a"))
    with pytest.raises(TypeError):
        compile_literals("abc")


@SETTINGS
@given(text=st.text(alphabet=CHAR_POOL, max_size=14), rng=st.randoms(use_true_random=False))
def test_substring_sets_accept_exactly_substrings_on_character_boundaries(text, rng):
    dfa = compile_substrings(text)
    assert dfa.kind == "substrings"
    encoded = text.encode()
    candidates = [text[i:j].encode() for i in range(len(text) + 1) for j in range(i, len(text) + 1)]
    for _ in range(20):
        i = rng.randint(0, len(encoded))
        candidates.append(encoded[i:rng.randint(i, len(encoded))])
        candidates.append("".join(rng.choice(CHAR_POOL) for _ in range(rng.randint(0, 3))).encode())
    candidates.append(encoded + b"\xff")
    for data in candidates:
        substring = decoded(data)
        assert dfa.fullmatch(data) == (substring is not None and substring in text), data
    assert reference_minimal_size(dfa) == dfa.n_states


def test_variants_pickle_and_compare_by_content():
    for dfa in (compile_regex("ab|c", kind="early_end"), compile_regex("ab", kind="complement"),
                compile_literals(["ab", "c"]), compile_substrings("abc\u00e9")):
        copy = pickle.loads(pickle.dumps(dfa))
        assert copy == dfa and copy.kind == dfa.kind and copy.source == dfa.source
    assert compile_literals(["ab", "c"]) == compile_regex("ab|c")
    assert compile_substrings("ab") == compile_literals(["", "a", "b", "ab"])


def test_variant_errors_and_limits():
    with pytest.raises(RegexError):
        compile_regex("(", kind="complement")
    with pytest.raises(GrammarError, match="lone surrogate"):
        compile_literals(["\udc80"])
    with pytest.raises(LimitExceeded) as info:
        compile_substrings("abcdefghij" * 20, max_states=50)
    assert info.value.limit == "max_dfa_states"
    with pytest.raises(LimitExceeded) as info:
        compile_literals([hex(i * 7919) for i in range(200)], max_states=20)
    assert info.value.limit == "max_dfa_states"
    with pytest.raises(LimitExceeded) as info:
        compile_substrings("x" * 100_000, max_bytes=1 << 16)
    assert info.value.limit == "max_dfa_bytes"
