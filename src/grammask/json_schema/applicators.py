"""Applicators that combine subschemas: ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``.

What it computes: ``any_of_node`` returns the alternation of the branches,
each merged with the schema's other keywords (``merge.merge_schemas``);
``oneOf`` is translated as ``anyOf``, which is exact when every two
branches are proven disjoint (``disjoint.disjoint``: by value class, by
const/enum values, by a discriminator property both require, by closed
objects, by string languages, by number bounds); otherwise it warns.  Beside ``unevaluatedProperties`` /
``unevaluatedItems``, an instance may match several ``anyOf`` branches at
once: up to ``MAX_ANY_OF_SUBSETS`` branches every combination is merged and
added, so the evaluated properties are exact.  ``apply_not`` rewrites
``not`` of types, or of null/boolean enum values, into a schema without
``not``; any other ``not`` is warned about and dropped.
``if_then_else_node`` accepts instances valid against (if and then) or
against else, with a warning: the condition itself is not checked.

Invariant: every approximation goes through ``translator.warn`` (which
raises ``SchemaUnsupported`` when ``strict``).
"""

from __future__ import annotations

from typing import Any, Optional

from grammask.json_schema.disjoint import disjoint
from grammask.json_schema.keywords import ANNOTATION_KEYWORDS, allowed_types, has_constraints
from grammask.json_schema.merge import merge_schemas
from grammask.json_schema.values import json_equal

MAX_ANY_OF_SUBSETS = 4
"""anyOf beside unevaluated*: up to this many branches, every combination is built."""


def any_of_node(translator, schema: dict, keyword: str, pointer: str) -> Any:
    """``anyOf`` / ``oneOf`` (``keyword``): one alternative per branch, each
    merged with the schema's other keywords."""
    branches = schema[keyword]
    if not isinstance(branches, list) or not branches:
        raise translator.error(pointer, f"{keyword} must be a non-empty array")
    rest = {k: v for k, v in schema.items() if k != keyword}
    if keyword == "oneOf":
        _check_one_of(translator, branches, pointer)
    alternatives = []
    for index, branch in enumerate(branches):
        branch_pointer = f"{pointer}/{keyword}/{index}"
        if has_constraints(rest):
            merged = merge_schemas(translator, [rest, branch], branch_pointer, owner=0)
            alternatives.append(translator.node(merged, branch_pointer))
        else:
            alternatives.append(translator.node(branch, branch_pointer))
    unevaluated = "unevaluatedProperties" in rest or "unevaluatedItems" in rest
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


def _check_one_of(translator, branches: list, pointer: str) -> None:
    """Warn when oneOf's "exactly one" could differ from anyOf's "at least
    one": unless every two branches are proven disjoint (``disjoint.disjoint``)."""
    for index, first in enumerate(branches):
        for other_index, second in enumerate(branches[:index]):
            if not disjoint(translator, first, second):
                translator.warn("oneOf", pointer, f"translated as anyOf: branches {other_index} "
                                                  f"and {index} may overlap, and an "
                                                  f"instance matching several is accepted")
                return


def apply_not(translator, schema: dict, pointer: str) -> dict:
    """The schema without ``not``, with the negation folded into ``type`` or
    into alternatives of the null/boolean values it leaves (else warned about)."""
    negated = schema["not"]
    rest = {k: v for k, v in schema.items() if k != "not"}
    if negated is True or negated == {}:
        return {"enum": []}
    if isinstance(negated, dict) and set(negated) <= {"type"} | ANNOTATION_KEYWORDS:
        excluded = negated.get("type")
        excluded = [excluded] if isinstance(excluded, str) else list(excluded or [])
        allowed = [t for t in allowed_types(translator, rest, pointer)
                   if t not in excluded and not (t == "integer" and "number" in excluded)]
        if "integer" in excluded and "number" in allowed:
            translator.warn("not", pointer, "non-integer numbers cannot be told from "
                                            "integers here; numbers accepted")
        rest["type"] = allowed
        return rest
    if isinstance(negated, dict) and set(negated) <= {"enum", "const"} | ANNOTATION_KEYWORDS:
        values = list(negated.get("enum", [])) + ([negated["const"]] if "const" in negated else [])
        if all(v is None or isinstance(v, bool) for v in values):
            kept = [v for v in (None, True, False) if not any(json_equal(v, x) for x in values)]
            allowed = allowed_types(translator, rest, pointer)
            others = [t for t in allowed if t not in ("null", "boolean")]
            alternatives = [{"const": v} for v in kept
                            if (v is None and "null" in allowed)
                            or (isinstance(v, bool) and "boolean" in allowed)]
            if others:
                alternatives.append(dict(rest, type=others))
            return {"anyOf": alternatives} if alternatives else {"enum": []}
    translator.warn("not", pointer, "not enforced")
    return rest


def if_then_else_node(translator, schema: dict, pointer: str) -> Any:
    """``if`` / ``then`` / ``else``: the union of (rest, if, then) and (rest, else)."""
    rest = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
    if "then" not in schema and "else" not in schema:
        if "unevaluatedProperties" not in rest and "unevaluatedItems" not in rest:
            return translator.node(rest, pointer)
        # A passing "if" still evaluates properties/items: valid instances
        # are those valid for rest alone, or for rest and if together.
        merged = merge_schemas(translator, [rest, schema["if"]], pointer, owner=0)
        return translator.alt([translator.node(merged, pointer), translator.node(rest, pointer)])
    translator.warn("if", pointer, "the condition is not checked: instances valid "
                                   "against (if and then) or against else are accepted")
    branches = []
    condition = schema["if"]
    if "then" in schema:
        branches.append(merge_schemas(translator, [rest, condition, schema["then"]], pointer,
                                      owner=0))
    else:
        branches.append(merge_schemas(translator, [rest, condition], pointer, owner=0))
    branches.append(merge_schemas(translator, [rest, schema["else"]], pointer, owner=0)
                    if "else" in schema else rest)
    return translator.alt([translator.node(branch, pointer) for branch in branches])
