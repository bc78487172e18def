"""Differential fuzzing of the Earley core against independent oracles.

* random hand-built LNF grammars (``support.random_lnf``: recursion of every
  kind, ambiguity, unit cycles, early-end, complement and substring
  terminals, multi-byte UTF-8) against ``support.lnf_reference.LNFRecognizer``
  (a plain-Python textbook Earley recognizer over the same arrays): viability
  after every byte, acceptance, allowed next bytes;
* push/pop/copy/snapshot sequences against recognizers rebuilt from scratch
  on the remaining prefix, and Leo off vs on;
* Lark (Earley, dynamic_complete lexer) on random ASCII grammars: acceptance.

Example counts scale with GRAMMASK_FUZZ_SCALE (default 1); the default run
checks 10,000 cases here (one case = one grammar with one input or operation
sequence), plus the compaction and front-end fuzz in the other test files.
"""

from __future__ import annotations

import lark
import pytest
from hypothesis import given, strategies as st

from grammask._core.earley import EarleyRecognizer

from support.hand_lnf import build_lnf
from support.lnf_reference import LNFRecognizer
from support.random_lnf import ALPHABET, ASCII_POOL, examples, grammar_and_input, grammars


def check_against_reference(lnf, data, check_allowed):
    reference = LNFRecognizer(lnf)
    recognizer = EarleyRecognizer(lnf)
    assert recognizer.is_accepting() == lnf.start_accepts_empty
    for k in range(len(data)):
        prefix = data[:k + 1]
        allowed = set(recognizer.allowed_byte_values())
        expected, expected_accepting = reference.verdict(prefix)
        assert (data[k] in allowed) == expected, (prefix, allowed)
        assert recognizer.push_byte(data[k]) == expected, prefix
        if not expected:
            assert recognizer.n_bytes == k
            return
        assert recognizer.is_accepting() == expected_accepting, prefix
    if check_allowed:
        allowed = set(recognizer.allowed_byte_values())
        for byte in ALPHABET:
            assert (byte in allowed) == reference.viable_prefix(data + bytes([byte])), (data, byte)


@examples(3500)
@given(grammar_and_input())
def test_random_grammars_viability_and_acceptance(case):
    lnf, data = case
    check_against_reference(lnf, data, check_allowed=False)


@examples(2000)
@given(grammar_and_input(max_len=5))
def test_random_grammars_allowed_bytes(case):
    lnf, data = case
    check_against_reference(lnf, data, check_allowed=True)


def state_of(recognizer):
    # scan items as a set: compaction may merge items that differ only by origin
    return (recognizer.n_bytes, recognizer.is_accepting(), recognizer.allowed_first_bytes(),
            sorted(set(recognizer.scan_items())))


@examples(2000)
@given(grammars(), st.lists(st.tuples(st.sampled_from(["push", "pop", "copy", "snap", "restore",
                                                        "compact"]),
                                      st.integers(0, 255)), max_size=25))
def test_push_pop_copy_snapshot_match_fresh_recognizers(lnf, operations):
    recognizer = EarleyRecognizer(lnf)
    no_leo = EarleyRecognizer(lnf, use_leo=False)
    data = bytearray()
    snapshots = []
    for op, value in operations:
        if op == "push":
            byte = ALPHABET[value % len(ALPHABET)] if value % 3 else value
            allowed = recognizer.allowed_byte_values()
            if allowed and value % 2:
                byte = allowed[value % len(allowed)]
            ok = recognizer.push_byte(byte)
            assert ok == no_leo.push_byte(byte)
            if ok:
                data.append(byte)
        elif op == "pop" and data:
            n = value % (recognizer.rollback_limit + 1)
            recognizer.pop(n)
            no_leo.pop(n)
            del data[len(data) - n:]
            # a snapshot above the new top is invalid from now on
            snapshots = [(token, saved) for token, saved in snapshots if len(saved) <= len(data)]
        elif op == "copy":
            recognizer = recognizer.copy()
        elif op == "compact":
            recognizer.compact(value % 4)
            snapshots = []
        elif op == "snap":
            snapshots.append((recognizer.snapshot(), bytes(data)))
        elif op == "restore" and snapshots:
            token, saved = snapshots[value % len(snapshots)]
            recognizer.restore(token)
            no_leo.pop(len(data) - len(saved))
            del data[len(saved):]
            snapshots = [(token, saved) for token, saved in snapshots if len(saved) <= len(data)]
        fresh = EarleyRecognizer(lnf)
        assert fresh.push_bytes(bytes(data))
        assert state_of(recognizer) == state_of(fresh)
        assert state_of(no_leo) == state_of(fresh)


