"""``allOf`` merging: one schema for the conjunction of several.

What it computes: ``merge_schemas(translator, schemas, pointer)`` returns one
schema dict equivalent to the conjunction of ``schemas`` (each a dict or a
boolean), so the translator can build a single grammar for it:

- ``$ref`` operands are inlined (their target's keywords join the merge);
  an ``allOf`` operand is flattened into the operand list;
- bounds take the tighter value, ``required`` is the union, ``type`` and
  ``enum`` intersect, ``const`` becomes a one-element enum;
- sub-schemas (``properties`` entries, ``items``, ``additionalProperties``,
  ...) are merged *lazily* as ``{"allOf": [x, y]}``, translated when reached:
  so recursive definitions never expand here (and the translator makes
  each merging schema that holds a ``$ref`` a shared rule, so one that
  recurs is a rule reference: ``translator.shared_rules``);
- object cross-effects are exact: a property declared
  by one operand but not by another must also satisfy the other's
  ``additionalProperties`` (or its matching ``patternProperties``); a key
  matching a pattern of one operand only meets the other's
  ``additionalProperties`` through ``keywords.ADDITIONAL_OF``
  (``_pattern_keys_cross``); positions of ``prefixItems`` meet the
  other operand's ``prefixItems`` entry or ``items`` (or, before 2020-12, the
  tuple form ``items: [..]`` / ``additionalItems``); under draft 3-7 a
  ``$ref`` operand stands for its target alone (its siblings are ignored);
- ``anyOf``/``oneOf`` of several operands distribute into a product (capped
  at ``MAX_DISTRIBUTED_BRANCHES``, else a warning and the first is kept;
  128 since the 80 string branches of MaskBench's allany13, 5 x 4 x 4
  patterns, compile in about 1.5 s).

Operands (and inlined targets) lose the keywords newer than the declared
draft first (``translator.own_keywords``).  ``multipleOf`` steps merge to their least common multiple.  Keywords that
cannot be combined (two different ``format`` values; two different
``contains`` beside ``minContains`` / ``maxContains``) keep the first
value with a warning naming the keyword: looser, never silent (extension keywords ``x-...`` assert nothing: first value, silently).  ``then`` / ``else`` of an operand without ``if`` are dropped (they
must not meet another operand's ``if``).  Operands with an ``if`` each keep
their conditional: the first stays in ``if`` / ``then`` / ``else``, the
others (equal ones once) go, in order, to the list
``keywords.MORE_CONDITIONS``, which ``applicators.if_then_else_node``
applies one after the other.  Two ``not`` values become one
``not: {anyOf: [both]}`` (failing both is failing their union; a value that
is itself a bare ``anyOf`` gives its members, so the list stays flat).  A second
``pattern`` goes to the list ``keywords.MORE_PATTERNS`` (every string node
and value check meets them all: ``formats.asserted_patterns``,
``values.simple_constraints_hold``); the excluded steps of
``keywords.NOT_MULTIPLES`` (a complement's) are joined the same way, and
so are the members ``keywords.EXTRA_WITNESSES`` requires (each once).
Two different ``contains`` (without counts) are not merged into one
("an item matches A" and "an item matches B" is not "an item matches
both", which ``contains: {allOf: [A, B]}`` would say): the second goes to
the list ``keywords.MORE_CONTAINS`` (``arrays`` meets them all).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from grammask.json_schema.keywords import (ADDITIONAL_OF, EXTRA_WITNESSES, MORE_CONDITIONS,
                                           MORE_CONTAINS, MORE_PATTERNS, NOT_MULTIPLES,
                                           array_positions, pattern_matches)
from grammask.json_schema.values import json_equal

MAX_DISTRIBUTED_BRANCHES = 128
MAX_INLINED_REFS = 64

_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties",
                 "minContains")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties",
                 "maxContains")
_LAZY_SUBSCHEMAS = ("additionalProperties", "contains", "propertyNames",
                    "unevaluatedProperties", "unevaluatedItems")
_CONDITIONAL = ("if", "then", "else")
_CONTAINS_KEYWORDS = ("contains", "minContains", "maxContains", MORE_CONTAINS)
_KEEP_FIRST = ("$defs", "definitions", "$id", "$schema", "$anchor", "title", "description",
               "default", "examples", "$comment")


def both(x: Any, y: Any) -> Any:
    """The lazy conjunction of two schemas."""
    if x is True or x == {} or x == y:
        return y
    if y is True or y == {}:
        return x
    if x is False or y is False:
        return False
    return {"allOf": [x, y]}


_APPLICATORS = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "not",
                "dependentSchemas")


def resolve_unevaluated(translator, schema: dict, pointer: str) -> dict:
    """``unevaluatedProperties`` / ``unevaluatedItems`` of a schema whose
    applicators are already merged away: the properties (items) left
    unevaluated are exactly those ``additionalProperties`` (``items`` after
    ``prefixItems``) would cover, so the keyword becomes that one when absent
    (and has no effect when present).  ``contains`` also evaluates items, so
    ``unevaluatedItems`` beside it is warned about."""
    result = dict(schema)
    if "unevaluatedProperties" in result:
        value = result.pop("unevaluatedProperties")
        result.setdefault("additionalProperties", value)
    if "unevaluatedItems" in result:
        value = result.pop("unevaluatedItems")
        if "contains" in result and value is not True and value != {}:
            translator.warn("unevaluatedItems", pointer, "items matched by contains count as "
                                                         "evaluated: not enforced")
        elif isinstance(result.get("items"), list):
            result.setdefault("additionalItems", value)
        else:
            result.setdefault("items", value)
    return result


def _own_scope(translator, schema: Any, pointer: str) -> Any:
    """Resolve the unevaluated* keywords of an operand that is its own scope."""
    if not isinstance(schema, dict) or not (
            "unevaluatedProperties" in schema or "unevaluatedItems" in schema):
        return schema
    if any(key in schema for key in _APPLICATORS):
        translator.warn("unevaluatedProperties" if "unevaluatedProperties" in schema
                        else "unevaluatedItems", pointer,
                        "inside a merged subschema with its own applicators: properties of "
                        "sibling schemas count as evaluated")
        return schema
    return resolve_unevaluated(translator, schema, pointer)


def merge_schemas(translator, schemas: list, pointer: str, owner: int | None = None) -> Any:
    """The conjunction of ``schemas``.  ``owner`` is the index of the schema
    whose applicator is being merged (its unevaluated* keywords see the other
    operands' properties, so they are resolved after merging); every other
    operand is its own scope and has its unevaluated* keywords resolved first.
    """
    own = [translator.own_keywords(schema) for schema in schemas]
    scoped = [schema if index == owner else _own_scope(translator, schema, pointer)
              for index, schema in enumerate(own)]
    operands = _flatten(translator, scoped, pointer, [0], translator.base_uri)
    if any(operand is False for operand in operands):
        return False
    result: dict = {}
    for operand in operands:
        result = _merge_two(translator, result, operand, pointer)
    return result


def _flatten(translator, schemas: list, pointer: str, n_inlined: list[int], base: str) -> list:
    operands: list = []
    for schema in schemas:
        if schema is True:
            continue
        if schema is False:
            return [False]
        if not isinstance(schema, dict):
            raise translator.error(pointer, "allOf operands must be schemas")
        schema = dict(schema)
        if "if" not in schema:  # then / else without an if have no effect
            schema.pop("then", None)
            schema.pop("else", None)
        if translator.ref_hides_siblings and "$ref" in schema:
            schema = {"$ref": schema["$ref"]}  # draft 3-7: $ref hides its siblings
        for keyword in ("$ref", "$dynamicRef"):
            if keyword in schema:
                n_inlined[0] += 1
                if n_inlined[0] > MAX_INLINED_REFS:
                    translator.warn(keyword, pointer, "reference cycle inside allOf: the "
                                                      "remaining references are not applied")
                    schema.pop(keyword)
                    continue
                target, target_base = translator.resolve_inline(
                    schema.pop(keyword), pointer, base, dynamic=keyword == "$dynamicRef")
                target = _own_scope(translator, translator.own_keywords(target), pointer)
                operands.extend(_flatten(translator, [target], pointer, n_inlined, target_base))
        if "allOf" in schema:
            branches = schema.pop("allOf")
            if not isinstance(branches, list):
                raise translator.error(pointer, "allOf must be an array")
            branches = [_own_scope(translator, translator.own_keywords(branch), pointer)
                        for branch in branches]
            operands.extend(_flatten(translator, branches, pointer, n_inlined, base))
        operands.append(schema)
    return operands


def _any_of_members(schema: Any) -> list:
    """The members of ``schema`` as an ``anyOf`` operand: its own when it is
    a bare ``anyOf`` list (so merged ``not`` values stay one flat anyOf,
    not one level deeper per operand), else ``[schema]``."""
    if isinstance(schema, dict) and set(schema) == {"anyOf"} and isinstance(schema["anyOf"], list):
        return list(schema["anyOf"])
    return [schema]


def _contains_apart(translator, a: dict, b: dict, pointer: str) -> dict:
    """``b`` ready to merge into ``a`` when both hold different ``contains``:
    "an item matches A" and "an item matches B" is not "an item matches
    both", so b's contains schemas not already among a's go to
    ``keywords.MORE_CONTAINS``; beside ``minContains`` / ``maxContains``
    (counts of one schema) a's are kept alone, warned."""
    if not {"minContains", "maxContains"}.isdisjoint(set(a) | set(b)):
        translator.warn("contains", pointer, f"two different 'contains' values in allOf beside "
                                             f"minContains / maxContains: only "
                                             f"{a['contains']!r} is enforced")
        return {k: v for k, v in b.items() if k not in _CONTAINS_KEYWORDS}
    known = [a["contains"]] + list(a.get(MORE_CONTAINS, []))
    more = [schema for schema in [b["contains"]] + list(b.get(MORE_CONTAINS, []))
            if not any(json_equal(schema, other) for other in known)]
    kept = {k: v for k, v in b.items() if k not in _CONTAINS_KEYWORDS}
    if more:
        kept[MORE_CONTAINS] = more
    return kept


def _merge_two(translator, a: dict, b: dict, pointer: str) -> dict:
    result = dict(a)
    if "contains" in a and "contains" in b and not json_equal(a["contains"], b["contains"]):
        b = _contains_apart(translator, a, b, pointer)
    if "if" in a and "if" in b:
        b = dict(b)
        conditional = {key: b.pop(key) for key in _CONDITIONAL if key in b}
        b[MORE_CONDITIONS] = [conditional] + list(b.get(MORE_CONDITIONS, []))
    for key, value in b.items():
        if key not in result:
            result[key] = value
            if key == MORE_CONDITIONS:
                result[key] = [conditional for conditional in value if not json_equal(
                    conditional, {k: a[k] for k in _CONDITIONAL if k in a})]
            continue
        current = result[key]
        if current == value or key in _KEEP_FIRST or key.startswith("x-"):
            continue
        if key == "type":
            first = [current] if isinstance(current, str) else list(current)
            second = [value] if isinstance(value, str) else list(value)
            common = [t for t in first if t in second or (t == "integer" and "number" in second)]
            common += [t for t in second if t == "integer" and "number" in first
                       and t not in common]
            result[key] = common
        elif key == "enum":
            result[key] = [v for v in current if any(json_equal(v, w) for w in value)]
        elif key == "const":
            if not json_equal(current, value):
                result["enum"] = []
        elif key in _LOWER_BOUNDS:
            result[key] = max(current, value)
        elif key in _UPPER_BOUNDS:
            result[key] = min(current, value)
        elif key == "required":
            result[key] = list(dict.fromkeys(list(current) + list(value)))
        elif key == "pattern" and isinstance(current, str) and isinstance(value, str):
            more = result.get(MORE_PATTERNS, [])
            if value not in more:
                result[MORE_PATTERNS] = more + [value]
        elif key in (MORE_PATTERNS, NOT_MULTIPLES):
            result[key] = list(dict.fromkeys(current + value))
        elif key in (EXTRA_WITNESSES, ADDITIONAL_OF, MORE_CONTAINS):
            result[key] = list(current) + [w for w in value
                                           if not any(json_equal(w, kept) for kept in current)]
        elif key == MORE_CONDITIONS:
            known = [{k: a[k] for k in _CONDITIONAL if k in a}] + list(current)
            result[key] = list(current) + [conditional for conditional in value
                                           if not any(json_equal(conditional, other)
                                                      for other in known)]
        elif key in ("properties", "patternProperties", "$defs", "dependentSchemas"):
            merged = dict(current)
            for name, sub in value.items():
                merged[name] = both(merged[name], sub) if name in merged else sub
            result[key] = merged
        elif key in _LAZY_SUBSCHEMAS:
            result[key] = both(current, value)
        elif key in ("items", "prefixItems", "additionalItems"):
            continue
        elif key in ("anyOf", "oneOf"):
            if len(current) * len(value) > MAX_DISTRIBUTED_BRANCHES:
                translator.warn(key, pointer, f"{len(current)} x {len(value)} branches of "
                                              f"merged {key}: only the first set is applied")
            else:
                result[key] = [both(x, y) for x in current for y in value]
        elif key == "not":
            result[key] = {"anyOf": _any_of_members(current) + _any_of_members(value)}
        elif key == "uniqueItems":
            result[key] = bool(current) or bool(value)
        elif key == "multipleOf":
            result[key] = _merge_steps(current, value)
        elif key == "dependentRequired":
            merged = dict(current)
            for name, names in value.items():
                merged[name] = list(dict.fromkeys(list(merged.get(name, [])) + list(names)))
            result[key] = merged
        else:
            translator.warn(key, pointer, f"two different {key!r} values in allOf: only "
                                          f"{current!r} is enforced")
    _merge_object_cross(result, a, b)
    _pattern_keys_cross(result, a, b)
    _merge_array_positions(result, a, b, translator.tuple_items)
    return result


def _pattern_keys_cross(result: dict, a: dict, b: dict) -> None:
    """Keys matching a pattern of one operand only that are additional
    properties of the other, whose ``additionalProperties`` constrains
    them: the merged patternProperties (the union) cannot say "matches
    this pattern and none of those", so the other operand's rule is kept
    as an ``ADDITIONAL_OF`` entry, which the object node applies to every
    key outside its names and patterns."""
    for owner, other in ((a, b), (b, a)):
        additional = other.get("additionalProperties", True)
        if additional is True or additional == {}:
            continue
        others = other.get("patternProperties", {})
        if any(pattern not in others and sub is not False
               for pattern, sub in owner.get("patternProperties", {}).items()):
            entry = {"names": list(other.get("properties", {})), "patterns": list(others),
                     "schema": additional}
            kept = result.get(ADDITIONAL_OF, [])
            if not any(json_equal(entry, known) for known in kept):
                result[ADDITIONAL_OF] = list(kept) + [entry]


def _merge_steps(first: Any, second: Any) -> Any:
    """The least common multiple of two decimal steps (multiples of both)."""
    a, b = Fraction(str(first)), Fraction(str(second))
    common = Fraction(math.lcm(a.numerator, b.numerator), math.gcd(a.denominator, b.denominator))
    return int(common) if common.denominator == 1 else float(common)


def outside_constraints(entries: list, name: str) -> list:
    """The schemas of the ``ADDITIONAL_OF`` entries that apply to key ``name``
    (none of their names, matching none of their patterns)."""
    return [entry["schema"] for entry in entries if name not in entry["names"]
            and not any(pattern_matches(pattern, name) for pattern in entry["patterns"])]


def _merge_object_cross(result: dict, a: dict, b: dict) -> None:
    """Properties declared by one operand meet the other's additional/pattern schemas."""
    if not a or not b:
        return
    properties = dict(result.get("properties", {}))
    changed = False
    for owner, other in ((a, b), (b, a)):
        own_properties = owner.get("properties", {})
        patterns = owner.get("patternProperties", {})
        additional = owner.get("additionalProperties", True)
        for name in other.get("properties", {}):
            if name in own_properties:
                continue
            matching = [sub for pattern, sub in patterns.items() if pattern_matches(pattern, name)]
            constraints = (matching if matching else [additional]) + outside_constraints(
                owner.get(ADDITIONAL_OF, []), name)
            for constraint in constraints:
                if constraint is not True and constraint != {}:
                    properties[name] = both(properties[name], constraint)
                    changed = True
    if changed:
        result["properties"] = properties


def _merge_array_positions(result: dict, a: dict, b: dict, tuple_items: bool) -> None:
    """Position k of the merge meets both operands' schemas for position k;
    written back in the draft's own layout (``keywords.array_positions``)."""
    if not any(k in d for d in (a, b) for k in ("items", "prefixItems", "additionalItems")):
        return
    first_prefix, _, first_items, first_keyword = array_positions(a, tuple_items)
    second_prefix, _, second_items, second_keyword = array_positions(b, tuple_items)
    # A declared rest schema, even true, evaluates the items unevaluatedItems would see.
    rest_declared = first_keyword in a or second_keyword in b
    n_positions = max(len(first_prefix), len(second_prefix))
    prefix = []
    for index in range(n_positions):
        x = first_prefix[index] if index < len(first_prefix) else first_items
        y = second_prefix[index] if index < len(second_prefix) else second_items
        prefix.append(both(x, y))
    items = both(first_items, second_items)
    for key in ("items", "prefixItems", "additionalItems"):
        result.pop(key, None)
    if prefix:
        # Both layouts read back through array_positions: the tuple form
        # (items: [..], additionalItems) is understood by every draft.
        result["items"] = prefix
        if items is not True or rest_declared:
            result["additionalItems"] = items
    elif items is not True or rest_declared:
        result["items"] = items
