"""Normalization: the LNF keeps the language of the AST, meets its invariants,
stays small on hostile shapes and round-trips through to_ebnf.

Oracles: ``support/ast_reference.py`` (fixpoint recognizer over the AST, never
sees LNF) against ``support/lnf_reference.py`` (textbook Earley over the LNF
arrays).
"""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.config import Config
from grammask.errors import GrammarError, LimitExceeded
from grammask.grammar import Grammar
from grammask.grammar.ast import GrammarAST, Literal, Rule
from grammask.grammar.lnf import SYMBOL_TERMINAL, TERMINAL_LITERAL, check_invariants
from grammask.grammar.normalize import PASSES
from grammask.grammar.terminal_keys import TerminalCompiler, kbnf_string, regex_escape, terminal_spelling
from grammask.terminals import compile_regex
from grammask._core.earley import EarleyRecognizer, compiled_tables

from support.ast_reference import ReferenceRecognizer
from support.grammar_strategies import compare_on_short_strings, grammar_asts
from support.lnf_reference import LNFRecognizer
from support.paths import workload

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def build_or_none(ast):
    """The Grammar of ``ast``, or None when its language is empty."""
    try:
        return Grammar.from_ast(ast)
    except GrammarError as error:
        assert "empty" in str(error)
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar_asts())
def test_lnf_and_ast_agree_on_short_strings(ast):
    reference = ReferenceRecognizer(ast)
    grammar = build_or_none(ast)
    if grammar is None:
        assert not reference.viable_prefix(b"")
        return
    assert check_invariants(grammar.lnf) == []
    assert grammar.start_accepts_empty == reference.accepts(b"")
    compare_on_short_strings(reference, LNFRecognizer(grammar.lnf), max_length=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar_asts())
def test_to_ebnf_round_trip(ast):
    grammar = build_or_none(ast)
    if grammar is None:
        return
    text = grammar.to_ebnf()
    again = Grammar.from_ebnf(text, start=grammar.lnf.nonterminal_names[0])
    assert again.to_ebnf() == text
    assert again.fingerprint == grammar.fingerprint
    compare_on_short_strings(ReferenceRecognizer(ast), LNFRecognizer(again.lnf), max_length=4)


def test_fingerprint_is_stable_and_discriminates():
    one = Grammar.from_ebnf('start ::= "a" b; b ::= "x" | "y";')
    same = Grammar.from_ebnf('start ::= "a" b;\n b ::= "y";\n b ::= ("x");')
    other = Grammar.from_ebnf('start ::= "a" b; b ::= "x" | "z";')
    assert one.fingerprint == same.fingerprint
    assert one.fingerprint != other.fingerprint


def test_non_utf8_literals_have_a_fingerprint_but_no_printout():
    from grammask.grammar.ast import Alternation, GrammarAST, Literal, Rule

    ast = GrammarAST((Rule("r0", Alternation((Literal(b"a\xc3"), Literal(b"b")))),), "r0")
    grammar = Grammar.from_ast(ast)
    other = Grammar.from_ast(GrammarAST((Rule("r0", Alternation((Literal(b"a\xc4"), Literal(b"b")))),), "r0"))
    assert len(grammar.fingerprint) == 64 and grammar.fingerprint != other.fingerprint
    assert LNFRecognizer(grammar.lnf).accepts(b"a\xc3")
    with pytest.raises(GrammarError):
        grammar.to_ebnf()
    assert "fingerprint=" in repr(grammar)


def test_forty_optionals_stay_linear():
    """The normalized grammar (what nullable elimination produced, and what
    the later passes walk) grows linearly in the optionals, not as 2^40."""
    text = "start ::= " + " ".join(["b?"] * 40) + ';\nb ::= "b";'
    grammar = Grammar.from_ebnf(text)
    sizes = grammar.lnf.sizes()
    assert sizes["n_productions"] <= 4 * 40 and sizes["n_symbols"] <= 8 * 40
    assert grammar.start_accepts_empty
    recognizer = LNFRecognizer(grammar.lnf)
    assert all(recognizer.accepts(b"b" * n) for n in range(1, 41))
    assert not recognizer.accepts(b"b" * 41)


def test_forty_distinct_optionals_stay_polynomial():
    rules = "".join(f'b{i} ::= "{chr(97 + i % 26)}{i}";\n' for i in range(40))
    text = "start ::= " + " ".join(f"b{i}?" for i in range(40)) + ";\n" + rules
    grammar = Grammar.from_ebnf(text)
    assert grammar.lnf.sizes()["n_symbols"] < 40 * 40 * 4
    recognizer = LNFRecognizer(grammar.lnf)
    assert recognizer.accepts(b"a0b1z25")
    assert recognizer.accepts(b"n39")
    assert not recognizer.accepts(b"b1a0")


