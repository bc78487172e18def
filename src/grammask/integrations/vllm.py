"""vLLM integration: grammask as a vLLM V1 logits processor, one grammar per request.

What it computes
    ``GrammaskLogitsProcessor`` masks each step's logits so that every
    request that asks for it produces a sentence of its own grammar: a JSON
    Schema, a GBNF or grammask EBNF grammar, or a regex, given per request in
    ``SamplingParams(extra_args={"grammask": {...}})`` (``request_spec``
    reads it).  Requests without that key are left untouched.  The
    canonical-tokenization filter is off unless the entry says
    ``"canonical": true`` (``CANONICAL``).  Each (kind, canonical text,
    canonical flag, vocabulary fingerprint) is compiled once per
    process and kept in an LRU (``compiled_for``), so concurrent or repeated
    requests with the same schema share one ``CompiledGrammar`` and its mask
    cache.

How vLLM 0.32 calls it (``vllm.v1.sample.logits_processor``)
    ``validate_params(params)`` (class method, in the front end, before a
    request is queued): a malformed ``grammask`` entry or a grammar that does
    not parse raises a ``GrammaskError`` (a ``ValueError``: vLLM answers HTTP
    400).  ``__init__(vllm_config, device, is_pin_memory)`` once per worker:
    loads the model's tokenizer and builds the ``Vocabulary``.
    ``update_state(batch_update)`` before each forward pass: ``removed``
    batch indices, ``added`` (index, params, prompt ids, output ids) where
    the output ids list is vLLM's own and grows in place, and ``moved`` (a, b,
    UNIDIRECTIONAL or SWAP), applied in that order.  ``apply(logits)`` with
    ``logits`` [num_requests, V'] (V' >= the vocabulary size; columns past it
    are padding and get -inf) just before sampling.

State (data layout)
    ``_rows``: batch index -> ``_Row`` (the request's Engine, the reference to
    its output ids, how many of them the engine has accepted).  Tokens are
    fed in ``apply``, not in ``update_state``: with async scheduling the
    newest output id is a placeholder (-1) until vLLM replaces it just before
    sampling, so feeding stops at the first negative id and resumes there.

Invariants
    * A row's engine has accepted exactly its request's output ids (up to
      the first placeholder) before its logits are masked.
    * EOS is allowed only when the output is complete; after EOS only EOS.
    * All rows are masked in one ``BatchMasker.mask_logits`` call (masks
      computed on the masker's threads, without the GIL for grammars
      without token-level filters).
    * A token the engine refuses (possible only when something else changed
      the logits after grammask, e.g. ``min_tokens`` forbidding the only
      allowed EOS) stops the constraint for that request with a logged
      warning rather than failing the whole batch.

Speculative decoding
    vLLM 0.32 refuses custom logits processors when speculative decoding is
    configured (``build_logitsprocs`` raises), so no rollback is needed here;
    the processor is for plain decoding.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

import torch
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from grammask.config import Config
from grammask.engine import BatchMasker, CompiledGrammar, Engine, compile
from grammask.engine.lru import LRU
from grammask.errors import InvalidArgument, InvalidArgumentType, TokenRejected
from grammask.grammar import Grammar
from grammask.vocab import Vocabulary

__all__ = ["ARGUMENT", "GrammaskLogitsProcessor", "RequestSpec", "compiled_for", "request_spec"]

ARGUMENT = "grammask"
"""The key of ``SamplingParams.extra_args`` (``vllm_xargs`` over HTTP) read here."""

KINDS = ("json_schema", "gbnf", "ebnf", "regex")
"""What a request's ``grammask`` entry may name, exactly one of."""

OPTIONS = "options"
"""With ``json_schema`` only: the JSON Schema translator's keyword options
(``Grammar.from_json_schema``), e.g. ``{"whitespace": "compact"}``."""

