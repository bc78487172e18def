"""Proofs that two subschemas share no instance (for ``oneOf``).

What it computes: ``disjoint(translator, first, second)`` is True only when
no JSON value is valid against both schemas, so that ``oneOf`` of pairwise
disjoint branches accepts exactly what their ``anyOf`` accepts; False means
"not proven", never "overlapping".  ``rejects(translator, schema, base,
value)`` is True only when ``value`` is invalid against ``schema``;
``accepts_class(translator, schema, value_class)`` only when every value of
the class is valid against it (keywords of other classes only).

Reading of a schema: the conjunction of its conjuncts (``_conjuncts``): its
own keywords (less those newer than the declared draft,
``Translator.own_keywords``), its ``$ref`` target (alone when the declared
draft hides ``$ref`` siblings, ``Translator.ref_hides_siblings``) and its
``allOf`` members, followed recursively, each schema object once.  Two
schemas are disjoint when one conjunct's ``anyOf`` / ``oneOf`` list (read as
a union) has every alternative disjoint from the other schema, or when the
conjuncts of both sides together leave no value of any class, or when one
conjunct is ``not: N`` and each conjunct of N (but those that only hold
``$ref`` / ``allOf``) is, as the same schema object, a conjunct of the
other schema.  The classes
are null, boolean, integer (integral numbers, 1.0 included), fraction (the
other numbers), string, array, object; ``type: number`` is integer +
fraction.  A class every conjunct allows is ruled out by:

- values: one conjunct's ``const`` / ``enum`` members of that class are each
  rejected by the other schema (``rejects``: wrong class, not among its
  values, a string length, item count or number bound it breaks, a member
  name it forbids or whose value the name's schema rejects, a required name
  missing);
- objects: a name that a conjunct of either side requires, whose member
  schemas on the two sides (its ``properties`` entry, or
  ``additionalProperties`` where the conjunct has no ``patternProperties``)
  include a disjoint pair or a ``false`` (a discriminator, through ``$ref``
  too; a closed object that does not list a name); more required names
  than a ``maxProperties``;
- arrays: ``minItems`` above ``maxItems`` across the two sides, or a
  position every instance holds (below the largest ``minItems``) whose item
  schemas on the two sides (``keywords.array_positions``) include a
  disjoint pair;
- strings: the intersection of every pattern, asserted format and length
  regex of both sides (``strings.translate_pattern``, the regexes
  ``string_node`` uses; a pattern it cannot translate is left out) is the
  empty language (one ``intersection`` DFA built by the crate);
- numbers: ``minimum`` / ``maximum`` / exclusive bounds of both sides leave
  an empty interval (for integers: no integer in it).

Invariant (why False is always safe): every reading above drops conjuncts
or keywords, never adds one, and a schema that accepts less is only easier
to prove disjoint: keywords not read here (``not``, ``if``, ``multipleOf``,
``patternProperties`` ...) only make a schema accept less, so ignoring them
can hide a disjointness, never invent one.  Recursion (through properties,
items, unions and ``$ref``) stops at ``MAX_PROOF_DEPTH`` with "not proven",
which also ends cycles of recursive definitions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from grammask.errors import GrammarError
from grammask.json_schema import formats, strings
from grammask.json_schema.keywords import (
    ANNOTATION_KEYWORDS, ARRAY_KEYWORDS, NUMBER_KEYWORDS, OBJECT_KEYWORDS, STRING_KEYWORDS,
    VALIDATION_KEYWORDS, array_positions,
)
from grammask.json_schema.numbers import to_fraction
from grammask.json_schema.refs import UnresolvedRef
from grammask.json_schema.values import json_equal, json_type_of
from grammask.terminals import INTERSECTION_SEPARATOR, compile_regex

MAX_PROOF_DEPTH = 24
"""Nested schemas (properties, items, $ref, allOf ...) a proof looks into."""
MAX_PROOF_POSITIONS = 8
"""Array positions below ``minItems`` whose item schemas a proof compares."""

VALUE_CLASSES = frozenset({"null", "boolean", "integer", "fraction", "string", "array",
                           "object"})
_TYPE_CLASSES = {"number": ("integer", "fraction"), "integer": ("integer",)}

_POINTERS = frozenset({"$ref", "allOf"})

Parts = list[tuple[dict, str]]
"""The conjuncts of a schema: (schema object, base URI in force inside it)."""


def disjoint(translator, first: Any, second: Any) -> bool:
    """Whether no JSON value is valid against both schemas (False: not proven)."""
    base = translator.base_uri
    return _disjoint(translator, first, base, second, base, 0)


def _disjoint(translator, first: Any, first_base: str, second: Any, second_base: str,
              depth: int) -> bool:
    if first is False or second is False:
        return True
    if depth > MAX_PROOF_DEPTH or not isinstance(first, dict) or not isinstance(second, dict):
        return False
    first_parts = _conjuncts(translator, first, first_base)
    second_parts = _conjuncts(translator, second, second_base)
    if first_parts is None or second_parts is None:
        return True  # a false conjunct: no value is valid
    sides = ((first_parts, second, second_base), (second_parts, first, first_base))
    for parts, other, other_base in sides:
        for part, part_base in parts:
            if _negates(translator, part, part_base, other, other_base):
                return True
            for alternatives in _unions(part):
                if all(_disjoint(translator, alternative, part_base, other, other_base, depth + 1)
                       for alternative in alternatives):
                    return True
    return _parts_disjoint(translator, first_parts, first, first_base, second_parts, second,
                           second_base, depth)


_CLASS_KEYWORDS = {"null": frozenset(), "boolean": frozenset(),
                   "integer": frozenset(NUMBER_KEYWORDS), "fraction": frozenset(NUMBER_KEYWORDS),
                   "string": frozenset(STRING_KEYWORDS), "array": frozenset(ARRAY_KEYWORDS),
                   "object": frozenset(OBJECT_KEYWORDS)}
"""The keywords that constrain values of each class (and no other class)."""
_TYPED_KEYWORDS = frozenset().union(*_CLASS_KEYWORDS.values())


def accepts_class(translator, schema: Any, value_class: str) -> bool:
    """True only when every value of ``value_class`` is valid against
    ``schema``: each conjunct (``_conjuncts``; every ``$ref`` resolved) holds
    only annotations, unknown keywords, keywords of other classes and a
    ``type`` naming the class (``number`` for integer and fraction, so that
    1.0 counts under every draft).  False means "not proven"."""
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    parts = _conjuncts(translator, schema, translator.base_uri)
    if parts is None:
        return False
    for part, part_base in parts:
        if not isinstance(part.get("allOf", []), list):
            return False
        if isinstance(part.get("$ref"), str):
            try:
                translator.resolver.resolve(part["$ref"], part_base)
            except UnresolvedRef:
                return False
        for keyword, value in part.items():
            if keyword == "type":
                names = [value] if isinstance(value, str) else value
                wanted = "number" if value_class in _TYPE_CLASSES["number"] else value_class
                if not isinstance(names, list) or wanted not in names:
                    return False
            elif keyword in _CLASS_KEYWORDS[value_class] or (
                    keyword in VALIDATION_KEYWORDS and keyword not in _TYPED_KEYWORDS
                    and keyword not in _POINTERS):
                return False
    return True


def _conjuncts(translator, schema: dict, base: str) -> Optional[Parts]:
    """The schema objects whose conjunction ``schema`` is (module docstring),
    each once; None when one of them is ``false``."""
    found: Parts = []
    seen: set[int] = set()
    pending = [(schema, base)]
    while pending:
        part, part_base = pending.pop()
        if part is False:
            return None
        if not isinstance(part, dict) or id(part) in seen:
            continue
        seen.add(id(part))
        part_base = translator.resolver.base_of(part, part_base)
        own = translator.own_keywords(part)
        if not (translator.ref_hides_siblings and "$ref" in own):
            found.append((own, part_base))
            if isinstance(own.get("allOf"), list):
                pending.extend((member, part_base) for member in own["allOf"])
        if isinstance(own.get("$ref"), str):
            try:
                target, _, target_base = translator.resolver.resolve(own["$ref"], part_base)
            except UnresolvedRef:
                continue  # the translator warns when it builds the branch
            pending.append((target, target_base))
    return found


def _negates(translator, part: dict, base: str, other: dict, other_base: str) -> bool:
    """Whether ``part`` holds ``not: N`` where every conjunct of N is itself
    a conjunct of ``other`` (the same schema object under the same base
    URI), so that every instance of ``other`` is valid against N."""
    if not isinstance(part.get("not"), dict):
        return False
    negated = _conjuncts(translator, part["not"], base)
    others = _conjuncts(translator, other, other_base)
    if negated is None or others is None:
        return False
    present = {(id(schema), schema_base) for schema, schema_base in others}
    # Conjuncts that only point elsewhere ($ref, allOf) add nothing themselves.
    negated = [(schema, schema_base) for schema, schema_base in negated
               if set(schema) - _POINTERS - ANNOTATION_KEYWORDS]
    return bool(negated) and all((id(schema), schema_base) in present
                                 for schema, schema_base in negated)


def _unions(schema: dict) -> list[list]:
    return [schema[keyword] for keyword in ("anyOf", "oneOf")
            if isinstance(schema.get(keyword), list) and schema[keyword]]


def _values(schema: dict) -> Optional[list]:
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return schema["enum"]
    return None


def _class_of(value: Any) -> str:
    kind = json_type_of(value)
    return "fraction" if kind == "number" else kind


def _classes(schema: dict) -> set[str]:
    """The value classes a schema's own ``type`` and ``const``/``enum`` allow."""
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if isinstance(names, list) and all(isinstance(name, str) for name in names):
        classes = set()
        for name in names:
            classes.update(_TYPE_CLASSES.get(name, (name,)))
        classes &= VALUE_CLASSES
    else:
        classes = set(VALUE_CLASSES)
    values = _values(schema)
    if values is not None:
        classes &= {_class_of(value) for value in values}
    return classes


