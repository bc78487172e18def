# cython: language_level=3
"""The grammar mask of an Earley recognizer's state, from per-terminal token sets.

What it computes
----------------
``MaskComputer.fill`` writes the token bitset (``bitset.pxd``) of the tokens
whose bytes the recognizer accepts from its current state (docs/design.md section
2, "Exactness"), and optionally the narrow ones among them (``narrow.pxd``),
the canonical lookahead's candidates.  It is step 4 of the derivation begun
in ``trie_walk.pyx`` and ``terminal_tokens.pyx``: only scan items consume
bytes, so the mask is the union over the top set's scan items of their
cached ``TerminalTokens``, and of the tokens of their exit tries accepted
once the item's terminal ends (a small exit trie walked byte by byte, a
large one by recursing over its own per-terminal sets).
``MaskComputer.fill_mask`` is a grammar's whole mask when it has no
token-level filters (``MaskStep``: the grammar mask under a work budget,
then EOS), in one call without the GIL once its token sets are built.
``MaskBatch`` / ``MaskWorkers`` compute many engines' ``fill_mask`` on
several threads at once (``grammask.engine.batch``), reading each
engine's ``MaskState``.

The probes ``push_probe`` / ``pop_probe`` / ``next_bytes`` let the canonical
lookahead (``grammask.engine.lookahead``) try a token on a recognizer and
read what the grammar allows after it.

Layout
------
DFA states are cached by their *depth-bounded class*: two states that agree
on dead-ness and acceptance for every string no longer than the longest
token have the same ``TerminalTokens``, so ``[a-z ]{0,500}``'s hundreds of
states share a few dozen entries (``bounded_state_classes``,
``state_representatives``).  Entries are first looked up in the
vocabulary's ``TokenSetStore`` (``token_set_store.py``) by the terminal's
content, so a schema's string and number terminals reuse the sets an
earlier schema built (a literal with ``PRIVATE_LITERAL_BYTES`` or more left
to match, or a DFA state estimated under ``PRIVATE_DFA_NODES``, is built for
its grammar alone).  Each computer keeps its entries twice: in ``cache``
(a dict, which keeps them alive) and in a C hash table from (trie,
terminal, state class) to the entry (``SetTable``, mask_computer.pxd), the
one a mask reads.  A mask is computed by attempts without the GIL
(``_attempt``): an attempt that meets a set not in the table records it,
skips what depends on it and goes on (up to ``MAX_MISSES`` distinct sets;
the recognizer popped back), the sets it missed are built with the GIL,
and the mask starts over; a first mask needing k new sets usually takes
two attempts rather than k + 1 (a missed set's exit trie can only be
walked, and its own missing sets found, once it is built).

Invariants
----------
``fill`` and ``fill_mask`` leave the recognizer in the state it started
in; the work and errors of a mask are those of its last attempt (a missed
attempt's work is forgotten), so they do not depend on which sets were
built before.  A ``MaskComputer`` is immutable after construction except
for its caches, whose writes one lock serializes (the ``TokenSetStore``'s
builds another), so engines on several threads share it
(``grammask.engine.batch``).  The table is read without the GIL or the
lock: an entry is complete before a release store publishes it, entries
are never removed, and a table that grows is copied, not freed, until the
computer dies.  Everything an attempt runs (the lookups, the ORs, the
exit-trie walks, EOS) and the token-set builds run without the GIL; they
read only the calling engine's recognizer and immutable tables, and write
only the caller's bitsets and fresh arrays.
"""

from cpython.pythread cimport (PyThread_acquire_lock, PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_release_lock, PyThread_type_lock, WAIT_LOCK)
from cpython.ref cimport PyObject
from libc.stdint cimport uint8_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcpy, memset

import hashlib
import threading
import weakref

import numpy as np

from grammask.errors import VocabularyError

from grammask._core.bitset cimport bitset_add_ids, byte_set_to_bytes, n_words
from grammask._core.earley cimport EarleyRecognizer
from grammask._core.earley_tables cimport CompiledTables, DfaInfo, TerminalInfo
from grammask._core.narrow cimport NARROW_BYTE_LIMIT, is_narrow
from grammask._core.terminal_tokens cimport TerminalTokens
from grammask._core import terminal_tokens as _terminal_tokens
from grammask._core.state_classes import state_classes_by_depth
from grammask._core.token_set_store import TokenSetStore, dfa_digest
from grammask._core.trie_walk cimport TrieView, frames_free, frames_init, walk_trie
from grammask._core.types cimport state_id_t, terminal_id_t, word_t


NARROW_BYTES = NARROW_BYTE_LIMIT

# Rows of state classes kept per DFA for derived token sets: every row below
# this (subtrees up to 32 bytes high, most of a vocabulary trie, are skipped
# by their own row), then one every DEEP_ROW_STRIDE bytes and the last
# (``kept_row_depths``): two positions of a long counted string agree for
# about what is left of the count, up to the longest token, and a taller
# subtree is skipped by the next kept row (agreement for more bytes implies
# it for fewer), at a seventh of the memory of every row.
KEPT_CLASS_ROWS = 33
DEEP_ROW_STRIDE = 8

# Hubs with more reachable states than this are shared by DFA digest only
# (JSON's string body from a key's hub has a handful).
SUB_AUTOMATON_LIMIT = 64

# Every grammar's DFAs' hubs by content, (DFA digest, trie depth) -> (hub
# state, its sub-automaton digest or None, an accepting state): JSON's
# string and number DFAs recur in every schema.  Emptied when full.
_HUBS = {}
HUB_CACHE_SIZE = 4096


def clear_hubs():
    """Forget the hubs kept by DFA content (``grammask.clear_caches``)."""
    _HUBS.clear()

# Exit tries with at most this many nodes are walked byte by byte; larger
# ones are handled by recursing over their own per-terminal token sets.
cdef Py_ssize_t WALK_LIMIT = 4096


# A literal with at least this many bytes left to match has its token sets
# built for the grammar alone, outside the shared store: a token holding the
# rest of it is rare, so the build (a walk along one path, about 8 µs on a
# 128k vocabulary) costs less than the store's lookup and insertion and the
# disk tier's miss (about 15 µs); short rests (`"`, `, `, a space) can leave
# exit tries of most of the vocabulary, milliseconds to build, and are shared.
PRIVATE_LITERAL_BYTES = 3

# A derived token set's walk runs two automata per node and records changes
# against its base: per node it visits it costs about this many times what a
# full build's walk does (measured on tekken and Llama-3: 20-22 ns against
# 15 ns per estimated node).  A set is derived only when its estimate times
# this, plus a full build of the base when that is not built yet, is below
# the full build's own estimate (``full_walk_estimate``).
RELATIVE_NODE_COST = 1.4

# What a derived build costs beyond its walk, in full-walk nodes: it copies
# or patches its base's arrays and keeps ten change lists, about 3 µs more
# than a full build of a few tokens (2.5 against 5.4 µs for a date's digit
# state, tekken), some 200 nodes at 15 ns a node.
RELATIVE_FIXED_NODES = 200

# A DFA state's set estimated to walk fewer nodes than this is built for the
# grammar alone, like a literal's long rest: the build (2.4 µs for a date's
# digit, about 6 µs at this many nodes on tekken) costs less than the shared
# store's lookup and insertion and the choice of a base to derive from
# (about 5 µs), and a DFA whose states are all this small never computes
# its hub (a digest of up to 64 states).
PRIVATE_DFA_NODES = 256

# A DFA state's set estimated to walk fewer nodes than this (about 0.25 ms
# at 15 ns a node) is built without looking on disk: a load costs 60-250 µs
# and even a miss costs some 8 µs (the environment, the key's digest), more
# than a date's or a number's next set takes to build (8-20 µs).  Such sets
# are neither read nor written (writes need a build of at least
# ``token_set_disk.MIN_BUILD_SECONDS``).
DISK_MIN_NODES = 16384

_root_subtree_heights = weakref.WeakKeyDictionary()


def root_subtree_heights(TrieView trie):
    """(the bytes of the root's children, int64[children, max_depth + 2]
    whose entry [c, k] counts the nodes n of child c's subtree with
    height(n) + (edges from c to n) >= k), computed once per trie in one
    typed preorder pass (a stack of the open subtrees' ends gives each
    node's depth below its root child)."""
    found = _root_subtree_heights.get(trie)
    if found is not None:
        return found
    cdef Py_ssize_t n = trie.n_nodes, n_children = 0, index, node, top, row
    cdef Py_ssize_t kept = trie.max_depth + 1
    cdef int32_t child = 1, end
    while child < n:
        n_children += 1
        child = trie.node_subtree_ends[child]
    child_bytes = np.empty(n_children, dtype=np.uint8)
    counts = np.zeros((n_children, kept + 1), dtype=np.int64)
    cdef uint8_t[::1] first_bytes = child_bytes
    cdef int64_t[:, ::1] count = counts
    cdef const int32_t[::1] heights = trie.node_heights
    # a node's subtree holds the longest path below it, so the root's height bounds the stack
    cdef int32_t* open_ends = <int32_t*>malloc((heights[0] + 2) * sizeof(int32_t))
    if open_ends == NULL:
        raise MemoryError()
    with nogil:
        child = 1
        for index in range(n_children):
            end = trie.node_subtree_ends[child]
            first_bytes[index] = trie.node_bytes[child]
            top = 0
            for node in range(child, end):
                while top > 0 and open_ends[top - 1] <= node:
                    top -= 1
                count[index, min(heights[node] + top, kept)] += 1
                open_ends[top] = trie.node_subtree_ends[node]
                top += 1
            for row in range(kept - 1, -1, -1):
                count[index, row] += count[index, row + 1]
            child = end
    free(open_ends)
    found = (child_bytes, counts)
    _root_subtree_heights[trie] = found
    return found


