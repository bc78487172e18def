"""Shared grammars and peers' test vectors through the front end.

- ``workloads/gbnf-tests/*.json``: every case builds with ``from_gbnf`` and its
  normalized grammar (run by the plain LNF Earley of ``support/lnf_reference.py``)
  gives llama.cpp's verdict on each accept / reject string.  Only the
  missing-root and undefined-rule cases of ``llama_cpp_invalid_grammars.json``
  must fail; the left-recursive ones build (we allow left recursion) and agree
  with the AST reference recognizer.
- ``workloads/gbnf/`` and ``workloads/bench/``: each grammar parses,
  normalizes, and accepts / rejects hand-picked strings.
- The KBNF and GBNF arithmetic grammars accept the same strings.
"""

from __future__ import annotations

import json
import warnings

import pytest

from support.grammar_strategies import compare_on_short_strings
from support.lnf_reference import LNFRecognizer
from support.ast_reference import ReferenceRecognizer

from grammask.errors import GrammarError
from grammask.grammar import Grammar
from grammask.grammar.lnf import check_invariants
from support.paths import WORKLOADS, workload

MAX_PYTHON_EARLEY_BYTES = 300
"""The plain-Python LNF Earley is quadratic on long right-recursive inputs;
longer strings (three JSON documents of 1-4 KB) are left to the core's tests."""

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def load_cases(filename: str) -> list[dict]:
    return json.loads(workload("gbnf-tests", filename).read_text())


def case_params(filename: str):
    cases = load_cases(filename)
    return [pytest.param(case, id=f"{filename.split('.')[0]}:{index}") for index, case in enumerate(cases)]


TABLE_FILES = ["llama_cpp_grammar_integration.json", "llama_cpp_json_schema.json", "xgrammar_ebnf.json",
               "xgrammar_ebnf_exhaustive.json"]


@pytest.mark.parametrize("case", [param for name in TABLE_FILES for param in case_params(name)])
def test_gbnf_table_case(case):
    grammar = Grammar.from_gbnf(case["grammar"], case["root"])
    assert check_invariants(grammar.lnf) == []
    recognizer = LNFRecognizer(grammar.lnf)
    for text in case["accept"]:
        data = text.encode("utf-8")
        if len(data) <= MAX_PYTHON_EARLEY_BYTES:
            assert recognizer.accepts(data), f"{case['name']}: should accept {text!r}"
    for text in case["reject"]:
        data = text.encode("utf-8")
        if len(data) <= MAX_PYTHON_EARLEY_BYTES:
            assert not recognizer.accepts(data), f"{case['name']}: should reject {text!r}"


def test_invalid_grammar_table():
    cases = load_cases("llama_cpp_invalid_grammars.json")
    for case in cases:
        if "left_recursion" in case["name"]:
            grammar = Grammar.from_gbnf(case["grammar"], case["root"])
            reference = ReferenceRecognizer(grammar.ast)
            checked = compare_on_short_strings(reference, LNFRecognizer(grammar.lnf), max_length=5,
                                               alphabet=b"abcde")
            assert checked.n_checked > 5
            assert LNFRecognizer(grammar.lnf).accepts(b"a")
        else:
            with pytest.raises(GrammarError):
                Grammar.from_gbnf(case["grammar"], case["root"])


