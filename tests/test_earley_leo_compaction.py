"""Leo's optimization takes effect, and compaction keeps memory bounded
without changing what the recognizer accepts.

Leo is proven by counting (completion steps per byte stay constant with Leo,
grow linearly without it; from 1,000 to 100,000 bytes the work per byte, the
largest set and the kept memory do not grow).  Compaction is checked against fresh
recognizers (hypothesis) and by the 1 MB JSON memory bound.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from grammask.grammar import Grammar
from grammask._core.earley import EarleyRecognizer, compiled_tables

from support.grammar_cases import RIGHT_RECURSIVE_JSON
from support.hand_lnf import build_lnf
from support.paths import WORKLOADS
from support.random_lnf import ALPHABET, SCALE, grammars


def right_recursive_json_document(n_bytes: int) -> bytes:
    item = b'{"id": 12, "tags": ["a", "b"], "ok": true}'
    n_items = max(1, n_bytes // (len(item) + 2))
    return b"[" + b", ".join([item] * n_items) + b"]"


def work_per_byte(tables, data: bytes, rollback_horizon: int) -> dict:
    """Deterministic work counters of a compacting recognizer fed 100-byte
    chunks (the way the engine feeds tokens): completion steps per byte,
    the largest kept Earley set, and the kept memory."""
    recognizer = EarleyRecognizer(tables, rollback_horizon=rollback_horizon)
    assert all([recognizer.push_bytes(data[k:k + 100]) for k in range(0, len(data), 100)])
    stats = recognizer.stats()
    return {"steps_per_byte": stats["n_completion_steps"] / len(data),
            "largest_set": max(stats["items_per_set"]), "memory_bytes": stats["memory_bytes"]}


def assert_flat(tables, short_data, long_data, horizon=256):
    """The work per byte does not grow from the short to the long input: as
    many completion steps per byte, sets no larger, memory bounded by the
    horizon.  (Wall-clock per byte lives in benchmarks/bench_earley.py: timed
    assertions fail on a loaded shared machine.)"""
    short = work_per_byte(tables, short_data, horizon)
    long = work_per_byte(tables, long_data, horizon)
    assert long["steps_per_byte"] <= 1.05 * short["steps_per_byte"], (short, long)
    assert long["largest_set"] <= short["largest_set"], (short, long)
    assert long["memory_bytes"] <= 2 * short["memory_bytes"], (short, long)


def test_leo_keeps_right_recursion_linear_by_count():
    lnf = build_lnf("A ::= 'a' A | 'a'")
    with_leo = EarleyRecognizer(lnf)
    without_leo = EarleyRecognizer(lnf, use_leo=False)
    assert with_leo.push_bytes(b"a" * 2000) and without_leo.push_bytes(b"a" * 2000)
    assert with_leo.is_accepting() and without_leo.is_accepting()
    # one completion per byte with Leo; the whole chain (quadratic) without
    assert with_leo.stats()["n_completion_steps"] <= 2 * 2000
    assert without_leo.stats()["n_completion_steps"] >= 2000 * 1999 // 2
    assert max(with_leo.stats()["items_per_set"]) <= 3


def test_leo_right_recursion_flat_work_per_byte():
    """With the automatic compaction policy (the engine's mode), 1,000 and
    100,000 bytes of right recursion cost the same work per byte."""
    tables = compiled_tables(build_lnf("A ::= 'a' A | 'a'"))
    assert_flat(tables, b"a" * 1000, b"a" * 100_000)


def test_leo_right_recursive_json_arrays():
    grammar = Grammar.from_ebnf(RIGHT_RECURSIVE_JSON)
    tables = compiled_tables(grammar.lnf)
    small = right_recursive_json_document(1000)
    large = right_recursive_json_document(100_000)
    json.loads(large)
    recognizer = EarleyRecognizer(tables)
    assert recognizer.push_bytes(large) and recognizer.is_accepting()
    sizes = recognizer.stats()["items_per_set"]
    steps_per_byte = recognizer.stats()["n_completion_steps"] / len(large)
    small_recognizer = EarleyRecognizer(tables)
    assert small_recognizer.push_bytes(small)
    assert max(sizes) == max(small_recognizer.stats()["items_per_set"])
    assert steps_per_byte <= 1.05 * small_recognizer.stats()["n_completion_steps"] / len(small)
    without_leo = EarleyRecognizer(tables, use_leo=False)
    assert without_leo.push_bytes(right_recursive_json_document(20_000))
    assert without_leo.stats()["n_completion_steps"] / 20_000 > 10 * steps_per_byte
    assert_flat(tables, small, large)


def test_compaction_keeps_1mb_json_under_50mb():
    grammar = Grammar.from_gbnf((WORKLOADS / "gbnf" / "json.gbnf").read_text(), start="root")
    item = json.dumps({"id": 12345, "name": "item name", "tags": ["a", "b"], "price": 3.25,
                       "ok": True, "meta": None}).encode()
    data = b'{"items": [' + b", ".join([item] * (1_000_000 // (len(item) + 2))) + b"]}"
    assert len(data) > 990_000
    json.loads(data)
    recognizer = EarleyRecognizer(grammar.lnf, rollback_horizon=256)
    for offset in range(0, len(data), 1000):
        assert recognizer.push_bytes(data[offset:offset + 1000])
        assert recognizer.rollback_limit >= min(256, offset)
    assert recognizer.is_accepting()
    assert recognizer.n_bytes == len(data)
    assert recognizer.stats()["memory_bytes"] < 50 << 20
    # without compaction the same input holds hundreds of MB (checked on a tenth)
    uncompacted = EarleyRecognizer(grammar.lnf)
    assert uncompacted.push_bytes(data[:100_000])
    assert uncompacted.stats()["memory_bytes"] > 10 * recognizer.stats()["memory_bytes"]


def test_compaction_right_recursion_folds_leo_chains():
    lnf = build_lnf("A ::= 'a' A | 'a'")
    recognizer = EarleyRecognizer(lnf)
    assert recognizer.push_bytes(b"a" * 10_000)
    recognizer.compact(10)
    # every origin folded to set 0: only set 0 and the 11 kept sets survive
    assert recognizer.n_earley_sets == 12
    assert recognizer.n_bytes == 10_000 and recognizer.is_accepting()
    assert recognizer.push_bytes(b"aaa") and recognizer.is_accepting()
    recognizer.pop(13)
    assert recognizer.n_bytes == 9_990
    with pytest.raises(ValueError, match="rollback_horizon|only the last"):
        recognizer.pop(1)
    assert recognizer.n_bytes == 9_990 and recognizer.push_byte(ord("a"))


def test_pop_beyond_horizon_raises_and_keeps_state():
    recognizer = EarleyRecognizer(build_lnf("S ::= '(' S ')' | 'x'"), rollback_horizon=4)
    assert recognizer.push_bytes(b"(" * 3000)
    before = (recognizer.n_bytes, recognizer.allowed_first_bytes())
    limit = recognizer.rollback_limit
    assert 4 <= limit < 3000
    with pytest.raises(ValueError):
        recognizer.pop(limit + 1)
    assert (recognizer.n_bytes, recognizer.allowed_first_bytes()) == before
    recognizer.pop(4)
    assert recognizer.push_bytes(b"(((" + b"x" + b")" * 2999) and recognizer.is_accepting()


@settings(max_examples=max(1, int(1500 * SCALE)), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(grammars(), st.lists(st.integers(0, 255), min_size=1, max_size=14),
       st.integers(0, 14), st.integers(0, 4))
def test_compaction_preserves_language(lnf, choices, compact_at, keep):
    """Compact after compact_at bytes keeping ``keep``; the rest of the input,
    pops within the horizon and acceptance agree with a fresh recognizer."""
    recognizer = EarleyRecognizer(lnf)
    data = bytearray()
    for index, choice in enumerate(choices):
        if index == compact_at:
            recognizer.compact(keep)
            assert recognizer.rollback_limit == min(keep, len(data))
        allowed = recognizer.allowed_byte_values()
        byte = allowed[choice % len(allowed)] if allowed and choice % 4 else ALPHABET[choice % len(ALPHABET)]
        if recognizer.push_byte(byte):
            data.append(byte)
        fresh = EarleyRecognizer(lnf)
        assert fresh.push_bytes(bytes(data))
        assert recognizer.is_accepting() == fresh.is_accepting()
        assert recognizer.allowed_first_bytes() == fresh.allowed_first_bytes()
        assert recognizer.n_bytes == len(data)
    n_pop = min(recognizer.rollback_limit, len(data))
    recognizer.pop(n_pop)
    fresh = EarleyRecognizer(lnf)
    assert fresh.push_bytes(bytes(data[:len(data) - n_pop]))
    assert recognizer.allowed_first_bytes() == fresh.allowed_first_bytes()
    assert recognizer.is_accepting() == fresh.is_accepting()