cdef int64_t _relative_nodes(const uint8_t[::1] first_bytes, const int64_t[:, ::1] reach,
                             const int32_t* transitions, Py_ssize_t n_classes,
                             const uint8_t* class_map, const int32_t[:, ::1] classes,
                             const int32_t[::1] depth_of, int32_t state,
                             int32_t base_state) noexcept nogil:
    """``relative_walk_estimate`` on typed tables (local states, rows
    [n_rows, n_states], ``depth_of``[n_rows])."""
    cdef Py_ssize_t n_rows = classes.shape[0], child, row, first
    # no node of the trie is max_depth + 1 high or deeper: its last column counts none
    cdef Py_ssize_t tallest = reach.shape[1] - 1
    cdef int32_t q, r
    cdef int64_t total = 0
    for child in range(first_bytes.shape[0]):
        q = transitions[state * n_classes + class_map[first_bytes[child]]]
        r = transitions[base_state * n_classes + class_map[first_bytes[child]]]
        if q == r:
            continue
        first = n_rows
        for row in range(n_rows):
            if classes[row, q] != classes[row, r]:
                first = row
                break
        total += reach[child, min(depth_of[first - 1], tallest) if first > 0 else 0]
    return total


cdef int64_t _full_nodes(TrieView trie, const int32_t* transitions, Py_ssize_t n_classes,
                         const uint8_t* class_map, int32_t state) noexcept nogil:
    """``full_walk_estimate`` on typed tables: the sizes of the live root
    children's subtrees, read off the subtree ends (no per-trie table, so
    an exit trie of most of the vocabulary costs its at most 256 root
    children, not the 1.2 ms pass ``root_subtree_heights`` makes over it)."""
    cdef Py_ssize_t child = 1
    cdef int64_t total = 0
    while child < trie.n_nodes:
        if transitions[state * n_classes + class_map[trie.node_bytes[child]]] != 0:
            total += trie.node_subtree_ends[child] - child
        child = trie.node_subtree_ends[child]
    return total


def relative_walk_estimate(TrieView trie, dfa, rows, Py_ssize_t state, Py_ssize_t base_state,
                           depths=None):
    """About how many nodes ``build_terminal_tokens_relative`` visits deriving
    ``state``'s sets from ``base_state``'s: below a root child where the two
    states step to different states that agree for f bytes (f the depth of
    the last row of ``rows``, the DFA's kept ``state_classes_by_depth`` at
    ``depths``, or rows 0, 1, ... when None, where their classes are equal
    before the first that differs), the walk reaches a node d edges below
    the child when it is at least f - d high (agreement shrinks by one byte
    per edge), and never deeper than where both die or meet (not counted:
    an upper bound).  One typed pass over the root's children (at most 256)
    and the rows: it runs before every derived build, so it must cost far
    less than one (``MaskComputer`` runs it on its compiled tables)."""
    child_bytes, tall = root_subtree_heights(trie)
    cdef const int32_t[:, ::1] transitions = np.ascontiguousarray(dfa.transitions, dtype=np.int32)
    cdef const uint8_t[::1] class_map = np.ascontiguousarray(dfa.class_map, dtype=np.uint8)
    cdef const int32_t[:, ::1] classes = np.ascontiguousarray(rows, dtype=np.int32)
    cdef Py_ssize_t n_rows = classes.shape[0], n_states = transitions.shape[0]
    if depths is None:
        depths = np.arange(n_rows, dtype=np.int32)
    cdef const int32_t[::1] depth_of = np.ascontiguousarray(depths, dtype=np.int32)
    if not (0 <= state < n_states and 0 <= base_state < n_states):
        raise ValueError("DFA state out of range")
    if classes.shape[1] != n_states or depth_of.shape[0] != n_rows:
        raise ValueError("class rows do not fit the DFA or their depths")
    return _relative_nodes(child_bytes, tall, &transitions[0, 0], transitions.shape[1],
                           &class_map[0], classes, depth_of, state, base_state)


def full_walk_estimate(TrieView trie, dfa, Py_ssize_t state):
    """About how many nodes ``build_terminal_tokens`` visits for DFA state
    ``state``: every node below the root children whose byte keeps the
    automaton alive (an upper bound: the walk stops where it dies deeper)."""
    cdef const int32_t[:, ::1] transitions = np.ascontiguousarray(dfa.transitions, dtype=np.int32)
    cdef const uint8_t[::1] class_map = np.ascontiguousarray(dfa.class_map, dtype=np.uint8)
    if not 0 <= state < transitions.shape[0]:
        raise ValueError("DFA state out of range")
    return _full_nodes(trie, &transitions[0, 0], transitions.shape[1], &class_map[0], state)


def bounded_state_classes(transitions, accepting, Py_ssize_t depth):
    """For each state of a DFA, the smallest state that agrees with it on
    dead-ness (state 0) and acceptance after every input of at most
    ``depth`` bytes (row ``depth`` of ``state_classes_by_depth``).
    Returns int32[n_states]."""
    return _representatives_of(state_classes_by_depth(transitions, accepting, depth)[depth])


def kept_row_depths(Py_ssize_t last):
    """The rows of ``state_classes_by_depth`` (0..``last``) kept per DFA:
    each below ``KEPT_CLASS_ROWS``, then every ``DEEP_ROW_STRIDE``-th, and
    ``last``.  Returns int32[n_kept], increasing."""
    depths = list(range(min(KEPT_CLASS_ROWS, last + 1)))
    depths += range(KEPT_CLASS_ROWS - 1 + DEEP_ROW_STRIDE, last, DEEP_ROW_STRIDE)
    if depths[len(depths) - 1] != last:  # (no negative indices: wraparound is off)
        depths.append(last)
    return np.asarray(depths, dtype=np.int32)


def row_of_height(depths):
    """For each agreement h = 0..``depths[-1]`` (in bytes) a derived walk
    needs, the index of the first kept row (``kept_row_depths``) at depth
    h or more: states with equal labels there agree for at least h bytes.
    Returns int32[depths[-1] + 1]."""
    depths = np.asarray(depths, dtype=np.int32)
    return np.searchsorted(depths, np.arange(int(depths.max()) + 1)).astype(np.int32)


_KEPT_ROWS = {}


def _kept_rows(Py_ssize_t last):
    """(``kept_row_depths(last)``, its ``row_of_height``), read-only and made
    once per depth (every compile asked for them: 30 µs a grammar)."""
    found = _KEPT_ROWS.get(last)
    if found is None:
        depths = kept_row_depths(last)
        rows = row_of_height(depths)
        depths.flags.writeable = False
        rows.flags.writeable = False
        found = _KEPT_ROWS.setdefault(last, (depths, rows))
    return found


def _classes_and_representatives(dfa, Py_ssize_t depth):
    """``state_classes_by_depth`` to ``depth + 1`` (a token's last byte is
    narrow or not by the byte after it), of which the rows at
    ``kept_row_depths(depth + 1)`` are kept, and the representatives at
    ``depth``."""
    rows = state_classes_by_depth(dfa.transitions, dfa.accepting, depth + 1)
    return (np.ascontiguousarray(rows[_kept_rows(depth + 1)[0]]),
            _representatives_of(rows[depth]))


def _representatives_of(classes):
    """Each state's smallest state with the same label."""
    cdef const int32_t[::1] labels = np.ascontiguousarray(classes, dtype=np.int32)
    cdef Py_ssize_t n_states = labels.shape[0], state
    cdef int32_t label, n_labels = 0
    for state in range(n_states):
        if labels[state] >= n_labels:
            n_labels = labels[state] + 1
    smallest_of = np.full(n_labels, -1, dtype=np.int32)
    result = np.empty(n_states, dtype=np.int32)
    cdef int32_t[::1] smallest = smallest_of, out = result
    for state in range(n_states):
        label = labels[state]
        if smallest[label] < 0:
            smallest[label] = <int32_t>state
        out[state] = smallest[label]
    return result


def sub_automaton_digest(dfa, Py_ssize_t state, Py_ssize_t limit=SUB_AUTOMATON_LIMIT):
    """Digest of the language of ``dfa`` from ``state``: its reachable part
    renumbered in breadth-first order (targets in byte order), so two DFAs
    whose states accept the same continuations get the same digest (both
    are minimal).  None past ``limit`` reachable states.  A typed
    breadth-first pass over at most ``limit`` states' rows, read once per
    span of bytes the class map gives one class: it runs for every new DFA's
    hub, so on a cold grammar it must not touch the whole table.  What is
    hashed is each state's acceptance (as -1 - mark) and its row as runs of
    bytes with one target ((first byte, target) pairs): as canonical as the
    256 targets themselves, but a few dozen numbers a state instead of 1 KB
    (hashing 64 full rows took 85 µs, most of a new DFA's first set)."""
    cdef const int32_t[:, ::1] transitions = np.ascontiguousarray(dfa.transitions, dtype=np.int32)
    cdef const uint8_t[::1] class_map = np.ascontiguousarray(dfa.class_map, dtype=np.uint8)
    cdef const uint8_t[::1] accepting = np.ascontiguousarray(dfa.accepting).view(np.uint8)
    cdef Py_ssize_t n_states = transitions.shape[0]
    if not 0 < state < n_states:
        raise ValueError("DFA state out of range")
    numbers = np.full(n_states, -1, dtype=np.int32)
    order = np.zeros(max(limit, 1), dtype=np.int32)
    cdef int32_t[::1] number = numbers
    cdef int32_t[::1] ordered = order
    cdef int32_t[::1] run_view
    cdef Py_ssize_t n_order = 1, i = 0, byte, r, n_spans = 0, n_runs = 0
    cdef int32_t target, previous
    cdef bint over = False
    # the class map's spans of bytes with one class, in byte order: a row is
    # read once per span, and targets appear in the same order as byte by byte
    cdef uint8_t span_start[256]
    cdef uint8_t span_class[256]
    number[0] = 0
    number[state] = 1
    ordered[0] = <int32_t>state
    with nogil:
        for byte in range(256):
            if byte == 0 or class_map[byte] != class_map[byte - 1]:
                span_start[n_spans] = <uint8_t>byte
                span_class[n_spans] = class_map[byte]
                n_spans += 1
        while i < n_order and not over:
            for r in range(n_spans):
                target = transitions[ordered[i], span_class[r]]
                if number[target] < 0:
                    if n_order >= limit:
                        over = True
                        break
                    number[target] = <int32_t>(n_order + 1)
                    ordered[n_order] = target
                    n_order += 1
            i += 1
    if over:
        return None
    runs = np.empty(n_order * (1 + 2 * n_spans), dtype=np.int32)
    run_view = runs
    with nogil:
        for i in range(n_order):
            run_view[n_runs] = -1 - (accepting[ordered[i]] != 0)
            n_runs += 1
            previous = -1
            for r in range(n_spans):
                target = number[transitions[ordered[i], span_class[r]]]
                if target != previous:
                    run_view[n_runs] = span_start[r]
                    run_view[n_runs + 1] = target
                    n_runs += 2
                    previous = target
    digest = hashlib.blake2b(b"sub-automaton runs", digest_size=20)
    digest.update(runs[:n_runs].tobytes())
    return digest.digest()