@pytest.mark.parametrize("low,high", [(0, 10_000), (9_999, 10_000), (5_000, None), (10_000, 10_000)])
def test_counted_repetition_size_is_linear(low, high):
    bound = f"{low}," + ("" if high is None else str(high))
    grammar = Grammar.from_gbnf(f'root ::= "a"{{{bound}}} "b"')
    span = (high - low) if high is not None else 0
    assert grammar.lnf.sizes()["n_productions"] <= 2 * span + 40
    recognizer = LNFRecognizer(grammar.lnf)
    assert recognizer.accepts(b"a" * low + b"b")
    if low:
        assert not recognizer.accepts(b"a" * (low - 1) + b"b")
    # The upper end through the Earley core: the plain-Python reference is
    # quadratic on the 10,000-rule chain of "a"{0,10000}.
    tables = compiled_tables(grammar.lnf)
    if high is not None:
        assert core_verdict(tables, b"a" * high + b"b") == "accepted"
        assert core_verdict(tables, b"a" * (high + 1)) == "rejected"
    else:
        assert core_verdict(tables, b"a" * (low + 1000) + b"b") == "accepted"


def core_verdict(tables, data: bytes) -> str:
    recognizer = EarleyRecognizer(tables)
    if not recognizer.push_bytes(data):
        return "rejected"
    return "accepted" if recognizer.is_accepting() else "incomplete"


def test_counted_repetition_small_cases_exact():
    grammar = Grammar.from_gbnf('root ::= ("x" | "yy"){2,4} "."')
    reference = ReferenceRecognizer(grammar.ast)
    checked = compare_on_short_strings(reference, LNFRecognizer(grammar.lnf), max_length=10, alphabet=b"xy.")
    # 2 to 4 items, each "x" or "yy", then ".": 4 + 8 + 16 sentences, all of at most 9 bytes.
    assert checked.n_accepted == 28
    assert checked.n_incomplete > 28 and checked.n_rejected > 28


def test_repetition_above_limit_is_refused():
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_gbnf('root ::= "a"{10001}')
    assert info.value.limit == "max_repetition"
    grammar = Grammar.from_gbnf('root ::= "a"{10001}', config=Config(max_repetition=20_000))
    assert grammar.lnf.sizes()["n_productions"] < 100


@pytest.mark.parametrize("dialect", ["kbnf", "gbnf"])
def test_ten_thousand_deep_nesting_raises_limit(dialect):
    depth = 10_000
    if dialect == "kbnf":
        text = "start ::= " + "(" * depth + '"a"' + ")" * depth + ";"
        build = Grammar.from_ebnf
    else:
        text = "root ::= " + "(" * depth + '"a"' + ")" * depth
        build = Grammar.from_gbnf
    with pytest.raises(LimitExceeded) as info:
        build(text)
    assert info.value.limit == "max_nesting"
    grammar = build(text, config=Config(max_nesting=20_000))
    assert LNFRecognizer(grammar.lnf).accepts(b"a")


def test_deep_alternating_nesting_normalizes():
    depth = 900
    text = "root ::= " + '("a" ' * depth + '"z"' + ' | "b")' * depth
    grammar = Grammar.from_gbnf(text)
    recognizer = LNFRecognizer(grammar.lnf)
    assert recognizer.accepts(b"a" * depth + b"z")
    assert recognizer.accepts(b"aab")
    assert not recognizer.accepts(b"a" * (depth + 1) + b"z")


def test_large_literal_alternation_becomes_one_dfa():
    words = [f"word{i}" for i in range(50)]
    grammar = Grammar.from_ebnf("start ::= " + " | ".join(f'"{w}"' for w in words) + ";")
    lnf = grammar.lnf
    assert lnf.n_productions == 1 and len(lnf.dfas) == 1
    assert lnf.dfas[0].kind == "literals"
    recognizer = LNFRecognizer(lnf)
    assert all(recognizer.accepts(w.encode()) for w in words)
    assert not recognizer.accepts(b"word50")


def test_nullable_regex_terminal_is_made_optional():
    grammar = Grammar.from_ebnf('start ::= "<" #"[0-9]*" ">" | #"x*";')
    assert grammar.start_accepts_empty
    assert check_invariants(grammar.lnf) == []
    for dfa_id, dfa in enumerate(grammar.lnf.dfas):
        assert dfa.matches_empty
    compare_on_short_strings(ReferenceRecognizer(grammar.ast), LNFRecognizer(grammar.lnf),
                             max_length=5, alphabet=b"<>0x")


