"""transformers integration: a batched LogitsProcessor for ``model.generate``,
and a one-sequence ``generate`` loop with forced tokens.

What it computes
    ``generate(model, engine_or_compiled, input_ids)`` decodes one sequence
    with the model's KV cache, masking each step's logits with an Engine;
    with ``force_tokens=True`` the forced (jump-forward) tokens
    (``Engine.compute_forced_tokens``) are accepted without sampling and fed
    with the next forward pass, all in one call, and counted in
    ``n_forced``.
    ``GrammaskLogitsProcessor(engine_or_compiled)`` masks ``scores``
    ([batch, V'] with V' >= the vocabulary size; extra columns of a padded
    embedding are disallowed) so that each row's output stays a prefix of a
    sentence of the grammar, and EOS is allowed only when that row's output is
    complete.

How transformers calls a processor
    ``processor(input_ids, scores)`` once per step, before choosing the next
    tokens: ``input_ids`` is [batch, prompt + generated] (int64), ``scores``
    is float [batch, V'].  The token chosen last (for a finished generation:
    the final EOS) is never passed back: ``finish(sequences)`` feeds it so
    that ``engines[row].is_finished()`` is exact afterwards.  Once a row has
    produced EOS, transformers keeps the row in the batch and overwrites its
    next tokens with ``pad_token_id``: such rows get only EOS (and the pad
    id, when given) allowed, and their later tokens are not fed to an engine.

State (data layout)
    ``engines``: one Engine per row, made lazily by ``copy()`` of one fresh
    engine; ``prompt_length``; ``_previous_ids`` (numpy copy of the last call's
    ``input_ids``).  Each call checks that every row extends the same row of
    the previous call by one token; when rows were reordered (beam search),
    each row takes a copy of the engine of the previous row it extends; when
    no row extends any previous row a new generation starts (engines reset).

``generate``'s loop
    Per step: forced tokens (when asked; at most what ``max_new_tokens``
    leaves), then one forward pass over the tokens not yet in the cache (the
    prompt, or the last sampled token and the forced ones after it), mask
    the last position's logits, pick (greedy, or sampling at
    ``temperature`` with a seeded generator), accept, stop at EOS.  The
    engine has accepted every generated token, so ``complete`` is exact.

Invariants
    * ``engines[row]`` has accepted exactly ``input_ids[row, prompt_length:]``
      up to and including its first EOS.
    * A row never gets an empty mask: a finished row keeps EOS (and pad).

Seed: the outlines lab (docs/references.md) (the processor hook, EOS only
when accepting).
"""

from __future__ import annotations

import time
import warnings
from typing import Optional

import numpy as np
import torch
from transformers import LogitsProcessor

from grammask.engine.step_ahead import StepAhead
from grammask.errors import IncompleteOutputWarning
from grammask.integrations import GenerationResult


def _engine_from(engine_or_compiled):
    """A fresh Engine: a copy of ``engine_or_compiled`` or one on the CompiledGrammar."""
    from grammask.engine import CompiledGrammar, Engine

    if isinstance(engine_or_compiled, Engine):
        return engine_or_compiled.copy()
    if isinstance(engine_or_compiled, CompiledGrammar):
        return Engine(engine_or_compiled)
    raise TypeError(f"expected a grammask.Engine or CompiledGrammar, "
                    f"got {type(engine_or_compiled).__name__}")