def _parts_disjoint(translator, first_parts: Parts, first: dict, first_base: str,
                    second_parts: Parts, second: dict, second_base: str, depth: int) -> bool:
    """Whether the conjuncts of both sides leave no value of any class."""
    both = first_parts + second_parts
    classes = set(VALUE_CLASSES)
    for part, _ in both:
        classes &= _classes(part)
    for value_class in classes:
        proven = (_values_rejected(translator, first_parts, second, second_base, value_class,
                                   depth)
                  or _values_rejected(translator, second_parts, first, first_base, value_class,
                                      depth))
        if not proven and value_class == "object":
            proven = _objects_disjoint(translator, first_parts, second_parts, depth)
        elif not proven and value_class == "array":
            proven = _arrays_disjoint(translator, first_parts, second_parts, depth)
        elif not proven and value_class == "string":
            proven = _strings_disjoint(both)
        elif not proven and value_class == "integer":
            proven = _integer_interval(both) is None
        elif not proven and value_class == "fraction":
            proven = _interval(both) is None
        if not proven:
            return False
    return True


def _values_rejected(translator, parts: Parts, other: dict, other_base: str, value_class: str,
                     depth: int) -> bool:
    """Whether a conjunct lists its values and ``other`` rejects each one of ``value_class``."""
    for part, _ in parts:
        values = _values(part)
        if values is not None and all(rejects(translator, other, other_base, value, depth + 1)
                                      for value in values if _class_of(value) == value_class):
            return True
    return False


