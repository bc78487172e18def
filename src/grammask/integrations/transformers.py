"""transformers integration: a batched LogitsProcessor for ``model.generate``.

What it computes
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

Invariants
    * ``engines[row]`` has accepted exactly ``input_ids[row, prompt_length:]``
      up to and including its first EOS.
    * A row never gets an empty mask: a finished row keeps EOS (and pad).

Seed: the outlines lab (docs/references.md) (the processor hook, EOS only
when accepting).
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np
import torch
from transformers import LogitsProcessor


class GrammaskLogitsProcessor(LogitsProcessor):
    """Batched grammar masks for ``model.generate(logits_processor=...)``.

    ``engine_or_compiled``: a ``grammask.Engine`` (its current state is the
    template for every row) or a ``CompiledGrammar``.  ``pad_token_id``: the
    id transformers writes into finished rows (allowed there besides EOS).
    ``seed_prompt_context``: hand each row's prompt to the canonical filter.
    """

    def __init__(self, engine_or_compiled, *, pad_token_id: Optional[int] = None,
                 seed_prompt_context: bool = True):
        from grammask.engine import CompiledGrammar, Engine

        if isinstance(engine_or_compiled, Engine):
            self._template = engine_or_compiled.copy()
        elif isinstance(engine_or_compiled, CompiledGrammar):
            self._template = Engine(engine_or_compiled)
        else:
            raise TypeError(f"expected a grammask.Engine or CompiledGrammar, "
                            f"got {type(engine_or_compiled).__name__}")
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