def generate(model, engine_or_compiled, input_ids, *, max_new_tokens: int = 256,
             force_tokens: bool = False, temperature: float = 0.0, seed: Optional[int] = None,
             seed_prompt_context: bool = True, warn: bool = True,
             overlap: bool = False) -> GenerationResult:
    """One constrained sequence from a causal LM (``model(input_ids,
    past_key_values=..., use_cache=True)``).

    ``engine_or_compiled``: a ``grammask.Engine`` (a copy of its state is
    continued) or a ``CompiledGrammar``.  ``input_ids``: the prompt's ids (a
    list, or a tensor of shape [n] or [1, n]).  ``temperature`` 0 is greedy;
    otherwise softmax sampling with ``torch.Generator`` seeded by ``seed``.
    ``force_tokens``: forced tokens are appended without sampling and go
    through the model in the next forward pass with the sampled token.
    ``seed_prompt_context``: hand the prompt to the canonical filter (when
    the engine has accepted nothing yet).  ``overlap``: each sampled token
    is accepted and the next mask computed on a worker thread
    (``grammask.engine.step_ahead``) while the model runs its next forward
    pass (the tokens are the same either way; ``timings["ahead_s"]`` is the
    worker's CPU time).  It pays where the forward pass leaves a core idle
    and releases the GIL (a GPU); on the CPU the worker shares the cores and
    the GIL with the model's Python code (``benchmarks/bench_overlap.py``:
    grammask's time on the loop's path falls, the per-token time does not),
    hence off by default.
    Returns a ``GenerationResult`` (``data`` is None: parse ``text``); an
    output cut by ``max_new_tokens`` is ``complete=False`` with an
    ``IncompleteOutputWarning`` unless ``warn=False``."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    prompt = torch.as_tensor(input_ids).reshape(-1).tolist()
    if not prompt:
        raise ValueError("generate needs a non-empty prompt")
    engine = _engine_from(engine_or_compiled)
    if seed_prompt_context and engine.n_accepted == 0:
        engine.seed_canonical_context(prompt)
    eos_ids = frozenset(engine.vocab.eos_token_ids)
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    device = next(model.parameters()).device
    cache_name = _cache_argument(model)
    ahead = StepAhead(engine) if overlap else None
    timings = {"grammask_s": 0.0, "forced_s": 0.0, "n_forward": 0, "n_forced": 0}
    generated: list[int] = []
    feed = list(prompt)
    past = None
    finish_reason = "stop"
    started = time.perf_counter()
    try:
        while True:
            if force_tokens:
                t0 = time.perf_counter()
                if ahead is not None:
                    ahead.wait()
                forced = engine.compute_forced_tokens(max_tokens=max_new_tokens - len(generated))
                for token_id in forced:
                    engine.try_accept_new_token(token_id)
                timings["forced_s"] += time.perf_counter() - t0
                timings["n_forced"] += len(forced)
                generated += forced
                feed += forced
            if len(generated) >= max_new_tokens:
                finish_reason = "length"
                break
            with torch.no_grad():
                output = model(input_ids=torch.tensor([feed], device=device), use_cache=True,
                               **{cache_name: past})
            timings["n_forward"] += 1
            past = output[cache_name]
            logits = output.logits[0, -1].float()
            t0 = time.perf_counter()
            if ahead is not None:
                ahead.wait()
            engine.mask_logits(logits)
            timings["grammask_s"] += time.perf_counter() - t0
            token_id = _pick(logits, temperature, generator)
            t0 = time.perf_counter()
            if ahead is not None and token_id not in eos_ids:
                ahead.submit([token_id])    # accepted, and the next mask computed, during the next forward
            else:
                engine.try_accept_new_token(token_id)
            timings["grammask_s"] += time.perf_counter() - t0
            if token_id in eos_ids:
                break
            generated.append(token_id)
            feed = [token_id]
        if ahead is not None:
            ahead.wait()
    finally:
        if ahead is not None:
            ahead.close()
    timings["ahead_s"] = ahead.seconds if ahead is not None else 0.0
    timings["generate_s"] = time.perf_counter() - started
    timings["tokens_per_s"] = len(generated) / timings["generate_s"] if timings["generate_s"] else 0.0
    complete = engine.is_finished() or engine.can_end()
    if not complete and warn:
        warnings.warn(
            f"generation stopped after {len(generated)} tokens ({finish_reason}) before the output "
            f"was complete: the text is a valid prefix only; raise max_new_tokens",
            IncompleteOutputWarning, stacklevel=2)
    return GenerationResult(text=engine.output_bytes().decode("utf-8", errors="replace"), data=None,
                            complete=complete, finish_reason=finish_reason, token_ids=generated,
                            n_forced=timings["n_forced"], timings=timings, engine=engine)


def _cache_argument(model) -> str:
    """The KV cache's name in ``model.forward`` and its output: ``cache``
    (transformers >= 5.24) or ``past_key_values`` (before)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _pick(logits: torch.Tensor, temperature: float, generator) -> int:
    """Greedy at temperature 0, else a softmax sample (masked logits are -inf)."""
    if temperature <= 0.0:
        return int(torch.argmax(logits))
    probabilities = torch.softmax(logits / temperature, dim=-1).cpu()
    return int(torch.multinomial(probabilities, 1, generator=generator))