def _objects_disjoint(translator, first_parts: Parts, second_parts: Parts, depth: int) -> bool:
    both = first_parts + second_parts
    required = set().union(*(_required(part) for part, _ in both))
    limits = [part["maxProperties"] for part, _ in both if _is_count(part.get("maxProperties"))]
    if limits and len(required) > min(limits):
        return True
    for name in sorted(required):
        first_schemas = [(schema, base) for part, base in first_parts
                         for schema in _member_schemas(part, name)]
        second_schemas = [(schema, base) for part, base in second_parts
                          for schema in _member_schemas(part, name)]
        if _any_pair_disjoint(translator, first_schemas, second_schemas, depth):
            return True
    return False


def _any_pair_disjoint(translator, first_schemas: list, second_schemas: list, depth: int) -> bool:
    """Whether one side's schemas for the same member or item include ``false``,
    or a schema disjoint from one of the other side's."""
    if any(schema is False for schema, _ in first_schemas + second_schemas):
        return True
    return any(_disjoint(translator, first, first_base, second, second_base, depth + 1)
               for first, first_base in first_schemas for second, second_base in second_schemas)


def _required(schema: dict) -> set[str]:
    required = schema.get("required")
    return {name for name in required if isinstance(name, str)} \
        if isinstance(required, list) else set()


def _properties(schema: dict) -> dict:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _member_schemas(schema: dict, name: str) -> list:
    """The schemas a member ``name`` must be valid against under one conjunct:
    its ``properties`` entry, or ``additionalProperties`` when no
    ``patternProperties`` could claim the name (none read otherwise)."""
    properties = _properties(schema)
    if name in properties:
        return [properties[name]]
    additional = schema.get("additionalProperties", True)
    if not schema.get("patternProperties") and isinstance(additional, (bool, dict)):
        return [additional]
    return []


def _arrays_disjoint(translator, first_parts: Parts, second_parts: Parts, depth: int) -> bool:
    both = first_parts + second_parts
    least = max((part["minItems"] for part, _ in both if _is_count(part.get("minItems"))),
                default=0)
    limits = [part["maxItems"] for part, _ in both if _is_count(part.get("maxItems"))]
    if limits and least > min(limits):
        return True
    for position in range(min(least, MAX_PROOF_POSITIONS)):
        first_schemas = [(_item_schema(translator, part, position), base)
                         for part, base in first_parts]
        second_schemas = [(_item_schema(translator, part, position), base)
                          for part, base in second_parts]
        if _any_pair_disjoint(translator, first_schemas, second_schemas, depth):
            return True
    return False


def _item_schema(translator, schema: dict, position: int) -> Any:
    """The schema the item at ``position`` must be valid against under one conjunct."""
    positional, _, others, _ = array_positions(schema, translator.tuple_items)
    if not isinstance(positional, list):
        return True
    return positional[position] if position < len(positional) else others


