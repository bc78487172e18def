"""Applicators that combine subschemas: ``anyOf``, ``oneOf``, ``not``,
``if``/``then``/``else``, ``dependentSchemas`` (and draft-4..7 ``dependencies``
in schema form).

What it computes: ``any_of_node`` returns the alternation of the branches,
each merged with the schema's other keywords (``merge.merge_schemas``);
``oneOf`` is the alternation of each branch minus the branches it may
overlap: no subtraction where two branches, each read together with the
schema's other keywords, are proven disjoint (``disjoint.disjoint``: by
value class, by const/enum values, by a discriminator property either
requires, by closed objects, by item counts and leading items, by string
languages, by number bounds), else the branch meets ``not: {anyOf: [the
overlapping ones]}`` (exact when ``not`` is, see below); a branch that
cannot be negated, that may overlap more than ``MAX_ONE_OF_EXCLUSIONS`` others, or complements past
``MAX_ONE_OF_COMPLEMENT_PARTS`` alternatives make oneOf an ``anyOf`` with a
warning, unless its branches are plain objects (and schemas of other
types), whose verdicts ``member_verdicts.object_one_of`` reads member by
member (a sum over the branches instead of the chain's product).  A oneOf
over numbers that only ``multipleOf`` decides is one set of remainders
instead (``multiple_formulas.multiples_one_of``), and one of
open ``properties`` branches over objects of at most one member an
``anyOf`` per member name (``single_member.single_member_one_of``).
Beside ``unevaluatedProperties`` / ``unevaluatedItems``, an instance may
match several ``anyOf`` branches at once: up to ``MAX_ANY_OF_SUBSETS``
branches every combination is merged and added, so the evaluated
properties are exact.  ``not_node`` is exact when
the negated schema reads as a conjunction of parts (``negated_conjuncts``:
its own keywords, its ``allOf`` members and its ``$ref`` target inside the
same resource) that each use only ``NEGATABLE_KEYWORDS`` (a draft-4 ``id``
counts only where a reference inside could resolve against it): an instance fails
the conjunction iff it fails one keyword of one part, so the node is the
alternation of one complement per keyword, each met with the schema's other
keywords: other types; values other than the excluded ones (null and
booleans by the values left, numbers as the open intervals between excluded
numbers, strings as a ``difference`` terminal minus every JSON spelling of
the excluded strings, arrays and objects by structure: the complement of
"exactly these names / items, each equal to its value",
``_value_shape``); objects lacking one required name (``properties:
{name: false}``); objects holding one of the keys a ``propertyNames`` of
the forms ``false`` / ``{not: {enum: E}}`` / ``{not: {const: c}}`` fails on
(``_names_complements``), or, for ``{pattern: P}`` / ``{not: {pattern: P}}``,
holding a key P does not find / finds (the complement of the equivalent
``additionalProperties`` / ``patternProperties``, below; any other
``propertyNames`` is not negated); strings outside the pattern's language (a ``difference``
terminal); numbers that are no multiple of a ``multipleOf`` step
(``values.NOT_MULTIPLES``, read by ``number_nodes``: listed within narrow
bounds, else one remainder automaton; in a schema's own ``not`` and the
oneOf exclusions, not for an ``if``: see ``negation_node``); strings outside
an asserted format's pattern, the same way
(only where ``formats.negatable``: not for a format looser or stricter
than specified; a format no draft defines fails no instance); objects
holding a name of ``properties`` whose value fails its
schema (``{required: [name], properties: {name: {not: S}}}``, the nested
``not`` translated the same way); objects holding a name that
``additionalProperties`` / a ``patternProperties`` pattern applies to with
a failing value (``_extra_key_complements``: beside objects closed by
``additionalProperties: false`` one alternative per name; beside open
objects one per pattern, the member declared or extra,
``keywords.EXTRA_WITNESSES``); for ``not: X`` the instances valid against X (X itself
need not be negatable); for item schemas (``items``, ``prefixItems``, tuple ``items``
and ``additionalItems``, ``_position_complements``) the arrays whose item k
fails its position's schema, or that are longer than a closed prefix, or
(without a prefix) that contain an item failing ``items`` (``contains``);
for ``contains: S`` the arrays whose every item fails S (``items: {not:
S}``; not beside ``minContains`` / ``maxContains``); for ``anyOf`` the
instances failing the first member and
carrying ``not: {anyOf: [the others]}`` (a chain of complements), except
that members a discriminator tells apart (objects requiring one member
whose values, listed, are disjoint) are split on it, a sum instead of a
product (``_none_discriminated``); for
``oneOf`` that chain over its branches, and the instances valid against
two branches at once (each pair not proven disjoint, merged), or, where
that chain passes ``MAX_NEGATED_ONE_OF_CHAIN``, the member verdicts'
complement (``member_verdicts.one_of_complement``: beside ``type`` alone,
when it applies); for a
bound, the other side of it within its type (``_BOUND_COMPLEMENTS``).
Recursive definitions: a ``$ref`` met again beyond a member is read once
(``negated_conjuncts``), its complement nested in a complement being one
shared rule (``{not: {$ref: L}}`` per JSON text, ``Translator._node``; a
oneOf branch minus the branches it overlaps, ``_excluding_node``), so a
recursive complement is a cycle of rules, not an expansion.  Beside ``enum``/``const`` the kept
values are filtered in Python (``holds``: the same conjuncts, item
schemas included, and also ``multipleOf`` and ``oneOf``, which a given
value decides, so the negated schema need not be negatable; warned when a
part it does not read decides).  Still warned: any other negated keyword (not enforced),
a ``properties`` or ``not`` complement beside unevaluated* (its properties
would count as evaluated), a member such a complement requires past
``objects.MAX_WITNESSES`` of them, beside propertyNames keys the key
terminals cannot meet or with ``any_order=True``, excluded array/object
values nested past ``MAX_EXCLUDED_NESTING`` or, several, past
``MAX_ONE_OF_COMPLEMENT_PARTS``, ``not: {type:
integer}`` beside ``number`` with ``multipleOf`` or an applicator (otherwise
the non-integers, ``number_nodes.non_integer_node`` through
``Translator.non_integers``),
draft-4 boolean exclusive bounds, difference terminals past the DFA
limits, and excluded strings beside an ``anyOf`` / ``oneOf`` / ``if`` the
difference terminal cannot read, or beside a carried ``not`` that is more
than a set of strings (``_string_exclusions``: an anyOf of patterns and
string values).
``if_then_else_node`` accepts instances valid against (if and then) or
against (else and not if): exact when ``not`` is exact over the ``if``
(``negated_conjuncts``); otherwise the ``not if`` is dropped with a warning.
An ``if`` proven disjoint from the rest of the schema (``disjoint``) fails
on every instance: only its ``else`` applies, no ``not if`` is needed.
Several if/then pairs merged from one ``allOf`` (``keywords.MORE_CONDITIONS``)
are applied one after the other: each case of the first pair carries the
others, so their conjunction is exact; a pair whose ``if`` is disjoint from
a case (a discriminator value another pair fixed) reduces to its ``else``
there, which keeps discriminated families linear.  Past
``MAX_CONDITIONAL_CASES`` cases at one pointer, the later pairs are dropped
from further cases, warned.
``dependent_schemas_node`` splits on the presence of each trigger property
``A`` (``dependentSchemas: {A: S}``): the alternation of "A absent" (the
schema with ``properties: {A: false}``) and "an object with A present" (the
schema merged with ``required: [A]`` and ``S``).  The two cases are disjoint
and cover every instance, so the split is exact; ``n`` triggers make
``2**n`` merged schemas, so past ``MAX_DEPENDENT_SCHEMAS`` triggers the rest
are warned about and dropped.  The array form of ``dependencies`` is
``dependentRequired`` (tracked by ``objects``).

Invariant: every approximation goes through ``translator.warn`` (which
raises ``SchemaUnsupported`` when ``strict``).
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional

from grammask.config import Config
from grammask.errors import LimitExceeded
from grammask.json_schema import formats, strings
from grammask.json_schema.builder import rule_hint
from grammask.json_schema.disjoint import VALUE_CLASSES, accepts_class, disjoint
from grammask.json_schema.keywords import (ANNOTATION_KEYWORDS, EXTRA_WITNESSES,
                                           MORE_CONDITIONS, VALIDATION_KEYWORDS, allowed_types,
                                           array_positions, count_keyword, has_constraints,
                                           listed_strings, pattern_matches)
from grammask.json_schema.member_verdicts import (complement_applies, object_one_of,
                                                  one_of_complement)
from grammask.json_schema.merge import merge_schemas
from grammask.json_schema.multiple_formulas import multiples_one_of
from grammask.json_schema.numbers import to_fraction
from grammask.json_schema.regex_text import json_string_literal_regex
from grammask.json_schema.single_member import single_member_one_of
from grammask.json_schema.values import (NOT_MULTIPLES, json_equal, json_type_of,
                                         simple_constraints_hold)
from grammask.terminals import DIFFERENCE_SEPARATOR, INTERSECTION_SEPARATOR, compile_regex

_DEFAULTS = Config()
"""The default limits a ``not``'s difference terminal is checked against."""

MAX_ANY_OF_SUBSETS = 4
"""anyOf beside unevaluated*: up to this many branches, every combination is built."""
MAX_ONE_OF_EXCLUSIONS = 16
"""oneOf: a branch's alternative fails at most this many overlapping
branches (each a link of the chain of complements); more: translated as
anyOf, warned."""

