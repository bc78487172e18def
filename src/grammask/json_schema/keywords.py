"""Schema keyword facts shared by the translator's modules.

What it computes: which keywords constrain an instance (``has_constraints``,
the keyword groups), the JSON types a schema's ``type`` allows
(``allowed_types``), count keywords read as non-negative integers
(``count_keyword``), the strings a schema's ``enum`` / ``const`` lists
(``listed_strings``), whether a property name matches a
``patternProperties`` pattern (``pattern_matches``), the JSON pointer of
a subschema (``child_pointer``), a schema without one keyword anywhere
(``without_keyword``), whether a value's JSON text spells ``"$ref"`` or
``"$dynamicRef"`` (``spells_reference``), the draft a root schema declares
(``declared_draft``) and, per draft, an array schema's positional layout
(``array_positions``).

Drafts: ``$schema`` naming an older draft selects its rules where they
differ from 2020-12 in ways the translator sees (``declared_draft``): under
draft 3, 4, 6 and 7 (``http://json-schema.org/draft-0N/schema``, with or
without ``#``) ``$ref`` hides its siblings; under those and 2019-09
(``https://json-schema.org/draft/2019-09/schema``) an array-valued ``items``
is the tuple form (positions, then ``additionalItems``) and ``prefixItems`` is
not a keyword.  These are the meta-schema ids ``jsonschema``'s
``validator_for`` recognizes (an ``https`` draft-07 spelling is none of them).
Any other ``$schema`` (2020-12, none, unknown) keeps 2020-12 rules, where an
array-valued ``items`` is still read as the tuple form.  Keywords newer than
a declared draft 3, 4, 6 or 7 (``NEWER_KEYWORDS``) are not keywords there
and are ignored, as that draft's ``jsonschema`` validator ignores them
(``$defs`` still resolves as a ``$ref`` target); so is ``dependencies``
under 2019-09 and 2020-12 (any other ``$schema``), whose validators ignore
it.
"""

from __future__ import annotations

import re
from typing import Any

from grammask.json_schema.refs import escape_pointer_token, map_subschemas
from grammask.json_schema.values import JSON_TYPES, MORE_PATTERNS, NOT_MULTIPLES

ANNOTATION_KEYWORDS = frozenset({
    "$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$defs", "definitions",
    "$vocabulary", "title", "description", "default", "examples", "deprecated", "readOnly",
    "writeOnly", "contentMediaType", "contentEncoding", "contentSchema", "format_annotation",
})
STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format", MORE_PATTERNS)
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                   NOT_MULTIPLES)
EXTRA_WITNESSES = "$grammask:extraWitnesses"
"""Internal keyword of a complement (``applicators``: ``not`` of
``additionalProperties`` / ``patternProperties`` beside open objects): a
list of one ``{"pattern", "names", "patterns", "schema"}`` dict, "the object
holds a member whose key matches ``pattern`` (None: any key), is none of
``names`` and matches none of ``patterns``, with a value valid against
``schema``" (``objects.object_node``)."""
ADDITIONAL_OF = "$grammask:additionalOf"
"""Internal keyword of a merged ``allOf`` (``merge``): a list of
``{"names", "patterns", "schema"}`` dicts, one per operand whose
``additionalProperties`` constrains keys another operand's patterns match:
"a key that is none of ``names`` and matches none of ``patterns`` (the
operand's own) is valid against ``schema``" (``objects.object_node``)."""
OBJECT_KEYWORDS = ("properties", "required", "additionalProperties", "patternProperties",
                   "minProperties", "maxProperties", "propertyNames", "dependentRequired",
                   "dependentSchemas", "dependencies", "unevaluatedProperties",
                   EXTRA_WITNESSES, ADDITIONAL_OF)
MORE_CONTAINS = "$grammask:moreContains"
"""Internal keyword of a merged ``allOf`` (``merge``) whose operands hold
different ``contains`` schemas (without ``minContains`` / ``maxContains``):
``contains`` keeps the first, this list the others, "for each, some item is
valid against it" (``arrays``)."""
ARRAY_KEYWORDS = ("items", "prefixItems", "additionalItems", "contains", "minContains",
                  "maxContains", "minItems", "maxItems", "uniqueItems", "unevaluatedItems",
                  MORE_CONTAINS)
