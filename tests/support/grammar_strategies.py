"""Hypothesis strategies for random grammar ASTs over a small alphabet, and a
helper that compares two recognizers on every short string (for tests).

Grammars have 1 to 4 rules named ``r0``..``r3`` (start ``r0``), any of which
may refer to any other (so left recursion, mutual recursion, nullable and
non-productive rules all occur).  Terminals are literals (including the empty
one), classes, ``.``, and a few regexes of every kind and substring sets.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    GrammarAST,
    Literal,
    Regex,
    Repeat,
    Rule,
    RuleRef,
    Sequence,
    Substrings,
)

ALPHABET = b"abc"
LITERALS = [b"", b"a", b"b", b"c", b"ab", b"ba", b"abc", b"cc"]
CLASSES = [CharClass(((97, 98),)), CharClass(((99, 99),)), CharClass(((97, 97), (99, 99))),
           CharClass(((98, 98),), negated=True), AnyChar()]
REGEXES = [Regex("a+"), Regex("[bc]*"), Regex("(ab)?c"), Regex("a|bc"), Regex("b+", "early_end"),
           Regex("a*b", "early_end"), Regex("ab", "complement"), Regex("c", "complement"),
           Substrings("abcab")]

PLAIN_TERMINALS = st.one_of(st.sampled_from(LITERALS).map(Literal), st.sampled_from(CLASSES))


def node_strategy(n_rules: int, with_regex: bool = True):
    leaves = [PLAIN_TERMINALS, st.integers(0, n_rules - 1).map(lambda index: RuleRef(f"r{index}"))]
    if with_regex:
        leaves.append(st.sampled_from(REGEXES))
    leaf = st.one_of(*leaves)

    def extend(children):
        repeat = st.tuples(children, st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))).map(
            lambda t: Repeat(t[0], t[1], None if t[2] is None else t[1] + t[2]))
        return st.one_of(
            st.lists(children, min_size=0, max_size=3).map(lambda items: Sequence(tuple(items))),
            st.lists(children, min_size=1, max_size=3).map(lambda items: Alternation(tuple(items))),
            repeat,
        )

    return st.recursive(leaf, extend, max_leaves=8)


@st.composite
def grammar_asts(draw, with_regex: bool = True, max_rules: int = 4):
    n_rules = draw(st.integers(1, max_rules))
    bodies = [draw(node_strategy(n_rules, with_regex)) for _ in range(n_rules)]
    extra = draw(st.lists(st.tuples(st.integers(0, n_rules - 1), node_strategy(n_rules, with_regex)),
                          max_size=2))
    rules = [Rule(f"r{index}", body) for index, body in enumerate(bodies)]
    rules += [Rule(f"r{index}", body) for index, body in extra]
    return GrammarAST(tuple(rules), "r0")


@dataclass(frozen=True)
class Comparison:
    """What ``compare_on_short_strings`` checked: strings in all, and among
    them the accepted ones, the viable prefixes that are not accepted, and the
    rejected ones (not viable)."""
    n_checked: int
    n_accepted: int
    n_incomplete: int
    n_rejected: int


def compare_on_short_strings(expected, actual, max_length: int = 5, alphabet: bytes = ALPHABET) -> Comparison:
    """Walk the tree of strings over ``alphabet`` up to ``max_length``, expanding
    only viable prefixes (by ``expected``), and assert both recognizers agree on
    ``accepts`` and ``viable_prefix``.  Returns how many strings of each
    verdict were checked."""
    frontier = [b""]
    counts = {"accepted": 0, "incomplete": 0, "rejected": 0}
    while frontier:
        text = frontier.pop()
        viable = expected.viable_prefix(text)
        assert actual.viable_prefix(text) == viable, f"viable_prefix({text!r}) should be {viable}"
        accepted = expected.accepts(text)
        assert actual.accepts(text) == accepted, f"accepts({text!r}) should be {accepted}"
        assert viable or not accepted
        counts["accepted" if accepted else "incomplete" if viable else "rejected"] += 1
        if viable and len(text) < max_length:
            frontier.extend(text + bytes([byte]) for byte in alphabet)
    return Comparison(sum(counts.values()), counts["accepted"], counts["incomplete"], counts["rejected"])
