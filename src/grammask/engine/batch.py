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
    The caller's thread and a persistent pool of ``threads - 1`` workers each
    take the next engine not yet taken (dynamic, so a worker the OS wakes
    late costs nothing: the caller will have taken its share, and a helper
    still queued at the end is cancelled, not awaited).  Each mask is
    computed into its engine's own bitset (``Engine.allowed_bitset``): the
    Cython mask computation
    (``grammask._core.mask_computer``) runs its exit-trie walks and
    token-set builds without the GIL, so threads overlap there (the rest of
    a mask holds it: docs/benchmarks.md, "Batched masks").  Rows are written once every
    mask is known; float32 / float64 logits rows are masked by the pool too
    (``grammask._core.logits.mask_rows`` releases the GIL).

Invariants
    * Everything is validated before anything is computed or written: the
      types of the engines, rows and output, the output's dtype, shape and
      writability, the rows' range and uniqueness, every engine's vocabulary
      width against the output, and no Engine object twice (an engine is
      never used by two threads at once).  Errors are typed
      (``grammask.errors``).
    * When computing a mask raises (``LimitExceeded``, say), nothing is
      written and the first failing row's error is raised; every engine is
      left as it was (``Engine``'s own invariant).
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
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np

from grammask._core.logits import mask_rows
from grammask.engine.engine import Engine
from grammask.engine.logits import apply_mask, check_logits
from grammask.errors import IndexOutOfRange, InvalidArgument, InvalidArgumentType, VocabularyError

__all__ = ["BatchMasker", "fill_next_token_bitmask_batch"]

MAX_DEFAULT_THREADS = 4
"""Default thread count: the CPU count, at most this.  Only a mask's GIL-free
part overlaps (the engine's bookkeeping and the cache lookups hold the GIL,
more than a third of a warm mask's CPU time), so further threads add GIL
handoffs, not throughput."""


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


def _plan(engines, rows, n_rows: int) -> list:
    """The (row, engine or None) pairs of a call, validated against an
    output of ``n_rows`` rows."""
    if isinstance(engines, (str, bytes, Engine)) or not hasattr(engines, "__len__"):
        raise InvalidArgumentType(
            f"engines must be a sequence of Engine or None, got {type(engines).__name__}")
    engines = list(engines)
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
    if rows is None:
        rows = range(len(engines))
    elif isinstance(rows, (str, bytes)) or not hasattr(rows, "__len__"):
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
    return list(zip(checked, engines))


def _check_bitmask_kind(bitmask) -> None:
    """A writable int32 2-D numpy array or torch tensor (its width is checked
    against the engines once they are)."""
    if isinstance(bitmask, np.ndarray):
        if bitmask.dtype != np.int32:
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
    """Masks for a batch of engines on a persistent thread pool.

    ``BatchMasker(threads=None)``: ``threads`` computing threads, the
    caller's included (default: the CPU count, at most
    ``MAX_DEFAULT_THREADS``).  Use as a context manager or ``close()`` it."""

    def __init__(self, threads: Optional[int] = None):
        self.threads = _check_threads(threads)
        self._pool = (ThreadPoolExecutor(self.threads - 1, thread_name_prefix="grammask-batch")
                      if self.threads > 1 else None)
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        """Stop the pool's threads (idempotent); the masker is unusable after."""
        with self._lock:
            self._closed = True
            if self._pool is not None:
                self._pool.shutdown(wait=True)

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
        _check_bitmask_kind(bitmask)
        plan = _plan(engines, rows, bitmask.shape[0])
        for _, engine in plan:
            if engine is not None and engine.compiled.n_words != bitmask.shape[1]:
                raise VocabularyError(f"bitmask rows have {bitmask.shape[1]} words, an engine's "
                                      f"vocabulary needs {engine.compiled.n_words}")
        masks = self._compute(plan)
        host = _host_rows(bitmask)
        target = host if host is not None else np.empty((len(plan), bitmask.shape[1]), np.int32)
        for index, (row, _) in enumerate(plan):
            target[row if host is not None else index] = (-1 if masks[index] is None
                                                          else masks[index].view(np.int32))
        if host is None:
            import torch
            index = torch.as_tensor([row for row, _ in plan], dtype=torch.long, device=bitmask.device)
            bitmask.index_copy_(0, index, torch.from_numpy(target).to(bitmask.device))

    def mask_logits(self, engines, logits, rows=None):
        """Set, in place, the logits of row ``rows[i]`` (default i) that
        engine i disallows to ``-inf`` (columns past its vocabulary too);
        ``None`` rows are left alone.  numpy or torch, [n_rows, V'].
        Returns ``logits``."""
        self._check_open()
        if not isinstance(logits, np.ndarray) and not _is_tensor(logits):
            raise InvalidArgumentType(
                f"logits must be a numpy array or a torch tensor, got {type(logits).__name__}")
        if len(logits.shape) != 2:
            raise VocabularyError(f"batch logits must be [rows, V], got shape {tuple(logits.shape)}")
        plan = _plan(engines, rows, logits.shape[0])
        check_logits(logits, max((engine.compiled.vocab.size for _, engine in plan if engine is not None),
                                 default=0))
        masks = self._compute(plan)
        host = _host_rows(logits)
        jobs = [(row, mask, engine.compiled.vocab.size)
                for (row, engine), mask in zip(plan, masks) if engine is not None]
        if host is not None and host.dtype in (np.float32, np.float64):
            self._run(jobs, lambda job: mask_rows(host[job[0]:job[0] + 1], job[1], job[2]))
        else:
            for row, mask, vocab_size in jobs:
                apply_mask(logits[row], mask, vocab_size)
        return logits

    # -- internals --------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidArgument("this BatchMasker is closed")

    def _compute(self, plan) -> list:
        """Each row's mask bitset (None for a None engine), the engines'
        masks computed on the pool."""
        masks: list = [None] * len(plan)

        def compute(index):
            masks[index] = plan[index][1].allowed_bitset()

        self._run([index for index, (_, engine) in enumerate(plan) if engine is not None], compute)
        return masks

    def _run(self, items: list, work) -> None:
        """``work(item)`` for every item: the caller's thread and up to
        ``threads - 1`` pool threads each take the next untaken item until
        none is left; a helper still queued when the items run out is
        cancelled rather than awaited.  Every item is tried, then the error
        of the first failing item in order is raised."""
        errors: dict = {}
        positions = itertools.count()  # next() is atomic under the GIL

        def drain():
            for position in positions:
                if position >= len(items):
                    return
                try:
                    work(items[position])
                except BaseException as error:  # re-raised below, in item order
                    errors[position] = error

        n_helpers = min(self.threads - 1, len(items) - 1)
        helpers = [self._pool.submit(drain) for _ in range(n_helpers)]
        drain()
        for helper in helpers:
            if not helper.cancel():
                helper.result()
        if errors:
            raise errors[min(errors)]

def fill_next_token_bitmask_batch(engines, bitmask, rows=None, threads: Optional[int] = None) -> None:
    """``BatchMasker(threads).fill_bitmask(engines, bitmask, rows)`` with a
    masker for this call alone (keep a ``BatchMasker`` to reuse its threads)."""
    with BatchMasker(threads) as masker:
        masker.fill_bitmask(engines, bitmask, rows)
