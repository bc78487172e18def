"""Token terminals in the byte-level grammar: one reserved byte per kind.

What it computes
    A ``TokenTerminal`` (``ast.py``) matches one whole token of the model's
    vocabulary (Koo et al.'s terminal labels), so its language is only known
    once a vocabulary is joined (``grammask.engine.token_terminals``).  The
    grammar, which is byte-level, carries it as a one-byte literal of a
    reserved byte: ``RESERVED_BYTES[kind]``, a byte that never occurs in
    UTF-8 text.  ``validate.validate`` lists the kinds a grammar uses;
    ``check_reserved_bytes(ast)`` makes sure nothing else in the grammar
    can match a reserved byte, so a reserved byte in the recognizer always
    stands for its token terminal.

Layout
    ``RESERVED_BYTES``: kind -> byte (0xFF ``paragraph``, 0xFE ``any``);
    ``KIND_OF_BYTE`` the inverse; ``SPELLING``: kind -> its source spelling
    (``paragraph_token!``, ``any!``), used to print grammars.

Invariants
    In a grammar that uses token terminals, a reserved byte is matched only
    by the literal that stands for a token terminal: literals written in the
    grammar are UTF-8 (checked here for ASTs built by programs), and so is
    every regex, class and substring terminal's language.

Source: Koo, Liu and He, "Automata-based constraints for language model
decoding" (section 2.5.1, terminal labels such as PARAGRAPH_TOKEN); the
kbnf post's ``any!``.
"""

from __future__ import annotations

from grammask.errors import GrammarError
from grammask.grammar.ast import Alternation, GrammarAST, Literal, Repeat, Sequence, TokenTerminal

RESERVED_BYTES = {"paragraph": 0xFF, "any": 0xFE}
KIND_OF_BYTE = {byte: kind for kind, byte in RESERVED_BYTES.items()}
SPELLING = {"paragraph": "paragraph_token!", "any": "any!"}


def reserved_literal(node: TokenTerminal) -> bytes:
    """The one-byte literal that stands for a token terminal."""
    if node.kind not in RESERVED_BYTES:
        raise GrammarError(f"unknown token terminal kind {node.kind!r}; expected one of "
                           f"{', '.join(sorted(RESERVED_BYTES))}")
    return bytes([RESERVED_BYTES[node.kind]])


def check_reserved_bytes(ast: GrammarAST) -> None:
    """Raise GrammarError when a grammar with token terminals holds a literal
    with a reserved byte (only an AST built by a program can: parsed strings
    are UTF-8).  Regex, class and substring terminals match UTF-8 only (the
    crate refuses a pattern that can match invalid UTF-8), so they never
    match a reserved byte."""
    reserved = bytes(RESERVED_BYTES.values())
    stack = [rule.body for rule in ast.rules]
    while stack:
        node = stack.pop()
        if isinstance(node, Literal) and any(byte in reserved for byte in node.value):
            raise GrammarError(f"the literal {node.value!r} holds a byte reserved for token terminals "
                               f"({', '.join(SPELLING.values())}); literals must be UTF-8 in such a grammar")
        if isinstance(node, (Sequence, Alternation)):
            stack.extend(node.items)
        elif isinstance(node, Repeat):
            stack.append(node.item)
