"""Integrations of grammask with inference runtimes.

- ``grammask.integrations.llama_cpp``: a logits processor for
  llama-cpp-python (``Llama.create_completion`` / ``create_chat_completion``),
  model loading helpers and the one-call ``generate``.
- ``grammask.integrations.transformers``: a batched ``LogitsProcessor`` for
  ``model.generate``.

Each submodule imports its runtime on import, so this package itself stays
free of heavy dependencies.  Shared here: ``resolve_grammar`` (what both
integrations and the CLI accept as a grammar) and
``IncompleteOutputWarning`` (the truncation caveat, defined in
``grammask.errors``).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from grammask.config import Config
from grammask.errors import IncompleteOutputWarning


def resolve_grammar(grammar_or_schema: Any, config: Optional[Config] = None, **schema_options):
    """A ``grammask.Grammar`` from what the integrations accept.

    ``grammar_or_schema`` may be a ``Grammar``, a JSON Schema as a dict or as
    JSON text (a string starting with ``{``), or a pydantic model class.
    Returns ``(grammar, is_json)``: ``is_json`` says the output is JSON that
    ``json.loads`` can parse once complete.  ``schema_options`` go to the
    JSON Schema translator (e.g. ``whitespace="compact"``)."""
    from grammask.grammar import Grammar

    if isinstance(grammar_or_schema, Grammar):
        return grammar_or_schema, False
    if isinstance(grammar_or_schema, (dict, bool)):
        return Grammar.from_json_schema(grammar_or_schema, config=config, **schema_options), True
    if isinstance(grammar_or_schema, str):
        if grammar_or_schema.lstrip().startswith("{"):
            return Grammar.from_json_schema(json.loads(grammar_or_schema), config=config,
                                             **schema_options), True
        raise TypeError(
            "a string is ambiguous here: build the grammar with grammask.Grammar.from_ebnf, "
            "from_gbnf or from_regex, or pass a JSON Schema as a dict")
    if isinstance(grammar_or_schema, type) and hasattr(grammar_or_schema, "model_json_schema"):
        return Grammar.from_pydantic(grammar_or_schema, config=config, **schema_options), True
    raise TypeError(
        f"expected a grammask.Grammar, a JSON Schema (dict or JSON text) or a pydantic model, "
        f"got {type(grammar_or_schema).__name__}")


__all__ = ["IncompleteOutputWarning", "resolve_grammar"]