CANONICAL = "canonical"
"""With any kind: true turns the canonical-tokenization filter on for the
request (``Config(canonical=True)``; the model's tokenizer must be one it
is exact for).  Off by default here, unlike ``compile``'s default: on
sampled text each new pre-token region costs the filter tens of
milliseconds on this machine, which roughly doubled the time per token of
SmolLM2-135M in vLLM (``benchmarks/bench_vllm.py``); a server pays that on
every request, and vLLM's own backends do not filter."""


class RequestSpec(NamedTuple):
    """What a request asks for: the grammar's kind and canonical text, and
    whether its tokens must stay canonical."""
    kind: str
    text: str
    canonical: bool


_GRAMMARS = LRU(64)
_COMPILED = LRU(64)
_log = logging.getLogger(__name__)


def request_spec(extra_args: Optional[dict]) -> Optional[RequestSpec]:
    """The ``RequestSpec`` of what a request asks for, or None.

    ``extra_args["grammask"]`` is a dict (or its JSON text, as ``vllm_xargs``
    carries only strings and numbers) with exactly one of ``KINDS`` (and,
    with ``json_schema``, optionally ``OPTIONS``; with any kind, optionally
    ``CANONICAL``, a bool); a JSON Schema may be a
    dict or JSON text, the others are strings.  A schema's canonical text is
    the compact JSON of ``[schema, options]`` with keys in their given order:
    the order of ``properties`` is the order members are written in, so two
    schemas that differ only there are two grammars."""
    if not extra_args or ARGUMENT not in extra_args:
        return None
    entry = extra_args[ARGUMENT]
    if isinstance(entry, str):
        try:
            entry = json.loads(entry)
        except json.JSONDecodeError as error:
            raise InvalidArgument(f"extra_args[{ARGUMENT!r}] is not valid JSON: {error}") from None
    if not isinstance(entry, dict):
        raise InvalidArgumentType(f"extra_args[{ARGUMENT!r}] must be a dict with one of {KINDS}, "
                                  f"got {type(entry).__name__}")
    named = [key for key in entry if key in KINDS]
    allowed = set(KINDS) | {CANONICAL} | ({OPTIONS} if named == ["json_schema"] else set())
    if len(named) != 1 or set(entry) - allowed:
        raise InvalidArgument(f"extra_args[{ARGUMENT!r}] must have exactly one of {KINDS} (and "
                              f"{OPTIONS!r} with json_schema only, {CANONICAL!r} with any), "
                              f"got keys {sorted(entry)}")
    canonical = entry.get(CANONICAL, False)
    if not isinstance(canonical, bool):
        raise InvalidArgumentType(f"{ARGUMENT}.{CANONICAL} must be true or false, got {canonical!r}")
    kind = named[0]
    value = entry[kind]
    if kind == "json_schema":
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                raise InvalidArgument(f"{ARGUMENT}.json_schema is not valid JSON: {error}") from None
        if not isinstance(value, (dict, bool)):
            raise InvalidArgumentType(f"{ARGUMENT}.json_schema must be a JSON Schema (an object or a "
                                      f"boolean), got {type(value).__name__}")
        options = entry.get(OPTIONS, {})
        if not isinstance(options, dict):
            raise InvalidArgumentType(f"{ARGUMENT}.{OPTIONS} must be a dict, got {type(options).__name__}")
        return RequestSpec(kind, json.dumps([value, options], separators=(",", ":")), canonical)
    if not isinstance(value, str):
        raise InvalidArgumentType(f"{ARGUMENT}.{kind} must be a string, got {type(value).__name__}")
    return RequestSpec(kind, value, canonical)


def grammar_for(kind: str, text: str) -> Grammar:
    """The Grammar of a ``request_spec`` result, parsed once per process."""
    def build() -> Grammar:
        if kind == "json_schema":
            schema, options = json.loads(text)
            return Grammar.from_json_schema(schema, **options)
        if kind == "gbnf":
            return Grammar.from_gbnf(text)
        if kind == "ebnf":
            return Grammar.from_ebnf(text)
        return Grammar.from_regex(text)
    return _GRAMMARS.get_or_build((kind, text), build)


