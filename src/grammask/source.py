"""Source text of a grammar: spans, line/column lookup and caret excerpts.

A ``Span`` is a half-open range ``[start, end)`` of code-point offsets into
``Source.text``.  ``Source`` keeps the start offset of every line (sorted), so
``line_column(offset)`` is a binary search; lines and columns are 1-based.
``excerpt(span)`` draws the line with carets under the span, in the style of
regex-syntax's error printer::

    3 | value ::= "a" | [b-
      |                 ^^^
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open range of code-point offsets ``[start, end)`` in a Source."""

    start: int
    end: int


_NEWLINE = re.compile("\n")


class Source:
    """A grammar's text with a line index."""

    __slots__ = ("text", "name", "_line_starts")

    def __init__(self, text: str, name: str = "<grammar>"):
        self.text = text
        self.name = name
        self._line_starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a code-point offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return line_index + 1, offset - self._line_starts[line_index] + 1

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]

    def excerpt(self, span: Span) -> str:
        """The span's first line, numbered, with carets under the span."""
        line, column = self.line_column(span.start)
        text = self.line_text(line)
        width = max(1, min(span.end, span.start + len(text) - column + 1) - span.start)
        gutter = f"{line} | "
        pad = " " * (len(gutter) - 2) + "| "
        marker = "".join("\t" if ch == "\t" else " " for ch in text[: column - 1])
        return f"{gutter}{text}\n{pad}{marker}{'^' * width}"
