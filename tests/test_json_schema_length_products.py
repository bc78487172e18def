"""``minLength`` / ``maxLength`` beside a large ``pattern`` or ``format``
(issue 17): the product of the length count and the pattern's DFA, within
``Config.max_product_dfa_states``, against ``jsonschema`` (the declared
draft's validator with its format checker).

The schemas are MaskBench's whose products passed ``max_dfa_states`` and
were warned before, or their parts (``format: uri`` with ``maxLength: 255``,
42,197 states, as in o1052 and o26594; o63937 whole, its file name pattern
with 1..1024 has 19,427; smaller schemas shaped like allany16 and allany20:
a pattern beside negated patterns with 10..20 and 10..90).  Instances sit
at the bounds (length = max, max + 1, min - 1), are written compact, with
raw non-ASCII characters and, for patterns, with every character as a
``\\uXXXX`` escape (lengths count decoded code points); MaskBench's own
instances of o1052 (its length-product properties) and o63937 must get the
oracle's verdict; random walks of each grammar must be valid.
"""

from __future__ import annotations

import json
import random

import pytest

from grammask import Config, Grammar
from grammask.errors import LimitExceeded
from support.schema_matcher import SchemaMatcher, assert_exact_and_silent, declared_oracle

DRAFT_4 = "http://json-schema.org/draft-04/schema#"

