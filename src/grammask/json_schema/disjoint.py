"""Proofs that two subschemas share no instance (for ``oneOf``).

What it computes: ``disjoint(translator, first, second)`` is True only when
no JSON value is valid against both schemas, so that ``oneOf`` of pairwise
disjoint branches accepts exactly what their ``anyOf`` accepts; False means
"not proven", never "overlapping".

Reading of a schema: the intersection of its parts, which are its own
keywords, its ``$ref`` target (alone when the declared draft hides ``$ref``
siblings, ``Translator.ref_hides_siblings``), each ``allOf`` member, and
each ``anyOf`` / ``oneOf`` list read as a union.  Two schemas are disjoint
when a part of one is disjoint from the other (a union part: each of its
alternatives is), or when their own keywords are, value class by value
class.  The classes are null, boolean, integer (integral numbers, 1.0
included), fraction (the other numbers), string, array, object; ``type:
number`` is integer + fraction.  A class both schemas allow is ruled out by:

- values: one schema's ``const`` / ``enum`` members of that class are each
  rejected by the other schema (``rejects``: wrong class, not among its
  values, a string length or number bound it breaks, an object member it
  forbids or whose property schema rejects the member's value, a required
  name missing);
- objects: a name both require whose property schemas are disjoint (a
  discriminator, through ``$ref`` too), or a closed object
  (``additionalProperties: false``, no ``patternProperties``) that does not
  list a name the other requires;
- strings: the intersection of both schemas' pattern, asserted format and
  length regexes (``strings.translate_pattern``, the regexes ``string_node``
  uses) is the empty language (one ``intersection`` DFA built by the crate);
- numbers: disjoint ``minimum`` / ``maximum`` / exclusive bound intervals
  (for integers: no integer in both).

Invariant (why False is always safe): keywords not read here (``not``,
``if``, ``multipleOf``, ``items`` ...) only make a schema accept less, so
ignoring them can hide a disjointness, never invent one.  Recursion (through
properties and ``$ref``) stops at ``MAX_PROOF_DEPTH`` with "not proven",
which also ends cycles of recursive definitions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from grammask.errors import GrammarError
from grammask.json_schema import formats, strings
from grammask.json_schema.numbers import to_fraction
from grammask.json_schema.refs import UnresolvedRef
from grammask.json_schema.values import json_equal, json_type_of
from grammask.terminals import INTERSECTION_SEPARATOR, compile_regex

MAX_PROOF_DEPTH = 24
"""Nested schemas (properties, $ref, allOf ...) a proof looks into."""

VALUE_CLASSES = frozenset({"null", "boolean", "integer", "fraction", "string", "array",
                           "object"})
_TYPE_CLASSES = {"number": ("integer", "fraction"), "integer": ("integer",)}


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
    first_base = translator.resolver.base_of(first, first_base)
    second_base = translator.resolver.base_of(second, second_base)
    sides = ((first, first_base, second, second_base), (second, second_base, first, first_base))
    for schema, base, other, other_base in sides:
        for part, part_base in _conjuncts(translator, schema, base):
            if _disjoint(translator, part, part_base, other, other_base, depth + 1):
                return True
        for alternatives in _unions(schema):
            if all(_disjoint(translator, alternative, base, other, other_base, depth + 1)
                   for alternative in alternatives):
                return True
    if translator.ref_hides_siblings and ("$ref" in first or "$ref" in second):
        return False
    return _own_disjoint(translator, first, first_base, second, second_base, depth)


def _conjuncts(translator, schema: dict, base: str) -> list[tuple[Any, str]]:
    """(part, base) of the ``$ref`` target and the ``allOf`` members."""
    parts = []
    reference = schema.get("$ref")
    if isinstance(reference, str):
        try:
            target, _, target_base = translator.resolver.resolve(reference, base)
            parts.append((target, target_base))
        except UnresolvedRef:
            pass  # the translator warns when it builds the branch
    if isinstance(schema.get("allOf"), list):
        parts.extend((member, base) for member in schema["allOf"])
    return parts


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


def _own_disjoint(translator, first: dict, first_base: str, second: dict, second_base: str,
                  depth: int) -> bool:
    for value_class in _classes(first) & _classes(second):
        proven = (_values_rejected(translator, first, second, second_base, value_class, depth)
                  or _values_rejected(translator, second, first, first_base, value_class, depth))
        if not proven and value_class == "object":
            proven = _objects_disjoint(translator, first, first_base, second, second_base, depth)
        elif not proven and value_class == "string":
            proven = _strings_disjoint(first, second)
        elif not proven and value_class == "integer":
            proven = _integer_ranges_disjoint(first, second)
        elif not proven and value_class == "fraction":
            proven = _ranges_disjoint(first, second)
        if not proven:
            return False
    return True


def _values_rejected(translator, schema: dict, other: dict, other_base: str, value_class: str,
                     depth: int) -> bool:
    """Whether ``schema`` lists its values and ``other`` rejects each one of ``value_class``."""
    values = _values(schema)
    return values is not None and all(rejects(translator, other, other_base, value, depth + 1)
                                      for value in values if _class_of(value) == value_class)


def _objects_disjoint(translator, first: dict, first_base: str, second: dict,
                      second_base: str, depth: int) -> bool:
    first_required, second_required = _required(first), _required(second)
    first_properties, second_properties = _properties(first), _properties(second)
    for name in first_required & second_required:
        if name in first_properties and name in second_properties and _disjoint(
                translator, first_properties[name], first_base, second_properties[name],
                second_base, depth + 1):
            return True
    return (_closed(first) and not second_required <= set(first_properties)) or (
        _closed(second) and not first_required <= set(second_properties))


def _required(schema: dict) -> set[str]:
    required = schema.get("required")
    return {name for name in required if isinstance(name, str)} \
        if isinstance(required, list) else set()


def _properties(schema: dict) -> dict:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _closed(schema: dict) -> bool:
    """Whether an object may hold no member outside ``properties``."""
    return schema.get("additionalProperties") is False and not schema.get("patternProperties")


def _strings_disjoint(first: dict, second: dict) -> bool:
    first_parts, second_parts = _string_regexes(first), _string_regexes(second)
    if not first_parts or not second_parts:
        return False
    parts = first_parts + second_parts
    try:
        dfa = compile_regex(INTERSECTION_SEPARATOR.join(parts), kind="intersection")
    except GrammarError:  # LimitExceeded and unbuildable patterns: not proven
        return False
    return dfa.is_empty_language


def _string_regexes(schema: dict) -> Optional[list[str]]:
    """The regexes over the JSON string text that a schema's string keywords
    require (empty: none; None: a pattern this reading cannot translate)."""
    parts = []
    n_min, n_max = schema.get("minLength", 0), schema.get("maxLength")
    if _is_count(n_min) and (n_max is None or _is_count(n_max)) and (n_min or n_max is not None):
        parts.append(strings.string_regex(n_min, n_max))
    for _keyword, pattern, ascii_escapes in formats.asserted_patterns(schema):
        try:
            content, _, _ = strings.translate_pattern(pattern, ascii_escapes=ascii_escapes)
        except strings.PatternUnsupported:
            return None
        parts.append('"' + content + '"')
    return parts


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _ranges_disjoint(first: dict, second: dict) -> bool:
    first_low, first_high = _interval(first)
    second_low, second_high = _interval(second)
    return _below(first_high, second_low) or _below(second_high, first_low)


def _integer_ranges_disjoint(first: dict, second: dict) -> bool:
    """Whether no integer lies within both schemas' bounds."""
    first_low, first_high = _integer_interval(first)
    second_low, second_high = _integer_interval(second)
    lows = [low for low in (first_low, second_low) if low is not None]
    highs = [high for high in (first_high, second_high) if high is not None]
    return bool(lows and highs) and max(lows) > min(highs)


