"""Golden snapshots of ``EarleyRecognizer.debug_sets`` (format: the
comment at the top of src/grammask/_core/earley_debug.pxi).

Each case builds a small grammar, pushes some bytes and compares the dump
with ``tests/snapshots/<case>.txt`` exactly.  After a deliberate change of
the format or of the recognizer, rewrite the files with
``GRAMMASK_UPDATE_SNAPSHOTS=1`` and read the diff before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from grammask.grammar import Grammar
from grammask._core.earley import EarleyRecognizer

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
RIGHT_RECURSIVE = 'start ::= "x" list; list ::= "a" list | "a";'
AMBIGUOUS = 'start ::= expr; expr ::= expr "+" expr | "1";'


def right_recursion_with_leo() -> str:
    recognizer = EarleyRecognizer(Grammar.from_ebnf(RIGHT_RECURSIVE).lnf)
    assert recognizer.push_bytes(b"xaaa") and recognizer.is_accepting()
    return recognizer.debug_sets()


def right_recursion_compacted() -> str:
    recognizer = EarleyRecognizer(Grammar.from_ebnf(RIGHT_RECURSIVE).lnf)
    assert recognizer.push_bytes(b"xaaa")
    recognizer.compact(1)
    assert recognizer.push_bytes(b"a") and recognizer.is_accepting()
    return recognizer.debug_sets()


def ambiguous_sums() -> str:
    recognizer = EarleyRecognizer(Grammar.from_ebnf(AMBIGUOUS).lnf)
    assert recognizer.push_bytes(b"1+1+1") and recognizer.is_accepting()
    return recognizer.debug_sets()


def literal_and_dfa_progress() -> str:
    recognizer = EarleyRecognizer(Grammar.from_ebnf('start ::= "abc" | #"[0-9]+" ";";').lnf)
    assert recognizer.push_bytes(b"a")
    dump = recognizer.debug_sets()
    recognizer.pop(1)
    assert recognizer.push_bytes(b"12")
    return dump + '--- pop(1), push "12"\n' + recognizer.debug_sets()


CASES = {
    "earley_right_recursion_leo": right_recursion_with_leo,
    "earley_right_recursion_compacted": right_recursion_compacted,
    "earley_ambiguous_sums": ambiguous_sums,
    "earley_terminal_progress": literal_and_dfa_progress,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_debug_sets_matches_snapshot(name):
    actual = CASES[name]()
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("GRAMMASK_UPDATE_SNAPSHOTS") == "1":
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                        str(path), "debug_sets()"))
    assert actual == expected, diff


def test_leo_on_and_off_dump_the_same_items():
    """Leo changes how completions are found, not the items: only the Leo lines differ."""
    lnf = Grammar.from_ebnf(RIGHT_RECURSIVE).lnf
    with_leo, without = EarleyRecognizer(lnf), EarleyRecognizer(lnf, use_leo=False)
    for recognizer in (with_leo, without):
        assert recognizer.push_bytes(b"xaaaa")
    leo_lines = [line for line in with_leo.debug_sets().splitlines() if line.startswith("  Leo: ")]
    assert leo_lines
    assert [line for line in with_leo.debug_sets().splitlines() if line not in leo_lines] == \
        without.debug_sets().splitlines()
