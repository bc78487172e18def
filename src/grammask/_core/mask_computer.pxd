# cython: language_level=3
"""The grammar mask over the Earley core (see mask_computer.pyx)."""

from cpython.pythread cimport PyThread_type_lock
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from grammask._core.earley cimport EarleyRecognizer
from grammask._core.earley_tables cimport CompiledTables
from grammask._core.terminal_tokens cimport TerminalTokens
from grammask._core.trie_walk cimport TrieView, WalkFrames
from grammask._core.types cimport state_id_t, terminal_id_t, word_t


# What an attempt at a mask ended with (MaskComputer._attempt).
cdef enum:
    FILL_DONE = 0
    FILL_MISS = 1          # a token set is not cached yet (FillScratch.misses)
    FILL_ERROR = 2         # the recognizer holds a pending error
    FILL_NO_MEMORY = 3


# One cached token set: the TerminalTokens of (trie, terminal, progress).
# Borrowed pointers: MaskComputer.cache holds the objects.
cdef struct SetEntry:
    const void* trie                 # the TrieView the set is over
    terminal_id_t terminal_id
    state_id_t progress
    PyObject* tokens                 # the TerminalTokens


# Open addressing, linear probing; NULL slots are empty.  Entries are never
# removed; a full table is replaced by a bigger copy, the old one kept on
# the ``retired`` chain until the computer dies (readers may still hold it).
cdef struct SetTable:
    SetEntry** slots                 # [mask + 1]
    size_t mask
    SetTable* retired


# The key of a token set an attempt missed.
cdef struct MissKey:
    const void* trie
    terminal_id_t terminal_id
    state_id_t progress


cdef enum:
    MAX_MISSES = 16        # distinct sets one attempt records before it stops
    MAX_SEGMENTS = 8       # a MaskBatch's job segments (one per thread, at most this)
    CURSOR_STRIDE = 8      # Py_ssize_t per segment cursor: one 64-byte line each


# One filling thread's scratch: walk frames, two per-level stacks (the
# "set handled already" sets, and each scan item's set), the scan items of
# one set gathered for their grouped push, and the distinct sets an attempt
# missed: it goes on past a miss until ``miss_capacity`` are recorded (1:
# it stops at the first, as a batch job does; its engine is then filled
# alone).
cdef struct FillScratch:
    WalkFrames frames
    const void** seen
    Py_ssize_t seen_capacity
    Py_ssize_t n_seen
    PyObject** found
    Py_ssize_t found_capacity
    Py_ssize_t n_found
    Py_ssize_t* group
    Py_ssize_t group_capacity
    MissKey misses[MAX_MISSES]
    Py_ssize_t n_misses
    Py_ssize_t miss_capacity


# MaskStep's C side: a mask step's work budget and EOS words.
cdef struct StepSpec:
    Py_ssize_t n_words
    uint64_t budget
    bint eager_end
    Py_ssize_t n_eos_words
    const int32_t* eos_words
    const word_t* eos_masks


cdef struct StepResult:
    uint64_t work                    # Earley work the mask spent
    bint empty                       # no token allowed (EOS included)


cdef struct BatchJob:
    PyObject* state                  # MaskState (borrowed: MaskBatch.refs)
    PyObject* computer               # its MaskComputer, EarleyRecognizer, bits
    PyObject* recognizer             # and step (borrowed through the state)
    word_t* bits
    const StepSpec* spec
    Py_ssize_t tag                   # the caller's name for the job
    Py_ssize_t row                   # the row its mask is copied into, -1 none
    int status                       # FILL_*; FILL_MISS until done
    int worker                       # the thread that computed it (MaskBatch._work)
    int copied                       # its row claimed for copying (atomic)
    StepResult result


