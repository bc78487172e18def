"""Nodes for ``type: number`` / ``type: integer``: bounds and ``multipleOf``.

What it computes: the grammar node for a number or integer under a schema's
``minimum``/``maximum``/``exclusive*`` (draft-4 boolean flags included) and
``multipleOf`` keywords.  Bounds alone become one regex (``numbers.py``).

``multipleOf s`` with ``s = p/q`` in lowest terms and ``q`` dividing
``10^m`` (every decimal step: 3, 0.01, 1.5, 0.125): a number ``x`` is a
multiple iff it has at most ``m`` significant fraction digits and the
integer ``X = x * 10^m`` is divisible by ``K = p * 10^m / q``.  That is a
remainder automaton over the digits, written as right-linear rules:

    I_r     integer part read so far has remainder r (mod K)
    D_r,j   after ".", j fraction digits read (j <= m), a digit is required
    E_r,j   same, the number may end here

with ``I_r``/``E_r,j`` ending when ``r * 10^(m-j) = 0 (mod K)``; past ``m``
fraction digits only zeros may follow.  Rules: O(K * m), built for reachable
states only, capped at MAX_REMAINDER_STATES.  Several steps in one allOf
merge to their least common multiple (``merge.py``).  With bounds,
multiples are listed when there are at most ``MAX_ENUMERATED_MULTIPLES`` of
them, else ``multipleOf`` is not enforced (a warning).  Integers: a step
``p/q`` means multiples of ``p``.

Invariant: the node accepts exactly the literals (plain decimals, ``-0``,
zero padding; no exponent forms) whose value is a multiple of the step
within the bounds.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from grammask.errors import LimitExceeded
from grammask.grammar.ast import RuleRef
from grammask.json_schema import numbers
from grammask.json_schema.builder import NEVER
from grammask.json_schema.numbers import MAX_ENUMERATED_MULTIPLES, Bound
from grammask.json_schema.values import number_literal_regex

MAX_REMAINDER_STATES = 4000
MAX_STEP_DECIMALS = 12


def read_bounds(translator, schema: dict, pointer: str) -> tuple[Optional[Bound], Optional[Bound]]:
    low = high = None
    for keyword, strict, is_low in (("minimum", False, True), ("exclusiveMinimum", True, True),
                                    ("maximum", False, False), ("exclusiveMaximum", True, False)):
        if keyword not in schema:
            continue
        value = schema[keyword]
        if keyword in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            continue  # draft 4: a flag on minimum/maximum, read below
        if keyword in ("minimum", "maximum"):
            strict = schema.get("exclusiveMinimum" if is_low else "exclusiveMaximum") is True
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise translator.error(pointer, f"{keyword} must be a number")
        bound = Bound(numbers.to_fraction(value), strict)
        n_digits = numbers.significant_digits(bound.value)
        if n_digits > numbers.MAX_SIGNIFICANT_DIGITS:
            raise LimitExceeded("MAX_SIGNIFICANT_DIGITS", n_digits, numbers.MAX_SIGNIFICANT_DIGITS,
                                f"{keyword} at #{pointer}")
        if is_low:
            if low is None or bound.value > low.value or (bound.value == low.value and strict):
                low = bound
        elif high is None or bound.value < high.value or (bound.value == high.value and strict):
            high = bound
    return low, high


def number_node(translator, schema: dict, pointer: str, integer: bool) -> Any:
    low, high = read_bounds(translator, schema, pointer)
    step = schema.get("multipleOf")
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, (int, float)) or step <= 0:
            raise translator.error(pointer, "multipleOf must be a positive number")
        node = _multiple_of(translator, numbers.to_fraction(step), low, high, integer, pointer)
        if node is not None:
            return node
    regex = numbers.integer_regex(low, high, translator.integer_zero_fraction) if integer \
        else numbers.number_regex(low, high)
    if regex is None:
        return NEVER
    if not integer and low is None and high is None:
        return translator.generic("number")
    return translator.rx(regex)


def _inside(value: Fraction, low: Optional[Bound], high: Optional[Bound]) -> bool:
    if low is not None and (value < low.value or (low.strict and value == low.value)):
        return False
    if high is not None and (value > high.value or (high.strict and value == high.value)):
        return False
    return True


def _multiple_of(translator, step: Fraction, low, high, integer: bool, pointer: str):
    """The node for multiples of ``step`` in the bounds, or None after a warning."""
    if integer:
        step = Fraction(step.numerator)
    if step == 1 and integer:
        return None
    if low is not None and high is not None:
        first = math.ceil(low.value / step)
        last = math.floor(high.value / step)
        values = [step * k for k in range(first, last + 1)] if last - first < \
            MAX_ENUMERATED_MULTIPLES else None
        if values is not None:
            kept = [v for v in values if _inside(v, low, high)]
            if not kept:
                return NEVER
            if integer and not translator.integer_zero_fraction:
                return translator.alt([translator.rx(numbers.integer_range(int(v), int(v)))
                                       for v in kept])
            return translator.alt([translator.rx(number_literal_regex(v)) for v in kept])
    if step == 1 and (low is not None or high is not None):
        # A number that is a multiple of 1 is an integer: the bounded
        # integer regex, with its optional ".0" fraction, is exact.
        regex = numbers.integer_regex(low, high, True)
        return NEVER if regex is None else translator.rx(regex)
    if low is not None or high is not None:
        translator.warn("multipleOf", pointer, f"multipleOf {step} with bounds and more than "
                                               f"{MAX_ENUMERATED_MULTIPLES} multiples: not "
                                               f"enforced")
        return None
    n_places = 0
    while (10 ** n_places) % step.denominator != 0:
        n_places += 1
        if n_places > MAX_STEP_DECIMALS:
            translator.warn("multipleOf", pointer, f"multipleOf {step} is not a decimal "
                                                   f"step: not enforced")
            return None
    modulus = step.numerator * (10 ** n_places // step.denominator)
    if modulus * (n_places + 1) > MAX_REMAINDER_STATES:
        translator.warn("multipleOf", pointer, f"multipleOf {step} needs {modulus} remainders "
                                               f"(> {MAX_REMAINDER_STATES}): not enforced")
        return None
    fraction_allowed = not integer or translator.integer_zero_fraction
    if modulus == 1:
        if n_places:
            return translator.rx(numbers.decimal_places_regex(n_places))
        return translator.rx(numbers.integer_regex(None, None, fraction_allowed))
    return _remainder_rules(translator, modulus, n_places, float(step), fraction_allowed)


def _digit_class(digits: list[int]) -> str:
    if len(digits) == 1:
        return str(digits[0])
    return "[" + "".join(str(d) for d in digits) + "]"


def _remainder_rules(translator, modulus: int, n_places: int, step: float,
                     fraction_allowed: bool) -> Any:
    prefix = translator.fresh_name(f"multiple_of_{step}")
    names: dict[tuple, str] = {}
    bodies: dict[tuple, list] = {}

    def transitions(state: tuple) -> list[tuple[list[int], tuple]]:
        kind, remainder, n_read = state
        targets: dict[tuple, list[int]] = {}
        if kind == "I":
            for digit in range(10):
                targets.setdefault(("I", (remainder * 10 + digit) % modulus, 0), []).append(digit)
        elif n_read < n_places:
            for digit in range(10):
                target = ("E", (remainder * 10 + digit) % modulus, n_read + 1)
                targets.setdefault(target, []).append(digit)
        else:
            targets[("E", remainder, n_places)] = [0]
        return [(digits, target) for target, digits in targets.items()]

    def may_end(state: tuple) -> bool:
        kind, remainder, n_read = state
        if kind == "D":
            return False
        return remainder * 10 ** (n_places - n_read) % modulus == 0

    start_states = {}
    for digit in range(1, 10):
        start_states.setdefault(("I", digit % modulus, 0), []).append(digit)
    pending = list(start_states) + ([("D", 0, 0)] if fraction_allowed else [])
    while pending:
        state = pending.pop()
        if state in names:
            continue
        names[state] = f"{prefix}_{state[0].lower()}{state[1]}_{state[2]}"
        translator.used_names.add(names[state])
        edges = transitions(state)
        if state[0] == "I" and fraction_allowed:
            edges = edges + [(None, ("D", state[1], 0))]
        bodies[state] = edges
        pending.extend(target for _, target in edges if target not in names)
        if len(names) > MAX_REMAINDER_STATES:
            raise LimitExceeded("MAX_REMAINDER_STATES", len(names), MAX_REMAINDER_STATES,
                                "multipleOf remainder automaton")
    for state, edges in bodies.items():
        alternatives = [translator.seq()] if may_end(state) else []
        for digits, target in edges:
            head = translator.lit(".") if digits is None else translator.rx(_digit_class(digits))
            alternatives.append(translator.seq(head, RuleRef(names[target])))
        translator.define(names[state], translator.alt(alternatives))
    zero = translator.lit("0")
    if fraction_allowed:
        zero = translator.seq(zero, translator.repeat(
            translator.seq(translator.lit("."), RuleRef(names["D", 0, 0])), 0, 1))
    first = translator.alt([zero] + [
        translator.seq(translator.rx(_digit_class(digits)), RuleRef(names[state]))
        for state, digits in start_states.items()])
    return translator.seq(translator.repeat(translator.lit("-"), 0, 1), first)
