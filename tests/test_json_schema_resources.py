"""The ``resources`` option (schema documents that references may name; a
relative ``$id`` applied once, whichever way its schema is reached) and
``format_assertion=False`` (``format`` an annotation only), against
``jsonschema`` given the same documents (a ``referencing.Registry``) and the
same format vocabulary (no format checker)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from grammask.errors import GrammarWarning, InvalidArgumentType
from grammask.json_schema import translate_schema
from support.schema_matcher import FORMAT_CHECKER, SchemaMatcher

DOCUMENTS = {
    "http://example.com/int.json": {"type": "integer", "minimum": 0},
    "http://example.com/defs.json": {
        "$defs": {"name": {"type": "string", "maxLength": 3},
                  "pair": {"type": "array", "prefixItems": [{"$ref": "#/$defs/name"},
                                                            {"$ref": "int.json"}],
                           "items": False}}},
    "http://example.com/folder/int.json": {"type": "integer", "maximum": 3},
    "http://example.com/retrieved.json": {"$id": "http://other.org/own.json",
                                          "$anchor": "here", "type": "boolean"},
}

FOLDER = {"$id": "http://example.com/root.json", "type": "object",
          "properties": {"by_id": {"$ref": "folder/"}, "by_pointer": {"$ref": "#/$defs/list"}},
          "$defs": {"list": {"$id": "folder/", "type": "array", "items": {"$ref": "int.json"}}}}

CASES = [
    (FOLDER, [{"by_id": [1, 3], "by_pointer": [2]}, {"by_id": [4]}, {"by_pointer": [-1, 5]},
              {"by_id": ["a"]}, {}]),
    ({"$ref": "http://example.com/int.json"}, [0, 5, -1, 1.5, "a", None]),
    ({"type": "object", "properties": {"p": {"$ref": "http://example.com/defs.json#/$defs/pair"}}},
     [{"p": ["ab", 3]}, {"p": ["abcd", 3]}, {"p": ["ab", -3]}, {"p": ["ab", 3, 4]}, {}, []]),
    ({"$id": "http://example.com/root.json", "items": {"$ref": "defs.json#/$defs/name"}},
     [["a", "abc"], ["abcd"], [1], []]),
    ({"anyOf": [{"$ref": "http://other.org/own.json"}, {"$ref": "http://other.org/own.json#here"},
                {"$ref": "http://example.com/retrieved.json"}]}, [True, False, 1, "x"]),
]


def _oracle(schema, format_checker=None):
    registry = Registry().with_resources(
        (uri, Resource.from_contents(document, default_specification=DRAFT202012))
        for uri, document in DOCUMENTS.items())
    return jsonschema.Draft202012Validator(schema, registry=registry, format_checker=format_checker)


@pytest.mark.parametrize("schema, instances", CASES)
def test_remote_references_are_exact(schema, instances):
    matcher = SchemaMatcher(schema, resources=DOCUMENTS)
    assert matcher.warnings == []
    oracle = _oracle(schema)
    for instance in instances:
        assert matcher.accepts(json.dumps(instance)) == oracle.is_valid(instance), instance


RELATIVE_ROOT = {"$schema": "http://json-schema.org/draft-07/schema#",
                 "$id": "example.org/schemas/configuration.json", "type": "object",
                 "additionalProperties": {"$ref": "#/definitions/entry"},
                 "definitions": {"entry": {"type": "array", "items": {"$ref": "#/definitions/id"}},
                                 "id": {"type": "string", "maxLength": 2}}}


def test_relative_root_id_applied_once():
    """A relative ``$id`` at the root is the root's base once: ``#/...``
    references resolve inside the document (they warned as unresolved)."""
    matcher = SchemaMatcher(RELATIVE_ROOT)
    assert matcher.warnings == []
    oracle = jsonschema.Draft7Validator(RELATIVE_ROOT)
    for instance in [{"a": ["x", "yz"]}, {"a": ["xyz"]}, {"a": [1]}, {"a": "x"}, {}, []]:
        assert matcher.accepts(json.dumps(instance)) == oracle.is_valid(instance), instance


def test_unknown_document_warns():
    with pytest.warns(GrammarWarning, match="not inside"):
        translate_schema({"$ref": "http://example.com/missing.json"}, resources=DOCUMENTS)


@pytest.mark.parametrize("resources", [["http://a"], {1: {}}])
def test_bad_resources_are_refused(resources):
    with pytest.raises(InvalidArgumentType):
        translate_schema(True, resources=resources)


FORMAT_SCHEMA = {"type": "object",
                 "properties": {"when": {"type": "string", "format": "date"},
                                "who": {"anyOf": [{"format": "email"}, {"type": "integer"}]}}}
FORMAT_INSTANCES = [{"when": "2024-02-29", "who": "a@b.org"}, {"when": "yesterday"},
                    {"who": "nobody"}, {"who": 1.5}, {"when": 3}]


@pytest.mark.parametrize("assertion", [True, False])
def test_format_assertion(assertion):
    matcher = SchemaMatcher(FORMAT_SCHEMA, format_assertion=assertion)
    oracle = _oracle(FORMAT_SCHEMA, FORMAT_CHECKER if assertion else None)
    verdicts = []
    for instance in FORMAT_INSTANCES:
        verdicts.append(oracle.is_valid(instance))
        assert matcher.accepts(json.dumps(instance)) == verdicts[-1], instance
    assert verdicts.count(False) == (3 if assertion else 1)


def test_format_assertion_must_be_bool():
    with pytest.raises(InvalidArgumentType):
        translate_schema(True, format_assertion="no")
