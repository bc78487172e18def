"""Parser of llama.cpp's GBNF dialect into a ``GrammarAST``.

Syntax (llama.cpp ``grammars/README.md``; docs/design.md section 3)::

    grammar    := (rule newline)*
    rule       := name '::=' alternates
    alternates := sequence ('|' sequence)*      (empty sequences allowed)
    sequence   := (postfixed)*
    postfixed  := primary ('?' | '*' | '+' | '{m}' | '{m,}' | '{m,n}')*
    primary    := name | '"' chars '"' | '[' '^'? (char ('-' char)?)* ']' | '.'
                | '(' alternates ')' | builtin
    builtin    := name '!' ('(' alternates (',' alternates)* ')')?
                                                (builtins.py; integers are bare digits)
    char       := any code point, or an escape \\xHH \\uHHHH \\UHHHHHHHH \\t \\r \\n \\\\ \\" \\[ \\] \\-
    comment    := '#' to end of line

Names are runs of ``[A-Za-z0-9_-]``.  A rule ends at the end of its line,
except inside parentheses and right after ``::=`` or ``|``, where newlines are
spaces (llama.cpp's rule).  Literals and classes are over Unicode code points:
``"\\xff"`` is U+00FF (two UTF-8 bytes), as in llama.cpp.  Left recursion is
allowed (llama.cpp refuses it).  Built-ins (``except!``, ``text_until!``,
...) are grammask's extension, shared with KBNF through
``builtins.BuiltinExpander``; inside their parentheses newlines are spaces.

Built without recursion on ``ExpressionBuilder``; repetition bounds are
checked against ``Config.max_repetition``.  A rule whose body is only names and
plain literals up to the end of its line is read by two regex matches
(``SIMPLE_RULE``, ``_simple_body``) into the same nodes.
"""

from __future__ import annotations

import re

from grammask.config import Config
from grammask.grammar.ast import AnyChar, CharClass, GrammarAST, Literal, Rule, RuleRef, Sequence
from grammask.grammar.builtins import BuiltinExpander
from grammask.grammar.syntax import ExpressionBuilder, Scanner, checked_code_point, describe
from grammask.source import Source, Span

SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-"}


def is_word_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "_-")


def parse_gbnf(text: str, start: str = "root", config: Config | None = None,
               name: str = "<gbnf>") -> GrammarAST:
    """Parse GBNF text into a GrammarAST (syntax only; see validate.py)."""
    config = config or Config()
    source = Source(text, name)
    scanner = Scanner(source)
    expander = BuiltinExpander(source, config)
    rules: list[Rule] = []
    _skip_space(scanner, newlines=True)
    while not scanner.at_end():
        rule_start = scanner.pos
        simple = SIMPLE_RULE.match(scanner.text, rule_start)
        if simple is not None:
            scanner.pos = simple.end()
            body = _simple_body(scanner)
            if body is not None:
                rules.append(Rule(simple.group(1), body, Span(rule_start, scanner.pos)))
                _skip_space(scanner, newlines=True)
                continue
            scanner.pos = rule_start
        rule_name = _read_word(scanner)
        if not rule_name:
            raise scanner.error(f"expected a rule name, found {describe(scanner.peek())}")
        _skip_space(scanner, newlines=False)
        if not scanner.startswith("::="):
            raise scanner.error(f"expected '::=' after rule name '{rule_name}', found {describe(scanner.peek())}")
        scanner.pos += 3
        _skip_space(scanner, newlines=True)
        expander.rule_name = rule_name
        body = _parse_body(scanner, config, expander)
        rules.append(Rule(rule_name, body, Span(rule_start, scanner.pos)))
        _skip_space(scanner, newlines=True)
    rules, references = expander.finish(rules)
    return GrammarAST(tuple(rules), start, source, references)


