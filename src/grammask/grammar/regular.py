"""Normalization pass: fold regular repetitions into one regex terminal.

``fold_regular_repetitions`` replaces every maximal *regular* subtree of a rule
body that contains a repetition by a single ``Regex`` node of the same
language.  A subtree is regular when it holds only literals, classes, ``.``,
sequences, alternations and repetitions (no rule reference, regex or
substring terminal).  Example: GBNF ``[1-9] [0-9]{0,15}`` becomes the one DFA
terminal ``#"[1-9][0-9]{0,15}"`` instead of sixteen helper rules, and
``[0-9]+`` stops being a left-recursive rule the Earley core must complete at
every digit.  Adjacent regex terminals of a sequence are joined into one
the same way, here before their DFAs are built, and by
``join_adjacent_regexes`` (the last pass of ``normalize``) where nullable
elimination made them adjacent.

Why it is safe: the Earley core matches a DFA terminal byte by byte and may
both complete it at any accepting state and continue it, so a DFA terminal
is exactly its language inside the grammar (no greedy-lexeme effect).  Code
points map to the same UTF-8 bytes in both forms.

Limits: a folded subtree whose DFA would exceed ``FOLD_MAX_STATES`` /
``FOLD_MAX_BYTES`` (or the Config limits, or that the regex engine refuses)
is left as grammar rules.  Literals that are not UTF-8 and empty classes are never folded.

Data layout: iterative post-order over the AST, one frame per open group
holding its children's rebuilt nodes and ``(regular, has_repeat)`` flags;
patterns (Rust regex syntax) are built only for the subtrees being folded.
"""

from __future__ import annotations

from typing import Optional

from grammask.grammar.ast import (
    Alternation,
    AnyChar,
    CharClass,
    Literal,
    Node,
    Regex,
    Repeat,
    Sequence,
)
from grammask.grammar.terminal_keys import TerminalCompiler, class_pattern, class_ranges, regex_escape


FOLD_MAX_STATES = 4096
FOLD_MAX_BYTES = 1 << 20
"""Budget of a speculative fold (also capped by the Config limits): a DFA that
would be larger is not built, and the subtree stays grammar rules.  Small
enough that a refused fold costs milliseconds, not the seconds a full
``max_dfa_bytes`` attempt can take on an exponential determinization."""

ATOM, QUANTIFIED, CONCATENATION, ALTERNATION = range(4)
"""Binding levels of a pattern: what may follow it without a group."""


def _children(node: Node) -> tuple:
    return (node.item,) if node.__class__ is Repeat else node.items


def _leaf_regular(node: Node) -> bool:
    """A literal that is UTF-8 or a non-empty class (regex-expressible)."""
    kind = node.__class__
    if kind is Literal:
        value = node.value
        if value.isascii():
            return True
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    if kind is CharClass or kind is AnyChar:
        return bool(class_ranges(node))
    return False