def compiled_for(spec: RequestSpec, vocab: Vocabulary) -> CompiledGrammar:
    """The grammar compiled for ``vocab``, cached by (spec, vocabulary fingerprint)."""
    return _COMPILED.get_or_build((*spec, vocab.fingerprint),
                                  lambda: compile(grammar_for(spec.kind, spec.text), vocab,
                                                  Config(canonical=spec.canonical)))


def vocabulary_for(vllm_config: Any) -> Vocabulary:
    """The Vocabulary of the model's tokenizer, EOS being the ids vLLM stops
    on by default: the tokenizer's EOS and the generation config's."""
    from transformers import AutoTokenizer

    model_config = vllm_config.model_config
    tokenizer = AutoTokenizer.from_pretrained(model_config.tokenizer,
                                              revision=model_config.tokenizer_revision,
                                              trust_remote_code=model_config.trust_remote_code)
    eos_ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    generation_eos = model_config.try_get_generation_config().get("eos_token_id")
    for token_id in generation_eos if isinstance(generation_eos, list) else [generation_eos]:
        if token_id is not None and token_id not in eos_ids:
            eos_ids.append(token_id)
    return Vocabulary.from_tokenizer(tokenizer, eos_token_ids=eos_ids or None)


@dataclass
class _Row:
    """One constrained request: its engine and vLLM's growing output ids."""

    engine: Engine
    output_ids: list
    n_fed: int = 0

    def catch_up(self) -> bool:
        """Feed the output ids the engine has not seen (up to a placeholder);
        False when the engine refused one."""
        output_ids = self.output_ids
        while self.n_fed < len(output_ids) and output_ids[self.n_fed] >= 0:
            try:
                self.engine.try_accept_new_token(output_ids[self.n_fed])
            except TokenRejected as error:
                _log.warning("grammask: request output left its grammar (%s); no longer constrained",
                             error)
                return False
            self.n_fed += 1
        return True


class GrammaskLogitsProcessor(LogitsProcessor):
    """A vLLM V1 logits processor: per-request grammars from
    ``SamplingParams.extra_args["grammask"]``.  Enable it with
    ``LLM(..., logits_processors=[GrammaskLogitsProcessor])`` or
    ``vllm serve ... --logits-processors
    grammask.integrations.vllm:GrammaskLogitsProcessor``."""

    @classmethod
    def validate_params(cls, sampling_params) -> None:
        spec = request_spec(sampling_params.extra_args)
        if spec is not None:
            grammar_for(spec.kind, spec.text)

    def __init__(self, vllm_config: Any, device: torch.device, is_pin_memory: bool):
        self.vocab = vocabulary_for(vllm_config)
        self._rows: dict[int, _Row] = {}
        self._masker = BatchMasker()

    def is_argmax_invariant(self) -> bool:
        return False

    def update_state(self, batch_update: Optional[BatchUpdate]) -> None:
        if batch_update is None:
            return
        rows = self._rows
        for index in batch_update.removed:
            rows.pop(index, None)
        for index, params, prompt_ids, output_ids in batch_update.added:
            spec = request_spec(params.extra_args)
            if spec is None:
                rows.pop(index, None)
                continue
            engine = Engine(compiled_for(spec, self.vocab))
            if prompt_ids:
                engine.seed_canonical_context(prompt_ids)
            rows[index] = _Row(engine, output_ids)
        for a, b, direction in batch_update.moved:
            row_a, row_b = rows.pop(a, None), rows.pop(b, None)
            if row_a is not None:
                rows[b] = row_a
            if direction == MoveDirectionality.SWAP and row_b is not None:
                rows[a] = row_b

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self._rows:
            return logits
        for index in [index for index, row in self._rows.items() if not row.catch_up()]:
            del self._rows[index]
        indices = list(self._rows)
        self._masker.mask_logits([self._rows[index].engine for index in indices], logits, indices)
        return logits
