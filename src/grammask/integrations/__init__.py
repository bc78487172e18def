"""Integrations of grammask with inference runtimes.

- ``grammask.integrations.llama_cpp``: a logits processor for
  llama-cpp-python (``Llama.create_completion`` / ``create_chat_completion``),
  model loading helpers and the one-call ``generate``.
- ``grammask.integrations.transformers``: a batched ``LogitsProcessor`` for
  ``model.generate``, and a one-sequence ``generate`` loop.
- ``grammask.integrations.vllm``: a vLLM V1 logits processor, one grammar
  per request from ``SamplingParams.extra_args["grammask"]``.

Each submodule imports its runtime on import, so this package itself stays
free of heavy dependencies.  Shared here: ``resolve_grammar`` (what both
integrations and the CLI accept as a grammar), ``GenerationResult`` (what
both ``generate`` helpers return) and ``IncompleteOutputWarning`` (the
truncation caveat, defined in ``grammask.errors``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from grammask.config import Config
from grammask.errors import IncompleteOutputWarning


@dataclass
class GenerationResult:
    """What the ``generate`` helpers return.

    ``text``: the output (decoded from the exact token bytes); ``data``: the
    parsed JSON when a JSON Schema was used and the output is complete;
    ``complete``: the output is a complete sentence of the grammar;
    ``finish_reason``: ``"stop"`` (the model or the grammar ended it) or
    ``"length"`` (max tokens); ``token_ids``: the generated tokens (EOS
    left out); ``n_forced``: how many of them were forced
    (``force_tokens=True``); ``timings``: seconds (compile, prompt,
    generation, grammask's masks, forced tokens) and counts (forced tokens,
    model calls, token sets built ahead), per helper; ``engine``: the engine after the output."""

    text: str
    data: Any
    complete: bool
    finish_reason: str
    token_ids: list[int]
    n_forced: int = 0
    timings: dict = field(default_factory=dict)
    engine: Any = None

    @property
    def n_tokens(self) -> int:
        return len(self.token_ids)


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


__all__ = ["GenerationResult", "IncompleteOutputWarning", "resolve_grammar"]
