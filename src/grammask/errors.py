"""Typed errors and warnings of grammask.

Every error a user can trigger is one of these classes, and each carries the
facts needed to act on it (where in the grammar, which token, which limit and
how to raise it).  No other exception type is meant to escape the public API.
Every warning grammask emits is one of the warning classes below.

Hierarchy::

    GrammaskError (Exception)
      GrammarError (ValueError)          a grammar cannot be built
        GrammarSyntaxError               .line, .column, caret excerpt in str()
        RegexError                       .pattern, .position, engine message
        SchemaUnsupported                .keyword, .pointer, .approximation
                                         (JSON Schema with strict=True)
      VocabularyError (ValueError)       a vocabulary cannot be built or used
      TokenRejected (ValueError)         a token/bytes the grammar does not allow;
                                         the engine state is left unchanged
      LimitExceeded (GrammarError)       .limit (config field), .given, .maximum
      UsageError                         a call the object cannot serve; it is unchanged
        InvalidArgument (ValueError)     a value out of range, or a call at the wrong time
        InvalidArgumentType (TypeError)  an argument of the wrong kind
        IndexOutOfRange (IndexError)     a row index outside an array

Warnings::

    GrammarWarning (UserWarning)         a JSON Schema keyword approximated or
                                         ignored: .keyword, .pointer, .approximation
    DeadEndWarning (RuntimeWarning)      no token can continue an incomplete output
    IncompleteOutputWarning (UserWarning)  generation stopped before the output was complete

``warn_caller`` emits a warning at the first caller outside the package.
"""

from __future__ import annotations

import os
import sys
import warnings


class GrammaskError(Exception):
    """Base class of every error grammask raises on purpose."""


class GrammarError(GrammaskError, ValueError):
    """A grammar (EBNF, GBNF, regex or JSON Schema) cannot be built."""


class GrammarSyntaxError(GrammarError):
    """A syntax error at a position of a grammar's source text.

    ``line`` and ``column`` are 1-based; ``column`` counts code points.  The
    message shows the offending line with a caret under the column and says
    what was expected.
    """

    def __init__(self, message: str, line: int, column: int, excerpt: str = ""):
        self.message = message
        self.line = line
        self.column = column
        self.excerpt = excerpt
        text = f"{message} (line {line}, column {column})"
        if excerpt:
            text = f"{text}\n{excerpt}"
        super().__init__(text)


class RegexError(GrammarError):
    """An invalid or unsupported regular expression.

    ``pattern`` is the regex text, ``position`` the 0-based character offset of
    the problem inside it (or None), ``reason`` the regex engine's message.
    """

    def __init__(self, message: str, pattern: str = "", position: int | None = None,
                 reason: str = ""):
        self.pattern = pattern
        self.position = position
        self.reason = reason
        super().__init__(message)


class SchemaUnsupported(GrammarError):
    """Raised instead of a ``GrammarWarning`` when translating a JSON Schema with ``strict=True``.

    ``keyword``, ``pointer`` and ``approximation`` are those of the warning.
    """

    def __init__(self, keyword: str, pointer: str, approximation: str):
        self.keyword = keyword
        self.pointer = pointer
        self.approximation = approximation
        super().__init__(f"unsupported schema keyword {keyword!r} at #{pointer}: "
                         f"{approximation} (strict=True)")


class LimitExceeded(GrammarError):
    """A documented size limit was hit.

    ``limit`` names the limit (the name of the ``Config`` field or keyword
    argument that raises it; an upper-case name is a fixed constant of
    grammask that no setting changes), ``given`` is the size that was asked
    for and ``maximum`` the current limit.  The message says how to raise
    it, or that it cannot be raised.
    """

    def __init__(self, limit: str, given: int | None, maximum: int | None, what: str = ""):
        self.limit = limit
        self.given = given
        self.maximum = maximum
        self.settable = not limit.isupper()
        detail = f"{what}: " if what else ""
        size = f"{given} > {maximum}" if given is not None else f"limit {maximum}"
        advice = (f"raise it with {limit}=... if this input is trusted" if self.settable else
                  "this is a fixed limit of grammask, not a setting: make the input smaller")
        super().__init__(f"{detail}limit '{limit}' exceeded ({size}); {advice}")


class VocabularyError(GrammaskError, ValueError):
    """A vocabulary cannot be built (unknown tokenizer format, bad ids).

    ``token_id`` is the offending token id when one is to blame (else None).
    """

    def __init__(self, message: str, token_id: int | None = None):
        self.token_id = token_id
        super().__init__(message)


class TokenRejected(GrammaskError, ValueError):
    """A token or byte string is not allowed here.  The engine is unchanged.

    ``token_id`` is the rejected id (None for raw bytes), ``data`` the bytes,
    ``offset`` the byte offset inside ``data`` where the grammar stopped
    matching (None when unknown).
    """

    def __init__(self, message: str, token_id: int | None = None, data: bytes | None = None,
                 offset: int | None = None):
        self.token_id = token_id
        self.data = data
        self.offset = offset
        super().__init__(message)


# ---- using an engine -----------------------------------------------------------

class UsageError(GrammaskError):
    """A call made with arguments, or at a time, that the object cannot serve;
    the object is left unchanged.  Each subclass also derives from the
    built-in exception Python code raises for the same mistake, so
    ``except ValueError`` (``TypeError``, ``IndexError``) keeps working."""


class InvalidArgument(UsageError, ValueError):
    """An argument's value is out of range for this call (e.g. rolling back
    more steps than were accepted), or the call comes at the wrong time."""


class InvalidArgumentType(UsageError, TypeError):
    """An argument of the wrong kind, or an argument this form of the call
    does not take."""


class IndexOutOfRange(UsageError, IndexError):
    """An index (e.g. a bitmask row) outside the array it indexes."""


# ---- warnings -----------------------------------------------------------------

class GrammarWarning(UserWarning):
    """A JSON Schema keyword that was approximated or ignored.

    ``keyword`` is the keyword, ``pointer`` the JSON pointer (RFC 6901) of the
    schema holding it, ``approximation`` what the grammar does instead.
    """

    def __init__(self, keyword: str, pointer: str, approximation: str):
        self.keyword = keyword
        self.pointer = pointer
        self.approximation = approximation
        super().__init__(f"{keyword!r} at #{pointer}: {approximation}")


class DeadEndWarning(RuntimeWarning):
    """The output is not complete, yet no token of the vocabulary can
    continue it (the grammar needs bytes no token spells)."""


class IncompleteOutputWarning(UserWarning):
    """Generation stopped (max tokens) before the output was a complete
    sentence of the grammar: the text is a valid prefix, not a valid output."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_caller(message, category: type | None = None) -> None:
    """``warnings.warn`` attributed to the first frame outside grammask (the
    user's call), however deep inside the package the warning arises.  A
    fixed ``stacklevel`` cannot say that: modules compiled by Cython (see
    CMakeLists.txt) have no Python frames, so the same call counts fewer
    levels compiled than as plain Python."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