def fold_regular_repetitions(body: Node, compiler: TerminalCompiler) -> Node:
    """Pre: a rule body flattened by precedence.  Post: the same language;
    every maximal regular subtree containing a Repeat whose DFA fits the
    budget is one ``Regex`` node (kind ``regex``).

    One iterative post-order computes (regular, has_repeat) per node, with
    one frame per open group: its children, their results so far, its own
    flags so far, the flags of its group children (a leaf is regular or
    not and holds no repetition, so leaf children are taken inline and only
    group children can be folded) and whether a child was rebuilt (if none
    was, nothing folded and nothing joined, the group is reused as it is);
    a pattern is only built for a subtree that is about to be folded."""
    if body.__class__ not in _GROUPS:
        return body   # a leaf holds no repetition
    frames: list[tuple[Node, tuple, list[Node], list]] = [
        (body, _children(body), [], [True, body.__class__ is Repeat, [], False])]
    while True:
        current, children, results, state = frames[-1]
        index = len(results)
        regular = state[0]
        while index < len(children):
            child = children[index]
            if child.__class__ in _GROUPS:
                break
            results.append(child)
            if regular and not _leaf_regular(child):
                regular = False
            index += 1
        state[0] = regular
        if index < len(children):
            frames.append((child, _children(child), [], [True, child.__class__ is Repeat, [], False]))
            continue
        frames.pop()
        regular, has_repeat, groups, changed = state
        if regular:
            rebuilt = current
        else:
            folded = results
            for position, flag in groups:
                if flag[0] and flag[1]:
                    node = _fold(results[position], flag, compiler)
                    if node is not results[position]:
                        if folded is results:
                            folded = list(results)
                        folded[position] = node
                        changed = True
            if current.__class__ is Sequence:
                joined = _join_regex_nodes(folded, compiler)
                if joined is not folded:
                    folded, changed = joined, True
                if len(folded) == 1:
                    changed = True
            rebuilt = _rebuild(current, folded) if changed else current
            if len(folded) == 1 and current.__class__ is Sequence:
                rebuilt = folded[0]
        if not frames:
            return _fold(rebuilt, (regular, has_repeat), compiler)
        parent = frames[-1]
        parent[3][2].append((len(parent[2]), (regular, has_repeat)))
        parent[2].append(rebuilt)
        if not regular:
            parent[3][0] = False
        if has_repeat:
            parent[3][1] = True
        if rebuilt is not current:
            parent[3][3] = True


_GROUPS = frozenset((Sequence, Alternation, Repeat))


def _fold(node: Node, flag: tuple[bool, bool], compiler: TerminalCompiler) -> Node:
    """``node`` as one Regex when it is regular, repeats and its DFA fits."""
    regular, has_repeat = flag
    if not (regular and has_repeat):
        return node
    pattern = regular_pattern(node)
    if compiler.try_dfa(("regex", pattern, "regex", False), FOLD_MAX_STATES, FOLD_MAX_BYTES) is None:
        return node
    return Regex(pattern, "regex", False, node.span)


def join_adjacent_regexes(flat, compiler: TerminalCompiler) -> None:
    """Pre: flat productions.  Post: no two plain regex or class terminals
    with the same case flag are adjacent in a production where their concatenation's
    DFA fits the fold budget (``#"A" #"B"`` became ``#"(?:A)(?:B)"``).

    Why: a terminal that may end after a byte or two and is followed by a
    wide one (a JSON Schema key that must differ from the listed names,
    then any string body) ends inside almost every token, so each of its
    states has an exit trie as large as the vocabulary's (``exit_trie.pyx``);
    one DFA ends only where the whole run ends."""
    for name, productions in flat.rules.items():
        for index, production in enumerate(productions):
            if len(production) > 1 and _has_adjacent_pair(production):
                productions[index] = _joined(production, compiler)


def _join_regex_nodes(items: list, compiler: TerminalCompiler) -> list:
    """``join_adjacent_regexes`` on a sequence's items, before any of their
    DFAs is built (the pass after normalization catches what nullable
    elimination makes adjacent): runs of plain ``Regex`` items become one
    ``Regex`` where ``_concatenation`` allows; other items are kept as they are."""
    previous = False
    for item in items:
        current = item.__class__ is Regex
        if current and previous:
            break
        previous = current
    else:
        return items
    nodes: dict[tuple, Regex] = {}
    joined: list = []
    last = None   # (pattern, case-insensitive) of joined[-1] when it is a plain Regex
    for item in items:
        current = (item.pattern, item.case_insensitive) \
            if item.__class__ is Regex and item.kind == "regex" else None
        if last is not None and current is not None:
            key = _concatenation(last, current, compiler)
            if key is not None:
                node = nodes.get(key)
                if node is None:
                    node = nodes[key] = Regex(key[1], "regex", key[3])
                joined[-1] = node
                last = key[1], key[3]
                continue
        joined.append(item)
        last = current
    return joined


