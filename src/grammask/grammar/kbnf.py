"""Parser of the KBNF dialect (compatible with kbnf) into a ``GrammarAST``.

Syntax (docs/design.md section 3)::

    grammar    := (rule)*
    rule       := name ('::=' | '=') expression ';'
    expression := sequence ('|' sequence)*
    sequence   := (postfixed)*                 (empty: the empty string)
    postfixed  := primary ('?' | '*' | '+')*
    primary    := name | string | regex | builtin | '(' expression ')'
                | '[' expression ']'           (option)
                | '{' expression '}'           (repetition, zero or more)
    builtin    := name '!' ('(' expression (',' expression)* ')')?
                                               (builtins.py; integers are bare digits)
    string     := '...' | "..."                with escapes \\n \\r \\t \\0 \\\\ \\' \\"
                                                \\xHH \\uHHHH \\u{H..} \\UHHHHHHHH
    regex      := '#' ('' | 'e' | 'ex' | 'substrs') string
    comment    := '(*' ... '*)'

Names are runs of ``[A-Za-z0-9_-]``.  Several rules with one name are
alternatives of that name.  Inside ``#"..."`` the escapes above are decoded
(as kbnf does) and any other backslash pair is kept for the regex engine, so
``#"\\d+"`` and ``#"\\\\d+"`` both mean the regex ``\\d+``.  Regex terminals
are anchored at both ends; ``#e`` ends at its first match, ``#ex`` matches
any string containing no match, ``#&`` (a grammask extension, what
``to_ebnf`` prints for the JSON Schema translator's intersections) matches
every one of its ``\0``-separated patterns, ``#-`` (also an extension)
matches its first ``\\u{1}``-separated segment (an intersection as for
``#&``) and none of the later patterns, ``#substrs`` any substring of its
text.
Built-ins (``except!``, ``any!``, ``text_until!``, ...) are expanded by
``builtins.BuiltinExpander``, shared with the GBNF parser; the ``!`` follows
the name directly, and white space may come before ``(``.

The parser is a loop over tokens feeding ``ExpressionBuilder`` (no
recursion), so nesting depth is bounded by ``Config.max_nesting`` only.
"""

from __future__ import annotations

import re

from grammask.config import Config
from grammask.grammar.ast import GrammarAST, Literal, Regex, Rule, RuleRef, Substrings
from grammask.grammar.builtins import BuiltinExpander
from grammask.grammar.syntax import ExpressionBuilder, Scanner, checked_code_point, describe
from grammask.source import Source, Span

REGEX_PREFIXES = (("#substrs", "substrings"), ("#ex", "complement"), ("#e", "early_end"),
                  ("#&", "intersection"), ("#-", "difference"), ("#!", "key_exclusion"),
                  ("#", "regex"))
SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def is_name_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "_-")


def parse_kbnf(text: str, start: str = "start", config: Config | None = None,
               name: str = "<kbnf>") -> GrammarAST:
    """Parse KBNF text into a GrammarAST (syntax only; see validate.py)."""
    config = config or Config()
    source = Source(text, name)
    scanner = Scanner(source)
    expander = BuiltinExpander(source, config)
    rules: list[Rule] = []
    _skip_trivia(scanner)
    while not scanner.at_end():
        rule_start = scanner.pos
        rule_name = _read_name(scanner)
        if not rule_name:
            raise scanner.error(f"expected a rule name, found {describe(scanner.peek())}")
        _skip_trivia(scanner)
        if scanner.startswith("::="):
            scanner.pos += 3
        elif scanner.startswith("="):
            scanner.pos += 1
        else:
            raise scanner.error(f"expected '::=' or '=' after rule name '{rule_name}', "
                                f"found {describe(scanner.peek())}")
        expander.rule_name = rule_name
        body = _parse_body(scanner, config, expander)
        rules.append(Rule(rule_name, body, Span(rule_start, scanner.pos)))
        _skip_trivia(scanner)
    rules, references = expander.finish(rules)
    return GrammarAST(tuple(rules), start, source, references)