def test_terminal_matching_only_the_empty_string_disappears():
    """Its verdicts: support/regressions.py, "terminal matching only the empty string"."""
    grammar = Grammar.from_ebnf('start ::= "a" #e"x*" "b" | #e"y*" "c";')
    assert check_invariants(grammar.lnf) == []
    assert grammar.lnf.dfas == []


def test_language_of_only_the_empty_string():
    """Its verdicts: support/regressions.py, "language of only the empty string"."""
    grammar = Grammar.from_gbnf('root ::= "" | ("")*')
    assert grammar.start_accepts_empty
    assert grammar.lnf.n_productions == 0
    assert Grammar.from_ebnf(grammar.to_ebnf(), start="root").fingerprint == grammar.fingerprint


def test_pass_sizes_are_recorded():
    grammar = Grammar.from_gbnf(workload("gbnf", "c.gbnf").read_text())
    names = [name for name, _ in grammar.pass_sizes]
    assert names == ["flatten_nested_groups"] + [step.name for step in PASSES]
    assert all(set(sizes) == {"n_rules", "n_productions", "n_symbols"} for _, sizes in grammar.pass_sizes)


def test_pass_table_is_documented():
    assert len({step.name for step in PASSES}) == len(PASSES)
    assert all(step.guarantees and callable(step.run) for step in PASSES)


def test_unused_rule_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grammar = Grammar.from_ebnf('start ::= "a";\nunused ::= "b";')
    assert any("unused" in str(w.message) for w in caught)
    assert grammar.warnings and "line 2" in grammar.warnings[0]


def test_regular_repetitions_fold_into_one_dfa():
    grammar = Grammar.from_gbnf('root ::= "n=" [1-9] [0-9]{0,15} ("," [0-9]+)*')
    lnf = grammar.lnf
    assert lnf.n_nonterminals == 1 and len(lnf.dfas) == 1
    compare_on_short_strings(ReferenceRecognizer(grammar.ast), LNFRecognizer(lnf), max_length=7,
                             alphabet=b"n=10,")


def test_fold_that_would_explode_falls_back_within_the_dfa_limits(monkeypatch):
    """Folding ``[ab]* "a" [ab]{30}`` into one DFA (2^30 states) is tried
    only with the DFA limits, which the crate checks while it builds, and
    falls back to rules: the work is bounded by ``max_dfa_states`` states.
    Its verdicts: support/regressions.py, "fold that would explode"."""
    from grammask import terminals

    limits = Config()
    builds = []
    build = terminals._dfa_builder.build_regex_table

    def counted(pattern, kind, case_insensitive, max_states, max_bytes):
        builds.append((pattern, max_states, max_bytes))
        return build(pattern, kind, case_insensitive, max_states, max_bytes)

    terminals.REGEX_DFAS.cache_clear()
    monkeypatch.setattr(terminals._dfa_builder, "build_regex_table", counted)
    grammar = Grammar.from_gbnf('root ::= [ab]* "a" [ab]{30}')
    assert builds and all(states <= limits.max_dfa_states and size <= limits.max_dfa_bytes
                          for _, states, size in builds)
    assert grammar.lnf.n_nonterminals > 1


def test_adjacent_regex_terminals_are_joined():
    # Adjacent in the source: joined before nullable elimination, so the
    # optional parts stay inside one DFA.
    grammar = Grammar.from_ebnf('start ::= #"[a-c]" #"[a-z0-9]*" ";" | #"[0-9]" #"[a-c]?" #"x+";')
    assert grammar.to_ebnf() == ('start ::= #"(?:(?:[0-9])(?:[a-c]?))(?:x+)" '
                                 '| #"(?:[a-c])(?:[a-z0-9]*)" ";";\n')
    # Made adjacent by nullable elimination (b may be empty): joined by the last pass.
    grammar = Grammar.from_ebnf('start ::= #"[a-c]" b #"[0-9]+"; b ::= "x" | "";')
    assert '#"(?:[a-c])(?:[0-9]+)"' in grammar.to_ebnf()
    assert [name for name, _ in grammar.pass_sizes][-1] == "join_adjacent_regexes"