def _has_adjacent_pair(production) -> bool:
    previous = False
    for symbol in production:
        current = symbol.__class__ is tuple and (symbol[0] == "class" or symbol[0] == "regex")
        if current and previous:
            return True
        previous = current
    return False


def _joined(production: tuple, compiler: TerminalCompiler) -> tuple:
    joined: list = []
    previous = None   # _as_plain_regex(joined[-1])
    for symbol in production:
        current = _as_plain_regex(symbol)
        if previous is not None and current is not None:
            key = _concatenation(previous, current, compiler)
            if key is not None:
                joined[-1] = key
                previous = key[1], key[3]
                continue
        joined.append(symbol)
        previous = current
    return tuple(joined)


def _concatenation(first: tuple[str, bool], second: tuple[str, bool],
                   compiler: TerminalCompiler) -> tuple | None:
    """The terminal key of ``first`` then ``second`` ((pattern,
    case-insensitive) pairs) when their flags agree and its DFA fits the fold
    budget, else None; remembered per pair in ``compiler.joins`` (a JSON
    object's members repeat the same colon-and-value pair thousands of times)."""
    if first[1] != second[1]:
        return None
    pair = (first[0], second[0], first[1])
    joins = compiler.joins
    if pair in joins:
        return joins[pair]
    key = ("regex", f"(?:{first[0]})(?:{second[0]})", "regex", first[1])
    result = joins[pair] = key if compiler.try_dfa(key, FOLD_MAX_STATES, FOLD_MAX_BYTES) is not None \
        else None
    return result


def _as_plain_regex(symbol) -> tuple[str, bool] | None:
    """(pattern, case-insensitive) of a plain regex or class terminal, else None."""
    if symbol.__class__ is tuple:
        if symbol[0] == "regex" and symbol[2] == "regex":
            return symbol[1], symbol[3]
        if symbol[0] == "class":
            return class_pattern(symbol[1]), False
    return None


def regular_pattern(node: Node) -> str:
    """The Rust regex of a regular subtree (iterative post-order), with
    groups only where binding requires them."""
    stack: list[tuple[Node, bool]] = [(node, False)]
    parts: list[tuple[str, int]] = []
    while stack:
        current, children_done = stack.pop()
        if isinstance(current, Literal):
            text = current.value.decode("utf-8")
            parts.append((regex_escape(text), ATOM if len(text) == 1 else CONCATENATION))
        elif isinstance(current, (CharClass, AnyChar)):
            parts.append((class_pattern(class_ranges(current)), ATOM))
        elif not children_done:
            stack.append((current, True))
            stack.extend((child, False) for child in reversed(_children(current)))
        else:
            n_children = len(_children(current))
            children = parts[len(parts) - n_children:]
            del parts[len(parts) - n_children:]
            if isinstance(current, Repeat):
                parts.append((_bound(children[0], ATOM) + _quantifier(current.min, current.max), QUANTIFIED))
            elif isinstance(current, Sequence):
                parts.append(("".join(_bound(child, CONCATENATION) for child in children), CONCATENATION))
            else:
                parts.append(("|".join(pattern for pattern, _ in children), ALTERNATION))
    return parts[0][0]


def _bound(part: tuple[str, int], level: int) -> str:
    """The pattern, grouped unless it binds at least as tightly as ``level``."""
    pattern, binding = part
    return pattern if binding <= level else f"(?:{pattern})"


def _quantifier(low: int, high: Optional[int]) -> str:
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    if high is None:
        return f"{{{low},}}"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _rebuild(node: Node, children: list[Node]) -> Node:
    if isinstance(node, Repeat):
        return node if children[0] is node.item else Repeat(children[0], node.min, node.max, node.span)
    if len(children) == len(node.items) and all(child is item for child, item in zip(children, node.items)):
        return node
    return type(node)(tuple(children), node.span)
