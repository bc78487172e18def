"""Accepting a sampled token and computing the next mask while the model evaluates it.

What it computes
    ``StepAhead(engine)`` owns a worker thread.  ``submit(token_ids)``
    hands it the tokens just sampled (and any forced ones evaluated with
    them): the worker accepts them into the engine and computes the
    engine's next mask (``Engine.allowed_bitset``, kept in the engine), so
    that when the model's next logits arrive the decoding step only applies
    a mask that is ready.  ``wait()`` blocks until the job is done and
    returns the ids it accepted, or raises what accepting them raised.
    A decoding loop calls ``submit`` right after sampling, evaluates the
    tokens with the model (llama.cpp releases the GIL for the forward
    pass), and calls ``wait`` before it touches the engine again.

Data layout
    One pending job at most: its token ids, a ``threading.Event`` set when
    it is done, and the exception it raised (if any).  Jobs reach the
    thread through a ``queue.SimpleQueue``; ``None`` stops it.

Invariants
    Between ``submit`` and ``wait`` only the worker touches the engine (the
    caller must not); after ``wait`` the engine is exactly where accepting
    the ids one by one on the caller's thread would have left it, the same
    masks included (the worker runs the engine's own calls, in the same
    order).  A job that raises leaves the engine as the synchronous loop
    would have (the tokens before the refused one accepted).  ``seconds``
    adds up the worker's thread CPU time per job: the grammar's work that
    the overlap took off the decoding loop's critical path.  ``close()``
    waits for a pending job and ends the thread; ``shutdown()`` only asks
    the thread to end after its job (safe from any thread, a finalizer's
    included), so an owner that is garbage-collected does not leave it
    waiting forever.

Source: XGrammar (Dong et al., 2024) overlaps the CPU's mask computation
with the GPU's forward pass; here the forward pass runs on the CPU too,
and the overlap uses the core the model leaves idle (``n_threads=1`` on
two cores).  Issue "Cold path at peer speed" (the demo's per-token cost).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Optional, Sequence

from grammask.errors import InvalidArgument


class StepAhead:
    """A worker thread that accepts sampled tokens and computes the next mask (see the module docstring)."""

    def __init__(self, engine):
        self.engine = engine
        self.seconds = 0.0
        self.n_jobs = 0
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._done = threading.Event()
        self._done.set()
        self._pending: Optional[tuple] = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._serve, name="grammask-step-ahead", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> bool:
        """A job was submitted and not yet waited for."""
        return self._pending is not None

    def submit(self, token_ids: Sequence[int]) -> None:
        """Accept ``token_ids`` and compute the next mask on the worker."""
        if self._pending is not None:
            raise InvalidArgument("StepAhead.submit: the previous job was not waited for")
        if not self._thread.is_alive():
            raise InvalidArgument("StepAhead.submit: the worker is closed")
        self._pending = tuple(int(token_id) for token_id in token_ids)
        self._done.clear()
        self._jobs.put(self._pending)

    def wait(self) -> tuple:
        """The ids the pending job accepted (``()`` when none is pending),
        once it is done; re-raises the job's exception."""
        token_ids = self._pending
        if token_ids is None:
            return ()
        self._done.wait()
        self._pending = None
        error, self._error = self._error, None
        if error is not None:
            raise error
        return token_ids

    def close(self) -> None:
        """Wait for a pending job (its result is dropped) and end the thread."""
        if self._thread.is_alive():
            self._done.wait()
            self._pending = None
            self._error = None
            self.shutdown()
            self._thread.join()

    def shutdown(self) -> None:
        """Ask the thread to end once its job (if any) is done; returns at once."""
        self._jobs.put(None)

    def _serve(self) -> None:
        while True:
            token_ids = self._jobs.get()
            if token_ids is None:
                return
            started = time.thread_time()
            try:
                for token_id in token_ids:
                    self.engine.try_accept_new_token(token_id)
                if not self.engine.is_finished():
                    self.engine.allowed_bitset()
            except BaseException as error:  # handed to the caller by wait()
                self._error = error
            finally:
                self.seconds += time.thread_time() - started
                self.n_jobs += 1
                self._done.set()