MAX_ONE_OF_COMPLEMENT_PARTS = 1000
"""oneOf: the overlapping branches' complements together make at most this
many alternatives (``_exclusion_parts``; each a translation of the branch
beside them); more: translated as anyOf, warned."""
MAX_NEGATED_DEPTH = 16
"""Nested ``$ref`` / ``allOf`` / ``anyOf`` levels ``negated_conjuncts`` reads
inside a ``not`` (deeper: warned and not enforced; also ends ref cycles)."""
MAX_CONDITIONAL_CASES = 256
"""Several if/then pairs (``MORE_CONDITIONS``): the cases ``if_then_else_node``
splits at one pointer while later pairs remain; past it, those pairs are
dropped from further cases, warned."""
MAX_NEGATED_ONE_OF_CHAIN = 64
"""``not`` of a ``oneOf``: "no branch" is a chain of complements, one
alternative per combination of the branches' complements; past this
product (of ``_level_parts``) the ``oneOf`` is negated by member verdicts
where ``member_verdicts.complement_applies``, else not at all."""
MAX_EXCLUDED_NESTING = 31
"""``not`` of array / object values (``_value_shape``): the values nested at
most this deep are excluded by structure.  Each level of the value takes
four translator levels at most (the member's merge, its complement, its
object or array), against ``Options.max_schema_depth`` (128: 31 levels
and the few above them); the schema's own rules are made first where it
holds a ``$ref`` (``_not_values``), so a recursion below it does not add
its depth to the complement's (Handwritten mod304: a value nested 31
levels beside a recursion whose 30 phases take 124 levels alone; mod306:
10 levels beside a like one).  Deeper, or deeper than four levels each
below the translator's depth leaves room for: warned, not excluded."""
MAX_DEPENDENT_SCHEMAS = 4
"""dependentSchemas / schema dependencies: up to this many triggers are split
on (up to 2**4 = 16 merged object schemas); further ones are not enforced."""


def any_of_node(translator, schema: dict, keyword: str, pointer: str) -> Any:
    """``anyOf`` / ``oneOf`` (``keyword``): one alternative per branch, each
    merged with the schema's other keywords."""
    branches = schema[keyword]
    if not isinstance(branches, list) or not branches:
        raise translator.error(pointer, f"{keyword} must be a non-empty array")
    if keyword == "oneOf":
        rewritten = single_member_one_of(translator, schema)
        if rewritten is not None:
            return translator.node(rewritten, pointer)
        remainders = multiples_one_of(translator, schema, pointer)
        if remainders is not None:
            return remainders
    rest = {k: v for k, v in schema.items() if k != keyword}
    unevaluated = "unevaluatedProperties" in rest or "unevaluatedItems" in rest
    excluded, kept_types = {}, None
    if keyword == "oneOf":
        excluded, kept_types, warning = _one_of_exclusions(translator, rest, branches,
                                                           unevaluated, pointer)
        if warning is not None:
            made = None if unevaluated else object_one_of(translator, schema, pointer)
            if made is not None:
                return made
            translator.warn("oneOf", pointer, warning)
    alternatives = []
    for index, branch in enumerate(branches):
        branch_pointer = f"{pointer}/{keyword}/{index}"
        if kept_types is not None:
            branch = merge_schemas(translator, [rest, {"type": kept_types}, branch],
                                   branch_pointer, owner=0)
        elif has_constraints(rest):
            branch = merge_schemas(translator, [rest, branch], branch_pointer, owner=0)
        if index in excluded and branch is not False:
            alternatives.append(_excluding_node(translator, {} if branch is True else branch,
                                                excluded[index], branch_pointer))
        else:
            alternatives.append(translator.node(branch, branch_pointer))
    if keyword == "anyOf" and unevaluated and len(branches) > 1:
        # Properties evaluated by every matching branch count: also accept
        # instances matching several branches at once (each subset S of
        # branches, merged, with the union of their evaluations).  Exact:
        # an instance is valid iff the set of branches it matches is such
        # a subset.
        if len(branches) > MAX_ANY_OF_SUBSETS:
            translator.warn("unevaluatedProperties", pointer,
                            f"anyOf with {len(branches)} branches: properties evaluated only "
                            f"by several matching branches together are not accepted")
        else:
            for subset in range(1, 1 << len(branches)):
                chosen = [b for bit, b in enumerate(branches) if subset >> bit & 1]
                if len(chosen) > 1:
                    merged = merge_schemas(translator, [rest] + chosen, pointer, owner=0)
                    alternatives.append(translator.node(merged, pointer))
    return translator.alt(alternatives)


def _excluding_node(translator, branch: dict, others: list, pointer: str) -> Any:
    """The instances of ``branch`` (merged with the oneOf's other keywords)
    valid against none of ``others`` (``negation_node``); a shared rule
    (``Translator.shared_rule``, one per JSON text of both, base URI and
    dynamic scope) when they hold a reference: a recursive definition
    whose oneOf branch refers back to it (``features: {patternProperties:
    {P: {oneOf: [..., {$ref: features}]}}}``) is inlined by the negation,
    and meets the same oneOf again inside, which then refers to the rule in
    progress instead of expanding without end."""
    def build() -> Any:
        return negation_node(translator, branch, {"anyOf": others}, pointer, multiples=True)

    if not translator.spells_reference([branch, others]):
        return build()
    key = ("excluding", translator.base_uri, json.dumps([branch, others]), translator.scope_key())
    return translator.shared_rule(key, rule_hint(pointer, "excluding"), build)


def _one_of_exclusions(translator, rest: dict, branches: list, unevaluated: bool,
                       pointer: str) -> tuple[dict[int, list], Optional[list[str]],
                                              Optional[str]]:
    """For oneOf's "exactly one": branch index -> the branches it may overlap
    (not proven disjoint, ``disjoint.disjoint``, each branch read together
    with ``rest``, the schema's other keywords, which every instance meets
    too), which its alternative must fail (``negation_node`` of their
    anyOf).  Exact when every such branch is read by ``negated_conjuncts``;
    otherwise (or beside unevaluated*, or past ``MAX_ONE_OF_EXCLUSIONS``)
    nothing is excluded.

    Second: None, or the types every branch is restricted to
    (``_types_matched_once``) when that alone makes the branches disjoint.
    Third: None, or the warning that oneOf is translated as anyOf, when
    nothing is excluded for one of the reasons above (the caller first
    tries ``member_verdicts.object_one_of``)."""
    # rest's $id is already the translator's base URI.
    context = {k: v for k, v in rest.items() if k != "$id"}
    within = [{"allOf": [context, branch]} for branch in branches]
    overlaps: dict[int, list[int]] = {}
    for index, first in enumerate(within):
        for other_index, second in enumerate(within[:index]):
            if not disjoint(translator, first, second):
                overlaps.setdefault(index, []).append(other_index)
                overlaps.setdefault(other_index, []).append(index)
    if not overlaps:
        return {}, None, None
    kept_types = None if unevaluated else _types_matched_once(translator, branches, overlaps)
    if kept_types is not None:
        typed = [{"allOf": [context, {"type": kept_types}, branch]} for branch in branches]
        if all(disjoint(translator, typed[index], typed[other])
               for index, others in overlaps.items() for other in others if other < index):
            return {}, kept_types, None
    first_pair = min((other, index) for index, others in overlaps.items() for other in others
                     if other < index)
    reason = None
    if unevaluated:
        reason = "beside unevaluatedProperties / unevaluatedItems"
    elif max(len(others) for others in overlaps.values()) > MAX_ONE_OF_EXCLUSIONS:
        reason = f"a branch may overlap more than MAX_ONE_OF_EXCLUSIONS = {MAX_ONE_OF_EXCLUSIONS}"
    elif any(negated_conjuncts(translator, branches[index], multiples=True) is None
             for index in overlaps):
        reason = "a branch cannot be negated"
    elif _exclusion_parts(translator, branches, overlaps) > MAX_ONE_OF_COMPLEMENT_PARTS:
        reason = f"the complements would have more than MAX_ONE_OF_COMPLEMENT_PARTS = " \
                 f"{MAX_ONE_OF_COMPLEMENT_PARTS} parts"
    if reason is not None:
        return {}, None, (f"translated as anyOf ({reason}): branches {first_pair[0]} and "
                          f"{first_pair[1]} may overlap, and an instance matching several "
                          f"is accepted")
    return {index: [branches[other] for other in sorted(others)]
            for index, others in overlaps.items()}, None, None


def _exclusion_parts(translator, branches: list, overlaps: dict[int, list[int]]) -> int:
    """The alternatives the oneOf exclusions make (``MAX_ONE_OF_COMPLEMENT_PARTS``
    bounds it): the sum of the overlapping branches' ``_complement_parts``;
    where a branch negates ``multipleOf`` (``negated_conjuncts`` reads it
    only with ``multiples``), each branch's chain of complements counts as
    the product of its links' parts, which is what the chain builds: each
    alternative of a link carries the rest of the chain, and here each
    carries a remainder automaton (eight branches each excluding the seven
    others: 8 * 3**7 = 17,496 alternatives, 12 s; a oneOf over numbers that
    only ``multipleOf`` decides, such as MaskBench's allone1, is one set of
    remainders before it gets here, ``multiple_formulas``)."""
    if all(negated_conjuncts(translator, branches[index]) is not None for index in overlaps):
        return sum(_complement_parts(translator, branches[other])
                   for others in overlaps.values() for other in others)
    return sum(math.prod(max(1, _complement_parts(translator, branches[other], multiples=True))
                         for other in others) for others in overlaps.values())


