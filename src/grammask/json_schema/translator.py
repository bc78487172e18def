"""The JSON Schema -> GrammarAST translator: dispatch, ``$ref`` rules, warnings.

What it computes: ``Translator(root, options).translate()`` returns a
``GrammarAST`` (spans None) whose language is the JSON texts valid against
the schema (draft 2020-12 semantics, or the declared older draft's where
the translator sees a difference: see ``keywords.declared_draft``; with the
documented approximations),
plus the ``GrammarWarning`` list of keywords it could not express exactly.
The nodes themselves are made by ``builder.GrammarBuilder``, which this
class extends; each keyword family has its own module.

Data layout: ``rules`` (from the builder) maps rule name -> body node in
definition order; ``plain_type_nodes`` maps a scalar type name -> the node
(one terminal or a rule) of a schema that says nothing else, made once;
``shared_rules`` maps a key -> its rule name, for four kinds
of shared rule (issues 16 and 17):

- a resolved ``$ref`` location (a string): one rule per definition;
- ``(base URI, JSON text)`` of a schema that merges operands containing a
  ``$ref`` (``$ref`` with siblings, ``allOf``, ``anyOf``/``oneOf``, ``if``, ``not``):
  one rule per (reference, sibling context).  Merging inlines a top-level
  ``$ref`` target, whose own subschemas may hold the same merging schema
  again (``allOf: [{"$ref": "#"}]`` inside a property); translated as a
  rule, that recurrence is a ``RuleRef`` to the rule in progress;
- ``("not_multiple", automaton parameters, bounds regex)``: the first rule
  of the numbers that are no multiple of excluded steps
  (``number_nodes._excluding_multiples``; NEVER if none, None past its
  limits), which chains of complements ask for many times over;
- ``("excluding", base URI, JSON text, scope)`` of a oneOf branch and the
  branches it must fail, when they hold a ``$ref``
  (``applicators._excluding_node``): a recursive definition met again
  inside its own exclusion refers to the rule in progress.

The first two keys carry the dynamic scope (``dynamic``) when some ``$dynamicRef``
resolves dynamically: one rule per (definition, scope).

Dynamic scope (draft 2020-12 ``$dynamicRef``): ``dynamic`` maps each anchor
name a ``$dynamicRef`` names to the ``$dynamicAnchor`` of that name in the
outermost schema resource entered so far on the translation path (a
resource is entered where a schema's ``$id`` or a reference's target moves
the base URI, ``enter``); a ``$dynamicRef`` whose static target carries the
``$dynamicAnchor`` of its fragment's name resolves through ``dynamic``
(``refs.RefResolver.dynamic_target``), any other like ``$ref``.  Leaving a
subschema restores the scope, as evaluation leaves it; the scopes are
finitely many (a name is bound once per path), so this is exact.  Merging
(``allOf``, ``$ref`` with siblings) inlines targets without entering their
resources: where one holds a dynamic anchor not yet bound, a warning says
the dynamic scope is not followed there.

Recursion is therefore always a cycle of ``RuleRef``, never an expansion.  A
shared rule found empty after a cycle already referenced it is defined as an
unproductive self-loop, which normalization removes with every alternative
that uses it.

Dispatch (``node``): boolean schemas; ``$ref`` (alone, or under draft 3-7
where its siblings are ignored: the definition's rule; with siblings: an
``allOf``); ``allOf`` merged (``merge``);
``anyOf``/``oneOf``, ``not``, ``if`` and ``dependentSchemas`` (``applicators``);
``enum``/``const``
(``const_nodes``); then one alternative per allowed ``type`` built from that
type's keywords (``objects``, ``arrays``, ``string_nodes``,
``number_nodes``).  Type-specific keywords never restrict other types (a
schema without ``type`` accepts every type).

Invariants and guards: the number of AST nodes is capped
(``max_grammar_nodes``) and schema nesting is capped (``max_schema_depth``),
both raising ``LimitExceeded``; every approximation goes through ``warn``,
which raises ``SchemaUnsupported`` (a ``GrammarError``) when ``strict``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from grammask.errors import GrammarError, GrammarWarning, LimitExceeded, SchemaUnsupported, warn_caller
from grammask.grammar.ast import GrammarAST, Literal, Regex, Rule, RuleRef
from grammask.json_schema.applicators import (any_of_node, dependent_schemas_node, holds,
                                              if_then_else_node, negated_conjuncts, not_node,
                                              schema_dependencies)
from grammask.json_schema.arrays import array_node
from grammask.json_schema.builder import NEVER, GrammarBuilder, rule_hint
from grammask.json_schema.const_nodes import enum_node
from grammask.json_schema.keywords import (NEWER_KEYWORDS, allowed_types, declared_draft,
                                           has_constraints, index_reference_spellings,
                                           spells_reference)
from grammask.json_schema.merge import merge_schemas, resolve_unevaluated
from grammask.json_schema.number_nodes import non_integer_node, number_node, remainder_set_node
from grammask.json_schema.objects import object_node
from grammask.json_schema.options import Options
from grammask.json_schema.refs import RefResolver, UnresolvedRef
from grammask.json_schema.string_nodes import string_node


class Translator(GrammarBuilder):
    def __init__(self, root: Any, options: Options):
        super().__init__(options)
        self.root = root
        self.resolver = RefResolver(root, options.resources)
        self.shared_rules: dict[Any, Any] = {}
        self.plain_type_nodes: dict[str, Any] = {}
        """The node of each schema that is only a scalar ``type`` (``_plain_type``),
        made once, and a rule unless it is one terminal: 20,000 ``{"type":
        "integer"}`` properties share one rule instead of 20,000 copies of
        its alternatives for the front end to flatten."""
        self.conditional_cases: dict[str, int] = {}
        """Pointer -> the cases ``applicators.if_then_else_node`` split there
        while further if/then pairs remained (capped: ``MAX_CONDITIONAL_CASES``)."""
        self.negation_memo: dict[tuple, tuple[Any, Any]] = {}
        """(schema identity, base URI, depth, multiples, outer, chain) -> (the
        schema, its ``applicators.negated_conjuncts``), ("member verdicts",
        branches identity, base URI) -> (the branches, whether
        ``member_verdicts.complement_applies``), ("value conjuncts",
        schema identity, base URI, depth) -> (the schema, its
        ``applicators._value_conjuncts``), and ("enum strings", list
        identity) -> (an ``enum`` list, its string members:
        ``applicators._in_enum``), kept for the translation."""
        self.remainder_products: dict[tuple, Any] = {}
        """(remainder automaton parameters, bounds regex) -> the node
        ``number_nodes._product_rules`` made for them (None: too many
        states), so a step and bounds repeated across a schema define
        their rules once."""
        self.reference_spellings: Optional[dict[int, tuple[Any, bool]]] = None
        """id of each dict of the documents -> (the dict, whether its JSON text
        spells a reference), built on first use (``spells_reference``)."""
        self.warnings: list[GrammarWarning] = []
        self.depth = 0
        self.base_uri = self.resolver.root_uri
        self.dynamic: dict[str, tuple[Any, str, str]] = {}
        self.dynamic = self.enter(self.base_uri)
        draft = declared_draft(root)
        self.ref_hides_siblings = draft in (3, 4, 6, 7)
        """Whether ``$schema`` names draft 3, 4, 6 or 7, where ``$ref`` hides
        its siblings (``keywords.declared_draft``)."""
        self.tuple_items = draft is not None
        """Whether ``$schema`` names a draft before 2020-12, where ``prefixItems``
        is not a keyword (``keywords.array_positions``)."""
        self.newer_keywords = NEWER_KEYWORDS.get(draft, frozenset())
        """Keywords the declared draft does not know, ignored (``own_keywords``).
        ``contains`` is kept (drafts 3 and 4) when no document spells it as
        a key: every ``contains`` the translator meets is then its own "an
        item fails" of a negated ``items`` (``applicators._position_complements``)."""
        if "contains" in self.newer_keywords and not any(
                _spells_key(document, "contains")
                for document in [root, *(options.resources or {}).values()]):
            self.newer_keywords = self.newer_keywords - {"contains"}
        self.integer_zero_fraction = draft not in (3, 4)
        """Whether 1.0 is an integer (drafts 6 and later; not in drafts 3 and 4)."""

    def translate(self) -> GrammarAST:
        try:
            # The resolver's root URI already holds the root's own ``$id``.
            value = self.node(self.root, "", based=True)
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
        warn_caller(warning)

    # ------------------------------------------------------------ dispatch

    def node(self, schema: Any, pointer: str, based: bool = False) -> Any:
        """The node for ``schema`` found at JSON pointer ``pointer``; with
        ``based``, the base URI already holds the schema's ``$id`` (a
        reference target, ``reference``), which is not applied again."""
        if schema is True:
            return self.generic("value")
        if schema is False:
            return NEVER
        if not isinstance(schema, dict):
            raise self.error(pointer, f"a schema must be an object or a boolean, "
                                      f"not {type(schema).__name__}")
        schema = self.own_keywords(schema)
        plain = _plain_type(schema)
        if plain is not None and plain in self.plain_type_nodes:
            return self.plain_type_nodes[plain]
        self.depth += 1
        saved_base, saved_dynamic = self.base_uri, self.dynamic
        try:
            if self.depth > self.options.max_schema_depth:
                raise LimitExceeded("max_schema_depth", self.depth,
                                    self.options.max_schema_depth,
                                    f"schema nesting at #{pointer}")
            if not based:
                self.base_uri = self.resolver.base_of(schema, self.base_uri)
            if self.base_uri != saved_base:
                self.dynamic = self.enter(self.base_uri)
            made = self._node(schema, pointer)
            if plain is not None:
                if made is not NEVER and not isinstance(made, (Literal, Regex, RuleRef)):
                    made = self.define(self.fresh_name(f"json_plain_{plain}"), made)
                self.plain_type_nodes[plain] = made
            return made
        finally:
            self.depth -= 1
            self.base_uri = saved_base
            self.dynamic = saved_dynamic

    def own_keywords(self, schema: Any) -> Any:
        """``schema`` without the keywords newer than the declared draft."""
        if isinstance(schema, dict) and not self.newer_keywords.isdisjoint(schema):
            return {k: v for k, v in schema.items() if k not in self.newer_keywords}
        return schema

    def enter(self, resource: str) -> dict:
        """The dynamic scope after entering ``resource``: names not bound yet
        bound to its dynamic anchors."""
        anchors = self.resolver.dynamic_anchors.get(resource, {})
        new = {name: entry for name, entry in anchors.items()
               if name in self.resolver.dynamic_names and name not in self.dynamic}
        return dict(self.dynamic, **new) if new else self.dynamic

    def scope_key(self) -> tuple:
        """The part of the dynamic scope a rule depends on (empty without
        dynamic references)."""
        return tuple(sorted((name, entry[1]) for name, entry in self.dynamic.items()))

    def _node(self, schema: dict, pointer: str) -> Any:
        if self._merges_reference(schema):
            key = (self.base_uri, json.dumps(schema), self.scope_key())
            return self.shared_rule(key, rule_hint(pointer, "merged"),
                                     lambda: self._merged_node(schema, pointer))
        return self._merged_node(schema, pointer)

    def _merges_reference(self, schema: dict) -> bool:
        """Whether translating ``schema`` merges operands that contain a
        ``$ref`` (which merging inlines), so it must be a shared rule."""
        merges = ("allOf" in schema or "if" in schema or "not" in schema
                  or any(keyword in schema and len(schema) > 1
                         for keyword in ("$ref", "$dynamicRef", "anyOf", "oneOf")))
        if not merges or (self.ref_hides_siblings and "$ref" in schema):
            return False
        return self.spells_reference(schema)

    def spells_reference(self, value: Any) -> bool:
        """Whether ``json.dumps(value)`` holds ``"$ref"`` or ``"$dynamicRef"``
        (``keywords.spells_reference``; the documents' dicts are indexed on
        first use, so a nested schema is not written out again at every
        level)."""
        if self.reference_spellings is None:
            self.reference_spellings = {}
            for document in [self.root, *(self.options.resources or {}).values()]:
                index_reference_spellings(document, self.reference_spellings)
        return spells_reference(value, self.reference_spellings)

    def _merged_node(self, schema: dict, pointer: str) -> Any:
        for reference_keyword in ("$ref", "$dynamicRef"):
            if reference_keyword in schema:
                reference = schema[reference_keyword]
                rest = {k: v for k, v in schema.items() if k != reference_keyword}
                if self.ref_hides_siblings or not has_constraints(rest):
                    return self.reference(reference, pointer,
                                          dynamic=reference_keyword == "$dynamicRef")
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
                return any_of_node(self, schema, keyword, pointer)
        if "not" in schema:
            return not_node(self, schema, pointer)
        if "if" in schema:
            return if_then_else_node(self, schema, pointer)
        if schema_dependencies(schema):
            return dependent_schemas_node(self, schema, pointer)
        if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
            schema = resolve_unevaluated(self, schema, pointer)
        if isinstance(schema.get("required"), bool):
            self.warn("required", pointer, "draft-3 boolean form: ignored (the property "
                                           "is optional)")
        types = allowed_types(self, schema, pointer)
        if "enum" in schema or "const" in schema:
            return enum_node(self, schema, types, pointer)
        alternatives = []
        for type_name in types:
            if type_name == "null":
                alternatives.append(self.lit("null"))
            elif type_name == "boolean":
                alternatives.append(self.alt([self.lit("true"), self.lit("false")]))
            elif type_name == "integer":
                if "number" not in types:
                    alternatives.append(number_node(self, schema, pointer, integer=True))
            elif type_name == "number":
                alternatives.append(number_node(self, schema, pointer, integer=False))
            elif type_name == "string":
                alternatives.append(string_node(self, schema, pointer))
            elif type_name == "array":
                alternatives.append(array_node(self, schema, pointer))
            elif type_name == "object":
                alternatives.append(object_node(self, schema, pointer))
        return self.alt(alternatives)

    def negatable(self, schema: Any) -> bool:
        """Whether ``not: schema`` translates exactly here
        (``applicators.negated_conjuncts``), for modules listed after
        ``applicators``."""
        return negated_conjuncts(self, schema) is not None

    def holds(self, schema: Any, value: Any) -> Optional[bool]:
        """Whether ``value`` is valid against ``schema`` (None: undecided;
        ``applicators.holds``), for modules listed after ``applicators``."""
        return holds(self, schema, value)

    def resolve(self, reference: str, base: str, dynamic: bool) -> tuple[Any, str, str]:
        """(target, location, base inside it) of a ``$ref`` (or, with
        ``dynamic``, a ``$dynamicRef``: through the dynamic scope where it
        applies); raises ``UnresolvedRef``."""
        name = self.resolver.dynamic_target(reference, base) if dynamic else None
        if name is not None and name in self.dynamic:
            return self.dynamic[name]
        return self.resolver.resolve(reference, base)

    def non_integers(self, schema: dict, pointer: str) -> Any:
        """``number_nodes.non_integer_node`` (``not: {type: integer}``
        beside ``number``), for ``applicators``: keyword modules reach each
        other through the translator only."""
        return non_integer_node(self, schema, pointer)

    def remainder_set(self, schema: dict, steps: list, holds: Callable, integer: bool,
                      pointer: str) -> Any:
        """``number_nodes.remainder_set_node`` (a set of remainders within
        ``schema``'s bounds), for ``multiple_formulas``."""
        return remainder_set_node(self, schema, steps, holds, integer, pointer)

    def reference(self, reference: Any, pointer: str, dynamic: bool = False) -> Any:
        if not isinstance(reference, str):
            raise self.error(pointer, "$ref must be a string")
        try:
            target, location, target_base = self.resolve(reference, self.base_uri, dynamic)
        except UnresolvedRef as error:
            self.warn("$ref", pointer, f"{error}; any JSON value accepted instead")
            return self.generic("value")
        hint = location.rsplit("/", 1)[-1] if "/" in location else "root"
        entered = self.enter(target_base)

        def build() -> Any:
            saved_base, saved_dynamic = self.base_uri, self.dynamic
            self.base_uri, self.dynamic = target_base, entered
            try:
                return self.node(target, location.split("#", 1)[1], based=True)
            finally:
                self.base_uri, self.dynamic = saved_base, saved_dynamic

        saved_dynamic = self.dynamic
        self.dynamic = entered
        key = (location, self.scope_key()) if self.dynamic else location
        self.dynamic = saved_dynamic
        return self.shared_rule(key, f"def_{hint}", build)

    def shared_rule(self, key: Any, hint: str, build: Callable[[], Any]) -> Any:
        """A ``RuleRef`` to the rule of ``key`` (see ``shared_rules``), whose
        body ``build`` makes on first use; NEVER if that body is empty."""
        name = self.shared_rules.get(key)
        if name is NEVER:
            return NEVER
        if name is not None:
            return RuleRef(name)
        name = self.fresh_name(hint)
        self.shared_rules[key] = name
        body = build()
        if body is NEVER:
            # References made while the body was built (a cycle) need the
            # rule to exist: a self-loop is unproductive, so normalization
            # removes it together with every alternative that uses it.
            self.shared_rules[key] = NEVER
            self.define(name, RuleRef(name))
            return NEVER
        self.define(name, body)
        return RuleRef(name)

    def resolve_inline(self, reference: str, pointer: str, base: Optional[str] = None,
                       dynamic: bool = False) -> tuple[Any, str]:
        """The target of a reference as a schema (for merging), with the base
        URI in force inside it."""
        base = self.base_uri if base is None else base
        try:
            target, _, target_base = self.resolve(reference, base, dynamic)
        except UnresolvedRef as error:
            self.warn("$ref", pointer, f"{error}; any JSON value accepted instead")
            return True, base
        if self.enter(target_base) is not self.dynamic:
            self.warn("$dynamicRef", pointer, f"the dynamic anchors of {target_base!r}, "
                                              f"merged here, are not in the dynamic scope")
        return target, target_base


PLAIN_TYPES = frozenset({"integer", "number", "string", "boolean", "null"})
ANNOTATIONS = frozenset({"type", "title", "description", "$comment"})


def _plain_type(schema: dict) -> Optional[str]:
    """The type of a schema that is only a scalar ``type`` (annotations
    aside), whose node depends on nothing else; None for any other schema."""
    kind = schema.get("type")
    if kind.__class__ is str and kind in PLAIN_TYPES and ANNOTATIONS.issuperset(schema):
        return kind
    return None


def _spells_key(value: Any, key: str) -> bool:
    """Whether some object anywhere inside the JSON value ``value`` has the key ``key``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
