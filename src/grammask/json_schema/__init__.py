"""JSON Schema (draft 2020-12, with draft-4/7 spellings) and pydantic models to grammar.

What it computes: ``schema_to_ast(schema, **options)`` returns a
``grammask.grammar.ast.GrammarAST`` whose sentences are the JSON texts valid
against ``schema`` (a dict, a boolean, or JSON text); ``pydantic_to_ast``
does the same for a pydantic v2 model (or any type pydantic can describe)
through its JSON Schema.  ``translate_schema`` returns the AST together with
the warnings.  ``Grammar.from_json_schema`` / ``Grammar.from_pydantic``
(the front end) call these.

Options (keyword-only):

- ``strict=False``: on an unsupported or approximated keyword, warn with a
  ``GrammarWarning`` (keyword, JSON pointer, approximation; also returned by
  ``translate_schema``).  ``strict=True`` raises ``SchemaUnsupported`` (a
  ``grammask.GrammarError``) instead.
- ``whitespace="flexible"``: whitespace wherever JSON allows it (around
  every value, key, ``:`` and ``,``), each run capped at ``max_whitespace``
  bytes; ``"compact"``: no whitespace at all.
- ``max_whitespace=256``: the cap on one whitespace run (None: no cap).
  Why 256: a pretty-printed document's longest run is a newline plus the
  indentation of the deepest line, ``1 + indent * depth``, and a cap per
  indentation level cannot be checked by a context-free rule shared by all
  depths; 256 accepts ``json.dumps(x, indent=2)`` up to depth 127 and
  ``indent=4`` up to depth 63, while bounding how long a model can emit
  blanks before it must write JSON.
- ``any_order=False``: members in schema order (extra members in any gap);
  True: any order, the required members, ``minProperties`` /
  ``maxProperties`` and ``dependentRequired`` tracked by a rule per state
  (members written, counted as written: exact for texts that repeat no key).
- ``close_objects=False``: absent ``additionalProperties`` means true (the
  specification); True treats it as false for objects that declare
  ``properties`` or ``patternProperties``.
- ``format_assertion=True``: ``format`` is asserted (the format-assertion
  vocabulary, right for generated output); False makes it an annotation
  only, as draft 2020-12's default vocabulary does.
- ``resources=None``: a mapping from absolute URI to schema document (dict,
  bool or JSON text) that ``$ref`` and ``$dynamicRef`` may name beside the
  schema itself (nothing is fetched); each document's ``$id`` names it too.
  A reference to a URI neither defines warns and accepts any value.
- ``start="start"``: the start rule's name.
- guards: ``max_grammar_nodes=500_000``, ``max_schema_depth=128`` and
  ``max_any_order_states=1024`` (the states of one object in any order)
  raise ``grammask.LimitExceeded`` on pathological schemas;
  ``max_string_regex_repeat=64``: string lengths up to this are counted
  inside one regex, longer ones by chunks (see ``string_nodes.string_with_length``).

Semantics notes (each tested): the declared ``$schema`` decides where
drafts differ (draft 3-7: ``$ref`` hides its siblings; before 2020-12:
``items: [..]`` is a tuple, ``prefixItems`` unknown; ``keywords.declared_draft``); ``oneOf`` is
each branch minus the branches it may overlap, unless they are proven
disjoint, and is translated as ``anyOf`` with a warning where a branch
cannot be negated (``applicators``); ``format`` is asserted for date, time,
date-time, duration, email, hostname, ipv4, ipv6, uri, uri-reference, iri,
iri-reference, uri-template, json-pointer, relative-json-pointer and uuid
(``formats.py``), and regex by a context-free grammar of the patterns both
ECMA-262 and Python's ``re`` accept, a documented subset
(``regex_format.py``; beside a pattern or length bounds it warns); idn-hostname
and idn-email warn and are not enforced; hostname warns what it leaves unchecked: A-labels are not
decoded, the 253-character name limit is not counted; a format no draft
defines is an annotation, ignored silently); numbers:
see ``numbers.py`` and ``number_nodes.py``; free strings count code points
in any escape spelling, literal strings (keys, enum, const) and formats
accept the canonical spellings (``regex_text.json_string_literal_regex``);
``pattern`` follows ECMA-262 where it agrees with Python's ``re``
(``strings.py``); ``unevaluatedProperties``/``unevaluatedItems`` are resolved
per scope after merging (``merge.resolve_unevaluated``); ``$dynamicRef``
follows the dynamic scope (``translator``); ``contains`` with maxContains,
maxItems or prefixItems counts matches, and several ``contains`` merged
from an ``allOf`` are each met by some item (``arrays``).

Module map, each importing only modules listed after it (no import cycle):
``translator`` (dispatch, shared rules for ``$ref`` and for merges holding
one, warnings, depth guard);
``applicators`` (anyOf, oneOf, not, if/then/else, dependentSchemas); ``disjoint`` (oneOf
branches that share no instance); ``multiple_formulas`` (a oneOf over
numbers that multipleOf alone decides); ``single_member`` (a oneOf of open
properties over objects of at most one member); ``objects``; ``arrays``;
``const_nodes`` (enum/const); ``literal_sets`` (large literal sets as
trie-shaped regexes); ``string_nodes``; ``number_nodes``;
``merge`` (allOf); ``builder`` (node helpers, rules, node guard, any-order
objects); ``keywords`` (keyword groups, types, counts, pointers);
``options``; ``refs`` ($ref/$id/$anchor); ``values`` (JSON values as
nodes, type tests); ``numbers`` (ranges, multipleOf); ``strings``
(patterns, key exclusion); ``formats`` (format grammars as patterns);
``regex_format`` (``format: regex`` as a grammar); ``regex_text`` (escaping, JSON
character encodings, digit ranges).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from grammask.errors import (GrammarError, GrammarSyntaxError, GrammarWarning, InvalidArgumentType,
                             LimitExceeded, SchemaUnsupported)
from grammask.grammar.ast import GrammarAST
from grammask.json_schema.keywords import without_keyword
from grammask.json_schema.options import Options
from grammask.json_schema.translator import Translator

__all__ = ["GrammarWarning", "SchemaTranslation", "SchemaUnsupported", "pydantic_to_ast",
           "pydantic_to_schema", "schema_to_ast", "translate_schema"]


@dataclass(frozen=True)
class SchemaTranslation:
    ast: GrammarAST
    warnings: tuple[GrammarWarning, ...]
    schema: Any


def _load(schema: Any) -> Any:
    if isinstance(schema, (bytes, bytearray)):
        schema = schema.decode("utf-8")
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except RecursionError:
            raise LimitExceeded("max_schema_depth", None, Options.max_schema_depth,
                                "JSON Schema text nested deeper than the JSON parser allows") from None
        except json.JSONDecodeError as error:
            lines = schema.splitlines() or [""]
            line = lines[error.lineno - 1] if error.lineno - 1 < len(lines) else ""
            excerpt = f"{error.lineno} | {line}\n{' ' * len(str(error.lineno))} | " \
                      f"{' ' * (error.colno - 1)}^"
            raise GrammarSyntaxError(f"invalid JSON schema text: {error.msg}", error.lineno,
                                     error.colno, excerpt) from None
    if schema is True or schema is False or isinstance(schema, dict):
        return schema
    raise GrammarError(f"a JSON Schema must be a dict, a boolean or JSON text, "
                       f"not {type(schema).__name__}")


def _check_values(schema: Any, max_schema_depth: int) -> None:
    """Reject what no JSON text can hold, before any translation: object keys
    that are not strings, numbers that are not finite, values that are not
    JSON, and nesting deeper than 4 * ``max_schema_depth`` + 16 JSON levels
    (a subschema level takes at most a few JSON levels; deeper input would
    only meet the limit after deep recursion).  Iterative, so any input
    depth is safe."""
    max_depth = 4 * max_schema_depth + 16
    stack = [(schema, "", 0)]
    while stack:
        value, pointer, depth = stack.pop()
        if depth > max_depth:
            raise LimitExceeded("max_schema_depth", depth, max_depth,
                                f"JSON nesting at {pointer or '/'} (JSON levels, 4 per schema level + 16)")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise GrammarError(f"{pointer or '/'}: object keys must be strings, got {key!r}")
                if item.__class__ not in _PLAIN_SCALARS:
                    stack.append((item, f"{pointer}/{key}", depth + 1))
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                if item.__class__ not in _PLAIN_SCALARS:  # scalars need no pointer unless bad
                    stack.append((item, f"{pointer}/{index}", depth + 1))
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise GrammarError(f"{pointer or '/'}: non-finite number {value!r} is not JSON")
        elif not (value is None or isinstance(value, (str, int))):
            raise GrammarError(f"{pointer or '/'}: {type(value).__name__} is not a JSON value")


_PLAIN_SCALARS = frozenset((str, int, bool, type(None)))
"""Classes of values that are always valid JSON (a float may be non-finite)."""


def _options(options: dict) -> Options:
    known = set(Options.__dataclass_fields__)
    unknown = set(options) - known
    if unknown:
        raise InvalidArgumentType(f"unknown JSON Schema option(s): {', '.join(sorted(unknown))}")
    result = Options(**options)
    if result.whitespace not in ("flexible", "compact"):
        raise GrammarError(f"whitespace must be 'flexible' or 'compact', "
                           f"not {result.whitespace!r}")
    if result.max_whitespace is not None and result.max_whitespace < 0:
        raise GrammarError("max_whitespace must be >= 0 or None")
    if not isinstance(result.format_assertion, bool):
        raise InvalidArgumentType("format_assertion must be a bool")
    if result.resources is not None and (
            not isinstance(result.resources, Mapping)
            or not all(isinstance(uri, str) for uri in result.resources)):
        raise InvalidArgumentType("resources must be a mapping from URI strings to schemas")
    return result


def _prepared(schema: Any, options: Options) -> Any:
    """A loaded, checked schema document as the translator reads it."""
    _check_values(schema, options.max_schema_depth)
    return schema if options.format_assertion else without_keyword(schema, "format")


def translate_schema(schema: Any, **options: Any) -> SchemaTranslation:
    """The grammar AST of a JSON Schema plus the warnings it raised."""
    loaded = _load(schema)
    parsed_options = _options(options)
    if parsed_options.resources:
        parsed_options = replace(parsed_options, resources={
            uri: _prepared(_load(document), parsed_options)
            for uri, document in parsed_options.resources.items()})
    translator = Translator(_prepared(loaded, parsed_options), parsed_options)
    try:
        ast = translator.translate()
    except RecursionError:
        raise LimitExceeded("max_schema_depth", None, parsed_options.max_schema_depth,
                            "JSON Schema nested deeper than the translator's recursion allows") from None
    return SchemaTranslation(ast=ast, warnings=tuple(translator.warnings), schema=loaded)


def schema_to_ast(schema: Any, **options: Any) -> GrammarAST:
    """The grammar AST of a JSON Schema (dict, bool or JSON text)."""
    return translate_schema(schema, **options).ast


def pydantic_to_schema(model: Any) -> dict:
    """The validation JSON Schema of a pydantic v2 model or type."""
    try:
        from pydantic import BaseModel, TypeAdapter
    except ImportError as error:
        raise GrammarError("from_pydantic needs pydantic v2 (pip install pydantic)") from error
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_json_schema(mode="validation")
    return TypeAdapter(model).json_schema(mode="validation")


def pydantic_to_ast(model: Any, **options: Any) -> GrammarAST:
    """The grammar AST of a pydantic v2 model (or a type such as ``list[Model]``)."""
    return schema_to_ast(pydantic_to_schema(model), **options)