def _types_matched_once(translator, branches: list, overlaps: dict[int, list[int]]
                        ) -> Optional[list[str]]:
    """The types whose values may match exactly one branch: all but the
    value classes that two branches of an overlapping pair each accept
    entirely (``disjoint.accepts_class``: a branch of object keywords only
    holds every string, say), whose values match both and so fail oneOf.
    None when no class is so excluded, or when one of integer / fraction is
    and the other is not (no ``type`` says "numbers but not integers")."""
    shared = {value_class for value_class in VALUE_CLASSES
              if any(accepts_class(translator, branches[index], value_class)
                     and accepts_class(translator, branches[other], value_class)
                     for index, others in overlaps.items() for other in others)}
    if not shared or ("integer" in shared) != ("fraction" in shared):
        return None
    kept = [value_class for value_class in sorted(VALUE_CLASSES - shared)
            if value_class not in ("integer", "fraction")]
    return kept + ["number"] * ("integer" not in shared)


_BOUND_COMPLEMENTS = {
    "minimum": ("number", "exclusiveMaximum", 0), "maximum": ("number", "exclusiveMinimum", 0),
    "exclusiveMinimum": ("number", "maximum", 0), "exclusiveMaximum": ("number", "minimum", 0),
    "minLength": ("string", "maxLength", -1), "maxLength": ("string", "minLength", 1),
    "minItems": ("array", "maxItems", -1), "maxItems": ("array", "minItems", 1),
    "minProperties": ("object", "maxProperties", -1),
    "maxProperties": ("object", "minProperties", 1),
}
"""bound keyword -> (the type it constrains, the keyword of its complement
within that type, the shift of a count): ``minLength: n`` fails exactly on
strings of at most ``n - 1`` characters, ``minimum: m`` on numbers below m."""
_POSITION_KEYWORDS = frozenset({"items", "prefixItems", "additionalItems"})
_EXTRA_KEY_KEYWORDS = frozenset({"additionalProperties", "patternProperties"})
NEGATABLE_KEYWORDS = frozenset({"type", "enum", "const", "required", "pattern", "format",
                                "multipleOf", "properties", "not", "anyOf", "oneOf",
                                "contains"}) | \
    frozenset(_BOUND_COMPLEMENTS) | \
    _POSITION_KEYWORDS | _EXTRA_KEY_KEYWORDS
"""Keywords ``not`` is exact over: an instance fails their conjunction iff
it fails one of them, and each one's complement is built exactly (``not:
X`` by X itself, ``anyOf`` by a chain of ``not``, ``oneOf`` by that chain
and the pairs of branches an instance may match together; ``format`` only
where ``formats.negatable``; ``multipleOf`` by the numbers that are no
multiple, ``NOT_MULTIPLES``; ``contains: S`` by the arrays whose every item
fails S, ``items: {not: S}``, where no ``minContains`` / ``maxContains``
is beside it); ``$ref`` and ``allOf`` add their schemas as further
conjuncts."""


def negated_conjuncts(translator, schema: Any, depth: int = 0, multiples: bool = False,
                      outer: frozenset = frozenset(), chain: frozenset = frozenset(),
                      entered: Optional[set] = None) -> Optional[list]:
    """``_negated_conjuncts``, each answer kept in ``Translator.negation_memo``
    (by the schema's identity, the base URI and the other arguments; not
    when ``entered`` collects locations): chains of complements, their
    counts and discriminators ask for the same schemas many times over."""
    if entered is not None or isinstance(schema, bool):
        return _negated_conjuncts(translator, schema, depth, multiples, outer, chain, entered)
    key = (id(schema), translator.base_uri, depth, multiples, outer, chain)
    kept = translator.negation_memo.get(key)
    if kept is None or kept[0] is not schema:
        kept = (schema, _negated_conjuncts(translator, schema, depth, multiples, outer, chain,
                                           None))
        translator.negation_memo[key] = kept
    return kept[1]


def _negated_conjuncts(translator, schema: Any, depth: int, multiples: bool, outer: frozenset,
                       chain: frozenset, entered: Optional[set]) -> Optional[list]:
    """The schemas whose conjunction is ``schema``, each a boolean or a dict
    of ``NEGATABLE_KEYWORDS``, annotations and unknown keywords, with ``$ref`` targets (inside
    the current resource) and ``allOf`` members flattened; None when
    ``not_node`` cannot build its complement, or that of a nested
    ``properties`` / ``anyOf`` / item schema (so a negation never warns
    half-way down; a nested ``not`` is met as it is, so it may hold
    anything), or the nesting passes ``MAX_NEGATED_DEPTH`` (recursive
    definitions, unless recursive through members: below).  ``multipleOf``
    only with ``multiples`` (see ``negation_node``).

    Recursive definitions: ``chain`` holds the ``$ref`` locations that led
    to ``schema`` through conjuncts alone (a ``$ref`` whose target is a
    conjunct), ``outer`` those entered further up, beyond a member (a
    property value, an item, an ``anyOf`` branch...).  A location of
    ``chain`` met again is a cycle of conjuncts, which nothing reads (None);
    one of ``outer`` met again is a recursion through members, whose
    complement is the rule of that ``not`` (``{not: {$ref: L}}`` nested in a
    complement is one shared rule per JSON text, ``Translator._node``), so
    it adds no conjunct and is read once: the parts it could fail on are
    all read where it was first entered.  ``entered`` (when given) collects
    the locations this call enters through its conjuncts."""
    if isinstance(schema, bool):
        return [schema]
    if not isinstance(schema, dict) or depth > MAX_NEGATED_DEPTH:
        return None
    # The draft's own keywords only: a draft-4 "const" asserts nothing.
    schema = translator.own_keywords(schema)
    own = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
    asserting = _asserting(schema, own)
    if "multipleOf" in asserting and not multiples:
        return None
    if "propertyNames" in asserting and (
            _failing_names(translator, own["propertyNames"]) is not None
            or _names_as_extra_keys(translator, own["propertyNames"]) is not None):
        asserting = asserting - {"propertyNames"}
    if not asserting <= NEGATABLE_KEYWORDS or not all(
            isinstance(own[k], (int, float)) and not isinstance(own[k], bool)
            for k in list(_BOUND_COMPLEMENTS) + ["multipleOf"] if k in own):
        return None
    if own.get("multipleOf", 1) <= 0 or not isinstance(own.get("required", []), list):
        return None  # a draft-3 boolean required is not negated (nor enforced)
    if "format" in own and not formats.negatable(own["format"]):
        return None
    # Members whose complement is built; a "not" member is met positively.
    if not all(isinstance(own.get(keyword, []), list) for keyword in ("anyOf", "oneOf")):
        return None
    members = list(own.get("anyOf", [])) + list(own.get("oneOf", []))
    if "contains" in own:
        if "contains" in translator.newer_keywords:
            return None  # a draft 3 or 4 document that spells contains (ignored there)
        members.append(own["contains"])
    if not _POSITION_KEYWORDS.isdisjoint(own):
        positional, _, others, _ = array_positions(own, translator.tuple_items)
        if not isinstance(positional, list) or (positional and others is not False
                                                and has_constraints(others)):
            return None  # items after a prefix: not a contains
        if not positional and has_constraints(others) and "contains" in translator.newer_keywords:
            return None  # a draft 3 or 4 document that spells contains (ignored there)
        members.extend(positional + [others])
    for keyword in ("properties", "patternProperties"):
        if isinstance(own.get(keyword), dict):
            members.extend(own[keyword].values())
        elif keyword in own:
            return None
    if "additionalProperties" in own:
        members.append(own["additionalProperties"])
    inside = outer | chain
    if not all(negated_conjuncts(translator, member, depth + 1, multiples, inside) is not None
               for member in members):
        return None
    if "oneOf" in own and _chain_parts(translator, own["oneOf"], inside) \
            > MAX_NEGATED_ONE_OF_CHAIN and not complement_applies(translator, own["oneOf"]):
        return None

    def flatten(_, part, deeper, location):
        if location is None:
            return negated_conjuncts(translator, part, deeper, multiples, outer, chain, entered)
        if location in chain:
            return None  # a cycle of conjuncts
        if location in outer:
            return []  # a recursion through members, read where first entered
        if entered is not None:
            entered.add(location)
        return negated_conjuncts(translator, part, deeper, multiples, outer, chain | {location},
                                 entered)

    return _flattened(translator, schema, own, depth, flatten)


def _asserting(schema: dict, own: dict) -> set:
    """The keywords of ``own`` (``schema``'s own keywords) that may decide
    validity: validation keywords, and a draft-4 ``id`` when ``schema``
    holds a reference that could resolve against the base URI it sets
    (unknown keywords, and an ``id`` nothing resolves against, change
    nothing)."""
    return {k for k in own if k in VALIDATION_KEYWORDS or k == "id" and _refers(schema)}


def _refers(value: Any) -> bool:
    """Whether a ``$ref`` / ``$dynamicRef`` / ``$recursiveRef`` key occurs
    anywhere in ``value`` (a schema; values of ``enum`` / ``const`` are
    searched too, which only errs on the side of True)."""
    if isinstance(value, dict):
        return not _REFERENCE_KEYS.isdisjoint(value) or any(_refers(v) for v in value.values())
    return isinstance(value, list) and any(_refers(v) for v in value)


_REFERENCE_KEYS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


