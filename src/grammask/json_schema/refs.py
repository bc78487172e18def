"""``$ref`` resolution inside one schema document (``$id``, ``$anchor``, JSON pointers).

What it computes: for a reference string and the base URI in force where it
appears, the referenced sub-schema and its *location* (absolute URI of the
enclosing resource + ``#`` + JSON pointer), which names the grammar rule of
that definition (one rule per definition, so recursion is a cycle of rule
references, never an expansion).

Data layout: ``RefResolver`` indexes the document once: every ``$id``
(resolved against its parent's base) maps to ``(schema, location)``, every
``$anchor`` and ``$dynamicAnchor`` to the same, keyed by ``uri#anchor``;
``dynamic_anchors`` lists each resource's dynamic anchors, for the
translator's dynamic scope (``Translator.enter``).  Locations use the
enclosing resource's URI, so two spellings of one target share one rule.
Answers are remembered per resolver (``resolve``) and URI splits per
process (``_split``): a schema's checks resolve the same references many
times.

The documents of the ``resources`` option are indexed the same way, each
under the URI it is given as and under its own ``$id`` (resolved against
that URI).

Invariants: only references into the document or those documents resolve
(any other raises ``UnresolvedRef``, which the translator reports as
unsupported; nothing is fetched); JSON pointers follow RFC 6901 (``~1`` is ``/``, ``~0`` is
``~``) after percent-decoding the fragment (RFC 3986).
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Optional
from urllib.parse import unquote, urldefrag, urljoin

ROOT_URI = "urn:grammask:root"

_SCHEMA_MAP_KEYWORDS = ("$defs", "definitions", "properties", "patternProperties",
                        "dependentSchemas")
_SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_KEYWORDS = ("items", "additionalProperties", "additionalItems", "contains", "not",
                    "if", "then", "else", "propertyNames", "unevaluatedItems",
                    "unevaluatedProperties")
_CHILD_KEYWORDS = frozenset(_SCHEMA_MAP_KEYWORDS + _SCHEMA_LIST_KEYWORDS + _SCHEMA_KEYWORDS)
_INDEXED_KEYWORDS = _CHILD_KEYWORDS | {"$id", "$anchor", "$dynamicAnchor", "$dynamicRef"}
"""A schema with none of these keys adds nothing to the index (``_index``
skips it before making its pointer)."""


def map_subschemas(schema: Any, function) -> Any:
    """``schema`` with ``function`` applied to each of its direct subschemas
    (the keyword positions above, tuple ``items`` and schema-valued
    ``dependencies``); a new dict, ``schema`` itself unchanged."""
    if not isinstance(schema, dict):
        return schema
    result = dict(schema)
    for keyword in _SCHEMA_MAP_KEYWORDS + ("dependencies",):
        if isinstance(schema.get(keyword), dict):
            result[keyword] = {name: function(child) if isinstance(child, (dict, bool)) else child
                               for name, child in schema[keyword].items()}
    for keyword in _SCHEMA_LIST_KEYWORDS + ("items",):
        if isinstance(schema.get(keyword), list):
            result[keyword] = [function(child) for child in schema[keyword]]
    for keyword in _SCHEMA_KEYWORDS:
        if keyword in schema and not isinstance(schema[keyword], list):
            result[keyword] = function(schema[keyword])
    return result


class UnresolvedRef(Exception):
    """A reference that does not point inside the document."""


def escape_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def join_uri(base: str, reference: str) -> str:
    if base.startswith("urn:") and not reference.startswith("#") and ":" not in reference:
        return reference if reference else base
    return urljoin(base, reference)


@functools.lru_cache(maxsize=4096)
def _split(base: str, reference: str) -> tuple[str, str, str]:
    """(absolute URI, its part before ``#``, its fragment) of ``reference``
    against ``base``, memoized: a document resolves the same few references
    and ``$id`` values over and over, and ``urljoin`` / ``urldefrag`` parse
    both URIs each time."""
    absolute = join_uri(base, reference)
    uri, fragment = urldefrag(absolute)
    return absolute, uri, fragment


class RefResolver:
    def __init__(self, root: Any, documents: Optional[Mapping[str, Any]] = None):
        self.root = root
        self.root_uri = ROOT_URI
        if isinstance(root, dict) and isinstance(root.get("$id"), str):
            self.root_uri = urldefrag(join_uri(ROOT_URI, root["$id"]))[0]
        self.resources: dict[str, Any] = {self.root_uri: root, "": root}
        self.anchors: dict[str, tuple[Any, str]] = {}
        self.dynamic_anchors: dict[str, dict[str, tuple[Any, str, str]]] = {}
        """resource URI -> {name: (schema, location, base)} of the ``$dynamicAnchor``
        names its schemas declare (nested resources apart)."""
        self.dynamic_names: set[str] = set()
        """The anchor names some ``$dynamicRef`` fragment names."""
        self._resolved: dict[tuple[str, str], tuple[Any, str, str]] = {}
        """``resolve``'s answers so far (a failure is not kept)."""
        self._index(root, self.root_uri, self.root_uri, "")
        for uri, document in (documents or {}).items():
            retrieved = urldefrag(uri)[0]
            base = self.base_of(document, retrieved)
            self.resources.setdefault(retrieved, document)
            self.resources.setdefault(base, document)
            self._index(document, base, base, "")

    def _index(self, schema: Any, base: str, resource: str, pointer: str) -> None:
        if not isinstance(schema, dict):
            return
        identifier = schema.get("$id")
        if isinstance(identifier, str) and identifier.startswith("#") and len(identifier) > 1:
            # draft 6/7 spelling of an anchor: "$id": "#name"
            self.anchors[f"{base}{identifier}"] = (schema, f"{resource}#{pointer}")
        elif isinstance(identifier, str) and pointer:
            base = urldefrag(join_uri(base, identifier))[0]
            resource = base
            pointer = ""
            self.resources.setdefault(base, schema)
        if isinstance(schema.get("$anchor"), str):
            self.anchors[f"{base}#{schema['$anchor']}"] = (schema, f"{resource}#{pointer}")
        if isinstance(schema.get("$dynamicAnchor"), str):
            name = schema["$dynamicAnchor"]
            self.anchors.setdefault(f"{base}#{name}", (schema, f"{resource}#{pointer}"))
            self.dynamic_anchors.setdefault(resource, {})[name] = (
                schema, f"{resource}#{pointer}", base)
        if isinstance(schema.get("$dynamicRef"), str):
            fragment = urldefrag(schema["$dynamicRef"])[1]
            if fragment and not fragment.startswith("/"):
                self.dynamic_names.add(fragment)
        if schema.keys().isdisjoint(_CHILD_KEYWORDS):
            return   # no subschema (most leaves): skip the keyword loops
        for keyword in _SCHEMA_MAP_KEYWORDS:
            children = schema.get(keyword)
            if isinstance(children, dict):
                for name, child in children.items():
                    if isinstance(child, dict) and not child.keys().isdisjoint(_INDEXED_KEYWORDS):
                        self._index(child, base, resource,
                                    f"{pointer}/{keyword}/{escape_pointer_token(name)}")
        for keyword in _SCHEMA_LIST_KEYWORDS:
            children = schema.get(keyword)
            if isinstance(children, list):
                for index, child in enumerate(children):
                    self._index(child, base, resource, f"{pointer}/{keyword}/{index}")
        for keyword in _SCHEMA_KEYWORDS:
            if keyword in schema:
                self._index(schema[keyword], base, resource, f"{pointer}/{keyword}")

    def base_of(self, schema: Any, base: str) -> str:
        """The base URI inside ``schema`` given the base around it."""
        if isinstance(schema, dict) and isinstance(schema.get("$id"), str):
            return _split(base, schema["$id"])[1]
        return base

    def dynamic_target(self, reference: str, base: str) -> Optional[str]:
        """The anchor name a ``$dynamicRef`` resolves dynamically by: its
        fragment, when the reference's static target declares that name as
        its ``$dynamicAnchor`` (draft 2020-12's bookending rule); else None
        (it resolves like ``$ref``)."""
        fragment = urldefrag(join_uri(base, reference))[1]
        if not fragment or fragment.startswith("/"):
            return None
        try:
            target = self.resolve(reference, base)[0]
        except UnresolvedRef:
            return None
        if isinstance(target, dict) and target.get("$dynamicAnchor") == fragment:
            return fragment
        return None

    def resource_target(self, reference: Any, base: str) -> Optional[tuple[Any, str]]:
        """(target schema, location) of a ``$ref`` inside the resource whose
        base URI is ``base``, or None when it does not resolve or lies in
        another resource."""
        try:
            target, location, target_base = self.resolve(reference, base)
        except UnresolvedRef:
            return None
        return None if target_base != base else (target, location)

    def resolve(self, reference: str, base: str) -> tuple[Any, str, str]:
        """(target schema, location, base URI inside the target), remembered
        per (reference, base): the index is complete after ``__init__``."""
        if not isinstance(reference, str):
            return self._resolve(reference, base)   # fails as it would without the memo
        key = (reference, base)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self._resolve(reference, base)
        return found

    def _resolve(self, reference: str, base: str) -> tuple[Any, str, str]:
        absolute, uri, fragment = (_split if isinstance(reference, str) else _split.__wrapped__)(
            base, reference)
        if not uri:
            uri = base
        if f"{uri}#{fragment}" in self.anchors and fragment and not fragment.startswith("/"):
            schema, location = self.anchors[f"{uri}#{fragment}"]
            return schema, location, uri
        document = self.resources.get(uri)
        if document is None:
            raise UnresolvedRef(f"reference {reference!r} (resolved to {absolute!r}) is not "
                                f"inside the schema document")
        if fragment and not fragment.startswith("/"):
            raise UnresolvedRef(f"unknown anchor in reference {reference!r}")
        target = document
        for token in unquote(fragment).split("/")[1:] if fragment else []:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise UnresolvedRef(f"reference {reference!r}: no {token!r} in the document")
        # A resource found by its URI already has that URI as its base.
        inside = self.base_of(target, uri) if fragment else uri
        return target, f"{uri}#{unquote(fragment)}", inside