def _strings_disjoint(parts: Parts) -> bool:
    regexes = [regex for part, _ in parts for regex in _string_regexes(part)]
    if not regexes:
        return False
    try:
        dfa = compile_regex(INTERSECTION_SEPARATOR.join(regexes), kind="intersection")
    except GrammarError:  # LimitExceeded and unbuildable patterns: not proven
        return False
    return dfa.is_empty_language


def _string_regexes(schema: dict) -> list[str]:
    """The regexes over the JSON string text that a conjunct's string keywords
    require (a pattern this reading cannot translate is left out)."""
    parts = []
    n_min, n_max = schema.get("minLength", 0), schema.get("maxLength")
    if _is_count(n_min) and (n_max is None or _is_count(n_max)) and (n_min or n_max is not None):
        parts.append(strings.string_regex(n_min, n_max))
    for _keyword, pattern, ascii_escapes in formats.asserted_patterns(schema):
        try:
            content, _, _ = strings.translate_pattern(pattern, ascii_escapes=ascii_escapes)
        except strings.PatternUnsupported:
            continue
        parts.append('"' + content + '"')
    return parts


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


Bound = tuple[Fraction, bool]
"""A number bound: (value, exclusive)."""


def _interval(parts: Parts) -> Optional[tuple[Optional[Bound], Optional[Bound]]]:
    """(lower bound, upper bound) that every conjunct's ``minimum`` /
    ``maximum`` / exclusive bounds leave (None: unbounded), or None when no
    number lies within them.  The draft-4 boolean ``exclusiveMinimum`` is
    read as inclusive (a larger interval, so still safe)."""
    lows, highs = [], []
    for part, _ in parts:
        for keyword, is_exclusive, found in (
                ("minimum", False, lows), ("exclusiveMinimum", True, lows),
                ("maximum", False, highs), ("exclusiveMaximum", True, highs)):
            value = part.get(keyword)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found.append((to_fraction(value), is_exclusive))
    low = max(lows, key=lambda b: (b[0], b[1])) if lows else None
    high = min(highs, key=lambda b: (b[0], not b[1])) if highs else None
    return None if _below(high, low) else (low, high)


def _integer_interval(parts: Parts) -> Optional[tuple[Optional[int], Optional[int]]]:
    """The least and greatest integers within every conjunct's bounds (None:
    unbounded), or None when no integer lies within them."""
    interval = _interval(parts)
    if interval is None:
        return None
    low, high = interval
    least = greatest = None
    if low is not None:
        least = math.floor(low[0]) + 1 if low[1] or low[0].denominator != 1 else int(low[0])
    if high is not None:
        greatest = math.ceil(high[0]) - 1 if high[1] or high[0].denominator != 1 else int(high[0])
    if least is not None and greatest is not None and least > greatest:
        return None
    return least, greatest


def _below(high: Optional[Bound], low: Optional[Bound]) -> bool:
    """Whether every number under ``high`` is below every number over ``low``."""
    if high is None or low is None:
        return False
    return high[0] < low[0] or (high[0] == low[0] and (high[1] or low[1]))


def rejects(translator, schema: Any, base: str, value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is proven invalid against ``schema`` (False: not proven)."""
    if schema is False:
        return True
    if depth > MAX_PROOF_DEPTH or not isinstance(schema, dict):
        return False
    parts = _conjuncts(translator, schema, base)
    if parts is None:
        return True
    for part, part_base in parts:
        if any(all(rejects(translator, alternative, part_base, value, depth + 1)
                   for alternative in alternatives) for alternatives in _unions(part)):
            return True
        if _own_rejects(translator, part, part_base, value, depth):
            return True
    return False


def _own_rejects(translator, schema: dict, base: str, value: Any, depth: int) -> bool:
    """Whether one conjunct's own keywords reject ``value``."""
    if _class_of(value) not in _classes(schema):
        return True
    values = _values(schema)
    if values is not None and not any(json_equal(value, member) for member in values):
        return True
    if isinstance(value, str):
        n_min, n_max = schema.get("minLength", 0), schema.get("maxLength")
        return (_is_count(n_min) and len(value) < n_min) or (_is_count(n_max) and len(value) > n_max)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _interval([(schema, base), ({"minimum": value, "maximum": value}, base)]) is None
    if isinstance(value, list):
        n_min, n_max = schema.get("minItems", 0), schema.get("maxItems")
        return (_is_count(n_min) and len(value) < n_min) or (_is_count(n_max) and len(value) > n_max)
    if isinstance(value, dict):
        if not _required(schema) <= set(value):
            return True
        return any(rejects(translator, member_schema, base, member, depth + 1)
                   for name, member in value.items()
                   for member_schema in _member_schemas(schema, name))
    return False
