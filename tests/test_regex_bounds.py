"""Counted repetitions are checked before a DFA is built (regex_bounds.py).

Oracle for "never rejects what fits": the DFA grammask builds for each
accepted pattern, whose state count stays within the limit given.
"""

from __future__ import annotations


import pytest

import grammask
from grammask.errors import LimitExceeded
from grammask.grammar.regex_bounds import check_repetitions
from grammask.terminals import compile_regex

ACCEPTED = [r"a{0,100}", r"(a{0,100}b{0,100}){0,3}", r"\x{10FFFF}{2}", r"[{0,99999}]", r"\p{Greek}{1,20}",
            r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}", r"a\{100000\}", r"[]{100000}]", r"[^]{1}]{2}"]
REJECTED = [(r"a{0,105000}", "max_repetition"), (r"(a{0,1000}){0,1000}", "max_dfa_states"),
            (r"((a{0,10}){0,10}){0,200}", "max_dfa_states"), (r"(?:x{5000}){3}", "max_dfa_states")]


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_patterns_within_the_limits_pass_and_build(pattern):
    check_repetitions(pattern, 10_000, 10_000)
    assert compile_regex(pattern).n_states <= 10_000


@pytest.mark.parametrize("pattern, limit", REJECTED)
def test_patterns_over_the_limits_fail_before_any_dfa_and_name_the_limit(pattern, limit,
                                                                         monkeypatch):
    """Refused by the bound check, before the crate determinizes anything
    (it once determinized first, for 20-35 s)."""
    from grammask import terminals

    def no_build(*args):
        raise AssertionError("a DFA was built before the limit check")

    terminals.REGEX_DFAS.cache_clear()
    monkeypatch.setattr(terminals._dfa_builder, "build_regex_table", no_build)
    with pytest.raises(LimitExceeded) as info:
        grammask.Grammar.from_regex(pattern)
    assert info.value.limit == limit


def test_the_limits_are_the_config_fields():
    grammar = grammask.Grammar.from_regex(r"a{0,12000}", config=grammask.Config(max_repetition=20_000,
                                                                                max_dfa_states=20_000))
    assert grammar.lnf.dfas[0].n_states > 10_000


@pytest.mark.parametrize("pattern, limit", REJECTED)
def test_a_rejected_pattern_is_rejected_again(pattern, limit):
    """Passing patterns are remembered; a failing one raises on every call,
    and the same pattern passes under limits large enough for it."""
    for _ in range(2):
        with pytest.raises(LimitExceeded) as info:
            check_repetitions(pattern, 10_000, 10_000)
        assert info.value.limit == limit
    check_repetitions(pattern, 10**6, 10**7)


@pytest.mark.parametrize("pattern", [r'"(?:n(?:a(?:m(?:e)?)?)?|[ \!\#-\[\]-\~]+)"', r"a*b+c?(?:d|e)*",
                                     r"[{]+\{", r"x\{7\}y", r"[a-z{}]+"])
def test_patterns_without_a_counted_repetition_pass_any_limit(pattern):
    """No ``{m}``/``{m,}``/``{m,n}`` quantifier: nothing to multiply, so even
    limits of 1 pass (such patterns skip the scan), and the DFA builds."""
    check_repetitions(pattern, 1, 1)
    assert compile_regex(pattern).n_states >= 2
