"""The pre-tokenizer pattern as a priority automaton over character classes: region signatures.

What it computes
    ``PretokenMachine.build(classes)`` compiles a pre-tokenizer pattern (the
    subset the GPT-2, cl100k, Llama-3, Qwen2 and tekken patterns use:
    alternation, groups, ``(?i:``, character-class atoms, greedy and lazy
    quantifiers, possessive quantifiers on one atom, one-character
    look-aheads, ``$`` right after a possessive atom that takes ``\\n``) into
    a Thompson program whose atoms are sets of ``CharClasses`` ids, or
    returns None for anything else.  Running it as a Pike machine with
    leftmost-first priorities (threads ordered by preference; a thread that
    reaches the match drops every thread after it) gives the end of the
    match a backtracking engine (``regex``) finds at position 0.  A
    possessive atom ``X++`` is ``X+(?!X)``, ``X?+`` is ``(?:X|(?!X))``,
    ``X{m,n}+`` is ``(?:X{n}|X{m,n-1}(?!X))``: the same matches, because
    giving back a character of X is only ever followed by an X.

    ``signature(region, cuts)`` summarizes what the canonical filter's
    verdicts after a region depend on.  A region starts at a pre-token
    boundary (the text's start or a boundary every continuation keeps), so
    the pattern's next match starts at its offset 0.  After the region the
    machine holds the ordered threads still running and the end ``e`` of
    the best match found so far.  Every continuation X then ends that match
    at ``e`` (if no running thread matches later) or at or past the region's
    end, and every later boundary depends only on ``region[e:] + X``: no
    boundary falls before ``e``.  The feasibility of the region's token cuts
    (a cut that is not a boundary needs a pair verdict that BPE keeps apart)
    therefore depends on the cuts before ``e`` only through "all of them
    hold", and on the others through their offsets from the region's end.
    Two regions with the same signature give the same verdict for every
    token after them, so the filter computes a region's verdicts once per
    signature instead of once per region (``" hello"`` and ``" quick"``
    share one as class strings already; ``" be"`` and ``" because"`` share
    one here).

    ``table()`` is the same machine as a deterministic automaton: one state
    per thread tuple reachable from the start (a few dozen for the real
    patterns), with the transitions and match flags the compiled verdicts
    of ``_region_scan`` walk.

Data layout
    The program is a list of tuples: ``("char", mask)``, ``("split", a, b)``
    (a preferred), ``("jmp", a)``, ``("not", mask)`` and ``("is", mask)``
    (one-character look-aheads; at the text's end ``not`` holds and ``is``
    fails), ``("end",)``, ``("match",)``; a mask is an int with bit k set
    for class k.  Threads are program counters before their epsilon closure:
    the closure at an offset needs the next character (look-aheads), so it is
    taken when that character is read.  A signature is a hashable tuple
    (threads, e - len(region), region[e:], cuts from e relative to the end,
    whether every cut before e holds); None when the machine does not apply
    (unsupported pattern syntax, no match yet, an empty match, or every
    thread dead inside the region).

Invariants
    ``match_end(text)`` equals ``regex.match(pattern, text).end()`` on class
    strings (tested with hypothesis on the real patterns), and equal
    signatures give equal verdicts (tested against the filter's scans).
    Work per signature is one compiled table step per character of the
    region (``_region_scan.ScanTable.run``), or O(len(region) x program length)
    in the Pike machine where the table is not built.

Seeds: Cox 2009 (docs/references.md: Thompson's construction and Pike's
machine with leftmost-first priorities); docs/design.md section 5 and
Tran-Thien 2024 (docs/references.md) for the canonical filter.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import regex

from grammask.canonical._region_scan import ScanTable
from grammask.canonical.pretokenizer import _bracket_end

_END = -1
"""The class id of the end of the text in the closure."""

_TABLE_STATES = 4096
"""Most automaton states ``table`` builds before giving up (the real patterns need a few dozen)."""

_PREFIX_LOOKUPS = 24
"""How many shorter prefixes ``run`` looks up in its memo to resume from (a token's length)."""


class Unsupported(Exception):
    """The pattern uses syntax the machine does not model (the filter then scans as before)."""


class _Parser:
    """Recursive descent over the pattern subset; builds ("set" | "cat" | "alt" | "rep" | ...) nodes."""

    def __init__(self, pattern: str, member_mask, newline_bit: int):
        self.pattern = pattern
        self.index = 0
        self.member_mask = member_mask
        self.newline_bit = newline_bit

    def parse(self):
        node = self._alternation(False)
        if self.index != len(self.pattern):
            raise Unsupported(f"unbalanced ')' at {self.index}")
        return node

    def _alternation(self, insensitive: bool):
        branches = [self._sequence(insensitive)]
        while self._peek() == "|":
            self.index += 1
            branches.append(self._sequence(insensitive))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _peek(self) -> str:
        return self.pattern[self.index] if self.index < len(self.pattern) else ""

    def _sequence(self, insensitive: bool):
        items: list = []
        while self._peek() not in ("", "|", ")"):
            if self._peek() == "$":
                self.index += 1
                last = items[-1] if items else None
                if not (last and last[0] == "possessive" and last[1][1] & self.newline_bit):
                    raise Unsupported("'$' not right after a possessive atom that takes a newline")
                items.append(("end",))
                continue
            items.append(self._quantified(self._atom(insensitive)))
        return ("cat", items)

    def _atom(self, insensitive: bool):
        pattern, index = self.pattern, self.index
        char = pattern[index]
        if char == "(":
            for prefix, flag in (("(?:", insensitive), ("(?i:", True), ("(?!", None), ("(?=", None)):
                if pattern.startswith(prefix, index):
                    break
            else:
                if pattern.startswith("(?", index):
                    raise Unsupported(f"group {pattern[index:index + 4]!r}")
                prefix, flag = "(", insensitive
            self.index = index + len(prefix)
            inner = self._alternation(insensitive if flag is None else flag)
            if self._peek() != ")":
                raise Unsupported("unclosed group")
            self.index += 1
            if flag is not None:
                return inner
            atom = _single_set(inner)
            if atom is None:
                raise Unsupported("a look-ahead of more than one character")
            return ("not" if prefix == "(?!" else "is", atom[1])
        if char == "[":
            end = _bracket_end(pattern, index)
        elif char == "\\":
            end = index + 2
            escaped = pattern[index + 1:end]
            if escaped in "pP" and pattern[end:end + 1] == "{":
                end = pattern.index("}", end) + 1
            elif escaped.isdigit() or escaped in "AbBGzZ":
                raise Unsupported(f"escape \\{escaped}")
        elif char in "^$?*+{":
            raise Unsupported(f"{char!r} at {index}")
        else:
            end = index + 1
        self.index = end
        return ("set", self.member_mask(pattern[index:end], insensitive))

    def _quantified(self, node):
        pattern = self.pattern
        char = self._peek()
        if char in ("?", "*", "+"):
            low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[char]
            self.index += 1
        elif char == "{":
            close = pattern.find("}", self.index)
            body = pattern[self.index + 1:close]
            parts = body.split(",")
            if close < 0 or len(parts) > 2 or not parts[0].isdigit() or not all(p.isdigit() or p == "" for p in parts):
                raise Unsupported(f"counted repetition {{{body}}}")
            low = int(parts[0])
            high = low if len(parts) == 1 else (int(parts[1]) if parts[1] else None)
            self.index = close + 1
        else:
            return node
        mode = self._peek()
        if mode in ("?", "+"):
            self.index += 1
        if mode == "+":
            if node[0] != "set":
                raise Unsupported("a possessive quantifier on more than one character")
            return ("possessive", node, low, high)
        return ("rep", node, low, high, mode != "?")


def _single_set(node):
    """The ("set", mask) a node reduces to (a one-item sequence or group), else None."""
    while node[0] == "cat" and len(node[1]) == 1:
        node = node[1][0]
    return node if node[0] == "set" else None


class PretokenMachine:
    """The compiled program of one pre-tokenizer pattern; see the module docstring."""

    def __init__(self, program: list, class_of, n_classes: int, surrogate_class: int):
        self.program = program
        self.class_of = np.ascontiguousarray(class_of, dtype=np.int16)  # as ``_region_scan`` reads it
        self.n_classes = n_classes
        self._threads_memo: dict = {}
        self.covering = self._covers(surrogate_class)

    def _covers(self, surrogate_class: int) -> bool:
        """Every text of one or more characters has a match at offset 0, ending at offset 1 or
        later (the pre-tokenizers cover every character): in ``table()``, no state reached
        from the start before the first match (no empty match at the start) lets every thread
        die unmatched, on a character or at the end of the text.  False without a table."""
        table = self.table()
        if table is None:
            return False
        _index, trans, matched, end_match = table
        classes = [k for k in range(self.n_classes) if k != surrogate_class]
        if any(matched[0, k] for k in classes):
            return False  # an empty match at offset 0
        pending = [int(trans[0, k]) for k in classes]
        seen = set(pending)
        while pending:
            state = pending.pop()
            if state < 0 or not end_match[state]:
                return False
            for k in classes:
                after = int(trans[state, k])
                if not matched[state, k] and after not in seen:
                    seen.add(after)
                    pending.append(after)
        return True

    @classmethod
    def build(cls, classes) -> Optional["PretokenMachine"]:
        """The machine of ``classes.pattern`` over ``classes`` (a ``CharClasses``), or None if unsupported."""
        representatives = classes.representatives
        masks: dict = {}

        def member_mask(atom: str, insensitive: bool) -> int:
            key = (atom, insensitive)
            if key not in masks:
                compiled = regex.compile(("(?i)" if insensitive else "") + (atom if atom != "." else "(?s:[^\\n])"))
                masks[key] = sum(1 << k for k, char in enumerate(representatives)
                                 if k != classes.surrogate_class and compiled.fullmatch(char))
            return masks[key]
        try:
            tree = _Parser(classes.pattern, member_mask, 1 << int(classes.class_of[ord("\n")])).parse()
        except (Unsupported, ValueError, regex.error):
            return None
        program: list = []
        _emit(tree, program)
        program.append(("match",))
        return cls(program, classes.class_of, classes.n_classes, classes.surrogate_class)

    def _closure(self, threads: tuple, class_id: int):
        """(char pcs in priority order, matched) of the threads' epsilon closure before ``class_id``."""
        program = self.program
        out: list = []
        visited: set = set()
        stack: list = []
        for start in threads:
            stack.append(start)
            while stack:
                pc = stack.pop()
                if pc in visited:
                    continue
                visited.add(pc)
                op = program[pc]
                kind = op[0]
                if kind == "char":
                    out.append(pc)
                elif kind == "split":
                    stack.append(op[2])
                    stack.append(op[1])
                elif kind == "jmp":
                    stack.append(op[1])
                elif kind == "match":
                    return out, True
                elif kind == "not":
                    if class_id == _END or not (op[1] >> class_id) & 1:
                        stack.append(pc + 1)
                elif kind == "is":
                    if class_id != _END and (op[1] >> class_id) & 1:
                        stack.append(pc + 1)
                elif kind == "end":
                    if class_id == _END:
                        stack.append(pc + 1)
        return out, False

    def table(self):
        """(index, trans, matched, end_match): the automaton of every thread tuple reachable from
        the start, for compiled scans (``_region_scan``); None past ``_TABLE_STATES`` states.

        ``index`` maps a thread tuple to its state (the start is 0); ``trans[s, k]`` is the
        state after reading class k (-1: every thread dead), ``matched[s, k]`` whether the
        closure before it reached the match, ``end_match[s]`` whether the closure at the end
        of the text did."""
        found = self.__dict__.get("_table")
        if found is not None or "_table" in self.__dict__:
            return found
        index = {(0,): 0}
        order = [(0,)]
        rows, matches, ends = [], [], []
        position = 0
        while position < len(order):
            threads = order[position]
            position += 1
            row, matched_row = [], []
            for class_id in range(self.n_classes):
                pcs, matched = self._closure(threads, class_id)
                after = self._step(pcs, class_id)
                if after and after not in index:
                    if len(order) >= _TABLE_STATES:
                        self._table = None
                        return None
                    index[after] = len(order)
                    order.append(after)
                row.append(index[after] if after else -1)
                matched_row.append(matched)
            rows.append(row)
            matches.append(matched_row)
            ends.append(self._closure(threads, _END)[1])
        self._table = found = (index, np.asarray(rows, dtype=np.int32),
                               np.asarray(matches, dtype=np.uint8), np.asarray(ends, dtype=np.uint8))
        return found

    def _table_rows(self):
        """``table()`` for ``run``: (thread tuple -> state, state -> thread tuple, the
        table as a ``_region_scan.ScanTable``), or None."""
        rows = self.__dict__.get("_rows")
        if rows is None and "_rows" not in self.__dict__:
            table = self.table()
            if table is not None:
                index, trans, matched, ends = table
                order = [None] * len(index)
                for threads, state in index.items():
                    order[state] = threads
                rows = (index, order, ScanTable(trans, matched, ends, self.class_of,
                                                np.zeros(0, dtype=np.int32)))
            self._rows = rows
        return rows

    def _step(self, pcs: list, class_id: int) -> tuple:
        program = self.program
        return tuple(pc + 1 for pc in pcs if (program[pc][1] >> class_id) & 1)

    def run(self, text: str):
        """(threads after ``text`` before their closure, end of the best match so far or None).

        With a table, one compiled walk (``_region_scan.ScanTable.run``); else the Pike
        machine, memoized per text and resumed after a memoized prefix."""
        rows = self._table_rows()
        if rows is not None:
            state, best = rows[2].run(text)
            return (rows[1][state] if state >= 0 else ()), (best if best >= 0 else None)
        memo = self._threads_memo
        found = memo.get(text)
        if found is not None:
            return found
        threads, best, start = (0,), None, 0
        for cut in range(len(text) - 1, max(0, len(text) - _PREFIX_LOOKUPS) - 1, -1):
            prefix = memo.get(text[:cut])  # a region extended by a token: resume after the region
            if prefix is not None:
                (threads, best), start = prefix, cut
                break
        class_of = self.class_of
        for offset in range(start, len(text)):
            if not threads:
                break
            class_id = int(class_of[ord(text[offset])])
            pcs, matched = self._closure(threads, class_id)
            if matched:
                best = offset
            threads = self._step(pcs, class_id)
        found = (threads, best)
        if len(self._threads_memo) >= 1 << 14:
            self._threads_memo.clear()
        self._threads_memo[text] = found
        return found

    def match_end(self, text: str) -> Optional[int]:
        """End of the pattern's match at offset 0 of ``text`` (``regex.match(...).end()``), None if none."""
        threads, best = self.run(text)
        if threads:
            _pcs, matched = self._closure(threads, _END)
            if matched:
                return len(text)
        return best

    def core(self, region: str) -> Optional[tuple]:
        """(threads, e - len(region), region[e:]) after ``region``, or None (see the module docstring)."""
        threads, best = self.run(region)
        if not threads or best == 0:
            return None
        if best is None:
            # no match yet: with a covering pattern the match ends at or past the region's end
            if not self.covering:
                return None
            best = len(region)
        return threads, best - len(region), region[best:]

    def signature(self, region: str, cuts: tuple) -> Optional[tuple]:
        """A key equal for regions (with their token cuts) that give every token the same verdict."""
        core = self.core(region)
        if core is None:
            return None
        if not cuts:
            return core, (), True
        n_region = len(region)
        best = n_region + core[1]
        late = []
        early_hold = True
        for offset, verdict in cuts:  # a plain loop: the canonical lookahead asks this per candidate
            if offset >= best:
                late.append((offset - n_region, verdict))
            elif verdict is not True:
                early_hold = False
        return core, tuple(late), early_hold


def _emit(node, program: list) -> None:
    """Append the Thompson code of ``node`` to ``program`` (falls through to the next pc)."""
    kind = node[0]
    if kind == "set":
        program.append(("char", node[1]))
    elif kind == "cat":
        for item in node[1]:
            _emit(item, program)
    elif kind == "alt":
        jumps = []
        for branch in node[1][:-1]:
            split = len(program)
            program.append(None)
            _emit(branch, program)
            jumps.append(len(program))
            program.append(None)
            program[split] = ("split", split + 1, len(program))
        _emit(node[1][-1], program)
        for jump in jumps:
            program[jump] = ("jmp", len(program))
    elif kind in ("not", "is"):
        program.append((kind, node[1]))
    elif kind == "end":
        program.append(("end",))
    elif kind == "possessive":
        _, atom, low, high = node
        mask = atom[1]
        if high is None:
            _emit(("cat", [("rep", atom, low, None, True), ("not", mask)]), program)
        elif low == high:
            _emit(("rep", atom, low, low, True), program)
        else:
            _emit(("alt", [("rep", atom, high, high, True),
                           ("cat", [("rep", atom, low, high - 1, True), ("not", mask)])]), program)
    else:  # "rep"
        _, body, low, high, greedy = node
        for _ in range(low):
            _emit(body, program)
        if high is None:
            loop = len(program)
            program.append(None)
            _emit(body, program)
            program.append(("jmp", loop))
            program[loop] = ("split", loop + 1, len(program)) if greedy else ("split", len(program), loop + 1)
            return
        splits = []
        for _ in range(high - low):
            splits.append(len(program))
            program.append(None)
            _emit(body, program)
        for split in splits:
            program[split] = ("split", split + 1, len(program)) if greedy else ("split", len(program), split + 1)