def _flattened(translator, schema: dict, own: dict, depth: int, flatten) -> Optional[list]:
    """``own`` (the schema's keywords but ``$ref`` and ``allOf``) followed by
    ``flatten(translator, part, depth + 1, location)`` of each ``allOf``
    member (location None) and of the ``$ref`` target inside the current
    resource (its resolved location; ``own`` and the members
    dropped where the draft's ``$ref`` hides its siblings); None if a part
    gives None, the ``allOf`` is not a list or the target is unresolved or
    in another resource."""
    if not isinstance(schema.get("allOf", []), list):
        return None
    parts = [] if translator.ref_hides_siblings and "$ref" in schema else \
        [own] + schema.get("allOf", [])
    locations = [None] * len(parts)
    if "$ref" in schema:
        found = _resource_target(translator, schema["$ref"])
        if found is None:
            return None
        target, location = found
        parts.append(target)
        locations.append(location)
    conjuncts = []
    for part, location in zip(parts, locations):
        flat = [part] if part is own else flatten(translator, part, depth + 1, location)
        if flat is None:
            return None
        conjuncts.extend(flat)
    return conjuncts


def not_node(translator, schema: dict, pointer: str) -> Any:
    """The node of ``schema`` with its ``not`` (module docstring: one
    alternative per negated keyword, De Morgan; anything else warned)."""
    return negation_node(translator, {k: v for k, v in schema.items() if k != "not"},
                         schema["not"], pointer, multiples=True)


def negation_node(translator, rest: dict, negated: Any, pointer: str,
                  multiples: bool = False) -> Any:
    """The instances of ``rest`` invalid against ``negated`` (``rest`` may
    hold a ``not`` of its own: each alternative is translated with it; its
    ``$ref`` and ``allOf`` are merged in first).  ``multiples``: a
    ``multipleOf`` is negated too, as for a schema's own ``not``
    (``not_node``) and the oneOf exclusions (bounded by
    ``_exclusion_parts``); ``if`` leaves it out, since a chain of
    complements repeats each complement once per combination of the other
    links' keywords, with a remainder automaton each (a Handwritten
    schema, allone1, took 45 s when nothing bounded it)."""
    if "$ref" in rest or "allOf" in rest:
        # Inlined, so that the complements below see every keyword of rest
        # (the enum of a $ref target, say).
        rest = merge_schemas(translator, [rest], pointer, owner=0)
        if rest is False:
            return translator.alt([])
    if "enum" in rest or "const" in rest:
        values = list(rest["enum"]) if "enum" in rest else [rest["const"]]
        if "enum" in rest and "const" in rest:
            values = [value for value in values if json_equal(value, rest["const"])]
        verdicts = [holds(translator, negated, value) for value in values]
        if None in verdicts:
            translator.warn("not", pointer, "a subschema beside enum/const is not decided "
                                            "here: not enforced")
            return translator.node(rest, pointer)
        kept = [value for value, holds in zip(values, verdicts) if not holds]
        rest = {k: v for k, v in rest.items() if k != "const"}
        return translator.node(dict(rest, enum=kept), pointer)
    conjuncts = negated_conjuncts(translator, negated, multiples=multiples)
    if conjuncts is not None and ("unevaluatedProperties" in rest or "unevaluatedItems" in rest):
        # Complements that declare properties or merge a schema would count
        # them as evaluated, which a not never does.
        if any(isinstance(c, dict) and not ({"properties", "not", "oneOf"} | _POSITION_KEYWORDS
                                            | _EXTRA_KEY_KEYWORDS)
               .isdisjoint(c) for c in conjuncts):
            conjuncts = None
    if conjuncts is None:
        translator.warn("not", pointer, "not enforced")
        return translator.node(rest, pointer)
    alternatives = []
    for conjunct in conjuncts:
        if conjunct is False:
            alternatives.append(translator.node(rest, pointer))
        elif conjunct is not True and has_constraints(conjunct):
            alternatives.extend(_complements(translator, rest, conjunct, pointer, multiples))
    return translator.alt(alternatives)


def _complements(translator, rest: dict, negated: dict, pointer: str,
                 multiples: bool = False) -> list:
    """One node per keyword of ``negated`` (a conjunct): the instances of
    ``rest`` failing that keyword."""
    alternatives = []
    if not _POSITION_KEYWORDS.isdisjoint(negated):
        alternatives.extend(_position_complements(translator, rest, negated, pointer))
    if "propertyNames" in negated:
        alternatives.extend(_names_complements(translator, rest, negated["propertyNames"],
                                               pointer))
    for keyword in [k for k in negated if k in NEGATABLE_KEYWORDS - _POSITION_KEYWORDS]:
        value = negated[keyword]
        if keyword == "type":
            alternatives.append(_not_type(translator, rest, value, pointer))
        elif keyword == "enum":
            alternatives.append(_not_values(translator, rest, list(value), pointer))
        elif keyword == "const":
            alternatives.append(_not_values(translator, rest, [value], pointer))
        elif keyword == "required":
            for name in value:
                absent = merge_schemas(translator, [rest, {"type": "object",
                                                           "properties": {name: False}}],
                                       pointer, owner=0)
                alternatives.append(translator.node(absent, pointer))
        elif keyword == "properties":
            alternatives.extend(_member_failing(translator, rest, name, property_schema, pointer)
                                for name, property_schema in value.items())
        elif keyword in _EXTRA_KEY_KEYWORDS:
            alternatives.extend(_extra_key_complements(translator, rest, negated, keyword,
                                                       pointer))
        elif keyword in _BOUND_COMPLEMENTS:
            type_name, complement, shift = _BOUND_COMPLEMENTS[keyword]
            if shift >= 0 or value > 0:
                outside = merge_schemas(translator, [rest, {"type": type_name,
                                                            complement: value + shift}],
                                        pointer, owner=0)
                alternatives.append(translator.node(outside, pointer))
        elif keyword == "not":
            alternatives.append(translator.node(merge_schemas(translator, [rest, value], pointer,
                                                              owner=0), pointer))
        elif keyword == "anyOf":
            found = _discriminator(translator, value)
            if found is not None:
                alternatives.extend(_none_discriminated(translator, rest, value, found, pointer,
                                                        multiples))
                continue
            # Failing every member: rest without the first, carrying "not"
            # of the others (and of the not rest already had).
            pending = list(value) + ([rest["not"]] if "not" in rest else [])
            chained = {k: v for k, v in rest.items() if k != "not"}
            if len(pending) > 1:
                chained["not"] = {"anyOf": pending[1:]}
            alternatives.append(negation_node(translator, chained, pending[0], pointer,
                                              multiples))
        elif keyword == "oneOf":
            if _chain_parts(translator, value, frozenset()) > MAX_NEGATED_ONE_OF_CHAIN \
                    and complement_applies(translator, value):
                # Past the chain's limit: member verdicts (the chain below is
                # exact too, only larger).
                made = one_of_complement(translator, rest, value, pointer)
                if made is None:
                    translator.warn("not", pointer, "a oneOf past MAX_NEGATED_ONE_OF_CHAIN "
                                                    "beside other keywords than type: not "
                                                    "enforced")
                    made = [translator.node(rest, pointer)]
                alternatives.extend(made)
                continue
            # Failing oneOf: matching no branch (as anyOf), or two at once
            # (each pair not proven disjoint, merged with rest).
            alternatives.extend(_complements(translator, rest, {"anyOf": value}, pointer,
                                             multiples))
            for index, first in enumerate(value):
                for second in value[:index]:
                    if not disjoint(translator, first, second):
                        pair = merge_schemas(translator, [rest, second, first], pointer, owner=0)
                        alternatives.append(translator.node(pair, pointer))
        elif keyword == "contains":
            if "array" in allowed_types(translator, rest, pointer):
                every_fails = merge_schemas(translator, [rest, {"type": "array",
                                                                "items": {"not": value}}],
                                            pointer, owner=0)
                alternatives.append(translator.node(every_fails, pointer))
        elif keyword == "multipleOf":
            if not {"number", "integer"}.isdisjoint(allowed_types(translator, rest, pointer)):
                outside = merge_schemas(translator, [rest, {"type": "number",
                                                            NOT_MULTIPLES: [value]}],
                                        pointer, owner=0)
                alternatives.append(translator.node(outside, pointer))
        elif keyword == "format":
            if value in formats.FORMAT_PATTERNS and "string" in allowed_types(translator, rest,
                                                                               pointer):
                alternatives.append(_strings_minus(translator, rest, [_format_regex(value)],
                                                   pointer))
        elif "string" in allowed_types(translator, rest, pointer):  # pattern
            try:
                content, _, _ = strings.translate_pattern(value)
            except strings.PatternUnsupported as error:
                translator.warn("not", pointer, f"{error}: strings not excluded")
                alternatives.append(translator.node(dict(rest, type="string"), pointer))
                continue
            alternatives.append(_strings_minus(translator, rest, ['"' + content + '"'], pointer))
    return alternatives


def _failing_names(translator, names_schema: Any) -> Optional[list]:
    """For a ``propertyNames`` schema that fails exactly on finitely many key
    strings (``false``: every key, returned as ``[None]``; ``{"not": {"enum":
    E}}`` or ``{"not": {"const": c}}``, annotations aside: the strings of E
    or c), those keys; None for any other form, or where the declared draft
    has no ``propertyNames``."""
    if "propertyNames" in translator.newer_keywords:
        return None
    if names_schema is False:
        return [None]
    if not isinstance(names_schema, dict) or set(names_schema) - ANNOTATION_KEYWORDS != {"not"}:
        return None
    inner = names_schema["not"]
    if not isinstance(inner, dict) or len(set(inner) - ANNOTATION_KEYWORDS) != 1:
        return None
    return listed_strings(inner)


