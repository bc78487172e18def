"""The grammar-case corpus (support/grammar_cases.py) and the regression rows
(support/regressions.py) through every recognizer of the project.

Each row's strings have hand-written verdicts (accepted / incomplete /
rejected).  Every recognizer must give exactly those:

* the Cython Earley core, fed byte by byte: with Leo, without Leo, and with
  compaction after every byte (``compact(0)``, so only the sets that live
  items refer to survive);
* the plain-Python LNF Earley (support/lnf_reference.py) on the same LNF;
* the AST fixpoint reference (support/ast_reference.py), which never sees LNF;
* Lark's Earley parser, when the grammar translates (no regex or substring
  terminals; support/lark_translation.py): whole-string verdicts only.
"""

from __future__ import annotations

import functools
import warnings

import pytest

from grammask.grammar import Grammar
from grammask._core.earley import EarleyRecognizer, compiled_tables

from support.ast_reference import ReferenceRecognizer
from support.grammar_cases import CASES
from support.lark_translation import LarkTooSlow, lark_accepts, lark_budget, lark_parser
from support.lnf_reference import LNFRecognizer
from support.regressions import REGRESSIONS

ROWS = {case.name: case for case in CASES + REGRESSIONS}
assert len(ROWS) == len(CASES) + len(REGRESSIONS), "row names must be distinct"


def build(case) -> Grammar:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.dialect == "kbnf":
            return Grammar.from_ebnf(case.grammar)
        if case.dialect == "gbnf":
            return Grammar.from_gbnf(case.grammar)
    raise ValueError(f"unknown dialect {case.dialect!r}")


class CoreRecognizer:
    """The Earley core with the references' interface: a fresh recognizer per
    string, one byte at a time, optionally compacting after every byte."""

    def __init__(self, lnf, *, use_leo: bool = True, compact: bool = False):
        self.tables = compiled_tables(lnf)
        self.use_leo = use_leo
        self.compact = compact

    def verdict(self, data: bytes) -> str:
        recognizer = EarleyRecognizer(self.tables, use_leo=self.use_leo)
        for byte in data:
            if not recognizer.push_byte(byte):
                return "rejected"
            if self.compact:
                recognizer.compact(0)
        return "accepted" if recognizer.is_accepting() else "incomplete"


class ReferenceVerdicts:
    def __init__(self, reference):
        self.reference = reference

    def verdict(self, data: bytes) -> str:
        if self.reference.accepts(data):
            return "accepted"
        return "incomplete" if self.reference.viable_prefix(data) else "rejected"


RECOGNIZERS = {
    "earley": lambda grammar: CoreRecognizer(grammar.lnf),
    "earley_without_leo": lambda grammar: CoreRecognizer(grammar.lnf, use_leo=False),
    "earley_compacting": lambda grammar: CoreRecognizer(grammar.lnf, compact=True),
    "lnf_reference": lambda grammar: ReferenceVerdicts(LNFRecognizer(grammar.lnf)),
    "ast_reference": lambda grammar: ReferenceVerdicts(ReferenceRecognizer(grammar.ast)),
}


@pytest.mark.parametrize("recognizer", sorted(RECOGNIZERS))
@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_verdicts(name, recognizer):
    case = ROWS[name]
    under_test = RECOGNIZERS[recognizer](build(case))
    wrong = [(data, expected, got) for data, expected in case.verdicts()
             if (got := under_test.verdict(data)) != expected]
    assert not wrong, f"{name} ({case.about}): " + "; ".join(
        f"{data!r} should be {expected}, {recognizer} says {got}" for data, expected, got in wrong)


@functools.lru_cache(maxsize=None)
def lark_oracle(name: str):
    """A Lark parser for the row, or None when its grammar does not translate
    (or Lark takes more than 3 s to build it)."""
    try:
        with lark_budget(3.0):
            return lark_parser(build(ROWS[name]).ast)
    except (TypeError, LarkTooSlow):
        return None


@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_verdicts_lark(name):
    case = ROWS[name]
    parser = lark_oracle(name)
    if parser is None:
        return
    for data, expected in case.verdicts():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            assert expected != "accepted", data
            continue
        assert lark_accepts(parser, text) == (expected == "accepted"), (name, data, expected)


def test_rows_cover_both_dialects_every_verdict_and_lark():
    assert {case.dialect for case in ROWS.values()} == {"kbnf", "gbnf"}
    for case in ROWS.values():
        assert case.about and case.accepted, case.name
        assert case.incomplete or case.rejected, case.name
    assert sum(lark_oracle(name) is not None for name in ROWS) >= len(ROWS) // 2
