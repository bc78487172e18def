"""``oneOf`` of object branches decided member by member: a sum of complements.

What it computes: ``object_one_of(translator, schema, pointer)`` is the node
of a ``oneOf`` whose branches are plain object schemas or schemas of other
types only (at least one plain object), or None for any other schema (the
caller then warns as before); ``one_of_complement`` the instances failing
such a oneOf (no branch, or several), which ``applicators`` uses for a
``not`` / a oneOf exclusion past ``MAX_NEGATED_ONE_OF_CHAIN``
(``complement_applies`` says when).  A plain object branch says ``type:
object`` and otherwise only ``properties``, ``required``,
``additionalProperties`` (``false``, ``true`` or ``{}``) and annotations,
or is a ``$ref`` to one inside the resource (followed up to
``MAX_REFERENCES`` times); the schema beside the oneOf says nothing but
``type: object`` and annotations.  The oneOf exclusions (``applicators``)
subtract from each branch the complement of every branch it overlaps: a
conjunction of disjunctions ("a required member missing, or a member's
value failing its schema, or ..."), which their chain expands into a
product of alternatives.  Here the size is a sum over the branches.

Why it is exact: a value of another type matches no plain object branch
(the branches of other types decide it: their own oneOf, or its
complement); for an object, branch i matches iff each member of i's
``required`` is present, each present member i declares has a value valid
against i's schema for it (S_ik), and, where i is closed, no other member
is present.  Each member decides that for each branch on its own, so the
verdicts are read member by member.  One alternative per branch g guessed
to be the one that matches, which writes g's names in g's order
(``properties``, then the other required names, as ``objects`` writes a
single branch) and, where g is open, the other branches' names after
them (first appearance); state ``(g, p, A, c)``: the names before
position p are read, A (a bit mask) is the set of branches still
matching, ``c`` members are written (0 or 1: a separator before the next):

    the name k at p absent       -> (g, p+1, A minus the branches requiring k, c)
    k present, its value in the  -> (g, p+1, A', 1), A' = the branches of A that
    region (T, F)                   declare k with S_ik in T, and the open
                                    ones that do not declare k
    an extra member (a key no    -> (g, p, the open branches of A, 1), g open
    branch names, any value)
    the end, at p = n, c = 1     when A, less the branches requiring a name g
                                 never writes (g closed), is exactly {g}

with g kept in A on every edge, plus ``{}`` when the names all absent leave
exactly one branch.  The complement is one alternative (g = -1) over the
names in one order that keeps every branch's (``_member_order``; none such:
None), any edge allowed, ending with any number of branches but one.  A
region partitions the values of k by the distinct schemas S_ik of the
branches of A that declare it (equal but for annotations and words the
translator does not read, ``emum``: one): T the schemas a value meets, F
those it fails, its node ``allOf: T + [{not: f} for f in F]``.  Where some
of them list their values (``enum`` / ``const``) those values are decided
one by one (``Translator.holds``) and grouped by the schemas they meet, and
the rest of the regions are the subsets of the unlisted schemas beside
``not`` of every listed value; so every value of k is in exactly one
region.  Only the branches of A are read, which keeps the regions few once
a member (a discriminator) has left few branches; a region that drops g
(or, in a guess, leaves no branch) is not built, nor is one whose T holds
two schemas ``disjoint`` proves apart, and an edge whose region's node is
empty is dropped.  States and regions are made only where reachable, and
the rules only for states from which an end is reachable.

Limits: ``MAX_VERDICT_STATES`` states and ``MAX_REGION_SCHEMAS`` unlisted
schemas at one member of one state (2**n regions); past either, or where a
region's F holds a schema ``not`` cannot read exactly
(``Translator.negatable``), None.  Property order: as for every object,
the names are written in one order only: a guessed branch's own, then the
other branches' names (which an open branch alone would read as extra
members in any gap), and the complement's merged order.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from grammask.grammar.ast import RuleRef
from grammask.json_schema.builder import NEVER, co_reachable, rule_hint
from grammask.json_schema.disjoint import disjoint
from grammask.json_schema.key_exclusion import key_not_in
from grammask.json_schema.keywords import VALIDATION_KEYWORDS, child_pointer
from grammask.json_schema.refs import UnresolvedRef
from grammask.json_schema.values import JSON_TYPES, json_equal, string_literal_node

MAX_VERDICT_STATES = 4_000
"""At most this many reachable (position, matching branches, count) states."""
MAX_REFERENCES = 8
"""A branch that is a ``$ref`` is followed through at most this many of them."""
MAX_REGION_SCHEMAS = 6
"""At most this many distinct unlisted member schemas split into regions at
one member of one state (2**6 = 64 subsets)."""

_OBJECT_WORDS = frozenset({"type", "properties", "required", "additionalProperties"})


class _Branch:
    """One plain object branch: its declared member schemas, its required
    names and whether members it does not declare are allowed."""

    def __init__(self, properties: dict, required: list, open_: bool):
        self.properties = properties
        self.required = frozenset(required)
        self.open = open_
        self.order = list(properties) + [name for name in dict.fromkeys(required)
                                         if name not in properties]


def object_one_of(translator, schema: dict, pointer: str) -> Optional[Any]:
    """The node of ``schema``'s oneOf (module docstring), or None."""
    if any(key in VALIDATION_KEYWORDS and key not in ("oneOf", "type") for key in schema) \
            or schema.get("type", "object") != "object":
        return None
    split = _split(translator, schema["oneOf"])
    if split is None:
        return None
    plain, scalars = split
    names = list(dict.fromkeys(name for branch in plain for name in branch.order))
    objects = _Verdicts(translator, plain, names, pointer).node()
    if objects is None or not scalars:
        return objects
    return translator.alt([objects, translator.node({"oneOf": scalars}, pointer)])


