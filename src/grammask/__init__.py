"""grammask: exact grammar, regex and JSON Schema token masks for LLM decoding.

Public API (DESIGN.md section 2): Vocabulary, Grammar, Config, compile,
CompiledGrammar, Engine, Status and the typed errors.  The heavy parts
(compiled core, front end, vocabulary loaders) load on first use, so
``import grammask`` stays cheap.
"""

from grammask.config import Config
from grammask.errors import (
    GrammarError,
    GrammarSyntaxError,
    GrammarWarning,
    GrammaskError,
    LimitExceeded,
    RegexError,
    SchemaUnsupported,
    TokenRejected,
    VocabularyError,
)

__version__ = "0.1.0"

_LAZY = {
    "Grammar": ("grammask.grammar", "Grammar"),
    "Vocabulary": ("grammask.vocab", "Vocabulary"),
    "CompiledGrammar": ("grammask.engine", "CompiledGrammar"),
    "Engine": ("grammask.engine", "Engine"),
    "Status": ("grammask.engine", "Status"),
    "compile": ("grammask.engine", "compile"),
    "DeadEndWarning": ("grammask.engine", "DeadEndWarning"),
    "IncompleteOutputWarning": ("grammask.integrations", "IncompleteOutputWarning"),
}

__all__ = [
    "CompiledGrammar", "Config", "DeadEndWarning", "Engine", "Grammar", "GrammarError",
    "GrammarSyntaxError", "GrammarWarning", "GrammaskError", "IncompleteOutputWarning",
    "LimitExceeded", "RegexError", "SchemaUnsupported", "Status", "TokenRejected", "Vocabulary",
    "VocabularyError", "compile",
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
