"""Nested repetitions collapse and unit rules close in linear time, with the language unchanged.

Oracles: ``support.ast_reference.ReferenceRecognizer`` (a recognizer over the
AST as written, no normalization) compared with the normalized grammar's
``LNFRecognizer`` on every short string; the sizes of the normalized grammar
show that nothing expanded one copy per count.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

import grammask
from grammask.errors import LimitExceeded
from grammask.grammar.ast import Alternation, GrammarAST, Literal, Repeat, Rule, RuleRef, Sequence
from grammask.grammar.gbnf import parse_gbnf
from support.ast_reference import ReferenceRecognizer
from support.grammar_strategies import compare_on_short_strings
from support.lnf_reference import LNFRecognizer

ITEMS = [Literal(b"a"), Literal(b"ab"), Alternation((Literal(b"a"), Literal(b"b"))),
         Sequence((Literal(b"a"), Repeat(Literal(b"b"), 0, 1)))]
bounds = st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 3))).map(
    lambda pair: (pair[0], None if pair[1] is None else pair[0] + pair[1]))


@seed(20261125)
@settings(max_examples=200, deadline=None)
@given(item=st.sampled_from(ITEMS), levels=st.lists(bounds, min_size=2, max_size=4))
def test_nested_repetitions_keep_their_language(item, levels):
    node = item
    for low, high in levels:
        node = Repeat(node, low, high)
    ast = GrammarAST((Rule("start", Sequence((node, Literal(b"b")))),), "start")
    grammar = grammask.Grammar.from_ast(ast)
    compare_on_short_strings(ReferenceRecognizer(ast), LNFRecognizer(grammar.lnf), max_length=6,
                             alphabet=b"ab")


def test_a_nullable_repeated_body_and_nested_stars_stay_small():
    grammar = grammask.Grammar.from_gbnf('root ::= ("a"?){0,10000} "b"')
    assert grammar.lnf.n_productions < 20_100  # one production per count at most, not per pair
    stars = grammask.Grammar.from_gbnf("root ::= " + "(" * 900 + '"a"' + ")*" * 900)
    assert stars.lnf.n_productions <= 3


def test_a_nested_bound_over_max_repetition_names_the_limit():
    with pytest.raises(LimitExceeded) as info:
        grammask.Grammar.from_gbnf('root ::= (("a"{0,1000}){0,1000}){0,1000}')
    assert info.value.limit == "max_repetition"


@seed(20261125)
@settings(max_examples=100, deadline=None)
@given(edges=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12),
       own=st.lists(st.integers(0, 5), min_size=1, max_size=6))
def test_unit_rules_with_cycles_keep_their_language(edges, own):
    bodies: dict[int, list] = {i: [] for i in range(6)}
    for source, target in edges:
        bodies[source].append(RuleRef(f"r{target}"))
    for i in own:
        bodies[i].append(Literal(bytes([ord("a") + i % 2]) * (1 + i // 2)))
    rules = tuple(Rule(f"r{i}", Alternation(tuple(body)) if len(body) > 1 else body[0])
                  for i, body in bodies.items() if body)
    if "r0" not in {rule.name for rule in rules}:
        return
    ast = GrammarAST(rules, "r0")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # rules not reached from r0
            grammar = grammask.Grammar.from_ast(ast)
    except grammask.GrammarError:
        return  # a rule used but never defined, or an empty language
    compare_on_short_strings(ReferenceRecognizer(ast), LNFRecognizer(grammar.lnf), max_length=5,
                             alphabet=b"ab")


def test_a_long_unit_chain_closes_in_linear_size():
    text = "\n".join(f"r{i} ::= r{i + 1}" for i in range(20_000)) + '\nr20000 ::= "a"'
    grammar = grammask.Grammar.from_gbnf(text, start="r0")
    assert grammar.lnf.n_productions == 1


def test_a_chain_of_optional_members_closes_in_linear_size():
    # r_i ::= "x<i>" r_{i+1} | r_{i+1}, the shape of a JSON object's optional
    # members: every r_i stays reachable, so inlining each successor's closed
    # set up to 32 productions gave about 17 productions a rule; inlining
    # beside other productions only up to 8 gives about 5.5.
    n = 1000
    text = "\n".join(f'r{i} ::= "x{i}" r{i + 1} | r{i + 1}' for i in range(n)) + '\nr1000 ::= "z"'
    grammar = grammask.Grammar.from_gbnf(text, start="r0")
    assert grammar.lnf.n_productions < 6 * (n + 1)
    small = "\n".join(f'r{i} ::= "x" r{i + 1} | r{i + 1}' for i in range(12)) + '\nr12 ::= "z"'
    ast = parse_gbnf(small, "r0")
    compare_on_short_strings(ReferenceRecognizer(ast), LNFRecognizer(grammask.Grammar.from_ast(ast).lnf),
                             max_length=5, alphabet=b"xz")