def _names_as_extra_keys(translator, names_schema: Any) -> Optional[tuple[str, dict]]:
    """For ``propertyNames: {pattern: P}`` or ``{not: {pattern: P}}``
    (annotations aside; P one ``strings.translate_pattern`` reads), the
    keyword and schema of ``additionalProperties`` / ``patternProperties``
    failing on the same objects: "a key P does not find" is an additional
    key of ``{patternProperties: {P: true}, additionalProperties: false}``,
    "a key P finds" a key of ``{patternProperties: {P: false}}`` (both search
    the key with P).  None for any other form, or where the declared draft
    has no ``propertyNames``."""
    if "propertyNames" in translator.newer_keywords or not isinstance(names_schema, dict):
        return None
    negated = set(names_schema) - ANNOTATION_KEYWORDS == {"not"}
    inner = names_schema["not"] if negated else names_schema
    if not isinstance(inner, dict) or set(inner) - ANNOTATION_KEYWORDS != {"pattern"} \
            or not isinstance(inner["pattern"], str):
        return None
    try:
        strings.translate_pattern(inner["pattern"])
    except strings.PatternUnsupported:
        return None
    if negated:
        return "patternProperties", {"patternProperties": {inner["pattern"]: False}}
    return "additionalProperties", {"patternProperties": {inner["pattern"]: True},
                                    "additionalProperties": False}


def _names_complements(translator, rest: dict, names_schema: Any, pointer: str) -> list:
    """The objects of ``rest`` failing ``propertyNames: names_schema`` (a form
    ``_failing_names`` or ``_names_as_extra_keys`` reads): an object fails it
    iff one of its keys does, so one alternative per failing key, required
    (any key at all for ``false``); for a pattern, the complement of the
    equivalent extra-key keyword (``_extra_key_complements``)."""
    as_keys = _names_as_extra_keys(translator, names_schema)
    if as_keys is not None:
        keyword, equivalent = as_keys
        return _extra_key_complements(translator, rest, equivalent, keyword, pointer)
    extras = [{"type": "object", "minProperties": 1} if name is None else
              {"type": "object", "required": [name]}
              for name in _failing_names(translator, names_schema)]
    return [translator.node(merge_schemas(translator, [rest, extra], pointer, owner=0), pointer)
            for extra in extras]


def _format_regex(name: str) -> str:
    """The JSON-string regex of the strings valid against asserted format ``name``."""
    content, _, _ = strings.translate_pattern(formats.FORMAT_PATTERNS[name], ascii_escapes=False)
    return '"' + content + '"'


def _format_holds(name: str, value: str) -> Optional[bool]:
    """Whether string ``value`` is valid against format ``name`` (one
    ``formats.negatable``; None for a string with a lone surrogate)."""
    if name not in formats.FORMAT_PATTERNS:
        return True  # an annotation
    try:
        text = json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return compile_regex(_format_regex(name)).fullmatch(text)


def _member_failing(translator, rest: dict, name: str, schema: Any, pointer: str) -> Any:
    """The objects of ``rest`` holding member ``name`` with a value failing ``schema``."""
    failing = merge_schemas(translator, [rest, {"type": "object", "required": [name],
                                                "properties": {name: {"not": schema}}}],
                            pointer, owner=0)
    return translator.node(failing, pointer)


def _extra_key_complements(translator, rest: dict, negated: dict, keyword: str,
                           pointer: str) -> list:
    """The objects of ``rest`` failing ``negated``'s ``additionalProperties``
    or ``patternProperties``: one holding a key that keyword applies to
    whose value fails it.  When ``rest`` closes its objects
    (``additionalProperties: false``, patterns of finitely many names) the
    key is one of its names, so each name the keyword applies to gives a
    ``_member_failing`` alternative; otherwise each pattern (or
    additionalProperties) gives the objects of ``rest`` with such a member,
    declared or extra (``keywords.EXTRA_WITNESSES``, built by
    ``objects.object_node``)."""
    if "object" not in allowed_types(translator, rest, pointer):
        return []
    names = _closed_names(rest)
    patterns = negated.get("patternProperties", {})
    if names is None:
        if keyword == "patternProperties":
            witnesses = [{"pattern": pattern, "names": [], "patterns": [], "schema": {"not": sub}}
                         for pattern, sub in patterns.items() if has_constraints(sub)]
        else:
            witnesses = [{"pattern": None, "names": list(negated.get("properties", {})),
                          "patterns": list(patterns),
                          "schema": {"not": negated["additionalProperties"]}}]
        return [translator.node(merge_schemas(translator, [rest, {"type": "object",
                                                                  EXTRA_WITNESSES: [witness]}],
                                              pointer, owner=0), pointer)
                for witness in witnesses]
    if keyword == "patternProperties":
        return [_member_failing(translator, rest, name, schema, pointer)
                for pattern, schema in patterns.items() for name in names
                if pattern_matches(pattern, name) and has_constraints(schema)]
    declared = negated.get("properties", {})
    return [_member_failing(translator, rest, name, negated["additionalProperties"], pointer)
            for name in names if name not in declared
            and not any(pattern_matches(pattern, name) for pattern in patterns)]


def _complement_parts(translator, schema: Any, depth: int = 0, multiples: bool = False,
                      outer: frozenset = frozenset()) -> int:
    """How many alternatives ``negation_node`` makes for ``schema``, nested
    complements (of member values, anyOf members) included: each is one
    more translation of the schema beside the ``not``.  A recursion through
    members (a ``$ref`` location of ``outer``, as in ``negated_conjuncts``)
    counts once, where first entered: its complement is one rule."""
    entered: set = set()
    conjuncts = negated_conjuncts(translator, schema, multiples=multiples, outer=outer,
                                  entered=entered)
    if conjuncts is None or depth > MAX_NEGATED_DEPTH:
        return 0
    outer = outer | entered
    total = 0
    for conjunct in conjuncts:
        if not isinstance(conjunct, dict):
            continue
        total += len(conjunct)
        branches = len(conjunct.get("oneOf", []))
        total += branches * (branches - 1) // 2
        nested = (list(conjunct.get("anyOf", [])) + list(conjunct.get("oneOf", []))
                  + [conjunct.get("additionalProperties", True), conjunct.get("contains", True)])
        for keyword in ("properties", "patternProperties"):
            nested.extend((conjunct.get(keyword) or {}).values())
        total += sum(_complement_parts(translator, sub, depth + 1, multiples, outer)
                     for sub in nested)
    return total


def _level_parts(translator, schema: Any, outer: frozenset = frozenset()) -> int:
    """How many alternatives ``negation_node`` makes for ``schema`` at its own
    level, the factor of a link of a chain of complements: one per keyword
    of each conjunct (per name of ``required`` and ``properties``), the
    product of an ``anyOf``'s members (a chain inlined), that of a
    ``oneOf``'s plus its pairs.  The complement of a member's value (a
    property, an item, an extra key, a ``contains``) is one alternative
    here: it is built inside that member, bounded where ``negated_conjuncts``
    reads the member.  0 when ``schema`` is not negated."""
    conjuncts = negated_conjuncts(translator, schema, outer=outer)
    if conjuncts is None:
        return 0
    total = 0
    for conjunct in conjuncts:
        if conjunct is False:
            total += 1
        if not isinstance(conjunct, dict):
            continue
        for keyword, value in conjunct.items():
            if keyword in ("required", "properties"):
                total += len(value) if isinstance(value, (list, dict)) else 1
            elif keyword in ("anyOf", "oneOf"):
                total += _chain_parts(translator, value, outer)
                total += len(value) * (len(value) - 1) // 2 if keyword == "oneOf" else 0
            elif keyword in NEGATABLE_KEYWORDS or keyword == "propertyNames":
                total += 1
    return total


def _chain_parts(translator, members: list, outer: frozenset) -> int:
    """The alternatives of "no member" of ``members``: a chain of
    complements, the product of their ``_level_parts``, except that the
    members a discriminator tells apart (``_discriminator``) count as the
    sum of theirs plus one (``_none_discriminated``)."""
    parts = [max(1, _level_parts(translator, member, outer)) for member in members]
    found = _discriminator(translator, members, outer)
    if found is None:
        return math.prod(parts)
    told = found[1]
    return (sum(parts[index] for index in told) + 1) * math.prod(
        part for index, part in enumerate(parts) if index not in told)


def _discriminator(translator, members: list,
                   outer: frozenset = frozenset()) -> Optional[tuple[str, dict[int, list]]]:
    """(name, member index -> values) for the most members (two at least)
    that (read by ``negated_conjuncts``) hold only objects (a conjunct
    ``type: object``) requiring member ``name`` with a value among an
    ``enum`` / ``const`` of a conjunct's ``properties``, their value lists
    pairwise disjoint (``json_equal``); None if there are none.  ``outer``:
    as for ``negated_conjuncts``."""
    found = []
    for member in members:
        conjuncts = negated_conjuncts(translator, member, outer=outer)
        conjuncts = [translator.own_keywords(c) for c in conjuncts or [] if isinstance(c, dict)]
        values: dict = {}
        if any(c.get("type") in ("object", ["object"]) for c in conjuncts):
            required = {name for c in conjuncts if isinstance(c.get("required"), list)
                        for name in c["required"]}
            for c in conjuncts:
                for name, sub in (c.get("properties") or {}).items():
                    listed = _listed_values(translator, sub)
                    if name in required and listed is not None and name not in values:
                        values[name] = listed
        found.append(values)
    best = None
    for name in dict.fromkeys(name for values in found for name in values):
        told: dict[int, list] = {}
        for index, values in enumerate(found):
            listed = values.get(name)
            if listed is not None and not any(json_equal(a, b) for other in told.values()
                                              for a in listed for b in other):
                told[index] = listed
        if len(told) > 1 and (best is None or len(told) > len(best[1])):
            best = (name, told)
    return best


