"""Shared machinery of the KBNF and GBNF parsers: a scanner and an iterative
expression builder.

The scanner walks the grammar text (a ``str``; offsets are code points, the
unit of ``Span``) and turns problems into ``GrammarSyntaxError`` with line,
column, a caret excerpt and what was expected.

``ExpressionBuilder`` assembles the right-hand side of one rule without
recursion: it keeps an explicit stack of open groups (``(``, and KBNF's
``[`` and ``{``, and the argument lists of built-ins ``name!(a, b)``), each
holding its finished alternatives and the sequence being read; a built-in's
frame also holds its finished arguments, and closing it hands the name and
the arguments to the ``expand`` callback (``builtins.BuiltinExpander``).
Postfix operators wrap the last item of the current sequence.
The stack depth is the nesting depth, checked against ``Config.max_nesting``,
so a 10,000-deep expression raises ``LimitExceeded`` instead of overflowing
Python's stack.

Invariants of the nodes built: every node has a span; a sequence of one item
is that item; an alternation of one alternative is that alternative; an empty
sequence (``Sequence(())``) is the empty string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from grammask.config import Config
from grammask.errors import GrammarSyntaxError, InvalidArgumentType, LimitExceeded
from grammask.grammar.ast import Alternation, Node, Repeat, Sequence
from grammask.source import Source, Span

GROUP_CLOSERS = {"group": ")", "option": "]", "repeat": "}", "builtin": ")"}


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Scanner:
    """A position in a grammar's text, with error reporting."""

    def __init__(self, source: Source):
        self.source = source
        self.text = source.text
        self.pos = 0
        if not isinstance(self.text, str):
            raise InvalidArgumentType(f"grammar text must be a str, got {type(self.text).__name__}")
        surrogate = _LONE_SURROGATE.search(self.text)
        if surrogate is not None:
            printable = Source(_LONE_SURROGATE.sub("\ufffd", self.text), source.name)
            raise syntax_error(printable, "a lone surrogate code point (U+%04X) has no UTF-8 "
                               "encoding" % ord(surrogate.group()),
                               Span(surrogate.start(), surrogate.start() + 1))

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    def startswith(self, prefix: str) -> bool:
        return self.text.startswith(prefix, self.pos)

    def error(self, message: str, start: int | None = None, end: int | None = None) -> GrammarSyntaxError:
        start = self.pos if start is None else start
        end = start + 1 if end is None else max(end, start + 1)
        return syntax_error(self.source, message, Span(start, end))

    def expect(self, token: str, what: str) -> None:
        if not self.startswith(token):
            raise self.error(f"expected {what}, found {describe(self.peek())}")
        self.pos += len(token)

    def read_hex(self, n_digits: int, escape_start: int) -> int:
        digits = self.text[self.pos:self.pos + n_digits]
        if len(digits) != n_digits or any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise self.error(f"expected {n_digits} hexadecimal digits in escape", escape_start, self.pos + n_digits)
        self.pos += n_digits
        return int(digits, 16)

    def read_braced_hex(self, escape_start: int) -> int:
        close = self.text.find("}", self.pos)
        digits = self.text[self.pos + 1:close] if close > 0 else ""
        if not digits or len(digits) > 6 or any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise self.error("expected 1 to 6 hexadecimal digits inside '{...}' in escape", escape_start)
        self.pos = close + 1
        return int(digits, 16)

    def read_int(self, what: str) -> int:
        start = self.pos
        while self.peek().isdigit() and self.peek().isascii():
            self.pos += 1
        if start == self.pos:
            raise self.error(f"expected {what}, found {describe(self.peek())}")
        return int(self.text[start:self.pos])


def describe(char: str) -> str:
    """How a found character is named in messages."""
    if not char:
        return "end of input"
    if char == "\n":
        return "end of line"
    return repr(char)


def syntax_error(source: Source | None, message: str, span: Span | None) -> GrammarSyntaxError:
    if source is None or span is None:
        return GrammarSyntaxError(message, 0, 0, "")
    line, column = source.line_column(span.start)
    return GrammarSyntaxError(message, line, column, source.excerpt(span))


def checked_code_point(scanner: Scanner, value: int, escape_start: int) -> str:
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise scanner.error(f"escape names U+{value:04X}, which is not a Unicode scalar value",
                            escape_start, scanner.pos)
    return chr(value)


@dataclass
class _Frame:
    kind: str
    open_pos: int
    alternatives: list[Node] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
    seq_start: int = 0
    name: str = ""
    name_start: int = 0
    arguments: list[Node] = field(default_factory=list)


