# cython: language_level=3
"""Byte-level Earley recognizer with Leo's optimization, jagged Earley sets,
O(1) pop and compaction.

What it computes: after each pushed byte, whether the bytes so far are a
viable prefix of the grammar's language (a push fails otherwise and leaves the
state unchanged), whether they form a whole sentence, and which bytes may come
next.  It follows the seed the kbnf post (docs/references.md)
("Modifications to the original Earley algorithm"), Leo (1991) and Loup
Vaillant's Earley tutorial; compaction follows kbnf / the ZapFormat paper
(arXiv 2506.01151).

Data layout (declared in earley.pxd):
  * ``Item`` = (dot, origin, progress, nt), four int32.  ``dot`` indexes the
    flat LNF symbol array and points at the symbol after the dot, so advancing
    is ``dot + 1``; ``progress`` is the position inside the post-dot terminal
    (0 = not started; literal: bytes matched; DFA: the DFA state after >= 1
    byte); ``nt`` is what the item completes as (its production's lhs; after
    compaction possibly the top of a Leo chain, with ``origin`` to match).
  * Earley sets are rows of one contiguous, growable ``items`` buffer (a
    jagged array): set s is ``items[set_starts[s]:set_starts[s+1]]``, scan
    items (post-dot terminal) first, then from ``set_nt_starts[s]`` the items
    waiting for a nonterminal.  Pushing a byte appends a row; popping n bytes
    truncates n rows (O(1) per set).
  * Completed items are never stored: a completion is a pair (nt, origin)
    processed while the set is built, deduplicated per set.
  * Predictions are deduplicated per set by nonterminal (``predicted_stamps``).
  * Leo memo, filled lazily with the (set, nt) entries of Leo chains: one
    slot stored next to each set (right recursion then touches only recent
    memory) plus a hash table for the rest, validated by the set's serial
    number (sets popped and pushed again get new serials).

Algorithm for one byte (set n = n_sets is built from the top set n - 1):
  1. scan: every scan item of the top set whose terminal accepts the byte is
     carried over with its new progress (if the terminal can continue) and/or
     advanced past the terminal (if the terminal can end here; both for a DFA
     that can end and continue);
  2. complete: pending (nt, origin) pairs advance the items of set ``origin``
     that wait for nt.  With Leo, (nt, origin) is first replaced by the top of
     its deterministic chain (see ``_leo_top``);
  3. predict: each item waiting for nonterminal B adds B's productions once.
  LNF has no empty productions, so every completion in set n has origin < n:
  sets are final once built and the three phases need no fixpoint between
  them (Aycock-Horspool's nullable handling is not needed).

Invariants (what keeps the nogil loops in bounds):
  * every item's dot indexes a symbol of its production (never past its end),
    because ``_advance`` turns "past the end" into a completion;
  * literal progress is in [0, len) and DFA progress is 0 or a live state in
    (0, n_states) (CompiledTables checked all tables; dead and hopeless states
    map to 0 and are never stored);
  * 0 <= origin < the index of the set holding the item, or == it for
    predictions; all origins are < n_sets;
  * set_starts[0] == 0, set_starts[s] <= set_nt_starts[s] <= set_starts[s+1],
    set_starts[n_sets] == n_items <= items_capacity.
Viability: the grammar is productive (LNF invariant), so a prefix is viable iff
its set has a scan item or completes the start symbol.

Leo (the definition the seed warns about): completing (A, j) is
deterministic iff set j holds exactly one item whose post-dot symbol is A and
advancing that item completes its production (as (B, i)).  Then completing
(A, j) equals completing (B, i), and recursively: ``_leo_top`` follows this
chain to its top and memoizes it per (set, nt), so right recursion costs O(1)
per byte instead of O(depth).  The chain never steps past (start, 0), so
acceptance is never skipped.

Performance notes (benchmarks/bench_earley.py, one shared 2-core EPYC, CPU
time; see benchmarks/results/bench_earley.json for the current figures):
  * A set costs a fixed part (begin, partition check, header writes) plus
    per-item work; ``A ::= 'a' A | 'a'`` (3 items and one Leo completion per
    set) runs at ~45 ns/byte, JSON (~4 items per set) at ~90-110 ns/byte.
  * Dedup first scanned the new set through a hash table for every item; most
    sets hold 1-4 non-predicted items, so sets up to DEDUP_LINEAR_MAX items
    are compared linearly and the table is filled only past that (the JSON
    push+pop probe went from ~260 to ~125 ns).
  * Leo without care costs cache misses: a hash-table memo grows with the
    input (one entry per byte under right recursion), so each lookup missed
    cache and time per byte rose 2-4x from 1 KB to 100 KB.  The memo now keeps
    one entry next to each set (recent sets are hot) and stores chain entries
    only (a "no Leo item" answer costs one scan of the set, as the completion
    that follows does anyway): flat time per byte.
  * Memory without compaction is ~230 B per input byte on JSON (items 16 B,
    ~4 per set, plus 37 B of per-set header); with a rollback horizon of 64
    bytes, 1 MB of JSON leaves ~0.2 MB.

Files: this one (set building, the byte-recognizer interface, the token-mask
hooks, the Python API); earley_buffers.pxi (buffer growth, per-set scratch
hash tables); earley_leo.pxi (Leo memo, compaction); earley_key.pxi (the
compaction-invariant state key, ``state_key``); earley_debug.pxi (the
readable dump of the sets, ``debug_sets``); earley_tables.pyx (the flat
grammar and DFA tables shared by all recognizers of a grammar).

Compaction (``compact``): items in the kept sets have their (nt, origin)
folded to the top of their Leo chain, then every set that is neither within
the rollback horizon nor referenced (transitively) by an origin is dropped and
origins are renumbered.  Popping below the horizon raises afterwards.
"""

