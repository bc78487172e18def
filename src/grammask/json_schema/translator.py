"""The JSON Schema -> GrammarAST translator: options, rules, warnings, dispatch.

What it computes: ``Translator(root, options).translate()`` returns a
``GrammarAST`` (spans None) whose language is the JSON texts valid against
the schema (draft 2020-12 semantics, with the documented approximations),
plus the ``GrammarWarning`` list of keywords it could not express exactly.

Data layout: ``rules`` maps rule name -> body node in definition order;
``ref_rules`` maps a resolved ``$ref`` location -> its rule name (one rule per
definition; recursion is a cycle of ``RuleRef``); generic "any JSON value"
rules (``json_value`` ...) are defined on first use.  ``NEVER`` is a
sentinel for the empty language; ``seq``/``alt`` propagate it so no emitted
rule has to match nothing (a ``$ref`` definition found empty after a cycle
already referenced it is defined as an unproductive self-loop, which
normalization removes with every alternative that uses it).

Dispatch (``node``): boolean schemas; ``$ref`` (alone: the definition's
rule; with siblings: an ``allOf``); ``allOf`` merged (``merge.py``);
``anyOf``/``oneOf`` as alternatives (oneOf as anyOf: a warning when the
branches' types overlap); ``not`` of types/enums; ``enum``/``const``; then one
alternative per allowed ``type`` built from that type's keywords
(``objects.py``, ``arrays.py``, strings and numbers here).  Type-specific
keywords never restrict other types (a schema without ``type`` accepts every
type).

Invariants and guards: the number of AST nodes is capped
(``max_grammar_nodes``) and schema nesting is capped (``max_schema_depth``),
both raising ``LimitExceeded``; every approximation goes through ``warn``,
which raises ``SchemaUnsupported`` (a ``GrammarError``) when ``strict``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Optional

from grammask.errors import GrammarError, LimitExceeded
from grammask.grammar.ast import (
    Alternation, GrammarAST, Literal, Node, Regex, Repeat, Rule, RuleRef, Sequence,
)
from grammask.json_schema import numbers, strings
from grammask.json_schema.regex_text import repeat as repeat_text
from grammask.json_schema.refs import RefResolver, UnresolvedRef, escape_pointer_token
from grammask.json_schema.values import (
    JSON_TYPES, json_equal, scalar_node, simple_constraints_hold, value_has_type,
)


class GrammarWarning(UserWarning):
    """A schema keyword that was approximated or ignored.

    ``keyword`` is the keyword, ``pointer`` the JSON pointer (RFC 6901) of the
    schema holding it, ``approximation`` what the grammar does instead.
    """

    def __init__(self, keyword: str, pointer: str, approximation: str):
        self.keyword = keyword
        self.pointer = pointer
        self.approximation = approximation
        super().__init__(f"{keyword!r} at #{pointer}: {approximation}")


class SchemaUnsupported(GrammarError):
    """Raised instead of a GrammarWarning when translating with ``strict=True``."""

    def __init__(self, keyword: str, pointer: str, approximation: str):
        self.keyword = keyword
        self.pointer = pointer
        self.approximation = approximation
        super().__init__(f"unsupported schema keyword {keyword!r} at #{pointer}: "
                         f"{approximation} (strict=True)")


@dataclass(frozen=True)
class Options:
    strict: bool = False
    whitespace: str = "flexible"
    max_whitespace: Optional[int] = 256
    any_order: bool = False
    close_objects: bool = False
    start: str = "start"
    max_grammar_nodes: int = 500_000
    max_schema_depth: int = 128
    max_string_regex_repeat: int = 64


MAX_ANY_OF_SUBSETS = 4
"""anyOf beside unevaluated*: up to this many branches, every combination is built."""

SMALL_REPEAT = 16
"""Counts up to this stay a Repeat node (the front end expands them)."""


class _Never:
    """The empty language."""

    def __repr__(self) -> str:
        return "NEVER"


NEVER: Any = _Never()

ANNOTATION_KEYWORDS = frozenset({
    "$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$defs", "definitions",
    "$vocabulary", "title", "description", "default", "examples", "deprecated", "readOnly",
    "writeOnly", "contentMediaType", "contentEncoding", "contentSchema", "format_annotation",
})
STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
OBJECT_KEYWORDS = ("properties", "required", "additionalProperties", "patternProperties",
                   "minProperties", "maxProperties", "propertyNames", "dependentRequired",
                   "dependentSchemas", "dependencies", "unevaluatedProperties")
ARRAY_KEYWORDS = ("items", "prefixItems", "additionalItems", "contains", "minContains",
                  "maxContains", "minItems", "maxItems", "uniqueItems", "unevaluatedItems")
APPLICATOR_KEYWORDS = ("$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "then",
                       "else", "enum", "const", "type")
VALIDATION_KEYWORDS = frozenset(STRING_KEYWORDS + NUMBER_KEYWORDS + OBJECT_KEYWORDS
                                + ARRAY_KEYWORDS + APPLICATOR_KEYWORDS)


def has_constraints(schema: Any) -> bool:
    """Whether a schema restricts anything (False for true, {} and annotations only)."""
    if schema is True:
        return False
    if not isinstance(schema, dict):
        return True
    return any(key in VALIDATION_KEYWORDS for key in schema)


class Translator:
    def __init__(self, root: Any, options: Options):
        self.root = root
        self.options = options
        self.resolver = RefResolver(root)
        self.rules: dict[str, Node] = {}
        self.ref_rules: dict[str, str] = {}
        self.warnings: list[GrammarWarning] = []
        self.used_names = {options.start}
        self.n_nodes = 0
        self.depth = 0
        self.base_uri = self.resolver.root_uri
        self._generic: dict[str, str] = {}
        self._powers: dict[tuple[Any, int], Any] = {}
        self._string_tail: Optional[Node] = None
        declared = root.get("$schema", "") if isinstance(root, dict) else ""
        self.integer_zero_fraction = not any(f"draft-0{n}/" in str(declared) for n in (3, 4))
        """Whether 1.0 is an integer (drafts 6 and later; not in drafts 3 and 4)."""
        self._ws: Optional[Node] = None

    # ------------------------------------------------------------ plumbing

    def translate(self) -> GrammarAST:
        try:
            value = self.node(self.root, "")
        except RecursionError:
            raise LimitExceeded("max_schema_depth", None, self.options.max_schema_depth,
                                "schema nesting too deep for the translator") from None
        if value is NEVER:
            raise GrammarError("the schema accepts no JSON value (its language is empty)")
        body = self.seq(self.ws(), value, self.ws())
        start = Rule(self.options.start, body)
        rules = (start,) + tuple(Rule(name, rule_body) for name, rule_body in self.rules.items())
        return GrammarAST(rules=rules, start=self.options.start)

    def warn(self, keyword: str, pointer: str, approximation: str) -> None:
        if self.options.strict:
            raise SchemaUnsupported(keyword, pointer, approximation)
        warning = GrammarWarning(keyword, pointer, approximation)
        self.warnings.append(warning)
        warnings.warn(warning, stacklevel=4)

    def error(self, pointer: str, message: str) -> GrammarError:
        return GrammarError(f"invalid schema at #{pointer}: {message}")

    def fresh_name(self, hint: str) -> str:
        cleaned = "".join(c if c.isascii() and c.isalnum() else "_" for c in hint).strip("_")
        base = (cleaned or "rule").lower()[:48]
        if base[0].isdigit():
            base = "r_" + base
        name = base
        counter = 1
        while name in self.used_names:
            counter += 1
            name = f"{base}_{counter}"
        self.used_names.add(name)
        return name

    def define(self, name: str, body: Node) -> RuleRef:
        self.rules[name] = body
        return RuleRef(name)

    def _count(self, n_new: int = 1) -> None:
        self.n_nodes += n_new
        if self.n_nodes > self.options.max_grammar_nodes:
            raise LimitExceeded("max_grammar_nodes", self.n_nodes,
                                self.options.max_grammar_nodes,
                                "the grammar generated for this schema is too large")

    # -------------------------------------------------------- node helpers

    def lit(self, text: str) -> Node:
        self._count()
        return Literal(text.encode("utf-8"))

    def rx(self, pattern: str) -> Node:
        self._count()
        return Regex(pattern)

    def seq(self, *items: Any) -> Any:
        flat: list[Node] = []
        for item in items:
            if item is None:
                continue
            if item is NEVER:
                return NEVER
            if isinstance(item, Sequence):
                flat.extend(item.items)
            else:
                flat.append(item)
        if len(flat) == 1:
            return flat[0]
        self._count()
        return Sequence(tuple(flat))

    def alt(self, items: list[Any]) -> Any:
        present = []
        for item in items:
            if item is NEVER:
                continue
            if isinstance(item, Alternation):
                present.extend(item.items)
            else:
                present.append(item)
        unique = list(dict.fromkeys(present))
        if not unique:
            return NEVER
        if len(unique) == 1:
            return unique[0]
        self._count()
        return Alternation(tuple(unique))

    def repeat(self, item: Any, n_min: int, n_max: Optional[int]) -> Any:
        if item is NEVER:
            return NEVER if n_min > 0 else self.seq()
        self._count()
        return Repeat(item, n_min, n_max)

    def ws(self) -> Optional[Node]:
        """The whitespace-run node (None in compact mode)."""
        options = self.options
        if options.whitespace == "compact" or options.max_whitespace == 0:
            return None
        if self._ws is None:
            cap = options.max_whitespace
            pattern = "[ \\t\\n\\r]+" if cap is None else f"[ \\t\\n\\r]{{1,{cap}}}"
            self._ws = self.define(self.fresh_name("json_ws"),
                                   self.repeat(self.rx(pattern), 0, 1))
        return self._ws

    def comma(self) -> Node:
        return self.seq(self.ws(), self.lit(","), self.ws())

    # ------------------------------------------------------- generic JSON

    def generic(self, kind: str) -> RuleRef:
        """Rules for any JSON value / object / array / string / number.

        String and number rules are defined on their own; asking for a value,
        object or array defines those three together (they are mutually
        recursive) with the string and number rules, so no rule is unused.
        """
        if kind in self._generic:
            return RuleRef(self._generic[kind])
        names = self._generic
        if kind in ("string", "number"):
            names[kind] = self.fresh_name(f"json_{kind}")
            pattern = strings.string_regex(0, None) if kind == "string" else numbers.NUMBER
            self.define(names[kind], self.rx(pattern))
            return RuleRef(names[kind])
        for name in ("value", "object", "array"):
            names[name] = self.fresh_name(f"json_{name}")
        ws = self.ws()
        value = RuleRef(names["value"])
        member = self.seq(self.generic("string"), ws, self.lit(":"), ws, value)
        self.define(names["value"], self.alt([
            RuleRef(names["object"]), RuleRef(names["array"]), self.generic("string"),
            self.generic("number"), self.lit("true"), self.lit("false"), self.lit("null")]))
        self.define(names["object"], self.alt([
            self.seq(self.lit("{"), ws, self.lit("}")),
            self.seq(self.lit("{"), ws, member,
                     self.repeat(self.seq(self.comma(), member), 0, None), ws, self.lit("}"))]))
        self.define(names["array"], self.alt([
            self.seq(self.lit("["), ws, self.lit("]")),
            self.seq(self.lit("["), ws, value,
                     self.repeat(self.seq(self.comma(), value), 0, None), ws, self.lit("]"))]))
        return RuleRef(names[kind])

    # ------------------------------------------------------------ dispatch

    def node(self, schema: Any, pointer: str) -> Any:
        """The node for ``schema`` found at JSON pointer ``pointer``."""
        if schema is True:
            return self.generic("value")
        if schema is False:
            return NEVER
        if not isinstance(schema, dict):
            raise self.error(pointer, f"a schema must be an object or a boolean, "
                                      f"not {type(schema).__name__}")
        self.depth += 1
        saved_base = self.base_uri
        try:
            if self.depth > self.options.max_schema_depth:
                raise LimitExceeded("max_schema_depth", self.depth,
                                    self.options.max_schema_depth,
                                    f"schema nesting at #{pointer}")
            self.base_uri = self.resolver.base_of(schema, self.base_uri)
            return self._node(schema, pointer)
        finally:
            self.depth -= 1
            self.base_uri = saved_base

    def _node(self, schema: dict, pointer: str) -> Any:
        from grammask.json_schema.arrays import array_node
        from grammask.json_schema.merge import merge_schemas, resolve_unevaluated
        from grammask.json_schema.objects import object_node

        for reference_keyword in ("$ref", "$dynamicRef"):
            if reference_keyword in schema:
                reference = schema[reference_keyword]
                if reference_keyword == "$dynamicRef":
                    self.warn("$dynamicRef", pointer, "resolved like $ref (no dynamic scope)")
                rest = {k: v for k, v in schema.items() if k != reference_keyword}
                if not has_constraints(rest):
                    return self.reference(reference, pointer)
                merged = merge_schemas(self, [{reference_keyword: reference}, rest], pointer,
                                       owner=1)
                return self.node(merged, pointer)
        if "allOf" in schema:
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            branches = schema["allOf"]
            if not isinstance(branches, list) or not branches:
                raise self.error(pointer, "allOf must be a non-empty array")
            return self.node(merge_schemas(self, [rest] + list(branches), pointer, owner=0),
                             pointer)
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                return self._any_of(schema, keyword, pointer)
        if "not" in schema:
            return self.node(self._apply_not(schema, pointer), pointer)
        if "if" in schema:
            return self._if_then_else(schema, pointer)
        if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
            schema = resolve_unevaluated(self, schema, pointer)
        if isinstance(schema.get("required"), bool):
            self.warn("required", pointer, "draft-3 boolean form: ignored (the property "
                                           "is optional)")
        if schema.get("dependentSchemas"):
            self.warn("dependentSchemas", pointer, "not enforced")
        dependencies = schema.get("dependencies")
        if isinstance(dependencies, dict) and any(not isinstance(v, list)
                                                  for v in dependencies.values()):
            self.warn("dependencies", pointer, "schema dependencies not enforced")
        types = self._allowed_types(schema, pointer)
        if "enum" in schema or "const" in schema:
            return self._enum(schema, types, pointer)
        alternatives = []
        for type_name in types:
            if type_name == "null":
                alternatives.append(self.lit("null"))
            elif type_name == "boolean":
                alternatives.append(self.alt([self.lit("true"), self.lit("false")]))
            elif type_name == "integer":
                if "number" not in types:
                    alternatives.append(self.number_node(schema, pointer, integer=True))
            elif type_name == "number":
                alternatives.append(self.number_node(schema, pointer, integer=False))
            elif type_name == "string":
                alternatives.append(self.string_node(schema, pointer))
            elif type_name == "array":
                alternatives.append(array_node(self, schema, pointer))
            elif type_name == "object":
                alternatives.append(object_node(self, schema, pointer))
        return self.alt(alternatives)

    def reference(self, reference: Any, pointer: str) -> Any:
        if not isinstance(reference, str):
            raise self.error(pointer, "$ref must be a string")
        try:
            target, location, target_base = self.resolver.resolve(reference, self.base_uri)
        except UnresolvedRef as error:
            self.warn("$ref", pointer, f"{error}; any JSON value accepted instead")
            return self.generic("value")
        name = self.ref_rules.get(location)
        if name is NEVER:
            return NEVER
        if name is not None:
            return RuleRef(name)
        hint = location.rsplit("/", 1)[-1] if "/" in location else "root"
        name = self.fresh_name(f"def_{hint}")
        self.ref_rules[location] = name
        saved_base = self.base_uri
        self.base_uri = target_base
        try:
            body = self.node(target, location.split("#", 1)[1])
        finally:
            self.base_uri = saved_base
        if body is NEVER:
            # References made while the body was built (a cycle) need the
            # rule to exist: a self-loop is unproductive, so normalization
            # removes it together with every alternative that uses it.
            self.ref_rules[location] = NEVER
            self.define(name, RuleRef(name))
            return NEVER
        self.define(name, body)
        return RuleRef(name)

    def resolve_inline(self, reference: str, pointer: str,
                       base: Optional[str] = None) -> tuple[Any, str]:
        """The target of a reference as a schema (for merging), with the base
        URI in force inside it."""
        base = self.base_uri if base is None else base
        try:
            target, _, target_base = self.resolver.resolve(reference, base)
        except UnresolvedRef as error:
            self.warn("$ref", pointer, f"{error}; any JSON value accepted instead")
            return True, base
        return target, target_base

    # -------------------------------------------------------- combinators

    def _any_of(self, schema: dict, keyword: str, pointer: str) -> Any:
        from grammask.json_schema.merge import merge_schemas

        branches = schema[keyword]
        if not isinstance(branches, list) or not branches:
            raise self.error(pointer, f"{keyword} must be a non-empty array")
        rest = {k: v for k, v in schema.items() if k != keyword}
        if keyword == "oneOf":
            self._check_one_of(branches, pointer)
        alternatives = []
        for index, branch in enumerate(branches):
            branch_pointer = f"{pointer}/{keyword}/{index}"
            if has_constraints(rest):
                merged = merge_schemas(self, [rest, branch], branch_pointer, owner=0)
                alternatives.append(self.node(merged, branch_pointer))
            else:
                alternatives.append(self.node(branch, branch_pointer))
        unevaluated = "unevaluatedProperties" in rest or "unevaluatedItems" in rest
        if keyword == "anyOf" and unevaluated and len(branches) > 1:
            # Properties evaluated by every matching branch count: also accept
            # instances matching several branches at once (each subset S of
            # branches, merged, with the union of their evaluations).  Exact:
            # an instance is valid iff the set of branches it matches is such
            # a subset.
            if len(branches) > MAX_ANY_OF_SUBSETS:
                self.warn("unevaluatedProperties", pointer,
                          f"anyOf with {len(branches)} branches: properties evaluated only "
                          f"by several matching branches together are not accepted")
            else:
                for subset in range(1, 1 << len(branches)):
                    chosen = [b for bit, b in enumerate(branches) if subset >> bit & 1]
                    if len(chosen) > 1:
                        merged = merge_schemas(self, [rest] + chosen, pointer, owner=0)
                        alternatives.append(self.node(merged, pointer))
        return self.alt(alternatives)

    def _check_one_of(self, branches: list, pointer: str) -> None:
        """Warn when oneOf's "exactly one" could differ from anyOf's "at least
        one": unless every two branches are disjoint, by type or by
        ``_disjoint_values`` (different enum/const values, or a required
        discriminator property with different const/enum values)."""
        resolved = []
        for branch in branches:
            if isinstance(branch, dict) and "$ref" in branch and len(branch) == 1:
                branch, _ = self.resolve_inline(branch["$ref"], pointer)
            branch_types = set(self._allowed_types(branch, pointer, quiet=True)) \
                if isinstance(branch, dict) else set(JSON_TYPES)
            if branch_types & {"number", "integer"}:
                branch_types |= {"number", "integer"}
            resolved.append((branch, branch_types))
        for index, (first, first_types) in enumerate(resolved):
            for second, second_types in resolved[:index]:
                if first_types & second_types and not _disjoint_values(first, second):
                    self.warn("oneOf", pointer, "translated as anyOf: an instance matching "
                                                "several branches is accepted")
                    return

    def _apply_not(self, schema: dict, pointer: str) -> dict:
        negated = schema["not"]
        rest = {k: v for k, v in schema.items() if k != "not"}
        if negated is True or negated == {}:
            return {"enum": []}
        if isinstance(negated, dict) and set(negated) <= {"type"} | ANNOTATION_KEYWORDS:
            excluded = negated.get("type")
            excluded = [excluded] if isinstance(excluded, str) else list(excluded or [])
            allowed = [t for t in self._allowed_types(rest, pointer)
                       if t not in excluded and not (t == "integer" and "number" in excluded)]
            if "integer" in excluded and "number" in allowed:
                self.warn("not", pointer, "non-integer numbers cannot be told from integers "
                                          "here; numbers accepted")
            rest["type"] = allowed
            return rest
        if isinstance(negated, dict) and set(negated) <= {"enum", "const"} | ANNOTATION_KEYWORDS:
            values = list(negated.get("enum", [])) + ([negated["const"]] if "const" in negated else [])
            if all(v is None or isinstance(v, bool) for v in values):
                kept = [v for v in (None, True, False) if not any(json_equal(v, x) for x in values)]
                allowed = self._allowed_types(rest, pointer)
                others = [t for t in allowed if t not in ("null", "boolean")]
                alternatives = [{"const": v} for v in kept
                                if (v is None and "null" in allowed)
                                or (isinstance(v, bool) and "boolean" in allowed)]
                if others:
                    alternatives.append(dict(rest, type=others))
                return {"anyOf": alternatives} if alternatives else {"enum": []}
        self.warn("not", pointer, "not enforced")
        return rest

    def _if_then_else(self, schema: dict, pointer: str) -> Any:
        from grammask.json_schema.merge import merge_schemas

        rest = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        if "then" not in schema and "else" not in schema:
            if "unevaluatedProperties" not in rest and "unevaluatedItems" not in rest:
                return self.node(rest, pointer)
            # A passing "if" still evaluates properties/items: valid instances
            # are those valid for rest alone, or for rest and if together.
            merged = merge_schemas(self, [rest, schema["if"]], pointer, owner=0)
            return self.alt([self.node(merged, pointer), self.node(rest, pointer)])
        self.warn("if", pointer, "the condition is not checked: instances valid against "
                                 "(if and then) or against else are accepted")
        branches = []
        condition = schema["if"]
        if "then" in schema:
            branches.append(merge_schemas(self, [rest, condition, schema["then"]], pointer,
                                          owner=0))
        else:
            branches.append(merge_schemas(self, [rest, condition], pointer, owner=0))
        branches.append(merge_schemas(self, [rest, schema["else"]], pointer, owner=0)
                        if "else" in schema else rest)
        return self.alt([self.node(branch, pointer) for branch in branches])

    # ---------------------------------------------------------- type sets

    def _allowed_types(self, schema: dict, pointer: str, quiet: bool = False) -> list[str]:
        declared = schema.get("type")
        if declared is None:
            types = list(JSON_TYPES)
        else:
            names = [declared] if isinstance(declared, str) else declared
            if not isinstance(names, list) or not all(n in JSON_TYPES for n in names):
                raise self.error(pointer, f"bad type {declared!r}")
            types = [t for t in JSON_TYPES if t in names]
        if "number" in types and "integer" in types:
            types.remove("integer")
        return types

    def _enum(self, schema: dict, types: list[str], pointer: str) -> Any:
        from grammask.json_schema.merge import const_node

        if "enum" in schema:
            values = schema["enum"]
            if not isinstance(values, list):
                raise self.error(pointer, "enum must be an array")
        else:
            values = [schema["const"]]
        if "const" in schema and "enum" in schema:
            values = [v for v in values if json_equal(v, schema["const"])]
        check = dict(schema)
        check["type"] = types
        kept = []
        for value in values:
            if simple_constraints_hold(value, check):
                kept.append(value)
        other_keywords = [k for k in schema if k in VALIDATION_KEYWORDS and k not in (
            "enum", "const", "type", "minLength", "maxLength", "pattern", "minimum", "maximum",
            "exclusiveMinimum", "exclusiveMaximum")]
        if other_keywords and kept:
            self.warn(other_keywords[0], pointer, "not checked against enum/const members")
        return self.alt([const_node(self, value, pointer) for value in kept])

    # -------------------------------------------------------- scalar types

    def string_node(self, schema: dict, pointer: str) -> Any:
        n_min = _non_negative_int(self, schema, "minLength", pointer) or 0
        n_max = _non_negative_int(self, schema, "maxLength", pointer)
        if n_max is not None and n_max < n_min:
            return NEVER
        pattern = schema.get("pattern")
        format_name = schema.get("format")
        if format_name is not None and format_name not in strings.FORMAT_PATTERNS:
            self.warn("format", pointer, f"format {format_name!r} not enforced")
            format_name = None
        constraint = pattern
        keyword = "pattern"
        if format_name is not None:
            if pattern is not None:
                self.warn("pattern", pointer, f"ignored: format {format_name!r} is enforced "
                                              f"instead of both")
            constraint = strings.FORMAT_PATTERNS[format_name]
            keyword = "format"
        if constraint is None:
            return self.string_with_length(n_min, n_max)
        if not isinstance(constraint, str):
            raise self.error(pointer, "pattern must be a string")
        try:
            content, low, high = strings.translate_pattern(constraint,
                                                           ascii_escapes=keyword == "pattern")
        except strings.PatternUnsupported as error:
            self.warn(keyword, pointer, f"{error}; any string of the allowed length accepted")
            return self.string_with_length(n_min, n_max)
        implied = n_min <= low and (n_max is None or (high is not None and high <= n_max))
        if not implied:
            self.warn("maxLength" if n_max is not None else "minLength", pointer,
                      f"length bounds not enforced together with {keyword}")
        return self.rx('"' + content + '"')

    def string_with_length(self, n_min: int, n_max: Optional[int]) -> Any:
        """A string of n_min..n_max characters.

        Up to ``max_string_regex_repeat`` (``k``) characters the count sits
        in one regex.  Beyond, chunks count the rest exactly and
        *unambiguously*: the minimum is ``C^(m // k) X{m % k}`` with
        ``C = X{k}``; the optional rest of up to ``M`` characters, with
        ``M = q k + r``, is ``C{0,q-1} X{0,k-1}"`` or ``C^q X{0,r}"``: a
        length decides the split, full chunks have one accepting point
        each, and the closing quote sits in the last terminal, so a terminal
        never ends inside free text (which keeps token masks cheap: see
        docs/performance.md).  Powers are built by doubling (``times``), so
        grammars stay O(log N) rules and DFAs O(k) states.
        """
        limit = self.options.max_string_regex_repeat
        if n_max is None and n_min == 0:
            return self.generic("string")
        if n_min <= limit and (n_max is None or n_max <= limit):
            return self.rx(strings.string_regex(n_min, n_max))
        full = self._char_regex(limit, limit)
        n_chunks, n_single = divmod(n_min, limit)
        fixed = self.seq(self.times(full, n_chunks),
                         self._char_regex(n_single, n_single) if n_single else None)
        short_tail = self.rx(repeat_text(strings.JSON_CHAR, 0, limit - 1) + '"')
        if n_max is None:
            rest = self.seq(self.repeat(full, 0, None), short_tail)
        else:
            n_chunks, n_tail = divmod(n_max - n_min, limit)
            exact = self.seq(self.times(full, n_chunks),
                             self.rx(repeat_text(strings.JSON_CHAR, 0, n_tail) + '"'))
            short = self.seq(self.counted(full, 0, n_chunks - 1), short_tail) if n_chunks else NEVER
            rest = self.alt([short, exact])
        return self.seq(self.lit('"'), fixed, rest)

    def _char_regex(self, n_min: int, n_max: Optional[int]) -> Node:
        return self.rx(repeat_text(strings.JSON_CHAR, n_min, n_max))

    def times(self, unit: Any, count: int) -> Any:
        """``unit`` repeated exactly ``count`` times, with O(log count) rules:
        power 2^k is a rule ``P_k ::= P_{k-1} P_{k-1}``, and ``count`` is the
        product of the powers of its binary digits."""
        if count == 0:
            return self.seq()
        parts = [self._power(unit, bit) for bit in range(count.bit_length()) if count >> bit & 1]
        return self.seq(*parts)

    def _power(self, unit: Any, exponent: int) -> Any:
        key = (unit, exponent)
        cached = self._powers.get(key)
        if cached is not None:
            return cached
        if exponent == 0:
            node = unit
        else:
            half = self._power(unit, exponent - 1)
            node = self.define(self.fresh_name(f"power_{exponent}"), self.seq(half, half))
        self._powers[key] = node
        return node

    def counted(self, item: Any, n_min: int, n_max: Optional[int]) -> Any:
        """``item{n_min, n_max}``: small counts as a Repeat node, large ones
        by doubling (``times``) so no rule chain grows with the count."""
        if n_max is not None and n_max <= SMALL_REPEAT:
            return self.repeat(item, n_min, n_max)
        fixed = self.times(item, n_min) if n_min > SMALL_REPEAT else self.repeat(item, n_min,
                                                                                 n_min)
        if n_max is None:
            rest = self.repeat(item, 0, None)
        else:
            rest = self.times(self.repeat(item, 0, 1), n_max - n_min)
        return self.seq(fixed, rest)

    def number_node(self, schema: dict, pointer: str, integer: bool) -> Any:
        from grammask.json_schema.number_nodes import number_node

        return number_node(self, schema, pointer, integer)


def _values_of(schema: Any) -> Optional[list]:
    """The finite set of values a schema allows through enum/const, if any."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return schema["enum"]
    return None


def _disjoint_values(first: Any, second: Any) -> bool:
    """Whether no instance can satisfy both schemas, judged by enum/const
    values or by a property both require with disjoint enum/const values."""
    def disjoint(a: Optional[list], b: Optional[list]) -> bool:
        return a is not None and b is not None and not any(
            json_equal(x, y) for x in a for y in b)

    if disjoint(_values_of(first), _values_of(second)):
        return True
    if not isinstance(first, dict) or not isinstance(second, dict):
        return False
    both_required = set(first.get("required", [])) & set(second.get("required", []))
    first_properties = first.get("properties", {})
    second_properties = second.get("properties", {})
    return any(disjoint(_values_of(first_properties.get(name)),
                        _values_of(second_properties.get(name))) for name in both_required)


def _non_negative_int(translator: Translator, schema: dict, keyword: str, pointer: str):
    if keyword not in schema:
        return None
    value = schema[keyword]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise translator.error(pointer, f"{keyword} must be a non-negative integer")
    return value


def child_pointer(pointer: str, *tokens: Any) -> str:
    return pointer + "".join("/" + escape_pointer_token(str(token)) for token in tokens)