class ExpressionBuilder:
    """Builds one rule body from a flat stream of items and operators."""

    def __init__(self, scanner: Scanner, config: Config, body_start: int, expand=None):
        self.scanner = scanner
        self.config = config
        self.expand = expand
        self.frames = [_Frame("rule", body_start, seq_start=body_start)]

    @property
    def depth(self) -> int:
        return len(self.frames) - 1

    def open_line_column(self) -> str:
        """'line L, column C' of the innermost open group."""
        line, column = self.scanner.source.line_column(self.frames[-1].open_pos)
        return f"{line}, column {column}"

    def add(self, node: Node) -> None:
        self.frames[-1].items.append(node)

    def open(self, kind: str) -> None:
        position = self.scanner.pos
        if self.depth + 1 > self.config.max_nesting:
            raise LimitExceeded("max_nesting", self.depth + 1, self.config.max_nesting,
                                f"group nesting at line {self.scanner.source.line_column(position)[0]}")
        self.frames.append(_Frame(kind, position, seq_start=position + 1))

    def open_builtin(self, name: str, name_start: int) -> None:
        """Open the argument list of ``name!(``; the scanner is at ``(``."""
        self.open("builtin")
        self.frames[-1].name = name
        self.frames[-1].name_start = name_start

    def comma(self) -> None:
        """End one argument of the innermost built-in; the scanner is at ``,``."""
        frame = self.frames[-1]
        if frame.kind != "builtin":
            inside = " inside a group" if any(f.kind == "builtin" for f in self.frames) else ""
            raise self.scanner.error(f"unexpected ','{inside}: a comma only separates the arguments "
                                     f"of a built-in such as delimited_list!(item, ',')")
        frame.arguments.append(self._argument(frame, self.scanner.pos))
        frame.alternatives, frame.items = [], []
        frame.seq_start = self.scanner.pos + 1

    def _argument(self, frame: _Frame, end: int) -> Node:
        if not frame.items and not frame.alternatives:
            raise self.scanner.error(f"expected an argument of '{frame.name}!' before "
                                     f"{describe(self.scanner.peek())}")
        return self._alternation(frame, end)

    def bar(self) -> None:
        frame = self.frames[-1]
        frame.alternatives.append(self._sequence(frame, self.scanner.pos))
        frame.items = []
        frame.seq_start = self.scanner.pos + 1

    def postfix(self, low: int, high: int | None, end: int, operator: str) -> None:
        items = self.frames[-1].items
        if not items:
            raise self.scanner.error(f"expected an expression before '{operator}'", end - len(operator), end)
        if high is not None and low > high:
            raise self.scanner.error(f"repetition minimum {low} is above its maximum {high}",
                                     end - len(operator), end)
        largest = low if high is None else high
        if largest > self.config.max_repetition:
            raise LimitExceeded("max_repetition", largest, self.config.max_repetition,
                                f"repetition at line {self.scanner.source.line_column(end)[0]}")
        item = items.pop()
        start = item.span.start if item.span is not None else end - len(operator)
        items.append(Repeat(item, low, high, Span(start, end)))

    def close(self, closer: str) -> None:
        frame = self.frames[-1]
        if frame.kind == "rule" or GROUP_CLOSERS[frame.kind] != closer:
            expected = "';' or end of rule" if frame.kind == "rule" else f"'{GROUP_CLOSERS[frame.kind]}'"
            raise self.scanner.error(f"unbalanced '{closer}': expected {expected}")
        end = self.scanner.pos + 1
        if frame.kind == "builtin":
            if frame.items or frame.alternatives or frame.arguments:
                frame.arguments.append(self._argument(frame, self.scanner.pos))
            self.frames.pop()
            self.add(self.expand(frame.name, tuple(frame.arguments), Span(frame.name_start, end)))
            return
        body = self._alternation(frame, self.scanner.pos)
        span = Span(frame.open_pos, end)
        if frame.kind == "option":
            node: Node = Repeat(body, 0, 1, span)
        elif frame.kind == "repeat":
            node = Repeat(body, 0, None, span)
        else:
            node = _with_span(body, span)
        self.frames.pop()
        self.add(node)

    def finish(self, end: int) -> Node:
        if self.depth:
            frame = self.frames[-1]
            raise self.scanner.error(
                f"expected '{GROUP_CLOSERS[frame.kind]}' to close the group opened at line "
                f"{self.open_line_column()}, found {describe(self.scanner.peek())}")
        return self._alternation(self.frames[0], end)

    def _sequence(self, frame: _Frame, end: int) -> Node:
        items = frame.items
        if len(items) == 1:
            return items[0]
        if items and items[0].span is not None and items[-1].span is not None:
            span = Span(items[0].span.start, items[-1].span.end)
        else:
            span = Span(frame.seq_start, max(frame.seq_start, end))
        return Sequence(tuple(items), span)

    def _alternation(self, frame: _Frame, end: int) -> Node:
        alternatives = frame.alternatives + [self._sequence(frame, end)]
        if len(alternatives) == 1:
            return alternatives[0]
        return Alternation(tuple(alternatives), Span(frame.open_pos, end))


def _with_span(node: Node, span: Span) -> Node:
    """The same node with the span of its enclosing parentheses."""
    fields = {name: getattr(node, name) for name in node.__dataclass_fields__}
    fields["span"] = span
    return type(node)(**fields)
