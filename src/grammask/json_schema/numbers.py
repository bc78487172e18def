"""Regexes for JSON numbers and integers with exact bounds (minimum/maximum/exclusive*).

What it computes: regex text (Rust/Python common syntax, see ``regex_text``)
for the JSON number literals whose *value* lies in an interval, built by
digit-range construction, so a bound such as ``maximum: 9007199254740993`` or
``exclusiveMinimum: 2.5`` is exact (no 16-digit cap: docs/design.md section 10).

Data layout: a bound is a ``Bound(value: Fraction, strict: bool)``; ``None``
means unbounded on that side.  Bounds come from JSON numbers (ints or floats)
and are converted through ``Fraction(Decimal(repr(x)))`` so ``0.1`` is the
decimal one tenth, as written in the schema.

Representation rules (documented choices, all sound: never accepting a
number outside the interval):

- integers: ``-?(0|[1-9][0-9]*)`` optionally followed by ``.0+`` (JSON
  Schema since draft 6 counts ``1.0`` as an integer; draft 4 does not, and
  the caller turns it off); ``-0`` is zero.  No exponent form.
- numbers without bounds, or whose finite bounds are all zero: the full JSON
  grammar including exponents (the sign and a non-zero mantissa decide).
- numbers with a non-zero bound: plain decimals, plus exponent spellings
  with a normalized mantissa (``d.ddd e k``, what ``json.dumps`` writes)
  whose whole decade lies inside the bounds (``exponent_forms``); deciding
  ``x >= c`` on arbitrary ``m e k`` forms is not a regular language.

Invariants: every regex returned matches only literals whose value is inside
the interval, and every plain decimal (integer) literal inside it; ``None`` is
returned for an empty interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Optional

from grammask.json_schema.regex_text import alternation, fixed_width_range

INT_BODY = "(?:0|[1-9][0-9]*)"
FRACTION_ANY = "(?:\\.[0-9]+)?"
EXPONENT = "(?:[eE][+\\-]?[0-9]+)?"
INTEGER_ZERO_FRACTION = "(?:\\.0+)?"
NUMBER = f"-?{INT_BODY}{FRACTION_ANY}{EXPONENT}"

MAX_NON_INTEGER_EXPONENT = 16
"""``non_integer_regex``: the largest positive exponent spelled (``json.dumps``
writes non-integers with positive exponents never: floats from 1e16 up are
integers)."""

MAX_SIGNIFICANT_DIGITS = 64
"""Bounds with more significant digits than this are refused (LimitExceeded upstream)."""


@dataclass(frozen=True)
class Bound:
    value: Fraction
    strict: bool


def non_integer_regex(zero_fraction_is_integer: bool) -> str:
    """JSON number literals whose value is not an integer.  Without
    ``zero_fraction_is_integer`` (drafts 3 and 4) every literal with a
    fraction or an exponent (exact).  Otherwise, the literals whose value is
    decided by the spelling alone (the integer part I, fraction F, exponent
    k): F holding a non-zero digit, without exponent or with a negative
    one; a one-digit non-zero I (fraction optional) with a negative
    exponent (the value lies strictly between 0 and 1 in size); and for k
    from 0 to ``MAX_NON_INTEGER_EXPONENT``, F holding a non-zero digit past
    its first k digits.  Sound (only non-integers), and holding every
    non-integer that ``json.dumps`` writes; a non-integer spelled otherwise
    (``125e-1``, or with an exponent above the maximum) is refused, as the
    bounded number regexes refuse unnormalized exponent forms."""
    if not zero_fraction_is_integer:
        return f"-?{INT_BODY}(?:\\.[0-9]+(?:[eE][+\\-]?[0-9]+)?|[eE][+\\-]?[0-9]+)"
    nonzero_fraction = "\\.[0-9]*[1-9][0-9]*"
    forms = [f"{nonzero_fraction}(?:[eE]-[0-9]+)?"]
    forms.extend(f"\\.[0-9]{{{k}}}[0-9]*[1-9][0-9]*[eE]\\+?0*{k}"
                 for k in range(MAX_NON_INTEGER_EXPONENT + 1))
    return f"-?(?:{INT_BODY}(?:{'|'.join(forms)})|[1-9](?:\\.[0-9]+)?[eE]-0*[1-9][0-9]*)"


def to_fraction(number) -> Fraction:
    """A JSON number as an exact fraction of its decimal text."""
    if isinstance(number, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(number, int):
        return Fraction(number)
    if isinstance(number, float):
        if not math.isfinite(number):
            raise ValueError(f"non-finite bound {number!r}")
        return Fraction(Decimal(repr(number)))
    if isinstance(number, Decimal):
        return Fraction(number)
    if isinstance(number, Fraction):
        return number
    raise TypeError(f"not a number: {number!r}")


def significant_digits(value: Fraction) -> int:
    """Digits of the decimal expansion of a bound (inf for non-terminating ones)."""
    text = decimal_digits(value)
    if text is None:
        return MAX_SIGNIFICANT_DIGITS + 1
    integer_part, fraction_part = text
    return len(str(integer_part).lstrip("0").rstrip("0")) + len(fraction_part)


def decimal_digits(value: Fraction) -> Optional[tuple[int, str]]:
    """(integer part, fraction digits without trailing zeros) of a non-negative
    terminating decimal, or None when the expansion does not terminate."""
    denominator = value.denominator
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    if denominator != 1:
        return None
    n_digits = max(twos, fives)
    integer_part = value.numerator // value.denominator
    remainder = value - integer_part
    scaled = remainder * 10 ** n_digits
    fraction = str(int(scaled)).rjust(n_digits, "0") if n_digits else ""
    return integer_part, fraction.rstrip("0")


# ------------------------------------------------------------------ integers

def nonnegative_integer_range(lo: int, hi: Optional[int]) -> Optional[str]:
    """Canonical decimal literals (no leading zeros) of integers in [lo, hi], lo >= 0."""
    if hi is not None and hi < lo:
        return None
    lo_len = len(str(lo))
    branches = []
    full_run: list[int] = []

    def flush_full_run() -> None:
        if full_run:
            first, last = full_run[0] - 1, full_run[-1] - 1
            count = f"{{{first}}}" if first == last else f"{{{first},{last}}}"
            branches.append(f"[1-9][0-9]{count}" if last > 0 else "[1-9]")
            full_run.clear()

    top_len = len(str(hi)) if hi is not None else lo_len
    for length in range(lo_len, top_len + 1):
        smallest = 0 if length == 1 else 10 ** (length - 1)
        largest = 10 ** length - 1
        a = max(lo, smallest)
        b = largest if hi is None else min(hi, largest)
        if length > 1 and a == smallest and b == largest:
            full_run.append(length)
            continue
        flush_full_run()
        branches.append(fixed_width_range(a, b, length))
    flush_full_run()
    if hi is None:
        branches.append(f"[1-9][0-9]{{{top_len},}}")
    return alternation(branches)


def integer_range(lo: Optional[int], hi: Optional[int]) -> Optional[str]:
    """Literals ``-?digits`` of integers in [lo, hi] (None: unbounded); ``-0`` counts as 0."""
    if lo is not None and hi is not None and hi < lo:
        return None
    branches = []
    if hi is None or hi >= 0:
        positive = nonnegative_integer_range(max(lo, 0) if lo is not None else 0, hi)
        if positive is not None:
            branches.append(positive)
    zero_inside = (lo is None or lo <= 0) and (hi is None or hi >= 0)
    if lo is None or lo < 0 or zero_inside:
        magnitude_lo = 0 if zero_inside else -hi
        magnitude_hi = None if lo is None else -lo
        negative = nonnegative_integer_range(magnitude_lo, magnitude_hi)
        if negative is not None:
            branches.append("-" + _wrap(negative))
    if not branches:
        return None
    return alternation(branches)


def _wrap(text: str) -> str:
    return text if text.startswith("(?:") and text.endswith(")") else f"(?:{text})"


def integer_bounds(low: Optional[Bound], high: Optional[Bound]) -> tuple[Optional[int], Optional[int]]:
    """Closed integer bounds equivalent to the (possibly fractional, strict) bounds."""
    lo = hi = None
    if low is not None:
        lo = math.floor(low.value) + 1 if low.strict else math.ceil(low.value)
    if high is not None:
        hi = math.ceil(high.value) - 1 if high.strict else math.floor(high.value)
    return lo, hi


def integer_regex(low: Optional[Bound], high: Optional[Bound],
                  zero_fraction: bool = True) -> Optional[str]:
    """Integer literals inside the bounds, with an optional ``.0+`` unless
    ``zero_fraction`` is False (draft 4, where 1.0 is not an integer)."""
    lo, hi = integer_bounds(low, high)
    body = integer_range(lo, hi)
    if body is None:
        return None
    return _wrap(body) + (INTEGER_ZERO_FRACTION if zero_fraction else "")


# ------------------------------------------------------------- decimal bounds
#
# Fraction digit strings ``t`` (the digits after the point, possibly absent)
# are compared as 0.t.  Each helper returns ``(accepts_empty, nonempty_regex)``
# where ``nonempty_regex`` (or None) matches the non-empty digit strings that
# satisfy the comparison.

Digits = tuple[bool, Optional[str]]


def _follow(digit: str, rest: Digits) -> Optional[str]:
    accepts_empty, regex = rest
    if regex is None:
        return digit if accepts_empty else None
    return f"{digit}(?:{regex})?" if accepts_empty else f"{digit}(?:{regex})"


def _class(lo: int, hi: int) -> Optional[str]:
    if lo > hi:
        return None
    return str(lo) if lo == hi else f"[{lo}-{hi}]"


def _combine(accepts_empty: bool, branches: list[Optional[str]]) -> Digits:
    present = [branch for branch in branches if branch is not None]
    return accepts_empty, (alternation(present) if present else None)


def _fraction_at_least(bound: str, strict: bool) -> Digits:
    if not bound:
        return (False, "0*[1-9][0-9]*") if strict else (True, "[0-9]+")
    first = int(bound[0])
    higher = _class(first + 1, 9)
    return _combine(False, [higher and higher + "[0-9]*",
                            _follow(bound[0], _fraction_at_least(bound[1:], strict))])


def _fraction_at_most(bound: str, strict: bool) -> Digits:
    if not bound:
        return (False, None) if strict else (True, "0+")
    first = int(bound[0])
    lower = _class(0, first - 1)
    return _combine(True, [lower and lower + "[0-9]*",
                           _follow(bound[0], _fraction_at_most(bound[1:], strict))])


def _fraction_between(low: str, low_strict: bool, high: str, high_strict: bool) -> Digits:
    if not low and not low_strict:
        return _fraction_at_most(high, high_strict)
    if not high:
        # 0.low (>0 here, or strict 0) against 0 from above: only equality could pass.
        return False, None
    low_first = int(low[0]) if low else 0
    high_first = int(high[0])
    if low_first == high_first:
        return _combine(False, [_follow(str(low_first),
                                        _fraction_between(low[1:], low_strict,
                                                          high[1:], high_strict))])
    middle = _class(low_first + 1, high_first - 1)
    accepts_empty = not low and not low_strict
    return _combine(accepts_empty, [
        _follow(str(low_first), _fraction_at_least(low[1:], low_strict)),
        middle and middle + "[0-9]*",
        _follow(str(high_first), _fraction_at_most(high[1:], high_strict)),
    ])


def _fraction_part(digits: Digits) -> Optional[str]:
    """Regex of the optional ``.digits`` part for a digits predicate."""
    accepts_empty, regex = digits
    if regex is None:
        return "" if accepts_empty else None
    return f"(?:\\.(?:{regex}))?" if accepts_empty else f"\\.(?:{regex})"


def _nonnegative_decimal_range(low: Bound, high: Optional[Bound]) -> Optional[str]:
    """Plain decimals ``int(.digits)?`` with value in the interval, 0 <= low."""
    low_int, low_fraction = _split(low.value)
    branches = []
    if high is None:
        first = _fraction_part(_fraction_at_least(low_fraction, low.strict))
        if first is not None:
            branches.append(str(low_int) + first)
        rest = nonnegative_integer_range(low_int + 1, None)
        branches.append(_wrap(rest) + FRACTION_ANY)
        return alternation(branches)
    if high.value < low.value or (high.value == low.value and (low.strict or high.strict)):
        return None
    high_int, high_fraction = _split(high.value)
    if low_int == high_int:
        part = _fraction_part(_fraction_between(low_fraction, low.strict,
                                                high_fraction, high.strict))
        return None if part is None else str(low_int) + part
    first = _fraction_part(_fraction_at_least(low_fraction, low.strict))
    if first is not None:
        branches.append(str(low_int) + first)
    if high_int - low_int >= 2:
        middle = nonnegative_integer_range(low_int + 1, high_int - 1)
        branches.append(_wrap(middle) + FRACTION_ANY)
    last = _fraction_part(_fraction_at_most(high_fraction, high.strict))
    if last is not None:
        branches.append(str(high_int) + last)
    return alternation(branches) if branches else None


def _split(value: Fraction) -> tuple[int, str]:
    digits = decimal_digits(value)
    if digits is None:
        raise ValueError(f"bound {value} has no finite decimal expansion")
    return digits


def decimal_range(low: Optional[Bound], high: Optional[Bound]) -> Optional[str]:
    """Plain decimal literals ``-?int(.digits)?`` whose value is inside the bounds."""
    zero = Fraction(0)
    branches = []
    # x >= 0 side.
    if high is None or high.value > zero or (high.value == zero and not high.strict):
        if low is None or low.value < zero:
            nonnegative_low = Bound(zero, False)
        else:
            nonnegative_low = low
        positive = _nonnegative_decimal_range(nonnegative_low, high)
        if positive is not None:
            branches.append(positive)
    # x <= 0 side, written -y with y >= 0 (so -0 and -0.0 are zero).
    zero_allowed = ((low is None or low.value < zero or (low.value == zero and not low.strict))
                    and (high is None or high.value > zero
                         or (high.value == zero and not high.strict)))
    if low is None or low.value < zero or zero_allowed:
        if high is not None and high.value < zero:
            magnitude_low = Bound(-high.value, high.strict)
        else:
            magnitude_low = Bound(zero, not zero_allowed)
        magnitude_high = None if low is None else Bound(-low.value, low.strict)
        negative = _nonnegative_decimal_range(magnitude_low, magnitude_high)
        if negative is not None:
            branches.append("-" + _wrap(negative))
    return alternation(branches) if branches else None


_NONZERO_MANTISSA = f"(?:[1-9][0-9]*{FRACTION_ANY}|0\\.0*[1-9][0-9]*)"
_ZERO_MANTISSA = "0(?:\\.0+)?"


def number_regex(low: Optional[Bound], high: Optional[Bound]) -> Optional[str]:
    """JSON number literals inside the bounds (see the module docstring for forms)."""
    if low is None and high is None:
        return NUMBER
    finite = [bound for bound in (low, high) if bound is not None]
    if all(bound.value == 0 for bound in finite):
        positive = f"{_NONZERO_MANTISSA}{EXPONENT}"
        zero = f"-?{_ZERO_MANTISSA}{EXPONENT}"
        negative = f"-{_NONZERO_MANTISSA}{EXPONENT}"
        allowed = {"positive": True, "zero": True, "negative": True}
        if low is not None:
            allowed["negative"] = False
            allowed["zero"] = allowed["zero"] and not low.strict
        if high is not None:
            allowed["positive"] = False
            allowed["zero"] = allowed["zero"] and not high.strict
        branches = [regex for name, regex in (("positive", positive), ("zero", zero),
                                              ("negative", negative)) if allowed[name]]
        return alternation(branches) if branches else None
    plain = decimal_range(low, high)
    scientific = exponent_forms(low, high)
    branches = [regex for regex in (plain, scientific) if regex is not None]
    return alternation(branches) if branches else None


def _exponent_bounds(low: Optional[Bound], high: Optional[Bound]):
    """The integers e such that every value of [10^e, 10^(e+1)) is inside the
    bounds, as (e_min or None, e_max or None); None when no positive value is."""
    def smallest_at_least(bound: Bound) -> int:
        exponent = math.floor(math.log10(bound.value)) - 2
        while Fraction(10) ** exponent < bound.value or (
                bound.strict and Fraction(10) ** exponent == bound.value):
            exponent += 1
        return exponent

    def largest_below(limit: Fraction) -> int:
        exponent = math.floor(math.log10(limit)) + 2
        while Fraction(10) ** (exponent + 1) > limit:
            exponent -= 1
        return exponent

    if high is not None and high.value <= 0:
        return None
    e_min = None if low is None or low.value <= 0 else smallest_at_least(low)
    e_max = None if high is None else largest_below(high.value)
    return e_min, e_max


def _signed_exponent(e_min: Optional[int], e_max: Optional[int]) -> Optional[str]:
    """Exponent digits (optional sign and leading zeros) with value in [e_min, e_max]."""
    if e_min is not None and e_max is not None and e_min > e_max:
        return None
    branches = []
    if e_max is None or e_max >= 0:
        positive = nonnegative_integer_range(max(e_min, 0) if e_min is not None else 0, e_max)
        if positive is not None:
            branches.append("\\+?0*" + _wrap(positive))
    if e_min is None or e_min < 0:
        magnitude_low = 1 if e_max is None or e_max >= 0 else -e_max
        magnitude_high = None if e_min is None else -e_min
        negative = nonnegative_integer_range(magnitude_low, magnitude_high)
        if negative is not None:
            branches.append("-0*" + _wrap(negative))
    return alternation(branches) if branches else None


def exponent_forms(low: Optional[Bound], high: Optional[Bound]) -> Optional[str]:
    """Exponent spellings ``d.ddd e k`` (one non-zero digit before the point,
    as ``json.dumps`` writes very small and very large floats) whose whole
    decade ``[10^k, 10^(k+1))`` lies inside the bounds, with either sign,
    plus zero mantissas when zero is inside.  Sound (every value matched is
    inside) and covers every normalized spelling of values not within one
    decade of a non-zero bound."""
    mantissa = "[1-9](?:\\.[0-9]+)?"
    branches = []
    mirrored_low = None if high is None else Bound(-high.value, high.strict)
    mirrored_high = None if low is None else Bound(-low.value, low.strict)
    for sign, side_low, side_high in (("", low, high), ("-", mirrored_low, mirrored_high)):
        decades = _exponent_bounds(side_low, side_high)
        exponent = None if decades is None else _signed_exponent(*decades)
        if exponent is not None:
            branches.append(f"{sign}{mantissa}[eE]{_wrap(exponent)}")
    zero = Fraction(0)
    if (low is None or low.value < zero or (low.value == zero and not low.strict)) and \
            (high is None or high.value > zero or (high.value == zero and not high.strict)):
        branches.append(f"-?{_ZERO_MANTISSA}[eE][+\\-]?[0-9]+")
    return alternation(branches) if branches else None


# ---------------------------------------------------------------- multipleOf

MAX_ENUMERATED_MULTIPLES = 256
"""Bounded multipleOf ranges with at most this many multiples are listed."""


def decimal_places_regex(n_places: int) -> str:
    """Unbounded numbers that are multiples of 10**-n_places (no exponent)."""
    return f"-?{INT_BODY}(?:\\.[0-9]{{1,{n_places}}}0*)?"