def _parse_body(scanner: Scanner, config: Config, expander: BuiltinExpander):
    simple = _simple_body(scanner)
    if simple is not None:
        return simple
    builder = ExpressionBuilder(scanner, config, scanner.pos, expander)
    while True:
        _skip_space(scanner, newlines=builder.depth > 0)
        char = scanner.peek()
        position = scanner.pos
        if not char or (char in "\r\n" and builder.depth == 0):
            return builder.finish(position)
        if char == '"':
            builder.add(Literal(_read_literal(scanner).encode("utf-8"), Span(position, scanner.pos)))
        elif char == "[":
            builder.add(_read_class(scanner))
        elif char == ".":
            scanner.pos += 1
            builder.add(AnyChar(Span(position, scanner.pos)))
        elif is_word_char(char):
            word = _read_word(scanner)
            if scanner.peek() == "!":
                expander.read(scanner, builder, word, position, lambda: _skip_space(scanner, newlines=False))
                continue
            _skip_space(scanner, newlines=False)
            if scanner.startswith("::="):
                if builder.depth:
                    raise scanner.error(f"expected ')' to close the group opened at line "
                                        f"{builder.open_line_column()}, found the definition of '{word}'",
                                        position, position + len(word))
                raise scanner.error(f"expected the end of the previous rule before the definition of "
                                    f"'{word}': a rule ends at the end of its line", position,
                                    position + len(word))
            builder.add(RuleRef(word, Span(position, position + len(word))))
        elif char == "(":
            builder.open("group")
            scanner.pos += 1
        elif char == ")":
            builder.close(")")
            scanner.pos += 1
        elif char == "|":
            builder.bar()
            scanner.pos += 1
            _skip_space(scanner, newlines=True)
        elif char == ",":
            builder.comma()
            scanner.pos += 1
        elif char in "?*+":
            scanner.pos += 1
            low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[char]
            builder.postfix(low, high, scanner.pos, char)
        elif char == "{":
            low, high = _read_braces(scanner)
            builder.postfix(low, high, scanner.pos, scanner.text[position:scanner.pos])
        else:
            raise scanner.error(f"expected a name, a string, '[', '.', '(', '|', an operator or the end of "
                                f"the line, found {describe(char)}")


def _simple_body(scanner: Scanner):
    """The body when it is one sequence of names and plain literals ending
    at the end of its line (``r1``, ``"a" r2 "b"``), else None: the nodes
    ``ExpressionBuilder`` would build, without its per-item bookkeeping (a
    chain of 20,000 unit rules is parsed in a regex match per rule)."""
    match = SIMPLE_BODY.match(scanner.text, scanner.pos)
    if match is None:
        return None
    items = []
    for item in SIMPLE_ITEM.finditer(scanner.text, scanner.pos, match.end(1)):
        if item.group(1) is not None:
            items.append(Literal(item.group(1).encode("utf-8"), Span(item.start(), item.end())))
        else:
            items.append(RuleRef(item.group(), Span(item.start(), item.end())))
    scanner.pos = match.end()
    if len(items) == 1:
        return items[0]
    return Sequence(tuple(items), Span(items[0].span.start, items[-1].span.end))


def _read_braces(scanner: Scanner) -> tuple[int, int | None]:
    scanner.pos += 1
    _skip_space(scanner, newlines=False)
    low = scanner.read_int("a repetition count")
    _skip_space(scanner, newlines=False)
    high: int | None = low
    if scanner.peek() == ",":
        scanner.pos += 1
        _skip_space(scanner, newlines=False)
        high = scanner.read_int("a repetition count") if scanner.peek().isdigit() else None
        _skip_space(scanner, newlines=False)
    scanner.expect("}", "'}' to close the repetition count")
    return low, high


