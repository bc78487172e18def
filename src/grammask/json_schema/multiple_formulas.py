"""``oneOf`` over numbers that only ``multipleOf`` decides, as one set of remainders.

What it computes: ``multiples_one_of(translator, schema, pointer)`` is the
node of a schema with a ``oneOf`` whose ``type`` allows numbers only
(``number`` or ``integer``), whose bounds apply as usual, and whose every
other keyword, in the oneOf's branches too, is a boolean combination of
``multipleOf`` steps: ``oneOf`` / ``anyOf`` / ``allOf`` / ``not``, a
``$ref`` inside the current resource, the excluded steps of
``values.NOT_MULTIPLES``, and annotations; None for any other schema (the
caller subtracts overlapping branches as usual).

Why it is exact: such a schema holds for a number iff a formula over the
flags "the number is a multiple of step j" holds, and ``number_nodes``'
remainder automaton (reached through ``Translator.remainder_set``) decides
those flags from the number's scaled value modulo the least common
multiple of the steps (a number with a non-zero digit past the finest
step's places is a multiple of none): ``number_nodes.remainder_set_node``
accepts the remainders whose flags satisfy the formula, within the bounds.
The oneOf exclusions instead make each branch fail every overlapping one,
a chain of complements whose size is the product of the other branches'
parts (MaskBench's allone1: eight merged branches, each excluding seven,
8 * 3**7 alternatives, past ``applicators.MAX_ONE_OF_COMPLEMENT_PARTS``);
here its 770 remainders are one automaton.  Past
``number_nodes.MAX_REMAINDER_STATES`` remainders the automaton is
minimized (allany8's 24,024 remainders have 3,076 classes); past the
limits there, None, and the exclusions are tried.

Data layout: a formula is a nested tuple, ``("step", j)`` (a multiple of
the j-th step), ``("not", f)``, ``("all", fs)``, ``("any", fs)``, ``("one",
fs)``; ``all`` of nothing holds, ``any`` / ``one`` of nothing do not (so
``true`` is ``("all", ())`` and ``false`` is ``("any", ())``).  Steps are
kept once each, in the order first met.

Invariant: a schema is read only when every keyword of it and of its
subschemas is one of the above (any other validation keyword, ``$id`` or
a reference out of the resource gives None), at most
``MAX_FORMULA_DEPTH`` levels deep (a ``$ref`` cycle gives None).
"""

from __future__ import annotations

from typing import Any, Optional

from grammask.json_schema.keywords import ANNOTATION_KEYWORDS, VALIDATION_KEYWORDS, allowed_types
from grammask.json_schema.numbers import to_fraction
from grammask.json_schema.values import NOT_MULTIPLES

MAX_FORMULA_DEPTH = 16
"""Nesting of subschemas and ``$ref`` read into one formula; deeper (a
``$ref`` cycle) the schema is left to the oneOf exclusions."""

_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_COMBINATIONS = {"allOf": "all", "anyOf": "any", "oneOf": "one"}


def multiples_one_of(translator, schema: dict, pointer: str) -> Any:
    """The node of ``schema`` (which holds ``oneOf``; module docstring), or None."""
    if "type" not in schema:
        return None
    types = allowed_types(translator, schema, pointer)
    if types not in (["number"], ["integer"]):
        return None
    steps: list = []
    logic = {k: v for k, v in schema.items() if k != "type" and k not in _BOUNDS}
    formula = _formula(translator, logic, steps, 0)
    if formula is None:
        return None
    return translator.remainder_set(schema, steps, lambda flags: _holds(formula, flags),
                                    types == ["integer"], pointer)


def _formula(translator, schema: Any, steps: list, depth: int) -> Optional[tuple]:
    """The formula of ``schema`` over ``steps`` (extended with its new
    steps), or None when a keyword is none of the module docstring's."""
    if schema is True:
        return ("all", ())
    if schema is False:
        return ("any", ())
    if not isinstance(schema, dict) or depth > MAX_FORMULA_DEPTH:
        return None
    schema = translator.own_keywords(schema)
    if translator.ref_hides_siblings and "$ref" in schema:
        schema = {"$ref": schema["$ref"]}
    parts = []
    for keyword, value in schema.items():
        if keyword == "multipleOf":
            parts.append(_step(steps, value))
        elif keyword == NOT_MULTIPLES:
            parts.extend(("not", _step(steps, each)) for each in value)
        elif keyword == "not":
            inner = _formula(translator, value, steps, depth + 1)
            parts.append(None if inner is None else ("not", inner))
        elif keyword in _COMBINATIONS:
            if not isinstance(value, list) or not value:
                return None
            members = tuple(_formula(translator, member, steps, depth + 1) for member in value)
            parts.append(None if None in members else (_COMBINATIONS[keyword], members))
        elif keyword == "$ref":
            found = translator.resolver.resource_target(value, translator.base_uri)
            parts.append(None if found is None
                         else _formula(translator, found[0], steps, depth + 1))
        elif keyword in VALIDATION_KEYWORDS or keyword in ("$id", "id", "$dynamicRef") \
                or (keyword not in ANNOTATION_KEYWORDS and keyword.startswith("$")):
            return None
        if parts and parts[-1] is None:
            return None
    return ("all", tuple(parts))


def _step(steps: list, value: Any) -> Optional[tuple]:
    """``("step", j)`` for the step ``value`` (added to ``steps`` if new), or
    None when it is no positive number (the usual translation reports it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    step = to_fraction(value)
    if step not in steps:
        steps.append(step)
    return ("step", steps.index(step))


def _holds(formula: tuple, flags: tuple[bool, ...]) -> bool:
    """Whether ``formula`` holds for a number whose multiples flags are ``flags``."""
    kind, argument = formula
    if kind == "step":
        return flags[argument]
    if kind == "not":
        return not _holds(argument, flags)
    verdicts = [_holds(member, flags) for member in argument]
    if kind == "all":
        return all(verdicts)
    if kind == "any":
        return any(verdicts)
    return verdicts.count(True) == 1
