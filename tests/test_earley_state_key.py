"""The Earley recognizer's state key (``EarleyRecognizer.state_key``).

Soundness is checked against the independent reference recognizer
(``support.lnf_reference.LNFRecognizer``, plain-Python Earley): on random
grammars and random viable prefixes, every two prefixes with equal keys must
get the same verdict (viable, accepted) for every suffix up to 3 bytes over
the test alphabet and for random longer suffixes.  On the shipped JSON grammar, prefixes of json.dumps documents
with equal keys trade the rest of their documents and ``json.loads`` must
accept every swapped document.  Usefulness: equivalent states reached
through different text, after compaction, with Leo off, after push/pop round
trips, snapshot/restore and copy give equal keys, and different JSON nesting
gives different keys.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, strategies as st

from grammask.grammar import Grammar, builtin
from grammask._core.earley import EarleyRecognizer, compiled_tables

from support.grammar_cases import RIGHT_RECURSIVE_JSON
from support.hand_lnf import build_lnf
from support.lnf_reference import LNFRecognizer
from support.random_lnf import ALPHABET, examples, grammars

SUFFIX_BYTES = sorted(set(ALPHABET))


def walk_prefixes(lnf, rng: random.Random, n_walks: int, max_len: int) -> dict[bytes, bytes]:
    """Viable prefixes reached by random walks (mostly allowed bytes), each
    with the key the walking recognizer gave it (keys computed incrementally)."""
    keys = {}
    for _ in range(n_walks):
        recognizer = EarleyRecognizer(lnf)
        data = b""
        keys[data] = recognizer.state_key()
        for _ in range(rng.randint(0, max_len)):
            allowed = recognizer.allowed_byte_values()
            if not allowed:
                break
            byte = rng.choice(allowed) if rng.random() < 0.9 else rng.choice(SUFFIX_BYTES)
            if recognizer.push_byte(byte):
                data += bytes([byte])
                keys[data] = recognizer.state_key()
    return keys


def suffix_verdicts(reference, prefix: bytes, suffixes) -> list:
    return [reference.verdict(prefix + suffix) for suffix in suffixes]


def short_suffixes(reference, prefix: bytes, depth: int) -> list[bytes]:
    """Suffixes up to ``depth`` bytes over SUFFIX_BYTES, descending only where
    ``prefix`` + suffix is viable (non-viability is final)."""
    result, frontier = [], [b""]
    for _ in range(depth):
        grown = []
        for suffix in frontier:
            for byte in SUFFIX_BYTES:
                longer = suffix + bytes([byte])
                result.append(longer)
                if reference.viable_prefix(prefix + longer):
                    grown.append(longer)
        frontier = grown
    return result


def random_suffixes(lnf, prefix: bytes, rng: random.Random, n: int) -> list[bytes]:
    suffixes = []
    for _ in range(n):
        recognizer = EarleyRecognizer(lnf)
        assert recognizer.push_bytes(prefix)
        suffix = b""
        for _ in range(rng.randint(4, 7)):
            allowed = recognizer.allowed_byte_values()
            byte = rng.choice(allowed) if allowed and rng.random() < 0.85 else rng.choice(SUFFIX_BYTES)
            suffix += bytes([byte])
            if not recognizer.push_byte(byte):
                break
        suffixes.append(suffix)
    return suffixes


def check_equal_keys_have_equal_futures(lnf, keys: dict[bytes, bytes], rng: random.Random) -> int:
    """For each group of prefixes sharing a key: same reference verdicts on
    the same suffixes.  Returns the number of prefixes compared with another."""
    reference = LNFRecognizer(lnf)
    groups: dict[bytes, list[bytes]] = {}
    for prefix, key in keys.items():
        groups.setdefault(key, []).append(prefix)
    n_compared = 0
    for prefixes in groups.values():
        if len(prefixes) < 2:
            continue
        prefixes.sort(key=len)
        # the shortest one's suffix tree, so the longest input stays small
        representative = prefixes[0]
        suffixes = [b""] + short_suffixes(reference, representative, 3)
        suffixes += random_suffixes(lnf, representative, rng, 4)
        expected = suffix_verdicts(reference, representative, suffixes)
        for other in prefixes[1:3]:
            got = suffix_verdicts(reference, other, suffixes)
            for suffix, want, have in zip(suffixes, expected, got):
                assert want == have, (representative, other, suffix, want, have)
            n_compared += 1
    return n_compared


# ---------------------------------------------------------------------------
# Soundness (hypothesis, reference oracle)
# ---------------------------------------------------------------------------

@examples(300)
@given(grammars(max_nonterminals=3), st.randoms(use_true_random=False))
def test_equal_keys_mean_equal_futures_random_grammars(lnf, rng):
    keys = walk_prefixes(lnf, rng, n_walks=12, max_len=8)
    check_equal_keys_have_equal_futures(lnf, keys, rng)


LEO_GRAMMARS = [
    # right recursion through one and two nonterminals; Leo chains whose top
    # is (start, 0) and chains that stop at a set with two waiting items
    "S ::= 'a' S | 'a'",
    "S ::= 'a' T | 'b' ; T ::= 'b' S | 'a'",
    "S ::= 'a' S | 'a' S 'b' | 'c'",
    "S ::= 'x' L ; L ::= 'a' L | 'b' L | 'a'",
    "S ::= '(' S ')' S | '(' S ')' | 'x' S | 'x'",
    "S ::= A | B ; A ::= 'a' A | 'a' ; B ::= 'a' B | 'b'",
    "S ::= 'a' S | 'a' T | 'a' ; T ::= 'a' S | 'a'",
    # a unit production makes set 0's only item waiting for S complete X:
    # completing (S, 0) accepts, completing (X, 0) does not ("byy" vs "cyy")
    "S ::= X 'a' | 'b' Y ; X ::= S | 'c' Y ; Y ::= 'y' Y | 'y' 'y'",
]


@pytest.mark.parametrize("text", LEO_GRAMMARS)
def test_equal_keys_mean_equal_futures_leo_grammars(text):
    lnf = build_lnf(text)
    rng = random.Random(text)
    keys = walk_prefixes(lnf, rng, n_walks=25, max_len=7)
    assert check_equal_keys_have_equal_futures(lnf, keys, rng) > 0


def test_unit_production_folded_by_compaction_keeps_the_key():
    # set 1 has two items waiting for N that end: X ::= 'x' . N and the
    # predicted P ::= . N, whose completion (P, 1) compaction folds to (X, 0)
    lnf = build_lnf("S ::= X 'e' ; X ::= 'x' N | 'x' P ; P ::= N ; N ::= 'n' 'n'")
    plain = EarleyRecognizer(lnf)
    folded = EarleyRecognizer(lnf)
    for data in (b"x", b"n"):
        assert plain.push_bytes(data)
        assert folded.push_bytes(data)
        folded.compact(0)
        assert folded.state_key() == plain.state_key()


def test_right_recursion_keys_do_not_grow_with_depth():
    lnf = build_lnf("S ::= 'a' S | 'a'")
    recognizer = EarleyRecognizer(lnf)
    keys = set()
    for _ in range(200):
        assert recognizer.push_byte(ord("a"))
        keys.add(recognizer.state_key())
    assert len(keys) == 1
    assert recognizer.state_key() != EarleyRecognizer(lnf).state_key()


def test_balanced_nesting_depth_changes_the_key():
    lnf = build_lnf("S ::= '(' S ')' | '(' ')' | 'x'")
    depth_keys = []
    for depth in range(1, 6):
        recognizer = EarleyRecognizer(lnf)
        assert recognizer.push_bytes(b"(" * depth)
        depth_keys.append(recognizer.state_key())
    assert len(set(depth_keys)) == len(depth_keys)
    # one level left open, whatever was closed before: same key
    open_one = EarleyRecognizer(lnf)
    assert open_one.push_bytes(b"(x")
    closed_inner = EarleyRecognizer(lnf)
    assert closed_inner.push_bytes(b"(((x))")
    assert open_one.state_key() == closed_inner.state_key()
    assert open_one.state_key() not in depth_keys


# ---------------------------------------------------------------------------
# Same state, same key: compaction, Leo, pop, restore, copy
# ---------------------------------------------------------------------------

@examples(300)
@given(grammars(), st.lists(st.integers(0, 255), max_size=20), st.integers(0, 3))
def test_keys_independent_of_compaction_and_leo(lnf, raw_bytes, horizon):
    """Same bytes pushed into recognizers that keep everything, compact with a
    horizon, compact by hand after every byte, or run without Leo: equal keys
    after every byte.  (The random grammars include unit productions, which
    LNF excludes; unit cycles deeper than the key's resolution depth could
    break this, none of these grammars has one.)"""
    plain = EarleyRecognizer(lnf)
    compacting = EarleyRecognizer(lnf, rollback_horizon=horizon)
    by_hand = EarleyRecognizer(lnf)
    no_leo = EarleyRecognizer(lnf, use_leo=False)
    for value in raw_bytes:
        allowed = plain.allowed_byte_values()
        byte = allowed[value % len(allowed)] if allowed and value % 4 else value
        pushed = plain.push_byte(byte)
        assert compacting.push_byte(byte) == pushed
        assert by_hand.push_byte(byte) == pushed
        assert no_leo.push_byte(byte) == pushed
        by_hand.compact(value % 3)
        assert no_leo.state_key() == plain.state_key()
        assert compacting.state_key() == plain.state_key()
        assert by_hand.state_key() == plain.state_key()


@examples(300)
@given(grammars(), st.lists(st.tuples(st.sampled_from(["push", "pop", "snap", "restore", "copy",
                                                        "end", "key"]),
                                      st.integers(0, 255)), max_size=30))
def test_keys_match_fresh_recognizers_after_any_operations(lnf, operations):
    """Push, pop, snapshot/restore, copy, terminal ends (the mask hooks), with
    keys taken at random moments: the key equals a fresh recognizer's key
    after the same bytes (terminal-end sets compared with a recognizer that
    pushed the same sets)."""
    recognizer = EarleyRecognizer(lnf)
    history = []          # one (kind, value) per set above set 0
    snapshots = []
    for op, value in operations:
        if op == "push":
            allowed = recognizer.allowed_byte_values()
            byte = allowed[value % len(allowed)] if allowed and value % 3 else value
            if recognizer.push_byte(byte):
                history.append(("byte", byte))
        elif op == "end":
            k = value % (len(recognizer.scan_items()) + 1)
            if recognizer.end_terminal(k):
                history.append(("end", k))
        elif op == "pop" and history:
            n = value % (len(history) + 1)
            recognizer.pop(n)
            del history[len(history) - n:]
            snapshots = [(token, depth) for token, depth in snapshots if depth <= len(history)]
        elif op == "snap":
            snapshots.append((recognizer.snapshot(), len(history)))
        elif op == "restore" and snapshots:
            token, depth = snapshots[value % len(snapshots)]
            recognizer.restore(token)
            del history[depth:]
            snapshots = [(t, d) for t, d in snapshots if d <= depth]
        elif op == "copy":
            recognizer = recognizer.copy()
        elif op == "key":
            recognizer.state_key()
        fresh = EarleyRecognizer(lnf)
        for kind, value_pushed in history:
            assert fresh.push_byte(value_pushed) if kind == "byte" else fresh.end_terminal(value_pushed)
        assert recognizer.state_key() == fresh.state_key()


# ---------------------------------------------------------------------------
# JSON: equivalent states share a key, different nesting does not
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def json_tables():
    return compiled_tables(builtin("json").lnf)


def json_key(tables, text: str, **options) -> bytes:
    recognizer = EarleyRecognizer(tables, **options)
    assert recognizer.push_bytes(text.encode()), text
    return recognizer.state_key()


def test_json_equivalent_prefixes_share_a_key(json_tables):
    assert json_key(json_tables, '{"a": "x') == json_key(json_tables, '{"bbb": "yyyy')
    assert json_key(json_tables, '[1, 2') == json_key(json_tables, '[1, 2, 3, 45')
    assert json_key(json_tables, '{"a": [1, {"b": 2') == json_key(json_tables, '{"c": [{"d": 3}, {"e": 4')
    assert json_key(json_tables, '[{"q": 1}, {"q": "x') == json_key(
        json_tables, '[{"a": [1, 2]}, {"b": null}, {"q": "xyz')


def test_json_different_states_differ(json_tables):
    texts = ['{"a": "x', '[{"a": "x', '[[{"a": "x', '{"a": {"a": "x', '{"a": 1', '{"a": 1.',
             '{"a": "x"', '{"a": "x",', '{"a": tru', '[1', '[[1', '[[[1', '[1]', '']
    keys = [json_key(json_tables, text) for text in texts]
    assert len(set(keys)) == len(texts)


def test_json_keys_independent_of_compaction(json_tables):
    item = '{"id": 12, "tags": ["a", "b"], "ok": true, "nested": {"x": [1.5, -2e3, null]}}'
    data = ("[" + ", ".join([item] * 40) + "]").encode()
    plain = EarleyRecognizer(json_tables)
    compacting = [EarleyRecognizer(json_tables, rollback_horizon=h) for h in (0, 1, 16)]
    for position in range(0, len(data), 3):
        chunk = data[position:position + 3]
        assert plain.push_bytes(chunk)
        expected = plain.state_key()
        for recognizer in compacting:
            assert recognizer.push_bytes(chunk)
            assert recognizer.state_key() == expected, position
    assert compacting[0].n_earley_sets < plain.n_earley_sets / 10
    # the long document's last state equals a short document's
    assert plain.state_key() == json_key(json_tables, "[" + item + "]")


def test_json_keys_survive_push_pop_round_trips(json_tables):
    recognizer = EarleyRecognizer(json_tables, rollback_horizon=8)
    assert recognizer.push_bytes(b'{"k": [1, {"z": "ab')
    before = recognizer.state_key()
    token = recognizer.snapshot()
    for extra in (b'"', b'c"}', b'", "w": 3'):
        assert recognizer.push_bytes(extra)
        assert recognizer.state_key() != before
        recognizer.pop(len(extra))
        assert recognizer.state_key() == before
    assert recognizer.push_bytes(b'"}')
    recognizer.restore(token)
    assert recognizer.state_key() == before
    assert recognizer.copy().state_key() == before


def test_right_recursive_json_keys():
    tables = compiled_tables(Grammar.from_ebnf(RIGHT_RECURSIVE_JSON).lnf)
    short = EarleyRecognizer(tables)
    long = EarleyRecognizer(tables, rollback_horizon=4)
    assert short.push_bytes(b'[{"a": 1}, {"b": [')
    assert long.push_bytes(b'[' + b'{"a": 1}, ' * 300 + b'{"b": [')
    assert short.state_key() == long.state_key()
    deeper = EarleyRecognizer(tables)
    assert deeper.push_bytes(b'[[{"a": 1}, {"b": [')
    assert deeper.state_key() != short.state_key()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(st.sampled_from("abyz 09_"), max_size=4),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(st.sampled_from("abk"), max_size=3), children, max_size=3),
    max_leaves=8)


@examples(200)
@given(st.lists(JSON_VALUES, min_size=2, max_size=4), st.sampled_from([None, 1]))
def test_json_equal_keys_swap_tails(json_tables, values, indent):
    """Prefixes of several JSON documents with equal keys can trade the rest
    of their documents: json.loads accepts every swapped document."""
    documents = [json.dumps(value, indent=indent).encode() for value in values]
    by_key: dict[bytes, list[tuple[int, int]]] = {}
    for doc_id, document in enumerate(documents):
        recognizer = EarleyRecognizer(json_tables, rollback_horizon=2)
        for position in range(len(document) + 1):
            if position:
                assert recognizer.push_byte(document[position - 1]), document[:position]
            by_key.setdefault(recognizer.state_key(), []).append((doc_id, position))
        assert recognizer.is_accepting()
    for members in by_key.values():
        for doc_a, cut_a in members[:4]:
            for doc_b, cut_b in members[:4]:
                swapped = documents[doc_a][:cut_a] + documents[doc_b][cut_b:]
                json.loads(swapped)
