"""Nodes for ``enum`` / ``const``: a finite set of JSON values.

What it computes: ``enum_node(translator, schema, types, pointer)`` keeps
the enum/const members that satisfy the sibling keywords Python can check
(``values.simple_constraints_hold``: type, lengths, bounds, pattern), warns
when other siblings are left unchecked, and returns the alternation of
``const_node`` of each member.  ``const_node(translator, value, pointer)``
is the node for one JSON value: scalars by ``values.scalar_node`` (numbers
by value, strings in their canonical spellings), arrays element by element,
objects with their members in any order up to ``MAX_ANY_ORDER_REQUIRED``
members (object equality ignores order), in the given order beyond.

Invariant: the node accepts only encodings of values equal to a kept
member, never another value.
"""

from __future__ import annotations

from typing import Any

from grammask.json_schema.builder import MAX_ANY_ORDER_REQUIRED, rule_hint
from grammask.json_schema.keywords import VALIDATION_KEYWORDS
from grammask.json_schema.values import (
    json_equal, scalar_node, simple_constraints_hold, string_literal_node,
)

_CHECKED_KEYWORDS = ("enum", "const", "type", "minLength", "maxLength", "pattern", "minimum",
                     "maximum", "exclusiveMinimum", "exclusiveMaximum")


def enum_node(translator, schema: dict, types: list[str], pointer: str) -> Any:
    """The members of ``enum`` (or the ``const`` value) valid under ``schema``
    restricted to ``types``."""
    if "enum" in schema:
        values = schema["enum"]
        if not isinstance(values, list):
            raise translator.error(pointer, "enum must be an array")
    else:
        values = [schema["const"]]
    if "const" in schema and "enum" in schema:
        values = [v for v in values if json_equal(v, schema["const"])]
    check = dict(schema)
    check["type"] = types
    kept = []
    for value in values:
        if simple_constraints_hold(value, check):
            kept.append(value)
    other_keywords = [k for k in schema
                      if k in VALIDATION_KEYWORDS and k not in _CHECKED_KEYWORDS]
    if other_keywords and kept:
        translator.warn(other_keywords[0], pointer, "not checked against enum/const members")
    return translator.alt([const_node(translator, value, pointer) for value in kept])


def const_node(translator, value: Any, pointer: str) -> Any:
    """The node for one JSON value (see values.py for what "equal" accepts)."""
    node = scalar_node(value)
    if node is not None:
        translator.count()
        return node
    ws = translator.ws()
    if isinstance(value, list):
        if not value:
            return translator.seq(translator.lit("["), ws, translator.lit("]"))
        items = []
        for index, item in enumerate(value):
            if index:
                items.append(translator.comma())
            items.append(const_node(translator, item, pointer))
        return translator.seq(translator.lit("["), ws, *items, ws, translator.lit("]"))
    if isinstance(value, dict):
        if not value:
            return translator.seq(translator.lit("{"), ws, translator.lit("}"))
        members = [translator.seq(string_literal_node(key), ws, translator.lit(":"), ws,
                                  const_node(translator, item, pointer))
                   for key, item in value.items()]
        if len(members) <= MAX_ANY_ORDER_REQUIRED:
            return translator.any_order_object([(member, True) for member in members], None,
                                               rule_hint(pointer, "any"))
        separated = []
        for index, member in enumerate(members):
            if index:
                separated.append(translator.comma())
            separated.append(member)
        return translator.seq(translator.lit("{"), ws, *separated, ws, translator.lit("}"))
    raise translator.error(pointer, f"not a JSON value: {value!r}")