O63937 = {
    "$schema": DRAFT_4, "additionalProperties": False, "type": "object",
    "properties": {
        "input_bucket": {"maxLength": 63, "minLength": 3, "pattern": "^[0-9a-zA-Z\\.\\-_]+$",
                         "type": "string"},
        "input_file": {"maxLength": 1024, "minLength": 1, "pattern": "^[\\w /-]+\\.[0-9a-zA-Z]+$",
                       "type": "string"},
        "opacity": {"type": "number"},
        "size": {"pattern": "^[0-9]+x[0-9]+$", "type": "string"},
        "x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["input_bucket", "input_file"]}

O63937_INSTANCES = [  # MaskBench's, verdicts from the file: 2 valid, 3 invalid
    {"input_bucket": "my-bucket-name", "input_file": "watermark.png", "opacity": 0.5,
     "size": "100x50", "x": 10, "y": 20},
    {"input_bucket": "watermark-bucket", "input_file": "watermark.png", "opacity": 0.5,
     "size": "100x100", "x": 10, "y": 20},
    {"input_bucket": "watermark-bucket", "input_file": "watermark.png", "opacity": 0.5,
     "size": "100x", "x": 10, "y": 20},
    {"input_bucket": "a", "input_file": "watermark.png", "opacity": 0.5, "size": "100x100",
     "x": 10, "y": 20},
    {"input_bucket": "a", "input_file": "watermark.png", "opacity": 0.5, "size": "100x100",
     "x": 10, "y": 20, "additional_property": "value", "input_file_invalid_pattern": "abc!"},
]

O1052_PRODUCTS = {  # o1052's properties whose length bounds meet a pattern or format
    "$schema": DRAFT_4, "type": "object",
    "properties": {
        "id": {"type": "string", "maxLength": 9, "pattern": "^[0-9]{9}$"},
        "portrait": {"type": "string", "maxLength": 255, "format": "uri"},
        "date_from": {"type": "string", "format": "date", "maxLength": 255,
                      "pattern": "^([0-9]{4})(-([0-9]{2}))?(-([0-9]{2}))?$"}}}

O1052_INSTANCES = [  # MaskBench's o1052 instances, restricted to those properties
    {"id": "123456789", "portrait": "https://example.com/portrait.jpg", "date_from": "1990-01-01"},
    {"id": "1234567890", "portrait": "https://example.com/portrait.jpg", "date_from": "1990-01"},
    {"id": "123456789", "portrait": "https://example.com/portrait.jpg", "date_from": 100},
    {"id": "12345678901234567890", "portrait": "https://example.com/portrait.jpg",
     "date_from": "1900-01"},
]

URI = {"type": "string", "format": "uri", "maxLength": 255}


def _uri_of_length(n: int) -> str:
    head = "https://example.org/"
    return head + ("path/seg-" * 40)[:n - len(head)]


def test_uri_with_max_length_is_exact_at_the_bound():
    values = [_uri_of_length(n) for n in (20, 200, 254, 255, 256, 300)]
    values += ["https://example.org/a b", "no scheme", "urn:" + "x" * 251, "urn:" + "x" * 252]
    _, _, n_valid = assert_exact_and_silent(URI, values, indented=False)
    assert n_valid == 5


def test_uri_with_both_bounds_in_an_object():
    schema = {"$schema": DRAFT_4, "type": "object", "required": ["poster"],
              "properties": {"poster": {"type": "string", "minLength": 1, "maxLength": 255,
                                        "format": "uri"}}}
    instances = [{"poster": _uri_of_length(n)} for n in (30, 255, 256)] + [{"poster": ""}]
    assert_exact_and_silent(schema, instances)


def test_o63937_file_names_count_code_points_in_any_spelling():
    file_schema = {"$schema": DRAFT_4, **O63937["properties"]["input_file"]}
    matcher = SchemaMatcher(file_schema)
    assert matcher.warnings == []
    validator = declared_oracle(file_schema)
    for n in (2, 3, 1023, 1024, 1025):
        for stem in ("a" * (n - 2), "a/b " * ((n - 2) // 4) + "x" * ((n - 2) % 4)):
            value = stem + ".x"
            assert len(value) == n
            expected = validator.is_valid(value)
            escaped = '"' + "".join(f"\\u{ord(c):04x}" for c in value) + '"'
            for text in (json.dumps(value), json.dumps(value).replace("/", "\\/"), escaped):
                assert matcher.accepts(text) == expected, (n, text[:40])
    assert not matcher.accepts(json.dumps("a.png!"))


def test_o63937_maskbench_instances_and_walks():
    _, _, n_valid = assert_exact_and_silent(O63937, O63937_INSTANCES)
    assert n_valid == 2


def test_o1052_length_products_and_maskbench_instances():
    _, _, n_valid = assert_exact_and_silent(O1052_PRODUCTS, O1052_INSTANCES)
    assert n_valid == 1


ALLANY16_LIKE = {"type": "string", "allOf": [
    {"not": {"pattern": "^[aA]1"}}, {"pattern": "[aA][12].*[zZ]"}, {"minLength": 10},
    {"maxLength": 20}]}


@pytest.mark.parametrize("schema", [ALLANY16_LIKE, {
    "type": "string", "pattern": "[aA][12].*[zZ]", "minLength": 10, "maxLength": 90,
    "anyOf": [{"not": {"pattern": "x{2}"}}, {"not": {"pattern": "^b"}}]}])
def test_patterns_with_lengths_and_negations_at_the_bounds(schema):
    rng = random.Random(5)
    low = schema["allOf"][2]["minLength"] if "allOf" in schema else schema["minLength"]
    high = schema["allOf"][3]["maxLength"] if "allOf" in schema else schema["maxLength"]
    values = []
    for n in (low - 1, low, high, high + 1):
        for head in ("a1", "A2", "ba1", "xxa2", "é a1"):
            middle = "".join(rng.choice("xyzé b") for _ in range(max(n - len(head) - 1, 0)))
            values.append((head + middle + "z")[:n] if n > len(head) else head[:n])
    assert_exact_and_silent(schema, values, indented=False, raw_unicode=True)


def test_products_are_bounded_by_their_own_limit():
    # The product terminal of a length count and a pattern is governed by
    # max_product_dfa_states, not max_dfa_states, and LimitExceeded names it.
    with pytest.raises(LimitExceeded) as info:
        Grammar.from_json_schema(URI, config=Config(max_product_dfa_states=40_000))
    assert info.value.limit == "max_product_dfa_states"
    assert "max_product_dfa_states" in str(info.value)
    Grammar.from_json_schema(URI, config=Config(max_dfa_states=1000))
