"""grammask: exact grammar, regex and JSON Schema token masks for LLM decoding.

Public API (docs/design.md section 2): Vocabulary, Grammar, Config, compile,
CompiledGrammar, Engine, Status, BatchMasker (masks of many engines in one
call, ``fill_next_token_bitmask_batch`` its one-call form), clear_caches and
the typed errors and warnings.  The heavy parts
(compiled core, front end, vocabulary loaders) load on first use, so
``import grammask`` stays cheap.
"""

from grammask.config import Config
from grammask.errors import (
    DeadEndWarning,
    GrammarError,
    GrammarSyntaxError,
    GrammarWarning,
    GrammaskError,
    IncompleteOutputWarning,
    IndexOutOfRange,
    InvalidArgument,
    InvalidArgumentType,
    LimitExceeded,
    RegexError,
    SchemaUnsupported,
    TokenRejected,
    UsageError,
    VocabularyError,
)

__version__ = "0.1.0"

_LAZY = {
    "BatchMasker": ("grammask.engine", "BatchMasker"),
    "Grammar": ("grammask.grammar", "Grammar"),
    "Vocabulary": ("grammask.vocab", "Vocabulary"),
    "CompiledGrammar": ("grammask.engine", "CompiledGrammar"),
    "Engine": ("grammask.engine", "Engine"),
    "Status": ("grammask.engine", "Status"),
    "compile": ("grammask.engine", "compile"),
    "clear_caches": ("grammask.engine", "clear_caches"),
    "fill_next_token_bitmask_batch": ("grammask.engine", "fill_next_token_bitmask_batch"),
}

__all__ = [
    "BatchMasker", "CompiledGrammar", "Config", "DeadEndWarning", "Engine", "Grammar", "GrammarError",
    "GrammarSyntaxError", "GrammarWarning", "GrammaskError", "IncompleteOutputWarning",
    "IndexOutOfRange", "InvalidArgument", "InvalidArgumentType", "LimitExceeded", "RegexError",
    "SchemaUnsupported", "Status", "TokenRejected", "UsageError", "Vocabulary",
    "VocabularyError", "clear_caches", "compile", "fill_next_token_bitmask_batch",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module_name), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'grammask' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
