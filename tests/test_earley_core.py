"""Earley core on hand-built LNF grammars: operations, errors, hooks.

Oracle: ``support.lnf_reference.LNFRecognizer`` (plain-Python Earley over the
same arrays), never the core's own output; the test DFAs it steps are checked
against the ``regex`` module here (``test_dfa_tables_match_their_regex``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grammask.errors import GrammarError, LimitExceeded
from grammask._core.earley import EarleyRecognizer, compiled_tables
from grammask._core.earley_tables import CompiledTables

from support.hand_lnf import build_lnf
from support.lnf_reference import LNFRecognizer
from support.mini_dfa import make_dfa


def all_strings(alphabet: bytes, max_len: int):
    for n in range(max_len + 1):
        for combo in itertools.product(alphabet, repeat=n):
            yield bytes(combo)


def check_exhaustively(grammar_text, alphabet, max_len, start_accepts_empty=False):
    """Every string up to max_len: viability of each prefix and acceptance."""
    lnf = build_lnf(grammar_text, start_accepts_empty)
    reference = LNFRecognizer(lnf)
    tables = CompiledTables(lnf)
    n_checked = 0
    for data in all_strings(alphabet, max_len):
        recognizer = EarleyRecognizer(tables)
        expected_ok = reference.viable_prefix(data)
        assert recognizer.push_bytes(data) == expected_ok, data
        if expected_ok:
            assert recognizer.is_accepting() == reference.accepts(data), data
            assert recognizer.n_bytes == len(data)
        n_checked += 1
    return n_checked


GRAMMARS = {
    "right recursion": ("S ::= 'a' S | 'a'", b"ab"),
    "left recursion": ("S ::= S 'a' | 'b'", b"ab"),
    "middle recursion": ("S ::= 'a' S 'b' | 'ab'", b"ab"),
    "ambiguous": ("S ::= S S | 'a' | 'ab' | 'b'", b"abc"),
    "shared literal prefixes": ("S ::= 'abc' | 'abd' | 'ab' S | 'a'", b"abcd"),
    "regex end and continue": ("S ::= /a+/ 'b' | /a+/ | /ab*/ S", b"ab"),
    "early end": ("S ::= e/a*b/ S | e/a*b/ | 'c'", b"abc"),
    "complement": ("S ::= '<' x/>/ '>' | '<>'", b"<>a"),
    "substrings": ("S ::= s/abcab/ ';' S | s/abcab/", b"abc;"),
    "utf8 literals": ("S ::= '\u00e9' S | '\u20ac' | /(\\xc3\\xa9)+/ '!'", "\u00e9\u20ac!".encode()),
    "deep chain": ("S ::= A 'x' ; A ::= B 'y' | 'a' ; B ::= A 'z' | 'b'", b"abxyz"),
    "unit cycle": ("S ::= A | 'c' ; A ::= S 'a' | 'b'", b"abc"),
    "json-like": ("V ::= '[' E ']' | '[]' | 'n' ; E ::= V | V ',' E", b"[],n"),
    # Leo's definition (seed): two items wait for A after 'x', only one would
    # complete; a Leo item there would lose "S ::= 'x' A . 'y'".
    "leo definition": ("S ::= 'x' A | 'x' A 'y' | 'z' B ; A ::= 'a' A | 'a' ; "
                       "B ::= 'b' B | 'b' | 'b' B 'c'", b"xyzabc"),
}


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_exhaustive_small_strings(name):
    text, alphabet = GRAMMARS[name]
    max_len = 6 if len(alphabet) <= 3 else (5 if len(alphabet) <= 5 else 4)
    assert check_exhaustively(text, alphabet, max_len) > 0


def test_start_accepts_empty_at_length_zero():
    lnf = build_lnf("S ::= 'a' S | 'a'", start_accepts_empty=True)
    recognizer = EarleyRecognizer(lnf)
    assert recognizer.is_accepting()
    assert not EarleyRecognizer(build_lnf("S ::= 'a'")).is_accepting()


def test_failed_push_leaves_state_unchanged():
    lnf = build_lnf("S ::= /[0-9]+/ '.' /[0-9]+/ | 'x'")
    recognizer = EarleyRecognizer(lnf)
    assert recognizer.push_bytes(b"12")
    before = (recognizer.stats()["items_per_set"], recognizer.allowed_first_bytes(),
              recognizer.state_key(), recognizer.is_accepting(), recognizer.scan_items())
    assert not recognizer.push_byte(ord("x"))
    assert not recognizer.push_bytes(b"3.4x")
    after = (recognizer.stats()["items_per_set"], recognizer.allowed_first_bytes(),
             recognizer.state_key(), recognizer.is_accepting(), recognizer.scan_items())
    assert before == after
    assert recognizer.push_bytes(b".5") and recognizer.is_accepting()


def test_allowed_first_bytes_layout_and_agreement():
    lnf = build_lnf("S ::= 'a' S | /[0-9]+/ | '\u00e9'")
    recognizer = EarleyRecognizer(lnf)
    bitset = recognizer.allowed_first_bytes()
    assert isinstance(bitset, bytes) and len(bitset) == 32
    expected = {ord("a"), 0xC3} | set(range(ord("0"), ord("9") + 1))
    assert set(recognizer.allowed_byte_values()) == expected
    for byte in range(256):
        assert bool(bitset[byte >> 3] >> (byte & 7) & 1) == (byte in expected)
    reference = LNFRecognizer(lnf)
    for prefix in [b"", b"a", b"aa", b"1", b"\xc3"]:
        assert recognizer.push_bytes(prefix) if prefix else True
        allowed = set(recognizer.allowed_byte_values())
        assert allowed == {b for b in range(256) if reference.viable_prefix(prefix + bytes([b]))}
        recognizer.pop(len(prefix))


def test_pop_snapshot_restore_copy():
    lnf = build_lnf("S ::= 'a' S 'b' | /c+/")
    recognizer = EarleyRecognizer(lnf)
    assert recognizer.push_bytes(b"aac")
    token = recognizer.snapshot()
    clone = recognizer.copy()
    assert recognizer.push_bytes(b"cbb") and recognizer.is_accepting()
    assert not clone.is_accepting() and clone.n_bytes == 3
    assert clone.push_bytes(b"bb") and clone.is_accepting()
    recognizer.restore(token)
    assert recognizer.n_bytes == 3 and not recognizer.is_accepting()
    recognizer.pop(2)
    assert recognizer.allowed_byte_values() == [ord("a"), ord("c")]
    with pytest.raises(ValueError):
        recognizer.restore(token)            # popped below the snapshot
    with pytest.raises(ValueError):
        recognizer.pop(2)                    # only 1 byte pushed
    recognizer.pop(1)
    assert recognizer.n_bytes == 0


def test_restore_rejects_other_branch():
    recognizer = EarleyRecognizer(build_lnf("S ::= /[ab]+/"))
    recognizer.push_bytes(b"ab")
    token = recognizer.snapshot()
    recognizer.pop(1)
    recognizer.push_byte(ord("a"))           # same length, different set
    with pytest.raises(ValueError):
        recognizer.restore(token)


def test_max_items_limit_raises_and_keeps_state():
    lnf = build_lnf("S ::= S S | 'a'")
    recognizer = EarleyRecognizer(lnf, max_items=40)
    pushed = 0
    with pytest.raises(LimitExceeded) as info:
        for _ in range(100):
            recognizer.push_byte(ord("a"))
            pushed += 1
    assert info.value.limit == "max_earley_items" and info.value.maximum == 40
    assert info.value.given > 40 and "max_earley_items=" in str(info.value)
    assert recognizer.n_bytes == pushed
    assert recognizer.is_accepting()
    with pytest.raises(LimitExceeded):
        recognizer.push_bytes(b"aaaa")
    assert recognizer.n_bytes == pushed


@pytest.mark.parametrize("mutate, message", [
    (lambda g: setattr(g, "production_symbol_offsets", np.array([0, 0, 1], dtype=np.int32)), "empty production"),
    (lambda g: setattr(g, "symbol_ids", np.array([5], dtype=np.int32)), "outside"),
    (lambda g: setattr(g, "start_id", 3), "start_id"),
    (lambda g: g.dfas[0].transitions.__setitem__((1, 0), 99), "transition"),
    (lambda g: setattr(g.dfas[0], "start", 0), "start state"),
])
def test_malformed_lnf_is_a_grammar_error(mutate, message):
    lnf = build_lnf("S ::= /a+/") if "transition" in message or "start state" in message \
        else build_lnf("S ::= 'a' | 'b'")
    if message == "empty production":
        lnf.symbol_kinds = np.array([0], dtype=np.uint8)
        lnf.symbol_ids = np.array([0], dtype=np.int32)
    if message == "outside":
        lnf.symbol_kinds = lnf.symbol_kinds[:1]
        lnf.production_symbol_offsets = np.array([0, 1], dtype=np.int32)
        lnf.production_lhs = np.array([0], dtype=np.int32)
        lnf.nonterminal_production_offsets = np.array([0, 1], dtype=np.int32)
    mutate(lnf)
    with pytest.raises(GrammarError, match=message):
        EarleyRecognizer(lnf)


def test_tables_are_shared_and_cached():
    lnf = build_lnf("S ::= 'a' S | 'a'")
    assert compiled_tables(lnf) is compiled_tables(lnf)
    first, second = EarleyRecognizer(lnf), EarleyRecognizer(lnf)
    assert first.tables is second.tables


def test_hopeless_dfa_states_are_dead():
    # state 2 of this hand DFA cannot reach acceptance: 'ab' must be rejected
    lnf = build_lnf("S ::= /a/")
    dfa = lnf.dfas[0]
    dfa.transitions = np.array([[0, 0, 0], [0, 2, 3], [0, 0, 2], [0, 0, 0]], dtype=np.int32)
    dfa.accepting = np.array([False, False, False, True])
    dfa.class_map = np.zeros(256, dtype=np.uint8)
    dfa.class_map[ord("b")] = 1
    dfa.class_map[ord("a")] = 2
    dfa.start = 1
    recognizer = EarleyRecognizer(lnf)
    assert recognizer.allowed_byte_values() == [ord("a")]
    assert recognizer.push_byte(ord("a")) and recognizer.is_accepting()


class _TableDFA:
    """A bare DFA-shaped object (not hashed by content, so it is checked anew)."""

    def __init__(self, transitions, accepting, class_map, start):
        self.transitions, self.accepting, self.class_map, self.start = (
            transitions, accepting, class_map, start)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_prepared_dfa_tables_match_a_plain_reachability_oracle(data):
    """Random untrimmed tables (hopeless states, unused classes): the
    prepared transitions send exactly the targets that cannot reach an
    accepting state (plain-Python fixpoint) to 0, and each state's allowed
    bytes and can-continue flag are the bytes whose class leads elsewhere."""
    from grammask._core import earley_tables

    n_states = data.draw(st.integers(2, 12))
    n_classes = data.draw(st.integers(1, 5))
    rows = [[0] * n_classes] + [data.draw(st.lists(st.integers(0, n_states - 1), min_size=n_classes,
                                                   max_size=n_classes)) for _ in range(n_states - 1)]
    accepting = [False] + data.draw(st.lists(st.booleans(), min_size=n_states - 1, max_size=n_states - 1))
    class_map = data.draw(st.lists(st.integers(0, n_classes - 1), min_size=256, max_size=256))
    start = data.draw(st.integers(1, n_states - 1))
    alive = list(accepting)
    changed = True
    while changed:
        changed = False
        for state, row in enumerate(rows):
            if not alive[state] and any(alive[target] for target in row):
                alive[state] = changed = True
    expected = [[target if alive[target] else 0 for target in row] for row in rows]
    dfa = _TableDFA(np.array(rows, dtype=np.int32), np.array(accepting), np.array(class_map, dtype=np.uint8),
                    start)
    table, classes, accept, can_continue, allowed, start_out = earley_tables._prepared_dfa(dfa)
    assert table.tolist() == expected and start_out == start
    assert classes.tolist() == class_map and accept.tolist() == [int(flag) for flag in accepting]
    for state in range(n_states):
        live = [byte for byte in range(256) if expected[state][class_map[byte]] != 0]
        words = [sum(1 << (byte & 63) for byte in live if byte >> 6 == word) for word in range(4)]
        assert allowed[4 * state:4 * state + 4].tolist() == words
        assert can_continue[state] == (1 if live else 0)


def test_scan_items_and_terminal_end():
    lnf = build_lnf("S ::= /[0-9]+/ 'x' | 'ab' /[0-9]+/ 'y'")
    recognizer = EarleyRecognizer(lnf)
    number = lnf.terminals.index(next(t for t in lnf.terminals if t.value == b"[0-9]+"))
    digits = lnf.dfas[lnf.terminal_dfa_ids[number]]
    items = recognizer.scan_items()
    assert (number, digits.start) in items
    index_of_number = items.index((number, digits.start))
    assert not recognizer.end_terminal(index_of_number)     # nothing read yet
    assert recognizer.push_bytes(b"12")
    items = recognizer.scan_items()
    k = items.index((number, digits.step(digits.step(digits.start, ord("1")), ord("2"))))
    assert recognizer.end_terminal(k)
    assert recognizer.allowed_byte_values() == [ord("x")]
    assert recognizer.push_byte(ord("x")) and recognizer.is_accepting()
    recognizer.pop(2)
    assert recognizer.n_bytes == 2 and sorted(recognizer.allowed_byte_values()) == \
        sorted([ord("x")] + list(range(ord("0"), ord("9") + 1)))
    # a DFA state reached by bytes the caller walked itself
    recognizer.pop(2)
    k = recognizer.scan_items().index((number, digits.start))
    state = digits.step(digits.step(digits.step(digits.start, ord("7")), ord("7")), ord("7"))
    assert recognizer.end_terminal(k, state)
    assert recognizer.allowed_byte_values() == [ord("x")]
    recognizer.pop(1)
    assert not recognizer.end_terminal(k, digits.start) or digits.accepting[digits.start]
    literal_k = [i for i, (t, _) in enumerate(recognizer.scan_items()) if lnf.terminals[t].value == b"ab"][0]
    assert not recognizer.end_terminal(literal_k)
    assert recognizer.end_terminal(literal_k, 2)
    assert recognizer.allowed_byte_values() == list(range(ord("0"), ord("9") + 1))


def test_state_key_ignores_how_deep_the_state_is():
    """Origins count relative to the top: 'aaa' and 'aaaaa' have the same future."""
    lnf = build_lnf("S ::= 'a' S | 'b'")
    first, second = EarleyRecognizer(lnf), EarleyRecognizer(lnf)
    first.push_bytes(b"aaa")
    second.push_bytes(b"aaaaa")
    assert first.state_key() == second.state_key()
    second.push_byte(ord("b"))
    assert first.state_key() != second.state_key()


def test_dfa_tables_match_their_regex():
    """The test DFAs (support.mini_dfa) against the ``regex`` module, for every
    kind, so the reference recognizer that steps them decides terminals right."""
    import regex
    for pattern in ["[0-9]+", "a|ab", "(ab)*c", "[^a]b?", "\\x41+", "a*b", "(a|b)a"]:
        compiled = regex.compile(pattern.encode())
        full, early, complement = (make_dfa(pattern, kind) for kind in ("regex", "early_end", "complement"))
        for data in all_strings(b"abc09A", 3):
            matches = bool(compiled.fullmatch(data))
            assert full.fullmatch(data) == matches, (pattern, data)
            first_match = matches and not any(compiled.fullmatch(data[:k]) for k in range(len(data)))
            assert early.fullmatch(data) == first_match, (pattern, data)
            assert complement.fullmatch(data) == (compiled.search(data) is None), (pattern, data)
    substrings = make_dfa("abcab", "substrings")
    for data in all_strings(b"abc", 4):
        assert substrings.fullmatch(data) == (data in b"abcab"), data


LNF_ARRAY_FIELDS = ["nonterminal_production_offsets", "production_lhs", "production_symbol_offsets",
                    "symbol_kinds", "symbol_ids", "terminal_kinds", "terminal_literal_offsets",
                    "literal_bytes", "terminal_dfa_ids"]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.sampled_from(LNF_ARRAY_FIELDS + ["dfa", "start_id"]), st.integers(0, 40),
       st.integers(-3, 300), st.booleans())
def test_malformed_lnf_never_crashes(field, index, value, truncate):
    """Any corrupted field: either a GrammarError at construction, or a
    recognizer whose every call stays in bounds."""
    lnf = build_lnf("S ::= 'ab' T | /[0-9]+/ ; T ::= 'c' T | e/x*y/")
    if field == "start_id":
        lnf.start_id = value
    elif field == "dfa":
        table = lnf.dfas[index % len(lnf.dfas)].transitions
        table[index % table.shape[0], index % table.shape[1]] = value
    else:
        array = getattr(lnf, field).astype(np.int64)
        if truncate and len(array):
            array = array[:-1]
        elif len(array):
            array[index % len(array)] = value
        setattr(lnf, field, array)
    try:
        recognizer = EarleyRecognizer(lnf)
    except GrammarError:
        return
    for byte in b"abc0123xy":
        recognizer.push_byte(byte)
        recognizer.allowed_first_bytes()
        recognizer.scan_items()
    recognizer.pop(recognizer.rollback_limit)


def test_a_dfa_shared_by_grammars_is_prepared_once_and_read_only():
    """Two grammars with one content-equal DFA: the second CompiledTables
    takes its checked arrays from ``_prepared_dfa``'s memo (a cache hit),
    and both recognize their own language exactly."""
    from grammask._core import earley_tables
    from grammask.grammar import Grammar

    first = Grammar.from_ebnf('start ::= #"[a-c]+q" "x";')
    second = Grammar.from_ebnf('start ::= "y" #"[a-c]+q";')
    assert first.lnf.dfas[0] == second.lnf.dfas[0]
    CompiledTables(first.lnf)
    hits = earley_tables._cached_checked_dfa.cache_info().hits
    tables = CompiledTables(second.lnf)
    assert earley_tables._cached_checked_dfa.cache_info().hits == hits + 1
    parts = earley_tables._prepared_dfa(second.lnf.dfas[0])
    assert not any(array.flags.writeable for array in parts[:-1])
    for data, accepted in ((b"yabq", True), (b"yq", False), (b"yabqx", False), (b"y", False)):
        recognizer = EarleyRecognizer(tables)
        assert (recognizer.push_bytes(data) and recognizer.is_accepting()) == accepted, data