def dfa_hub(dfa):
    """The live state that the most (state, byte) transitions enter (0 when
    every transition dies): one typed pass over the DFA's table."""
    cdef const int32_t[:, ::1] transitions = np.ascontiguousarray(dfa.transitions, dtype=np.int32)
    cdef const uint8_t[::1] class_map = np.ascontiguousarray(dfa.class_map, dtype=np.uint8)
    cdef Py_ssize_t n_states = transitions.shape[0], n_classes = transitions.shape[1]
    counts = np.zeros(n_states, dtype=np.int64)
    sizes = np.zeros(max(n_classes, 1), dtype=np.int64)
    cdef int64_t[::1] count = counts
    cdef int64_t[::1] class_size = sizes
    cdef Py_ssize_t s, c, byte, hub = 0
    with nogil:
        for byte in range(256):
            class_size[class_map[byte]] += 1
        for s in range(n_states):
            for c in range(n_classes):
                count[transitions[s, c]] += class_size[c]
        count[0] = 0
        for s in range(1, n_states):
            if count[s] > count[hub]:
                hub = s
    return hub


cdef class MaskComputer:
    """Computes grammar masks for recognizers of one compiled grammar.

    Immutable after construction except for the lazily filled cache of
    ``TerminalTokens`` per (trie, terminal id, progress), which is guarded by
    a lock so one MaskComputer can serve engines on several threads; a miss
    goes to the vocabulary's ``TokenSetStore``, where other grammars may
    have built the same terminal's sets already.
    ``state_representatives`` maps each global DFA state to the smallest
    state of its depth-bounded class."""

    def __init__(self, CompiledTables tables, TrieView vocab_trie, Py_ssize_t vocab_size,
                 store=None):
        """``store``: the vocabulary's ``TokenSetStore`` shared with other
        grammars (a private one when None)."""
        self.tables = tables
        self.vocab_trie = vocab_trie
        self.vocab_size = vocab_size
        self.n_words = n_words(vocab_size)
        self.cache = {}
        self.table = _table_new(64)
        if self.table == NULL:
            raise MemoryError()
        self.n_table_entries = 0
        self.hubs = {}
        self.hub_keys = {}
        self.last_built = {}
        self.store = store if store is not None else TokenSetStore(capacity=None, budget_bytes=None)
        self.lock = threading.Lock()
        self._root_bytes, self._root_reach = root_subtree_heights(vocab_trie)
        digests = self.dfa_digests = [dfa_digest(dfa) for dfa in tables.lnf.dfas]
        depth = vocab_trie.max_depth
        classes = [self.store.state_classes(digest, depth + 1,
                                            lambda dfa=dfa: _classes_and_representatives(dfa, depth))
                   for digest, dfa in zip(digests, tables.lnf.dfas)]
        self.depth_classes = [rows for rows, _ in classes]
        self.class_depths, self.height_rows = _kept_rows(depth + 1)
        parts = [representatives for _, representatives in classes]
        self.state_representatives = np.ascontiguousarray(
            np.concatenate(parts) if parts else np.zeros(1, np.int32), dtype=np.int32)
        self._representatives = self.state_representatives
        self.content_keys = [self._content_key(terminal_id, digests)
                             for terminal_id in range(tables.view.n_terminals)]

    cdef object _content_key(self, terminal_id_t terminal_id, list digests):
        cdef TerminalInfo info = self.tables.view.terminal_infos[terminal_id]
        if info.is_dfa:
            return digests[info.dfa_id]
        return (<const char*>self.tables.view.literal_bytes)[info.literal_start:
                                                             info.literal_start + info.literal_len]

    @property
    def n_cached_terminal_states(self):
        return len(self.cache)

    cpdef TerminalTokens terminal_tokens(self, TrieView trie, terminal_id_t terminal_id,
                                         state_id_t progress):
        """The ``TerminalTokens`` of (terminal, progress) over ``trie`` (the
        vocabulary trie, or an exit trie owned by another entry): from this
        grammar's cache, else the shared store, else built (a literal with
        ``PRIVATE_LITERAL_BYTES`` or more left, or a DFA state estimated
        under ``PRIVATE_DFA_NODES``: built for this grammar)."""
        key = (trie, terminal_id, progress)
        entry = self.cache.get(key)
        if entry is not None:
            return entry
        cdef TerminalInfo info = self.tables.view.terminal_infos[terminal_id]
        cdef int64_t full = self._full_cost(trie, info.dfa_id, progress) if info.is_dfa else -1
        cdef state_id_t hub = -1
        if info.is_dfa and full >= PRIVATE_DFA_NODES:
            hub = self._hub(info.dfa_id)
        store_key = (trie, self.content_keys[terminal_id], progress)
        if info.is_dfa and full < PRIVATE_DFA_NODES:
            entry = _terminal_tokens.build_terminal_tokens(self.tables, trie, terminal_id, progress,
                                                           self.vocab_size, self.store.bitset_pool,
                                                           self.store.trie_pool)
        elif hub > 0 and progress == hub and info.dfa_id in self.hub_keys:
            # The hub's language may be another DFA's (a key that must differ
            # from the schema's names ends in JSON's string body): share by it.
            hub_key, local_end = self.hub_keys[info.dfa_id]
            entry = self.store.lookup((trie, hub_key, -1), _terminal_tokens.build_terminal_tokens,
                                      self.tables, trie, terminal_id, progress, self.vocab_size,
                                      use_disk=full >= DISK_MIN_NODES)
            if entry.end_state >= 0:
                entry = entry.with_end_state(local_end)
        elif (hub > 0 and hub != progress and trie is self.vocab_trie
              and (info.dfa_id in self.last_built or info.dfa_id in self.hub_keys)):
            # Derive from the state built last for this DFA over the
            # vocabulary trie (decoding walks a string's states in order, and
            # neighbours differ only on long tokens), or from the hub when
            # other DFAs may have built it already.  Over an exit trie a DFA
            # usually meets one state, its start, and the estimate needs the
            # trie's reach table (``root_subtree_heights``, a pass over it).
            base_state, base, cost = self._cheapest_base(trie, info.dfa_id, progress, hub, full)
            if base_state > 0 and base is None:
                base = self.terminal_tokens(trie, terminal_id, hub)
            if base_state > 0 and cost == 0:
                entry = base    # the two states agree on every root child the walk would take
            elif base_state > 0:
                entry = self.store.lookup(store_key, _terminal_tokens.build_terminal_tokens_relative,
                                          self.tables, trie, terminal_id, progress, self.vocab_size,
                                          base, base_state, self.depth_classes[info.dfa_id],
                                          self.height_rows, use_disk=cost >= DISK_MIN_NODES)
            else:
                entry = self.store.lookup(store_key, _terminal_tokens.build_terminal_tokens,
                                          self.tables, trie, terminal_id, progress, self.vocab_size,
                                          use_disk=cost >= DISK_MIN_NODES)
        elif not info.is_dfa and info.literal_len - max(progress - 1, 0) >= PRIVATE_LITERAL_BYTES:
            entry = _terminal_tokens.build_terminal_tokens(self.tables, trie, terminal_id, progress,
                                                           self.vocab_size, self.store.bitset_pool,
                                                           self.store.trie_pool)
        else:
            # a literal's short rest may leave an exit trie of most of the
            # vocabulary: always worth a look on disk
            disk = not info.is_dfa or full >= DISK_MIN_NODES
            entry = self.store.lookup(store_key, _terminal_tokens.build_terminal_tokens,
                                      self.tables, trie, terminal_id, progress, self.vocab_size,
                                      use_disk=disk)
        if info.is_dfa and trie is self.vocab_trie:
            self.last_built[info.dfa_id] = (progress, entry)
        with self.lock:
            found = self.cache.get(key)
            if found is not None:
                return found
            self._table_add(trie, terminal_id, progress, entry)
            self.cache[key] = entry
        return entry

    cdef tuple _cheapest_base(self, TrieView trie, Py_ssize_t dfa_id, state_id_t progress,
                              state_id_t hub, int64_t full):
        """(state, its TerminalTokens or None when not built yet, estimated
        cost in full-walk nodes) to derive ``progress``'s sets over the
        vocabulary trie ``trie`` from (``full``: its own full build's
        estimate, ``_full_cost``): the state built last for this DFA
        there or the hub, whichever costs least by ``relative_walk_estimate``
        (times ``RELATIVE_NODE_COST``, plus ``RELATIVE_FIXED_NODES``, plus
        ``full_walk_estimate`` of a base not built yet); (-1, None, the full
        build's estimate) when a full build is estimated cheaper, as for a
        state at the start of a counted string from a hub near its end, or
        a state whose language shares little with either.  A cost of 0: a
        built base whose sets are ``progress``'s own."""
        candidates = []
        last = self.last_built.get(dfa_id)
        if last is not None:
            candidates.append(last)
        if hub > 0 and (last is None or last[0] != hub):
            candidates.append((hub, None))
        cdef const uint8_t[::1] first_bytes = self._root_bytes
        cdef const int64_t[:, ::1] reach = self._root_reach
        cdef const int32_t[:, ::1] rows = self.depth_classes[dfa_id]
        cdef const int32_t[::1] depth_of = self.class_depths
        cdef DfaInfo dfa = self.tables.view.dfa_infos[dfa_id]
        cdef const int32_t* transitions = self.tables.view.transitions + dfa.transitions_start
        cdef const uint8_t* class_map = self.tables.view.class_maps + dfa.class_map_start
        cdef int32_t own = dfa.start if progress == 0 else progress
        cdef int64_t nodes
        cdef double cost
        best = (-1, None)
        cdef double best_cost = full
        for state, entry in candidates:
            nodes = _relative_nodes(first_bytes, reach, transitions, dfa.n_classes, class_map,
                                    rows, depth_of, own, state)
            cost = RELATIVE_NODE_COST * nodes + (RELATIVE_FIXED_NODES if nodes else 0)
            if entry is None:
                cost += RELATIVE_FIXED_NODES + _full_nodes(trie, transitions, dfa.n_classes,
                                                           class_map, state)
            if cost < best_cost:
                best, best_cost = (state, entry), cost
        return best + (best_cost,)

    cdef int64_t _full_cost(self, TrieView trie, Py_ssize_t dfa_id,
                            state_id_t progress) except -1:
        """``full_walk_estimate`` of DFA ``dfa_id`` at ``progress`` (0: not
        started) over ``trie``, on the compiled tables."""
        cdef DfaInfo dfa = self.tables.view.dfa_infos[dfa_id]
        cdef const int32_t* transitions = self.tables.view.transitions + dfa.transitions_start
        cdef const uint8_t* class_map = self.tables.view.class_maps + dfa.class_map_start
        return _full_nodes(trie, transitions, dfa.n_classes, class_map,
                           dfa.start if progress == 0 else progress)

    cdef state_id_t _hub(self, Py_ssize_t dfa_id):
        """The DFA's hub: the live state (its class representative) that
        the most (state, byte) transitions enter, the base every other state's
        token sets are derived from (``build_terminal_tokens_relative``);
        computed once per DFA content (``_HUBS``)."""
        hub = self.hubs.get(dfa_id)
        if hub is None:
            content = (self.dfa_digests[dfa_id], self.vocab_trie.max_depth)
            found = _HUBS.get(content)
            if found is None:
                dfa = self.tables.lnf.dfas[dfa_id]
                hub, hub_key, accepting = dfa_hub(dfa), None, -1
                if hub > 0:
                    hub = int(self._representatives[self.tables.view.dfa_infos[dfa_id].state_base + hub])
                    hub_key = sub_automaton_digest(dfa, hub)
                    if hub_key is not None:
                        accepting = int(np.flatnonzero(np.asarray(dfa.accepting))[0])
                if len(_HUBS) >= HUB_CACHE_SIZE:
                    _HUBS.clear()
                found = _HUBS.setdefault(content, (hub, hub_key, accepting))
            hub, hub_key, accepting = found
            if hub_key is not None:
                self.hub_keys[dfa_id] = (hub_key, accepting)
            self.hubs[dfa_id] = hub
        return hub

    def fill(self, EarleyRecognizer recognizer, word_t[::1] bits, word_t[::1] narrow=None):
        """Write the grammar mask of the recognizer's current state into
        ``bits`` (overwritten; EOS is the caller's business).  With
        ``narrow`` (same length, overwritten), also write there a superset of
        the allowed tokens after which the grammar allows at most
        ``NARROW_BYTES`` distinct next bytes (the canonical lookahead's
        candidates).  The recognizer ends in the state it started in."""
        if bits.shape[0] < self.n_words:
            raise ValueError("bitset too short for the vocabulary")
        cdef word_t* narrow_words = NULL
        if narrow is not None:
            if narrow.shape[0] != bits.shape[0]:
                raise ValueError("narrow bitset and bitset differ in length")
            narrow_words = &narrow[0]
        cdef FillScratch scratch
        cdef StepResult result
        if not scratch_init(&scratch, self.vocab_trie.max_depth, MAX_MISSES):
            raise MemoryError()
        try:
            self._fill_building(recognizer, &bits[0], narrow_words, bits.shape[0], NULL,
                                &scratch, &result)
        finally:
            scratch_free(&scratch)
        # A push that failed for want of memory or items (not because the
        # byte is wrong) would silently drop tokens: raise it instead.
        recognizer.raise_pending_error()

    def fill_mask(self, EarleyRecognizer recognizer, word_t[::1] bits, MaskStep step):
        """The whole mask of a grammar without token-level filters into
        ``bits`` (``MaskStep``: the grammar mask under the step's work
        budget, then EOS).  Returns (work spent, whether the mask is
        empty); a limit raises ``LimitExceeded``.  The recognizer ends in
        the state it started in, its work unbounded."""
        if bits.shape[0] < step.spec.n_words or step.spec.n_words < self.n_words:
            raise ValueError("bitset too short for the vocabulary")
        cdef FillScratch scratch
        cdef StepResult result
        if not scratch_init(&scratch, self.vocab_trie.max_depth, MAX_MISSES):
            raise MemoryError()
        try:
            self._fill_building(recognizer, &bits[0], NULL, step.spec.n_words, &step.spec,
                                &scratch, &result)
        finally:
            recognizer.limit_work_units(0)
            scratch_free(&scratch)
        return result.work, result.empty

    cdef int _fill_building(self, EarleyRecognizer recognizer, word_t* bits, word_t* narrow,
                            Py_ssize_t n_bits, const StepSpec* spec, FillScratch* scratch,
                            StepResult* result) except -1:
        """``_attempt`` without the GIL until it misses no token set, the
        sets each attempt missed built in between (with the GIL): the work
        of a missed attempt is forgotten, so the mask, its work and its
        errors are those of a run with every set cached.  A limit the
        recognizer hit in a missed attempt is raised: that attempt's pushes
        are a subset of a full run's, which hits it too."""
        cdef int status
        cdef Py_ssize_t i
        cdef uint64_t spent = recognizer.work_spent
        while True:
            with nogil:
                status = self._attempt(recognizer, bits, narrow, n_bits, spec, scratch, result)
            if status == FILL_NO_MEMORY:
                raise MemoryError()
            if status == FILL_DONE:
                return 0
            recognizer.raise_pending_error()
            recognizer.reset_work_spent(spent)
            for i in range(scratch.n_misses):
                self.terminal_tokens(<TrieView>scratch.misses[i].trie, scratch.misses[i].terminal_id,
                                     scratch.misses[i].progress)

    cdef int _attempt(self, EarleyRecognizer recognizer, word_t* bits, word_t* narrow,
                      Py_ssize_t n_bits, const StepSpec* spec, FillScratch* scratch,
                      StepResult* result) noexcept nogil:
        """One try at the grammar mask into ``bits[0:n_bits]`` (and
        ``narrow``), every token set read from the table: FILL_DONE,
        FILL_MISS (``scratch.misses`` names the sets not cached, the first
        ``scratch.miss_capacity`` met; the recognizer is as it was) or
        FILL_NO_MEMORY.  With ``spec``, the
        whole mask step: the grammar mask under ``spec.budget`` units of
        work, then EOS when the output may end (alone with
        ``spec.eager_end``), into ``result``; FILL_ERROR when the recognizer
        holds a pending error (its budget kept for the message), else the
        budget is lifted again."""
        cdef int status
        cdef bint may_end
        cdef Py_ssize_t i
        memset(bits, 0, n_bits * sizeof(word_t))
        if narrow != NULL:
            memset(narrow, 0, n_bits * sizeof(word_t))
        scratch.n_misses = 0
        if spec != NULL:
            recognizer.limit_work_units(spec.budget)
        status = self._fill_level(recognizer, self.vocab_trie, bits, narrow, scratch)
        if spec == NULL or status == FILL_NO_MEMORY:
            return status
        if recognizer.error_code != 0:
            return FILL_ERROR
        if status != FILL_DONE:
            return status
        result.work = recognizer.work_spent
        may_end = recognizer.accepting()
        recognizer.limit_work_units(0)
        if may_end:
            if spec.eager_end:
                memset(bits, 0, n_bits * sizeof(word_t))
            for i in range(spec.n_eos_words):
                bits[spec.eos_words[i]] |= spec.eos_masks[i]
        result.empty = True
        for i in range(n_bits):
            if bits[i]:
                result.empty = False
                break
        return FILL_DONE

    cdef int _fill_level(self, EarleyRecognizer recognizer, TrieView trie, word_t* out,
                         word_t* narrow, FillScratch* scratch) noexcept nogil:
        """Mark the tokens of ``trie`` the recognizer accepts from its top set
        (and, when ``narrow`` is not NULL, the narrow ones among them), or
        return FILL_MISS (the sets missed recorded, ``_note_miss``) /
        FILL_NO_MEMORY (the recognizer as it was).

        Only scan items consume bytes, so the tokens are the union over scan
        items k of: the inside set of k's (terminal, state) over ``trie``, and,
        recursively, the tokens of k's exit trie accepted once k's terminal
        ends.  Scan items with the same set are taken together: its inside
        set OR-ed once, and its exit trie walked once from the set in which
        all their terminals end (``push_terminal_ends_at``, the union of
        their continuations), so the items of a counted repetition's many
        rules cost one walk, not one each.  Each level consumes at least one
        byte of every token it passes down, so the recursion is at most the
        longest token deep; every level is a few table lookups and bitset
        ORs.  Small exit tries (the common case: `",`, `"}` ...) are walked
        byte by byte instead, which is cheaper than recursing."""
        cdef Py_ssize_t n_scan = recognizer.n_scan_items()
        cdef Py_ssize_t k, seen_base = scratch.n_seen, found_base = scratch.n_found
        cdef Py_ssize_t seen_mask = _reserve_seen(scratch, n_scan)
        cdef terminal_id_t terminal_id
        cdef state_id_t progress
        cdef const TerminalInfo* terminal
        cdef PyObject* found
        cdef int status = FILL_DONE, set_status
        if seen_mask < 0 or not _reserve_found(scratch, n_scan):
            scratch.n_seen = seen_base
            return FILL_NO_MEMORY
        for k in range(n_scan):
            recognizer.scan_item(k, &terminal_id, &progress)
            terminal = &self.tables.view.terminal_infos[terminal_id]
            if terminal.is_dfa:
                progress = self._representatives[
                    self.tables.view.dfa_infos[terminal.dfa_id].state_base + progress]
            found = self._find(<void*>trie, terminal_id, progress)
            scratch.found[found_base + k] = found
            if found == NULL:
                status = FILL_MISS
                if not _note_miss(scratch, <void*>trie, terminal_id, progress):
                    break
        if status != FILL_MISS or scratch.n_misses < scratch.miss_capacity:
            for k in range(n_scan):
                found = scratch.found[found_base + k]
                if found == NULL or not _seen_add(scratch, seen_base, seen_mask, found):
                    continue
                set_status = self._fill_set(recognizer, k, n_scan, found_base,
                                            <TerminalTokens>found, out, narrow, scratch)
                if set_status == FILL_NO_MEMORY:
                    status = set_status
                    break
                if set_status == FILL_MISS:
                    status = FILL_MISS
                    if scratch.n_misses >= scratch.miss_capacity:
                        break
        scratch.n_seen = seen_base
        scratch.n_found = found_base
        return status

    cdef int _fill_set(self, EarleyRecognizer recognizer, Py_ssize_t first, Py_ssize_t n_scan,
                       Py_ssize_t found_base, TerminalTokens entry, word_t* out, word_t* narrow,
                       FillScratch* scratch) noexcept nogil:
        """The share of ``_fill_level`` of the scan items whose set is
        ``entry`` (``scratch.found[found_base + k]``, the first at ``first``):
        its inside set, then, with their terminals ended together, its exit
        trie.  Narrow tokens: an inside token is narrow by its automaton
        state alone (``narrow_ids``), or, when the terminal may end after it
        (``closing_ids``), if also the bytes allowed once the terminal ends
        are few; walked tokens are tested on the recognizer itself."""
        cdef bint follow_narrow = narrow != NULL and entry._closing_ids.shape[0] > 0
        cdef uint64_t follow[4]
        cdef int status = FILL_DONE
        cdef Py_ssize_t k, n = 0
        entry.or_inside(out)
        if narrow != NULL:
            bitset_add_ids(narrow, entry._narrow_ids)
        if entry.exit_trie is None and not follow_narrow:
            return FILL_DONE
        if not _reserve_group(scratch, n_scan - first):
            return FILL_NO_MEMORY
        for k in range(first, n_scan):
            if scratch.found[found_base + k] == <PyObject*>entry:
                scratch.group[n] = k
                n += 1
        if not recognizer.push_terminal_ends_at(scratch.group, n, entry.end_state):
            return FILL_DONE
        if follow_narrow:
            recognizer.allowed_bytes(follow)
            if is_narrow(follow, 0):
                bitset_add_ids(narrow, entry._closing_ids)
            elif is_narrow(follow, 0x20):
                bitset_add_ids(narrow, entry._closing_space_ids)
        if entry.exit_trie is not None and entry.exit_trie.n_nodes <= WALK_LIMIT:
            walk_trie(recognizer, entry.exit_trie, out, &scratch.frames, narrow)
        elif entry.exit_trie is not None:
            status = self._fill_level(recognizer, entry.exit_trie, out, narrow, scratch)
        recognizer.pop_bytes(1)
        return status

    # -- the token-set table -------------------------------------------------

    cdef PyObject* _find(self, const void* trie, terminal_id_t terminal_id,
                         state_id_t progress) noexcept nogil:
        """The cached ``TerminalTokens`` of (trie, terminal, progress), NULL
        when not cached (yet).  Reads without the GIL or the lock: a table
        and its entries are published complete (release stores), and a
        grown table replaces the old one without freeing it."""
        cdef SetTable* table = <SetTable*>atomic_load_ptr(<void**>&self.table)
        cdef size_t i = _set_hash(trie, terminal_id, progress) & table.mask
        cdef SetEntry* entry
        while True:
            entry = <SetEntry*>atomic_load_ptr(<void**>&table.slots[i])
            if entry == NULL:
                return NULL
            if entry.trie == trie and entry.terminal_id == terminal_id \
                    and entry.progress == progress:
                return entry.tokens
            i = (i + 1) & table.mask

    cdef int _table_add(self, TrieView trie, terminal_id_t terminal_id, state_id_t progress,
                        TerminalTokens tokens) except -1:
        """Publish a new cache entry in the table (``self.lock`` held, the key
        new; ``self.cache`` keeps ``tokens`` and, through the key, ``trie``
        alive).  At half full the table is copied into one twice the size
        and the old one retired (freed with the computer)."""
        cdef SetTable* table = self.table
        cdef SetTable* grown
        cdef SetEntry* entry
        cdef size_t i
        if 2 * (self.n_table_entries + 1) > table.mask + 1:
            grown = _table_new(2 * (table.mask + 1))
            if grown == NULL:
                raise MemoryError()
            for i in range(table.mask + 1):
                if table.slots[i] != NULL:
                    _table_place(grown, table.slots[i])
            grown.retired = table
            atomic_store_ptr(<void**>&self.table, grown)
            table = grown
        entry = <SetEntry*>malloc(sizeof(SetEntry))
        if entry == NULL:
            raise MemoryError()
        entry.trie = <void*>trie
        entry.terminal_id = terminal_id
        entry.progress = progress
        entry.tokens = <PyObject*>tokens
        _table_place(table, entry)
        self.n_table_entries += 1
        return 0

    def __dealloc__(self):
        cdef SetTable* table = self.table
        cdef SetTable* retired
        cdef size_t i
        if table != NULL:
            for i in range(table.mask + 1):
                free(table.slots[i])
        while table != NULL:
            retired = table.retired
            free(table.slots)
            free(table)
            table = retired


