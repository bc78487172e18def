"""Grammar building for the JSON Schema translator: nodes, rules, counts.

What it computes: ``GrammarBuilder`` makes the ``grammask.grammar.ast``
nodes every keyword module assembles: literals, regexes, sequences,
alternatives and repeats (``lit``, ``rx``, ``seq``, ``alt``, ``repeat``),
named rules (``fresh_name``, ``define``), JSON whitespace and separators
(``ws``, ``comma``, ``colon``), the generic "any JSON value / object / array / string /
number" rules (``generic``), exact counts by doubling (``times``,
``counted``) and objects whose members come in any order
(``any_order_object``, with counts and dependencies).  It knows no schema keyword:
``translator.Translator`` extends it with the dispatch, and the keyword
modules receive that translator.

Data layout: ``rules`` maps rule name -> body node in definition order;
``used_names`` holds every rule name taken (the start rule's included),
``_last_suffix`` the last counter ``fresh_name`` gave each base name (hints
that clean to one base, as non-ASCII names all become "rule", resume there
instead of counting up through every earlier name: O(1) a name, not O(k));
``n_nodes`` counts the nodes made so far.

Invariants: ``NEVER`` is a sentinel for the empty language; ``seq``,
``alt`` and ``repeat`` propagate it, so no emitted rule has to match
nothing.  Every node made is counted, and past ``max_grammar_nodes``
``LimitExceeded`` is raised.  Shared nodes (the whitespace run, separators,
generic rules, powers) are made once per translation.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping, Optional

from grammask.errors import GrammarError, LimitExceeded
from grammask.grammar.ast import (
    Alternation, Literal, Node, Regex, Repeat, RuleRef, Sequence,
)
from grammask.json_schema import numbers, strings
from grammask.json_schema.options import Options
from grammask.terminals import DIFFERENCE_SEPARATOR, INTERSECTION_SEPARATOR

_NOT_NAME_CHARACTER = re.compile("[^0-9A-Za-z]")
"""What ``fresh_name`` replaces by "_": all but ASCII letters and digits."""

SMALL_REPEAT = 16
"""Counts up to this stay a Repeat node (the front end expands them)."""

MAX_ANY_ORDER_REQUIRED = 6
"""Most members of a ``const`` object written in any order (2^r rules)."""


def co_reachable(successors: Mapping[Any, Iterable], ends: Iterable) -> set:
    """The states from which one of ``ends`` is reachable (``successors``:
    each state to the states its edges lead to): those whose rules can
    still derive a string."""
    predecessors: dict = {}
    for source, targets in successors.items():
        for target in targets:
            predecessors.setdefault(target, []).append(source)
    live: set = set()
    pending = list(ends)
    while pending:
        state = pending.pop()
        if state not in live:
            live.add(state)
            pending.extend(predecessors.get(state, ()))
    return live


@functools.lru_cache(maxsize=4096)
def _name_base(hint: str) -> str:
    """The rule-name base ``fresh_name`` numbers for ``hint``: ASCII letters,
    digits and "_", lower case, at most 48 characters, not starting with a
    digit (memoized: objects reuse a few hints per schema)."""
    cleaned = _NOT_NAME_CHARACTER.sub("_", hint).strip("_")
    base = (cleaned or "rule").lower()[:48]
    if base[0].isdigit():
        base = "r_" + base
    return base


class _Never:
    """The empty language."""

    def __repr__(self) -> str:
        return "NEVER"


NEVER: Any = _Never()


def rule_hint(pointer: str, suffix: str) -> str:
    """A rule-name hint from the last JSON pointer token and a suffix."""
    last = pointer.rsplit("/", 1)[-1] if pointer else "root"
    return f"{last}_{suffix}"


class GrammarBuilder:
    def __init__(self, options: Options):
        self.options = options
        self.rules: dict[str, Node] = {}
        self.used_names = {options.start}
        self._last_suffix: dict[str, int] = {}
        self.n_nodes = 0
        self._generic: dict[str, str] = {}
        self._powers: dict[tuple[Any, int], Any] = {}
        self._ws: Optional[Node] = None
        self._separators: dict[str, Node] = {}
        self._string_tail: Optional[Node] = None

    def error(self, pointer: str, message: str) -> GrammarError:
        return GrammarError(f"invalid schema at #{pointer}: {message}")

    def fresh_name(self, hint: str) -> str:
        base = _name_base(hint)
        name = base
        counter = self._last_suffix.get(base, 1)
        while name in self.used_names:
            counter += 1
            name = f"{base}_{counter}"
        self._last_suffix[base] = counter
        self.used_names.add(name)
        return name

    def define(self, name: str, body: Node) -> RuleRef:
        self.rules[name] = body
        return RuleRef(name)

    def count(self, n_new: int = 1) -> None:
        """Count ``n_new`` nodes made outside this class (``max_grammar_nodes``)."""
        self.n_nodes += n_new
        if self.n_nodes > self.options.max_grammar_nodes:
            raise LimitExceeded("max_grammar_nodes", self.n_nodes,
                                self.options.max_grammar_nodes,
                                "the grammar generated for this schema is too large")

    # -------------------------------------------------------------- nodes

    def lit(self, text: str) -> Node:
        self.count()
        return Literal(text.encode("utf-8"))

    def rx(self, pattern: str) -> Node:
        self.count()
        return Regex(pattern)

    def rx_keys(self, text: str) -> Node:
        """A ``key_exclusion`` terminal (``key_exclusion.key_exclusion_patterns``)."""
        self.count()
        return Regex(text, "key_exclusion")

    def rx_all(self, patterns: list[str]) -> Node:
        """Strings fully matching every one of ``patterns`` (one terminal,
        the product of their DFAs: ``terminals.INTERSECTION_SEPARATOR``)."""
        if len(patterns) == 1:
            return self.rx(patterns[0])
        if any(INTERSECTION_SEPARATOR in pattern for pattern in patterns):
            raise GrammarError("a pattern of an intersection contains a raw NUL")
        self.count()
        return Regex(INTERSECTION_SEPARATOR.join(patterns), "intersection")

    def rx_minus(self, kept: list[str], removed: list[str]) -> Node:
        """Strings fully matching every one of ``kept`` and none of
        ``removed`` (one terminal: ``terminals.DIFFERENCE_SEPARATOR``)."""
        if not removed:
            return self.rx_all(kept)
        if any(INTERSECTION_SEPARATOR in p or DIFFERENCE_SEPARATOR in p for p in kept + removed):
            raise GrammarError("a pattern of a difference contains a raw NUL or U+0001")
        self.count()
        text = DIFFERENCE_SEPARATOR.join([INTERSECTION_SEPARATOR.join(kept)] + removed)
        return Regex(text, "difference")

    def seq(self, *items: Any) -> Any:
        flat: list[Node] = []
        for item in items:
            if item is None:
                continue
            if item is NEVER:
                return NEVER
            if item.__class__ is Sequence:
                flat.extend(item.items)
            else:
                flat.append(item)
        if len(flat) == 1:
            return flat[0]
        self.count()
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
        if len(present) <= 4:   # compare a few: cheaper than hashing whole subtrees
            unique = []
            for item in present:
                if item not in unique:
                    unique.append(item)
        else:
            unique = list(dict.fromkeys(present))
        if not unique:
            return NEVER
        if len(unique) == 1:
            return unique[0]
        self.count()
        return Alternation(tuple(unique))

    def repeat(self, item: Any, n_min: int, n_max: Optional[int]) -> Any:
        if item is NEVER:
            return NEVER if n_min > 0 else self.seq()
        self.count()
        return Repeat(item, n_min, n_max)

    # ------------------------------------------------------- JSON pieces

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
        """``ws "," ws`` as one terminal (``separator``)."""
        return self.separator(",")

    def colon(self) -> Node:
        """``ws ":" ws`` as one terminal (``separator``)."""
        return self.separator(":")

    def closing(self, mark: str) -> Node:
        """``ws mark`` as one non-nullable terminal (made once per mark):
        a rule that ends with it instead of deriving the empty string stays
        non-nullable (see ``separator``)."""
        return self._spaced(" " + mark, mark, lambda run: run + "\\" + mark)

    def separator(self, mark: str) -> Node:
        """``mark`` with optional whitespace runs on both sides, as one
        non-nullable regex terminal (made once per mark): the two whitespace
        runs are no nullable symbols, so eliminating nullable symbols adds
        no variant for them (four nullable runs around a member ``key ws ":" ws
        value`` after a comma gave it several productions and helper rules)."""
        return self._spaced(mark, mark, lambda run: run + mark + run)

    def _spaced(self, key: str, mark: str, pattern) -> Node:
        """The terminal cached under ``key``: ``mark`` alone when no whitespace
        may be generated, else the regex ``pattern(run)`` for the whitespace
        run the options allow."""
        if key not in self._separators:
            options = self.options
            if options.whitespace == "compact" or options.max_whitespace == 0:
                self._separators[key] = self.lit(mark)
            else:
                cap = options.max_whitespace
                run = "[ \\t\\n\\r]*" if cap is None else f"[ \\t\\n\\r]{{0,{cap}}}"
                self._separators[key] = self.rx(pattern(run))
        return self._separators[key]

    def string_tail(self) -> Node:
        """Any string content then the closing quote (``strings.STRING_TAIL``), made once."""
        if self._string_tail is None:
            self._string_tail = self.rx(strings.STRING_TAIL)
        return self._string_tail

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
        member = self.seq(self.generic("string"), self.colon(), value)
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

    def any_order_object(self, members: list[tuple[Any, bool]], extra: Optional[Any],
                         hint: str, min_count: int = 0, max_count: Optional[int] = None,
                         pairs: tuple = (), forbidden: frozenset = frozenset()) -> Any:
        """An object of ``members`` (each a key-value node and whether it is
        required) in any order, plus ``extra`` (the node of any other member,
        or None): ``{ M ("," M)* }`` with a rule per state (mask, count):
        ``mask`` has a bit per tracked member (the required ones and those
        of the ``pairs``, (trigger, target) member indices of dependentRequired)
        that was written, ``count`` the members written, up to ``max_count``
        (or saturating at ``min_count`` when there is no maximum).  The end
        needs every required bit, the target's bit beside each trigger's, and
        ``min_count``; members of ``forbidden`` are never written.  Only the
        states reachable from the start that can still end are made, and the
        members no state tells apart (untracked, and ``extra``) are one rule,
        so a state has one alternative per tracked member and one for them.
        Members are counted as written: exact for objects without duplicate
        keys (JSON allows them; a repeated member is valid each time).
        Past ``Options.max_any_order_states`` states, ``LimitExceeded``.
        """
        tracked = sorted({index for index, (_, is_required) in enumerate(members) if is_required}
                         | {index for pair in pairs for index in pair})
        bit_of = {member_index: 1 << position for position, member_index in enumerate(tracked)}
        required = sum(bit_of[index] for index, (_, is_required) in enumerate(members)
                       if is_required)
        choices = [(index, member) for index, (member, _) in enumerate(members)
                   if index in bit_of and index not in forbidden]
        untracked = [member for index, (member, _) in enumerate(members)
                     if index not in bit_of and index not in forbidden]
        untracked += [extra] if extra is not None else []
        if untracked:  # one alternative per state for the members no state tells apart
            choices.append((None, self.define(self.fresh_name(f"{hint}_other"),
                                              self.alt(untracked))))

        def following(state, member_index):
            mask, count = state
            if max_count is not None and count >= max_count:
                return None
            count = count + 1 if max_count is not None else min(count + 1, min_count)
            return mask | bit_of.get(member_index, 0), count

        def ends(state):
            mask, count = state
            return (mask & required == required and count >= min_count
                    and all(mask & bit_of[target] or not mask & bit_of[trigger]
                            for trigger, target in pairs))

        edges: dict = {}
        pending = [(0, 0)]
        while pending:
            state = pending.pop()
            if state in edges:
                continue
            if len(edges) >= self.options.max_any_order_states:
                raise LimitExceeded("max_any_order_states", len(edges) + 1,
                                    self.options.max_any_order_states,
                                    "an object in any order needs a rule per set of tracked "
                                    "members and count")
            targets = [(member, following(state, index)) for index, member in choices]
            edges[state] = [(member, target) for member, target in targets if target is not None]
            pending.extend(target for _, target in edges[state])
        live = co_reachable({state: [target for _, target in out] for state, out in edges.items()},
                            [state for state in edges if ends(state)])
        ws = self.ws()
        empty = self.seq(self.lit("{"), ws, self.lit("}")) if ends((0, 0)) else NEVER
        if (0, 0) not in live or not edges[(0, 0)]:
            return empty
        prefix = self.fresh_name(hint)
        names = {(mask, count): f"{prefix}_{mask}_{count}" for mask, count in live}
        self.used_names.update(names.values())
        for state in sorted(live):
            alternatives = [self.seq()] if ends(state) else []
            alternatives.extend(self.seq(self.comma(), member, RuleRef(names[target]))
                                for member, target in edges[state] if target in live)
            self.define(names[state], self.alt(alternatives))
        first = self.alt([self.seq(member, RuleRef(names[target]))
                          for member, target in edges[(0, 0)] if target in live])
        full = self.seq(self.lit("{"), ws, first, ws, self.lit("}"))
        return self.alt([empty, full])

    # ------------------------------------------------------------- counts

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
