"""Arrays: prefixItems / items (also draft-7 ``items: [...]`` + ``additionalItems``),
minItems / maxItems, ``contains`` (counted, and several at once).

Which keywords give the positions depends on the declared draft
(``keywords.array_positions``): before 2020-12 ``prefixItems`` is ignored.

What it computes: the node for ``type: array`` under a schema.

Construction: position k (0-based) uses ``prefixItems[k]`` while there is
one, then ``items`` (``true`` when absent).  A position whose schema accepts
nothing caps the length at k.  With ``E`` explicit positions (the prefix,
at least one) the content is the nested chain

    node_0 (sep node_1 (sep node_2 ... tail)?)?

where positions below ``minItems`` are not optional, and ``tail`` is
``(sep item){minItems - E, maxItems - E}`` (unbounded without ``maxItems``;
large counts by doubling, ``Translator.counted``): linear in ``E`` and
logarithmic in the counts (no 2^n expansion); a prefix longer than
MAX_EXPLICIT_POSITIONS raises LimitExceeded.  The array is ``"[" ws "]"`` (when empty is
allowed) or ``"[" ws content ws "]"``.

``contains`` with ``minContains`` k (default 1) is exact when no prefixItems,
maxItems or maxContains apply and minItems <= k:
``"[" ws (item sep)* match ((sep item)* sep match){k-1} (sep item)* ws "]"``,
``match`` being ``allOf(items, contains)``.  Any other combination
(maxContains, maxItems, minItems above minContains, prefixItems) is exact
when ``not`` is exact over the ``contains`` schema (``Translator.negatable``):
each item either matches (``allOf(position, contains)``) or fails
(``allOf(position, not contains)``), and one rule per state (matches so far
capped at maxContains, or at minContains without it; items so far capped at
maxItems, or at max(minItems, len(prefixItems)) without it) continues the
array (``_counted_contains``; states that cannot reach an accepted length
and count are dropped, so no rule is empty).  Past ``MAX_CONTAINS_STATES``
states, or when ``contains`` cannot be negated, a warning says contains is
not enforced.

Several ``contains`` (``keywords.MORE_CONTAINS``, from an ``allOf``; at
most ``MAX_MORE_CONTAINS`` beside the first, none counted) are exact by
crediting items (``_several_contains``): each item meets the schemas it is
credited with (a choice: no schema is negated), one rule per state (the
set credited so far, items so far capped as above), accepted once every
schema is credited and the length is allowed; past the caps, or beside
minContains / maxContains, the first only is enforced, warned.  Over a
finite item domain each of them is first the set of item values valid
against it, and a set holding another is dropped (``_value_sets``): a
oneOf exclusion of array branches over disjoint enums keeps one.

``uniqueItems: true`` is exact when the items have a small finite domain
(``finite_item_values``: ``const``, ``enum``, ``type`` boolean and/or null,
scalar values only, without ``prefixItems`` or ``contains``): with the k distinct values
(``values.json_equal``: 1 and 1.0 are one value, ``true`` is not 1), the
array is at most k items, each drawn from the values not used yet.  One rule
per set U of used values (U as a bit mask over the k values, |U| >= 1):

    after_U = ""                       when |U| >= minItems
            | sep value_i after_{U+i}  for each i not in U, when |U| < maxItems

and the array is ``"[" ws value_i after_{i} ws "]"`` (plus ``"[" ws "]"``
when minItems is 0).  Each value node accepts every spelling of its value
(``values.scalar_node``), so two spellings of one value cannot both
appear.  The rules are the sets of at most min(k, maxItems) values; above
``MAX_UNIQUE_SUBSETS`` of them, or for any other item schema, uniqueness is
warned about and not enforced.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from grammask.errors import LimitExceeded
from grammask.grammar.ast import CharClass, Literal, Regex, RuleRef
from grammask.json_schema.builder import NEVER
from grammask.json_schema.keywords import (
    ANNOTATION_KEYWORDS, MORE_CONTAINS, array_positions, child_pointer, count_keyword,
)
from grammask.json_schema.merge import merge_schemas
from grammask.json_schema.values import json_equal, scalar_node, simple_constraints_hold

MAX_EXPLICIT_POSITIONS = 10_000

LEAVES = (RuleRef, Literal, Regex, CharClass)
"""Nodes small enough to write twice rather than name."""

MAX_CONTAINS_STATES = 1024
"""contains with counted bounds: at most this many (matches, length) states
(one rule each)."""

MAX_MORE_CONTAINS = 3
"""Several ``contains`` (``keywords.MORE_CONTAINS``): at most this many
beside the first (2**4 = 16 sets of credited schemas per length state, a
node per set an item may be credited with, up to 16 edges per state);
past it only the first is enforced, warned (over a finite item domain
they are reduced first: ``_value_sets``)."""

MAX_UNIQUE_SUBSETS = 256
"""uniqueItems over a finite item domain: at most this many sets of used
values (one rule each; 256 is every subset of 8 values)."""


def array_node(translator, schema: dict, pointer: str) -> Any:
    prefix, prefix_keyword, items, items_keyword = array_positions(schema, translator.tuple_items)
    if not isinstance(prefix, list):
        raise translator.error(pointer, "prefixItems must be an array")
    min_items = count_keyword(translator, schema, "minItems", pointer) or 0
    max_items = count_keyword(translator, schema, "maxItems", pointer)
    if schema.get("uniqueItems") is True:
        unique = _unique_items(translator, schema, prefix, items, min_items, max_items,
                               pointer)
        if unique is not None:
            return unique
    ws = translator.ws()
    empty = translator.seq(translator.lit("["), ws, translator.lit("]"))

    if "contains" in schema:
        contained = _contains(translator, schema, prefix, items, min_items, max_items, pointer)
        if contained is not None:
            return contained

    position_nodes = []
    for index, sub in enumerate(prefix):
        if max_items is not None and index >= max_items:
            break
        node = translator.node(sub, child_pointer(pointer, prefix_keyword, index))
        if node is NEVER:
            max_items = index
            break
        position_nodes.append(node)
    item_node = translator.node(items, child_pointer(pointer, items_keyword))
    if item_node is NEVER and (max_items is None or max_items > len(position_nodes)):
        max_items = len(position_nodes)
    if max_items is not None and max_items < min_items:
        return NEVER
    if max_items == 0:
        return empty

    if not position_nodes and not isinstance(item_node, LEAVES):
        # The item is written twice (first item, then each ", item"): as one
        # rule, so arrays nested d deep stay O(d) instead of doubling per level.
        item_node = translator.define(translator.fresh_name(f"{pointer}_item"), item_node)

    def node_at(index: int):
        return position_nodes[index] if index < len(position_nodes) else item_node

    n_explicit = max(len(position_nodes), 1)
    if len(position_nodes) > MAX_EXPLICIT_POSITIONS:
        raise LimitExceeded("MAX_EXPLICIT_POSITIONS", len(position_nodes),
                            MAX_EXPLICIT_POSITIONS, f"prefixItems at #{pointer}")
    n_tail_min = max(min_items - n_explicit, 0)
    n_tail_max = None if max_items is None else max_items - n_explicit
    tail = None
    if n_tail_max is None or n_tail_max > 0:
        tail = translator.counted(translator.seq(translator.comma(), item_node), n_tail_min,
                                  n_tail_max)
    rest = tail
    for index in range(n_explicit - 1, 0, -1):
        current = translator.seq(translator.comma(), node_at(index), rest)
        if index >= min_items:
            current = translator.repeat(current, 0, 1)
        rest = current
    content = translator.seq(node_at(0), rest)
    full = translator.seq(translator.lit("["), ws, content, ws, translator.lit("]"))
    return translator.alt([empty if min_items == 0 else NEVER, full])


def _contains(translator, schema, prefix, items, min_items, max_items, pointer: str):
    """The exact ``contains`` node (module docstring: the simple form, else
    the counting rules of ``_counted_contains``), or None (contains has no
    effect, or it was warned about and is not enforced)."""
    min_contains = count_keyword(translator, schema, "minContains", pointer)
    max_contains = count_keyword(translator, schema, "maxContains", pointer)
    if MORE_CONTAINS in schema and min_contains is None and max_contains is None:
        several = _value_sets(translator, [schema["contains"]] + list(schema[MORE_CONTAINS]),
                              prefix, items)
        if several == []:
            return NEVER
        if several is not None and len(several) == 1:
            schema = {k: v for k, v in schema.items() if k != MORE_CONTAINS}
            schema["contains"] = several[0]
    if MORE_CONTAINS in schema:
        several = [schema["contains"]] + list(schema[MORE_CONTAINS])
        if min_contains is None and max_contains is None \
                and len(several) <= MAX_MORE_CONTAINS + 1:
            return _several_contains(translator, several, prefix, items, min_items, max_items,
                                     pointer)
        translator.warn("contains", pointer, f"several contains beside minContains / "
                                             f"maxContains or past MAX_MORE_CONTAINS = "
                                             f"{MAX_MORE_CONTAINS}: only "
                                             f"{schema['contains']!r} is enforced")
    if min_contains == 0 and max_contains is None:
        return None
    n_matches = 1 if min_contains is None else min_contains
    if max_contains is not None and max_contains < n_matches:
        return NEVER
    contains_pointer = child_pointer(pointer, "contains")
    simple = (not prefix and min_items <= n_matches and max_items is None
              and max_contains is None)
    if not simple:
        if not translator.negatable(schema["contains"]):
            translator.warn("contains", pointer, "combined with prefixItems, maxItems, "
                                                 "maxContains or minItems above minContains, and "
                                                 "its schema cannot be negated: not enforced")
            return None
        return _counted_contains(translator, schema, prefix, items, min_items, max_items,
                                 n_matches, max_contains, pointer)
    match = translator.node(merge_schemas(translator, [items, schema["contains"]],
                                          contains_pointer), contains_pointer)
    if match is NEVER:
        return NEVER
    item_node = translator.node(items, child_pointer(pointer, "items"))
    comma = translator.comma()
    others = translator.repeat(translator.seq(comma, item_node), 0, None)
    before = translator.repeat(translator.seq(item_node, comma), 0, None)
    more = translator.times(translator.seq(others, comma, match), n_matches - 1)
    ws = translator.ws()
    return translator.seq(translator.lit("["), ws, before, match, more, others, ws,
                          translator.lit("]"))


def _value_sets(translator, several: list, prefix: list, items: Any) -> Optional[list]:
    """Several contains over a finite item domain (``finite_item_values`` of
    ``items``, no prefix), each as the ``enum`` of the item values valid
    against it (``Translator.holds``), keeping only the minimal sets: an
    item of a set is an item of every set holding it, so a larger set adds
    nothing (a oneOf exclusion of array branches over disjoint enums,
    o62056, reduces to one set).  [] when some set is empty (no array
    meets that contains); None when the domain is not finite or a value is
    undecided."""
    values = None if prefix else finite_item_values(items)
    if values is None:
        return None
    sets = []
    for sub in several:
        verdicts = [translator.holds(sub, value) for value in values]
        if None in verdicts:
            return None
        kept = [value for value, verdict in zip(values, verdicts) if verdict]
        if not kept:
            return []
        sets.append(kept)
    minimal = []
    for index, kept in enumerate(sets):
        wider = any(all(any(json_equal(v, w) for w in kept) for v in other)
                    and (len(other) < len(kept) or (len(other) == len(kept) and other_index < index))
                    for other_index, other in enumerate(sets) if other_index != index)
        if not wider:
            minimal.append({"enum": kept})
    return minimal


def _several_contains(translator, several: list, prefix: list, items: Any, min_items: int,
                      max_items: Optional[int], pointer: str):
    """Arrays holding, for each schema of ``several``, an item valid against
    it, with between ``min_items`` and ``max_items`` items, position k
    using ``prefix[k]`` or ``items``.  An item may be credited with any set
    T of the schemas it meets (its node: its position's schema merged with
    them); one rule per state (the set credited so far, items so far capped
    as ``_counted_contains`` caps them).  Crediting is a choice, so no
    schema needs negating, and an array is accepted iff some choice credits
    every schema: exact (the parse may be ambiguous).  None (warned) past
    ``MAX_CONTAINS_STATES``."""
    everything = (1 << len(several)) - 1
    length_cap = max(min_items, len(prefix)) if max_items is None else max_items
    n_states = (everything + 1) * (length_cap + 1)
    if _past_state_limit(translator, pointer, "several contains need", n_states):
        return None
    nodes: dict[tuple[int, int], Any] = {}

    def node_at(position: int, subset: int) -> Any:
        """The node of an item at ``position`` credited with ``subset``."""
        key = (position if position < len(prefix) else -1, subset)
        if key not in nodes:
            if key[0] >= 0:
                item, item_pointer = prefix[key[0]], child_pointer(pointer, "prefixItems", key[0])
            else:
                item, item_pointer = items, child_pointer(pointer, "items")
            chosen = [sub for index, sub in enumerate(several) if subset >> index & 1]
            node = translator.node(merge_schemas(translator, [item] + chosen, item_pointer)
                                   if chosen else item, item_pointer)
            if node is not NEVER and not isinstance(node, LEAVES):
                node = translator.define(translator.fresh_name(f"{pointer}_credited"), node)
            nodes[key] = node
        return nodes[key]

    def accepts(state: tuple[int, int]) -> bool:
        return state[0] == everything and state[1] >= min_items

    def successors(state: tuple[int, int]) -> list[tuple[Any, tuple[int, int]]]:
        done, length = state
        if max_items is not None and length >= max_items:
            return []
        following = min(length + 1, length_cap)
        return [(node_at(length, subset), (done | subset, following))
                for subset in range(everything + 1)
                if not subset & done and node_at(length, subset) is not NEVER]

    return _state_rules(translator, (0, 0), successors, accepts, pointer)


def _state_rules(translator, start: Any, successors, accepts, pointer: str):
    """The array whose items walk the states from ``start``
    (``successors``: (item node, next state) pairs), accepted where
    ``accepts``: one rule per state that can still reach an accepted one;
    NEVER when ``start`` cannot."""
    states = [start]
    edges: dict[Any, list] = {}
    for state in states:
        edges[state] = successors(state)
        for _, target in edges[state]:
            if target not in states:
                states.append(target)
    live = {state for state in states if accepts(state)}
    grown = True
    while grown:
        grown = False
        for state in states:
            if state not in live and any(target in live for _, target in edges[state]):
                live.add(state)
                grown = True
    ws = translator.ws()
    empty = translator.seq(translator.lit("["), ws, translator.lit("]"))
    if start not in live:
        return NEVER
    rules: dict[Any, RuleRef] = {}
    comma = translator.comma()

    def after(state: Any) -> RuleRef:
        """The rule for the rest of an array that has reached ``state``."""
        if state not in rules:
            rules[state] = RuleRef(translator.fresh_name(f"{pointer}_contains"))
            alternatives = [translator.seq()] if accepts(state) else []
            alternatives.extend(translator.seq(comma, node, after(target))
                                for node, target in edges[state] if target in live)
            translator.define(rules[state].name, translator.alt(alternatives))
        return rules[state]

    first = translator.alt([translator.seq(node, after(target))
                            for node, target in edges[start] if target in live])
    full = translator.seq(translator.lit("["), ws, first, ws, translator.lit("]"))
    return translator.alt([empty if accepts(start) else NEVER, full])


def _counted_contains(translator, schema, prefix, items, min_items, max_items, n_min: int,
                      n_max: Optional[int], pointer: str):
    """Arrays with between ``n_min`` and ``n_max`` (None: no bound) items
    valid against ``contains`` and between ``min_items`` and ``max_items``
    items in all, position k using ``prefix[k]`` or ``items``: one rule per
    state (matches so far, items so far), both capped where larger counts
    no longer change the verdict; None (warned) past ``MAX_CONTAINS_STATES``."""
    contained = schema["contains"]
    match_cap = n_min if n_max is None else n_max
    length_cap = max(min_items, len(prefix)) if max_items is None else max_items
    n_states = (match_cap + 1) * (length_cap + 1)
    if _past_state_limit(translator, pointer, "counting matches needs", n_states):
        return None
    position_nodes: dict[int, tuple[Any, Any]] = {}

    def nodes_at(position: int) -> tuple[Any, Any]:
        """(failing contains, matching contains) nodes of an item at ``position``."""
        key = position if position < len(prefix) else -1
        if key not in position_nodes:
            if key >= 0:
                item, item_pointer = prefix[key], child_pointer(pointer, "prefixItems", key)
            else:
                item, item_pointer = items, child_pointer(pointer, "items")
            failing = translator.node({"allOf": [item], "not": contained}, item_pointer)
            matching = translator.node(merge_schemas(translator, [item, contained],
                                                     item_pointer), item_pointer)
            position_nodes[key] = tuple(
                node if node is NEVER or isinstance(node, LEAVES)
                else translator.define(translator.fresh_name(f"{pointer}_contains_item"), node)
                for node in (failing, matching))
        return position_nodes[key]

    def accepts(state: tuple[int, int]) -> bool:
        return state[0] >= n_min and state[1] >= min_items

    def successors(state: tuple[int, int]) -> list[tuple[Any, tuple[int, int]]]:
        matches, length = state
        if max_items is not None and length >= max_items:
            return []
        failing, matching = nodes_at(length)
        following = min(length + 1, length_cap)
        result = [(failing, (matches, following))]
        if n_max is None or matches < n_max:
            result.append((matching, (min(matches + 1, match_cap), following)))
        return [(node, target) for node, target in result if node is not NEVER]

    return _state_rules(translator, (0, 0), successors, accepts, pointer)


def finite_item_values(items: Any) -> Optional[list]:
    """The distinct values an item schema allows when it is only ``const``,
    ``enum`` and/or ``type`` (boolean, null) beside annotations and every
    value is a scalar; else None."""
    if not isinstance(items, dict) or not set(items) - ANNOTATION_KEYWORDS:
        return None
    if not set(items) <= {"const", "enum", "type"} | ANNOTATION_KEYWORDS:
        return None
    if "const" in items:
        candidates = [items["const"]]
    elif isinstance(items.get("enum"), list):
        candidates = items["enum"]
    else:
        declared = items.get("type")
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not set(names) <= {"boolean", "null"}:
            return None
        candidates = [None, True, False]
    values: list = []
    for value in candidates:
        in_enum = "const" not in items or not isinstance(items.get("enum"), list) or any(
            json_equal(value, member) for member in items["enum"])
        if in_enum and simple_constraints_hold(value, items) and not any(
                json_equal(value, kept) for kept in values):
            values.append(value)
    return values if all(scalar_node(value) is not None for value in values) else None


def _unique_items(translator, schema, prefix, items, min_items, max_items, pointer: str):
    """The exact ``uniqueItems`` array over a finite item domain, or None
    (warned about and not enforced)."""
    values = None if prefix or "contains" in schema else finite_item_values(items)
    if values is None:
        translator.warn("uniqueItems", pointer, "not enforced: duplicate items are accepted "
                                                "(exact only for items with a small finite set "
                                                "of values, without prefixItems or contains)")
        return None
    n_max = len(values) if max_items is None else min(max_items, len(values))
    n_subsets = sum(math.comb(len(values), size) for size in range(n_max + 1))
    if n_subsets > MAX_UNIQUE_SUBSETS:
        translator.warn("uniqueItems", pointer, f"not enforced: duplicate items are accepted "
                                                f"({len(values)} item values give {n_subsets} "
                                                f"sets of used values, above MAX_UNIQUE_SUBSETS="
                                                f"{MAX_UNIQUE_SUBSETS})")
        return None
    if min_items > n_max:
        return NEVER
    value_nodes = [scalar_node(value) for value in values]
    translator.count(len(value_nodes))
    comma = translator.comma()
    rules: dict[int, RuleRef] = {}

    def after(used: int) -> RuleRef:
        """The rule for the rest of an array whose items are the set ``used``."""
        if used not in rules:
            rules[used] = RuleRef(translator.fresh_name(f"{pointer}_unique"))
            n_used = used.bit_count()
            alternatives = [translator.seq()] if n_used >= min_items else []
            if n_used < n_max:
                alternatives.extend(translator.seq(comma, node, after(used | 1 << index))
                                    for index, node in enumerate(value_nodes)
                                    if not used >> index & 1)
            translator.define(rules[used].name, translator.alt(alternatives))
        return rules[used]

    ws = translator.ws()
    empty = translator.seq(translator.lit("["), ws, translator.lit("]"))
    if n_max == 0:
        return empty if min_items == 0 else NEVER
    first = translator.alt([translator.seq(node, after(1 << index))
                            for index, node in enumerate(value_nodes)])
    full = translator.seq(translator.lit("["), ws, first, ws, translator.lit("]"))
    return translator.alt([empty if min_items == 0 else NEVER, full])


def _past_state_limit(translator, pointer: str, needs: str, n_states: int) -> bool:
    """Whether a contains automaton of ``n_states`` rule states is past
    ``MAX_CONTAINS_STATES`` (then warned: ``contains`` not enforced)."""
    if n_states <= MAX_CONTAINS_STATES:
        return False
    translator.warn("contains", pointer, f"not enforced: {needs} {n_states} states, above "
                                         f"MAX_CONTAINS_STATES={MAX_CONTAINS_STATES}")
    return True