MORE_CONDITIONS = "$grammask:moreConditions"
"""A merged ``allOf`` with several ``if`` keeps the first in ``if`` / ``then`` /
``else`` and the others, in order, as a list of ``{"if", "then", "else"}``
dicts under this key (``merge``; ``applicators.if_then_else_node`` applies
them one after the other)."""
APPLICATOR_KEYWORDS = ("$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "then",
                       "else", "enum", "const", "type", MORE_CONDITIONS)
VALIDATION_KEYWORDS = frozenset(STRING_KEYWORDS + NUMBER_KEYWORDS + OBJECT_KEYWORDS
                                + ARRAY_KEYWORDS + APPLICATOR_KEYWORDS)


DECLARED_DRAFT = re.compile(r"^(?:http://json-schema\.org/draft-0([3467])|"
                            r"https://json-schema\.org/draft/(2019)-09)/schema#?$")
"""``$schema`` values of the drafts with rules of their own (group 1: 3, 4, 6
or 7; group 2: 2019)."""


_AFTER_DRAFT_7 = frozenset({"dependentRequired", "dependentSchemas", "unevaluatedProperties",
                            "unevaluatedItems", "prefixItems", "minContains", "maxContains",
                            "$dynamicRef"})
_AFTER_DRAFT_6 = _AFTER_DRAFT_7 | {"if", "then", "else"}
_AFTER_DRAFT_4 = _AFTER_DRAFT_6 | {"const", "contains", "propertyNames"}
_AFTER_2019 = frozenset({"dependencies"})
NEWER_KEYWORDS: dict[int | None, frozenset[str]] = {
    3: _AFTER_DRAFT_4, 4: _AFTER_DRAFT_4, 6: _AFTER_DRAFT_6, 7: _AFTER_DRAFT_7,
    2019: _AFTER_2019, None: _AFTER_2019}
"""Declared draft (``declared_draft``; None: 2020-12) -> the keywords its
``jsonschema`` validator does not know (``minContains``/``maxContains``
came with 2019-09; ``if``/``then``/``else`` with draft 7; ``const``,
``contains`` and ``propertyNames`` with draft 6); for 2019-09 and 2020-12
the one keyword they dropped, ``dependencies`` (split into
``dependentRequired`` / ``dependentSchemas``), which a schema declaring no
older draft spells in vain."""


def declared_draft(root: Any) -> int | None:
    """The draft a root schema declares: 3, 4, 6, 7 or 2019 (2019-09); None
    for 2020-12, an unknown ``$schema`` and none."""
    declared = root.get("$schema") if isinstance(root, dict) else None
    match = DECLARED_DRAFT.match(declared) if isinstance(declared, str) else None
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def array_positions(schema: dict, tuple_items: bool) -> tuple[list, str, Any, str]:
    """(positional schemas, their keyword, schema of the other items, its keyword).

    ``tuple_items`` (drafts before 2020-12): ``items: [..]`` with
    ``additionalItems``, else ``items`` for every item (``prefixItems`` is
    not a keyword there).  2020-12: ``prefixItems`` then ``items``, or the
    tuple form when ``items`` is an array."""
    items = schema.get("items", True)
    if isinstance(items, list):
        return items, "items", schema.get("additionalItems", True), "additionalItems"
    prefix = [] if tuple_items else schema.get("prefixItems", [])
    return prefix, "prefixItems", items, "items"


def has_constraints(schema: Any) -> bool:
    """Whether a schema restricts anything (False for true, {} and annotations only)."""
    if schema is True:
        return False
    if not isinstance(schema, dict):
        return True
    return any(key in VALIDATION_KEYWORDS for key in schema)


