"""JSON values: scalar values as grammar nodes, equality and JSON Schema type tests.

What it computes: for a scalar JSON value, a node matching the JSON texts
that denote a value *equal* to it in JSON Schema's sense (numbers by value,
so ``1``, ``1.0`` and ``1.00`` are all the integer one; strings in their
canonical spellings: printable ASCII raw, any other character raw or
escaped, as ``json.dumps`` writes them with or without ``ensure_ascii``).
Numbers are matched in plain decimal form (sign, digits, zero padding of the
fraction), plus the exact ``json.dumps`` spelling when that uses an exponent
(``1e-07``).  Arrays and objects are built from these by
``const_nodes.const_node``.

Also: ``json_type_of(value)`` (``1.0`` has type
integer, ``True`` is not a number), and ``simple_constraints_hold``, the
Python-side check of enum members against the sibling keywords the
translator can evaluate directly (length, bounds, pattern, type).

Invariant: the node accepts exactly the denoted value's encodings described
above; nothing denoting another value.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any

from grammask.errors import GrammarError
from grammask.grammar.ast import Literal, Regex
from grammask.json_schema.numbers import decimal_digits, to_fraction
from grammask.json_schema.regex_text import (
    escape_literal, is_plain_text, json_string_literal_regex,
)

JSON_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")

_BOUND_KEYWORDS = frozenset(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"))

MORE_PATTERNS = "$grammask:morePatterns"
"""Internal keyword of a merged ``allOf`` (``merge.py``): the ``pattern`` values
beyond the first, a list of strings; a string must match every one."""

NOT_MULTIPLES = "$grammask:notMultiples"
"""Internal keyword of a complement (``applicators``: ``not: {multipleOf:
s}``): a list of positive steps; a number must be a multiple of none."""


def json_type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality (numbers by value, booleans distinct from numbers)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def number_literal_regex(value: int | float | Fraction) -> str:
    """Plain decimal spellings of a number's value (plus its json.dumps form
    when that uses an exponent); ``value`` may be an exact Fraction."""
    fraction = to_fraction(value)
    negative = fraction < 0
    digits = decimal_digits(abs(fraction))
    integer_part, fraction_digits = digits
    if fraction_digits:
        body = f"{integer_part}\\.{fraction_digits}0*"
    else:
        body = f"{integer_part}(?:\\.0+)?"
    if fraction == 0:
        regex = f"-?{body}"
    else:
        regex = ("-" if negative else "") + body
    dumped = json.dumps(value) if isinstance(value, (int, float)) else ""
    if "e" in dumped or "E" in dumped:
        regex = f"(?:{regex}|{escape_literal(dumped)})"
    return regex


def simple_constraints_hold(value: Any, schema: dict) -> bool:
    """Whether ``value`` passes the sibling keywords checked on the Python side."""
    types = schema.get("type")
    if types is not None:
        names = (types,) if isinstance(types, str) else types
        actual = json_type_of(value)
        if actual not in names and not (actual == "integer" and "number" in names):
            return False
    if isinstance(value, str):
        length = len(value)
        if length < schema.get("minLength", 0):
            return False
        if "maxLength" in schema and length > schema["maxLength"]:
            return False
        for pattern in [schema.get("pattern")] + list(schema.get(MORE_PATTERNS, ())):
            if isinstance(pattern, str):
                try:
                    if re.search(pattern, value) is None:
                        return False
                except re.error:
                    return True
    if (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and any(to_fraction(value) % to_fraction(step) == 0
                    for step in schema.get(NOT_MULTIPLES, ()))):
        return False
    if (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and not _BOUND_KEYWORDS.isdisjoint(schema)):
        number = Fraction(value)
        checks = (("minimum", lambda bound: number >= bound),
                  ("maximum", lambda bound: number <= bound),
                  ("exclusiveMinimum", lambda bound: number > bound),
                  ("exclusiveMaximum", lambda bound: number < bound))
        for keyword, check in checks:
            bound = schema.get(keyword)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                if not check(to_fraction(bound)):
                    return False
    return True


def scalar_node(value: Any):
    """Node for a null, boolean, number or string value (None for containers)."""
    if value is None:
        return Literal(b"null")
    if isinstance(value, bool):
        return Literal(b"true" if value else b"false")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise GrammarError(f"non-finite number {value!r} is not JSON")
        return Regex(number_literal_regex(value))
    if isinstance(value, str):
        return string_literal_node(value)
    return None


def string_literal_node(text: str):
    """The canonical spellings of one string (a Literal when there is only one)."""
    if is_plain_text(text):
        return Literal(b'"' + text.encode("ascii") + b'"')
    return Regex(json_string_literal_regex(text))