def _listed_values(translator, schema: Any) -> Optional[list]:
    """The values of a schema's ``enum`` or ``const`` (the draft's own
    keywords), which every instance of it is one of; None without them."""
    schema = translator.own_keywords(schema)
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return [schema["const"]]
    return list(schema["enum"]) if isinstance(schema.get("enum"), list) else None


def _none_discriminated(translator, rest: dict, members: list,
                        found: tuple[str, dict[int, list]], pointer: str, multiples: bool) -> list:
    """The instances of ``rest`` valid against none of ``members``, some told
    apart by a discriminator (``found``, ``_discriminator``: member i holds only
    objects whose member ``name`` is one of values V_i, the V_i disjoint):
    those with ``name`` in V_i that fail member i (no other told member can
    hold them), and those that are no object with ``name`` in any V_i; each
    carries "none of the other members" (a ``not`` of their ``anyOf``, and
    of the ``not`` ``rest`` had).  A sum over the told members where the
    chain of complements is a product."""
    name, told = found
    pending = [member for index, member in enumerate(members) if index not in told]
    pending += [rest["not"]] if "not" in rest else []
    chained = {k: v for k, v in rest.items() if k != "not"}
    if pending:
        chained["not"] = {"anyOf": pending}
    alternatives = []
    for index, listed in told.items():
        case = merge_schemas(translator, [chained, {"type": "object", "required": [name],
                                                    "properties": {name: {"enum": listed}}}],
                             pointer, owner=0)
        if case is not False:
            alternatives.append(negation_node(translator, case, members[index], pointer,
                                              multiples))
    every = [value for listed in told.values() for value in listed]
    alternatives.append(negation_node(translator, chained, {
        "type": "object", "required": [name], "properties": {name: {"enum": every}}},
        pointer, multiples))
    return alternatives


def _closed_names(schema: dict) -> Optional[list[str]]:
    """Every member name an object of ``schema`` may hold, when that is a
    finite list (``additionalProperties: false``; patterns of finitely many
    names); else None."""
    if schema.get("additionalProperties") is not False:
        return None
    names = list(schema.get("properties", {}))
    for pattern in schema.get("patternProperties", {}):
        found = strings.finite_pattern_strings(pattern)
        if found is None:
            return None
        names.extend(name for name in found if name not in names)
    return names


def _position_complements(translator, rest: dict, negated: dict, pointer: str) -> list:
    """The arrays of ``rest`` failing the item schemas of ``negated`` (read by
    ``keywords.array_positions``): one alternative per position k whose
    schema S_k constrains, "at least k + 1 items, item k failing S_k"
    (``not: S_k`` at position k); for the other items, "longer than the
    prefix" when they must not exist, or ``contains: {not: S}`` when every
    item meets S (no prefix, ``negated_conjuncts``)."""
    positional, _, others, _ = array_positions(negated, translator.tuple_items)
    layout = "items" if translator.tuple_items else "prefixItems"
    failing = []
    for position, item_schema in enumerate(positional):
        if has_constraints(item_schema):
            failing.append({"type": "array", "minItems": position + 1,
                            layout: [True] * position + [{"not": item_schema}]})
    if others is False:
        failing.append({"type": "array", "minItems": len(positional) + 1})
    elif has_constraints(others):
        failing.append({"type": "array", "contains": {"not": others}})
    return [translator.node(merge_schemas(translator, [rest, extra], pointer, owner=0), pointer)
            for extra in failing]


def _holds_all(translator, conjuncts: list, value: Any, depth: int = 0) -> Optional[bool]:
    """Whether ``value`` is valid against every conjunct (None: undecided)."""
    verdicts = [_holds_own(translator, conjunct, value, depth) for conjunct in conjuncts]
    return False if False in verdicts else None if None in verdicts else True


_DECIDED_KEYWORDS = NEGATABLE_KEYWORDS | {"multipleOf", "oneOf"}
"""Keywords ``holds`` decides on a given value (those ``not`` negates, and
``multipleOf`` and ``oneOf``, which a value check reads directly)."""


def holds(translator, schema: Any, value: Any, depth: int = 0) -> Optional[bool]:
    """Whether ``value`` is valid against ``schema`` (None: a keyword outside
    ``_DECIDED_KEYWORDS`` decides it, or the nesting passes
    ``MAX_NEGATED_DEPTH``)."""
    conjuncts = _value_conjuncts(translator, schema, depth)
    return None if conjuncts is None else _holds_all(translator, conjuncts, value, depth)


def _value_conjuncts(translator, schema: Any, depth: int) -> Optional[list]:
    """The schemas whose conjunction is ``schema`` (its own keywords, its
    ``allOf`` members and its ``$ref`` target inside the same resource, as
    ``negated_conjuncts`` reads them), each of ``_DECIDED_KEYWORDS`` with
    well-formed values; None otherwise.  Memoized per (schema identity, base
    URI, depth) in ``translator.negation_memo``: ``holds`` asks it again for
    every value of an ``enum`` and every nested schema of each."""
    if isinstance(schema, bool):
        return [schema]
    if not isinstance(schema, dict) or depth > MAX_NEGATED_DEPTH:
        return None
    key = ("value conjuncts", id(schema), translator.base_uri, depth)
    found = translator.negation_memo.get(key)
    if found is None:
        found = translator.negation_memo[key] = (schema, _own_value_conjuncts(translator, schema,
                                                                              depth))
    return found[1]


def _own_value_conjuncts(translator, schema: dict, depth: int) -> Optional[list]:
    """``_value_conjuncts`` of a dict, computed (the caller memoizes it)."""
    schema = translator.own_keywords(schema)
    own = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
    asserting = _asserting(schema, own)
    shapes = {"anyOf": list, "oneOf": list, "enum": list, "required": list,
              "properties": dict, "patternProperties": dict}
    if not asserting <= _DECIDED_KEYWORDS or not all(
            isinstance(own[k], (int, float)) and not isinstance(own[k], bool)
            for k in list(_BOUND_COMPLEMENTS) + ["multipleOf"] if k in own) or not all(
            isinstance(own[k], shape) for k, shape in shapes.items() if k in own):
        return None
    if own.get("multipleOf", 1) <= 0 or "format" in own and not formats.negatable(own["format"]):
        return None
    return _flattened(translator, schema, own, depth,
                      lambda _, part, deeper, location: _value_conjuncts(translator, part, deeper))


def _in_enum(translator, members: list, value: Any) -> bool:
    """Whether ``json_equal(value, member)`` for some member.  A ``str``
    value equals exactly the members of type ``str`` with its text, so it is
    looked up in their set, made once per list (``translator.negation_memo``,
    ("enum strings", list identity) -> (the list, the set)): ``holds`` asks
    for every value of another ``enum``."""
    if type(value) is not str:
        return any(json_equal(value, other) for other in members)
    key = ("enum strings", id(members))
    found = translator.negation_memo.get(key)
    if found is None:
        found = translator.negation_memo[key] = (
            members, frozenset([other for other in members if type(other) is str]))
    return value in found[1]


def _holds_own(translator, negated: Any, value: Any, depth: int = 0) -> Optional[bool]:
    """Whether ``value`` is valid against one conjunct of ``_value_conjuncts``
    (its own keywords; nested schemas through ``holds``)."""
    if isinstance(negated, bool):
        return negated
    deeper = depth + 1
    verdicts = []
    if "enum" in negated:
        verdicts.append(_in_enum(translator, negated["enum"], value))
    if "const" in negated:
        verdicts.append(json_equal(value, negated["const"]))
    if "not" in negated:
        inner = holds(translator, negated["not"], value, deeper)
        verdicts.append(None if inner is None else not inner)
    if "anyOf" in negated:
        members = [holds(translator, member, value, deeper) for member in negated["anyOf"]]
        verdicts.append(True if True in members else None if None in members else False)
    if "oneOf" in negated:
        members = [holds(translator, member, value, deeper) for member in negated["oneOf"]]
        passed = members.count(True)
        verdicts.append(False if passed > 1 else None if None in members else passed == 1)
    if "format" in negated and isinstance(value, str):
        verdicts.append(_format_holds(negated["format"], value))
    if "multipleOf" in negated and isinstance(value, (int, float)) and not isinstance(value, bool):
        verdicts.append(to_fraction(value) % to_fraction(negated["multipleOf"]) == 0)
    if "contains" in negated and isinstance(value, list):
        found = [holds(translator, negated["contains"], item, deeper) for item in value]
        verdicts.append(True if True in found else None if None in found else False)
    if isinstance(value, list) and not _POSITION_KEYWORDS.isdisjoint(negated):
        positional, _, others, _ = array_positions(negated, translator.tuple_items)
        verdicts.extend(holds(translator, positional[index] if index < len(positional)
                               else others, item, deeper) for index, item in enumerate(value))
    if isinstance(value, (list, dict)):
        low, high = ("minItems", "maxItems") if isinstance(value, list) else (
            "minProperties", "maxProperties")
        verdicts.append(negated.get(low, 0) <= len(value) <= negated.get(high, len(value)))
    if isinstance(value, dict):
        verdicts.append(all(name in value for name in negated.get("required", [])))
        verdicts.extend(holds(translator, sub, value[name], deeper)
                        for name, sub in negated.get("properties", {}).items() if name in value)
        patterns = negated.get("patternProperties", {})
        for name, item in value.items():
            matched = [sub for pattern, sub in patterns.items() if pattern_matches(pattern, name)]
            if name not in negated.get("properties", {}) and not matched:
                matched = [negated.get("additionalProperties", True)]
            verdicts.extend(holds(translator, sub, item, deeper) for sub in matched)
    verdicts.append(simple_constraints_hold(value, negated))
    return False if False in verdicts else None if None in verdicts else True


