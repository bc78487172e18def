"""Nodes for ``type: number`` / ``type: integer``: bounds and ``multipleOf``.

What it computes: the grammar node for a number or integer under a schema's
``minimum``/``maximum``/``exclusive*`` (draft-4 boolean flags included) and
``multipleOf`` keywords.  Bounds alone become one regex (``numbers.py``);
``non_integer_node`` is the numbers within bounds that are not integers
(``not: {type: integer}`` beside ``number``).

``multipleOf s`` with ``s = p/q`` in lowest terms and ``q`` dividing
``10^m`` (every decimal step: 3, 0.01, 1.5, 0.125): a number ``x`` is a
multiple iff it has at most ``m`` significant fraction digits and the
integer ``X = x * 10^m`` is divisible by ``K = p * 10^m / q``.  That is a
remainder automaton over the digits, written as right-linear rules:

    I_r     integer part read so far has remainder r (mod K)
    D_r,j   after ".", j fraction digits read (j <= m), a digit is required
    E_r,j   same, the number may end here

with ``I_r``/``E_r,j`` ending when ``r * 10^(m-j) = 0 (mod K)``; past ``m``
fraction digits only zeros may follow (``_Remainders``, read byte by byte,
with a start state, the sign and a lone ``0`` integer part as extra states).
Several steps in one allOf merge to their least common multiple
(``merge.py``).  With bounds, multiples are listed when there are at most
``MAX_ENUMERATED_MULTIPLES`` of them; otherwise the remainder automaton is
run in product with the DFA of the bounds' plain-decimal regex
(``numbers.decimal_range``, or ``numbers.integer_regex`` for integers),
states reachable from the start and trimmed to those from which a literal
can still end (``_product_rules``): O(K * m * bound states) rules, capped at
MAX_PRODUCT_STATES.  Past MAX_REMAINDER_STATES remainder states
(``K * (m + 1)``) the automaton is built as arrays (up to
MAX_REMAINDER_BUILD states) and minimized (``remainder_classes``: remainders
that differ by a multiple of K's factor prime to ten are equivalent unless
the last digits tell them apart); beyond MAX_REMAINDER_STATES classes, past
the build, and for steps whose denominator does not divide a power of ten,
``multipleOf`` is warned about and not enforced.
Without bounds the product has no bound DFA.  Integers: a step ``p/q``
means multiples of ``p``; a step of 1 is the integer regex.

Excluded steps (``values.NOT_MULTIPLES``, the complement of ``not:
{multipleOf: s}``): the numbers that are multiples of none of them (and of
``multipleOf``, if any).  Listed and filtered when the bounds hold few
candidates, as above; otherwise the same automaton modulo the least common
multiple of every step's ``K`` accepts ``X`` divisible by ``multipleOf``'s
``K`` and by no excluded one, and, for numbers without ``multipleOf``, a
literal with a non-zero digit past the finest step's places (a multiple of
no step).  Past the same limits the exclusion is warned about and dropped.

Sets of remainders (``remainder_set_node``, for ``multiple_formulas``): the
numbers whose flags "a multiple of step j" satisfy a boolean function, the
same automaton modulo the steps' least common multiple accepting the
remainders whose flags it accepts (and state ``F`` when it accepts a
multiple of no step); past the same limits None, nothing warned.

Invariant: the node accepts exactly the literals (plain decimals, ``-0``,
zero padding; no exponent forms) whose value is a multiple of the step
and of no excluded step within the bounds (for a set of remainders: whose
flags the function accepts).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any, Callable, Optional

import numpy as np

from grammask.errors import LimitExceeded
from grammask.grammar.ast import RuleRef
from grammask.json_schema import numbers
from grammask.json_schema.builder import NEVER, co_reachable
from grammask.json_schema.numbers import MAX_ENUMERATED_MULTIPLES, Bound
from grammask.json_schema.remainder_classes import minimal_remainders, plain_size
from grammask.json_schema.values import NOT_MULTIPLES, number_literal_regex
from grammask.terminals import compile_regex

MAX_REMAINDER_STATES = 4000
MAX_STEP_DECIMALS = 12
MAX_PRODUCT_STATES = 20_000
MAX_REMAINDER_BUILD = 120_000
"""States of a plain remainder automaton built as arrays to be minimized
(``remainder_classes``) when ``K * (m + 1)`` passes ``MAX_REMAINDER_STATES``
(allany8: 72,077 states, 3,076 classes, in about 0.25 s)."""


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
        step = numbers.to_fraction(step)
    if schema.get(NOT_MULTIPLES):
        excluded = [numbers.to_fraction(other) for other in schema[NOT_MULTIPLES]]
        node = _excluding_multiples(translator, step, excluded, low, high, integer, pointer)
        if node is not None:
            return node
    if step is not None:
        node = _multiple_of(translator, step, low, high, integer, pointer)
        if node is not None:
            return node
    regex = numbers.integer_regex(low, high, translator.integer_zero_fraction) if integer \
        else numbers.number_regex(low, high)
    if regex is None:
        return NEVER
    if not integer and low is None and high is None:
        return translator.generic("number")
    return translator.rx(regex)


def non_integer_node(translator, schema: dict, pointer: str) -> Any:
    """The numbers of ``schema`` (bounds only) that are not integers: the
    bounds' regex intersected with ``numbers.non_integer_regex``; None
    beside ``multipleOf`` or excluded multiples (the caller warns)."""
    if "multipleOf" in schema or NOT_MULTIPLES in schema:
        return None
    low, high = read_bounds(translator, schema, pointer)
    non_integer = numbers.non_integer_regex(translator.integer_zero_fraction)
    if low is None and high is None:
        return translator.rx(non_integer)
    regex = numbers.number_regex(low, high)
    return NEVER if regex is None else translator.rx_all([regex, non_integer])


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
            return _listed(translator, [v for v in values if _inside(v, low, high)], integer)
    if step == 1 and (low is not None or high is not None):
        # A number that is a multiple of 1 is an integer: the bounded
        # integer regex, with its optional ".0" fraction, is exact.
        regex = numbers.integer_regex(low, high, True)
        return NEVER if regex is None else translator.rx(regex)
    decimal = _decimal_moduli([step])
    if decimal is None:
        translator.warn("multipleOf", pointer, f"multipleOf {step} is not a decimal "
                                               f"step: not enforced")
        return None
    n_places, (modulus,) = decimal
    fraction_allowed = not integer or translator.integer_zero_fraction
    automaton = _automaton(_Remainders(modulus, n_places, fraction_allowed, required=modulus))
    if automaton is None:
        translator.warn("multipleOf", pointer, f"multipleOf {step} needs {modulus} remainders "
                                               f"(> {MAX_REMAINDER_STATES}): not enforced")
        return None
    if low is None and high is None and modulus == 1:
        if n_places:
            return translator.rx(numbers.decimal_places_regex(n_places))
        return translator.rx(numbers.integer_regex(None, None, fraction_allowed))
    bounds = _bounds_regex(low, high, integer, fraction_allowed)
    if bounds is NEVER:
        return NEVER
    node = _product_rules(translator, automaton, bounds, f"multiple_of_{float(step)}")
    if node is None:
        translator.warn("multipleOf", pointer, f"multipleOf {step} within the bounds needs "
                                               f"more than {MAX_PRODUCT_STATES} states: not "
                                               f"enforced")
    return node


def _decimal_moduli(steps: list[Fraction]) -> Optional[tuple[int, list[int]]]:
    """(decimal places, each step's ``K``): the fewest decimal places on which
    every step is a whole number of units, and each step in those units;
    None when one needs more than ``MAX_STEP_DECIMALS`` (not a decimal step)."""
    n_places = 0
    while any((10 ** n_places) % step.denominator for step in steps):
        n_places += 1
        if n_places > MAX_STEP_DECIMALS:
            return None
    return n_places, [step.numerator * (10 ** n_places // step.denominator) for step in steps]


def _bounds_regex(low, high, integer: bool, fraction_allowed: bool):
    """The regex of the numbers within the bounds (integers with ``integer``,
    a ``.0`` fraction with ``fraction_allowed``): None without bounds,
    ``NEVER`` when no number lies within them."""
    if low is None and high is None:
        return None
    bounds = numbers.integer_regex(low, high, fraction_allowed) if integer else numbers.decimal_range(low, high)
    return NEVER if bounds is None else bounds


def _excluding_multiples(translator, step: Optional[Fraction], excluded: list[Fraction], low, high,
                         integer: bool, pointer: str):
    """The node for the numbers in the bounds that are multiples of ``step``
    (None: any) and of none of ``excluded`` (``NOT_MULTIPLES``), or None
    after a warning (the exclusion is then dropped).  Within bounds that
    hold at most ``MAX_ENUMERATED_MULTIPLES`` multiples of ``step`` (of 1
    for integers) they are listed and filtered; otherwise one remainder
    automaton modulo the least common multiple of every step's ``K``, on
    the decimal places of the finest step; without ``step``, a number with
    a non-zero digit past those places is a multiple of no step (state
    ``F``)."""
    if integer:  # an integer is a multiple of p/q iff it is one of p
        step = None if step is None else Fraction(step.numerator)
        excluded = [Fraction(other.numerator) for other in excluded]
    unit = Fraction(1) if step is None and integer else step
    if unit is not None and low is not None and high is not None:
        first, last = math.ceil(low.value / unit), math.floor(high.value / unit)
        if last - first < MAX_ENUMERATED_MULTIPLES:
            return _listed(translator, [unit * k for k in range(first, last + 1)
                                        if _inside(unit * k, low, high)
                                        and all(unit * k % other for other in excluded)],
                           integer)
    steps = ([] if step is None else [step]) + excluded
    decimal = _decimal_moduli(steps)
    if decimal is None:
        translator.warn("not", pointer, "a multipleOf step is not a decimal step: its "
                                        "multiples are not excluded")
        return None
    n_places, moduli = decimal
    modulus = math.lcm(*moduli)
    fraction_allowed = not integer or translator.integer_zero_fraction
    parameters = (modulus, n_places, fraction_allowed, None if step is None else moduli[0],
                  tuple(moduli[len(steps) - len(excluded):]), not integer and step is None)
    automaton = _automaton(_Remainders(*parameters))
    if automaton is None:
        translator.warn("not", pointer, f"excluding multiples needs {modulus} remainders "
                                        f"(> {MAX_REMAINDER_STATES}): not excluded")
        return None
    bounds = _bounds_regex(low, high, integer, fraction_allowed)
    if bounds is NEVER:
        return NEVER
    key = ("not_multiple", parameters, bounds)
    if key not in translator.shared_rules:
        node = _product_rules(translator, automaton, bounds, "not_multiple")
        translator.shared_rules[key] = node.name if isinstance(node, RuleRef) else node
    name = translator.shared_rules[key]
    node = RuleRef(name) if isinstance(name, str) else name
    if node is None:
        translator.warn("not", pointer, f"excluding multiples within the bounds needs more "
                                        f"than {MAX_PRODUCT_STATES} states: not excluded")
    return node


def remainder_set_node(translator, schema: dict, steps: list[Fraction],
                       holds: Callable[[tuple[bool, ...]], bool], integer: bool,
                       pointer: str) -> Any:
    """The numbers (integers with ``integer``) within ``schema``'s bounds
    whose divisibility by ``steps`` satisfies ``holds``, a function of one
    flag per step (whether the number is a multiple of it): one remainder
    automaton modulo the least common multiple of the steps' ``K``, which
    accepts the remainders whose flags ``holds`` accepts, and, for
    numbers, a literal with a non-zero digit past the finest step's places
    when ``holds`` accepts no step at all.  None (nothing warned: the
    caller translates the schema another way) for a step that is not a
    decimal step and past ``MAX_REMAINDER_BUILD``, ``MAX_REMAINDER_STATES``
    (classes, ``_automaton``) or ``MAX_PRODUCT_STATES``."""
    low, high = read_bounds(translator, schema, pointer)
    if integer:  # an integer is a multiple of p/q iff it is one of p
        steps = [Fraction(step.numerator) for step in steps]
    decimal = _decimal_moduli(steps)
    if decimal is None:
        return None
    n_places, moduli = decimal
    modulus = math.lcm(*moduli) if moduli else 1
    if plain_size(modulus, n_places) > MAX_REMAINDER_BUILD:
        return None
    verdicts: dict[tuple[bool, ...], bool] = {}
    residues = []
    for remainder in range(modulus):
        flags = tuple(remainder % each == 0 for each in moduli)
        if flags not in verdicts:
            verdicts[flags] = holds(flags)
        if verdicts[flags]:
            residues.append(remainder)
    finer = not integer and holds((False,) * len(moduli))
    fraction_allowed = not integer or translator.integer_zero_fraction
    bounds = _bounds_regex(low, high, integer, fraction_allowed)
    if bounds is NEVER:
        return NEVER
    if not residues and not finer:
        return NEVER
    automaton = _automaton(_Remainders(modulus, n_places, fraction_allowed, None, finer=finer,
                                       residues=frozenset(residues)))
    if automaton is None:
        return None
    return _product_rules(translator, automaton, bounds, "multiple_set")


def _automaton(plain: "_Remainders"):
    """``plain`` when it has at most ``MAX_REMAINDER_STATES`` remainder
    states (``K * (m + 1)``), else its minimal form (``remainder_classes``)
    when the plain arrays have at most ``MAX_REMAINDER_BUILD`` states and
    it at most ``MAX_REMAINDER_STATES`` classes, else None."""
    if plain.modulus * (plain.n_places + 1) <= MAX_REMAINDER_STATES:
        return plain
    if plain_size(plain.modulus, plain.n_places) > MAX_REMAINDER_BUILD:
        return None
    return _minimal(*plain.parameters)


@functools.lru_cache(maxsize=16)
def _minimal(*parameters):
    """The minimal form of ``_Remainders(*parameters)``, or None past
    ``MAX_REMAINDER_STATES`` classes; kept for 16 parameter sets (a schema
    may exclude the same steps in many places; allany8's takes 0.25 s)."""
    minimal = minimal_remainders(_Remainders(*parameters), NUMBER_BYTES)
    return minimal if minimal.n_states <= MAX_REMAINDER_STATES else None


def _listed(translator, values: list[Fraction], integer: bool) -> Any:
    """The alternation of the literals of ``values`` (NEVER if empty)."""
    if not values:
        return NEVER
    if integer and not translator.integer_zero_fraction:
        return translator.alt([translator.rx(numbers.integer_range(int(v), int(v)))
                               for v in values])
    return translator.alt([translator.rx(number_literal_regex(v)) for v in values])


class _Remainders:
    """The remainder automaton of the module docstring, one byte at a time.

    States are ``(kind, remainder, n_read)``: ``S`` start, ``M`` after the
    minus sign, ``Z`` integer part ``0``, ``I``/``D``/``E`` as in the module
    docstring, and ``F`` (only with ``finer``) after a non-zero digit past
    ``n_places``.  A number ends accepted when its scaled value ``X``
    (module docstring) is divisible by ``required`` (None: always) and by
    none of ``excluded``, or, given ``residues``, when ``X`` mod ``modulus``
    is one of them; ``F`` always ends accepted.  ``step`` returns None
    where no accepted number can continue."""

    START = ("S", 0, 0)

    def __init__(self, modulus: int, n_places: int, fraction_allowed: bool,
                 required: Optional[int], excluded: tuple[int, ...] = (), finer: bool = False,
                 residues: Optional[frozenset[int]] = None):
        self.modulus = modulus
        self.n_places = n_places
        self.fraction_allowed = fraction_allowed
        self.required = required
        self.excluded = excluded
        self.finer = finer
        self.residues = residues
        self.parameters = (modulus, n_places, fraction_allowed, required, excluded, finer,
                           residues)
        """What identifies the automaton (``_product_rules`` memoizes by it)."""

    def step(self, state: tuple, byte: int) -> Optional[tuple]:
        kind, remainder, n_read = state
        digit = byte - 0x30 if 0x30 <= byte <= 0x39 else None
        if kind in ("S", "M"):
            if kind == "S" and byte == 0x2D:
                return ("M", 0, 0)
            if digit is None:
                return None
            return ("Z", 0, 0) if digit == 0 else ("I", digit % self.modulus, 0)
        if kind in ("Z", "I"):
            if byte == 0x2E:
                return ("D", remainder, 0) if self.fraction_allowed else None
            if kind == "I" and digit is not None:
                return ("I", (remainder * 10 + digit) % self.modulus, 0)
            return None
        if digit is None:
            return None
        if kind == "F":
            return state
        if n_read < self.n_places:
            return ("E", (remainder * 10 + digit) % self.modulus, n_read + 1)
        if digit == 0:
            return ("E", remainder, n_read)
        return ("F", 0, n_read) if self.finer else None

    def scaled_accepted(self, scaled):
        """``accepts``' verdict on an integer numpy array of scaled values
        (``remainder_classes`` builds the automaton as arrays)."""
        if self.residues is not None:
            return np.isin(scaled, np.fromiter(self.residues, dtype=np.int64, count=len(self.residues)))
        verdict = np.ones(len(scaled), dtype=bool) if self.required is None \
            else scaled % self.required == 0
        for other in self.excluded:
            verdict &= scaled % other != 0
        return verdict

    def accepts(self, state: tuple) -> bool:
        kind, remainder, n_read = state
        if kind in ("S", "M", "D"):
            return False
        if kind == "F":
            return True
        scaled = remainder * 10 ** (self.n_places - n_read) % self.modulus
        if self.residues is not None:
            return scaled in self.residues
        return (self.required is None or scaled % self.required == 0) and all(
            scaled % other for other in self.excluded)


NUMBER_BYTES = b"-.0123456789"


def _product_rules(translator, automaton: _Remainders, bounds: Optional[str], hint: str):
    """Right-linear rules for the literals both ``automaton`` and the regex
    ``bounds`` (None: no bounds) accept: the product of the two automata,
    byte by byte, trimmed to the states from which a literal can still end
    (so every prefix the grammar allows can be completed).  None when the
    product has more than ``MAX_PRODUCT_STATES`` states.  Memoized per
    translation (``translator.remainder_products``)."""
    key = (automaton.parameters, bounds)
    if key not in translator.remainder_products:
        translator.remainder_products[key] = _new_product_rules(translator, automaton, bounds,
                                                                hint)
    return translator.remainder_products[key]


def _new_product_rules(translator, automaton, bounds: Optional[str], hint: str):
    """``_product_rules``' node, defining its rules.  The product is
    searched over integer ids: each remainder state's and each bound
    state's successors on ``NUMBER_BYTES`` are computed once, and a
    product state is the pair's number (``remainder id * bound states +
    bound state``); equal byte classes share one regex node."""
    dfa = None if bounds is None else compile_regex(bounds)
    n_bound = 1 if dfa is None else dfa.n_states
    remainder_ids = {automaton.START: 0}
    remainders = [automaton.START]
    remainder_moves: list[tuple] = []     # per remainder id: successor id per byte, -1 for none
    bound_moves: dict = {}                # per bound state: successor per byte, None for none
    start = 0 if dfa is None else dfa.start
    index = {start: 0}
    order = [start]
    edges: list[list[tuple[int, int]]] = []
    for state in order:
        remainder_id, bound_state = divmod(state, n_bound)
        while len(remainder_moves) <= remainder_id:
            moves = []
            for byte in NUMBER_BYTES:
                following = automaton.step(remainders[len(remainder_moves)], byte)
                if following is None:
                    moves.append(-1)
                    continue
                if following not in remainder_ids:
                    remainder_ids[following] = len(remainders)
                    remainders.append(following)
                moves.append(remainder_ids[following])
            remainder_moves.append(tuple(moves))
        bounds_after = bound_moves.get(bound_state)
        if bounds_after is None:
            bounds_after = bound_moves[bound_state] = tuple(
                0 if dfa is None else dfa.step(bound_state, byte) or None for byte in NUMBER_BYTES)
        out = []
        for byte, next_remainder, next_bound in zip(NUMBER_BYTES, remainder_moves[remainder_id],
                                                    bounds_after):
            if next_remainder < 0 or next_bound is None:
                continue
            target = next_remainder * n_bound + next_bound
            found = index.get(target)
            if found is None:
                if len(order) >= MAX_PRODUCT_STATES:
                    return None
                found = index[target] = len(order)
                order.append(target)
            out.append((byte, found))
        edges.append(out)
    accepting = [automaton.accepts(remainders[remainder_id])
                 and (dfa is None or dfa.is_accepting(bound_state))
                 for remainder_id, bound_state in (divmod(state, n_bound) for state in order)]
    live = co_reachable({state: [target for _, target in out] for state, out in enumerate(edges)},
                        [state for state, flag in enumerate(accepting) if flag])
    if 0 not in live:
        return NEVER
    # A literal may end after a byte that reaches an accepting state: that
    # byte alone is an alternative too, and a rule is made only for states
    # with live moves, so no rule derives the empty string and
    # normalization has no empty alternatives to eliminate.  The start
    # never accepts (a number has a byte), so being live it has live moves.
    moving = {state_id for state_id in live
              if any(target in live for _, target in edges[state_id])}
    prefix = translator.fresh_name(hint)
    names = {}
    for state_id in sorted(moving):
        names[state_id] = f"{prefix}_{state_id}"
        translator.used_names.add(names[state_id])
    class_nodes: dict[tuple, Any] = {}
    for state_id in sorted(moving):
        by_target: dict[int, list[int]] = {}
        for byte, target in edges[state_id]:
            if target in live:
                by_target.setdefault(target, []).append(byte)
        alternatives = []
        for target, byte_list in by_target.items():
            key = tuple(byte_list)
            node = class_nodes.get(key)
            if node is None:
                node = class_nodes[key] = translator.rx(_byte_class(byte_list))
            else:
                translator.count()
            if accepting[target]:
                alternatives.append(node)
            if target in moving:
                alternatives.append(translator.seq(node, RuleRef(names[target])))
        translator.define(names[state_id], translator.alt(alternatives))
    return RuleRef(names[0])


def _byte_class(byte_list: list[int]) -> str:
    """A regex for one of the given bytes (digits, ``-`` and ``.`` only)."""
    text = "".join("\\" + chr(b) if b in (0x2D, 0x2E) else chr(b) for b in byte_list)
    return text if len(byte_list) == 1 else f"[{text}]"
