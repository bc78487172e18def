"""Token sets built ahead of decoding, while the caller waits on the model.

What it computes
    ``TokenSetPrefetch(engine)`` starts a daemon thread that builds, through
    ``MaskComputer.terminal_tokens`` (the grammar's cache, then the
    vocabulary's ``TokenSetStore`` and its disk tier), the token sets the
    engine's next masks are likely to ask for: first the mask of the
    engine's current state (on a copy: every set it needs, and the state's
    entry in the whole-mask cache), then every state of the literal
    terminals (a few bytes each), then the states of every DFA terminal
    over the vocabulary trie, cheapest first across all DFAs, where a path's
    cost is one per printable ASCII byte but a space or a backslash, and
    ``DETOUR_COST`` per other byte (whitespace runs, escapes, multi-byte
    characters): a counted string's first positions come before a long
    whitespace run's.  ``stop()`` ends it
    after the set being built and waits for the thread.  ``generate``
    (``grammask.integrations.llama_cpp``) runs one while llama.cpp evaluates
    the prompt, a wait of hundreds of milliseconds in which the builds
    (GIL-free walks) use the core the model leaves idle (``n_threads=1``
    on two cores), so the first visit of each state no longer builds its
    sets inside a decoding step.

Data layout
    A heap of (cost, DFA id, local state) over every DFA at once
    (Dijkstra's order: a state is expanded at its cheapest cost); the
    states of one DFA class share one set (``state_representatives``), built
    once.  Consecutive builds of a DFA are neighbouring states, so most are
    derived from the one before (``build_terminal_tokens_relative``).

Invariants
    Token sets depend only on (trie, terminal, state): building one ahead
    changes no mask, only when its cost is paid.  At most ``MAX_SETS`` sets
    (a module constant) are built per prefetch, and they enter the same
    bounded caches a decoding would fill (the store's LRU; the grammar's
    per-state cache holds only sets of its own states).  An error in the
    thread ends the prefetch and is kept in ``error``; the decoding meets it
    again where it would have anyway.

Source: xgrammar overlaps its grammar compilation with the model's prefill
(the idea; nothing is shared with it); issue "Cold path at peer speed".
"""

from __future__ import annotations

import heapq
import os
import sys
import threading
from typing import Optional

import numpy as np

MAX_SETS = 1024
"""Token sets one prefetch builds at most (on the demo's schema and SmolLM2's
49k vocabulary, 124-142 ms of CPU with a warm disk tier; without one, 247
DFA states took 85 ms; each set is a few KB to tens of KB)."""

NICENESS = 19
"""The prefetch thread's nice value once the first mask is computed (Linux:
per thread), so that on a busy machine it yields the CPU to the model
instead of slowing the prompt.  ``stop()`` then waits at most for one set
built at that priority."""

DETOUR_COST = 8
"""Cost of a space, a backslash or a byte outside printable ASCII on a path from a
DFA's start: such bytes (whitespace runs, escapes, UTF-8 continuations)
are rarer in outputs than the characters of a string or a number."""


class TokenSetPrefetch:
    """Builds an engine's likely next token sets on a daemon thread (see the module docstring)."""

    def __init__(self, engine, max_sets: int = MAX_SETS):
        self.max_sets = max_sets
        self.n_built = 0
        self.error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._engine = engine.copy()
        self._thread = threading.Thread(target=self._run, name="grammask-token-set-prefetch",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the prefetch after the set being built; wait for the thread."""
        self._stop.set()
        self._thread.join()

    def join(self, timeout: Optional[float] = None) -> None:
        """Wait until the prefetch ends by itself (every set built, or ``max_sets``)."""
        self._thread.join(timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            # the first mask at the caller's priority: the decoding needs it
            # first, and ``stop()`` may wait for it
            self._engine.allowed_bitset()
            _lower_priority()
            self._build_literal_states()
            self._build_dfa_states()
        except Exception as error:  # the decoding meets it again, where it would have
            self.error = error

    def _build_literal_states(self) -> None:
        computer = self._engine.compiled.mask_computer
        lnf = computer.tables.lnf
        offsets = lnf.terminal_literal_offsets.tolist()
        for terminal_id in np.flatnonzero(lnf.terminal_dfa_ids < 0).tolist():
            for progress in range(offsets[terminal_id + 1] - offsets[terminal_id]):
                if self.n_built >= self.max_sets or self._stop.is_set():
                    return
                computer.terminal_tokens(computer.vocab_trie, terminal_id, progress)
                self.n_built += 1

    def _build_dfa_states(self) -> None:
        computer = self._engine.compiled.mask_computer
        lnf = computer.tables.lnf
        trie = computer.vocab_trie
        representatives = np.asarray(computer.state_representatives)
        terminal_of = {int(dfa_id): terminal_id
                       for terminal_id, dfa_id in enumerate(lnf.terminal_dfa_ids.tolist()) if dfa_id >= 0}
        bases = np.concatenate([[0], np.cumsum([dfa.n_states for dfa in lnf.dfas])]).tolist()
        heap = [(0, dfa_id, lnf.dfas[dfa_id].start) for dfa_id in sorted(terminal_of)
                if lnf.dfas[dfa_id].start != 0]
        heapq.heapify(heap)
        costs = {(dfa_id, state): 0 for _, dfa_id, state in heap}
        class_costs = [_class_costs(dfa) for dfa in lnf.dfas]
        built = set()
        while heap and self.n_built < self.max_sets and not self._stop.is_set():
            cost, dfa_id, state = heapq.heappop(heap)
            if cost > costs[(dfa_id, state)]:
                continue    # reached more cheaply since it was pushed
            progress = int(representatives[bases[dfa_id] + state])
            if (dfa_id, progress) not in built:
                built.add((dfa_id, progress))
                computer.terminal_tokens(trie, terminal_of[dfa_id], progress)
                self.n_built += 1
            dfa = lnf.dfas[dfa_id]
            for target, step in zip(dfa.transitions[state].tolist(), class_costs[dfa_id]):
                if target != 0 and cost + step < costs.get((dfa_id, target), cost + step + 1):
                    costs[(dfa_id, target)] = cost + step
                    heapq.heappush(heap, (cost + step, dfa_id, target))


def _lower_priority() -> None:
    """Run the calling thread at ``NICENESS`` where the OS allows it per
    thread (Linux): the prefetch then takes only CPU the model leaves idle."""
    if not sys.platform.startswith("linux"):
        return  # elsewhere the id would name a process, not this thread
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
    except OSError:
        pass


def _class_costs(dfa) -> list:
    """Per byte class of ``dfa``: 1 when it holds a printable ASCII byte
    other than a space or a backslash, else ``DETOUR_COST``."""
    plain = np.zeros(dfa.n_classes, dtype=bool)
    codes = np.arange(0x21, 0x7F)
    plain[np.asarray(dfa.class_map)[codes[codes != 0x5C]]] = True
    return np.where(plain, 1, DETOUR_COST).tolist()
