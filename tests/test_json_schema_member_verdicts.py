"""A ``oneOf`` of plain object branches decided member by member
(``member_verdicts``): one branch guessed per alternative, every branch's
verdict carried as a bit mask from member to member, exactly one branch
left at the end; and its complement (no branch or several), where a
``not`` / a oneOf exclusion needs it past ``MAX_NEGATED_ONE_OF_CHAIN``.

The construction stands in for the chain of exclusions only where that
chain passes its limits (GeoJSON's root oneOf, MaskBench o63308; o9802's
closed control objects); here the limits are set to 0 so the small
schemas below take it.  Property order: a guessed branch writes its own
names in its order and the other branches' names after them, the
complement the merged order; so each instance is tried in every order of
its members, and accepted in one of them iff ``jsonschema`` (the declared
draft's validator) calls it valid.  Hand-written objects and objects
Hypothesis draws (derandomized by the conftest profile); random walks
through the grammars must be valid."""

from __future__ import annotations

import itertools
import json
import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.json_schema import applicators, member_verdicts
from grammask.json_schema.member_verdicts import object_one_of
from support.schema_matcher import SchemaMatcher, declared_oracle, float_exact_loads

DRAFT_4 = "http://json-schema.org/draft-04/schema#"
DRAFT_7 = "http://json-schema.org/draft-07/schema#"
BBOX = {"type": "array", "maxItems": 2}
POINT = {"type": "object", "required": ["type", "c"], "properties": {
    "type": {"type": "string", "enum": ["P"]},
    "c": {"type": "array", "minItems": 1, "items": {"type": "number"}}, "bbox": BBOX}}
COLLECTION = {"type": "object", "required": ["type", "g"], "properties": {
    "type": {"type": "string", "emum": ["GC"]}, "g": {"type": "array", "items": POINT},
    "bbox": BBOX}}
GEO = {"$schema": DRAFT_7, "oneOf": [
    POINT,
    {"type": "object", "required": ["type", "c"], "properties": {
        "type": {"enum": ["L"]}, "c": {"type": "array", "items": {"type": "array"}},
        "bbox": BBOX}},
    COLLECTION,
    {"type": "object", "required": ["type", "geometry"], "properties": {
        "type": {"type": "string", "emum": ["F"]},
        "geometry": {"oneOf": [{"type": "null"}, POINT, COLLECTION]}, "bbox": BBOX}}]}
"""o63308's form: discriminated branches beside open ones whose ``type``
misspells ``enum``, a member (``geometry``) whose oneOf must be negated."""

CONTROLS = {"$schema": DRAFT_4, "type": "array", "items": {"oneOf": [
    {"type": "object", "additionalProperties": False, "properties": {
        "kind": {"enum": ["r"]}, "id": {"type": "string", "maxLength": 3},
        "color": {"type": "string"}, "grid": {"type": "object"}, "max": {"type": "number"}}},
    {"type": "object", "additionalProperties": False, "properties": {
        "kind": {"enum": ["t"]}, "id": {"type": "string", "maxLength": 3},
        "color": {"type": "string"}, "grid": {"type": "object"},
        "value": {"type": "boolean"}}, "required": ["value"]},
    {"type": "object", "additionalProperties": False, "properties": {
        "kind": {"enum": ["b"]}, "id": {"type": "string"}, "grid": {"type": "object"},
        "color": {"type": "string"}, "value": {"type": ["string", "boolean"]}},
     "required": ["value"]}]}}
"""o9802's form: closed objects whose discriminator is optional, and two
branches ordering ``color`` and ``grid`` differently; a name the first
branch does not declare is required by the others."""

QUERIES = {"not": {"oneOf": [
    {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"},
                                                         "b": {"type": "string"}}},
    {"type": "object", "required": ["b"], "properties": {"b": {"maxLength": 1},
                                                         "c": {"type": "boolean"}}},
    {"type": "object", "additionalProperties": False,
     "properties": {"a": {"minimum": 2}, "c": {"const": True}}},
    {"type": "null"}]}}
"""The complement: open and closed branches, a scalar one."""