def _parse_body(scanner: Scanner, config: Config, expander: BuiltinExpander):
    _skip_trivia(scanner)
    builder = ExpressionBuilder(scanner, config, scanner.pos, expander)
    while True:
        _skip_trivia(scanner)
        char = scanner.peek()
        position = scanner.pos
        if char == ";":
            body = builder.finish(position)
            scanner.pos += 1
            return body
        if not char:
            builder.finish(position)
            raise scanner.error("expected ';' at the end of the rule, found end of input")
        if char in "'\"":
            value = _read_string(scanner, regex=False)
            builder.add(Literal(value.encode("utf-8"), Span(position, scanner.pos)))
        elif char == "#":
            builder.add(_read_regex(scanner))
        elif is_name_char(char):
            word = _read_name(scanner)
            end = scanner.pos
            if scanner.peek() == "!":
                expander.read(scanner, builder, word, position, lambda: _skip_trivia(scanner))
                continue
            _skip_trivia(scanner)
            if scanner.startswith("::="):
                raise scanner.error(f"expected ';' to end the previous rule before the definition of "
                                    f"'{word}'", position, end)
            builder.add(RuleRef(word, Span(position, end)))
        elif char in "([{":
            builder.open({"(": "group", "[": "option", "{": "repeat"}[char])
            scanner.pos += 1
        elif char in ")]}":
            builder.close(char)
            scanner.pos += 1
        elif char == "|":
            builder.bar()
            scanner.pos += 1
        elif char == ",":
            builder.comma()
            scanner.pos += 1
        elif char in "?*+":
            scanner.pos += 1
            low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[char]
            builder.postfix(low, high, scanner.pos, char)
        else:
            raise scanner.error(f"expected a name, a string, a regex, '(', '[', '{{', '|' or ';', "
                                f"found {describe(char)}")


def _read_regex(scanner: Scanner):
    position = scanner.pos
    for prefix, kind in REGEX_PREFIXES:
        if scanner.startswith(prefix) and scanner.peek(len(prefix)) in ("'", '"'):
            scanner.pos += len(prefix)
            text = _read_string(scanner, regex=True)
            span = Span(position, scanner.pos)
            if kind == "substrings":
                return Substrings(text, span)
            return Regex(text, kind, False, span)
    raise scanner.error("expected '#\"regex\"', '#e\"regex\"', '#ex\"regex\"', '#&\"regex\\0regex\"', "
                        "'#-\"regex\\u{1}regex\"' or '#substrs\"text\"'")


def _read_string(scanner: Scanner, regex: bool) -> str:
    """Read a quoted string at the scanner and return its decoded text."""
    quote = scanner.peek()
    start = scanner.pos
    scanner.pos += 1
    out: list[str] = []
    while True:
        char = scanner.peek()
        if not char or char == "\n" and not regex:
            raise scanner.error(f"unterminated string: expected a closing {quote}", start, scanner.pos)
        if char == quote:
            scanner.pos += 1
            return "".join(out)
        if char != "\\":
            out.append(char)
            scanner.pos += 1
            continue
        escape_start = scanner.pos
        escaped = scanner.peek(1)
        scanner.pos += 2
        if escaped in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[escaped])
        elif escaped == "x" and not scanner.startswith("{"):
            out.append(checked_code_point(scanner, scanner.read_hex(2, escape_start), escape_start))
        elif escaped in "xu" and scanner.startswith("{") and (escaped == "u" or not regex):
            out.append(checked_code_point(scanner, scanner.read_braced_hex(escape_start), escape_start))
        elif escaped == "u":
            out.append(checked_code_point(scanner, scanner.read_hex(4, escape_start), escape_start))
        elif escaped == "U":
            out.append(checked_code_point(scanner, scanner.read_hex(8, escape_start), escape_start))
        elif regex and escaped:
            out.append("\\" + escaped)
        else:
            raise scanner.error(
                f"unknown escape '\\{escaped}': expected one of \\n \\r \\t \\0 \\\\ \\' \\\" "
                f"\\xHH \\uHHHH \\u{{...}} \\UHHHHHHHH", escape_start, scanner.pos)


TRIVIA = re.compile(r"(?:\s+|\(\*.*?\*\))*", re.DOTALL)
NAME = re.compile(r"[A-Za-z0-9_-]+")


def _skip_trivia(scanner: Scanner) -> None:
    """Skip whitespace and (* comments *)."""
    scanner.pos = TRIVIA.match(scanner.text, scanner.pos).end()
    if scanner.startswith("(*"):
        raise scanner.error("unterminated comment: expected '*)'", scanner.pos, scanner.pos + 2)


def _read_name(scanner: Scanner) -> str:
    match = NAME.match(scanner.text, scanner.pos)
    if match is None:
        return ""
    scanner.pos = match.end()
    return match.group()
