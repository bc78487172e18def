"""A plain, slow, obviously-correct recognizer over a ``GrammarAST``, for tests.

It works on the AST itself (not on LNF), so it is independent of the
normalization passes and of the Earley core, and can serve as their oracle.

Method (least fixpoint over "end positions"):

For an input ``data`` of ``n`` bytes, ``ends(node, i)`` is the set of positions
``j`` such that ``data[i:j]`` is in the language of ``node``, plus the marker
``PAST_END`` when ``data[i:]`` is a prefix (not necessarily proper) of some
string of the node's language.  For a rule name the sets are kept in a table
``table[name][i]``, initialised empty and recomputed from the rule bodies until
nothing changes.  Every step only adds positions, so the iteration reaches the
least fixpoint, which is exactly the language; left recursion and nullable
rules need no special case.

- ``accepts(data)``: ``n in ends(start, 0)``.
- ``viable_prefix(data)``: ``PAST_END`` or ``n`` in ``ends(start, 0)`` (some
  sentence starts with ``data``).  ``PAST_END`` flows through a sequence only when all later
  items have a non-empty language (``_nonempty``).

Terminals, with ``data`` decoded as UTF-8 where a terminal is about characters:

- ``Literal``: byte comparison.
- ``CharClass`` / ``AnyChar``: one Unicode scalar value, strictly decoded;
  an incomplete trailing UTF-8 sequence stands for the interval of code points
  whose encoding starts with it (UTF-8 preserves code-point order).
- ``Regex``: the ``regex`` module (version 1 syntax, close to Rust's) after
  translating Rust-only escapes (``\\x{..}``, ``\\u{..}``, ``\\z``):
  ``kind="regex"``: ``fullmatch``; prefixes with ``partial=True``;
  ``kind="early_end"``: a match no proper prefix of which matches;
  ``kind="complement"``: a string in which ``search`` finds no match.
  After an incomplete trailing UTF-8 sequence, the candidate code points are
  tried one by one (restricted to the regex's explicit alphabet when it has one).
  Limitation: ``regex``'s partial matching over-approximates only for patterns
  containing an empty character class or lookaround; tests avoid those.
- ``Substrings``: any substring of the text's characters, i.e. a byte substring
  of its UTF-8 encoding that is itself valid UTF-8.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import re._parser as sre_parse
import regex

from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    GrammarAST,
    Literal,
    Node,
    Regex,
    Repeat,
    RuleRef,
    Sequence,
    Substrings,
)

PAST_END = -1
MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)


def rust_regex_to_python(pattern: str) -> str:
    """Translate the Rust-only escapes of ``pattern`` into ``regex`` syntax."""
    out = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char != "\\" or index + 1 >= len(pattern):
            out.append(char)
            index += 1
            continue
        escaped = pattern[index + 1]
        if escaped in "xu" and pattern.startswith("{", index + 2):
            close = pattern.index("}", index + 3)
            out.append("\\U%08X" % int(pattern[index + 3:close], 16))
            index = close + 1
        elif escaped == "z":
            out.append("\\Z")
            index += 2
        else:
            out.append(pattern[index:index + 2])
            index += 2
    return "".join(out)


@lru_cache(maxsize=None)
def compiled_regex(pattern: str, case_insensitive: bool):
    flags = regex.V1 | (regex.IGNORECASE if case_insensitive else 0)
    return regex.compile(rust_regex_to_python(pattern), flags)


@lru_cache(maxsize=None)
def regex_alphabet(pattern: str, case_insensitive: bool) -> Optional[tuple[tuple[int, int], ...]]:
    """Code-point intervals that can occur in a match, when the pattern lists
    them explicitly (literals and ranges only); None when unknown."""
    if case_insensitive:
        return None
    try:
        parsed = sre_parse.parse(rust_regex_to_python(pattern))
    except Exception:
        return None
    intervals: list[tuple[int, int]] = []

    def walk(items) -> bool:
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                intervals.append((arg, arg))
            elif name == "RANGE":
                intervals.append(arg)
            elif name == "IN":
                if not walk(arg):
                    return False
            elif name == "BRANCH":
                if not all(walk(branch) for branch in arg[1]):
                    return False
            elif name == "SUBPATTERN":
                if not walk(arg[-1]):
                    return False
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                if not walk(arg[2]):
                    return False
            elif name in ("AT",):
                continue
            else:
                return False
        return True

    return tuple(intervals) if walk(parsed) else None


def utf8_completion_interval(tail: bytes) -> Optional[tuple[int, int]]:
    """The code points whose UTF-8 encoding properly starts with ``tail``
    (1 to 3 bytes), as an inclusive interval, or None if there are none."""
    lead = tail[0]
    if 0xC2 <= lead <= 0xDF:
        length = 2
    elif 0xE0 <= lead <= 0xEF:
        length = 3
    elif 0xF0 <= lead <= 0xF4:
        length = 4
    else:
        return None
    if len(tail) >= length:
        return None
    second = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}
    allowed = [second.get(lead, (0x80, 0xBF))] + [(0x80, 0xBF)] * (length - 2)
    for position, byte in enumerate(tail[1:]):
        low, high = allowed[position]
        if not low <= byte <= high:
            return None
    rest = allowed[len(tail) - 1:]
    low_bytes = tail + bytes(low for low, _ in rest)
    high_bytes = tail + bytes(high for _, high in rest)
    return ord(low_bytes.decode("utf-8")), ord(high_bytes.decode("utf-8"))


def split_utf8(data: bytes) -> Optional[tuple[str, bytes]]:
    """Split ``data`` into its decoded complete characters and an incomplete
    trailing sequence (possibly empty); None if ``data`` is not a UTF-8 prefix."""
    for cut in range(len(data), max(-1, len(data) - 4), -1):
        try:
            text = data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        tail = data[cut:]
        if not tail or utf8_completion_interval(tail) is not None:
            return text, tail
        return None
    return None


def decode_exact(data: bytes) -> Optional[str]:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def class_intervals(node) -> list[tuple[int, int]]:
    """Code-point intervals of a CharClass / AnyChar, surrogates excluded."""
    if isinstance(node, AnyChar):
        ranges = [(0, MAX_CODE_POINT)]
    elif node.negated:
        ranges, low = [], 0
        for start, end in sorted(node.ranges):
            if start > low:
                ranges.append((low, start - 1))
            low = max(low, end + 1)
        if low <= MAX_CODE_POINT:
            ranges.append((low, MAX_CODE_POINT))
    else:
        ranges = list(node.ranges)
    result = []
    for start, end in ranges:
        for piece_start, piece_end in ((start, min(end, SURROGATES[0] - 1)),
                                       (max(start, SURROGATES[1] + 1), end)):
            if piece_start <= piece_end:
                result.append((piece_start, piece_end))
    return result


def intervals_meet(intervals, low: int, high: int) -> bool:
    return any(start <= high and low <= end for start, end in intervals)


class ReferenceRecognizer:
    """Whole-sentence and prefix membership over a GrammarAST (see module doc)."""

    def __init__(self, ast: GrammarAST):
        self.ast = ast
        self.bodies: dict[str, Node] = {}
        for rule in ast.rules:
            if rule.name in self.bodies:
                previous = self.bodies[rule.name]
                items = previous.items if isinstance(previous, Alternation) else (previous,)
                self.bodies[rule.name] = Alternation(items + (rule.body,))
            else:
                self.bodies[rule.name] = rule.body
        if ast.start not in self.bodies:
            raise KeyError(f"start rule {ast.start!r} is not defined")
        for name in list(self.bodies):
            for ref in self._rule_refs(self.bodies[name]):
                if ref not in self.bodies:
                    raise KeyError(f"rule {ref!r} used in {name!r} is not defined")
        self.productive = self._productive_rules()
        self.nonempty_cache: dict[int, bool] = {}

    # --- language emptiness ---------------------------------------------------

    def _rule_refs(self, node: Node):
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, RuleRef):
                yield current.name
            elif isinstance(current, (Sequence, Alternation)):
                stack.extend(current.items)
            elif isinstance(current, Repeat):
                stack.append(current.item)

    def _productive_rules(self) -> set[str]:
        productive: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, body in self.bodies.items():
                if name not in productive and self._nonempty(body, productive):
                    productive.add(name)
                    changed = True
        return productive

    def _nonempty(self, node: Node, productive: set[str]) -> bool:
        if isinstance(node, RuleRef):
            return node.name in productive
        if isinstance(node, Sequence):
            return all(self._nonempty(item, productive) for item in node.items)
        if isinstance(node, Alternation):
            return any(self._nonempty(item, productive) for item in node.items)
        if isinstance(node, Repeat):
            return node.min == 0 or self._nonempty(node.item, productive)
        if isinstance(node, (CharClass, AnyChar)):
            return bool(class_intervals(node))
        if isinstance(node, Regex):
            pattern = compiled_regex(node.pattern, node.case_insensitive)
            if node.kind == "complement":
                return pattern.fullmatch("") is None
            return pattern.fullmatch("", partial=True) is not None
        return True

    # --- public API -------------------------------------------------------------

    def accepts(self, data: bytes) -> bool:
        return len(data) in self._start_ends(bytes(data), prefix_mode=False)

    def viable_prefix(self, data: bytes) -> bool:
        ends = self._start_ends(bytes(data), prefix_mode=True)
        return PAST_END in ends or len(data) in ends

    # --- fixpoint ---------------------------------------------------------------

    def _start_ends(self, data: bytes, prefix_mode: bool) -> frozenset:
        self.data = data
        self.prefix_mode = prefix_mode
        self.terminal_cache: dict[tuple[int, int], frozenset] = {}
        n_positions = len(data) + 1
        self.table = {name: [frozenset()] * n_positions for name in self.bodies}
        changed = True
        while changed:
            changed = False
            for name, body in self.bodies.items():
                row = self.table[name]
                for position in range(n_positions):
                    new = self._ends(body, position) | row[position]
                    if new != row[position]:
                        row[position] = new
                        changed = True
        return self.table[self.ast.start][0]

    def _ends(self, node: Node, i: int) -> frozenset:
        if isinstance(node, RuleRef):
            return self.table[node.name][i]
        if isinstance(node, Sequence):
            return self._sequence_ends(node.items, i)
        if isinstance(node, Alternation):
            result: set[int] = set()
            for item in node.items:
                result |= self._ends(item, i)
            return frozenset(result)
        if isinstance(node, Repeat):
            return self._repeat_ends(node, i)
        key = (id(node), i)
        cached = self.terminal_cache.get(key)
        if cached is None:
            cached = self.terminal_cache[key] = frozenset(self._terminal_ends(node, i))
        return cached

    def _language_nonempty(self, node: Node) -> bool:
        known = self.nonempty_cache.get(id(node))
        if known is None:
            known = self.nonempty_cache[id(node)] = self._nonempty(node, self.productive)
        return known

    def _step(self, node: Node, positions) -> set[int]:
        result: set[int] = set()
        for position in positions:
            if position == PAST_END:
                if self._language_nonempty(node):
                    result.add(PAST_END)
            else:
                result |= self._ends(node, position)
        return result

    def _sequence_ends(self, items, i: int) -> frozenset:
        positions: set[int] = {i}
        for item in items:
            positions = self._step(item, positions)
            if not positions:
                break
        return frozenset(positions)

    def _repeat_ends(self, node: Repeat, i: int) -> frozenset:
        positions: set[int] = {i}
        for _ in range(node.min):
            positions = self._step(node.item, positions)
            if not positions:
                return frozenset()
        extra = None if node.max is None else node.max - node.min
        while extra is None or extra > 0:
            grown = positions | self._step(node.item, positions)
            if grown == positions:
                break
            positions = grown
            if extra is not None:
                extra -= 1
        return frozenset(positions)

    # --- terminals --------------------------------------------------------------

    def _terminal_ends(self, node: Node, i: int):
        data = self.data
        n = len(data)
        if isinstance(node, Literal):
            if data.startswith(node.value, i):
                yield i + len(node.value)
            if self.prefix_mode and node.value.startswith(data[i:]):
                yield PAST_END
        elif isinstance(node, (CharClass, AnyChar)):
            yield from self._char_ends(class_intervals(node), i)
        elif isinstance(node, Regex):
            yield from self._regex_ends(node, i)
        elif isinstance(node, Substrings):
            encoded = node.text.encode("utf-8")
            for j in range(i, n + 1):
                if data[i:j] in encoded and decode_exact(data[i:j]) is not None:
                    yield j
            if self.prefix_mode:
                split = split_utf8(data[i:])
                if split is not None and data[i:] in encoded:
                    yield PAST_END
        else:
            raise TypeError(f"unknown AST node {node!r}")

    def _char_ends(self, intervals, i: int):
        data = self.data
        for length in range(1, 5):
            char = decode_exact(data[i:i + length])
            if char is not None and len(char) == 1 and i + length <= len(data):
                if intervals_meet(intervals, ord(char), ord(char)):
                    yield i + length
                    if self.prefix_mode and i + length == len(data):
                        yield PAST_END
                break
        if self.prefix_mode:
            rest = data[i:]
            if not rest:
                if intervals:
                    yield PAST_END
            elif len(rest) < 4:
                completions = utf8_completion_interval(rest)
                if completions is not None and intervals_meet(intervals, *completions):
                    yield PAST_END

    def _regex_ends(self, node: Regex, i: int):
        data = self.data
        pattern = compiled_regex(node.pattern, node.case_insensitive)
        for j in range(i, len(data) + 1):
            text = decode_exact(data[i:j])
            if text is not None and self._regex_member(node, pattern, text):
                yield j
        if not self.prefix_mode:
            return
        split = split_utf8(data[i:])
        if split is None:
            return
        text, tail = split
        if not tail:
            if self._regex_prefix(node, pattern, text, final=True):
                yield PAST_END
            return
        if not self._regex_prefix(node, pattern, text, final=False):
            return
        low, high = utf8_completion_interval(tail)
        alphabet = regex_alphabet(node.pattern, node.case_insensitive)
        if alphabet is None or node.kind == "complement":
            candidates = [(low, high)]
        else:
            candidates = [(max(low, start), min(high, end)) for start, end in alphabet
                          if start <= high and low <= end]
        for start, end in candidates:
            for code in range(start, end + 1):
                if SURROGATES[0] <= code <= SURROGATES[1]:
                    continue
                if self._regex_prefix(node, pattern, text + chr(code), final=True):
                    yield PAST_END
                    return

    @staticmethod
    def _regex_member(node: Regex, pattern, text: str) -> bool:
        if node.kind == "regex":
            return pattern.fullmatch(text) is not None
        if node.kind == "early_end":
            if pattern.fullmatch(text) is None:
                return False
            return all(pattern.fullmatch(text[:cut]) is None for cut in range(len(text)))
        if node.kind == "complement":
            return pattern.search(text) is None
        raise ValueError(f"unknown regex kind {node.kind!r}")

    @staticmethod
    def _regex_prefix(node: Regex, pattern, text: str, final: bool) -> bool:
        """Some string of the terminal's language starts with ``text``; with
        ``final=False`` at least one more character must follow ``text``."""
        if node.kind == "complement":
            return pattern.search(text) is None
        if node.kind == "early_end":
            last = len(text) + 1 if not final else len(text)
            if any(pattern.fullmatch(text[:cut]) is not None for cut in range(last)):
                return False
        return pattern.fullmatch(text, partial=True) is not None
