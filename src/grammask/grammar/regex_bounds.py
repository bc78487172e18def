"""Counted repetitions of a regex, checked before its DFA is built.

What it computes
    ``check_repetitions(pattern, max_repetition, max_states)`` scans a
    Rust-syntax pattern for ``{m}``, ``{m,}`` and ``{m,n}`` quantifiers and
    raises ``LimitExceeded`` when one bound exceeds ``max_repetition``
    (``Config.max_repetition``, the same limit as a grammar's ``{m,n}``), or
    when the bounds of nested repetitions multiply past ``max_states``
    (``Config.max_dfa_states``): ``(a{0,1000}){0,1000}`` is a{0,1000000},
    whose DFA has a million states, and determinizing it would take minutes
    before the state limit is checked on the result.

Data layout
    One left-to-right pass with a stack of open groups; each group records
    the product of the counted bounds that enclose it (known once its
    quantifier is read, so the product is taken when the group closes).

Invariants
    Only quantifiers outside character classes and escapes count; a
    pattern with no ``{m...}`` text anywhere is not scanned.  A
    pattern that passes is remembered per (pattern, limits) for the process
    (4,096 entries): every grammar translated from JSON Schema checks the
    same string, number and whitespace patterns again.  A pattern that
    fails is not remembered, so it raises every time.  The
    check is conservative in one direction: it never rejects a pattern whose
    bounds are within the limits; a product over the limit can still be a
    small DFA (``(a*){0,5000}`` is ``a*``), which the message says how to
    allow.
"""

from __future__ import annotations

import functools
import re

from grammask.errors import LimitExceeded

_QUANTIFIER = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")


def _bound(match: re.Match) -> int:
    low = int(match.group(1))
    if match.group(2) and match.group(3):
        return int(match.group(3))
    return low


@functools.lru_cache(maxsize=4096)
def check_repetitions(pattern: str, max_repetition: int, max_states: int,
                      states_limit: str = "max_dfa_states") -> None:
    """Raise ``LimitExceeded`` (see the module docstring; ``states_limit``
    names the Config field ``max_states`` comes from) before a DFA is built."""
    if _QUANTIFIER.search(pattern) is None:
        return   # no counted repetition anywhere (a property-key pattern, say)
    # products[i]: product of the bounds of the groups enclosing depth i's
    # current atom; inner[i]: largest product reached inside the open group.
    inner = [1]
    last_atom_product = 1
    index = 0
    class_depth = 0
    length = len(pattern)
    while index < length:
        char = pattern[index]
        if char == "\\":
            escaped = pattern[index + 1:index + 2]
            index += 2
            if escaped in ("x", "u", "U", "p", "P") and pattern.startswith("{", index):
                closing = pattern.find("}", index)
                index = length if closing < 0 else closing + 1   # \x{10FFFF}, \p{Greek}
            last_atom_product = 1
            continue
        if class_depth:
            if char == "[":
                class_depth += 1
            elif char == "]":
                class_depth -= 1
            index += 1
            continue
        if char == "[":
            class_depth = 1
            if pattern.startswith("[^]", index) or pattern.startswith("[]", index):
                index += 1 if pattern[index + 1] == "]" else 2
            index += 1
            last_atom_product = 1
            continue
        if char == "(":
            inner.append(1)
        elif char == ")" and len(inner) > 1:
            last_atom_product = inner.pop()
            index += 1
            continue
        elif char == "{":
            match = _QUANTIFIER.match(pattern, index)
            if match:
                bound = _bound(match)
                if bound > max_repetition:
                    raise LimitExceeded("max_repetition", bound, max_repetition,
                                        f"counted repetition {match.group()} in regex {pattern[:60]!r}")
                product = last_atom_product * max(bound, 1)
                if product > max_states:
                    raise LimitExceeded(
                        states_limit, product, max_states,
                        f"nested counted repetitions in regex {pattern[:60]!r} multiply to {product} "
                        "(about that many DFA states)")
                inner[-1] = max(inner[-1], product)
                index = match.end()
                continue
        if char not in "*+?{":
            last_atom_product = 1
        index += 1