# ---- the token-set table's C parts -------------------------------------------

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static void* grammask_load_ptr(void** p) { void* v = *(void* volatile*)p; _ReadWriteBarrier(); return v; }
    static void grammask_store_ptr(void** p, void* v) { _ReadWriteBarrier(); *(void* volatile*)p = v; }
    static Py_ssize_t grammask_fetch_add(Py_ssize_t* p, Py_ssize_t v) {
        return (Py_ssize_t)_InterlockedExchangeAdd64((volatile __int64*)p, (__int64)v); }
    static Py_ssize_t grammask_load(Py_ssize_t* p) { Py_ssize_t v = *(volatile Py_ssize_t*)p; _ReadWriteBarrier(); return v; }
    #include <windows.h>
    static void grammask_yield(void) { SwitchToThread(); }
    static long long grammask_now_ns(void) {
        LARGE_INTEGER count, frequency;
        QueryPerformanceCounter(&count); QueryPerformanceFrequency(&frequency);
        return (long long)((double)count.QuadPart * 1e9 / (double)frequency.QuadPart); }
    static int grammask_load_int(int* p) { int v = *(volatile int*)p; _ReadWriteBarrier(); return v; }
    static void grammask_store_int(int* p, int v) { _ReadWriteBarrier(); *(volatile int*)p = v; }
    static int grammask_exchange_int(int* p, int v) { return (int)_InterlockedExchange((volatile long*)p, (long)v); }
    static int grammask_cas_int(int* p, int expected, int desired) {
        return (int)_InterlockedCompareExchange((volatile long*)p, (long)desired, (long)expected) == expected; }
    #else
    #include <sched.h>
    #include <time.h>
    static long long grammask_now_ns(void) {
        struct timespec now; clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long)now.tv_sec * 1000000000LL + now.tv_nsec; }
    static void* grammask_load_ptr(void** p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static void grammask_store_ptr(void** p, void* v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static Py_ssize_t grammask_fetch_add(Py_ssize_t* p, Py_ssize_t v) {
        return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
    static Py_ssize_t grammask_load(Py_ssize_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static void grammask_yield(void) { sched_yield(); }
    static int grammask_load_int(int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static void grammask_store_int(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static int grammask_exchange_int(int* p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL); }
    static int grammask_cas_int(int* p, int expected, int desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
    #endif
    """
    void* atomic_load_ptr "grammask_load_ptr" (void** p) noexcept nogil
    void atomic_store_ptr "grammask_store_ptr" (void** p, void* value) noexcept nogil
    Py_ssize_t atomic_fetch_add "grammask_fetch_add" (Py_ssize_t* p, Py_ssize_t value) noexcept nogil
    Py_ssize_t atomic_load "grammask_load" (Py_ssize_t* p) noexcept nogil
    void yield_thread "grammask_yield" () noexcept nogil
    long long now_ns "grammask_now_ns" () noexcept nogil
    int atomic_load_int "grammask_load_int" (int* p) noexcept nogil
    void atomic_store_int "grammask_store_int" (int* p, int value) noexcept nogil
    int atomic_exchange_int "grammask_exchange_int" (int* p, int value) noexcept nogil
    bint atomic_cas_int "grammask_cas_int" (int* p, int expected, int desired) noexcept nogil


cdef inline size_t _set_hash(const void* trie, terminal_id_t terminal_id,
                             state_id_t progress) noexcept nogil:
    cdef uint64_t h = (<uint64_t><size_t>trie) * <uint64_t>0x9E3779B97F4A7C15
    h ^= (((<uint64_t><uint32_t>terminal_id) << 32) | <uint32_t>progress) \
        * <uint64_t>0xC2B2AE3D27D4EB4F
    return <size_t>(h ^ (h >> 29))


cdef SetTable* _table_new(size_t capacity) noexcept nogil:
    """An empty table of ``capacity`` (a power of two) slots; NULL when
    memory runs out."""
    cdef SetTable* table = <SetTable*>malloc(sizeof(SetTable))
    if table == NULL:
        return NULL
    table.slots = <SetEntry**>calloc(capacity, sizeof(SetEntry*))
    if table.slots == NULL:
        free(table)
        return NULL
    table.mask = capacity - 1
    table.retired = NULL
    return table


cdef void _table_place(SetTable* table, SetEntry* entry) noexcept nogil:
    """Put ``entry`` in the first free slot of its probe sequence (the
    table has one), published with a release store."""
    cdef size_t i = _set_hash(entry.trie, entry.terminal_id, entry.progress) & table.mask
    while table.slots[i] != NULL:
        i = (i + 1) & table.mask
    atomic_store_ptr(<void**>&table.slots[i], entry)


# ---- scratch of one filling thread ---------------------------------------------

cdef bint scratch_init(FillScratch* scratch, Py_ssize_t max_depth,
                       Py_ssize_t miss_capacity) noexcept nogil:
    """Walk frames for tries up to ``max_depth`` deep, attempts stopping once
    they missed ``miss_capacity`` distinct sets (1: at their first, as a
    batch job does); False when memory runs out (nothing held).  The owner
    calls ``scratch_free``."""
    scratch.seen = NULL
    scratch.seen_capacity = 0
    scratch.n_seen = 0
    scratch.found = NULL
    scratch.found_capacity = 0
    scratch.n_found = 0
    scratch.group = NULL
    scratch.group_capacity = 0
    scratch.n_misses = 0
    scratch.miss_capacity = min(miss_capacity, MAX_MISSES)
    return frames_init(&scratch.frames, max_depth)


cdef bint _note_miss(FillScratch* scratch, const void* trie, terminal_id_t terminal_id,
                     state_id_t progress) noexcept nogil:
    """Record a set the attempt missed (once per key); whether the attempt
    goes on (fewer than ``miss_capacity`` recorded)."""
    cdef Py_ssize_t i
    cdef MissKey* key
    for i in range(scratch.n_misses):
        key = &scratch.misses[i]
        if key.trie == trie and key.terminal_id == terminal_id and key.progress == progress:
            return scratch.n_misses < scratch.miss_capacity
    if scratch.n_misses < MAX_MISSES:
        key = &scratch.misses[scratch.n_misses]
        key.trie = trie
        key.terminal_id = terminal_id
        key.progress = progress
        scratch.n_misses += 1
    return scratch.n_misses < scratch.miss_capacity


cdef void scratch_free(FillScratch* scratch) noexcept nogil:
    frames_free(&scratch.frames)
    free(scratch.seen)
    free(scratch.found)
    free(scratch.group)
    scratch.seen = NULL
    scratch.found = NULL
    scratch.group = NULL


cdef bint _reserve_found(FillScratch* scratch, Py_ssize_t n_items) noexcept nogil:
    """Reserve ``n_items`` slots on top of the found stack (False when memory
    runs out); the level that reserved them pops them by restoring
    ``n_found``."""
    cdef Py_ssize_t needed = scratch.n_found + n_items, capacity
    cdef PyObject** grown
    if needed > scratch.found_capacity:
        capacity = max(2 * scratch.found_capacity, needed, 16)
        grown = <PyObject**>realloc(scratch.found, capacity * sizeof(PyObject*))
        if grown == NULL:
            return False
        scratch.found = grown
        scratch.found_capacity = capacity
    scratch.n_found = needed
    return True


cdef bint _reserve_group(FillScratch* scratch, Py_ssize_t n_items) noexcept nogil:
    """Room for ``n_items`` scan item indices in ``group`` (False when memory
    runs out)."""
    cdef Py_ssize_t capacity
    cdef Py_ssize_t* grown
    if n_items > scratch.group_capacity:
        capacity = max(2 * scratch.group_capacity, n_items, 16)
        grown = <Py_ssize_t*>realloc(scratch.group, capacity * sizeof(Py_ssize_t))
        if grown == NULL:
            return False
        scratch.group = grown
        scratch.group_capacity = capacity
    return True


cdef Py_ssize_t _reserve_seen(FillScratch* scratch, Py_ssize_t n_items) noexcept nogil:
    """Reserve, on top of the seen stack, an empty open-addressing set for
    ``n_items`` entries (at most half full); returns its size - 1, or -1
    when memory runs out.  The level that reserved it pops it by restoring
    ``n_seen``."""
    cdef Py_ssize_t size = 16
    cdef Py_ssize_t needed, capacity
    cdef const void** grown
    while size < 2 * n_items:
        size *= 2
    needed = scratch.n_seen + size
    if needed > scratch.seen_capacity:
        capacity = max(2 * scratch.seen_capacity, needed)
        grown = <const void**>realloc(scratch.seen, capacity * sizeof(void*))
        if grown == NULL:
            return -1
        scratch.seen = grown
        scratch.seen_capacity = capacity
    memset(scratch.seen + scratch.n_seen, 0, size * sizeof(void*))
    scratch.n_seen = needed
    return size - 1


cdef bint _seen_add(FillScratch* scratch, Py_ssize_t base, Py_ssize_t mask,
                    const void* value) noexcept nogil:
    """Add ``value`` to the seen set at ``base``: True if it was not there."""
    cdef Py_ssize_t i = <Py_ssize_t>((<size_t>value >> 4) * <size_t>0x9E3779B9) & mask
    while scratch.seen[base + i] != NULL:
        if scratch.seen[base + i] == value:
            return False
        i = (i + 1) & mask
    scratch.seen[base + i] = value
    return True


# ---- whole mask steps, one by one or a batch at a time -------------------------

cdef class MaskStep:
    """What the mask of a grammar without token-level filters (no canonical
    filter, no token terminals) adds to the grammar mask: a work budget and
    EOS.  Immutable; one per ``CompiledGrammar``.

    ``MaskStep(n_words, eos_word_masks, budget, eager_end)``:
    ``eos_word_masks`` as ``grammask.bitset.word_masks`` gives them;
    ``budget`` the units of ``Config.max_earley_work_per_mask``."""

    def __init__(self, Py_ssize_t n_words, eos_word_masks, budget, bint eager_end):
        if int(budget) < 1:
            raise ValueError("a work budget must be positive")
        self._eos_words = np.ascontiguousarray([word for word, _ in eos_word_masks], dtype=np.int32)
        self._eos_masks = np.ascontiguousarray([mask for _, mask in eos_word_masks], dtype=np.uint32)
        if len(self._eos_words) and (self._eos_words.min() < 0 or self._eos_words.max() >= n_words):
            raise ValueError("an EOS word lies outside the bitset")
        cdef const int32_t[::1] words = self._eos_words
        cdef const word_t[::1] masks = self._eos_masks
        self.spec.n_words = n_words
        self.spec.budget = int(budget)
        self.spec.eager_end = eager_end
        self.spec.n_eos_words = words.shape[0]
        self.spec.eos_words = &words[0] if words.shape[0] else NULL
        self.spec.eos_masks = &masks[0] if masks.shape[0] else NULL


cdef class MaskState:
    """One engine's mask and what computing it takes, in fields a
    ``MaskBatch`` reads and updates from C: the bits (the mask when
    ``valid``), the recognizer, the grammar's computer and ``MaskStep``,
    whether masks go through a whole-mask cache, whether EOS was accepted,
    and the most Earley work one mask took.  The engine keeps them current
    (``grammask.engine.engine``); ``bits`` is its own for life."""

    def __init__(self, MaskComputer computer not None, MaskStep step, bint cached, bits):
        cdef word_t[::1] view = bits
        if view.shape[0] < computer.n_words or (step is not None
                                                 and view.shape[0] < step.spec.n_words):
            raise ValueError("bitset too short for the vocabulary")
        self.computer = computer
        self.step = step
        self.cached = cached
        self.bits = bits
        self._bits = &view[0]
        self.recognizer = None
        self.valid = False
        self.finished = False
        self.max_work = 0
        self.batch_serial = 0

    def copy(self, bits, EarleyRecognizer recognizer):
        """The same state over a copy's ``bits`` and ``recognizer``."""
        cdef MaskState clone = MaskState(self.computer, self.step, self.cached, bits)
        clone.recognizer = recognizer
        clone.valid = self.valid
        clone.finished = self.finished
        clone.max_work = self.max_work
        return clone


cdef Py_ssize_t _last_batch_serial = 0


cdef struct JobKey:
    size_t grammar                   # the job's MaskComputer, as a number
    Py_ssize_t index


cdef int _by_grammar(const void* a, const void* b) noexcept nogil:
    """qsort's order of ``JobKey``s: by grammar, then by index."""
    cdef const JobKey* x = <const JobKey*>a
    cdef const JobKey* y = <const JobKey*>b
    if x.grammar != y.grammar:
        return -1 if x.grammar < y.grammar else 1
    return -1 if x.index < y.index else (1 if x.index > y.index else 0)


cdef class MaskBatch:
    """Whole mask steps (``MaskComputer.fill_mask``) of many engines'
    ``MaskState``s, computed by any number of threads at once without the
    GIL, and, once every one is done, copied into the rows of an output.

    ``add_states`` / ``add_state`` the jobs (with the GIL), run them with
    ``MaskWorkers.run``, then ``finish()`` (with the GIL) and read the jobs
    it names with ``result``.  A job whose token sets are not all cached
    yet is left undone (its recognizer as it was): the caller computes it
    the ordinary way, which builds them.  Rows are copied only when every
    job is done (``rows_written``), so a failing job writes no row.

    The jobs, ordered by grammar, are cut into one segment per thread
    (``_split``); a thread takes the next job of its own segment, then of
    the others' (a helper woken late loses its share, nothing waits for
    it), and once every job is done copies the rows of the masks it
    computed before any other's.  A thread so reads the token sets of a
    few grammars rather than of all, a mask's bits are copied on the core
    that wrote them, and an engine in the same place of the next call's
    batch is computed by the same thread again, its bits still in that
    core's cache (docs/benchmarks.md, "Batched masks")."""

    def __cinit__(self, rows=None):
        """``rows``: a C-contiguous int32 [rows, words] array the jobs' masks
        are copied into, or None."""
        global _last_batch_serial
        _last_batch_serial += 1
        self.serial = _last_batch_serial
        self.refs = []
        self.jobs = NULL
        self.n_jobs = 0
        self.capacity = 0
        self.n_segments = 0
        self.order = NULL
        self.n_finished = 0
        self.n_failed = 0
        self.n_copied = 0
        self.max_depth = 0
        self.has_rows = rows is not None
        if self.has_rows:
            self.rows = rows

    def __dealloc__(self):
        free(self.jobs)
        free(self.order)

    def add_states(self, list states, rows=None, Py_ssize_t n_words=-1):
        """Queue the mask of every ``states[i]`` (a ``MaskState`` or None)
        whose mask is not valid, not finished, has a ``MaskStep`` and no
        cache, copied into row ``rows[i]`` (rows: a sequence, or None for
        none); the job's tag is i.  Returns the i of the other states that
        are not None, in order.  With ``n_words`` >= 0, first raises
        ``VocabularyError`` (nothing queued) unless every state's bitsets
        have that many words.  Not while the jobs run."""
        cdef Py_ssize_t i
        cdef MaskState state
        cdef list others = []
        if n_words >= 0:
            for i in range(len(states)):
                if states[i] is not None and (<MaskState?>states[i]).computer.n_words != n_words:
                    raise VocabularyError(
                        f"bitmask rows have {n_words} words, an engine's vocabulary needs "
                        f"{(<MaskState>states[i]).computer.n_words}")
        for i in range(len(states)):
            if states[i] is None:
                continue
            state = <MaskState?>states[i]
            if state.valid or state.finished or state.step is None or state.cached \
                    or state.recognizer is None:
                others.append(i)
            else:
                self._add(state, -1 if rows is None else rows[i], i)
        return others

    def add_engines(self, list engines, engine_class, rows=None, Py_ssize_t n_words=-1):
        """``add_states`` over the ``_mask`` of every entry of ``engines``
        (None entries stay None), once every entry is None or an instance of
        ``engine_class`` and no engine is there twice; else returns None,
        nothing queued, for the caller to say which entry is wrong."""
        cdef Py_ssize_t i, n = len(engines)
        cdef list states = [None] * n
        cdef MaskState state
        for i in range(n):
            engine = engines[i]
            if engine is None:
                continue
            if not isinstance(engine, engine_class):
                return None
            state = <MaskState?>engine._mask
            if state.batch_serial == self.serial:
                return None
            state.batch_serial = self.serial
            states[i] = state
        return self.add_states(states, rows, n_words)

    def add_state(self, MaskState state not None, Py_ssize_t row, Py_ssize_t tag):
        """Queue ``state``'s mask (it needs a ``MaskStep`` and a recognizer;
        its cache is the caller's business), copied into row ``row`` (-1:
        none), under ``tag``.  Returns the job's index.  Not while the jobs
        run."""
        if state.step is None or state.recognizer is None:
            raise ValueError("this mask is not computed by a MaskStep")
        return self._add(state, row, tag)

    cdef Py_ssize_t _add(self, MaskState state, Py_ssize_t row, Py_ssize_t tag) except -1:
        cdef BatchJob* grown
        cdef BatchJob* job
        if row >= 0 and not (self.has_rows and row < self.rows.shape[0]
                             and self.rows.shape[1] == state.step.spec.n_words):
            raise ValueError("no such row in the rows")
        if self.n_jobs == self.capacity:
            grown = <BatchJob*>realloc(self.jobs, max(16, 2 * self.capacity) * sizeof(BatchJob))
            if grown == NULL:
                raise MemoryError()
            self.jobs = grown
            self.capacity = max(16, 2 * self.capacity)
        self.refs.append(state)
        job = &self.jobs[self.n_jobs]
        job.state = <PyObject*>state
        job.computer = <PyObject*>state.computer
        job.recognizer = <PyObject*>state.recognizer
        job.bits = state._bits
        job.spec = &state.step.spec
        job.row = row
        job.tag = tag
        job.status = FILL_MISS
        job.worker = -1
        job.copied = 0
        self.max_depth = max(self.max_depth, state.computer.vocab_trie.max_depth)
        self.n_jobs += 1
        return self.n_jobs - 1

    def __len__(self):
        return self.n_jobs

    def forget_rows(self):
        """Copy no mask into the rows (before ``run``)."""
        self.has_rows = False

    @property
    def rows_written(self):
        """Every job is done and its mask copied into its row (once the jobs
        ran)."""
        return self.has_rows and self.n_failed == 0 and self.n_copied == self.n_jobs

    cdef void _split(self, Py_ssize_t n_threads) noexcept nogil:
        """Before the jobs run: order them by grammar (their computers;
        queueing order within one) and cut that order into one segment per
        thread (at most ``MAX_SEGMENTS``).  A thread then reads a few
        grammars' token sets, which stay in its core's cache from one job
        to the next; jobs in queueing order spread every grammar over every
        thread.  Without memory for the order, queueing order."""
        cdef Py_ssize_t i, s
        cdef JobKey* keys
        self.n_segments = max(1, min(n_threads, MAX_SEGMENTS, self.n_jobs))
        for s in range(self.n_segments):
            self.cursors[s * CURSOR_STRIDE] = s * self.n_jobs // self.n_segments
        if self.n_segments == 1 or self.order != NULL:
            return
        keys = <JobKey*>malloc(self.n_jobs * sizeof(JobKey))
        self.order = <Py_ssize_t*>malloc(self.n_jobs * sizeof(Py_ssize_t))
        if keys != NULL and self.order != NULL:
            for i in range(self.n_jobs):
                keys[i].grammar = <size_t>self.jobs[i].computer
                keys[i].index = i
            qsort(keys, self.n_jobs, sizeof(JobKey), _by_grammar)
            for i in range(self.n_jobs):
                self.order[i] = keys[i].index
        else:
            free(self.order)
            self.order = NULL
        free(keys)

    cdef void _work(self, Py_ssize_t worker) noexcept nogil:
        """Thread ``worker``'s share (the caller's is 0): take jobs, its own
        segment's first, until none is left in any; then, once all are
        done and none failed or was left undone, copy rows, those of its
        own masks first, until none is left.  Any number of threads at
        once, each with its own ``worker``; the wait for the others' jobs
        is at most one mask each (every job is taken by then).  Without
        memory for its scratch a thread takes nothing."""
        cdef FillScratch scratch
        cdef Py_ssize_t i, s, segment, end
        cdef BatchJob* job
        if not scratch_init(&scratch, self.max_depth, 1):
            return
        for s in range(self.n_segments):
            segment = (worker + s) % self.n_segments
            end = (segment + 1) * self.n_jobs // self.n_segments
            while True:
                i = atomic_fetch_add(&self.cursors[segment * CURSOR_STRIDE], 1)
                if i >= end:
                    break
                job = &self.jobs[self.order[i] if self.order != NULL else i]
                job.status = (<MaskComputer>job.computer)._attempt(
                    <EarleyRecognizer>job.recognizer, job.bits, NULL, job.spec.n_words,
                    job.spec, &scratch, &job.result)
                if job.status == FILL_MISS:
                    (<EarleyRecognizer>job.recognizer).limit_work_units(0)
                job.worker = <int>worker
                if job.status != FILL_DONE:
                    atomic_fetch_add(&self.n_failed, 1)
                atomic_fetch_add(&self.n_finished, 1)
        scratch_free(&scratch)
        if not self.has_rows:
            return
        while atomic_load(&self.n_finished) < self.n_jobs:
            yield_thread()
        if atomic_load(&self.n_failed) != 0:
            return
        for i in range(self.n_jobs):
            if self.jobs[i].worker == worker:
                self._copy(&self.jobs[i])
        for i in range(self.n_jobs - 1, -1, -1):
            self._copy(&self.jobs[i])

    cdef void _copy(self, BatchJob* job) noexcept nogil:
        """Copy ``job``'s mask into its row unless another thread claimed it."""
        if not atomic_cas_int(&job.copied, 0, 1):
            return
        if job.row >= 0:
            memcpy(&self.rows[job.row, 0], job.bits, job.spec.n_words * sizeof(word_t))
        atomic_fetch_add(&self.n_copied, 1)

    def finish(self):
        """Once the jobs ran (``MaskWorkers.run``): mark every state whose job is
        done valid (its work counted); returns the (tag, job index) of the
        jobs that are not done or whose mask is empty, for ``result``."""
        cdef Py_ssize_t i
        cdef BatchJob* job
        cdef MaskState state
        cdef list attention = []
        for i in range(self.n_jobs):
            job = &self.jobs[i]
            if job.status == FILL_DONE:
                state = <MaskState>job.state
                state.valid = True
                if job.result.work > state.max_work:
                    state.max_work = job.result.work
            if job.status != FILL_DONE or job.result.empty:
                attention.append((job.tag, i))
        return attention

    def result(self, Py_ssize_t index):
        """Job ``index``'s (work spent, whether the mask is empty) once the
        jobs ran; None when it was left undone.  Raises
        its error (``LimitExceeded``, ``MemoryError``), the recognizer's work
        unbounded again."""
        if not 0 <= index < self.n_jobs:
            raise IndexError(index)
        cdef BatchJob* job = &self.jobs[index]
        cdef EarleyRecognizer recognizer = <EarleyRecognizer>job.recognizer
        if job.status == FILL_DONE:
            return job.result.work, job.result.empty
        if job.status == FILL_MISS:
            return None
        try:
            if job.status == FILL_NO_MEMORY:
                raise MemoryError()
            recognizer.raise_pending_error()
        finally:
            recognizer.limit_work_units(0)


# Helper states (MaskWorkers.states).  A post is IDLE -> POSTED (the helper
# woken), then POSTED -> RUNNING -> WAKING by the helper, or POSTED ->
# CANCELLED by the caller when it finished first (the helper, once awake,
# CANCELLED -> IDLE).  ``prepare`` wakes a helper ahead of a post (IDLE ->
# WAKING, or CANCELLED -> WAKING).  A WAKING helper spins until POSTED, or
# until its deadline (SPIN_NS after ``prepare``, LINGER_NS after a run) or
# ``stop()`` (then WAKING -> IDLE).  Only the helper sets IDLE, and only
# just before it sleeps, so its lock is released once per sleep (on
# leaving IDLE).  A helper woken after ``stop()`` leaves in STOPPED.
cdef enum:
    HELPER_IDLE = 0
    HELPER_POSTED = 1
    HELPER_RUNNING = 2
    HELPER_CANCELLED = 3
    HELPER_WAKING = 4
    HELPER_STOPPED = 5

cdef long long SPIN_NS = 2000000
"""How long a helper woken by ``prepare`` waits for its post before sleeping
again (2 ms: a batch's queueing takes tens of microseconds)."""

cdef long long LINGER_NS = 500000
"""How long a helper that finished a run waits for the next post before
sleeping (0.5 ms).  Waking a sleeping helper costs the caller 15-20 µs
where an idle core must be woken (a virtual machine's halted vCPU), a
tenth of a 32-engine batch's masks; a decoding loop that calls again
within this time (its tokens accepted in between) skips it, and one that
runs a model's forward pass between calls spins for this time per call."""


cdef class MaskWorkers:
    """Helper threads that run a ``MaskBatch``'s jobs, or a Python callable,
    beside the caller, waking, working and reporting without the GIL (a
    Python pool's hand-off holds it for longer than a few masks take).

    ``MaskWorkers(n_helpers)``; start a thread running ``serve(k)`` for
    each k (``grammask.engine.batch``); ``prepare()`` wakes the helpers
    while the caller still queues jobs (waking a sleeping thread takes tens
    of microseconds, so the hand-off overlaps the queueing); ``run(batch)``
    computes a batch on the caller's thread and every helper it wakes in
    time: a helper still asleep when the caller ran out of jobs is
    cancelled, not awaited (one already working is awaited: it holds at
    most one job, then copies rows); ``run_python(work, n)`` calls ``work()`` on the caller's
    thread and on up to ``n`` helpers (each takes the GIL; for callables
    that release it inside).  ``stop()`` ends every ``serve``.  One run at a
    time uses the helpers; a concurrent one works on its caller's thread
    alone."""

    def __cinit__(self, Py_ssize_t n_helpers):
        cdef Py_ssize_t k
        self.n_helpers = 0
        self.wake = <PyThread_type_lock*>calloc(max(n_helpers, 1), sizeof(PyThread_type_lock))
        self.states = <int*>calloc(max(n_helpers, 1), sizeof(int))
        if self.wake == NULL or self.states == NULL:
            raise MemoryError()
        for k in range(n_helpers):
            self.wake[k] = PyThread_allocate_lock()
            if self.wake[k] == NULL:
                raise MemoryError()
            self.n_helpers = k + 1
            PyThread_acquire_lock(self.wake[k], WAIT_LOCK)  # released = "wake up"
        self.current = NULL
        self.call = None
        self.call_error = None
        self.busy = 0
        self.stopping = 0

    def __dealloc__(self):
        cdef Py_ssize_t k
        if self.wake != NULL:
            for k in range(self.n_helpers):
                PyThread_free_lock(self.wake[k])
        free(self.wake)
        free(self.states)

    def serve(self, Py_ssize_t k):
        """Helper k's loop (its thread's whole life): sleep until woken,
        then work on the posted batch or callable, until ``stop()``."""
        if not 0 <= k < self.n_helpers:
            raise IndexError(k)
        cdef int state
        cdef long long deadline
        with nogil:
            while True:
                PyThread_acquire_lock(self.wake[k], WAIT_LOCK)
                if atomic_load_int(&self.stopping):
                    atomic_store_int(&self.states[k], HELPER_STOPPED)
                    break
                deadline = now_ns() + SPIN_NS
                while True:
                    state = atomic_load_int(&self.states[k])
                    if state == HELPER_POSTED:
                        if atomic_cas_int(&self.states[k], HELPER_POSTED, HELPER_RUNNING):
                            if atomic_load_ptr(&self.current) != NULL:
                                (<MaskBatch>atomic_load_ptr(&self.current))._work(k + 1)
                            else:
                                self._call()
                            deadline = now_ns() + LINGER_NS
                            atomic_store_int(&self.states[k], HELPER_WAKING)
                    elif state == HELPER_CANCELLED:
                        if atomic_cas_int(&self.states[k], HELPER_CANCELLED, HELPER_IDLE):
                            break
                    elif state == HELPER_WAKING:
                        if now_ns() < deadline and not atomic_load_int(&self.stopping):
                            yield_thread()
                        elif atomic_cas_int(&self.states[k], HELPER_WAKING, HELPER_IDLE):
                            break
                    else:
                        break

    cdef void _call(self) noexcept with gil:
        """The posted callable on a helper; an error it lets out is kept
        for ``run_python`` to raise."""
        try:
            self.call()
        except BaseException as error:
            self.call_error = error

    def prepare(self):
        """Wake every sleeping helper now, ahead of a ``run`` or
        ``run_python`` (it waits up to ``SPIN_NS`` for its post)."""
        cdef Py_ssize_t k
        with nogil:
            for k in range(self.n_helpers):
                if atomic_cas_int(&self.states[k], HELPER_IDLE, HELPER_WAKING):
                    PyThread_release_lock(self.wake[k])
                else:
                    atomic_cas_int(&self.states[k], HELPER_CANCELLED, HELPER_WAKING)

    cdef Py_ssize_t _post(self, Py_ssize_t n_posted) noexcept nogil:
        """Post the current work to helpers 0..n_posted-1 (waking those
        asleep) once this run owns the helpers; returns how many."""
        cdef Py_ssize_t k
        for k in range(n_posted):
            if atomic_exchange_int(&self.states[k], HELPER_POSTED) == HELPER_IDLE:
                PyThread_release_lock(self.wake[k])
        return n_posted

    cdef void _settle(self, Py_ssize_t n_posted) noexcept nogil:
        """After the caller's share: cancel the posts no helper took, and
        await the helpers that did."""
        cdef Py_ssize_t k
        for k in range(n_posted):
            if not atomic_cas_int(&self.states[k], HELPER_POSTED, HELPER_CANCELLED):
                while atomic_load_int(&self.states[k]) == HELPER_RUNNING:
                    yield_thread()

    def run(self, MaskBatch batch not None):
        """Compute ``batch``'s jobs (and copy its rows) on this thread and
        the helpers, returning once every helper that started is done."""
        cdef Py_ssize_t n_posted = 0
        cdef bint owner
        with nogil:
            owner = atomic_cas_int(&self.busy, 0, 1)
            if owner:
                n_posted = max(0, min(self.n_helpers, batch.n_jobs - 1))
                batch._split(1 + n_posted)
                atomic_store_ptr(&self.current, <void*>batch)
                self._post(n_posted)
            else:
                batch._split(1)
            batch._work(0)
            if owner:
                self._settle(n_posted)
                atomic_store_ptr(&self.current, NULL)
                atomic_store_int(&self.busy, 0)

    def run_python(self, work, Py_ssize_t n_helpers):
        """Call ``work()`` on this thread and on up to ``n_helpers`` helpers
        at once (each with the GIL; ``work`` takes items from a shared
        queue and releases the GIL inside), returning once every helper
        that started is done; raises what escaped ``work`` on a helper."""
        cdef Py_ssize_t n_posted = 0
        cdef bint owner
        error = None
        with nogil:
            owner = atomic_cas_int(&self.busy, 0, 1)
        if owner:
            self.call = work
            self.call_error = None
            with nogil:
                n_posted = self._post(max(0, min(self.n_helpers, n_helpers)))
        try:
            work()
        finally:
            if owner:
                with nogil:
                    self._settle(n_posted)
                error, self.call, self.call_error = self.call_error, None, None
                atomic_store_int(&self.busy, 0)
        if error is not None:
            raise error

    def stop(self):
        """End every helper's ``serve`` (idempotent; a run in progress
        finishes first, a later one computes on its caller's thread):
        returns once each helper has left or will leave as soon as it wakes."""
        cdef Py_ssize_t k
        cdef int state
        atomic_store_int(&self.stopping, 1)
        with nogil:
            for k in range(self.n_helpers):
                while True:
                    if atomic_cas_int(&self.states[k], HELPER_IDLE, HELPER_CANCELLED):
                        PyThread_release_lock(self.wake[k])
                        break
                    state = atomic_load_int(&self.states[k])
                    if state == HELPER_STOPPED:
                        break
                    yield_thread()


def push_probe(EarleyRecognizer recognizer, const uint8_t[::1] data):
    """Push all of ``data`` or nothing, without the recognizer's automatic
    compaction (a probe is always popped again with ``pop_probe``): True if
    pushed.  Raises the recognizer's pending limit or memory error."""
    cdef Py_ssize_t i, n = data.shape[0]
    cdef bint ok = True
    with nogil:
        for i in range(n):
            if not recognizer.try_push_byte(data[i]):
                recognizer.pop_bytes(i)
                ok = False
                break
    if not ok:
        recognizer.raise_pending_error()
    return ok


def next_bytes(EarleyRecognizer recognizer, uint8_t last_byte):
    """The bytes the recognizer allows next, as a 32-byte byte set
    (``bitset.pxd``), and whether they are narrow after a token ending in
    ``last_byte`` (see ``NARROW_BYTES``)."""
    cdef uint64_t byte_set[4]
    recognizer.allowed_bytes(byte_set)
    return byte_set_to_bytes(byte_set), is_narrow(byte_set, last_byte)


def pop_probe(EarleyRecognizer recognizer, Py_ssize_t n_bytes):
    """Undo a successful ``push_probe`` of ``n_bytes`` bytes."""
    with nogil:
        recognizer.pop_bytes(n_bytes)
