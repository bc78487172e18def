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
earlier schema built.

Invariants
----------
``fill`` leaves the recognizer in the state it started in.  A
``MaskComputer`` is immutable after construction except for its caches,
whose writes one lock serializes (the ``TokenSetStore``'s builds another),
so engines on several threads share it (``grammask.engine.batch``).  The
exit-trie walks and the token-set builds run without the GIL; they read
only the calling engine's recognizer and immutable tables, and write only
the caller's bitsets and fresh arrays.  The ORs of cached sets keep the
GIL: half a microsecond each, shorter than a contended GIL handoff.
"""

from libc.stdint cimport uint8_t, int64_t, uint32_t, uint64_t
from libc.string cimport memset

import hashlib
import threading
import weakref

import numpy as np

from grammask._core.bitset cimport bitset_add_ids, byte_set_to_bytes, n_words
from grammask._core.earley cimport EarleyRecognizer
from grammask._core.earley_tables cimport CompiledTables, TerminalInfo
from grammask._core.narrow cimport NARROW_BYTE_LIMIT, is_narrow
from grammask._core.terminal_tokens cimport TerminalTokens
from grammask._core import terminal_tokens as _terminal_tokens
from grammask._core.token_set_store import TokenSetStore, dfa_digest
from grammask._core.trie_walk cimport TrieView, WalkScratch, walk_trie
from grammask._core.types cimport state_id_t, terminal_id_t, word_t


NARROW_BYTES = NARROW_BYTE_LIMIT

# Rows of state classes kept per DFA for derived token sets: subtrees up to
# this many bytes high (most of a vocabulary trie) are skipped by class.
KEPT_CLASS_ROWS = 33

# Hubs with more reachable states than this are shared by DFA digest only
# (JSON's string body from a key's hub has a handful).
SUB_AUTOMATON_LIMIT = 64

# Exit tries with at most this many nodes are walked byte by byte; larger
# ones are handled by recursing over their own per-terminal token sets.
cdef Py_ssize_t WALK_LIMIT = 4096


# A derived token set is built from a base state's only when its walk is
# estimated to visit fewer than this share of the trie's nodes (it runs two
# automata per node; a full build runs one over the nodes alive for the state).
RELATIVE_WALK_SHARE = 0.5

_root_subtree_heights = weakref.WeakKeyDictionary()


def root_subtree_heights(TrieView trie):
    """(the bytes of the root's children, int64[children, KEPT_CLASS_ROWS + 1]
    whose entry [c, k] counts the nodes n of child c's subtree with
    height(n) + (edges from c to n) >= k), computed once per trie."""
    found = _root_subtree_heights.get(trie)
    if found is None:
        node_bytes, ends = trie.arrays()[:2]
        starts = []
        child = 1
        while child < trie.n_nodes:
            starts.append(child)
            child = int(ends[child])
        starts = np.asarray(starts, dtype=np.int64)
        owner = np.searchsorted(starts, np.arange(1, trie.n_nodes), side="right") - 1
        # a node's depth is the number of subtrees [a, end(a)) strictly around it
        nesting = np.zeros(trie.n_nodes + 1, dtype=np.int64)
        np.add.at(nesting, np.arange(1, trie.n_nodes + 1), 1)
        np.add.at(nesting, ends.astype(np.int64), -1)
        below_child = np.cumsum(nesting)[1:trie.n_nodes] - 1
        reach = np.minimum(np.asarray(trie.node_heights)[1:] + below_child, KEPT_CLASS_ROWS)
        counts = np.zeros((len(starts), KEPT_CLASS_ROWS + 1), dtype=np.int64)
        np.add.at(counts, (owner, reach), 1)
        found = (np.asarray(node_bytes)[starts], counts[:, ::-1].cumsum(axis=1)[:, ::-1])
        _root_subtree_heights[trie] = found
    return found


def relative_walk_estimate(TrieView trie, dfa, rows, Py_ssize_t state, Py_ssize_t base_state):
    """About how many nodes ``build_terminal_tokens_relative`` visits deriving
    ``state``'s sets from ``base_state``'s: below a root child where the two
    states step to different states that agree for f bytes (f the first row
    of ``rows``, the DFA's kept ``state_classes_by_depth``, where their
    classes differ), the walk reaches a node d edges below the child when it
    is at least f - 1 - d high (agreement shrinks by one byte per edge), and
    never deeper than where both die or meet (not counted: an upper bound)."""
    child_bytes, tall = root_subtree_heights(trie)
    if not len(child_bytes):
        return 0
    transitions = np.asarray(dfa.transitions)
    classes = np.asarray(dfa.class_map)[child_bytes]
    own = transitions[state, classes]
    other = transitions[base_state, classes]
    differ = rows[:, own] != rows[:, other]
    first = np.where(differ.any(axis=0), differ.argmax(axis=0), rows.shape[0])
    costs = tall[np.arange(len(child_bytes)), np.maximum(first - 1, 0)]
    return int(costs[own != other].sum())


def state_classes_by_depth(transitions, accepting, Py_ssize_t depth):
    """Row d (0 <= d <= ``depth``) labels the states of a DFA so that two
    states have equal labels iff they agree on dead-ness (state 0) and
    acceptance after every input of at most d bytes: Moore's partition
    refinement, one round per row (rows repeat once it is stable).
    Returns int32[depth + 1, n_states]."""
    table = np.asarray(transitions)
    n_states = table.shape[0]
    rows = np.empty((depth + 1, n_states), dtype=np.int32)
    classes = np.asarray(accepting).astype(np.int64) + 1
    classes[0] = 0
    rows[0] = classes
    n_classes = len(np.unique(classes))
    stable = n_classes == n_states
    for d in range(1, depth + 1):
        if not stable:
            signature = np.column_stack([classes, classes[table]])
            order = np.lexsort(signature.T[::-1])
            ordered = signature[order]
            starts_group = np.any(ordered[1:] != ordered[:-1], axis=1)
            refined = np.empty(n_states, dtype=np.int64)
            refined[order] = np.concatenate([[0], np.cumsum(starts_group)])
            n_refined = int(refined.max()) + 1
            stable = n_refined == n_classes or n_refined == n_states
            classes = refined
            n_classes = n_refined
        rows[d] = classes
    return rows


def bounded_state_classes(transitions, accepting, Py_ssize_t depth):
    """For each state of a DFA, the smallest state that agrees with it on
    dead-ness (state 0) and acceptance after every input of at most
    ``depth`` bytes (row ``depth`` of ``state_classes_by_depth``).
    Returns int32[n_states]."""
    return _representatives_of(state_classes_by_depth(transitions, accepting, depth)[depth])


def _classes_and_representatives(dfa, Py_ssize_t depth):
    """``state_classes_by_depth`` to ``depth + 1`` (a token's last byte is
    narrow or not by the byte after it), of which the first
    ``KEPT_CLASS_ROWS`` rows are kept (deeper subtrees are compared by exact
    state), and the representatives at ``depth``."""
    rows = state_classes_by_depth(dfa.transitions, dfa.accepting, depth + 1)
    return np.ascontiguousarray(rows[:KEPT_CLASS_ROWS]), _representatives_of(rows[depth])


def _representatives_of(classes):
    """Each state's smallest state with the same label."""
    n_states = classes.shape[0]
    smallest = np.full(int(classes.max()) + 1, n_states, dtype=np.int64)
    np.minimum.at(smallest, classes, np.arange(n_states))
    return smallest[classes].astype(np.int32)


def sub_automaton_digest(dfa, Py_ssize_t state, Py_ssize_t limit=SUB_AUTOMATON_LIMIT):
    """Digest of the language of ``dfa`` from ``state``: its reachable part
    renumbered in breadth-first order (targets in byte order), so two DFAs
    whose states accept the same continuations get the same digest (both
    are minimal).  None past ``limit`` reachable states."""
    table = np.asarray(dfa.transitions)[:, np.asarray(dfa.class_map)]
    accepting = np.asarray(dfa.accepting)
    number = np.full(table.shape[0], -1, dtype=np.int64)
    number[0] = 0
    number[state] = 1
    order = [state]
    i = 0
    while i < len(order):
        # dict.fromkeys keeps each target once, in the order of its first byte
        for target in dict.fromkeys(table[order[i]].tolist()):
            if number[target] < 0:
                if len(order) >= limit:
                    return None
                number[target] = len(order) + 1
                order.append(target)
        i += 1
    rows = number[table[order]]
    digest = hashlib.blake2b(b"sub-automaton", digest_size=20)
    digest.update(rows.astype(np.int32).tobytes())
    digest.update(accepting[order].astype(np.uint8).tobytes())
    return digest.digest()


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
        self.hubs = {}
        self.hub_keys = {}
        self.last_built = {}
        self.store = store if store is not None else TokenSetStore(capacity=None, budget_bytes=None)
        self.lock = threading.Lock()
        digests = [dfa_digest(dfa) for dfa in tables.lnf.dfas]
        depth = vocab_trie.max_depth
        classes = [self.store.state_classes(digest, depth + 1,
                                            lambda dfa=dfa: _classes_and_representatives(dfa, depth))
                   for digest, dfa in zip(digests, tables.lnf.dfas)]
        self.depth_classes = [rows for rows, _ in classes]
        parts = [representatives for _, representatives in classes]
        self.state_representatives = np.ascontiguousarray(
            np.concatenate(parts) if parts else np.zeros(1, np.int32), dtype=np.int32)
        self._representatives = self.state_representatives
        self.content_keys = [self._content_key(terminal_id, digests)
                             for terminal_id in range(tables.view.n_terminals)]

    def _content_key(self, terminal_id_t terminal_id, list digests):
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
        grammar's cache, else the shared store, else built."""
        key = (trie, terminal_id, progress)
        entry = self.cache.get(key)
        if entry is not None:
            return entry
        cdef TerminalInfo info = self.tables.view.terminal_infos[terminal_id]
        cdef state_id_t hub = self._hub(info.dfa_id) if info.is_dfa else -1
        store_key = (trie, self.content_keys[terminal_id], progress)
        if hub > 0 and progress == hub and info.dfa_id in self.hub_keys:
            # The hub's language may be another DFA's (a key that must differ
            # from the schema's names ends in JSON's string body): share by it.
            hub_key, local_end = self.hub_keys[info.dfa_id]
            entry = self.store.lookup((trie, hub_key, -1), _terminal_tokens.build_terminal_tokens,
                                      self.tables, trie, terminal_id, progress, self.vocab_size)
            if entry.end_state >= 0:
                entry = entry.with_end_state(local_end)
        elif hub > 0 and hub != progress and ((trie, info.dfa_id) in self.last_built
                                              or info.dfa_id in self.hub_keys):
            # Derive from the state built last for this DFA over this trie
            # (decoding walks a string's states in order, and neighbours
            # differ only on long tokens), or from the hub when other DFAs
            # may have built it already.
            base_state, base = self._cheapest_base(trie, info.dfa_id, progress, hub)
            if base_state > 0 and base is None:
                base = self.terminal_tokens(trie, terminal_id, hub)
            if base_state > 0:
                entry = self.store.lookup(store_key, _terminal_tokens.build_terminal_tokens_relative,
                                          self.tables, trie, terminal_id, progress, self.vocab_size,
                                          base, base_state, self.depth_classes[info.dfa_id])
            else:
                entry = self.store.lookup(store_key, _terminal_tokens.build_terminal_tokens,
                                          self.tables, trie, terminal_id, progress, self.vocab_size)
        else:
            entry = self.store.lookup(store_key, _terminal_tokens.build_terminal_tokens,
                                      self.tables, trie, terminal_id, progress, self.vocab_size)
        if info.is_dfa:
            self.last_built[(trie, info.dfa_id)] = (progress, entry)
        with self.lock:
            entry = self.cache.setdefault(key, entry)
        return entry

    def _cheapest_base(self, TrieView trie, Py_ssize_t dfa_id, state_id_t progress,
                       state_id_t hub):
        """(state, its TerminalTokens or None when not built yet) to derive
        ``progress``'s sets from: the state built last for this DFA over this
        trie or the hub, whichever ``relative_walk_estimate`` says walks
        fewer nodes; (-1, None) when even that one would walk more than a
        full build (``RELATIVE_WALK_SHARE`` of the trie), as a state at the
        start of a counted string does from a hub near its end."""
        candidates = []
        last = self.last_built.get((trie, dfa_id))
        if last is not None:
            candidates.append(last)
        if hub > 0 and (last is None or last[0] != hub):
            candidates.append((hub, None))
        dfa = self.tables.lnf.dfas[dfa_id]
        rows = self.depth_classes[dfa_id]
        best, best_cost = (-1, None), RELATIVE_WALK_SHARE * trie.n_nodes
        for state, entry in candidates:
            cost = relative_walk_estimate(trie, dfa, rows, progress, state)
            if cost < best_cost:
                best, best_cost = (state, entry), cost
        return best

    cdef state_id_t _hub(self, Py_ssize_t dfa_id):
        """The DFA's hub: the live state (its class representative) that
        the most (state, byte) transitions enter, the base every other state's
        token sets are derived from (``build_terminal_tokens_relative``)."""
        hub = self.hubs.get(dfa_id)
        if hub is None:
            dfa = self.tables.lnf.dfas[dfa_id]
            transitions = np.asarray(dfa.transitions)
            class_sizes = np.bincount(np.asarray(dfa.class_map), minlength=transitions.shape[1])
            counts = np.bincount(transitions.ravel(), minlength=transitions.shape[0],
                                 weights=np.broadcast_to(class_sizes, transitions.shape).ravel())
            counts[0] = 0
            hub = int(np.argmax(counts))
            if hub > 0:
                hub = int(self._representatives[self.tables.view.dfa_infos[dfa_id].state_base + hub])
                hub_key = sub_automaton_digest(dfa, hub)
                if hub_key is not None:
                    self.hub_keys[dfa_id] = (hub_key, int(np.flatnonzero(np.asarray(dfa.accepting))[0]))
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
        memset(&bits[0], 0, bits.shape[0] * sizeof(word_t))
        if narrow is not None:
            if narrow.shape[0] < self.n_words:
                raise ValueError("narrow bitset too short for the vocabulary")
            memset(&narrow[0], 0, narrow.shape[0] * sizeof(word_t))
            narrow_words = &narrow[0]
        self._fill_level(recognizer, self.vocab_trie, &bits[0], narrow_words,
                         WalkScratch(self.vocab_trie.max_depth))
        # A push that failed for want of memory or items (not because the
        # byte is wrong) would silently drop tokens: raise it instead.
        recognizer.raise_pending_error()

    cdef int _fill_level(self, EarleyRecognizer recognizer, TrieView trie, word_t* out,
                         word_t* narrow, WalkScratch scratch) except -1:
        """Mark the tokens of ``trie`` the recognizer accepts from its top set
        (and, when ``narrow`` is not NULL, the narrow ones among them).

        Only scan items consume bytes, so the tokens are the union over scan
        items k of: the inside set of k's (terminal, state) over ``trie``, and,
        recursively, the tokens of k's exit trie accepted once k's terminal
        ends (``push_terminal_end_at``).  Each level consumes at least one
        byte of every token it passes down, so the recursion is at most the
        longest token deep; every level is a few cached lookups and bitset
        ORs.  Small exit tries (the common case: `",`, `"}` ...) are walked
        byte by byte in C instead, which is cheaper than recursing.

        Narrow tokens: an inside token is narrow by its automaton state alone
        (``narrow_ids``), or, when the terminal may end after it
        (``closing_ids``), if also the bytes allowed once the terminal ends
        are few; walked tokens are tested on the recognizer itself."""
        cdef Py_ssize_t n_scan = recognizer.n_scan_items()
        cdef Py_ssize_t k
        cdef terminal_id_t terminal_id
        cdef state_id_t progress
        cdef TerminalTokens entry
        cdef const TerminalInfo* terminal
        cdef set seen = set()
        cdef bint first_visit, follow_narrow
        cdef uint64_t follow[4]
        for k in range(n_scan):
            recognizer.scan_item(k, &terminal_id, &progress)
            terminal = &self.tables.view.terminal_infos[terminal_id]
            if terminal.is_dfa:
                progress = self._representatives[
                    self.tables.view.dfa_infos[terminal.dfa_id].state_base + progress]
            entry = self.terminal_tokens(trie, terminal_id, progress)
            key = (<int64_t>terminal_id << 32) | <uint32_t>progress
            first_visit = key not in seen
            if first_visit:
                seen.add(key)
                entry.or_inside(out)
                if narrow != NULL:
                    bitset_add_ids(narrow, entry._narrow_ids)
            follow_narrow = narrow != NULL and entry._closing_ids.shape[0] > 0
            if entry.exit_trie is None and not follow_narrow:
                continue
            if not recognizer.push_terminal_end_at(k, entry.end_state):
                continue
            try:
                if follow_narrow:
                    recognizer.allowed_bytes(follow)
                    if is_narrow(follow, 0):
                        bitset_add_ids(narrow, entry._closing_ids)
                    elif is_narrow(follow, 0x20):
                        bitset_add_ids(narrow, entry._closing_space_ids)
                if entry.exit_trie is not None and entry.exit_trie.n_nodes <= WALK_LIMIT:
                    with nogil:
                        walk_trie(recognizer, entry.exit_trie, out, scratch.next_child,
                                  scratch.child_end, scratch.allowed, narrow)
                elif entry.exit_trie is not None:
                    self._fill_level(recognizer, entry.exit_trie, out, narrow, scratch)
            finally:
                recognizer.pop_bytes(1)
        return 0


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