SCHEMAS = {"geo": GEO, "controls": CONTROLS, "queries": QUERIES}
VALUES = {
    "geo": {"type": ["P", "L", "GC", "F", "x", 1], "c": [[], [1], [[1]], [1, [1]], "s"],
            "g": [[], [{"type": "P", "c": [1]}], [3]], "bbox": [[], [1, 2, 3], 5],
            "geometry": [None, {"type": "P", "c": [1]}, {"type": "GC", "g": []}, 3, {},
                         {"type": "P", "c": [1], "g": []}], "zz": [0]},
    "controls": {"kind": ["r", "t", "b", "x"], "id": ["ab", "abcd", 4],
                 "color": ["red", 1], "grid": [{}, []], "max": [1, "x"],
                 "value": [True, "on", 1], "zz": [0]},
    "queries": {"a": [1, 2, 2.5, "x"], "b": ["", "ab", 1], "c": [True, False, 0],
                "zz": [0]},
}


@pytest.fixture
def verdicts(monkeypatch):
    """The limits set so that every oneOf here takes the member verdicts."""
    monkeypatch.setattr(applicators, "MAX_ONE_OF_COMPLEMENT_PARTS", 0)
    monkeypatch.setattr(applicators, "MAX_NEGATED_ONE_OF_CHAIN", 0)


def _matcher(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        matcher = SchemaMatcher(SCHEMAS[name])
    assert matcher.warnings == []
    return matcher


def _accepted(matcher, instance, wrap) -> bool:
    """Whether some order of the members of ``instance`` is accepted."""
    if not isinstance(instance, dict):
        return matcher.accepts(json.dumps(wrap(instance)))
    return any(matcher.accepts(json.dumps(wrap(dict(order))))
               for order in itertools.permutations(instance.items()))


def _wrap(name):
    return (lambda value: [value]) if name == "controls" else (lambda value: value)


def _pool(name):
    values = VALUES[name]
    pool = [{}, None, 3, "x", []]
    for key, options in values.items():
        pool.extend({key: option} for option in options)
    names = list(values)
    rng = random.Random(3)
    for _ in range(150):
        chosen = rng.sample(names, rng.randint(2, min(4, len(names))))
        pool.append({key: rng.choice(values[key]) for key in chosen})
    return pool


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_member_verdicts_are_exact_and_silent(verdicts, name):
    matcher = _matcher(name)
    validator = declared_oracle(SCHEMAS[name])
    wrap = _wrap(name)
    n_valid = 0
    for instance in _pool(name):
        valid = validator.is_valid(wrap(instance))
        n_valid += valid
        assert _accepted(matcher, instance, wrap) == valid, instance
    assert 10 < n_valid < len(_pool(name)) - 10
    rng = random.Random(17)
    walks = 0
    for _ in range(60):
        walk = matcher.random_walk(rng)
        value = None if walk is None else float_exact_loads(walk)
        if walk is not None and isinstance(value, (dict, list)):
            walks += 1
            assert validator.is_valid(value), walk
    assert walks > 0 or name == "geo"  # its walks reach no end within 400 bytes


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_member_verdicts_on_generated_instances(verdicts, name):
    matcher = _matcher(name)
    validator = declared_oracle(SCHEMAS[name])
    wrap = _wrap(name)
    values = VALUES[name]
    members = st.sampled_from(sorted(values)).flatmap(
        lambda key: st.tuples(st.just(key), st.sampled_from(values[key])))
    objects = st.lists(members, max_size=4).map(dict)

    @settings(max_examples=120, suppress_health_check=list(HealthCheck))
    @given(objects)
    def check(instance):
        assert _accepted(matcher, instance, wrap) == validator.is_valid(wrap(instance)), \
            instance

    check()


def test_other_forms_are_left_to_the_exclusions():
    class Own:
        options = type("Options", (), {"any_order": False, "close_objects": False})

        @staticmethod
        def own_keywords(schema):
            return schema

    branches = [{"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"a": {"type": "integer"}}}]
    assert object_one_of(Own(), {"oneOf": branches, "minProperties": 1}, "") is None
    assert object_one_of(Own(), {"oneOf": branches + [{"type": ["string", "object"]}]},
                         "") is None
    assert object_one_of(Own(), {"oneOf": [dict(branches[0], patternProperties={"x": {}})]
                                 + branches}, "") is None


def test_state_limit_leaves_the_warning(verdicts, monkeypatch):
    monkeypatch.setattr(member_verdicts, "MAX_VERDICT_STATES", 3)
    matcher = SchemaMatcher(CONTROLS)
    assert [w.keyword for w in matcher.warnings] == ["oneOf"]