from libc.stdint cimport uint8_t, int32_t, uint32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy

from grammask.config import Config
from grammask.errors import LimitExceeded

from grammask._core.earley_tables cimport CompiledTables, GrammarView, TerminalInfo, DfaInfo

import bisect
import weakref

cdef int ERROR_NONE = 0
cdef int ERROR_LIMIT = 1
cdef int ERROR_MEMORY = 2
cdef int ERROR_WORK_SET = 3
cdef int ERROR_WORK_BUDGET = 4
cdef uint64_t UNLIMITED = 0xFFFFFFFFFFFFFFFF
cdef int64_t LEO_NONE = -1
cdef int64_t LEO_ERROR = -2
cdef int64_t LOW32 = 0xFFFFFFFF
# Sets being built with at most this many items are deduplicated by a scan.
cdef Py_ssize_t DEDUP_LINEAR_MAX = 8

_tables_cache = weakref.WeakKeyDictionary()


def compiled_tables(lnf):
    """The CompiledTables of ``lnf``, built once per LNF object when it can be
    weakly referenced (otherwise built on every call)."""
    if isinstance(lnf, CompiledTables):
        return lnf
    try:
        tables = _tables_cache.get(lnf)
    except TypeError:
        return CompiledTables(lnf)
    if tables is None:
        tables = CompiledTables(lnf)
        _tables_cache[lnf] = tables
    return tables


cdef inline uint64_t _mix64(uint64_t x) noexcept nogil:
    # splitmix64 finalizer
    x ^= x >> 30
    x *= 0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= 0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef inline uint64_t _item_hash(const Item* item) noexcept nogil:
    return _mix64((<uint64_t><uint32_t>item.dot << 32 | <uint32_t>item.origin)
                  ^ _mix64(<uint64_t><uint32_t>item.progress << 32 | <uint32_t>item.nt))


cdef inline bint _same_item(const Item* a, const Item* b) noexcept nogil:
    return (a.dot == b.dot and a.origin == b.origin and a.progress == b.progress
            and a.nt == b.nt)


cdef inline int64_t _pair_key(int64_t origin, int32_t nt) noexcept nogil:
    return (origin << 32) | <int64_t>nt


cdef inline bint _spend(EarleyRecognizer self, uint64_t units) noexcept nogil:
    """Count ``units`` of work for the set being built; False, error_code
    set, once the set passes max_work_per_set or everything since
    ``limit_work`` passes work_budget.  A unit is one item read or written
    while a set is built: a scan item of the top set, an item of an origin
    set that a completion looks through (plus one for the completion
    itself), a predicted item."""
    self.work_spent += units
    if self.work_spent - self.set_work_start > self.max_work_per_set:
        self.error_code = ERROR_WORK_SET
        return False
    if self.work_spent > self.work_budget:
        self.error_code = ERROR_WORK_BUDGET
        return False
    return True