def test_refused_join_is_tried_once(monkeypatch):
    """A join over the fold budget is refused once: adjacent in the source,
    the pass that joins again after nullable elimination does not rebuild
    it, and the language stays that of the source (oracle: ``re``)."""
    attempts = []
    build = TerminalCompiler._compile

    def counting(self, key, *limits):
        attempts.append((key, limits))
        return build(self, key, *limits)

    monkeypatch.setattr(TerminalCompiler, "_compile", counting)
    # a (?:[ab]*a[ab]{13}) DFA has 2^14 states: over the fold budget of 4,096.
    grammar = Grammar.from_ebnf('start ::= #"[ab]*a" #"[ab]{13}" | "y" b; b ::= "x" | "";')
    joined = '(?:[ab]*a)(?:[ab]{13})'
    tried = [limits for key, limits in attempts if key[1] == joined]
    assert len(tried) == 1 and tried[0]
    assert joined not in grammar.to_ebnf()
    oracle = re.compile("[ab]*a[ab]{13}|yx?")
    recognizer = LNFRecognizer(grammar.lnf)
    for text in ("a" + "b" * 13, "ba" + "ab" * 6 + "a", "a" * 14, "b" + "a" * 13, "a" * 13, "y", "yx", "x"):
        assert recognizer.accepts(text.encode()) == bool(oracle.fullmatch(text)), text


def test_join_verdict_does_not_depend_on_earlier_grammars():
    """Joining ``#"a{16}" #"T"`` within the fold budget (1 MiB) is refused:
    building the piece ``T`` alone takes more, though its minimal table fits.
    A grammar built before that compiled ``b{16}T`` within the default limits
    leaves ``T`` in the crate's piece cache; the join is still refused, so the
    printout and fingerprint are those of a fresh process.  (The joins of the
    MaskBench schema Github_ultra---o21137 took pieces its own translation had
    built within the default limits, unless earlier schemas had filled the
    cache so that it was emptied in between: its fingerprint depended on
    them.)"""
    from grammask import clear_caches

    piece = r"(?:(?:\S+\s+){0,140}\S+|x)"
    text = 'start ::= #"a{16}" #%s;' % kbnf_string(piece)
    clear_caches(vocabularies=False)
    fresh = Grammar.from_ebnf(text)
    assert fresh.to_ebnf() == text + "\n"
    clear_caches(vocabularies=False)
    Grammar.from_regex("b{16}" + piece)
    after = Grammar.from_ebnf(text)
    assert after.to_ebnf() == fresh.to_ebnf()
    assert after.fingerprint == fresh.fingerprint


@pytest.mark.parametrize("text", [
    'root ::= "a" b "c" | "x" root "y" | ""\nb ::= "" | "b"',     # start copied (root__ne)
    'root ::= "a" b "c" b "d" b "e" "f"\nb ::= "b"?',            # suffix helpers
    'root ::= "a" b b "c"\nb ::= "b" | ""',                      # a run of a nullable symbol
])
def test_literals_made_adjacent_by_nullable_elimination_are_merged(text):
    """The second literal merge looks only at the rules nullable elimination
    rewrote or added; every rule must still be free of adjacent literals,
    with the language of the source (oracle: the AST reference recognizer)."""
    grammar = Grammar.from_gbnf(text)
    lnf = grammar.lnf
    for production in range(lnf.n_productions):
        kinds = [lnf.terminal_kinds[symbol_id] if kind == SYMBOL_TERMINAL else None
                 for kind, symbol_id in lnf.symbols_of(production)]
        assert not any(a == b == TERMINAL_LITERAL for a, b in zip(kinds, kinds[1:])), grammar.to_ebnf()
    compare_on_short_strings(ReferenceRecognizer(grammar.ast), LNFRecognizer(lnf), max_length=7,
                             alphabet=b"abcdefxy")


AWKWARD_TEXT = st.text(alphabet=st.sampled_from(list('ab\\"\n\r\t\x00\x7f\u00a0\u200b\u2028\U0001F600'
                                                     '.+*?()|[]{}^$#&-~')), min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(AWKWARD_TEXT)
def test_literal_spellings_read_back_to_the_same_text(text):
    """kbnf_string (printouts) and regex_escape (joined and folded regexes)
    on quotes, backslashes, controls, non-printable and regex-special characters."""
    grammar = Grammar.from_ast(GrammarAST((Rule("start", Literal(text.encode("utf-8"))),), "start"))
    again = Grammar.from_ebnf(grammar.to_ebnf())
    assert again.fingerprint == grammar.fingerprint
    assert kbnf_string(text) == terminal_spelling(("lit", text.encode("utf-8")))[1]
    escaped = compile_regex(regex_escape(text))
    assert escaped.fullmatch(text) and not escaped.fullmatch(text + "a") and not escaped.fullmatch(text[1:])