def _integer_interval(schema: dict) -> tuple[Optional[int], Optional[int]]:
    """The least and greatest integers within a schema's bounds (None: unbounded)."""
    low, high = _interval(schema)
    least = greatest = None
    if low is not None:
        least = math.floor(low[0]) + 1 if low[1] or low[0].denominator != 1 else int(low[0])
    if high is not None:
        greatest = math.ceil(high[0]) - 1 if high[1] or high[0].denominator != 1 else int(high[0])
    return least, greatest


def _interval(schema: dict) -> tuple[Optional[tuple[Fraction, bool]],
                                     Optional[tuple[Fraction, bool]]]:
    """((lower bound, exclusive), (upper bound, exclusive)), None when absent.
    The draft-4 boolean ``exclusiveMinimum`` is read as inclusive (a larger
    interval, so still safe)."""
    def bound(inclusive: str, exclusive: str):
        found = []
        for keyword, is_exclusive in ((inclusive, False), (exclusive, True)):
            value = schema.get(keyword)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found.append((to_fraction(value), is_exclusive))
        return found

    lows, highs = bound("minimum", "exclusiveMinimum"), bound("maximum", "exclusiveMaximum")
    low = max(lows, key=lambda b: (b[0], b[1])) if lows else None
    high = min(highs, key=lambda b: (b[0], not b[1])) if highs else None
    return low, high


def _below(high: Optional[tuple[Fraction, bool]], low: Optional[tuple[Fraction, bool]]) -> bool:
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
    base = translator.resolver.base_of(schema, base)
    if any(rejects(translator, part, part_base, value, depth + 1)
           for part, part_base in _conjuncts(translator, schema, base)):
        return True
    if any(all(rejects(translator, alternative, base, value, depth + 1)
               for alternative in alternatives) for alternatives in _unions(schema)):
        return True
    if translator.ref_hides_siblings and "$ref" in schema:
        return False
    if _class_of(value) not in _classes(schema):
        return True
    values = _values(schema)
    if values is not None and not any(json_equal(value, member) for member in values):
        return True
    if isinstance(value, str):
        n_min, n_max = schema.get("minLength", 0), schema.get("maxLength")
        return (_is_count(n_min) and len(value) < n_min) or (_is_count(n_max) and len(value) > n_max)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        point = (to_fraction(value), False)
        low, high = _interval(schema)
        return _below(point, low) or _below(high, point)
    if isinstance(value, dict):
        properties = _properties(schema)
        if not _required(schema) <= set(value):
            return True
        if _closed(schema) and not set(value) <= set(properties):
            return True
        return any(rejects(translator, properties[name], base, member, depth + 1)
                   for name, member in value.items() if name in properties)
    return False