def complement_applies(translator, branches: list) -> bool:
    """Whether ``one_of_complement`` builds the complement of ``oneOf:
    branches`` (beside a schema of no other keyword but ``type``); kept in
    ``Translator.negation_memo`` by the list's identity and the base URI."""
    key = ("member verdicts", id(branches), translator.base_uri)
    kept = translator.negation_memo.get(key)
    if kept is None or kept[0] is not branches:
        kept = (branches, _complement_verdicts(translator, branches, "") is not None)
        translator.negation_memo[key] = kept
    return kept[1]


def one_of_complement(translator, rest: dict, branches: list, pointer: str) -> Optional[list]:
    """The nodes of the instances of ``rest`` failing ``oneOf: branches``
    (module docstring): objects by the complement's states, values of the
    other types of ``rest`` failing the branches of those types; None where
    ``rest`` says more than ``type`` or the branches are not of that form."""
    if any(key in VALIDATION_KEYWORDS and key != "type" for key in rest):
        return None
    verdicts = _complement_verdicts(translator, branches, pointer)
    if verdicts is None:
        return None
    types = rest.get("type", list(JSON_TYPES))
    types = [types] if isinstance(types, str) else types
    alternatives = []
    if "object" in types:
        objects = verdicts.node()
        if objects is None:
            return None
        alternatives.append(objects)
    others = [kind for kind in types if kind != "object"]
    if others:
        scalars = _split(translator, branches)[1]
        value: dict = {"type": others}
        if scalars:
            value["not"] = scalars[0] if len(scalars) == 1 else {"oneOf": scalars}
        alternatives.append(translator.node(value, pointer))
    return alternatives


def _complement_verdicts(translator, branches: list, pointer: str) -> Optional["_Verdicts"]:
    """The complement's ``_Verdicts`` over the object branches, or None
    (``_split``; the object branches' orders disagree; past a limit)."""
    split = _split(translator, branches)
    if split is None:
        return None
    names = _member_order(split[0])
    if names is None:
        return None
    verdicts = _Verdicts(translator, split[0], names, pointer, complement=True)
    return verdicts if verdicts.fits() else None


def _split(translator, branches: Any) -> Optional[tuple[list["_Branch"], list]]:
    """(the plain object branches read, the branches of other types only),
    or None where a branch is neither, none is a plain object, or
    ``any_order`` is set."""
    if translator.options.any_order or not isinstance(branches, list):
        return None
    plain, scalars = [], []
    for branch in branches:
        read = _plain_object(translator, branch)
        if read is not None:
            plain.append(read)
            continue
        types = translator.own_keywords(branch).get("type") if isinstance(branch, dict) \
            else None
        types = [types] if isinstance(types, str) else types
        if not isinstance(types, list) or "object" in types:
            return None
        scalars.append(branch)
    return (plain, scalars) if plain else None


