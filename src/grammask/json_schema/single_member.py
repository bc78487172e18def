"""``oneOf`` of open ``properties`` branches over objects of at most one member.

What it computes: ``single_member_one_of(translator, schema)`` rewrites a
schema whose ``oneOf`` branches each say only ``properties`` (open objects:
no ``required``, ``additionalProperties`` or other validation keyword;
annotations allowed), beside ``maxProperties`` of 0 or 1 and nothing else
but ``type``, ``minProperties`` and annotations, into an ``anyOf`` without
the oneOf (for the translator to read), or returns None for any other
schema (the oneOf exclusions then apply as usual).

Why it is exact: an instance is ``{}`` or ``{k: v}`` (a non-object matches
every branch, as does ``{}``: with two branches or more both fail).  For
``{k: v}`` the branches that do not declare ``k`` match whatever ``v`` is
(``a`` of them), and branch i that declares it matches iff ``v`` is valid
against its ``properties[k]`` (S_i).  Exactly one matches iff ``a`` is 0 and
``v`` is valid against ``{oneOf: [S_i]}``, or ``a`` is 1 and ``v`` against
none of them (``{not: {anyOf: [S_i]}}``, schemas equal but for annotations
taken once); a key no branch declares, or that
two branches leave out, never.  So the schema is the ``anyOf``, over the
names with ``a`` at most 1, of ``{type: object, required: [k], properties:
{k: V_k}}`` beside the schema's other keywords.  The chain of exclusions
instead subtracts each open branch's complement from the others (JSON
Schema Store's 3.0.schema: seven branches of up to sixteen names, past
``applicators.MAX_ONE_OF_COMPLEMENT_PARTS``).

Invariant: only the forms above are rewritten; the member schemas are
passed on unread (their own oneOf / not is translated, exact or warned,
where they are met).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from grammask.json_schema.keywords import VALIDATION_KEYWORDS

_KEPT = frozenset({"type", "maxProperties", "minProperties", "oneOf"})
_NOTES = frozenset({"title", "description", "default", "examples", "$comment", "deprecated",
                    "readOnly", "writeOnly"})
"""Annotations that neither validate nor name a schema (``_unannotated``)."""
_LEFT_OUT = frozenset({"oneOf", "$id", "id", "$anchor", "$dynamicAnchor", "$schema"})
"""Not copied into the alternatives: the oneOf, and keywords that name or
place the schema itself (its base URI is the translator's already)."""


def single_member_one_of(translator, schema: dict) -> Optional[dict]:
    """The ``anyOf`` schema equivalent to ``schema`` (module docstring), or None."""
    branches = schema.get("oneOf")
    limit = schema.get("maxProperties")
    if not isinstance(branches, list) or len(branches) < 2 or isinstance(limit, bool) \
            or not isinstance(limit, int) or limit > 1:
        return None
    if any(key in VALIDATION_KEYWORDS and key not in _KEPT for key in schema):
        return None
    types = schema.get("type", "object")
    if types != "object" and not (isinstance(types, list) and "object" in types):
        return None
    declared: list[dict] = []
    for branch in branches:
        branch = {} if branch is True else translator.own_keywords(branch)
        if not isinstance(branch, dict) \
                or any(key in VALIDATION_KEYWORDS and key != "properties" for key in branch) \
                or not isinstance(branch.get("properties", {}), dict):
            return None
        declared.append(branch.get("properties", {}))
    rest = {key: value for key, value in schema.items() if key not in _LEFT_OUT}
    alternatives = []
    for name in dict.fromkeys(name for properties in declared for name in properties):
        schemas = [properties[name] for properties in declared if name in properties]
        left_out = len(declared) - len(schemas)
        if left_out > 1:
            continue
        if left_out == 0:
            value = {"oneOf": schemas}
        else:
            # Equal schemas, annotations aside, are one member of the anyOf.
            unique = list({json.dumps(_unannotated(each), sort_keys=True): each
                           for each in schemas}.values())
            value = {"not": unique[0] if len(unique) == 1 else {"anyOf": unique}}
        alternatives.append(dict(rest, type="object", required=[name],
                                 properties={name: value}))
    return {"anyOf": alternatives} if alternatives else False


def _unannotated(schema: Any) -> Any:
    """``schema`` without the ``_NOTES`` annotations of its top level."""
    if not isinstance(schema, dict):
        return schema
    return {key: value for key, value in schema.items() if key not in _NOTES}