def _not_type(translator, rest: dict, excluded: Any, pointer: str) -> Any:
    """Instances of ``rest`` whose type is none of ``excluded``."""
    excluded = [excluded] if isinstance(excluded, str) else list(excluded)
    allowed = [t for t in allowed_types(translator, rest, pointer)
               if t not in excluded and not (t == "integer" and "number" in excluded)]
    if "integer" in excluded and "number" in allowed:
        fractions = None
        if not {"anyOf", "oneOf", "allOf", "not", "if", "$ref", "$dynamicRef"} & set(rest):
            fractions = translator.non_integers(rest, pointer)
        if fractions is not None:
            others = [t for t in allowed if t != "number"]
            return translator.alt([fractions] + ([translator.node(dict(rest, type=others),
                                                                  pointer)] if others else []))
        translator.warn("not", pointer, "non-integer numbers cannot be told from integers "
                                        "beside multipleOf or applicators; numbers accepted")
    return translator.node(dict(rest, type=allowed), pointer)


def _value_shape(translator, value: Any) -> dict:
    """The schema valid on exactly the array or object ``value``, by its
    structure: an object with exactly its names, each member ``enum:
    [its value]``; an array of its length, item k ``enum: [item k]`` (JSON
    equality is member- and item-wise, so the two agree; ``enum``, not
    ``const``, which drafts 3 and 4 lack).  Its complement is built by
    keyword (``_complements``), recursing into the members' values."""
    if isinstance(value, dict):
        shape = {"type": "object", "properties": {name: {"enum": [member]}
                                                  for name, member in value.items()},
                 "additionalProperties": False}
        if value:
            shape["required"] = list(value)
        return shape
    shape = {"type": "array", "minItems": len(value), "maxItems": len(value)}
    if value:
        shape["items" if translator.tuple_items else "prefixItems"] = [
            {"enum": [item]} for item in value]
    return shape


def _nesting(value: Any) -> int:
    """The JSON nesting of ``value``: 0 for a scalar, 1 + its deepest member or item."""
    members = value.values() if isinstance(value, dict) else value if isinstance(value, list) \
        else None
    return 0 if members is None else 1 + max((_nesting(member) for member in members), default=0)


def _not_values(translator, rest: dict, values: list, pointer: str) -> Any:
    """Instances of ``rest`` equal to none of ``values``: null and booleans
    by the values left, numbers as the open intervals between the excluded
    numbers, strings as a difference terminal; arrays and objects as the
    complement of their ``_value_shape`` (several: a chain; warned and not
    excluded past ``MAX_ONE_OF_COMPLEMENT_PARTS`` alternatives or
    ``MAX_EXCLUDED_NESTING``)."""
    alternatives = []
    passed = []
    for type_name in allowed_types(translator, rest, pointer):
        if type_name in ("number", "integer"):
            of_type = [v for v in values
                       if isinstance(v, (int, float)) and not isinstance(v, bool)]
        else:
            of_type = [v for v in values if json_type_of(v) == type_name]
        if not of_type:
            passed.append(type_name)
        elif type_name == "boolean":
            # enum, not const, which drafts 3 and 4 lack (and ignore).
            alternatives.extend(translator.node(dict(rest, type="boolean", enum=[flag]), pointer)
                                for flag in (True, False) if flag not in of_type)
        elif type_name in ("number", "integer"):
            if any(isinstance(rest.get(k), bool) for k in ("exclusiveMinimum", "exclusiveMaximum")):
                translator.warn("not", pointer, "draft-4 boolean exclusive bounds: excluded "
                                                "numbers are accepted")
                passed.append(type_name)
                continue
            bounds = sorted(set(of_type))
            lows = [None] + bounds
            highs = bounds + [None]
            for low, high in zip(lows, highs):
                interval = {"type": type_name}
                if low is not None:
                    interval["exclusiveMinimum"] = low
                if high is not None:
                    interval["exclusiveMaximum"] = high
                merged = merge_schemas(translator, [rest, interval], pointer, owner=0)
                alternatives.append(translator.node(merged, pointer))
        elif type_name == "string":
            literals = [json_string_literal_regex(v, ascii_escapes=True) for v in of_type]
            alternatives.append(_strings_minus(translator, rest, literals, pointer))
        elif type_name in ("array", "object"):
            shapes = [_value_shape(translator, value) for value in of_type]
            reason = None
            nesting = max(_nesting(value) for value in of_type)
            if nesting > MAX_EXCLUDED_NESTING:
                reason = f"nested deeper than MAX_EXCLUDED_NESTING = {MAX_EXCLUDED_NESTING}"
            elif translator.depth + 4 * nesting > translator.options.max_schema_depth:
                reason = "nested deeper than max_schema_depth leaves room for"
            elif len(shapes) > 1 and math.prod(_complement_parts(translator, shape)
                                               for shape in shapes) > MAX_ONE_OF_COMPLEMENT_PARTS:
                reason = f"complements of more than MAX_ONE_OF_COMPLEMENT_PARTS = " \
                         f"{MAX_ONE_OF_COMPLEMENT_PARTS} parts"
            if reason is not None:
                translator.warn("not", pointer, f"excluded {type_name} values ({reason}) "
                                                f"are accepted")
                passed.append(type_name)
                continue
            text = json.dumps(rest)
            if '"$ref"' in text or '"$dynamicRef"' in text:
                # The schema's own rules first, at this depth: the
                # complement walks the value down four translator levels a
                # level and, where a member may differ, refers to the
                # member's schema, whose recursion (a rule per phase of
                # merged definitions) it then finds made instead of
                # entering it at its own depth.
                translator.node(dict(rest, type=type_name), pointer)
            alternatives.append(negation_node(translator, dict(rest, type=type_name),
                                              {"anyOf": shapes}, pointer))
    if passed:
        alternatives.append(translator.node(dict(rest, type=passed), pointer))
    return translator.alt(alternatives)


_STRING_BLIND_KEYWORDS = ("anyOf", "oneOf", "allOf", "$ref", "$dynamicRef", "if", "not")
"""Keywords of ``rest`` that the regexes of ``_strings_minus`` do not read
(a ``not`` is read when ``_string_exclusions`` folds it into the removed
strings); beside any other, strings are not excluded (warned)."""


_STRING_UNREAD = frozenset(_STRING_BLIND_KEYWORDS + ("enum", "const")) - {"not"}
"""Keywords a schema the strings must meet may bring into ``rest`` that
``_strings_minus`` does not read (``enum``/``const`` never reach it
otherwise: ``negation_node`` decides them value by value); such a ``not``
is left unfolded, so its strings are not excluded, warned."""


def _strings_minus(translator, rest: dict, removed: list[str], pointer: str) -> Any:
    """The strings ``rest`` allows (lengths, pattern, asserted format) that
    match none of the JSON-string regexes ``removed``: one difference
    terminal.  A ``not`` that ``rest`` carries (a chain of complements)
    removes its strings too (``_string_exclusions``), and a member ``{not:
    X}`` of it (an instance must fail it) makes the strings meet X, merged
    into ``rest`` (whose own ``not`` is folded the same way, up to
    ``MAX_NEGATED_DEPTH`` times).  Warned (and not excluded) past the
    product DFA limits (``Config.max_product_dfa_states`` and
    ``max_product_dfa_bytes``, as the terminal is compiled) and beside
    ``_STRING_BLIND_KEYWORDS``."""
    for _ in range(MAX_NEGATED_DEPTH):
        folded = _string_exclusions(translator, rest["not"]) if "not" in rest else None
        if folded is None:
            break
        kept = {k: v for k, v in rest.items() if k != "not"}
        if folded[1]:
            kept = merge_schemas(translator, [kept] + folded[1], pointer, owner=0)
            if kept is False or "string" not in allowed_types(translator, kept, pointer):
                return translator.alt([])
            if not _STRING_UNREAD.isdisjoint(kept):
                break  # values or applicators the difference terminal cannot read
        rest = kept
        removed = removed + folded[0]
    strings_only = dict(rest, type="string")
    blind = [keyword for keyword in _STRING_BLIND_KEYWORDS if keyword in rest]
    if blind:
        translator.warn("not", pointer, f"beside {blind[0]!r}: strings not excluded")
        return translator.node(strings_only, pointer)
    if rest.get("pattern") is not None and not isinstance(rest["pattern"], str):
        raise translator.error(pointer, "pattern must be a string")
    regexes = []
    highs = []
    for keyword, pattern, ascii_escapes in formats.asserted_patterns(rest):
        try:
            content, _, widest = strings.translate_pattern(pattern, ascii_escapes=ascii_escapes)
        except strings.PatternUnsupported:
            translator.warn("not", pointer, f"beside an unsupported {keyword}: not enforced")
            return translator.node(strings_only, pointer)
        regexes.append('"' + content + '"')
        highs.append(widest)
    low = count_keyword(translator, rest, "minLength", pointer) or 0
    high = count_keyword(translator, rest, "maxLength", pointer)
    highs.append(high)
    if low or high is not None or not regexes:
        regexes.append(strings.string_regex(low, high))
    text = DIFFERENCE_SEPARATOR.join([INTERSECTION_SEPARATOR.join(regexes)] + removed)
    try:
        compile_regex(text, kind="difference", max_states=_DEFAULTS.max_product_dfa_states,
                      max_bytes=_DEFAULTS.max_product_dfa_bytes)
    except LimitExceeded:
        translator.warn("not", pointer, "the excluded strings' DFA exceeds the DFA limits: "
                                        "not excluded")
        return translator.node(strings_only, pointer)
    loose = formats.looseness(rest.get("format"), highs)
    if loose is not None:
        translator.warn("format", pointer, loose)
    return translator.rx_minus(regexes, removed)


