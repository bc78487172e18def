# cython: language_level=3
"""Byte-level Earley recognizer (see earley.pyx for the algorithm and layout)."""

from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t

from grammask._core.recognizer cimport ByteRecognizer
from grammask._core.earley_tables cimport CompiledTables, GrammarView


# One Earley item, 16 bytes.  Completed items are never stored: an item whose
# dot would pass the end of its production becomes a pending completion
# (nt, origin) instead.
cdef struct Item:
    int32_t dot       # index into the flat symbol array: the symbol after the dot
    int32_t origin    # set index where the completion target (nt) started
    int32_t progress  # 0: the post-dot terminal is not started; literal: bytes
                      # matched (1 .. len-1); DFA: the DFA state (> 0) after >= 1 byte.
                      # Always 0 when the post-dot symbol is a nonterminal.
    int32_t nt        # nonterminal this item completes as: its production's lhs,
                      # or, after compaction, the top of its Leo chain


# Leo memo entry: completing (nt, set_id) is equivalent to completing
# (top_nt, top_origin), the top of its Leo chain.
cdef struct LeoEntry:
    int64_t key        # (set_id << 32) | nt, -1 for an empty slot
    uint64_t serial    # serial of set set_id when computed (stale if different)
    int32_t top_nt
    int32_t top_origin


# Per-set record of the state key (earley_key.pxi): the signature of the
# set's waiting items, where their target signatures start in key_item_sigs,
# and the last target signature computed with the set as origin (memo_nt =
# -1: none).
cdef struct KeySetEntry:
    int64_t sigs_start
    uint64_t waiting_lo
    uint64_t waiting_hi
    uint64_t memo_lo
    uint64_t memo_hi
    int32_t memo_nt


