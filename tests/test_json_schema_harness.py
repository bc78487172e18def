"""Self-tests of the JSON Schema matcher (support/schema_matcher.py) on a
grammar whose language is known without grammask (a fixed enum)."""

from __future__ import annotations

import json
import random

from support.schema_matcher import SchemaMatcher


def test_harness_matches_a_known_language():
    matcher = SchemaMatcher({"enum": ["x", 7, None]})
    for text in ('"x"', "7", "7.0", "null", ' "x" '):
        assert matcher.accepts(text), text
    for text in ('"y"', "8", "nul", "", '"x', "70"):
        assert not matcher.accepts(text), text
    assert matcher.viable('"')
    assert not matcher.viable('"z')


def test_random_walk_stays_in_a_known_language():
    matcher = SchemaMatcher({"enum": ["ab", "cd", True]})
    rng = random.Random(3)
    outputs = {matcher.random_walk(rng) for _ in range(40)}
    decoded = {json.loads(text) for text in outputs if text is not None}
    assert decoded <= {"ab", "cd", True}
    assert len(decoded) >= 2
