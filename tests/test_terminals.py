"""Regex terminal DFAs (``grammask.terminals.compile_regex``, kind "regex").

Oracles: Python's ``regex`` module (full matches with ``fullmatch``, prefix
viability with ``fullmatch(..., partial=True)``), Python's UTF-8 decoder, and
a plain Moore-style minimization (``terminals_corpus.reference_minimal_size``,
to check that tables are minimal).  Patterns come from ``terminals_corpus`` (constructs that mean the
same in Rust and Python syntax); inputs mix samples of the pattern, edits of
them, multi-byte and invalid UTF-8.
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from grammask.errors import LimitExceeded, RegexError
from grammask.terminals import DFA, compile_regex
from support.terminals_corpus import CASE_POOL, near_inputs, patterns, reference_minimal_size

N_DIFFERENTIAL_EXAMPLES = 320
MIN_DIFFERENTIAL_PAIRS = 5_000
TEST_MAX_BYTES = 1 << 20


def compile_or_reject(pattern: str) -> DFA:
    """The DFA, or a rejected example when the random pattern is too big for
    the test's byte limit (determinizing Unicode classes under nested
    repetition, e.g. ``(?:0?(?:\\d\\d){2,5})*``, blows up before minimization)."""
    try:
        return compile_regex(pattern, max_bytes=TEST_MAX_BYTES)
    except LimitExceeded:
        reject()


def decoded(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def expected_fullmatch(pattern: str, data: bytes, flags: int = 0) -> bool:
    text = decoded(data)
    return text is not None and regex.fullmatch(pattern, text, flags=flags) is not None


def test_fullmatch_and_prefix_viability_agree_with_regex_module():
    """At least MIN_DIFFERENTIAL_PAIRS (pattern, input) full-match checks,
    plus a prefix-viability check at every character boundary of every
    valid-UTF-8 input; the count is asserted after Hypothesis finishes."""
    pair_counts = {"fullmatch": 0, "prefix": 0}

    @settings(max_examples=N_DIFFERENTIAL_EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(tree=patterns, rng=st.randoms(use_true_random=False))
    def check(tree, rng):
        pattern = tree.render()
        greedy_pattern = tree.render(lazy=False)
        dfa = compile_or_reject(pattern)
        for data in near_inputs(tree, rng, n_samples=3):
            assert dfa.fullmatch(data) == expected_fullmatch(pattern, data), (pattern, data)
            pair_counts["fullmatch"] += 1
            text = decoded(data)
            if text is None:
                continue
            for end in range(len(text) + 1):
                prefix = text[:end]
                viable = regex.fullmatch(greedy_pattern, prefix, partial=True) is not None
                assert (dfa.run(prefix.encode()) != dfa.dead) == viable, (pattern, prefix)
                pair_counts["prefix"] += 1

    check()
    assert pair_counts["fullmatch"] >= MIN_DIFFERENTIAL_PAIRS, pair_counts
    assert pair_counts["prefix"] >= MIN_DIFFERENTIAL_PAIRS, pair_counts


@settings(max_examples=60, deadline=None)
@given(pattern_chars=st.lists(st.sampled_from(CASE_POOL), min_size=1, max_size=3),
       inputs=st.lists(st.text(alphabet=CASE_POOL, max_size=3), min_size=5, max_size=10))
def test_case_insensitive_agrees_with_regex_module(pattern_chars, inputs):
    pattern = "".join(pattern_chars) + "|[a-c]+"
    dfa = compile_regex(pattern, case_insensitive=True)
    for text in inputs + ["".join(pattern_chars).swapcase()]:
        expected = regex.fullmatch(pattern, text, flags=regex.IGNORECASE) is not None
        assert dfa.fullmatch(text.encode()) == expected, (pattern, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(tree=patterns)
def test_tables_keep_their_invariants(tree):
    dfa = compile_or_reject(tree.render())
    assert dfa.dead == 0 and dfa.format_version == 1 and dfa.kind == "regex"
    assert dfa.class_map.dtype == np.uint8 and dfa.class_map.shape == (256,)
    assert dfa.transitions.dtype == np.int32
    assert dfa.transitions.shape == (dfa.n_states, dfa.n_classes)
    assert dfa.accepting.dtype == np.bool_ and dfa.accepting.shape == (dfa.n_states,)
    assert set(np.unique(dfa.class_map).tolist()) == set(range(dfa.n_classes))
    assert not dfa.accepting[0] and (dfa.transitions[0] == 0).all()
    assert dfa.transitions.min() >= 0 and dfa.transitions.max() < dfa.n_states
    assert reference_minimal_size(dfa) == dfa.n_states
    assert dfa.matches_empty == (regex.fullmatch(tree.render(), "") is not None)


@pytest.mark.parametrize("pattern, accepted, rejected", [
    ("[a-z]+", [b"a", b"abc"], [b"", b"ab1", b"A"]),
    ("a|ab", [b"a", b"ab"], [b"", b"abb", b"b"]),
    ("\\d{2,3}", ["٣٣".encode(), b"123"], [b"1", b"1234"]),
    ("[^\"\\\\]*", [b"", b"abc", "é中😀".encode()], [b"a\"", b"\\", b"\xff", b"\xc3"]),
    ("(?s:.)", ["\U0010FFFF".encode(), b"\n"], [b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\x80"]),
    ("^ab$", [b"ab"], [b"ab\n"]),
    ("a(?-u:\\b)", [b"a"], [b"ab"]),
    ("", [b""], [b"a"]),
])
def test_fixed_cases(pattern, accepted, rejected):
    dfa = compile_regex(pattern)
    for data in accepted:
        assert dfa.fullmatch(data), data
    for data in rejected:
        assert not dfa.fullmatch(data), data


def test_step_and_is_accepting_follow_the_tables():
    dfa = compile_regex("ab+")
    state = dfa.start
    for byte in b"abb":
        following = dfa.step(state, byte)
        assert following == int(dfa.transitions[state, dfa.class_map[byte]]) != dfa.dead
        state = following
    assert dfa.is_accepting(state)
    assert dfa.step(state, ord("a")) == dfa.dead
    assert not dfa.is_accepting(dfa.step(dfa.start, ord("a")))
    assert dfa.run(b"a\xff") == dfa.dead
    assert dfa.run(b"bb", state=dfa.run(b"a")) == dfa.run(b"abb")
    lines = dfa.dump().splitlines()
    assert len(lines) == dfa.n_states
    assert lines[0].startswith("D") and lines[dfa.start][1] == ">"
    assert all((line[2] == "*") == dfa.is_accepting(state) for state, line in enumerate(lines))
    assert "61 => " in lines[dfa.start]


def test_pickle_equality_hash_and_cache():
    dfa = compile_regex("[0-9]+(\\.[0-9]+)?")
    copy = pickle.loads(pickle.dumps(dfa))
    assert copy == dfa and hash(copy) == hash(dfa)
    assert copy.fullmatch(b"3.14") and not copy.fullmatch(b"3.")
    assert (copy.transitions == dfa.transitions).all()
    assert compile_regex("[0-9]+(\\.[0-9]+)?") is dfa
    assert compile_regex("[0-9]+(?:[.][0-9]+)?") == dfa
    assert compile_regex("[0-9]*") != dfa
    assert not dfa.transitions.flags.writeable


@pytest.mark.parametrize("pattern, position", [
    ("abc(", 3),
    ("\u00e9\u00e9[z-a]", 3),
    ("a{2,1}", 1),
    ("\u4e2d\\", 1),
    ("(?P<x>a)(?P<x>b)", 12),
])
def test_syntax_errors_carry_character_positions(pattern, position):
    with pytest.raises(RegexError) as info:
        compile_regex(pattern)
    assert info.value.position == position
    assert info.value.pattern == pattern
    assert info.value.reason and info.value.reason in str(info.value)
    assert "^" in str(info.value)


def test_unicode_word_boundary_is_rejected_with_a_hint():
    with pytest.raises(RegexError, match=r"\(\?-u:\\b\)"):
        compile_regex("\\bword\\b")
    assert compile_regex("(?-u:\\b)word(?-u:\\b)").fullmatch(b"word")


def test_state_limit():
    with pytest.raises(LimitExceeded) as info:
        compile_regex("[a-z]{0,500}", max_states=100)
    assert info.value.limit == "max_dfa_states"
    assert info.value.given == 502 and info.value.maximum == 100
    assert "max_dfa_states" in str(info.value)
    assert compile_regex("[a-z]{0,500}", max_states=502).n_states == 502


def test_a_dfa_built_within_smaller_limits_serves_larger_ones_only():
    """``REGEX_DFAS``: the translator's small-budget build of a
    pattern serves the grammar's larger-budget request; a table built within
    large limits never lets a smaller request pass that would fail."""
    from grammask import clear_caches
    from grammask.terminals import REGEX_DFAS

    clear_caches(vocabularies=False)
    small = compile_regex("[a-z]{0,40}x", max_states=100, max_bytes=1 << 20)
    assert REGEX_DFAS.get(("[a-z]{0,40}x", "regex", False), 100, 1 << 20) is small
    larger = compile_regex("[a-z]{0,40}x", max_states=1_000, max_bytes=1 << 22)
    assert larger is small
    assert larger.fullmatch(b"abcx") and not larger.fullmatch(b"a" * 41 + b"x")
    assert compile_regex("[a-z]{0,400}", max_states=1_000).n_states == 402
    with pytest.raises(LimitExceeded) as info:
        compile_regex("[a-z]{0,400}", max_states=401)
    assert info.value.given == 402
    assert REGEX_DFAS.get(("[a-z]{0,400}", "regex", False), 401, 1 << 30) is None
    clear_caches(vocabularies=False)
    assert REGEX_DFAS.get(("[a-z]{0,40}x", "regex", False), 100, 1 << 20) is None


def test_a_piece_built_within_larger_limits_does_not_let_a_smaller_build_pass():
    """The crate's piece cache (csrc/dfa/src/concat.rs): ``\\S+`` built as a
    piece of ``b{16}\\S+`` within the default limits is not taken by
    ``a{16}\\S+`` within limits its own build of that piece exceeds
    (building ``\\S+`` takes more than 6,000 bytes, its minimal table less),
    so whether a build fits does not depend on what the process built before."""
    from grammask import clear_caches

    clear_caches(vocabularies=False)
    with pytest.raises(LimitExceeded):
        compile_regex(r"a{16}\S+", max_bytes=6_000)
    compile_regex(r"b{16}\S+")
    with pytest.raises(LimitExceeded):
        compile_regex(r"a{16}\S+", max_bytes=6_000)
    assert compile_regex(r"a{16}\S+").fullmatch("aaaaaaaaaaaaaaaaéx".encode())


def test_byte_limit_stops_exploding_patterns():
    with pytest.raises(LimitExceeded) as info:
        compile_regex("(a|b)*a(a|b){30}")
    assert info.value.limit == "max_dfa_bytes"
    with pytest.raises(LimitExceeded) as info:
        compile_regex("a{1000}{1000}")
    assert info.value.limit == "max_dfa_bytes"


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        compile_regex("a", kind="nope")
    with pytest.raises(TypeError):
        compile_regex(b"a")
    with pytest.raises(ValueError, match="max_states"):
        compile_regex("a", max_states=0)
    with pytest.raises(RegexError) as info:
        compile_regex("ab\ud800")
    assert info.value.position == 2


def test_invalid_utf8_is_rejected_not_raised():
    dfa = compile_regex("(?s:.)*")
    rng = random.Random(7)
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 8)))
        assert dfa.fullmatch(data) == (decoded(data) is not None), data


@pytest.mark.parametrize("pattern", [
    r'[ \t\n\r]{0,256}:[ \t\n\r]{0,256}',
    r'(?:[ \t\n\r]{0,256}:[ \t\n\r]{0,256})(?:"[0-9]{4}-[0-9]{2}-[0-9]{2}")',
    r'(?:[ \t\n\r]{0,20}:[ \t\n\r]{0,17})(?:"(?:[^"\\]|\\["\\/bfnrt]){0,18}")',
    r'a{0,16}c?b{16,}',
    r'[ab]{16}(?:ab|b){2,18}é?',
    r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4}){0,20}"',
    r'(?:[^"\\\x00-\x1f]|\\u00[0-9a-f]{2}){17}(?:[^"\\\x00-\x1f]|\\u00[0-9a-f]{2}){0,5}',
    r'(?:ab|c|é){3,}',
    r'(?:ab|c){16,}',
    r'(?:a|ab){0,17}b',
])
def test_joined_patterns_built_from_pieces_agree_with_regex_module(pattern):
    """Concatenations with counted repetitions are built from their pieces'
    cached tables (csrc/dfa/src/concat.rs), counted repetitions of a
    prefix-free item by a counter (csrc/dfa/src/repeat.rs; ``a|ab`` is not
    prefix-free and takes the general path): the same strings match as with
    the ``regex`` module, before and after ``clear_caches`` empties that cache."""
    from grammask import clear_caches

    rng = random.Random(11)
    alphabet = [" ", "\t", ":", '"', "\\", "0", "7", "-", "a", "b", "c", "é", "/", "\\u00e9", "\\u00"]
    first = compile_regex(pattern)
    clear_caches(vocabularies=False)
    again = compile_regex(pattern)
    assert first == again
    samples = [rng.choice(["", " ", " \t"]) + ":" + rng.choice(["", "  "]) + '"2024-01-31"' for _ in range(20)]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(2_000)]
    samples += ["a" * n + "b" * m for n in range(0, 20, 3) for m in range(0, 40, 5)]
    items = ["a", "ab", "c", "é", "\\u00e9", "\\n", "x"]
    samples += ["".join(rng.choice(items) for _ in range(n)) + rng.choice(["", '"', "b"])
                for n in range(0, 30) for _ in range(20)]
    for text in samples:
        data = text.encode()
        assert again.fullmatch(data) == expected_fullmatch(pattern, data), (pattern, text)
