"""Earley core on real grammars from the front end (Grammar(...).lnf).

Oracles: the verdicts in tests/workloads/gbnf-tests (checked with
llama.cpp's grammar engine), Python's ``json`` module for JSON documents,
``support/lnf_reference.py`` (plain Python Earley over the same LNF arrays)
for prefix viability after every byte, and ``support/ast_reference.py``
(fixpoint over the AST, regex module) for random grammars end to end.
"""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import HealthCheck, assume, given, settings

from grammask.errors import GrammarError
from grammask.grammar import Grammar
from grammask._core.earley import EarleyRecognizer, compiled_tables

from support.grammar_strategies import compare_on_short_strings, grammar_asts
from support.lnf_reference import LNFRecognizer
from support.ast_reference import ReferenceRecognizer
from support.paths import WORKLOADS

CASE_FILES = ["llama_cpp_grammar_integration.json", "llama_cpp_json_schema.json",
              "xgrammar_ebnf.json", "xgrammar_ebnf_exhaustive.json"]


def load_cases():
    for name in CASE_FILES:
        for index, case in enumerate(json.loads((WORKLOADS / "gbnf-tests" / name).read_text())):
            yield pytest.param(case, id=f"{name.split('.')[0]}[{index}]")


def recognizes(tables, data: bytes) -> bool:
    recognizer = EarleyRecognizer(tables)
    return recognizer.push_bytes(data) and recognizer.is_accepting()


@pytest.mark.parametrize("case", list(load_cases()))
def test_gbnf_cases(case):
    grammar = Grammar.from_gbnf(case["grammar"], start=case["root"])
    tables = compiled_tables(grammar.lnf)
    for text in case["accept"]:
        assert recognizes(tables, text.encode()), text
    for text in case["reject"]:
        assert not recognizes(tables, text.encode()), text


def test_gbnf_cases_prefixes_against_lnf_reference():
    """Viability after every byte of every accept/reject string (short ones)."""
    n_checked = 0
    for name in CASE_FILES[:3]:
        for case in json.loads((WORKLOADS / "gbnf-tests" / name).read_text()):
            grammar = Grammar.from_gbnf(case["grammar"], start=case["root"])
            reference = LNFRecognizer(grammar.lnf)
            tables = compiled_tables(grammar.lnf)
            for text in (case["accept"] + case["reject"])[:6]:
                data = text.encode()[:40]
                recognizer = EarleyRecognizer(tables)
                for k in range(len(data)):
                    expected = reference.viable_prefix(data[:k + 1])
                    assert recognizer.push_byte(data[k]) == expected, (case["name"], data[:k + 1])
                    if not expected:
                        break
                    assert recognizer.is_accepting() == reference.accepts(data[:k + 1])
                    n_checked += 1
    assert n_checked > 1000


@pytest.mark.parametrize("path", sorted((WORKLOADS / "gbnf").glob("*.gbnf")), ids=lambda p: p.stem)
def test_llama_cpp_example_grammars_build(path):
    grammar = Grammar.from_gbnf(path.read_text(), start="root")
    recognizer = EarleyRecognizer(grammar.lnf)
    assert recognizer.allowed_byte_values()


def test_json_gbnf_accepts_generic_document():
    grammar = Grammar.from_gbnf((WORKLOADS / "gbnf" / "json.gbnf").read_text(), start="root")
    document = (WORKLOADS / "bench" / "generic_document.json").read_bytes().strip()
    json.loads(document)
    recognizer = EarleyRecognizer(grammar.lnf)
    assert recognizer.push_bytes(document)
    assert recognizer.is_accepting()
    broken = document[:-1] + b",}"
    json_ok = True
    try:
        json.loads(broken)
    except ValueError:
        json_ok = False
    assert recognizes(compiled_tables(grammar.lnf), broken) == json_ok


@pytest.mark.parametrize("dialect", ["kbnf", "gbnf"])
def test_arithmetic_grammar_accepts_its_input(dialect):
    text = (WORKLOADS / "bench" / f"arith.{dialect}").read_text()
    grammar = Grammar.from_ebnf(text) if dialect == "kbnf" else Grammar.from_gbnf(text, start="root")
    data = (WORKLOADS / "bench" / "arith.input.txt").read_bytes().rstrip(b"\n")
    recognizer = EarleyRecognizer(grammar.lnf)
    assert recognizer.push_bytes(data), data[:80]
    assert recognizer.is_accepting()
    assert not recognizer.push_byte(ord(")"))


class EarleyAdapter:
    """The core with the reference's interface (fresh recognizer per call)."""

    def __init__(self, grammar):
        self.tables = compiled_tables(grammar.lnf)

    def viable_prefix(self, data: bytes) -> bool:
        return EarleyRecognizer(self.tables).push_bytes(data)

    def accepts(self, data: bytes) -> bool:
        return recognizes(self.tables, data)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(grammar_asts())
def test_random_front_end_grammars_against_ast_reference(ast):
    """Whole pipeline (front end, Rust DFAs, core) against the AST reference:
    nullable and non-productive rules, every terminal kind."""
    try:
        grammar = Grammar.from_ast(ast)
    except GrammarError:
        assume(False)
    assert compare_on_short_strings(ReferenceRecognizer(ast), EarleyAdapter(grammar), max_length=4).n_checked >= 1


SHIPPED = pathlib.Path(__file__).resolve().parents[1] / "src" / "grammask" / "grammars"


@pytest.mark.parametrize("document", ["generic_document.json", "ticket_instance.json",
                                      "ticket_schema.json"])
def test_shipped_json_grammar_on_workload_documents(document):
    grammar = Grammar.from_ebnf((SHIPPED / "json.ebnf").read_text())
    tables = compiled_tables(grammar.lnf)
    data = (WORKLOADS / "bench" / document).read_bytes().strip()
    json.loads(data)
    assert recognizes(tables, data)
    reference = LNFRecognizer(grammar.lnf)
    for cut in range(0, len(data), max(1, len(data) // 25)):
        broken = data[:cut] + b"}" + data[cut:]
        try:
            json.loads(broken)
            valid = True
        except ValueError:
            valid = False
        assert recognizes(tables, broken) == valid, broken[:cut + 1][-40:]
        recognizer = EarleyRecognizer(tables)
        assert recognizer.push_bytes(broken[:cut + 1]) == reference.viable_prefix(broken[:cut + 1])


def test_optional_chain_stays_small():
    """docs/design.md pitfall: ``x? x? ... x?`` must not blow up per byte."""
    grammar = Grammar.from_ebnf("start ::= " + " ".join(['"a"?'] * 60) + ' "b";')
    recognizer = EarleyRecognizer(grammar.lnf)
    assert recognizer.push_bytes(b"a" * 60 + b"b") and recognizer.is_accepting()
    assert not EarleyRecognizer(grammar.lnf).push_bytes(b"a" * 61)
    assert max(recognizer.stats()["items_per_set"]) <= 8


def test_deep_nesting_has_no_recursion_limit():
    """docs/design.md pitfall: deep nesting must not overflow a stack."""
    grammar = Grammar.from_gbnf((WORKLOADS / "gbnf" / "json.gbnf").read_text(), start="root")
    depth = 20_000
    recognizer = EarleyRecognizer(grammar.lnf)
    assert recognizer.push_bytes(b'{"a": ' + b"[" * depth + b"]" * depth + b"}")
    assert recognizer.is_accepting()
    assert not recognizer.push_byte(ord("]"))