def _plain_object(translator, branch: Any) -> Optional[_Branch]:
    """The ``_Branch`` of a plain object branch (module docstring; a
    ``$ref`` beside annotations only is followed inside the resource, up
    to ``MAX_REFERENCES`` times), or None."""
    for _ in range(MAX_REFERENCES):
        if not isinstance(branch, dict):
            return None
        branch = translator.own_keywords(branch)
        if "$ref" not in branch:
            break
        if any(key in VALIDATION_KEYWORDS for key in branch if key != "$ref") \
                and not translator.ref_hides_siblings:
            return None
        try:
            branch, _, base = translator.resolve(branch["$ref"], translator.base_uri, False)
        except UnresolvedRef:
            return None
        if base != translator.base_uri:
            return None
    else:
        return None
    if any(key in VALIDATION_KEYWORDS and key not in _OBJECT_WORDS for key in branch) \
            or "$id" in branch or "id" in branch or branch.get("type") != "object":
        return None
    properties = branch.get("properties", {})
    required = branch.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list) \
            or not all(isinstance(name, str) for name in required):
        return None
    if "additionalProperties" in branch:
        additional = branch["additionalProperties"]
        if additional == {}:
            additional = True
        if not isinstance(additional, bool):
            return None
    else:
        additional = not (translator.options.close_objects and properties)
    return _Branch(properties, required, additional)


def _member_order(branches: list[_Branch]) -> Optional[list[str]]:
    """One order of every name some branch declares or requires that keeps
    each branch's own order (names by first appearance where free), or None
    when the branches' orders disagree."""
    first: dict[str, int] = {}
    after: dict[str, set] = {}
    for branch in branches:
        for index, name in enumerate(branch.order):
            first.setdefault(name, len(first))
            after.setdefault(name, set())
            if index:
                after[name].add(branch.order[index - 1])
    order: list[str] = []
    placed: set = set()
    while len(order) < len(first):
        ready = [name for name in first if name not in placed and after[name] <= placed]
        if not ready:
            return None
        name = min(ready, key=first.get)
        order.append(name)
        placed.add(name)
    return order


def _key(schema: Any) -> str:
    """A text equal for schemas equal but for annotations and unknown words
    at their top level (``emum``), which the translator does not read."""
    if isinstance(schema, dict):
        schema = {key: value for key, value in schema.items() if key in _READ}
    return json.dumps(schema, sort_keys=True)


_READ = VALIDATION_KEYWORDS | {"$ref", "$dynamicRef", "$id", "id", "$anchor", "$dynamicAnchor",
                               "definitions", "$defs"}
"""The top-level words ``_key`` keeps: keywords, and those that name or hold
schemas a reference inside may reach."""


def _listed(translator, schema: Any) -> Optional[list]:
    """The values ``enum`` / ``const`` lists (the draft's own keywords), or None."""
    if not isinstance(schema, dict):
        return None
    schema = translator.own_keywords(schema)
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return schema["enum"]
    return None