_LENGTHS = frozenset({"minLength", "maxLength"})


def _string_exclusions(translator, negated: Any,
                       depth: int = 0) -> Optional[tuple[list[str], list]]:
    """For a string that must fail ``negated``: (JSON-string regexes of the
    strings valid against it, which are removed; schemas the string must
    meet).  ``negated`` is a schema, or an ``anyOf`` of them, nested ones
    too, each a boolean, a ``$ref`` alone (annotations aside) to a schema
    in the current resource, ``{not: X}`` (X goes to the second list), or
    one ``pattern`` / ``format`` (``formats.negatable``) / ``enum`` /
    ``const``, or length bounds alone, with ``type`` and annotations; None
    for any other schema or past ``MAX_NEGATED_DEPTH`` levels."""
    if depth > MAX_NEGATED_DEPTH:
        return None
    asserting = set(negated) - ANNOTATION_KEYWORDS if isinstance(negated, dict) else None
    if asserting == {"anyOf"}:
        if not isinstance(negated["anyOf"], list):
            return None
        regexes, met = [], []
        for member in negated["anyOf"]:
            found = _string_exclusions(translator, member, depth + 1)
            if found is None:
                return None
            regexes.extend(found[0])
            met.extend(found[1])
        return regexes, met
    if asserting == {"not"}:
        return [], [negated["not"]]
    if asserting == {"$ref"}:
        found = _resource_target(translator, negated["$ref"])
        return None if found is None else _string_exclusions(translator, found[0], depth + 1)
    found = _strings_of(negated)
    return None if found is None else (found, [])


def _resource_target(translator, reference: Any) -> Optional[tuple[Any, str]]:
    """(target schema, its resolved location) of a ``$ref`` inside the current
    resource, or None when it does not resolve or lies in another resource."""
    return translator.resolver.resource_target(reference, translator.base_uri)


def _strings_of(negated: Any) -> Optional[list[str]]:
    """JSON-string regexes matching exactly the strings valid against
    ``negated`` (a member ``_string_exclusions`` reads without nesting);
    None for any other schema."""
    member = {} if negated is True else negated
    if member is False:
        return []
    if not isinstance(member, dict):
        return None
    keywords = set(member) - ANNOTATION_KEYWORDS - {"type"}
    declared = member.get("type", "string")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or len(keywords - _LENGTHS) > 1 or \
            keywords & _LENGTHS and keywords - _LENGTHS:
        return None
    if "string" not in names:
        return []  # no string is valid against it
    if keywords and keywords <= _LENGTHS:
        low, high = member.get("minLength", 0), member.get("maxLength")
        if not all(isinstance(count, int) and not isinstance(count, bool) and count >= 0
                   for count in (low, high) if count is not None):
            return None
        return [] if high is not None and high < low else [strings.string_regex(low, high)]
    keyword = keywords.pop() if keywords else None
    if keyword is None:
        return [strings.string_regex(0, None)]
    if keyword == "pattern" and isinstance(member["pattern"], str):
        try:
            content, _, _ = strings.translate_pattern(member["pattern"])
        except strings.PatternUnsupported:
            return None
        return ['"' + content + '"']
    if keyword == "format" and formats.negatable(member["format"]):
        if member["format"] not in formats.FORMAT_PATTERNS:
            return [strings.string_regex(0, None)]  # an annotation: every string
        return [_format_regex(member["format"])]
    if keyword in ("enum", "const"):
        values = member["enum"] if keyword == "enum" else [member["const"]]
        if not isinstance(values, list):
            return None
        return [json_string_literal_regex(value, ascii_escapes=True)
                for value in values if isinstance(value, str)]
    return None


def if_then_else_node(translator, schema: dict, pointer: str) -> Any:
    """``if`` / ``then`` / ``else``: the union of (rest, if, then) and
    (rest, else, not if), exact when ``negated_conjuncts`` reads the ``if``;
    the conditionals of ``MORE_CONDITIONS`` one after the other (module
    docstring)."""
    while True:
        rest = _next_conditional(schema)
        condition = schema["if"]
        if "then" not in schema and "else" not in schema:
            if "unevaluatedProperties" not in rest and "unevaluatedItems" not in rest:
                return translator.node(rest, pointer)
            # A passing "if" still evaluates properties/items: valid instances
            # are those valid for rest alone, or for rest and if together.
            merged = merge_schemas(translator, [rest, condition], pointer, owner=0)
            return translator.alt([translator.node(merged, pointer),
                                   translator.node(rest, pointer)])
        unconditional = {k: v for k, v in rest.items() if k not in _CONDITIONAL_KEYWORDS}
        if not disjoint(translator, unconditional, condition):
            break
        # No instance of rest passes the condition: only its else applies.
        schema = merge_schemas(translator, [rest, schema.get("else", True)], pointer, owner=0)
        if schema is False or "if" not in schema:
            return translator.node(schema, pointer)
    if MORE_CONDITIONS in rest:
        cases = translator.conditional_cases
        cases[pointer] = cases.get(pointer, 0) + 1
        if cases[pointer] > MAX_CONDITIONAL_CASES:
            translator.warn("if", pointer, f"more than MAX_CONDITIONAL_CASES = "
                                           f"{MAX_CONDITIONAL_CASES} cases of several if/then "
                                           f"pairs: the later pairs are not applied in some")
            rest = {k: v for k, v in rest.items() if k not in _CONDITIONAL_KEYWORDS}
    passing = merge_schemas(translator, [rest, condition, schema.get("then", True)], pointer,
                            owner=0)
    failing = merge_schemas(translator, [rest, schema.get("else", True)], pointer, owner=0)
    alternatives = [] if passing is False else [translator.node(passing, pointer)]
    if failing is False:
        return translator.alt(alternatives)
    if negated_conjuncts(translator, condition) is not None:
        alternatives.append(negation_node(translator, failing, condition, pointer))
    else:
        translator.warn("if", pointer, "the condition is not checked: instances valid "
                                       "against (if and then) or against else are accepted")
        alternatives.append(translator.node(failing, pointer))
    return translator.alt(alternatives)


_CONDITIONAL_KEYWORDS = ("if", "then", "else", MORE_CONDITIONS)


def _next_conditional(schema: dict) -> dict:
    """``schema`` without its ``if`` / ``then`` / ``else``, the next
    conditional of ``MORE_CONDITIONS`` (if any) in their place."""
    rest = {k: v for k, v in schema.items() if k not in _CONDITIONAL_KEYWORDS}
    pending = schema.get(MORE_CONDITIONS, [])
    if pending:
        rest.update(pending[0])
        if len(pending) > 1:
            rest[MORE_CONDITIONS] = pending[1:]
    return rest


def schema_dependencies(schema: dict) -> list[tuple[str, str, Any]]:
    """``(keyword, trigger, dependent schema)`` of ``dependentSchemas`` and of
    the schema-valued (dict or boolean) entries of ``dependencies``, in order."""
    entries = []
    for keyword in ("dependentSchemas", "dependencies"):
        value = schema.get(keyword)
        if isinstance(value, dict):
            entries.extend((keyword, trigger, sub) for trigger, sub in value.items()
                           if isinstance(sub, (dict, bool)))
    return entries


def dependent_schemas_node(translator, schema: dict, pointer: str) -> Any:
    """The alternation over every presence pattern of the triggers (module
    docstring); ``schema`` has no ``allOf``/``anyOf``/``oneOf``/``not``/``if`` left."""
    entries = schema_dependencies(schema)
    rest = {k: v for k, v in schema.items() if k != "dependentSchemas"}
    if isinstance(rest.get("dependencies"), dict):
        rest["dependencies"] = {trigger: targets
                                for trigger, targets in rest["dependencies"].items()
                                if not isinstance(targets, (dict, bool))}
    if len(entries) > MAX_DEPENDENT_SCHEMAS:
        dropped = ", ".join(repr(trigger) for _, trigger, _ in entries[MAX_DEPENDENT_SCHEMAS:])
        translator.warn(entries[MAX_DEPENDENT_SCHEMAS][0], pointer,
                        f"more than {MAX_DEPENDENT_SCHEMAS} dependent schemas: those of "
                        f"{dropped} are not enforced")
        entries = entries[:MAX_DEPENDENT_SCHEMAS]
    cases: list = [rest]
    for keyword, trigger, dependent in entries:
        dependent_pointer = f"{pointer}/{keyword}/{trigger}"
        split = []
        for case in cases:
            split.append(merge_schemas(translator, [case, {"properties": {trigger: False}}],
                                       dependent_pointer, owner=0))
            split.append(merge_schemas(translator, [case, {"type": "object", "required": [trigger]},
                                                    dependent], dependent_pointer, owner=0))
        cases = [case for case in split if case is not False]
    return translator.alt([translator.node(case, pointer) for case in cases])
