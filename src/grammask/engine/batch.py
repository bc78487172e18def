"""Batched masks: the bitmask rows or logits rows of many engines in one call.

What it computes
    ``BatchMasker.fill_bitmask(engines, bitmask, rows)`` writes engine i's
    current mask into row ``rows[i]`` of an int32 ``[n_rows, ceil(V/32)]``
    array or tensor (xgrammar's layout, as ``Engine.fill_bitmask``), and
    all-ones into the row of a ``None`` entry (an unconstrained sequence).
    ``BatchMasker.mask_logits(engines, logits, rows)`` sets, in place, the
    logits of row ``rows[i]`` that engine i disallows to ``-inf`` (as
    ``Engine.mask_logits``: columns past the vocabulary are disallowed);
    ``None`` rows are left alone.  ``fill_next_token_bitmask_batch`` is the
    one-call form with a masker for the call.

Data layout
    A call runs in three phases.  (1) With the GIL, serially: validation,
    then every engine's GIL-free job is queued on a ``MaskBatch``
    (``grammask._core.mask_computer``), read in C from the engine's
    ``MaskState`` (an engine whose grammar caches whole masks first looks
    its mask up, ``Engine._queue_cached_mask``).  (2) Without the GIL: the
    caller's thread and the ``threads - 1`` helpers of a ``MaskWorkers``
    each take the jobs of their own segment of the batch (the jobs
    ordered by grammar), then any left in the others': a whole mask step
    in C (the token sets read from the grammar's C table, the exit-trie
    walks, EOS) into the engine's own bitset; once all are done, each
    thread copies the masks it computed into their rows, then any not yet
    copied.  Helpers sleep on a lock and are woken, cancelled or awaited
    without the GIL; one the OS wakes late costs nothing (the
    caller will have taken its share, and a helper not started yet is
    cancelled, not awaited); a helper polls for the next call for
    ``LINGER_NS`` after a run before it sleeps again.  (3) With the GIL: ``MaskBatch.finish`` marks
    the masks valid; a job left undone because a token set was not built
    yet, and an engine with token-level filters (canonical filter, token
    terminals), take the ordinary ``Engine.allowed_bitset`` on the caller
    and the same helpers (``MaskWorkers.run_python``: each takes the GIL,
    and the masks' GIL-free parts overlap), except that a mask already
    known (nothing accepted since it was computed) is read on the caller
    alone; and their rows, and the
    all-ones rows of ``None`` entries, are written last.  float32 /
    float64 logits rows are masked that way too
    (``grammask._core.logits.mask_rows`` releases the GIL).  The helpers
    are woken as a call starts (``MaskWorkers.prepare``), so their
    wake-up overlaps phase (1), and the engines are checked while they
    are queued (``MaskBatch.add_engines``).
    docs/benchmarks.md, "Batched masks", measures the GIL-free share.

Invariants
    * Everything is validated before anything is computed or written: the
      types of the engines, rows and output, the output's dtype, shape and
      writability, the rows' range and uniqueness, every engine's vocabulary
      width against the output, and no Engine object twice (an engine is
      never used by two threads at once).  Errors are typed
      (``grammask.errors``).
    * When computing a mask raises (``LimitExceeded``, say), nothing is
      written and the first failing row's error is raised; every engine is
      left as it was (``Engine``'s own invariant).  The threads copy rows
      only once every job is done and no other mask remains to compute.
    * Results equal one-by-one ``Engine.fill_bitmask`` / ``Engine.mask_logits``
      calls: engines stay independent, and what they share (the compiled
      grammar's caches, the canonical filter and lookahead) locks its writes.

Seeds: llguidance's ``fill_next_token_bitmask_par`` and xgrammar's
``BatchGrammarMatcher`` (one call per decoding step, masks on a thread pool).
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from typing import Optional

import numpy as np

from grammask._core.logits import mask_rows
from grammask._core.mask_computer import MaskBatch, MaskWorkers
from grammask.engine.engine import Engine
from grammask.engine.logits import apply_mask, check_logits
from grammask.errors import IndexOutOfRange, InvalidArgument, InvalidArgumentType, VocabularyError

__all__ = ["BatchMasker", "fill_next_token_bitmask_batch"]

MAX_DEFAULT_THREADS = 4
"""Default thread count: the CPU count, at most this.  Only a call's GIL-free
phase overlaps (validation, queueing and the ordinary masks hold the GIL),
so further threads add hand-offs, not throughput."""


def _default_threads() -> int:
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_THREADS))


def _check_threads(threads) -> int:
    if threads is None:
        return _default_threads()
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise InvalidArgumentType(f"threads must be an int or None, got {type(threads).__name__}")
    if threads < 1:
        raise InvalidArgument(f"threads must be at least 1, got {threads}")
    return int(threads)


def _plan(engines, rows, n_rows: int, check_engines: bool = True) -> tuple:
    """(rows, engines or None) of a call, two lists of equal length (rows a
    range by default), validated against an output of ``n_rows`` rows; the
    entries of ``engines`` too unless ``check_engines`` is false (then
    ``MaskBatch.add_engines`` checks them, before anything is computed)."""
    if isinstance(engines, (str, bytes, Engine)) or not hasattr(engines, "__len__"):
        raise InvalidArgumentType(
            f"engines must be a sequence of Engine or None, got {type(engines).__name__}")
    engines = list(engines)
    if check_engines:
        present = [engine for engine in engines if engine is not None]
        # (an Engine hashes by identity: a set of them counts distinct engines)
        if not all([issubclass(kind, Engine) for kind in set(map(type, present))]) \
                or len(set(present)) != len(present):
            _explain_engines(engines)
    if rows is None:
        if len(engines) > n_rows:
            raise IndexOutOfRange(f"row {n_rows} outside an output of {n_rows} rows")
        return range(len(engines)), engines
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__len__"):
        raise InvalidArgumentType(f"rows must be a sequence of ints or None, got {type(rows).__name__}")
    if len(rows) != len(engines):
        raise InvalidArgument(f"{len(rows)} rows given for {len(engines)} engines")
    checked = []
    for row in rows:
        if isinstance(row, bool) or not isinstance(row, (int, np.integer)):
            raise InvalidArgumentType(f"rows must hold ints, got {type(row).__name__}")
        if not 0 <= row < n_rows:
            raise IndexOutOfRange(f"row {row} outside an output of {n_rows} rows")
        checked.append(int(row))
    if len(set(checked)) != len(checked):
        raise InvalidArgument("rows holds a row twice")
    return checked, engines


def _explain_engines(engines: list) -> None:
    """Raise the error of the first entry of ``engines`` that is neither an
    Engine nor None, or that repeats an earlier engine (or shares its mask
    state)."""
    seen = set()
    for index, engine in enumerate(engines):
        if engine is None:
            continue
        if not isinstance(engine, Engine):
            raise InvalidArgumentType(
                f"engines[{index}] must be an Engine or None, got {type(engine).__name__}")
        if id(engine) in seen:
            raise InvalidArgument(
                f"engines[{index}] appears twice in the batch: an engine is one sequence "
                "(use Engine.copy() for another)")
        seen.add(id(engine))
    raise InvalidArgument("two engines of the batch share one mask state")


_INT32 = np.dtype(np.int32)


def _check_bitmask_kind(bitmask) -> None:
    """A writable int32 2-D numpy array or torch tensor (its width is checked
    against the engines once they are)."""
    if isinstance(bitmask, np.ndarray):
        if bitmask.dtype != _INT32:
            raise InvalidArgumentType(f"bitmask must have dtype int32, got {bitmask.dtype}")
        if not bitmask.flags.writeable:
            raise InvalidArgument("bitmask array is read-only")
    elif _is_tensor(bitmask):
        import torch
        if bitmask.dtype != torch.int32:
            raise InvalidArgumentType(f"bitmask must have dtype torch.int32, got {bitmask.dtype}")
    else:
        raise InvalidArgumentType(
            f"bitmask must be a numpy array or a torch tensor, got {type(bitmask).__name__}")
    if len(bitmask.shape) != 2:
        raise VocabularyError(f"a batch bitmask must be [rows, words], got shape {tuple(bitmask.shape)}")


def _is_tensor(value) -> bool:
    import sys
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _host_rows(array) -> Optional[np.ndarray]:
    """A numpy view of a numpy array or CPU torch tensor, else None."""
    if isinstance(array, np.ndarray):
        return array
    if array.device.type == "cpu":
        return array.numpy()
    return None


class BatchMasker:
    """Masks for a batch of engines on persistent helper threads.

    ``BatchMasker(threads=None)``: ``threads`` computing threads, the
    caller's included (default: the CPU count, at most
    ``MAX_DEFAULT_THREADS``).  Use as a context manager or ``close()`` it."""

    def __init__(self, threads: Optional[int] = None):
        self.threads = _check_threads(threads)
        self._workers = MaskWorkers(self.threads - 1)
        self._helpers = [threading.Thread(target=self._workers.serve, args=(k,), daemon=True,
                                          name=f"grammask-mask-{k}")
                         for k in range(self.threads - 1)]
        for helper in self._helpers:
            helper.start()
        # a masker dropped unclosed still ends its helpers
        self._stop_helpers = weakref.finalize(self, self._workers.stop)
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        """Stop the threads (idempotent); the masker is unusable after."""
        with self._lock:
            self._closed = True
            self._stop_helpers()
            for helper in self._helpers:
                helper.join()

    def __enter__(self) -> "BatchMasker":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"BatchMasker(threads={self.threads}{', closed' if self._closed else ''})"

    # -- the two calls ---------------------------------------------------------

    def fill_bitmask(self, engines, bitmask, rows=None) -> None:
        """Write engine i's mask into row ``rows[i]`` (default i) of an int32
        ``[n_rows, ceil(V/32)]`` numpy array or torch tensor; a ``None``
        engine's row becomes all-ones.  Other rows are left alone."""
        self._check_open()
        self._prepare(engines)
        _check_bitmask_kind(bitmask)
        rows, engines = _plan(engines, rows, bitmask.shape[0], check_engines=False)
        host = _host_rows(bitmask)
        target = host if host is not None else np.empty((len(rows), bitmask.shape[1]), np.int32)
        target_rows = rows if host is not None else range(len(rows))
        # (the engines' vocabulary widths are checked against the rows' there)
        masks = self._compute(engines, target if target.flags.c_contiguous else None, target_rows,
                              bitmask.shape[1])
        if None in engines:
            target[[row for row, engine in zip(target_rows, engines) if engine is None]] = -1
        for index, mask in masks.items():
            target[target_rows[index]] = mask.view(np.int32)
        if host is None:
            import torch
            index = torch.as_tensor(list(rows), dtype=torch.long, device=bitmask.device)
            bitmask.index_copy_(0, index, torch.from_numpy(target).to(bitmask.device))

    def mask_logits(self, engines, logits, rows=None):
        """Set, in place, the logits of row ``rows[i]`` (default i) that
        engine i disallows to ``-inf`` (columns past its vocabulary too);
        ``None`` rows are left alone.  numpy or torch, [n_rows, V'].
        Returns ``logits``."""
        self._check_open()
        self._prepare(engines)
        if not isinstance(logits, np.ndarray) and not _is_tensor(logits):
            raise InvalidArgumentType(
                f"logits must be a numpy array or a torch tensor, got {type(logits).__name__}")
        if len(logits.shape) != 2:
            raise VocabularyError(f"batch logits must be [rows, V], got shape {tuple(logits.shape)}")
        rows, engines = _plan(engines, rows, logits.shape[0])
        check_logits(logits, max((engine.compiled.vocab.size for engine in engines if engine is not None),
                                 default=0))
        masks = self._compute(engines)
        host = _host_rows(logits)
        jobs = [(rows[index], mask, engines[index].compiled.vocab.size)
                for index, mask in sorted(masks.items())]
        if host is not None and host.dtype in (np.float32, np.float64):
            errors: dict = {}
            self._run(list(range(len(jobs))),
                      lambda i: mask_rows(host[jobs[i][0]:jobs[i][0] + 1], jobs[i][1], jobs[i][2]),
                      errors)
            if errors:
                raise errors[min(errors)]
        else:
            for row, mask, vocab_size in jobs:
                apply_mask(logits[row], mask, vocab_size)
        return logits

    # -- internals --------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidArgument("this BatchMasker is closed")

    def _prepare(self, engines) -> None:
        """Wake the helpers when the call has masks for more than one
        thread (checked again, with the rest, by ``_plan``)."""
        if self.threads > 1 and isinstance(engines, (list, tuple)) and len(engines) > 1:
            self._workers.prepare()

    def _compute(self, engines: list, target=None, target_rows=None, n_words: int = -1) -> dict:
        """The engines' masks, in three phases: the engines' GIL-free jobs
        are queued (from their ``MaskState``s, in C; an engine whose grammar
        caches whole masks through ``Engine._queue_cached_mask``), the
        threads run them (``MaskWorkers.run``), and ``MaskBatch.finish``
        marks the masks valid.  A job left undone (a token set to build)
        and an engine with token-level filters are computed the ordinary
        way on the same threads (``_run``).  With ``target`` (C-contiguous int32 rows), the
        threads also copy the jobs' masks into row ``target_rows[i]`` once
        all are done, when no other mask remains to compute (so a failing
        one writes nothing).  With ``n_words`` >= 0, ``VocabularyError``
        (before anything is computed) unless every engine's masks have that
        many words.  Returns {index: mask bitset} for every engine whose
        mask was not copied."""
        errors: dict = {}
        keys: dict = {}
        ordinary = []
        pending = False  # an ordinary engine whose mask may still fail
        batch = MaskBatch(target)
        others = batch.add_engines(engines, Engine, None if target is None else target_rows, n_words)
        if others is None:
            _explain_engines(engines)
        for index in others:
            engine = engines[index]
            try:
                job = engine._queue_cached_mask(batch, -1 if target is None else target_rows[index],
                                                index)
            except Exception as error:  # raised below, in row order
                errors[index] = error
                continue
            if job is None:
                ordinary.append(index)
                pending = pending or not engine._mask_ready()
            else:
                keys[index] = job[1]
        if len(batch):
            if pending or errors:
                batch.forget_rows()
            self._workers.run(batch)
        attention = dict(batch.finish())
        masks = {} if batch.rows_written else {
            index: engine._bits for index, engine in enumerate(engines) if engine is not None}
        for index, key in keys.items():
            if index not in attention:
                engines[index]._cache_mask(key, 0, False)
        for index, job in attention.items():
            engine = engines[index]
            try:
                result = batch.result(job)
            except Exception as error:
                errors[index] = error
                continue
            if result is None:
                ordinary.append(index)
                continue
            if index in keys:
                engine._cache_mask(keys[index], 0, result[1])
            if result[1]:
                engine._warn_dead_end()

        def compute(index):
            masks[index] = engines[index].allowed_bitset()

        # A mask already known is read here; handing it to a helper costs a
        # GIL hand-off each (two threads took twice one's time on a batch
        # of known masks).
        unknown = []
        for index in sorted(ordinary):
            if engines[index]._mask_ready():
                compute(index)
            else:
                unknown.append(index)
        if unknown:
            self._run(unknown, compute, errors)
        if errors:
            raise errors[min(errors)]
        return masks

    def _run(self, items: list, work, errors: dict) -> None:
        """``work(item)`` for every item: the caller's thread and up to
        ``threads - 1`` helpers each take the next untaken item until none
        is left; a helper still asleep when the items run out is cancelled
        rather than awaited.  Every item is tried; a failing item's error
        goes into ``errors`` under the item."""
        positions = itertools.count()  # next() is atomic under the GIL

        def drain():
            for position in positions:
                if position >= len(items):
                    return
                try:
                    work(items[position])
                except BaseException as error:  # the caller raises it, in item order
                    errors[items[position]] = error

        self._workers.run_python(drain, min(self.threads - 1, len(items) - 1))


def fill_next_token_bitmask_batch(engines, bitmask, rows=None, threads: Optional[int] = None) -> None:
    """``BatchMasker(threads).fill_bitmask(engines, bitmask, rows)`` with a
    masker for this call alone (keep a ``BatchMasker`` to reuse its threads)."""
    with BatchMasker(threads) as masker:
        masker.fill_bitmask(engines, bitmask, rows)
