"""A ``not`` that removes one of the patterns the same strings must match
(issue 17): an ``anyOf`` of ``not`` branches beside an ``allOf`` of patterns,
as in MaskBench's Handwritten---string5, gives branches such as "p0 and p1
and p2 and p3, minus p0".  Such a branch accepts no string; the crate
(``build_difference``) sees the removed pattern written as one of the kept
ones and returns the empty table without building the intersection, which
for string5's four patterns is past ``max_dfa_bytes``.  Before, the branch
was warned and its strings accepted (a string matching all four patterns
was accepted though no string is valid).  Checked against ``jsonschema``:
string5's patterns with two of its three negations and a third branch of
numbers (no string valid), and a
small schema over every string of a, b and é up to four characters.  (Had
the ``anyOf`` no branch beyond the two negations, the schema would accept
nothing, which grammask refuses with ``GrammarError``.)
"""

from __future__ import annotations

import itertools
import json
import re

from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

P0, P1, P2, P3 = ("^([a-z][0-9])+$", "((c1d3g3).{4,8}){6,6}", "(t|8){10,10}..$",
                  "^z9((.){10,10}){10,10}z9$")

STRING5_EMPTY_BRANCHES = {"allOf": [
    {"pattern": P0}, {"pattern": P1}, {"pattern": P2}, {"pattern": P3}, {"multipleOf": 7},
    {"anyOf": [{"not": {"pattern": P0}}, {"not": {"pattern": P2}}, {"type": "number"}]}]}


def _matching_all_four() -> str:
    """104 characters: z9, a0, six c1d3g3 blocks each followed by a0a0,
    a0 up to position 92, t8 five times, z9."""
    value = "z9" + "a0" + ("c1d3g3" + "a0a0") * 6 + "a0" * 14 + "t8" * 5 + "z9"
    assert all(re.search(pattern, value) for pattern in (P0, P1, P2, P3))
    return value


def test_string5_branches_that_remove_a_kept_pattern_accept_no_string():
    full = _matching_all_four()
    strings = [full, full[:-2] + "y9", full.replace("c1d3g3", "c1d3g4", 1), "z9", ""]
    others = [14, 15, 0, -21, 3.5, None, True, [], {"a": 1}]
    _, _, n_valid = assert_exact_and_silent(STRING5_EMPTY_BRANCHES, strings + others)
    assert n_valid == 3  # 14, 0 and -21: a `not` of a pattern fails every non-string
    matcher = SchemaMatcher(STRING5_EMPTY_BRANCHES)
    escaped = '"' + "".join(f"\\u{ord(c):04x}" for c in full) + '"'
    assert not matcher.accepts(escaped)


SMALL = {"type": "string", "allOf": [{"pattern": "^[aé]+$"}, {"pattern": "a"}],
         "anyOf": [{"not": {"pattern": "a"}}, {"maxLength": 2}]}


def test_small_removed_part_against_every_short_string():
    assert_exact_and_silent(SMALL, ["a", "é", "aé", "aa", "aaa", "b"], raw_unicode=True)
    matcher = SchemaMatcher(SMALL)
    validator = declared_oracle(SMALL)
    for n in range(5):
        for letters in itertools.product("abé", repeat=n):
            value = "".join(letters)
            for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
                assert matcher.accepts(text) == validator.is_valid(value), text