def without_keyword(schema: Any, keyword: str) -> Any:
    """``schema`` with ``keyword`` removed from it and from every subschema
    (``refs.map_subschemas`` positions); ``format_assertion=False`` uses it on
    ``format``, which then is an annotation only."""
    if not isinstance(schema, dict):
        return schema
    mapped = map_subschemas(schema, lambda child: without_keyword(child, keyword))
    mapped.pop(keyword, None)
    return mapped


def allowed_types(translator, schema: dict, pointer: str) -> list[str]:
    """The JSON types ``schema["type"]`` allows, in ``JSON_TYPES`` order;
    ``integer`` is dropped when ``number`` (which includes it) is allowed."""
    declared = schema.get("type")
    if declared is None:
        types = list(JSON_TYPES)
    else:
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not all(n in JSON_TYPES for n in names):
            raise translator.error(pointer, f"bad type {declared!r}")
        types = [t for t in JSON_TYPES if t in names]
    if "number" in types and "integer" in types:
        types.remove("integer")
    return types


def count_keyword(translator, schema: dict, keyword: str, pointer: str):
    """The non-negative integer value of a count keyword (minItems, maxProperties, ...), or None."""
    value = schema.get(keyword)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise translator.error(pointer, f"{keyword} must be a non-negative integer")
    return value


def listed_strings(schema: Any) -> list[str] | None:
    """The distinct string members of ``schema``'s ``const`` or else its
    ``enum`` (in order), or None when it has neither."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        members = [schema["const"]]
    elif isinstance(schema.get("enum"), list):
        members = schema["enum"]
    else:
        return None
    return list(dict.fromkeys(member for member in members if isinstance(member, str)))


def pattern_matches(pattern: str, name: str) -> bool:
    """Whether ``pattern`` (a regex, unanchored) matches property ``name``; an
    invalid pattern matches nothing."""
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return False


def child_pointer(pointer: str, *tokens: Any) -> str:
    """The JSON pointer of a subschema: ``pointer`` followed by ``tokens`` (RFC 6901 escaped)."""
    for token in tokens:
        token = str(token)
        pointer += "/" + (escape_pointer_token(token) if "~" in token or "/" in token else token)
    return pointer


def _names_reference(text: str) -> bool:
    """Whether the JSON spelling of the string ``text`` holds ``"$ref"`` or
    ``"$dynamicRef"``: the string itself (between its quotes), or one ending
    with an escaped quote and the name (``\\"$ref`` then the closing quote);
    neither name holds a character JSON escapes, and no other quote of
    ``json.dumps``' output can stand before ``$`` or after the name."""
    return text in ("$ref", "$dynamicRef") or text.endswith(('"$ref', '"$dynamicRef'))


def index_reference_spellings(value: Any, known: dict) -> bool:
    """``spells_reference`` of ``value``, recording the answer of every dict
    inside it in ``known`` (id -> (dict, answer); the dict is kept so its id
    stays its own): for a schema document, whose dicts the translator never
    changes."""
    if isinstance(value, str):
        return _names_reference(value)
    if isinstance(value, dict):
        answer = False
        for key, item in value.items():
            # every child is visited (no short cut), so every dict is recorded
            answer = index_reference_spellings(item, known) or answer \
                or (isinstance(key, str) and _names_reference(key))
        known[id(value)] = (value, answer)
        return answer
    if isinstance(value, (list, tuple)):
        answer = False
        for item in value:
            answer = index_reference_spellings(item, known) or answer
        return answer
    return False


def spells_reference(value: Any, known: dict) -> bool:
    """Whether ``json.dumps(value)`` holds the text ``"$ref"`` or
    ``"$dynamicRef"`` (a schema that may inline a reference), without
    writing the text: dicts recorded in ``known``
    (``index_reference_spellings``) are answered from it."""
    if isinstance(value, str):
        return _names_reference(value)
    if isinstance(value, dict):
        found = known.get(id(value))
        if found is not None:
            return found[1]
        return any(isinstance(key, str) and _names_reference(key) for key in value) \
            or any(spells_reference(item, known) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(spells_reference(item, known) for item in value)
    return False