class GrammaskLogitsProcessor(LogitsProcessor):
    """Batched grammar masks for ``model.generate(logits_processor=...)``.

    ``engine_or_compiled``: a ``grammask.Engine`` (its current state is the
    template for every row) or a ``CompiledGrammar``.  ``pad_token_id``: the
    id transformers writes into finished rows (allowed there besides EOS).
    ``seed_prompt_context``: hand each row's prompt to the canonical filter.
    """

    def __init__(self, engine_or_compiled, *, pad_token_id: Optional[int] = None,
                 seed_prompt_context: bool = True):
        self._template = _engine_from(engine_or_compiled)
        self.pad_token_id = pad_token_id
        self.seed_prompt_context = seed_prompt_context
        eos_ids = list(self._template.vocab.eos_token_ids)
        self._end_ids = np.asarray(eos_ids + ([pad_token_id] if pad_token_id is not None
                                              and pad_token_id not in eos_ids else []), dtype=np.int64)
        self._eos_ids = frozenset(eos_ids)
        self.n_calls = 0
        self.seconds = 0.0
        self.reset()

    def reset(self) -> None:
        """Forget the current generation; the next call starts a new one."""
        self.engines: list = []
        self.ended: list[bool] = []
        self.prompt_length: Optional[int] = None
        self._previous_ids: Optional[np.ndarray] = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        started = time.perf_counter()
        ids = input_ids.detach().cpu().numpy()
        if ids.ndim != 2 or scores.ndim != 2 or ids.shape[0] != scores.shape[0]:
            raise ValueError(f"expected input_ids [batch, length] and scores [batch, V], got "
                             f"{tuple(input_ids.shape)} and {tuple(scores.shape)}")
        if not self._continue_generation(ids):
            self._start_generation(ids)
        self._previous_ids = ids.copy()
        for row, engine in enumerate(self.engines):
            if self.ended[row]:
                self._only_end_ids(scores[row])
            else:
                engine.mask_logits(scores[row])
        self.n_calls += 1
        self.seconds += time.perf_counter() - started
        return scores

    # -- following the batch ---------------------------------------------------

    def _start_generation(self, ids: np.ndarray) -> None:
        self.reset()
        self.prompt_length = ids.shape[1]
        for row in range(ids.shape[0]):
            engine = self._template.copy()
            if self.seed_prompt_context and engine.n_accepted == 0:
                engine.seed_canonical_context(ids[row].tolist())
            self.engines.append(engine)
            self.ended.append(False)

    def _continue_generation(self, ids: np.ndarray) -> bool:
        previous = self._previous_ids
        if previous is None or ids.shape[1] != previous.shape[1] + 1:
            return False
        width = previous.shape[1]
        if ids.shape[0] == previous.shape[0] and np.array_equal(ids[:, :width], previous):
            for row in range(ids.shape[0]):
                self._feed(row, int(ids[row, -1]))
            return True
        parents = []
        for row in range(ids.shape[0]):
            matches = np.flatnonzero((previous == ids[row, :width]).all(axis=1))
            if len(matches) == 0:
                return False
            parents.append(int(matches[0]))
        self.engines = [self.engines[parent].copy() for parent in parents]
        self.ended = [self.ended[parent] for parent in parents]
        for row in range(ids.shape[0]):
            self._feed(row, int(ids[row, -1]))
        return True

    def _feed(self, row: int, token_id: int) -> None:
        if self.ended[row]:
            return
        self.engines[row].try_accept_new_token(token_id)
        self.ended[row] = token_id in self._eos_ids

    def _only_end_ids(self, row_scores: torch.Tensor) -> None:
        index = torch.as_tensor(self._end_ids, device=row_scores.device)
        kept = row_scores[index].clone()
        row_scores.fill_(float("-inf"))
        row_scores[index] = kept

    # -- after generate ----------------------------------------------------------

    def finish(self, sequences) -> list[bool]:
        """Feed each row's last token of ``model.generate``'s output (not
        passed back by transformers) and return, per row, whether its output
        is complete (EOS accepted, or a complete sentence at max length)."""
        ids = sequences.detach().cpu().numpy() if isinstance(sequences, torch.Tensor) \
            else np.asarray(sequences)
        previous = self._previous_ids
        if previous is None:
            raise ValueError("finish() before any generation step")
        if ids.shape[0] != len(self.engines) or ids.shape[1] < previous.shape[1]:
            raise ValueError(f"sequences {ids.shape} do not extend the generation "
                             f"({len(self.engines)} rows of {previous.shape[1]} tokens)")
        for row in range(len(self.engines)):
            for token_id in ids[row, previous.shape[1]:]:
                self._feed(row, int(token_id))
        self._previous_ids = ids.copy()
        return [engine.is_finished() or engine.can_end() for engine in self.engines]

    def generated_token_ids(self, row: int) -> list[int]:
        """Row ``row``'s generated tokens up to and including its first EOS."""
        ids = self._previous_ids[row, self.prompt_length:].tolist()
        for index, token_id in enumerate(ids):
            if token_id in self._eos_ids:
                return ids[:index + 1]
        return ids