cdef inline Py_ssize_t _pow2_at_least(Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t capacity = 64
    while capacity < n:
        capacity *= 2
    return capacity



cdef class EarleyRecognizer(ByteRecognizer):
    """Earley recognizer over one LNF grammar, consuming bytes.

    ``EarleyRecognizer(lnf, max_items=Config.max_earley_items,
    rollback_horizon=None, max_work_per_set=Config.max_earley_work_per_byte)``:
    ``lnf`` is an LNF object or its prebuilt ``CompiledTables`` (build those
    once per grammar and share them).  ``max_work_per_set`` bounds the work
    of building one Earley set (units: ``_spend``); ``limit_work`` also
    bounds the work of every set built until the next call.
    ``rollback_horizon``: None keeps every Earley set (``pop`` can go back to
    the start, memory grows with the input); an int n compacts automatically
    while keeping the last n bytes poppable (``compact`` can also be called).
    """

    def __cinit__(self, *args, **kwargs):
        self.items = NULL
        self.set_starts = NULL
        self.set_nt_starts = NULL
        self.set_serials = NULL
        self.set_accepting = NULL
        self.set_leo_nts = NULL
        self.set_leo_tops = NULL
        self.dedup_slots = NULL
        self.dedup_stamps = NULL
        self.done_keys = NULL
        self.done_stamps = NULL
        self.completion_queue = NULL
        self.predicted_stamps = NULL
        self.predict_stack = NULL
        self.leo_entries = NULL
        self.chain_keys = NULL
        self.chain_steps = NULL
        self.partition_scratch = NULL
        self.key_sets = NULL
        self.key_item_sigs = NULL
        self.key_scratch = NULL

    def __dealloc__(self):
        free(self.items)
        free(self.set_starts)
        free(self.set_nt_starts)
        free(self.set_serials)
        free(self.set_accepting)
        free(self.set_leo_nts)
        free(self.set_leo_tops)
        free(self.dedup_slots)
        free(self.dedup_stamps)
        free(self.done_keys)
        free(self.done_stamps)
        free(self.completion_queue)
        free(self.predicted_stamps)
        free(self.predict_stack)
        free(self.leo_entries)
        free(self.chain_keys)
        free(self.chain_steps)
        free(self.partition_scratch)
        free(self.key_sets)
        free(self.key_item_sigs)
        free(self.key_scratch)

    def __init__(self, lnf, max_items=None, rollback_horizon=None, max_work_per_set=None, *,
                 use_leo=True):
        self.tables = compiled_tables(lnf)
        self.grammar = &self.tables.view
        self.max_items = Config.max_earley_items if max_items is None else int(max_items)
        if self.max_items < 1:
            raise ValueError("max_items must be positive")
        if max_work_per_set is None:
            max_work_per_set = Config.max_earley_work_per_byte
        if int(max_work_per_set) < 1:
            raise ValueError("max_work_per_set must be positive")
        self.max_work_per_set = int(max_work_per_set)
        self.limit_work(None)
        if rollback_horizon is not None and int(rollback_horizon) < 0:
            raise ValueError("rollback_horizon must be None or >= 0")
        self.rollback_horizon = None if rollback_horizon is None else int(rollback_horizon)
        self.use_leo = bool(use_leo)
        self._allocate(64, 64)
        self._init_start_set()
        self.raise_pending_error()
        self.compact_trigger = self._next_compact_trigger()

    cdef _allocate(self, Py_ssize_t items_capacity, Py_ssize_t sets_capacity):
        self.items_capacity = items_capacity
        self.sets_capacity = sets_capacity
        self.items = <Item*>malloc(items_capacity * sizeof(Item))
        self.set_starts = <int64_t*>malloc((sets_capacity + 1) * sizeof(int64_t))
        self.set_nt_starts = <int64_t*>malloc(sets_capacity * sizeof(int64_t))
        self.set_serials = <uint64_t*>malloc(sets_capacity * sizeof(uint64_t))
        self.set_accepting = <uint8_t*>malloc(sets_capacity * sizeof(uint8_t))
        self.set_leo_nts = <int32_t*>malloc(sets_capacity * sizeof(int32_t))
        self.set_leo_tops = <int64_t*>malloc(sets_capacity * sizeof(int64_t))
        self.predicted_stamps = <uint64_t*>calloc(self.grammar.n_nonterminals, sizeof(uint64_t))
        self.predict_stack = <int32_t*>malloc(self.grammar.n_nonterminals * sizeof(int32_t))
        self.leo_capacity = 64
        self.leo_entries = <LeoEntry*>malloc(self.leo_capacity * sizeof(LeoEntry))
        if (self.items == NULL or self.set_starts == NULL or self.set_nt_starts == NULL
                or self.set_serials == NULL or self.set_accepting == NULL
                or self.set_leo_nts == NULL or self.set_leo_tops == NULL
                or self.predicted_stamps == NULL or self.predict_stack == NULL
                or self.leo_entries == NULL):
            raise MemoryError()
        _leo_clear(self)
        # serial 0 is never used, so zeroed stamps never match
        self.next_serial = 1

    cdef void _init_start_set(self) noexcept nogil:
        """Set 0: the start symbol's productions and their predictions."""
        cdef const GrammarView* tables = self.grammar
        cdef int32_t start_id = tables.start_id
        cdef int32_t p
        self.n_sets = 0
        self.n_items = 0
        self.n_sets_keyed = 0
        self.set_starts[0] = 0
        if self._begin_set() < 0:
            return
        self.predicted_stamps[start_id] = self.dedup_stamp
        if not _reserve_items(self, tables.nonterminal_production_offsets[start_id + 1]
                                   - tables.nonterminal_production_offsets[start_id]):
            return
        for p in range(tables.nonterminal_production_offsets[start_id],
                       tables.nonterminal_production_offsets[start_id + 1]):
            self.items[self.n_items].dot = tables.production_symbol_offsets[p]
            self.items[self.n_items].origin = 0
            self.items[self.n_items].progress = 0
            self.items[self.n_items].nt = start_id
            self.n_items += 1
        if not self._predict(0):
            return
        # The start set always exists, even for an empty language.
        self._finish_set(0, tables.start_accepts_empty, True)

    cdef Py_ssize_t _next_compact_trigger(self):
        if self.rollback_horizon is None:
            return -1
        return 2 * self.n_sets + <Py_ssize_t>self.rollback_horizon + 256

    def limit_work(self, budget, name="max_earley_work_per_mask"):
        """Bound the work (units: ``_spend``) of every set built from now
        until the next call to ``budget`` units in all (None: unbounded);
        past it a push fails and raises LimitExceeded naming ``name``."""
        if budget is not None and int(budget) < 1:
            raise ValueError("a work budget must be positive")
        self.work_budget_name = name
        self.limit_work_units(0 if budget is None else int(budget))

    cdef void limit_work_units(self, uint64_t budget) noexcept nogil:
        self.work_budget = UNLIMITED if budget == 0 else budget
        self.work_spent = 0
        self.set_work_start = 0

    cdef void reset_work_spent(self, uint64_t spent) noexcept nogil:
        self.work_spent = spent
        self.set_work_start = spent

    cdef raise_pending_error(self):
        """Raise the error a nogil call recorded (LimitExceeded naming
        max_earley_items, max_earley_work_per_byte or the work budget's
        field, or MemoryError), clearing it; no-op if none."""
        cdef int code = self.error_code
        self.error_code = ERROR_NONE
        if code == ERROR_LIMIT:
            raise LimitExceeded("max_earley_items", self.n_items_requested, self.max_items,
                                f"Earley items after {self.n_bytes} bytes")
        if code == ERROR_WORK_SET:
            raise LimitExceeded("max_earley_work_per_byte", self.work_spent - self.set_work_start,
                                self.max_work_per_set,
                                f"Earley work of one byte after {self.n_bytes} bytes")
        if code == ERROR_WORK_BUDGET:
            raise LimitExceeded(self.work_budget_name, self.work_spent, self.work_budget,
                                f"Earley work after {self.n_bytes} bytes")
        if code == ERROR_MEMORY:
            raise MemoryError("Earley recognizer: out of memory")

    # ------------------------------------------------------------------
    # Building one set
    # ------------------------------------------------------------------

    cdef Py_ssize_t _begin_set(self) noexcept nogil:
        """Start set n_sets; returns its first item index, or -1 on error."""
        if not _reserve_sets(self):
            return -1
        self.set_serials[self.n_sets] = self.next_serial
        self.dedup_stamp = self.next_serial
        self.dedup_n_tabled = 0
        self.next_serial += 1
        self.n_done = 0
        self.n_queued = 0
        self.set_work_start = self.work_spent
        return self.n_items

    cdef bint _add_item(self, int32_t dot, int32_t origin, int32_t progress, int32_t nt,
                        Py_ssize_t set_start) noexcept nogil:
        cdef Item candidate
        cdef int inserted
        candidate.dot = dot
        candidate.origin = origin
        candidate.progress = progress
        candidate.nt = nt
        if not _reserve_items(self, 1):
            return False
        inserted = _dedup_insert(self, &candidate, set_start, self.n_items)
        if inserted < 0:
            return False
        if inserted == 1:
            self.items[self.n_items] = candidate
            self.n_items += 1
        return True

    cdef bint _advance(self, Item item, Py_ssize_t set_start) noexcept nogil:
        """The post-dot symbol of ``item`` has just been matched."""
        if self.grammar.symbol_is_last[item.dot]:
            return _enqueue_completion(self, item.nt, item.origin)
        return self._add_item(item.dot + 1, item.origin, 0, item.nt, set_start)

    cdef bint _close_set(self, Py_ssize_t set_start) noexcept nogil:
        """Completions then predictions for the set being built (index n_sets,
        items from set_start); commits it if viable.  On failure the set is
        discarded and False returned."""
        cdef const GrammarView* tables = self.grammar
        cdef Py_ssize_t head = 0, idx, end
        cdef int64_t key, top
        cdef int32_t nt, origin
        cdef bint is_accepting = False
        cdef Item item
        # Phase 2: completions (origins < n_sets, so their sets are final).
        while head < self.n_queued:
            key = self.completion_queue[head]
            head += 1
            self.n_completion_steps += 1
            nt = <int32_t>(key & LOW32)
            origin = <int32_t>(key >> 32)
            if not _spend(self, 1 + self.set_starts[origin + 1] - self.set_nt_starts[origin]):
                self.n_items = set_start
                return False
            if self.use_leo:
                top = _leo_top(self, origin, nt)
                if top == LEO_ERROR:
                    self.n_items = set_start
                    return False
                if top != LEO_NONE:
                    if not _mark_done(self, top):
                        if self.error_code != ERROR_NONE:
                            self.n_items = set_start
                            return False
                        continue
                    nt = <int32_t>(top & LOW32)
                    origin = <int32_t>(top >> 32)
            if nt == tables.start_id and origin == 0:
                is_accepting = True
            end = self.set_starts[origin + 1]
            for idx in range(self.set_nt_starts[origin], end):
                if tables.symbol_ids[self.items[idx].dot] == nt:
                    item = self.items[idx]
                    if not self._advance(item, set_start):
                        self.n_items = set_start
                        return False
        # Phase 3: predictions (never complete within this set: no empty productions).
        if not self._predict(set_start):
            self.n_items = set_start
            return False
        return self._finish_set(set_start, is_accepting, False)

    cdef bint _predict(self, Py_ssize_t set_start) noexcept nogil:
        """Add the productions of every nonterminal that an item of the set
        being built waits for, and of every nonterminal starting such a
        production, once per nonterminal.  Predicted items are never
        revisited: nonterminals to predict go through ``predict_stack``
        (each at most once per set, so n_nonterminals entries suffice)."""
        cdef const GrammarView* tables = self.grammar
        cdef Py_ssize_t idx, n_stack = 0
        cdef int32_t b, c, p, first
        cdef int32_t new_set_id = <int32_t>self.n_sets
        cdef uint64_t stamp = self.dedup_stamp
        for idx in range(set_start, self.n_items):
            first = self.items[idx].dot
            if tables.symbol_is_nonterminal[first]:
                b = tables.symbol_ids[first]
                if self.predicted_stamps[b] != stamp:
                    self.predicted_stamps[b] = stamp
                    self.predict_stack[n_stack] = b
                    n_stack += 1
        while n_stack > 0:
            n_stack -= 1
            b = self.predict_stack[n_stack]
            if not _spend(self, tables.nonterminal_production_offsets[b + 1]
                          - tables.nonterminal_production_offsets[b]):
                return False
            if not _reserve_items(self, tables.nonterminal_production_offsets[b + 1]
                                  - tables.nonterminal_production_offsets[b]):
                return False
            for p in range(tables.nonterminal_production_offsets[b],
                           tables.nonterminal_production_offsets[b + 1]):
                first = tables.production_symbol_offsets[p]
                self.items[self.n_items].dot = first
                self.items[self.n_items].origin = new_set_id
                self.items[self.n_items].progress = 0
                self.items[self.n_items].nt = b
                self.n_items += 1
                if tables.symbol_is_nonterminal[first]:
                    c = tables.symbol_ids[first]
                    if self.predicted_stamps[c] != stamp:
                        self.predicted_stamps[c] = stamp
                        self.predict_stack[n_stack] = c
                        n_stack += 1
        return True

    cdef bint _finish_set(self, Py_ssize_t set_start, bint is_accepting, bint force) noexcept nogil:
        """Partition the new set (scan items first) and commit it, unless it
        is dead (no scan item, not accepting) and not ``force``."""
        cdef const GrammarView* tables = self.grammar
        cdef Py_ssize_t n_total = self.n_items - set_start
        cdef Py_ssize_t idx, n_scan = 0, n_waiting = 0
        cdef bint partitioned = True
        cdef Item* grown
        for idx in range(set_start, self.n_items):
            if not tables.symbol_is_nonterminal[self.items[idx].dot]:
                n_scan += 1
                partitioned = partitioned and n_scan == idx - set_start + 1
        if n_scan == 0 and not is_accepting and not force:
            self.n_items = set_start
            return False
        if not partitioned and n_total > self.partition_capacity:
            grown = <Item*>realloc(self.partition_scratch, n_total * sizeof(Item))
            if grown == NULL:
                self.error_code = ERROR_MEMORY
                self.n_items = set_start
                return False
            self.partition_scratch = grown
            self.partition_capacity = n_total
        # Stable partition (unless already): scan items first, then waiting items.
        if not partitioned:
            for idx in range(set_start, self.n_items):
                if tables.symbol_is_nonterminal[self.items[idx].dot]:
                    self.partition_scratch[n_waiting] = self.items[idx]
                    n_waiting += 1
                else:
                    self.items[idx - n_waiting] = self.items[idx]
            memcpy(&self.items[set_start + n_scan], self.partition_scratch, n_waiting * sizeof(Item))
        self.set_nt_starts[self.n_sets] = set_start + n_scan
        self.set_accepting[self.n_sets] = is_accepting
        self.set_leo_nts[self.n_sets] = -1
        self.n_sets += 1
        self.set_starts[self.n_sets] = self.n_items
        return True

    # ----------------------------------------------------------------------
    # Byte-recognizer interface (recognizer.pxd)
    # ----------------------------------------------------------------------

    cdef bint try_push_byte(self, uint8_t byte) noexcept nogil:
        cdef const GrammarView* tables = self.grammar
        cdef Py_ssize_t top = self.n_sets - 1
        cdef Py_ssize_t set_start, idx, scan_end
        cdef Item item
        cdef const TerminalInfo* terminal
        cdef const DfaInfo* dfa
        cdef int32_t state, next_state
        cdef int64_t global_state
        cdef bint ok
        if self.error_code != ERROR_NONE:
            return False
        set_start = self._begin_set()
        if set_start < 0:
            return False
        scan_end = self.set_nt_starts[top]
        if not _spend(self, scan_end - self.set_starts[top]):
            self.n_items = set_start
            return False
        # Phase 1: scan.  Items of the top set are read by index: appending to
        # the new set may move the buffer.
        for idx in range(self.set_starts[top], scan_end):
            item = self.items[idx]
            terminal = &tables.terminal_infos[tables.symbol_ids[item.dot]]
            ok = True
            if not terminal.is_dfa:
                # 0 <= progress < literal_len, so the byte read is inside the literal.
                if tables.literal_bytes[terminal.literal_start + item.progress] == byte:
                    if item.progress + 1 == terminal.literal_len:
                        ok = self._advance(item, set_start)
                    else:
                        ok = self._add_item(item.dot, item.origin, item.progress + 1, item.nt, set_start)
            else:
                dfa = &tables.dfa_infos[terminal.dfa_id]
                state = item.progress if item.progress != 0 else dfa.start
                next_state = tables.transitions[dfa.transitions_start + <int64_t>state * dfa.n_classes
                                                + tables.class_maps[dfa.class_map_start + byte]]
                if next_state != 0:
                    global_state = dfa.state_base + next_state
                    if tables.state_accepting[global_state]:
                        ok = self._advance(item, set_start)
                    if ok and tables.state_can_continue[global_state]:
                        ok = self._add_item(item.dot, item.origin, next_state, item.nt, set_start)
            if not ok:
                self.n_items = set_start
                return False
        return self._close_set(set_start)

    cdef void pop_bytes(self, Py_ssize_t n_bytes) noexcept nogil:
        # Clamped to the rollback floor (the Python-level pop raises instead).
        cdef Py_ssize_t poppable = self.n_sets - 1 - self.rollback_floor
        if n_bytes > poppable:
            n_bytes = poppable
        if n_bytes <= 0:
            return
        self.n_sets -= n_bytes
        self.n_items = self.set_starts[self.n_sets]
        if self.n_sets_keyed > self.n_sets:
            self.n_sets_keyed = self.n_sets

    cdef bint accepting(self) noexcept nogil:
        return self.set_accepting[self.n_sets - 1] != 0

    cdef void allowed_bytes(self, uint64_t* bitset4) noexcept nogil:
        cdef const GrammarView* tables = self.grammar
        cdef Py_ssize_t top = self.n_sets - 1
        cdef Py_ssize_t idx
        cdef const TerminalInfo* terminal
        cdef const DfaInfo* dfa
        cdef const uint64_t* allowed
        cdef uint8_t byte
        cdef int32_t state
        bitset4[0] = 0
        bitset4[1] = 0
        bitset4[2] = 0
        bitset4[3] = 0
        for idx in range(self.set_starts[top], self.set_nt_starts[top]):
            terminal = &tables.terminal_infos[tables.symbol_ids[self.items[idx].dot]]
            if not terminal.is_dfa:
                byte = tables.literal_bytes[terminal.literal_start + self.items[idx].progress]
                bitset4[byte >> 6] |= (<uint64_t>1) << (byte & 63)
            else:
                dfa = &tables.dfa_infos[terminal.dfa_id]
                state = self.items[idx].progress if self.items[idx].progress != 0 else dfa.start
                allowed = &tables.state_allowed_bytes[(dfa.state_base + state) * 4]
                bitset4[0] |= allowed[0]
                bitset4[1] |= allowed[1]
                bitset4[2] |= allowed[2]
                bitset4[3] |= allowed[3]

    # ----------------------------------------------------------------------
    # Hooks for the token-mask walk
    # ----------------------------------------------------------------------

    cdef Py_ssize_t n_scan_items(self) noexcept nogil:
        """Items of the top set whose post-dot symbol is a terminal."""
        cdef Py_ssize_t top = self.n_sets - 1
        return self.set_nt_starts[top] - self.set_starts[top]

    cdef void scan_item(self, Py_ssize_t k, int32_t* terminal_id, int32_t* terminal_state) noexcept nogil:
        """Scan item k (0 <= k < n_scan_items()): its terminal id and its
        progress: the literal byte offset, or the DFA state (the start state when
        no byte of the terminal has been read yet)."""
        cdef const GrammarView* tables = self.grammar
        cdef Item* item = &self.items[self.set_starts[self.n_sets - 1] + k]
        cdef const TerminalInfo* terminal = &tables.terminal_infos[tables.symbol_ids[item.dot]]
        terminal_id[0] = tables.symbol_ids[item.dot]
        if terminal.is_dfa and item.progress == 0:
            terminal_state[0] = tables.dfa_infos[terminal.dfa_id].start
        else:
            terminal_state[0] = item.progress

    cdef bint push_terminal_end(self, Py_ssize_t k) noexcept nogil:
        """Push a set in which scan item k's terminal ends here, without a byte
        (pop it with pop_bytes(1)).  Only valid if the terminal has read >= 1
        byte and its DFA state accepts (a stored literal is never complete, so
        this is False for literals); False otherwise, state unchanged."""
        cdef Py_ssize_t top = self.n_sets - 1
        if k < 0 or k >= self.set_nt_starts[top] - self.set_starts[top]:
            return False
        return self.push_terminal_end_at(k, self.items[self.set_starts[top] + k].progress)

    cdef bint push_terminal_end_at(self, Py_ssize_t k, int32_t terminal_state) noexcept nogil:
        """Like push_terminal_end, but as if scan item k's terminal had reached
        ``terminal_state`` (bytes matched for a literal, must equal its length; a
        DFA state > 0 that accepts) through bytes the caller walked itself."""
        return self.push_terminal_ends_at(&k, 1, terminal_state)

    cdef bint push_terminal_ends_at(self, const Py_ssize_t* ks, Py_ssize_t n,
                                    int32_t terminal_state) noexcept nogil:
        """push_terminal_end_at for the scan items ks[0..n) at once: one set
        holding what each of their pushes would hold (the union: an Earley
        set's items are derived independently), so what the grammar allows
        after it is the union of what it allows after each.  Items whose
        terminal cannot end at ``terminal_state`` are left out; False, state
        unchanged, when none can (or on error)."""
        cdef const GrammarView* tables = self.grammar
        cdef Py_ssize_t top = self.n_sets - 1
        cdef Py_ssize_t n_scan = self.set_nt_starts[top] - self.set_starts[top]
        cdef Py_ssize_t set_start = -1, i, k
        cdef Item item
        cdef const TerminalInfo* terminal
        cdef const DfaInfo* dfa
        if self.error_code != ERROR_NONE:
            return False
        for i in range(n):
            k = ks[i]
            if k < 0 or k >= n_scan:
                continue
            item = self.items[self.set_starts[top] + k]
            terminal = &tables.terminal_infos[tables.symbol_ids[item.dot]]
            if not terminal.is_dfa:
                if terminal_state != terminal.literal_len:
                    continue
            else:
                dfa = &tables.dfa_infos[terminal.dfa_id]
                if terminal_state <= 0 or terminal_state >= dfa.n_states:
                    continue
                if not tables.state_accepting[dfa.state_base + terminal_state]:
                    continue
            if set_start < 0:
                set_start = self._begin_set()
                if set_start < 0:
                    return False
            if not self._advance(item, set_start):
                self.n_items = set_start
                return False
        if set_start < 0:
            return False
        return self._close_set(set_start)

    cdef bint state_key_into(self, uint64_t* out2) noexcept nogil:
        """128-bit key of the future (definition: earley_key.pxi) into
        out2[0..1]; only the sets built since the last call are hashed.
        False, error_code set, if memory ran out."""
        return _state_key(self, out2)

    # ----------------------------------------------------------------------
    # Python API
    # ----------------------------------------------------------------------

    def push_byte(self, int byte):
        """Push one byte (0..255).  Returns False, state unchanged, if the bytes
        would stop being a viable prefix.  Raises LimitExceeded (max_earley_items)
        or MemoryError, state unchanged."""
        if not 0 <= byte <= 255:
            raise ValueError(f"byte {byte} is outside 0..255")
        cdef bint ok
        with nogil:
            ok = self.try_push_byte(<uint8_t>byte)
        if not ok:
            self.raise_pending_error()
            return False
        self._auto_compact()
        return True

    def push_bytes(self, data):
        """Push all of ``data`` or nothing: returns False (state unchanged) at
        the first byte that is not viable."""
        cdef const uint8_t[::1] view = bytes(data)
        cdef Py_ssize_t i, n = view.shape[0]
        cdef bint ok = True
        if n == 0:
            return True
        with nogil:
            for i in range(n):
                if not self.try_push_byte(view[i]):
                    ok = False
                    self.pop_bytes(i)
                    break
        if not ok:
            self.raise_pending_error()
            return False
        self._auto_compact()
        return True

    def pop(self, Py_ssize_t n_bytes):
        """Undo the last ``n_bytes`` pushes.  Raises ValueError (state unchanged)
        beyond the rollback limit (bytes pushed since the start, or since the
        horizon of the last compaction)."""
        if n_bytes < 0:
            raise ValueError("cannot pop a negative number of bytes")
        if n_bytes > self.rollback_limit:
            raise ValueError(
                f"cannot pop {n_bytes} bytes: only the last {self.rollback_limit} are kept "
                f"(compaction keeps rollback_horizon={self.rollback_horizon} bytes)")
        self.pop_bytes(n_bytes)

    def is_accepting(self):
        """The bytes pushed so far form a sentence (at length 0:
        lnf.start_accepts_empty)."""
        return self.accepting()

    def allowed_first_bytes(self):
        """The bytes that can come next, as a 32-byte bitset: byte b is allowed
        iff bit (b & 7) of result[b >> 3] is set."""
        cdef uint64_t words[4]
        self.allowed_bytes(words)
        return b"".join(int(words[i]).to_bytes(8, "little") for i in range(4))

    def allowed_byte_values(self):
        """The bytes that can come next, as a sorted list of ints."""
        bitset = self.allowed_first_bytes()
        return [b for b in range(256) if bitset[b >> 3] >> (b & 7) & 1]

    @property
    def n_bytes(self):
        """Bytes pushed so far (minus pops), including bytes whose Earley sets
        compaction dropped."""
        return self.n_dropped_sets + self.n_sets - 1

    @property
    def rollback_limit(self):
        """How many bytes ``pop`` can undo now."""
        return self.n_sets - 1 - self.rollback_floor

    @property
    def n_earley_sets(self):
        """Earley sets held (n_bytes + 1 until compaction drops some)."""
        return self.n_sets

    def snapshot(self):
        """A cheap token for ``restore``: valid while only pushes and pops above
        it happen (no compaction, no pop below it followed by other pushes)."""
        return (self.n_sets, self.set_serials[self.n_sets - 1], self.compaction_epoch)

    def restore(self, token):
        """Go back to the state of ``snapshot()`` (pops the sets pushed since)."""
        n_sets, serial, epoch = token
        if (epoch != self.compaction_epoch or not self.rollback_floor < n_sets <= self.n_sets
                or self.set_serials[n_sets - 1] != serial):
            raise ValueError("snapshot is no longer valid for this recognizer "
                             "(popped below it, compacted since, or from another recognizer)")
        self.pop_bytes(self.n_sets - n_sets)

    def copy(self):
        """An independent recognizer in the same state (shares the tables)."""
        cdef EarleyRecognizer clone = EarleyRecognizer.__new__(EarleyRecognizer)
        clone.tables = self.tables
        clone.grammar = &clone.tables.view
        clone.max_items = self.max_items
        clone.max_work_per_set = self.max_work_per_set
        clone.limit_work(None)
        clone.rollback_horizon = self.rollback_horizon
        clone.use_leo = self.use_leo
        clone._allocate(max(self.n_items, 64), max(self.n_sets, 64))
        memcpy(clone.items, self.items, self.n_items * sizeof(Item))
        memcpy(clone.set_starts, self.set_starts, (self.n_sets + 1) * sizeof(int64_t))
        memcpy(clone.set_nt_starts, self.set_nt_starts, self.n_sets * sizeof(int64_t))
        memcpy(clone.set_serials, self.set_serials, self.n_sets * sizeof(uint64_t))
        memcpy(clone.set_accepting, self.set_accepting, self.n_sets * sizeof(uint8_t))
        memcpy(clone.set_leo_nts, self.set_leo_nts, self.n_sets * sizeof(int32_t))
        memcpy(clone.set_leo_tops, self.set_leo_tops, self.n_sets * sizeof(int64_t))
        clone.n_items = self.n_items
        clone.n_sets = self.n_sets
        clone.next_serial = self.next_serial
        clone.rollback_floor = self.rollback_floor
        clone.n_dropped_sets = self.n_dropped_sets
        clone.compaction_epoch = self.compaction_epoch
        clone.compact_trigger = self.compact_trigger
        return clone

    def __copy__(self):
        return self.copy()

    def compact(self, Py_ssize_t keep_last_bytes):
        """Drop Earley sets older than the last ``keep_last_bytes`` bytes that
        no live item refers to (after folding origins through Leo chains).
        Afterwards ``pop`` can undo at most ``keep_last_bytes`` bytes."""
        if keep_last_bytes < 0:
            raise ValueError("keep_last_bytes must be >= 0")
        if not _compact(self, keep_last_bytes):
            self.raise_pending_error()

    cdef _auto_compact(self):
        if self.compact_trigger >= 0 and self.n_sets >= self.compact_trigger:
            if not _compact(self, <Py_ssize_t>self.rollback_horizon):
                self.raise_pending_error()
            self.compact_trigger = self._next_compact_trigger()

    def stats(self):
        """Sizes: items per live Earley set, totals, bytes of memory held, and
        the number of completions processed so far."""
        cdef Py_ssize_t s
        sizes = [int(self.set_starts[s + 1] - self.set_starts[s]) for s in range(self.n_sets)]
        memory = (self.items_capacity * sizeof(Item)
                  + self.sets_capacity * (3 * sizeof(int64_t) + sizeof(uint64_t) + sizeof(int32_t)
                                      + sizeof(uint8_t))
                  + self.dedup_capacity * (sizeof(int32_t) + sizeof(uint64_t))
                  + self.done_capacity * (sizeof(int64_t) + sizeof(uint64_t))
                  + self.queue_capacity * sizeof(int64_t)
                  + self.grammar.n_nonterminals * (sizeof(uint64_t) + sizeof(int32_t))
                  + self.leo_capacity * sizeof(LeoEntry)
                  + self.chain_capacity * 2 * sizeof(int64_t)
                  + self.partition_capacity * sizeof(Item)
                  + self.key_sets_capacity * sizeof(KeySetEntry)
                  + (self.key_items_capacity + self.key_scratch_capacity) * 2 * sizeof(uint64_t))
        return {
            "items_per_set": sizes,
            "total_items": int(self.n_items),
            "n_sets": int(self.n_sets),
            "n_bytes": self.n_bytes,
            "memory_bytes": int(memory),
            "n_completion_steps": int(self.n_completion_steps),
            "n_leo_entries": int(self.n_leo_entries),
        }

    def scan_items(self):
        """(terminal_id, terminal_state) of each scan item of the top set (see
        scan_item)."""
        cdef int32_t terminal_id, terminal_state
        cdef Py_ssize_t k
        result = []
        for k in range(self.n_scan_items()):
            self.scan_item(k, &terminal_id, &terminal_state)
            result.append((terminal_id, terminal_state))
        return result

    def end_terminal(self, Py_ssize_t k, terminal_state=None):
        """Python access to push_terminal_end / push_terminal_end_at (pop the
        pushed set with pop(1))."""
        if terminal_state is None:
            ok = self.push_terminal_end(k)
        else:
            ok = self.push_terminal_end_at(k, <int32_t>terminal_state)
        if not ok:
            self.raise_pending_error()
        return ok

    def debug_sets(self):
        """The Earley sets held, as text: one dotted item per line
        (``A -> x . B y  (origin i)``), the memoized Leo chains of each set,
        items that compaction folded to a Leo top marked (format:
        earley_debug.pxi).  For debugging and golden tests; not fast."""
        return _debug_sets(self)

    def state_key(self):
        """16 bytes that are equal for two recognizers of the same grammar
        only if their futures are equal (same continuations accepted, same
        acceptance after each), up to 128-bit hash collisions; independent of
        byte positions and compaction (see earley_key.pxi)."""
        cdef uint64_t out2[2]
        cdef uint8_t key_bytes[16]
        cdef int i
        if not self.state_key_into(out2):
            self.raise_pending_error()
        for i in range(8):
            key_bytes[i] = <uint8_t>(out2[0] >> (8 * i))
            key_bytes[8 + i] = <uint8_t>(out2[1] >> (8 * i))
        return (<char*>key_bytes)[:16]


include "earley_buffers.pxi"
include "earley_leo.pxi"
include "earley_key.pxi"
include "earley_debug.pxi"
