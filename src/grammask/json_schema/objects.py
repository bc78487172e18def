"""Objects: properties, required, additional/pattern properties, min/maxProperties.

What it computes: the node for ``type: object`` under a schema.

Construction (schema order, the default): members p_0..p_{n-1} in the
order of ``properties`` (then required names the schema does not declare),
each required or optional; "extra" members (``patternProperties`` and
``additionalProperties``) may appear in any gap.  Rules ``T(i, c)`` mean "the
members from p_i on, ``c`` members already written" with productions

    T(i, c) ::= sep(c) kv_i T(i+1, c+1)        p_i present
              | T(i+1, c)                      p_i optional and absent
              | sep(c) extra T(i, c+1)         an extra member here
    T(n, c) ::= ws "}"                         when c >= max(minProperties, 1)

where ``sep(0)`` is empty and ``sep(c>0)`` is ``ws "," ws``: an optional
property is *absent* (never "key with an empty value", docs/design.md section 10),
commas sit only between present members, and the grammar is linear in n
(at most ``(n + 1) * (cap + 1)`` rules, ``cap`` = 1 unless min/maxProperties
need counting; a guard falls back to uncounted with a warning past
``MAX_COUNTED_STATES``).  A run of required members is one production
(``_chains``): a rule ``T(i, c) ::= sep kv_i T(i+1, c') | sep extra T(i, c)``
(a required member once the count saturates) is ``Gap kv_i T(i+1, c')``
with one shared ``Gap ::= sep | sep extra Gap`` (just ``sep`` when no extra
member is allowed, the rule then being ``sep kv_i T(i+1, c')``), and a
state only its predecessor enters is spelled inside that production
(``Gap kv_i Gap kv_{i+1} ... T(j, c')``).  Where the count saturates at 1
and no dependency is tracked, a run of two or more required members is one
member of the state graph before it is built (``_required_runs``), so the
graph is linear in the optional members and the runs, and the start's rule
takes the member alternatives of the count-0 states it reaches by skipping
optional members, which get no rule (``_first_member_states``).  The object is ``"{" ws "}"``
(when empty is allowed) or ``"{" ws T(0, 0)``, so no two whitespace runs
ever touch.  ``sep(c)`` and ``ws "}"`` are one terminal each
(``GrammarBuilder.separator``, ``closing``), so no T rule is nullable and
eliminating nullable symbols adds nothing here.

A ``patternProperties`` pattern with a finite language (``^(a|b)$``) is
its names declared as optional properties (exact, and excluded from extra
keys).  ``dependentRequired`` (and draft-7 array ``dependencies``): names it
mentions become optional declared members, and the rule names carry a
bit mask (``_ordered``) so a trigger is only written with its targets.

Extra keys partition the keys that are no declared name, so each key has
exactly the schemas JSON Schema applies to it (``_pattern_members``):
patterns with equal schemas are joined (their keys' alternation); patterns
whose key languages meet (a non-empty ``intersection`` DFA) are grouped, and
a group of at most ``MAX_OVERLAPPING_PATTERNS`` is split into its non-empty
cells (keys found by exactly the patterns of a subset: a ``difference``
terminal, ``terminals.DIFFERENCE_SEPARATOR``) under the merge of the
subset's schemas; every cell also removes the declared names it would
contain, in every JSON spelling.  ``additionalProperties`` keys are JSON
strings minus every pattern's keys and the remaining names (without
patterns: terminals built from the names' trie, ``key_exclusion``, cut so
each fits the DFA limits; ``strings.string_not_in_parts`` for names with
a character JSON escapes: ``"``, ``\\`` or a control character).  Still warned: larger groups,
and key terminals past the default DFA limits (then a key may be accepted
under one matching schema only).  Pattern semantics are ECMA-262 searches
over the decoded key (``strings.translate_pattern``).
A complement's required members (``keywords.EXTRA_WITNESSES``, up to
``MAX_WITNESSES``: "a member whose key is in K with a value valid against
V") are either a declared name in K (that name required with V merged into
its schema, one alternative per name) or an extra member: for each set of
them, one member node per extra-key cell met with their keys (a
``difference`` terminal) and values (merged), and ``T(i, c, mask)``
carries one bit per required member, set by such a member and required at
the end.
``propertyNames`` (pattern, lengths, enum, const, false; a ``$ref`` to
such a schema is followed) is checked on declared names in Python; of
pattern, lengths and an asserted format, its regexes meet every extra-key
terminal (``_names_key_regexes``; any other form becomes the key grammar
of additional properties when no names are declared, else is warned); an
``enum`` / ``const`` lists every key, so each allowed one is declared with
the schema the object gives it and no other key is accepted.  With
``any_order=True`` see ``_any_order`` (required members, dependencies and
counts tracked in the rule names).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, NamedTuple, Optional

from grammask.errors import LimitExceeded
from grammask.grammar.ast import RuleRef
from grammask.json_schema import formats, strings
from grammask.json_schema.builder import NEVER, rule_hint
from grammask.json_schema.key_exclusion import key_not_in
from grammask.json_schema.keywords import (
    ADDITIONAL_OF, ANNOTATION_KEYWORDS, EXTRA_WITNESSES, child_pointer, count_keyword,
    has_constraints, listed_strings, pattern_matches,
)
from grammask.json_schema.merge import merge_schemas, outside_constraints
from grammask.json_schema.refs import UnresolvedRef
from grammask.json_schema.regex_text import alternation, json_string_literal_regex
from grammask.json_schema.values import json_equal, simple_constraints_hold, string_literal_node
from grammask.terminals import DIFFERENCE_SEPARATOR, INTERSECTION_SEPARATOR, compile_regex

MAX_COUNTED_STATES = 20_000
MAX_DEPENDENCY_BITS = 6
MAX_WITNESSES = 3
"""At most this many members ``EXTRA_WITNESSES`` requires at once (a bit
each in the member states, a key terminal per set of them)."""
MAX_OVERLAPPING_PATTERNS = 4
"""A group of patterns whose keys overlap is split into its (up to 2**n - 1)
cells only up to this size; past it a warning (each key under any one schema)."""
MAX_PATTERNS_COMPARED = 16
"""Past this many patterns their pairwise overlap is not checked (one group)."""


def key_node(translator, name: str):
    translator.count()
    return string_literal_node(name)


def object_node(translator, schema: dict, pointer: str) -> Any:
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise translator.error(pointer, "properties must be an object")
    required = schema.get("required", [])
    if isinstance(required, bool):
        required = []  # draft 3: warned about by the translator
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise translator.error(pointer, "required must be an array of strings")
    required_names = set(required)
    patterns = schema.get("patternProperties", {})
    if not isinstance(patterns, dict):
        raise translator.error(pointer, "patternProperties must be an object")
    constraints = schema.get(ADDITIONAL_OF, [])
    if "additionalProperties" in schema:
        additional = schema["additionalProperties"]
    else:
        additional = not (translator.options.close_objects and (properties or patterns))
    colon = translator.colon()

    def kv(key, value):
        return translator.seq(key, colon, value)

    finite = {pattern: strings.finite_pattern_strings(pattern) for pattern in patterns}
    if any(names is not None for names in finite.values()):
        # A pattern matching finitely many names is those names declared.
        properties = dict(properties)
        for pattern, names in finite.items():
            for name in names or []:
                if name not in properties:
                    properties[name] = True
    extra_patterns = {p: sub for p, sub in patterns.items() if finite[p] is None}
    names_schema = _resolved_names_schema(translator, schema.get("propertyNames", True))
    name_allowed = _name_check(translator, names_schema, pointer)
    listed = listed_strings(names_schema)
    if listed is not None:
        # Finitely many keys: each allowed one is declared, with the schema
        # the object would give it (its patterns' or additionalProperties),
        # and no other key exists.
        properties = dict(properties)
        for name in listed:
            if name not in properties and name_allowed(name):
                properties[name] = True if any(pattern_matches(p, name) for p in patterns) \
                    else additional
        extra_patterns, additional = {}, False

    members: list[tuple[str, Any, bool]] = []
    declared: list[str] = []
    for name, sub in properties.items():
        declared.append(name)
        if not name_allowed(name):
            if name in required_names:
                return NEVER
            continue
        sub_pointer = child_pointer(pointer, "properties", name)
        matching = [s for p, s in patterns.items() if pattern_matches(p, name)] \
            + outside_constraints(constraints, name)
        if matching:
            sub = merge_schemas(translator, [sub] + matching, sub_pointer)
        value = translator.node(sub, sub_pointer)
        is_required = name in required_names
        if value is NEVER:
            if is_required:
                return NEVER
            continue
        members.append((name, kv(key_node(translator, name), value), is_required))
    for name in dict.fromkeys(required):
        if name in properties:
            continue
        declared.append(name)
        if not name_allowed(name):
            return NEVER
        matching = [s for p, s in patterns.items() if pattern_matches(p, name)]
        sub = merge_schemas(translator, (matching or [additional])
                            + outside_constraints(constraints, name), pointer)
        value = translator.node(sub, child_pointer(pointer, "required"))
        if value is NEVER:
            return NEVER
        members.append((name, kv(key_node(translator, name), value), True))

    for name in _dependency_names(schema):
        if name in declared or not name_allowed(name):
            continue
        matching = [s for p, s in patterns.items() if pattern_matches(p, name)]
        sub = merge_schemas(translator, (matching or [additional])
                            + outside_constraints(constraints, name), pointer)
        value = translator.node(sub, child_pointer(pointer, "dependentRequired"))
        declared.append(name)
        if value is not NEVER:
            members.append((name, kv(key_node(translator, name), value), False))

    extras = []
    names_keys = _names_key_regexes(names_schema) if has_constraints(names_schema) else []
    if names_schema is False:
        extra_patterns, additional = {}, False
    elif names_keys is None and (extra_patterns or (additional is not False and declared)):
        translator.warn("propertyNames", pointer, "checked on declared names only, not on "
                                                  "keys of patternProperties or "
                                                  "additionalProperties")
    pattern_keys = []
    for pattern, sub in extra_patterns.items():
        sub_pointer = child_pointer(pointer, "patternProperties", pattern)
        try:
            key = _pattern_regex(pattern)
        except strings.PatternUnsupported as error:
            translator.warn("patternProperties", sub_pointer, f"{error}; the keys it "
                                                              f"matches are treated as "
                                                              f"additional properties")
            continue
        pattern_keys.append(PatternKey((pattern,), key, sub, sub_pointer))
    pattern_keys = _same_schema_joined(pattern_keys)
    cells: list = []
    extras.extend(_pattern_members(translator, pattern_keys, declared, kv, pointer, cells,
                                   constraints, names_keys or []))
    if additional is not False:
        sub_pointer = child_pointer(pointer, "additionalProperties")
        value = translator.node(additional, sub_pointer)
        if value is not NEVER:
            if names_keys:
                key = _key_outside(translator, pattern_keys, declared, pointer, names_keys)
            elif not declared and has_constraints(names_schema):
                if pattern_keys:
                    translator.warn("patternProperties", pointer,
                                    "keys matching a pattern are also accepted with the "
                                    "additionalProperties schema (propertyNames keys)")
                key = translator.node(_as_string_schema(names_schema),
                                      child_pointer(pointer, "propertyNames"))
            elif pattern_keys:
                key = _key_outside(translator, pattern_keys, declared, pointer)
            elif not declared:
                key = translator.generic("string")
            else:
                key = key_not_in(translator, declared)
            if key is not NEVER:
                extras.append(kv(key, value))
    extra = None
    if extras:
        extra = translator.define(translator.fresh_name(rule_hint(pointer, "extra")),
                                  translator.alt(extras))

    min_count = count_keyword(translator, schema, "minProperties", pointer) or 0
    max_count = count_keyword(translator, schema, "maxProperties", pointer)
    witnesses = schema.get(EXTRA_WITNESSES)
    if witnesses:
        named_keys = additional is not False and not declared and names_keys is None
        if len(witnesses) > MAX_WITNESSES or translator.options.any_order or named_keys:
            translator.warn("not", pointer, f"a member required by a complement of "
                                            f"additionalProperties / patternProperties is not "
                                            f"enforced beside propertyNames keys, "
                                            f"any_order=True or past MAX_WITNESSES = "
                                            f"{MAX_WITNESSES}")
            return translator.node({k: v for k, v in schema.items() if k != EXTRA_WITNESSES},
                                   pointer)
        if additional is not False:
            cells.append(([strings.string_regex(0, None)] + (names_keys or []),
                          [key.key for key in pattern_keys] + [_name_regex(n) for n in declared],
                          additional, child_pointer(pointer, "additionalProperties")))
        found = {}
        for subset in range(1, 1 << len(witnesses)):
            chosen = [w for index, w in enumerate(witnesses) if subset >> index & 1]
            made = _witness_members(translator, chosen, cells, kv, pointer)
            if made is None:
                return translator.node({k: v for k, v in schema.items()
                                        if k != EXTRA_WITNESSES}, pointer)
            if made:
                found[subset] = translator.define(
                    translator.fresh_name(rule_hint(pointer, "witness")), translator.alt(made))
        alternatives = []
        for index, witness in enumerate(witnesses):
            others = {k: v for k, v in schema.items() if k != EXTRA_WITNESSES}
            if len(witnesses) > 1:
                others[EXTRA_WITNESSES] = witnesses[:index] + witnesses[index + 1:]
            alternatives.extend(translator.node(merge_schemas(translator, [others, {
                "required": [name], "properties": {name: witness["schema"]}}], pointer), pointer)
                for name in declared if _witness_key(witness, name))
        if found:
            alternatives.append(_ordered(translator, members, extra, min_count, max_count,
                                         pointer, schema, found, len(witnesses)))
        return translator.alt(alternatives)
    if translator.options.any_order:
        return _any_order(translator, schema, members, extra, min_count, max_count, pointer)
    return _ordered(translator, members, extra, min_count, max_count, pointer, schema)


def _pattern_regex(pattern: str, ascii_escapes: bool = True) -> str:
    """The JSON-string regex (quotes included) of the keys ``pattern`` finds
    (``strings.translate_pattern``)."""
    return '"' + strings.translate_pattern(pattern, ascii_escapes=ascii_escapes)[0] + '"'


def _witness_key(witness: dict, name: str) -> bool:
    """Whether key ``name`` is one a witness of ``EXTRA_WITNESSES`` requires."""
    return (witness["pattern"] is None or pattern_matches(witness["pattern"], name)) \
        and name not in witness["names"] \
        and not any(pattern_matches(pattern, name) for pattern in witness["patterns"])


def _witness_members(translator, witnesses: list, cells: list, kv, pointer: str) \
        -> Optional[list]:
    """The extra members (keys no declared name) that are at once each of
    ``witnesses`` (``EXTRA_WITNESSES`` entries): one per cell of extra keys
    (``cells``: the (kept, removed, schema, pointer) of each
    ``_pattern_members`` member and of the additional keys), its key
    terminal met with the witnesses' keys, its value schema with their
    schemas.  None (warned) when a key terminal exceeds the DFA limits or a
    pattern cannot be translated."""
    within, outside = [], []
    try:
        for witness in witnesses:
            if witness["pattern"] is not None:
                within.append(_pattern_regex(witness["pattern"]))
            outside.extend(_pattern_regex(pattern) for pattern in witness["patterns"])
            outside.extend(_name_regex(name) for name in witness["names"])
    except strings.PatternUnsupported as error:
        translator.warn("not", pointer, f"{error}: a member required by a complement is "
                                        f"not enforced")
        return None
    members = []
    for kept, removed, value_schema, sub_pointer in cells:
        kept, removed = kept + within, removed + outside
        present = _non_empty(kept, removed)
        if present is None:
            translator.warn("not", pointer, "a key terminal of a member required by a "
                                            "complement exceeds the DFA limits: not enforced")
            return None
        if not present:
            continue
        value = translator.node(merge_schemas(
            translator, [value_schema] + [witness["schema"] for witness in witnesses],
            sub_pointer), sub_pointer)
        if value is not NEVER:
            members.append(kv(translator.rx_minus(kept, removed), value))
    return members


_NAME_KEYWORDS = {"pattern", "minLength", "maxLength", "enum", "const", "type", "format",
                  "title", "description", "$comment", "default", "examples"}


def _name_check(translator, names_schema, pointer: str):
    """A Python predicate for declared names under ``propertyNames``."""
    if names_schema is True or names_schema == {}:
        return lambda name: True
    if names_schema is False:
        return lambda name: False
    if not isinstance(names_schema, dict) or not set(names_schema) <= _NAME_KEYWORDS:
        translator.warn("propertyNames", pointer, "only pattern, lengths, enum and const are "
                                                  "supported: not enforced")
        return lambda name: True
    return lambda name: simple_constraints_hold(name, names_schema) and (
        "enum" not in names_schema or name in names_schema["enum"]) and (
        "const" not in names_schema or name == names_schema["const"])


def _resolved_names_schema(translator, names_schema: Any) -> Any:
    """``names_schema`` with a ``$ref`` that is its only keyword (annotations
    aside) replaced by the target, as long as the target is one (an
    unresolved reference is left for ``_name_check`` to warn about)."""
    for _ in range(8):
        if not isinstance(names_schema, dict) or not isinstance(names_schema.get("$ref"), str) \
                or set(names_schema) - ANNOTATION_KEYWORDS != {"$ref"}:
            return names_schema
        try:
            names_schema = translator.resolver.resolve(names_schema["$ref"],
                                                       translator.base_uri)[0]
        except UnresolvedRef:
            return names_schema
    return names_schema


def _names_key_regexes(names_schema: Any) -> Optional[list[str]]:
    """The JSON-string regexes (quotes included) every key must match under
    a ``propertyNames`` of pattern, lengths and asserted format (``type``
    string), or None for any other form (an enum / const lists the keys
    instead, ``listed_strings``) or a pattern that cannot be translated."""
    if not isinstance(names_schema, dict) or listed_strings(names_schema) is not None:
        return None
    asserting = set(names_schema) - ANNOTATION_KEYWORDS
    if not asserting <= {"pattern", "minLength", "maxLength", "format", "type"} \
            or names_schema.get("type", "string") != "string":
        return None
    format_name = names_schema.get("format")
    if format_name is not None and (format_name in formats.NOT_ENFORCED
                                    or format_name in formats.GRAMMAR_FORMATS
                                    or formats.looseness(format_name, [None]) is not None):
        return None
    low, high = names_schema.get("minLength", 0), names_schema.get("maxLength")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
               for n in [low] + ([high] if high is not None else [])):
        return None
    regexes = [strings.string_regex(low, high)] if low or high is not None else []
    try:
        for _, pattern, ascii_escapes in formats.asserted_patterns(names_schema):
            regexes.append(_pattern_regex(pattern, ascii_escapes))
    except strings.PatternUnsupported:
        return None
    return regexes


def _as_string_schema(names_schema: dict) -> dict:
    """propertyNames applies to keys, which are strings."""
    result = dict(names_schema)
    result["type"] = "string"
    return result


class PatternKey(NamedTuple):
    """``patternProperties`` entries sharing one schema: ``key`` is the
    JSON-string regex (quotes included, every spelling) of the names some
    pattern of ``patterns`` finds."""
    patterns: tuple[str, ...]
    key: str
    schema: Any
    pointer: str

    def matches(self, name: str) -> bool:
        return any(pattern_matches(pattern, name) for pattern in self.patterns)


def _same_schema_joined(pattern_keys: list[PatternKey]) -> list[PatternKey]:
    """Patterns with equal schemas as one entry (their keys' alternation):
    a key matching several of them needs no merge."""
    joined: list[PatternKey] = []
    for entry in pattern_keys:
        for index, other in enumerate(joined):
            if json_equal(entry.schema, other.schema):
                joined[index] = PatternKey(other.patterns + entry.patterns,
                                           alternation([other.key, entry.key]), other.schema,
                                           other.pointer)
                break
        else:
            joined.append(entry)
    return joined


def _name_regex(name: str) -> str:
    """Every JSON spelling of the key ``name``, quotes included."""
    return json_string_literal_regex(name, ascii_escapes=True)


def _non_empty(kept: list[str], removed: list[str]) -> Optional[bool]:
    """Whether the key terminal ``kept`` minus ``removed`` is non-empty, or
    None when its DFA exceeds the default limits."""
    if not removed and len(kept) == 1:
        return True
    text = DIFFERENCE_SEPARATOR.join([INTERSECTION_SEPARATOR.join(kept)] + removed)
    try:
        return not compile_regex(text, kind="difference").is_empty_language
    except LimitExceeded:
        return None


def _pattern_members(translator, pattern_keys: list[PatternKey], declared: list[str], kv,
                     pointer: str, cells_out: list, constraints: list,
                     names_keys: list[str]) -> list:
    """Members whose key matches some pattern and is no declared name (and
    every regex of ``names_keys``, propertyNames'); each member's (kept,
    removed, schema, pointer) is appended to ``cells_out``.

    Patterns whose key languages meet are grouped (connected components of
    the "intersection non-empty" relation).  A lone pattern's keys take its
    schema.  In a group of at most MAX_OVERLAPPING_PATTERNS patterns, every
    non-empty cell (keys matching exactly the patterns of a subset S) takes
    the merge of S's schemas; a larger group, or a cell past the DFA limits,
    falls back to each pattern's keys under its own schema, with a warning.
    """
    n = len(pattern_keys)
    if n > MAX_PATTERNS_COMPARED:
        groups = [list(range(n))]
    else:
        groups = _overlap_groups(pattern_keys)
    members = []
    for group in groups:
        cells = None
        if len(group) == 1:
            cells = [(tuple(group), [])]
        elif len(group) <= MAX_OVERLAPPING_PATTERNS:
            cells = _cells(pattern_keys, group)
        if cells is None:
            translator.warn("patternProperties", pointer,
                            f"{len(group)} patterns with overlapping keys: a key matching "
                            f"several of them is accepted with any one of their schemas")
            cells = [((index,), []) for index in group]
        for subset, others in cells:
            chosen = [pattern_keys[index] for index in subset]
            names = [_name_regex(name) for name in declared
                     if all(p.matches(name) for p in chosen)]
            kept = [p.key for p in chosen] + names_keys
            removed = [pattern_keys[index].key for index in others] + names
            if names_keys:
                present = _non_empty(kept, removed)
                if present is False:
                    continue  # propertyNames allows none of these keys
                if present is None:
                    translator.warn("propertyNames", chosen[0].pointer,
                                    "the key terminal met with propertyNames exceeds the DFA "
                                    "limits: not checked on these keys")
                    kept = kept[:len(chosen)]
            if names and _non_empty(kept, removed) is None:
                translator.warn("patternProperties", chosen[0].pointer,
                                "the key terminal minus the declared names exceeds the DFA "
                                "limits: declared names matching the pattern are also "
                                "accepted with only the pattern's schema")
                removed = removed[:len(others)]
            if len(chosen) == 1:
                schema, sub_pointer = chosen[0].schema, chosen[0].pointer
            else:
                sub_pointer = child_pointer(pointer, "patternProperties")
                schema = merge_schemas(translator, [p.schema for p in chosen], sub_pointer)
            for kept_part, removed_part, schema_part in _constrained_cells(
                    translator, chosen, kept, removed, schema, constraints, sub_pointer):
                value = translator.node(schema_part, sub_pointer)
                if value is not NEVER:
                    members.append(kv(translator.rx_minus(kept_part, removed_part), value))
                    cells_out.append((kept_part, removed_part, schema_part, sub_pointer))
    return members


def _constrained_cells(translator, chosen: list, kept: list[str], removed: list[str],
                       schema: Any, constraints: list, pointer: str) -> list:
    """A cell of pattern keys split by the ``ADDITIONAL_OF`` entries: its keys
    outside an entry's names and patterns also meet the entry's schema.
    (kept, removed, schema) of each non-empty part; an entry whose
    patterns hold all of a ``chosen`` entry's does not apply; a split
    past the DFA limits or with a pattern it cannot translate is warned and
    the entry applied to the whole cell (stricter)."""
    parts = [(kept, removed, [schema])]
    for entry in constraints:
        if any(all(pattern in entry["patterns"] for pattern in key.patterns) for key in chosen):
            continue  # every key of the cell matches one of the entry's patterns
        try:
            inside = [_name_regex(name) for name in entry["names"]] + [
                _pattern_regex(pattern) for pattern in entry["patterns"]]
        except strings.PatternUnsupported:
            inside = None
        split = []
        for part_kept, part_removed, schemas in parts:
            met = (part_kept, part_removed + (inside or []), schemas + [entry["schema"]])
            if inside == []:  # the entry's rule applies to every key
                split.append(met)
                continue
            pieces = [met, (part_kept + [alternation(inside)], part_removed, schemas)] \
                if inside else []
            found = [_non_empty(piece[0], piece[1]) for piece in pieces]
            if not pieces or None in found:
                translator.warn("patternProperties", pointer,
                                "keys of a pattern not split by another allOf operand's "
                                "patterns: its additionalProperties is met by all of them")
                split.append((part_kept, part_removed, met[2]))
                continue
            split.extend(piece for piece, present in zip(pieces, found) if present)
        parts = split
    return [(part_kept, part_removed, schemas[0] if len(schemas) == 1 else
             merge_schemas(translator, schemas, pointer))
            for part_kept, part_removed, schemas in parts]


def _overlap_groups(pattern_keys: list[PatternKey]) -> list[list[int]]:
    """Connected components of "some key matches both entries"."""
    parent = list(range(len(pattern_keys)))

    def root(index: int) -> int:
        while parent[index] != index:
            index = parent[index]
        return index

    for first in range(len(pattern_keys)):
        for second in range(first + 1, len(pattern_keys)):
            a, b = pattern_keys[first], pattern_keys[second]
            if _non_empty([a.key, b.key], []) is not False:
                parent[root(second)] = root(first)
    groups: dict[int, list[int]] = {}
    for index in range(len(pattern_keys)):
        groups.setdefault(root(index), []).append(index)
    return list(groups.values())


def _cells(pattern_keys: list[PatternKey], group: list[int]):
    """``(subset, others)`` for every non-empty cell of ``group``: keys
    matching every pattern of ``subset`` and none of ``others``; None when a
    cell's DFA exceeds the limits."""
    cells = []
    for size in range(1, len(group) + 1):
        for subset in itertools.combinations(group, size):
            others = [index for index in group if index not in subset]
            kept = [pattern_keys[index].key for index in subset]
            non_empty = _non_empty(kept, [pattern_keys[i].key for i in others])
            if non_empty is None:
                return None
            if non_empty:
                cells.append((subset, others))
    return cells


def _key_outside(translator, pattern_keys: list[PatternKey], declared: list[str],
                 pointer: str, names_keys: Optional[list[str]] = None) -> Any:
    """Keys matching no pattern and no declared name (additionalProperties),
    and every regex of ``names_keys`` (propertyNames')."""
    names = [_name_regex(name) for name in declared
             if not any(p.matches(name) for p in pattern_keys)]
    removed = [p.key for p in pattern_keys] + names
    kept = [strings.string_regex(0, None)] + (names_keys or [])
    fits = _non_empty(kept, removed)
    if fits is None:
        translator.warn("patternProperties", pointer,
                        "the additional-key terminal exceeds the DFA limits: keys matching "
                        "a pattern are also accepted with the additionalProperties schema")
        return key_not_in(translator, declared) if declared else translator.generic("string")
    if not fits:
        return NEVER
    return translator.rx_minus(kept, removed)


def _dependency_names(schema: dict) -> list[str]:
    """Names mentioned by dependentRequired / array dependencies, in order:
    they become optional declared members (with the schema an undeclared
    property would get), so the ordered grammar can track them."""
    names: list[str] = []
    for keyword in ("dependentRequired", "dependencies"):
        value = schema.get(keyword)
        if isinstance(value, dict):
            for trigger, targets in value.items():
                if isinstance(targets, list):
                    names.extend([trigger] + [t for t in targets if isinstance(t, str)])
    return list(dict.fromkeys(names))


def _dependency_pairs(schema: dict, members):
    """``(trigger, target)`` pairs of dependentRequired (and draft-7 array
    ``dependencies``) the ordered grammar tracks, plus the names that can
    never be present (a target that is no member).  Every name these
    keywords mention is declared (``_dependency_names``), so a name that is
    no member (its schema is false, or ``propertyNames`` rejects it) is never
    an extra key either: a trigger that is no member needs nothing."""
    position = {name: index for index, (name, _, _) in enumerate(members)}
    pairs, forbidden = [], set()
    for keyword in ("dependentRequired", "dependencies"):
        value = schema.get(keyword)
        if not isinstance(value, dict):
            continue
        for trigger, targets in value.items():
            if not isinstance(targets, list) or trigger not in position:
                continue  # schema dependencies: split off by applicators.dependent_schemas_node
            for target in targets:
                if target in position and target != trigger:
                    pairs.append((trigger, target))
                elif target not in position:
                    forbidden.add(trigger)
    return pairs, forbidden


def _ordered(translator, members, extra, min_count: int, max_count, pointer: str,
             schema: dict, witness: Optional[dict] = None, n_witnesses: int = 0) -> Any:
    """The ``T(i, count, mask)`` rules of the module docstring.  ``mask``
    tracks dependentRequired: an "emitted" bit for each target declared
    before its trigger, a "now required" bit for each target declared after
    it (at most MAX_DEPENDENCY_BITS bits); with ``n_witnesses`` members
    ``EXTRA_WITNESSES`` requires, one more bit each says it was written,
    which the end requires: ``witness`` maps a set of them (bits from 1)
    to the node of the extra members that are each of the set at once."""
    n = len(members)
    counted = bool(min_count) or max_count is not None
    saturating = max_count is None
    cap = max_count if not saturating else max(min_count, 1)
    if counted and (n + 1) * (cap + 1) > MAX_COUNTED_STATES:
        translator.warn("maxProperties" if max_count is not None else "minProperties", pointer,
                        "too many member/count states: property counts not enforced")
        return _ordered(translator, members, extra, 0, None, pointer, schema, witness,
                        n_witnesses)
    need = max(min_count, 1)
    position = {name: index for index, (name, _, _) in enumerate(members)}
    pairs, forbidden = _dependency_pairs(schema, members)
    bit_names = sorted({target for trigger, target in pairs}, key=position.get)
    if len(bit_names) > MAX_DEPENDENCY_BITS:
        translator.warn("dependentRequired", pointer, f"{len(bit_names)} dependency targets "
                                                      f"(> {MAX_DEPENDENCY_BITS}): not enforced")
        pairs, bit_names = [], []
    bit = {name: 1 << index for index, name in enumerate(bit_names)}
    witnessed = ((1 << n_witnesses) - 1) << MAX_DEPENDENCY_BITS
    prefix = translator.fresh_name(rule_hint(pointer, "members"))
    made_gap: list = []

    def gap():
        """``Gap`` of the module docstring, defined when first used."""
        if not made_gap:
            made_gap.append(translator.comma())
            if extra is not None:
                gap_name = translator.fresh_name(f"{prefix}_gap")
                made_gap[0] = translator.define(gap_name, translator.alt([
                    made_gap[0], translator.seq(made_gap[0], extra, RuleRef(gap_name))]))
        return made_gap[0]

    runs = {}
    simple = saturating and cap == 1 and not pairs and not forbidden and witness is None
    if simple:
        members, runs = _required_runs(translator, members, gap)
        n = len(members)

    def edges(state):
        """(kind, successor) pairs: kind is "member", "skip", "extra", "witness" or "end"."""
        i, count, mask = state
        result = []
        following = _next_count(count, cap, saturating)
        if i < n and not pairs:
            _plain_member_edges(result, state, following, members[i][2], members[i][0] in forbidden)
        elif i < n:
            name, _, is_required = members[i]
            earlier_ok = all(mask & bit[target] for trigger, target in pairs
                             if trigger == name and position[target] < i)
            if following is not None and name not in forbidden and earlier_ok:
                new_mask = mask | bit.get(name, 0) if any(
                    target == name and position[trigger] > i for trigger, target in pairs) \
                    else mask
                for trigger, target in pairs:
                    if trigger == name and position[target] > i:
                        new_mask |= bit[target]
                result.append(("member", (i + 1, following, new_mask)))
            if not is_required and not (mask & bit.get(name, 0) and any(
                    target == name and position[trigger] < i for trigger, target in pairs)):
                result.append(("skip", (i + 1, count, mask)))
        elif count >= need and mask & witnessed == witnessed:
            result.append(("end", None))
        if extra is not None and following is not None:
            result.append(("extra", (i, following, mask)))
        if following is not None:
            written = (mask & witnessed) >> MAX_DEPENDENCY_BITS
            result.extend(("witness", (i, following, mask | subset << MAX_DEPENDENCY_BITS))
                          for subset in (witness or {}) if not subset & written)
        return result

    if not pairs and witness is None:
        graph, productive, successor, absorbed, first_states = _plain_shape(
            tuple(member[2] for member in members),
            tuple(member[0] in forbidden for member in members), extra is not None, cap,
            saturating, need)
    else:
        graph, productive = _explored(edges)
        successor, absorbed = _chains(graph, productive, extra is not None)
        first_states = []
    if min_count == 0 and not any(m[2] for m in members) and witness is None:
        empty = translator.seq(translator.lit("{"), translator.ws(), translator.lit("}"))
    else:
        empty = NEVER
    if (0, 0, 0) not in productive:
        return empty
    for index, run in runs.items():
        if (index, 0, 0) in productive and (index, 1, 0) in productive:
            # Entered first and after a member: one rule instead of two copies.
            rule = translator.define(translator.fresh_name(f"{prefix}_run_{index}"), run[1])
            members[index] = (run[0], rule, True)
    first = first_states if simple else []
    # Every state name is a fresh name: another object at the same pointer
    # (a dependentSchemas case) gets a prefix that extends this one.
    skipped = set(first)
    names = {state: (prefix if state == (0, 0, 0) else translator.fresh_name(
                     f"{prefix}_{state[0]}_{state[1]}" + (f"_{state[2]}" if state[2] else "")))
             for state in graph if state in productive and state not in absorbed
             and state not in skipped}
    refs = {state: RuleRef(name) for state, name in names.items()}
    for state, name in names.items():
        if state in successor:
            items = [gap(), members[state[0]][1]]
            state = successor[state]
            while state in absorbed:
                items += [gap(), members[state[0]][1]]
                state = successor[state]
            translator.define(name, translator.seq(*items, refs[state]))
            continue
        separator = translator.comma() if state[1] > 0 else None
        alternatives = []
        for kind, target in graph[state]:
            if kind == "end":
                alternatives.append(translator.closing("}"))
            elif target in refs:
                if kind == "member":
                    alternatives.append(translator.seq(separator, members[state[0]][1],
                                                       refs[target]))
                elif kind == "skip":
                    alternatives.append(refs[target])
                elif kind == "witness":
                    subset = (target[2] ^ state[2]) >> MAX_DEPENDENCY_BITS
                    alternatives.append(translator.seq(separator, witness[subset], refs[target]))
                else:
                    alternatives.append(translator.seq(separator, extra, refs[target]))
        if state == (0, 0, 0):
            for later in first:
                alternatives.extend(translator.seq(members[later[0]][1], refs[target])
                                    for kind, target in graph[later]
                                    if kind == "member" and target in refs)
        translator.define(name, translator.alt(alternatives))
    full = translator.seq(translator.lit("{"), translator.ws(), refs[(0, 0, 0)])
    return translator.alt([empty, full])


def _next_count(count: int, cap: int, saturating: bool) -> Optional[int]:
    """The member count after one more member: saturating at ``cap``, or
    None (no more members) past it."""
    if saturating:
        return min(count + 1, cap)
    return count + 1 if count + 1 <= cap else None


def _plain_member_edges(result: list, state: tuple, following: Optional[int], required: bool,
                        forbidden: bool) -> None:
    """Append the edges of member ``state[0]`` when no dependency pair
    involves it: taken (unless forbidden or the count is full) and skipped
    (unless required)."""
    i, count, mask = state
    if following is not None and not forbidden:
        result.append(("member", (i + 1, following, mask)))
    if not required:
        result.append(("skip", (i + 1, count, mask)))


def _explored(edges) -> tuple[dict, set]:
    """The states reachable from ``(0, 0, 0)`` with their ``edges`` (in
    depth-first discovery order, which orders the rules), and the productive
    ones: those from which an "end" edge is reachable."""
    graph = {}
    pending = [(0, 0, 0)]
    while pending:
        state = pending.pop()
        if state in graph:
            continue
        graph[state] = edges(state)
        pending.extend(target for _, target in graph[state] if target is not None)
    productive: set = set()
    predecessors: dict = {}
    ready = []
    for state, out in graph.items():
        for kind, target in out:
            if kind == "end":
                ready.append(state)
            else:
                predecessors.setdefault(target, []).append(state)
    while ready:  # backwards from the ends: linear in the graph
        state = ready.pop()
        if state not in productive:
            productive.add(state)
            ready.extend(predecessors.get(state, ()))
    return graph, productive


@functools.lru_cache(maxsize=1024)
def _plain_shape(required: tuple, forbidden: tuple, has_extra: bool, cap: int,
                 saturating: bool, need: int) -> tuple:
    """``_ordered``'s state graph, productive states, ``_chains`` and
    ``_first_member_states`` for members without dependency pairs or
    witnesses: a function of each member's required and forbidden flags,
    whether extra members exist and the count bounds only, so it is
    memoized (objects of one shape recur across schemas).  The edges are
    those of ``_ordered.edges`` with no mask bits.  Read-only results."""
    n = len(required)

    def edges(state):
        i, count, mask = state
        result = []
        following = _next_count(count, cap, saturating)
        if i < n:
            _plain_member_edges(result, state, following, required[i], forbidden[i])
        elif count >= need:
            result.append(("end", None))
        if has_extra and following is not None:
            result.append(("extra", (i, following, mask)))
        return result

    graph, productive = _explored(edges)
    successor, absorbed = _chains(graph, productive, has_extra)
    first = _first_member_states(graph, productive) if (0, 0, 0) in productive else []
    return graph, productive, successor, absorbed, first


def _first_member_states(graph: dict, productive: set) -> list:
    """The states ``T(i, 0)``, i > 0, that the start reaches by skipping
    optional members.  With the count saturating at 1 and no dependency,
    the start's rule takes their member alternatives (``T(0, 0) ::= kv_0
    T(1, 1) | kv_1 T(2, 1) | ... | extra T(0, 1)``) and they get no rule:
    their ``extra T(i, 1)`` is inside ``extra T(0, 1)`` (T(0, 1) may skip
    members 0..i-1, which are optional), and nothing else enters them.  An
    object of n optional members is then about n + 2 rules instead of 2n."""
    result = []
    state = (0, 0, 0)
    while True:
        following = next((target for kind, target in graph[state] if kind == "skip"), None)
        if following is None or following not in productive:
            return result
        result.append(following)
        state = following


def _required_runs(translator, members, gap) -> tuple[list, dict]:
    """Each run of two or more required members as one member: once the
    count saturates (no min/maxProperties beyond 1, no dependencies) the
    states inside a run have one member edge and an extra edge each, so
    ``T(i, c) ::= sep(c) kv_i Gap kv_{i+1} ... Gap kv_{j-1} T(j, 1) | sep(c)
    extra T(i, 1)`` is the same language as the run spelled state by state,
    and the state graph is linear in the optional members and the runs, not
    in the members.  ``gap()`` gives the ``Gap`` node.  Returns the new
    members and ``{index: member}`` of the runs."""
    result, runs = [], {}
    start = 0
    while start < len(members):
        end = start
        while end < len(members) and members[end][2]:
            end += 1
        if end - start >= 2:
            items = [members[start][1]]
            for index in range(start + 1, end):
                items += [gap(), members[index][1]]
            runs[len(result)] = (members[start][0], translator.seq(*items), True)
            result.append(runs[len(result)])
            start = end
        else:
            result.append(members[start])
            start += 1
    return result, runs


def _chains(graph: dict, productive: set, has_extra: bool) -> tuple[dict, set]:
    """Runs of member states written as one production each.

    A *gap state* has a comma before its member, one productive "member"
    edge and, with extras, an "extra" edge back to itself: ``T(s) ::= sep
    kv T(t) | sep extra T(s)``, which is ``Gap kv T(t)`` with ``Gap ::= sep |
    sep extra Gap`` (``sep`` alone without extras).  A gap state that only
    its predecessor's member edge enters is *absorbed*: its ``Gap kv`` is
    spelled inside that production, so a run of required members is one
    production instead of a rule per member.  Returns ``successor`` (each gap
    state's member target) and the absorbed states."""
    gap_edges = 2 if has_extra else 1
    successor = {}
    entries: dict = {}
    for state, out in graph.items():
        if state not in productive:
            continue
        for kind, target in out:
            if target is not None and (kind != "extra" or target != state):
                entries[target] = entries.get(target, 0) + 1
        # ``edges`` lists a member edge first and an extra edge last.
        if state[1] and len(out) == gap_edges and out[0][0] == "member" and (
                out[0][1] in productive and (not has_extra or out[1] == ("extra", state))):
            successor[state] = out[0][1]
    absorbed = {target for state, target in successor.items()
                if target in successor and entries.get(target) == 1}
    return successor, absorbed


def _any_order(translator, schema, members, extra, min_count: int, max_count,
               pointer: str) -> Any:
    """Members in any order (``GrammarBuilder.any_order_object``): the
    required members, the property counts and dependentRequired (the pairs
    ``_dependency_pairs`` finds among the members) tracked in the rules'
    states, within ``Options.max_any_order_states``."""
    pairs, forbidden = _dependency_pairs(schema, members)
    position = {name: index for index, (name, _, _) in enumerate(members)}
    return translator.any_order_object(
        [(member, is_required) for _, member, is_required in members], extra,
        rule_hint(pointer, "any"), min_count, max_count,
        tuple((position[trigger], position[target]) for trigger, target in pairs),
        frozenset(position[name] for name in forbidden))