def _read_char(scanner: Scanner) -> str:
    """One code point of a literal or class, escapes decoded."""
    char = scanner.peek()
    if char != "\\":
        scanner.pos += 1
        return char
    escape_start = scanner.pos
    escaped = scanner.peek(1)
    scanner.pos += 2
    if escaped in SIMPLE_ESCAPES and escaped:
        return SIMPLE_ESCAPES[escaped]
    if escaped == "x":
        return checked_code_point(scanner, scanner.read_hex(2, escape_start), escape_start)
    if escaped == "u":
        return checked_code_point(scanner, scanner.read_hex(4, escape_start), escape_start)
    if escaped == "U":
        return checked_code_point(scanner, scanner.read_hex(8, escape_start), escape_start)
    raise scanner.error(f"unknown escape '\\{escaped}': expected one of \\xHH \\uHHHH \\UHHHHHHHH "
                        f"\\t \\r \\n \\\\ \\\" \\[ \\]", escape_start, scanner.pos)


def _read_word(scanner: Scanner) -> str:
    match = WORD.match(scanner.text, scanner.pos)
    if match is None:
        return ""
    scanner.pos = match.end()
    return match.group()


def _read_literal(scanner: Scanner) -> str:
    plain = PLAIN_LITERAL.match(scanner.text, scanner.pos)
    if plain is not None:
        scanner.pos = plain.end()
        return plain.group(1)
    start = scanner.pos
    scanner.pos += 1
    out: list[str] = []
    while scanner.peek() != '"':
        if not scanner.peek() or scanner.peek() in "\r\n":
            raise scanner.error("unterminated string: expected a closing '\"'", start, scanner.pos)
        out.append(_read_char(scanner))
    scanner.pos += 1
    return "".join(out)


def _read_class(scanner: Scanner) -> CharClass:
    start = scanner.pos
    scanner.pos += 1
    negated = scanner.peek() == "^"
    if negated:
        scanner.pos += 1
    ranges: list[tuple[int, int]] = []
    while scanner.peek() != "]":
        if not scanner.peek():
            raise scanner.error("unterminated character class: expected ']'", start, scanner.pos)
        first_pos = scanner.pos
        low = ord(_read_char(scanner))
        high = low
        if scanner.peek() == "-" and scanner.peek(1) not in ("]", ""):
            scanner.pos += 1
            high = ord(_read_char(scanner))
            if high < low:
                raise scanner.error(f"character range is out of order: U+{low:04X} > U+{high:04X}",
                                    first_pos, scanner.pos)
        ranges.append((low, high))
    scanner.pos += 1
    return CharClass(tuple(ranges), negated, Span(start, scanner.pos))


SPACE = re.compile(r"(?:[ \t]+|#[^\n]*)*")
SPACE_AND_NEWLINES = re.compile(r"(?:[ \t\r\n]+|#[^\n]*)*")
WORD = re.compile(r"[A-Za-z0-9_-]+")
PLAIN_LITERAL = re.compile(r'"([^"\\\r\n]*)"')
SIMPLE_ITEM = re.compile(r'"([^"\\\r\n]*)"|[A-Za-z0-9_-]+')
SIMPLE_RULE = re.compile(r"([A-Za-z0-9_-]+)(?:[ \t]+|#[^\n]*)*::=(?:[ \t\r\n]+|#[^\n]*)*")
"""A rule's name, ``::=`` and the space after it (what the general loop reads
before ``_parse_body``)."""
SIMPLE_BODY = re.compile(r'((?:[ \t]*(?:"[^"\\\r\n]*"|[A-Za-z0-9_-]+(?![A-Za-z0-9_-]|!)))+)'
                         r'(?:[ \t]+|#[^\n]*)*(?=[\r\n]|\Z)')
"""One or more names and plain literals (spaces between), then spaces and
comments to the end of the line: a name followed by ``!`` (a built-in), an operator or a
``::=`` (an error) makes it fail, and ``_parse_body`` reads the body in full."""


def _skip_space(scanner: Scanner, newlines: bool) -> None:
    """Skip spaces, tabs and # comments; also newlines when ``newlines``."""
    scanner.pos = (SPACE_AND_NEWLINES if newlines else SPACE).match(scanner.text, scanner.pos).end()