GRAMMAR_SAMPLES = {
    "gbnf/arithmetic.gbnf": (
        ["1+2=3\n", "(a +b2) *3 = x\n", "a=b\nc_1=d\n", "(1)=2 \n"],
        ["", "1+2=3", "=3\n", "A=1\n", "1+=2\n"],
    ),
    "gbnf/c.gbnf": (
        ["int main(){return 0;}", "float f(int x){x = x*2;return x;}",
         "int g(){while(i<10){i = i+1;}}", "char c(){// note\n/* block */}", ""],
        ["int main(){return 0}", "main(){}", "int 9x(){}", "int f(){/* open}"],
    ),
    "gbnf/chess.gbnf": (
        ["1. e4 e5\n2. Nf3 Nc6\n", "1. d4 Nf6\n2. c4 e6\n3. Nc3 Bb4\n", "1. e4 e5\n2. O-O O-O-O\n",
         "1. e4 d5\n2. exd5 Qxd5\n", "1. e4 e5\n2. e8=Q+ Kxe8#\n"],
        ["1. e4 e5\n", "1. e9 e5\n2. a3 a6\n", "2. e4 e5\n3. a3 a6\n", "1. e4 e5\n0. a3 a6\n"],
    ),
    "gbnf/english.gbnf": (
        ["Hello, world!", "a b\tc\nd", "x"],
        ["", " leading", "two  spaces", "caf\u00e9"],
    ),
    "gbnf/japanese.gbnf": (
        ["\u3053\u3093\u306b\u3061\u306f", "\u65e5\u672c\u8a9e \u30ab\u30bf\u30ab\u30ca\u3002"],
        ["", "abc", "\u3053 ", "\u3053\u3093  \u306b"],
    ),
    "gbnf/json.gbnf": (
        ['{"a": 1}', '{}', '{"k": [1, 2.5, -3e4, true, null, "x\\u00e9"], "o": {"n": false}}',
         '{\n  "a": "b"\n}'],
        ['[]', '{"a": 01}', "{'a': 1}", '{"a": 1,}', '{"a" 1}'],
    ),
    "gbnf/json_arr.gbnf": (
        ['[\n{"a": 1},\n2]', "[\n]", '[\n"x",\n[1, 2]]'],
        ["[]", '[{"a": 1}]', '[\n1,\n2] '],
    ),
    "gbnf/list.gbnf": (
        ["- one\n", "- one\n- two words\n"],
        ["", "- \n", "- one", "* one\n", "- a\u2028b\n"],
    ),
    "bench/arith.gbnf": (
        ["1;", "1 + 2 * (3 - -4);", "((7));"], ["1+2;", "1 + ;", "(1;", "1"],
    ),
    "bench/arith.kbnf": (
        ["1;", "1 + 2 * (3 - -4);", "((7));"], ["1+2;", "1 + ;", "(1;", "1"],
    ),
    "bench/arith_ambig.gbnf": (
        ["1 + 2 * 3;", "-(1 - 2) / 3;"], ["1 +2;", "1 + 2", "()"],
    ),
    "bench/arith_ambig.kbnf": (
        ["1 + 2 * 3;", "-(1 - 2) / 3;"], ["1 +2;", "1 + 2", "()"],
    ),
}


def load_grammar(relative: str) -> Grammar:
    text = workload(relative).read_text()
    if relative.endswith(".kbnf"):
        return Grammar.from_ebnf(text)
    return Grammar.from_gbnf(text)


@pytest.mark.parametrize("relative", sorted(GRAMMAR_SAMPLES))
def test_shared_grammar_samples(relative):
    grammar = load_grammar(relative)
    assert check_invariants(grammar.lnf) == []
    recognizer = LNFRecognizer(grammar.lnf)
    reference = ReferenceRecognizer(grammar.ast)
    accepted, rejected = GRAMMAR_SAMPLES[relative]
    for text in accepted:
        assert recognizer.accepts(text.encode()), f"should accept {text!r}"
        assert reference.accepts(text.encode()), f"reference should accept {text!r}"
    for text in rejected:
        assert not recognizer.accepts(text.encode()), f"should reject {text!r}"
        assert not reference.accepts(text.encode()), f"reference should reject {text!r}"


def test_every_shared_grammar_is_covered():
    on_disk = {str(path.relative_to(WORKLOADS)) for folder in ("gbnf", "bench")
               for pattern in ("*.gbnf", "*.kbnf") for path in (WORKLOADS / folder).glob(pattern)}
    assert on_disk <= set(GRAMMAR_SAMPLES)


def test_arith_input_accepted():
    data = workload("bench", "arith.input.txt").read_text().strip().encode()
    for relative in ("bench/arith.kbnf", "bench/arith.gbnf"):
        assert LNFRecognizer(load_grammar(relative).lnf).accepts(data)


@pytest.mark.parametrize("name", ["arith", "arith_ambig"])
def test_kbnf_and_gbnf_arithmetic_agree(name):
    kbnf = load_grammar(f"bench/{name}.kbnf")
    gbnf = load_grammar(f"bench/{name}.gbnf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checked = compare_on_short_strings(LNFRecognizer(kbnf.lnf), LNFRecognizer(gbnf.lnf), max_length=7,
                                           alphabet=b"1 +-*();")
    assert checked.n_checked > 100