cdef class MaskComputer:
    cdef readonly TrieView vocab_trie
    cdef readonly CompiledTables tables
    cdef readonly Py_ssize_t vocab_size
    cdef readonly Py_ssize_t n_words
    cdef readonly object state_representatives   # int32[n_dfa_states]: smallest state of each class
    cdef const state_id_t[::1] _representatives
    cdef readonly list content_keys              # per terminal: DFA digest or literal bytes
    cdef readonly object store                   # TokenSetStore shared by the vocabulary's grammars
    cdef dict cache                              # (trie, terminal, progress) -> TerminalTokens
    cdef SetTable* table                         # the cache's entries, read without the GIL
    cdef Py_ssize_t n_table_entries
    cdef list dfa_digests                        # per DFA: its content digest (dfa_digest)
    cdef dict hubs                               # DFA id -> hub state (see _hub)
    cdef dict hub_keys                           # DFA id -> (hub language digest, an accepting state)
    cdef dict last_built                         # DFA id -> (state, TerminalTokens) built last
                                                 # over the vocabulary trie
    cdef readonly list depth_classes             # per DFA: int32[n_kept, n_states], the rows at class_depths
    cdef readonly object class_depths            # int32[n_kept]: kept_row_depths of the vocabulary trie
    cdef readonly object height_rows             # int32[class_depths[-1] + 1]: row_of_height(class_depths)
    cdef object lock                             # guards the cache's and the table's writes
    cdef const uint8_t[::1] _root_bytes          # root_subtree_heights(vocab_trie): children's bytes
    cdef const int64_t[:, ::1] _root_reach       # ... and the reach of their subtrees

    cpdef TerminalTokens terminal_tokens(self, TrieView trie, terminal_id_t terminal_id,
                                         state_id_t progress)
    cdef object _content_key(self, terminal_id_t terminal_id, list digests)
    cdef state_id_t _hub(self, Py_ssize_t dfa_id)
    cdef tuple _cheapest_base(self, TrieView trie, Py_ssize_t dfa_id, state_id_t progress,
                              state_id_t hub, int64_t full)
    cdef int64_t _full_cost(self, TrieView trie, Py_ssize_t dfa_id, state_id_t progress) except -1
    cdef int _fill_building(self, EarleyRecognizer recognizer, word_t* bits, word_t* narrow,
                            Py_ssize_t n_bits, const StepSpec* spec, FillScratch* scratch,
                            StepResult* result) except -1
    cdef int _attempt(self, EarleyRecognizer recognizer, word_t* bits, word_t* narrow,
                      Py_ssize_t n_bits, const StepSpec* spec, FillScratch* scratch,
                      StepResult* result) noexcept nogil
    cdef int _fill_level(self, EarleyRecognizer recognizer, TrieView trie, word_t* out,
                         word_t* narrow, FillScratch* scratch) noexcept nogil
    cdef int _fill_set(self, EarleyRecognizer recognizer, Py_ssize_t first, Py_ssize_t n_scan,
                       Py_ssize_t found_base, TerminalTokens entry, word_t* out, word_t* narrow,
                       FillScratch* scratch) noexcept nogil
    cdef PyObject* _find(self, const void* trie, terminal_id_t terminal_id,
                         state_id_t progress) noexcept nogil
    cdef int _table_add(self, TrieView trie, terminal_id_t terminal_id, state_id_t progress,
                        TerminalTokens tokens) except -1


cdef class MaskStep:
    cdef StepSpec spec
    cdef object _eos_words                       # int32[n_eos_words]: spec.eos_words' owner
    cdef object _eos_masks                       # uint32[n_eos_words]


cdef class MaskState:
    cdef readonly MaskComputer computer
    cdef readonly MaskStep step                  # None: token-level filters (Python computes)
    cdef readonly bint cached                    # masks go through a whole-mask cache (Python)
    cdef readonly object bits                    # uint32[n_words]
    cdef word_t* _bits
    cdef public EarleyRecognizer recognizer
    cdef public bint valid                       # bits hold the current state's mask
    cdef public bint finished                    # EOS accepted: the mask is EOS alone
    cdef public uint64_t max_work                # the most Earley work one mask took
    cdef Py_ssize_t batch_serial                 # the last MaskBatch.add_engines it was in


cdef class MaskBatch:
    cdef Py_ssize_t serial                       # unique per batch (add_engines' repeat check)
    cdef list refs                               # what the jobs borrow
    cdef BatchJob* jobs
    cdef Py_ssize_t n_jobs
    cdef Py_ssize_t capacity
    # segment s's next place in ``order`` (taken with an atomic add), a line each
    cdef Py_ssize_t cursors[MAX_SEGMENTS * CURSOR_STRIDE]
    cdef Py_ssize_t n_segments
    cdef Py_ssize_t* order                       # job indices, a grammar's together (_split)
    cdef Py_ssize_t n_finished                   # jobs done or given up (atomic)
    cdef Py_ssize_t n_failed                     # jobs not done (atomic)
    cdef Py_ssize_t n_copied                     # rows copied (atomic)
    cdef Py_ssize_t max_depth                    # deepest vocabulary trie of the jobs
    cdef bint has_rows
    cdef int32_t[:, ::1] rows                    # where the masks are copied

    cdef Py_ssize_t _add(self, MaskState state, Py_ssize_t row, Py_ssize_t tag) except -1
    cdef void _split(self, Py_ssize_t n_threads) noexcept nogil
    cdef void _work(self, Py_ssize_t worker) noexcept nogil
    cdef void _copy(self, BatchJob* job) noexcept nogil


cdef class MaskWorkers:
    cdef Py_ssize_t n_helpers
    cdef PyThread_type_lock* wake                # [n_helpers] released to wake helper k
    cdef int* states                             # [n_helpers] HELPER_* (atomic)
    cdef void* current                           # the MaskBatch posted (borrowed), or NULL
    cdef object call                             # the callable posted when current is NULL
    cdef object call_error                       # what escaped it on a helper
    cdef int busy                                # a run uses the helpers (atomic)
    cdef int stopping

    cdef void _call(self) noexcept with gil
    cdef Py_ssize_t _post(self, Py_ssize_t n_posted) noexcept nogil
    cdef void _settle(self, Py_ssize_t n_posted) noexcept nogil