class _Verdicts:
    """The states, regions and rules of one oneOf (module docstring)."""

    def __init__(self, translator, branches: list[_Branch], names: list[str], pointer: str,
                 complement: bool = False):
        self.translator = translator
        self.complement = complement
        self.branches = branches
        self.names = names
        self.pointer = pointer
        self.everyone = (1 << len(branches)) - 1
        self.open = sum(1 << index for index, branch in enumerate(branches) if branch.open)
        self.regions: dict = {}
        self.graph: Optional[dict] = None
        self.apart: dict = {}
        self.orders = [branch.order + [name for name in names if name not in branch.order]
                       if branch.open else branch.order for branch in branches]
        self.unwritten = {guess: self._requiring([name for name in names if name not in order])
                          for guess, order in enumerate(self.orders)}
        self.unwritten[-1] = 0

    def fits(self) -> bool:
        """Whether the states stay within the limits."""
        if self.graph is None:
            self.graph = self._graph()
        return self.graph is not None

    def node(self) -> Optional[Any]:
        """The object node: a rule per state from which an end is reachable
        (the start's: the guesses' first states), or None where a region's
        failed schema cannot be negated exactly."""
        graph = self.graph if self.graph is not None else self._graph()
        if graph is None:
            return None
        productive = _productive(graph)
        used = dict.fromkeys(region for state, edges in graph.items() if state in productive
                             for kind, target, region in edges
                             if kind == "member" and target in productive)
        if any(not self.translator.negatable(schema) for region in used
               for schema in self.regions[region][1]):
            return None
        made = {region: self._region_node(region) for region in used}
        # Regions found empty only now (NEVER) leave states without an end.
        graph = {state: [edge for edge in edges if edge[0] != "member"
                         or made.get(edge[2], NEVER) is not NEVER]
                 for state, edges in graph.items() if state in productive}
        productive = _productive(graph)
        translator = self.translator
        alone = self._all_absent()
        empty = translator.seq(translator.lit("{"), translator.ws(), translator.lit("}")) \
            if self._accepts(alone) else NEVER
        starts = [state for state in self._starts() if state in productive]
        if not starts:
            return empty
        prefix = translator.fresh_name(rule_hint(self.pointer, "verdicts"))
        rule_names = {state: translator.fresh_name(
            f"{prefix}_{state[0] + 1}_{state[1]}_{state[2]:x}_{state[3]}")
            for state in graph if state in productive}
        extra = None
        if any(kind == "extra" for edges in graph.values() for kind, _, _ in edges):
            extra = translator.seq(key_not_in(translator, self.names), translator.colon(),
                                   translator.generic("value"))
            extra = translator.define(translator.fresh_name(f"{prefix}_extra"), extra)
        for state, name in rule_names.items():
            separator = translator.comma() if state[3] else None
            alternatives = []
            for kind, target, region in graph[state]:
                if kind == "end":
                    alternatives.append(translator.closing("}"))
                elif target not in rule_names:
                    continue
                elif kind == "absent":
                    alternatives.append(RuleRef(rule_names[target]))
                elif kind == "extra":
                    alternatives.append(translator.seq(separator, extra,
                                                       RuleRef(rule_names[target])))
                else:
                    alternatives.append(translator.seq(separator, made[region],
                                                       RuleRef(rule_names[target])))
            translator.define(name, translator.alt(alternatives))
        translator.define(prefix, translator.alt([RuleRef(rule_names[state])
                                                  for state in starts]))
        full = translator.seq(translator.lit("{"), translator.ws(), RuleRef(prefix))
        return translator.alt([empty, full])

    def _accepts(self, alive: int) -> bool:
        """Whether an object the branches ``alive`` match ends well: exactly
        one of them, or (``complement``) any other number."""
        return (alive != 0 and alive & (alive - 1) == 0) != self.complement

    def _all_absent(self) -> int:
        return self.everyone & ~sum(1 << index for index, branch in enumerate(self.branches)
                                    if branch.required)

    def _requiring(self, names) -> int:
        """The branches requiring one of ``names``."""
        return sum(1 << index for index, branch in enumerate(self.branches)
                   if not branch.required.isdisjoint(names))

    def _starts(self) -> list:
        if self.complement:
            return [(-1, 0, self.everyone, 0)]
        return [(index, 0, self.everyone, 0) for index in range(len(self.branches))]

    def _graph(self) -> Optional[dict]:
        """state -> [(kind, successor, region key)]; None past a limit."""
        graph: dict = {}
        pending = self._starts()
        while pending:
            state = pending.pop()
            if state in graph:
                continue
            if len(graph) >= MAX_VERDICT_STATES:
                return None
            edges = self._edges(state)
            if edges is None:
                return None
            graph[state] = edges
            pending.extend(target for _, target, _ in edges if target is not None)
        return graph

    def _edges(self, state: tuple) -> Optional[list]:
        """(kind, successor, region key) of a state: (the branch guessed to
        match, -1 in the complement; the position in its order; the
        branches still matching, a bit mask; the member count capped at 1)."""
        guess, position, alive, count = state
        order = self.orders[guess] if guess >= 0 else self.names
        edges = []
        if position == len(order):
            left = alive & ~self.unwritten[guess]
            if count and self._accepts(left) and (guess < 0 or left >> guess & 1):
                edges.append(("end", None, None))
        else:
            name = order[position]
            kept = alive & ~self._requiring([name])
            if guess < 0 or kept >> guess & 1:
                edges.append(("absent", (guess, position + 1, kept, count), None))
            regions = self._regions(name, alive)
            if regions is None:
                return None
            edges.extend(("member", (guess, position + 1, after, 1), region)
                         for region, after in regions if guess < 0 or after >> guess & 1)
        if guess < 0 or self.branches[guess].open:
            edges.append(("extra", (guess, position, alive & self.open, 1), None))
        return edges

    def _regions(self, name: str, alive: int) -> Optional[list]:
        """[(region key, branches matching after it)] for a present member
        ``name`` in a state of branches ``alive``; regions leaving none are
        left out."""
        schemas: dict[str, Any] = {}
        declaring: dict[str, int] = {}
        passing = 0
        for index, branch in enumerate(self.branches):
            if not alive >> index & 1:
                continue
            if name in branch.properties:
                key = _key(branch.properties[name])
                schemas.setdefault(key, branch.properties[name])
                declaring[key] = declaring.get(key, 0) | 1 << index
            elif branch.open:
                passing |= 1 << index
        keys = sorted(schemas)
        listed = {key: _listed(self.translator, schemas[key]) for key in keys}
        unlisted = [key for key in keys if listed[key] is None]
        if len(unlisted) > MAX_REGION_SCHEMAS:
            return None
        found = []
        values: list = []
        for key in keys:
            for value in listed[key] or []:
                if not any(json_equal(value, seen) for seen in values):
                    values.append(value)
        groups: dict[frozenset, list] = {}
        for value in values:
            meets = []
            for key in keys:
                verdict = self.translator.holds(schemas[key], value)
                if verdict is None:
                    return None
                if verdict:
                    meets.append(key)
            groups.setdefault(frozenset(meets), []).append(value)
        for meets, group in groups.items():
            after = passing | sum(declaring[key] for key in meets)
            if after or self.complement:
                found.append(((name, "values", json.dumps(group, sort_keys=True)), after))
                self.regions[found[-1][0]] = ({"enum": group}, [])
        for subset in range(1 << len(unlisted)):
            meets = [key for bit, key in enumerate(unlisted) if subset >> bit & 1]
            after = passing | sum(declaring[key] for key in meets)
            if not (after or self.complement) or any(
                    self._disjoint(schemas, first, second)
                    for index, first in enumerate(meets) for second in meets[index + 1:]):
                continue
            fails = [schemas[key] for key in unlisted if key not in meets]
            if values:
                fails.append({"enum": values})
            region = (name, "schemas", tuple(meets), tuple(key for key in unlisted
                                                           if key not in meets),
                      json.dumps(values, sort_keys=True))
            self.regions[region] = ([schemas[key] for key in meets], fails)
            found.append((region, after))
        return found

    def _disjoint(self, schemas: dict, first: str, second: str) -> bool:
        """``disjoint`` of two member schemas, kept per pair of keys."""
        pair = (first, second)
        if pair not in self.apart:
            self.apart[pair] = disjoint(self.translator, schemas[first], schemas[second])
        return self.apart[pair]

    def _region_node(self, region: tuple) -> Any:
        """The member ``name: value`` of a region (NEVER when empty)."""
        translator = self.translator
        meets, fails = self.regions[region]
        if region[1] == "values":
            value_schema: Any = meets
        else:
            parts = meets + [{"not": schema} for schema in fails]
            value_schema = parts[0] if len(parts) == 1 else {"allOf": parts} if parts else True
        name = region[0]
        value = translator.node(value_schema, child_pointer(self.pointer, "oneOf", name))
        if value is NEVER:
            return NEVER
        translator.count()
        return translator.seq(string_literal_node(name), translator.colon(), value)


def _productive(graph: dict) -> set:
    """The states from which an end is reachable."""
    return co_reachable({state: [target for kind, target, _ in edges if kind != "end"]
                         for state, edges in graph.items()},
                        [state for state, edges in graph.items()
                         if any(kind == "end" for kind, _, _ in edges)])