def to_lark(lnf):
    def terminal_text(term):
        if term.kind == "literal":
            return '"' + term.value.decode() + '"'
        return "/" + term.value.decode() + "/"

    lines = []
    for nt, alternatives in enumerate(lnf.productions):
        bodies = [" ".join(f"n{ident}" if kind == "n" else terminal_text(lnf.terminals[ident])
                           for kind, ident in symbols) for symbols in alternatives]
        lines.append(f"n{nt}: " + " | ".join(bodies))
    return "\n".join(lines)


@examples(1500)
@given(grammar_and_input(pool=ASCII_POOL, max_len=7))
def test_random_grammars_acceptance_against_lark(case):
    lnf, data = case
    data = bytes(b for b in data if b < 128)
    parser = lark.Lark(to_lark(lnf), start="n0", parser="earley", lexer="dynamic_complete")
    try:
        parser.parse(data.decode())
        lark_accepts = True
    except lark.exceptions.LarkError:
        lark_accepts = False
    if not data:
        return
    recognizer = EarleyRecognizer(lnf)
    accepted = recognizer.push_bytes(data) and recognizer.is_accepting()
    assert accepted == lark_accepts, (to_lark(lnf), data)


@pytest.mark.parametrize("split", range(1, 4))
def test_utf8_split_at_every_position(split):
    text = "\u00e9\u20ac\U0001F600"
    lnf = build_lnf(f"S ::= '{text}' S | /(\\xf0\\x9f\\x98\\x80|\\xc3\\xa9)+/ | '\u20ac'")
    data = (text * 2).encode() + "\u00e9".encode()
    reference = LNFRecognizer(lnf)
    recognizer = EarleyRecognizer(lnf)
    for position in range(0, len(data), split):
        chunk = data[position:position + split]
        assert recognizer.push_bytes(chunk) == reference.viable_prefix(data[:position + len(chunk)])
        assert recognizer.is_accepting() == reference.accepts(data[:position + len(chunk)])


@examples(1000)
@given(grammars(), st.lists(st.tuples(st.sampled_from(["push", "pop", "compact", "end", "copy"]),
                                      st.integers(0, 255), st.integers(-3, 40)), max_size=30))
def test_random_operations_never_crash(lnf, operations):
    """Any byte, any pop count, any compaction, any (k, state) for the mask
    hooks: no crash, typed errors only, and allowed bytes stay exact with
    respect to push (every allowed byte pushes, no other byte does)."""
    recognizer = EarleyRecognizer(lnf, rollback_horizon=None)
    for op, value, extra in operations:
        if op == "push":
            recognizer.push_byte(value)
        elif op == "pop":
            if value % 7 <= recognizer.rollback_limit:
                recognizer.pop(value % 7)
            else:
                with pytest.raises(ValueError):
                    recognizer.pop(value % 7)
        elif op == "compact":
            recognizer.compact(value % 5)
        elif op == "end":
            n_before = recognizer.n_bytes
            ended = recognizer.end_terminal(extra, None if value % 2 else value)
            assert recognizer.n_bytes == n_before + (1 if ended else 0)
        else:
            recognizer = recognizer.copy()
        allowed = set(recognizer.allowed_byte_values())
        for byte in (0, 97, 98, 0xC3, 0xE2, 255, value):
            pushed = recognizer.push_byte(byte)
            assert pushed == (byte in allowed)
            if pushed:
                recognizer.pop(1)
