"""Nodes for ``enum`` / ``const``: a finite set of JSON values.

What it computes: ``enum_node(translator, schema, types, pointer)`` keeps
the enum/const members that satisfy the sibling keywords Python can check
(``values.simple_constraints_hold``: type, lengths, bounds, pattern; the
other siblings through ``Translator.holds``: item and member schemas,
counts, ``multipleOf``, ``oneOf`` ...), warns when a sibling it cannot
decide is left unchecked, and returns their alternation.  Up
to ``LITERAL_SET_MIN - 1`` members, each member is its ``const_node``; from
``LITERAL_SET_MIN`` on, the scalar members are pooled (``_pooled_scalars``)
so the cost is linear in the members' text, not one terminal per member:

- integer values: runs of at least ``INTEGER_RUN_MIN`` consecutive integers
  as digit ranges (``numbers.integer_range``), the others as the literal
  set of their decimal texts (``-0`` with ``0``), all followed by the
  integer-valued tail ``(?:\\.0+)?``;
- other numbers: the literal set of ``integer.fraction`` texts followed by
  ``0*`` (trailing zeros);
- ``null``, ``true``, ``false``, strings of plain printable ASCII (one
  spelling each) and the ``json.dumps`` exponent spelling of a number (such
  as ``1e-07``): one literal set;

each literal set by ``literal_sets.literal_set_regexes``.  Under drafts 3
and 4 with ``integer`` but not ``number`` among the types, the numeric
members are their plain integer spellings only (``-0`` with ``0``): 1.0 is
no integer there.  These are the
spellings ``values.scalar_node`` accepts for each member, so both encodings
accept the same texts.  Strings needing escapes and containers stay one
``const_node`` each.  ``const_node(translator, value, pointer)``
is the node for one JSON value: scalars by ``values.scalar_node`` (numbers
by value, strings in their canonical spellings), arrays element by element,
objects with their members in any order up to ``MAX_ANY_ORDER_REQUIRED``
members (object equality ignores order), in the given order beyond.

Invariant: the node accepts only encodings of values equal to a kept
member, never another value.
"""

from __future__ import annotations

import json
import math
from typing import Any

from grammask.errors import GrammarError
from grammask.json_schema.builder import MAX_ANY_ORDER_REQUIRED, rule_hint
from grammask.json_schema.keywords import MORE_PATTERNS, NOT_MULTIPLES, VALIDATION_KEYWORDS
from grammask.json_schema.literal_sets import literal_set_regexes
from grammask.json_schema.numbers import INTEGER_ZERO_FRACTION, decimal_digits, integer_range, to_fraction
from grammask.json_schema.regex_text import is_plain_text
from grammask.json_schema.values import (
    json_equal, scalar_node, simple_constraints_hold, string_literal_node,
)

LITERAL_SET_MIN = 16
"""Enums with at least this many kept members pool their scalar members."""

INTEGER_RUN_MIN = 4
"""Consecutive integers from this many on are one digit range."""

_CHECKED_KEYWORDS = ("enum", "const", "type", "minLength", "maxLength", "pattern", MORE_PATTERNS,
                     "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", NOT_MULTIPLES)


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
        rest = {k: v for k, v in check.items() if k not in ("enum", "const")}
        verdicts = [translator.holds(rest, value) for value in kept]
        if None in verdicts:
            translator.warn(other_keywords[0], pointer, "not checked against enum/const members")
        else:
            kept = [value for value, valid in zip(kept, verdicts) if valid]
    integers = []
    if not translator.integer_zero_fraction and "integer" in types and "number" not in types:
        # Drafts 3 and 4: an integer is spelled without fraction or exponent
        # (1.0 is a number there, not an integer), so the integral members
        # keep only their plain spellings.
        numbers = [value for value in kept if _is_number(value)]
        kept = [value for value in kept if not _is_number(value)]
        integral = sorted({int(fraction) for fraction in map(to_fraction, numbers)
                           if fraction.denominator == 1})
        integers = [translator.lit(text) for text in
                    [str(number) for number in integral] + ["-0"] * (0 in integral)]
    if len(kept) < LITERAL_SET_MIN:
        return translator.alt(integers + [const_node(translator, value, pointer)
                                          for value in kept])
    pooled, others = _pooled_scalars(translator, kept)
    return translator.alt(integers + pooled + [const_node(translator, value, pointer)
                                               for value in others])


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pooled_scalars(translator, values: list) -> tuple[list, list]:
    """The nodes of the pooled members of ``values`` (module docstring), and
    the members left out."""
    integers: set[int] = set()
    fractions: set[str] = set()
    plain: set[str] = set()
    others = []
    for value in values:
        if value.__class__ is int:
            integers.add(value)
        elif value is None or isinstance(value, bool):
            plain.add(json.dumps(value))
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise GrammarError(f"non-finite number {value!r} is not JSON")
            fraction = to_fraction(value)
            if fraction.denominator == 1:
                integers.add(int(fraction))
            else:
                integer_part, fraction_digits = decimal_digits(abs(fraction))
                fractions.add(("-" if fraction < 0 else "") + f"{integer_part}.{fraction_digits}")
            dumped = json.dumps(value)
            if "e" in dumped or "E" in dumped:
                plain.add(dumped)
        elif isinstance(value, int):
            integers.add(int(value))
        elif isinstance(value, str) and is_plain_text(value):
            plain.add(f'"{value}"')
        else:
            others.append(value)
    ranges, integer_texts = [], []
    ordered = sorted(integers)
    start = 0
    for index in range(1, len(ordered) + 1):
        if index < len(ordered) and ordered[index] == ordered[index - 1] + 1:
            continue
        run = ordered[start:index]
        if len(run) >= INTEGER_RUN_MIN:
            ranges.append(integer_range(run[0], run[-1]))
        else:
            integer_texts.extend(str(number) for number in run)
            if 0 in run:
                integer_texts.append("-0")
        start = index
    nodes = [translator.rx(f"(?:{body}){INTEGER_ZERO_FRACTION}")
             for body in ranges + literal_set_regexes(integer_texts)]
    nodes += [translator.rx(f"(?:{body})0*") for body in literal_set_regexes(fractions)]
    nodes += [translator.rx(body) for body in literal_set_regexes(plain)]
    return nodes, others


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