cdef class EarleyRecognizer(ByteRecognizer):
    cdef readonly CompiledTables tables
    cdef const GrammarView* grammar      # == &tables.view (kept alive by tables)
    cdef readonly Py_ssize_t max_items
    cdef object rollback_horizon         # None or int: automatic compaction policy
    cdef Py_ssize_t compact_trigger      # auto-compact when n_sets reaches this

    # Jagged Earley sets: set s is items[set_starts[s] : set_starts[s + 1]];
    # its scan items (post-dot terminal) come first, its nonterminal items
    # (post-dot nonterminal) from set_nt_starts[s].  set_starts[n_sets] == n_items.
    cdef Item* items
    cdef Py_ssize_t n_items
    cdef Py_ssize_t items_capacity
    cdef int64_t* set_starts             # [sets_capacity + 1]
    cdef int64_t* set_nt_starts          # [sets_capacity]
    cdef uint64_t* set_serials           # [sets_capacity] unique per created set
    cdef uint8_t* set_accepting          # [sets_capacity]
    # One Leo memo entry kept next to each set (the hash table below holds the
    # rest), so right recursion touches only recent, cached memory.
    cdef int32_t* set_leo_nts            # [sets_capacity] nt of the entry, -1 none
    cdef int64_t* set_leo_tops           # [sets_capacity] its top
    cdef Py_ssize_t n_sets
    cdef Py_ssize_t sets_capacity
    cdef uint64_t next_serial
    cdef Py_ssize_t rollback_floor       # lowest set index that may become the top again
    cdef Py_ssize_t n_dropped_sets       # sets removed by compaction (bytes before the kept ones)
    cdef uint64_t compaction_epoch
    cdef int error_code                  # 0 ok, 1 max_items exceeded, 2 out of memory,
                                         # 3 max_work_per_set, 4 work_budget exceeded
    cdef Py_ssize_t n_items_requested    # items a push needed when max_items was hit
    # Work (units: see _spend in earley.pyx), checked while sets are built
    cdef uint64_t max_work_per_set       # units one Earley set may cost
    cdef uint64_t work_budget            # units all sets built since limit_work() may cost
    cdef readonly uint64_t work_spent    # units spent since limit_work() (or creation)
    cdef uint64_t set_work_start         # work_spent when the set being built began
    cdef object work_budget_name         # the Config field named when work_budget is exceeded

    # Scratch (never copied): dedup of items of the set being built
    cdef int32_t* dedup_slots            # item index relative to the set start
    cdef uint64_t* dedup_stamps
    cdef Py_ssize_t dedup_capacity       # power of two
    cdef Py_ssize_t dedup_n_tabled       # items of the set being built already in the table
    # pending completions (nt, origin) of the set being built
    cdef int64_t* done_keys
    cdef uint64_t* done_stamps
    cdef Py_ssize_t done_capacity        # power of two
    cdef Py_ssize_t n_done
    cdef Py_ssize_t n_queued
    cdef uint64_t dedup_stamp
    cdef Item* partition_scratch
    cdef Py_ssize_t partition_capacity
    # Options and counters
    cdef bint use_leo                    # False only to measure what Leo saves
    cdef uint64_t n_completion_steps     # completions processed since creation
    cdef int64_t* completion_queue
    cdef Py_ssize_t queue_capacity
    cdef uint64_t* predicted_stamps      # [n_nonterminals]
    cdef int32_t* predict_stack          # [n_nonterminals] nonterminals left to predict
    # Leo memo (lazy, keyed by (set, nt), validated by set serials)
    cdef LeoEntry* leo_entries
    cdef Py_ssize_t leo_capacity         # power of two
    cdef Py_ssize_t n_leo_entries
    cdef int64_t* chain_keys
    cdef int64_t* chain_steps
    cdef Py_ssize_t chain_capacity
    # State key (earley_key.pxi), allocated on first use: per set, the
    # signature of its waiting items; per waiting item, the signature of the
    # completion it leads to.  Valid for sets [0, n_sets_keyed).
    cdef KeySetEntry* key_sets           # [key_sets_capacity]
    cdef Py_ssize_t key_sets_capacity
    cdef uint64_t* key_item_sigs         # [2 * key_items_capacity] (lo, hi) per waiting item
    cdef Py_ssize_t key_items_capacity
    cdef uint64_t* key_scratch           # [2 * key_scratch_capacity] item signatures to sort
    cdef Py_ssize_t key_scratch_capacity
    cdef Py_ssize_t n_sets_keyed
    cdef uint64_t key_last_serial         # serial of the top set of the last key, 0: none
    cdef uint64_t key_last[2]

    # Byte-recognizer interface.  try_push_byte / push_terminal_end* also
    # return False (state unchanged) when max_items, a work limit or memory
    # ran out: then error_code != 0, and raise_pending_error() (with the
    # GIL) raises LimitExceeded / MemoryError and clears it.  Until then the
    # error stays pending and every push fails at once, so a walk that
    # ignores failed pushes cannot lose it.
    cdef bint try_push_byte(self, uint8_t byte) noexcept nogil
    cdef void pop_bytes(self, Py_ssize_t n_bytes) noexcept nogil
    cdef bint accepting(self) noexcept nogil
    cdef void allowed_bytes(self, uint64_t* bitset4) noexcept nogil

    # Hooks for the token-mask walk (trie_walk.pyx, mask_computer.pyx)
    cdef Py_ssize_t n_scan_items(self) noexcept nogil
    cdef void scan_item(self, Py_ssize_t k, int32_t* terminal_id, int32_t* terminal_state) noexcept nogil
    cdef bint push_terminal_end(self, Py_ssize_t k) noexcept nogil
    cdef bint push_terminal_end_at(self, Py_ssize_t k, int32_t terminal_state) noexcept nogil
    cdef bint push_terminal_ends_at(self, const Py_ssize_t* ks, Py_ssize_t n,
                                    int32_t terminal_state) noexcept nogil
    # 128-bit key of the recognizer's future (earley_key.pxi): equal keys =>
    # same continuations accepted, same acceptance after each.  Writes
    # out2[0], out2[1]; False (error_code set) if memory ran out.
    cdef bint state_key_into(self, uint64_t* out2) noexcept nogil

    # limit_work's units without its name (kept): ``budget`` units from now,
    # 0 for unbounded; and the work spent put back to ``spent`` (the mask
    # computer forgets an attempt it starts over).
    cdef void limit_work_units(self, uint64_t budget) noexcept nogil
    cdef void reset_work_spent(self, uint64_t spent) noexcept nogil
    cdef raise_pending_error(self)

    # Internals
    cdef bint _add_item(self, int32_t dot, int32_t origin, int32_t progress, int32_t nt,
                        Py_ssize_t set_start) noexcept nogil
    cdef bint _advance(self, Item item, Py_ssize_t set_start) noexcept nogil
    cdef Py_ssize_t _begin_set(self) noexcept nogil
    cdef bint _close_set(self, Py_ssize_t set_start) noexcept nogil
    cdef bint _predict(self, Py_ssize_t set_start) noexcept nogil
    cdef bint _finish_set(self, Py_ssize_t set_start, bint is_accepting, bint force) noexcept nogil
    cdef void _init_start_set(self) noexcept nogil
    cdef _allocate(self, Py_ssize_t items_capacity, Py_ssize_t sets_capacity)
    cdef Py_ssize_t _next_compact_trigger(self)
    cdef _auto_compact(self)
