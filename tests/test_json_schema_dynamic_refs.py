"""``$dynamicRef`` follows the dynamic scope (``Translator.dynamic``):
exact and silent against ``jsonschema`` on hand-written schemas and
instances, valid and invalid; a merge that would enter a resource's dynamic
anchors warns."""

from __future__ import annotations

import pytest

from grammask.errors import GrammarWarning
from grammask.json_schema import translate_schema
from support.schema_matcher import assert_exact_and_silent

ROOT = "https://example.com/dynamic/"

TREE = {"$id": ROOT + "tree", "$dynamicAnchor": "node", "type": "object",
        "properties": {"data": True, "children": {"type": "array",
                                                  "items": {"$dynamicRef": "#node"}}}}
STRICT_TREE = {"$id": ROOT + "strict", "$dynamicAnchor": "node", "$ref": "tree",
               "properties": {"data": {"type": "integer"}}, "$defs": {"tree": TREE}}

LISTS = {
    "$id": ROOT + "main",
    "type": "object",
    "properties": {"numbers": {"$ref": "numberList"}, "strings": {"$ref": "stringList"},
                   "any": {"$ref": "genericList"}},
    "$defs": {
        "genericList": {"$id": "genericList", "type": "array",
                        "items": {"$dynamicRef": "#itemType"},
                        "$defs": {"default": {"$dynamicAnchor": "itemType"}}},
        "numberList": {"$id": "numberList", "$ref": "genericList",
                       "$defs": {"itemType": {"$dynamicAnchor": "itemType", "type": "number"}}},
        "stringList": {"$id": "stringList", "$ref": "genericList",
                       "$defs": {"itemType": {"$dynamicAnchor": "itemType",
                                              "type": "string", "maxLength": 2}}},
    },
}

OUTERMOST = {
    "$id": ROOT + "outer", "$ref": "middle",
    "$defs": {"length": {"$dynamicAnchor": "length", "maxLength": 1},
              "middle": {"$id": "middle", "$ref": "inner",
                         "$defs": {"length": {"$dynamicAnchor": "length", "maxLength": 2}}},
              "inner": {"$id": "inner", "type": "array", "items": {"$dynamicRef": "#length"},
                        "$defs": {"length": {"$dynamicAnchor": "length", "maxLength": 3}}}},
}

NOT_BOOKENDED = {
    "$id": ROOT + "plain", "$ref": "list",
    "$defs": {"foo": {"$dynamicAnchor": "items", "type": "string"},
              "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#items"},
                       "$defs": {"items": {"$anchor": "items", "type": "integer"}}}},
}

CASES = [
    ("tree", TREE, [{"data": 1, "children": [{"data": "x", "children": []}]}, {"children": [1]},
                    {}, 1, {"children": [{"children": [{"extra": 2}]}]}]),
    ("strict tree", STRICT_TREE, [{"data": 1, "children": [{"data": 2}]},
                                  {"data": 1, "children": [{"data": "x"}]},
                                  {"children": [{"children": [{"data": 2.5}]}]}, {"data": "a"}]),
    ("lists", LISTS, [{"numbers": [1, 2.5], "strings": ["a", "bc"], "any": [None, "abc"]},
                      {"numbers": ["a"]}, {"strings": [1]}, {"strings": ["abc"]},
                      {"any": [1, "x", []]}, {}]),
    ("outermost anchor", OUTERMOST, [["a"], ["ab"], ["abc"], [], [1], "x"]),
    ("without bookend", NOT_BOOKENDED, [[1, 2], ["a"], [], [1.5]]),
]


@pytest.mark.parametrize("name,schema,instances", CASES, ids=[case[0] for case in CASES])
def test_dynamic_refs_are_exact(name, schema, instances):
    assert_exact_and_silent(schema, instances, indented=False)


def test_dynamic_anchors_merged_into_an_allof_warn():
    schema = {"$id": ROOT + "merge", "allOf": [{"$ref": "numbers"}, {"minItems": 1}],
              "$defs": {"list": {"$id": "list", "type": "array",
                                 "items": {"$dynamicRef": "#t"},
                                 "$defs": {"t": {"$dynamicAnchor": "t"}}},
                        "numbers": {"$id": "numbers", "$ref": "list",
                                    "$defs": {"t": {"$dynamicAnchor": "t", "type": "number"}}}}}
    with pytest.warns(GrammarWarning, match="dynamic scope"):
        translate_schema(schema)
