# cython: language_level=3
"""Per-terminal token sets: the tokens one scan item lets through.

What it computes
----------------
Step 3 of the mask's derivation (after the trie walk of ``trie_walk.pyx``;
kbnf's eager regex cache, xgrammar's adaptive token mask cache).  In an
Earley set only *scan items* (dot before a terminal) consume bytes.  For a
scan item whose terminal is in state q (a DFA state or a literal offset), a
token t is allowed through that item iff either

  a. the terminal's automaton stays alive on all of t ("inside"), or
  b. the automaton is accepting after a non-empty proper prefix p of t and
     the rest t[len(p):] is viable once the terminal ends there ("exit").

(a) depends only on (terminal, q): one precomputed set.  (b) needs the
grammar after the terminal; its remainders are merged into one exit trie
(``exit_trie.pyx``) that the mask computer walks once the terminal ends.
The empty remainder is case (a).  A step inside a JSON string is then one
bitset OR plus a walk of the few distinct remainders (`",`, `"}`, `":` ...).

``build_terminal_tokens`` finds both with one walk of the trie that runs the
terminal's automaton instead of the recognizer, and also sorts the inside
tokens by what the grammar allows after them (``narrow.pxd``) for the
canonical lookahead.  Both builds start from the root's children on the
bytes their state allows (``TrieView.root_child``): a date's digit state
visits 10 of the root's 256 children.

Layout
------
Inside sets of at most ``SPARSE_LIMIT`` tokens are sorted id arrays, larger
ones token bitsets (16 KB for a 131k vocabulary, shared between equal sets
through the caller's pool).  Literal automaton: state = bytes matched + 1,
0 dead (``types.pxd``, ``state_id_t``).

Invariants
----------
A ``TerminalTokens`` is immutable once built; its arrays are read by
``nogil`` loops of the mask computer while several threads hold it.
"""

from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcmp, memcpy

import hashlib

import numpy as np

from grammask._core.bitset cimport (bitset_add, bitset_add_ids, bitset_ids_into,
                                    byte_set_members, n_words)
from grammask._core.earley_tables cimport CompiledTables, DfaInfo, TerminalInfo
from grammask._core.exit_trie cimport merge_subtrees
from grammask._core.growable cimport Growable, growable_empty, grow_push
from grammask._core.narrow cimport is_narrow, is_space
from grammask._core.trie_walk cimport TrieView
from grammask._core.types cimport node_id_t, state_id_t, terminal_id_t, token_id_t, word_t


# Inside sets with at most this many tokens are kept as id lists, larger ones
# as bitsets.
cdef Py_ssize_t SPARSE_LIMIT = 256


cdef class TerminalTokens:
    """Tokens allowed through one scan item in state (terminal, progress).

    ``inside_ids``: sorted ids of tokens on which the terminal's automaton
    stays alive from that state (case a).  ``inside_bits``: the same as a
    bitset when there are many (None otherwise).  ``exit_trie``: the merged
    remainders after the terminal ends inside a token (case b), None when no
    token leaves the terminal with a non-empty remainder.
    ``end_state``: a terminal state at which the terminal may end (for
    ``push_terminal_end_at``).
    ``narrow_ids``: the inside tokens that leave the automaton in a
    non-accepting state allowing at most ``NARROW_BYTES`` next bytes;
    ``closing_ids``: those that leave it in an accepting state allowing at
    most that many (narrow too when what may follow the terminal is);
    ``closing_space_ids``: the closing ids that end in whitespace.
    ``nbytes``: what the entry holds (its arrays, an array shared by two
    fields once, plus 16 bytes per exit-trie node), for the store's budget.
    """

    def __init__(self, inside_ids, inside_bits, exit_trie, state_id_t end_state,
                 exit_nodes, Py_ssize_t n_inside, narrow_ids=(), closing_ids=(),
                 closing_space_ids=()):
        """Exactly one of ``inside_ids`` (sorted int32) and ``inside_bits``
        (uint32 bitset covering the vocabulary, ``n_inside`` bits set) is
        given; ``exit_nodes``: the sorted trie nodes ``exit_trie`` merges."""
        self._fill(None if inside_bits is not None else _int32_array(inside_ids), inside_bits,
                   exit_trie, end_state, _int32_array(exit_nodes), n_inside,
                   _int32_array(narrow_ids), _int32_array(closing_ids),
                   _int32_array(closing_space_ids))

    cdef int _fill(self, inside_ids, inside_bits, TrieView exit_trie, state_id_t end_state,
                   exit_nodes, Py_ssize_t n_inside, narrow_ids, closing_ids,
                   closing_space_ids) except -1:
        """Set every field from int32 C-contiguous arrays (``inside_ids``
        None when ``inside_bits`` is given); the shared empty array's view is
        reused instead of acquiring a buffer per empty list."""
        self.dense = inside_bits is not None
        self.n_inside = n_inside
        self.exit_nodes = exit_nodes
        self.n_exit_nodes = len(exit_nodes)
        self.inside_ids = inside_ids
        self.inside_bits = inside_bits
        if self.dense:
            self._inside_bits = inside_bits
        elif inside_ids is _NO_IDS:
            self._inside_ids = _NO_IDS_VIEW
        else:
            self._inside_ids = inside_ids
        self.exit_trie = exit_trie
        self.end_state = end_state
        self.narrow_ids = narrow_ids
        self.closing_ids = closing_ids
        self.closing_space_ids = closing_space_ids
        if narrow_ids is _NO_IDS:
            self._narrow_ids = _NO_IDS_VIEW
        elif narrow_ids is inside_ids:
            self._narrow_ids = self._inside_ids
        else:
            self._narrow_ids = narrow_ids
        if closing_ids is _NO_IDS:
            self._closing_ids = _NO_IDS_VIEW
        else:
            self._closing_ids = closing_ids
        if closing_space_ids is _NO_IDS:
            self._closing_space_ids = _NO_IDS_VIEW
        else:
            self._closing_space_ids = closing_space_ids
        self.nbytes = sizeof(int32_t) * (self.n_exit_nodes + self._closing_ids.shape[0]
                                         + self._closing_space_ids.shape[0])
        self.nbytes += (sizeof(word_t) * self._inside_bits.shape[0] if self.dense
                        else sizeof(int32_t) * self._inside_ids.shape[0])
        if narrow_ids is not inside_ids:
            self.nbytes += sizeof(int32_t) * self._narrow_ids.shape[0]
        if exit_trie is not None:
            self.nbytes += 16 * exit_trie.n_nodes
        return 0

    def with_end_state(self, state_id_t end_state):
        """The same sets with another ``end_state`` (for a state of another
        DFA whose language from that state is the same)."""
        if end_state == self.end_state:
            return self
        return _new_tokens(self.inside_ids, self.inside_bits, self.exit_trie, end_state,
                           self.exit_nodes, self.n_inside, self.narrow_ids, self.closing_ids,
                           self.closing_space_ids)

    cdef void or_inside(self, word_t* bits) noexcept nogil:
        cdef Py_ssize_t i
        if self.dense:
            for i in range(self._inside_bits.shape[0]):
                bits[i] |= self._inside_bits[i]
        else:
            bitset_add_ids(bits, self._inside_ids)


cdef inline state_id_t _literal_step(const uint8_t* literal, int32_t length, int32_t offset,
                                     uint8_t byte) noexcept nogil:
    """Literal automaton: state = bytes matched + 1 (0 is dead)."""
    if offset < length and literal[offset] == byte:
        return offset + 2
    return 0


cdef int _int32_order(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*>a)[0], y = (<const int32_t*>b)[0]
    return (x > y) - (x < y)


_NO_IDS = np.zeros(0, dtype=np.int32)
_NO_IDS.flags.writeable = False
cdef const token_id_t[::1] _NO_IDS_VIEW = _NO_IDS


cdef object _int32_array(values):
    """``values`` as an int32 C-contiguous array (the shared empty one when empty)."""
    if len(values) == 0:
        return _NO_IDS
    return np.ascontiguousarray(values, dtype=np.int32)


cdef TerminalTokens _new_tokens(inside_ids, inside_bits, TrieView exit_trie,
                                state_id_t end_state, exit_nodes, Py_ssize_t n_inside,
                                narrow_ids, closing_ids, closing_space_ids):
    """A ``TerminalTokens`` of arrays already int32 and C-contiguous (the
    builds' own), without ``__init__``'s conversions."""
    cdef TerminalTokens tokens = TerminalTokens.__new__(TerminalTokens)
    tokens._fill(inside_ids, inside_bits, exit_trie, end_state, exit_nodes, n_inside,
                 narrow_ids, closing_ids, closing_space_ids)
    return tokens


cdef object _sorted_array(Growable* array, bint presorted=False):
    """The values as a new int32 array, sorted in place first (C ``qsort``)
    unless ``presorted`` (a walk's nodes come in preorder, already ascending);
    no values give one shared read-only empty array (most of a small
    state's lists are empty, and entries never write their arrays)."""
    if array.size == 0:
        return _NO_IDS
    if array.size > 1 and not presorted:
        qsort(array.data, array.size, sizeof(int32_t), _int32_order)
    out = np.empty(array.size, dtype=np.int32)
    cdef int32_t[::1] view = out
    if array.size:
        memcpy(&view[0], array.data, array.size * sizeof(int32_t))
    return out


cdef object _ids_of_bits(const word_t* words, Py_ssize_t n_bit_words, Py_ssize_t n_ids):
    """The ids set in a bitset of ``n_ids`` members, ascending."""
    out = np.empty(n_ids, dtype=np.int32)
    cdef int32_t[::1] ids = out
    cdef Py_ssize_t n = 0
    if n_ids:
        with nogil:
            n = bitset_ids_into(words, n_bit_words, n_bit_words * 32, &ids[0], n_ids)
    return out[:n]


cdef word_t* _bits_of(const Growable* ids, Py_ssize_t n_bit_words) noexcept nogil:
    """A new zeroed bitset of ``n_bit_words`` words with ``ids`` set (NULL
    when out of memory; the caller frees it)."""
    cdef word_t* bits = <word_t*>calloc(n_bit_words, sizeof(word_t))
    cdef Py_ssize_t i
    if bits != NULL:
        for i in range(ids.size):
            bitset_add(bits, ids.data[i])
    return bits


cdef int _start_roots(TrieView trie, const uint64_t* allowed, node_id_t* roots) noexcept nogil:
    """Write to ``roots`` the root's children on the bytes of ``allowed`` (a
    256-bit set), in preorder, and return how many; -1 when the trie's root
    is not indexed by byte (``TrieView.roots_by_byte``: walk every child).
    A walk that starts from them skips the dead children of the root
    without a transition each (a date's digit state tests 10 of 256)."""
    cdef uint8_t members[256]
    cdef int n, i, k = 0
    cdef node_id_t child
    if not trie.roots_by_byte:
        return -1
    n = byte_set_members(allowed, members)
    for i in range(n):
        child = trie.root_child[members[i]]
        if child >= 0:
            roots[k] = child
            k += 1
    return k


cdef inline node_id_t _next_node(TrieView trie, node_id_t* next_child, node_id_t* child_end,
                                 Py_ssize_t* depth, const node_id_t* roots, int n_roots,
                                 int* next_root) noexcept nogil:
    """The next node of a walk's preorder: the next child of the frame at
    ``depth[0]``, leaving frames whose children are done (-1 when the root's
    are).  The root's children are ``roots[next_root[0]:n_roots]`` when
    ``n_roots`` >= 0 (``_start_roots``), else every child of node 0."""
    cdef node_id_t child
    while depth[0] >= 0:
        if depth[0] == 0 and n_roots >= 0:
            if next_root[0] == n_roots:
                return -1
            next_root[0] += 1
            return roots[next_root[0] - 1]
        child = next_child[depth[0]]
        if child < child_end[depth[0]]:
            next_child[depth[0]] = trie.node_subtree_ends[child]
            return child
        depth[0] -= 1
    return -1


cdef TrieView _pooled_exit_trie(TrieView trie, exit_nodes, Py_ssize_t vocab_size, trie_pool):
    """The exit trie of ``exit_nodes`` (None when empty), shared through
    ``trie_pool``: the merge depends only on the trie and the exit nodes, so
    states with the same exits (e.g. every state deep inside ``[^"]{0,500}``)
    share one exit trie, built once."""
    if not len(exit_nodes):
        return None
    pool_key = (trie, hashlib.blake2b(exit_nodes.tobytes(), digest_size=20).digest())
    exit_trie = trie_pool.get(pool_key) if trie_pool is not None else None
    if exit_trie is None:
        exit_trie = merge_subtrees(trie, exit_nodes, vocab_size)
        if trie_pool is not None:
            trie_pool[pool_key] = exit_trie
    return exit_trie


cpdef TerminalTokens build_terminal_tokens(CompiledTables tables, TrieView vocab_trie,
                                           terminal_id_t terminal_id, state_id_t progress,
                                           Py_ssize_t vocab_size, object bitset_pool=None,
                                           object trie_pool=None):
    """Compute ``TerminalTokens`` for a scan item of ``terminal_id`` at
    ``progress`` (the Earley core's item field: literal bytes matched, or DFA
    state, 0 = not started) over ``vocab_trie`` (the vocabulary trie or an
    exit trie).  Equal dense inside sets and equal exit tries are shared
    through ``bitset_pool`` and ``trie_pool`` when given."""
    if terminal_id < 0 or terminal_id >= tables.view.n_terminals:
        raise ValueError("terminal id out of range")
    cdef TerminalInfo info = tables.view.terminal_infos[terminal_id]
    cdef DfaInfo dfa
    cdef const int32_t* transitions = NULL
    cdef const uint8_t* class_map = NULL
    cdef const uint8_t* accepting = NULL
    cdef const uint8_t* literal = NULL
    cdef const uint64_t* state_allowed = NULL
    cdef state_id_t state0, end_state = -1
    cdef bint narrow_next
    if info.is_dfa:
        dfa = tables.view.dfa_infos[info.dfa_id]
        transitions = tables.view.transitions + dfa.transitions_start
        class_map = tables.view.class_maps + dfa.class_map_start
        accepting = tables.view.state_accepting + dfa.state_base
        state_allowed = tables.view.state_allowed_bytes + 4 * dfa.state_base
        state0 = dfa.start if progress == 0 else progress
        if state0 <= 0 or state0 >= dfa.n_states:
            raise ValueError("DFA state out of range")
    else:
        literal = tables.view.literal_bytes + info.literal_start
        if progress < 0 or progress >= info.literal_len:
            raise ValueError("literal offset out of range")
        state0 = progress + 1
        end_state = info.literal_len

    cdef Py_ssize_t max_frames = vocab_trie.max_depth + 2
    cdef node_id_t* next_child = <node_id_t*>malloc(max_frames * sizeof(node_id_t))
    cdef node_id_t* child_end = <node_id_t*>malloc(max_frames * sizeof(node_id_t))
    cdef state_id_t* states = <state_id_t*>malloc(max_frames * sizeof(state_id_t))
    cdef Growable inside = growable_empty()
    cdef Growable exits = growable_empty()
    cdef Growable narrow = growable_empty()
    cdef Growable closing = growable_empty()
    cdef Growable closing_space = growable_empty()
    cdef Py_ssize_t n_bit_words = n_words(vocab_size)
    cdef word_t* inside_bits = NULL     # allocated once the set outgrows SPARSE_LIMIT
    cdef word_t[::1] word_view
    cdef token_id_t token_id
    cdef Py_ssize_t n_inside = 0
    cdef Py_ssize_t depth = 0
    cdef node_id_t child
    cdef state_id_t state
    cdef Py_ssize_t i
    cdef bint ok = next_child != NULL and child_end != NULL and states != NULL
    cdef bint is_end
    cdef node_id_t roots[256]
    cdef uint64_t first_bytes[4]
    cdef int n_roots, next_root = 0
    try:
        if not ok:
            raise MemoryError()
        with nogil:
            if info.is_dfa:
                n_roots = _start_roots(vocab_trie, state_allowed + 4 * <int64_t>state0, roots)
            else:
                first_bytes[0] = first_bytes[1] = first_bytes[2] = first_bytes[3] = 0
                first_bytes[literal[state0 - 1] >> 6] = (<uint64_t>1) << (literal[state0 - 1] & 63)
                n_roots = _start_roots(vocab_trie, first_bytes, roots)
            next_child[0] = 1
            child_end[0] = vocab_trie.node_subtree_ends[0]
            states[0] = state0
            while ok:
                child = _next_node(vocab_trie, next_child, child_end, &depth, roots, n_roots,
                                   &next_root)
                if child < 0:
                    break
                if info.is_dfa:
                    state = transitions[<int64_t>states[depth] * dfa.n_classes
                                        + class_map[vocab_trie.node_bytes[child]]]
                    is_end = state != 0 and accepting[state]
                    if is_end:
                        end_state = state
                else:
                    state = _literal_step(literal, info.literal_len, states[depth] - 1,
                                          vocab_trie.node_bytes[child])
                    is_end = state == info.literal_len + 1
                if state == 0:
                    continue
                if info.is_dfa:
                    narrow_next = is_narrow(state_allowed + 4 * <int64_t>state,
                                            vocab_trie.node_bytes[child])
                else:
                    narrow_next = is_end or literal[state - 1] != 0x20 \
                        or is_space(vocab_trie.node_bytes[child])
                for i in range(vocab_trie.node_token_offsets[child],
                               vocab_trie.node_token_offsets[child + 1]):
                    token_id = vocab_trie.token_ids[i]
                    n_inside += 1
                    if n_inside <= SPARSE_LIMIT:
                        ok = ok and grow_push(&inside, token_id)
                    else:
                        if inside_bits == NULL:
                            inside_bits = _bits_of(&inside, n_bit_words)
                            if inside_bits == NULL:
                                ok = False
                                break
                        bitset_add(inside_bits, token_id)
                    if narrow_next:
                        ok = ok and grow_push(&closing if is_end else &narrow, token_id)
                        if is_end and is_space(vocab_trie.node_bytes[child]):
                            ok = ok and grow_push(&closing_space, token_id)
                if vocab_trie.node_subtree_ends[child] > child + 1:
                    if is_end:
                        ok = ok and grow_push(&exits, child)
                    depth += 1
                    next_child[depth] = child + 1
                    child_end[depth] = vocab_trie.node_subtree_ends[child]
                    states[depth] = state
        if not ok:
            raise MemoryError()
        words = None
        if n_inside <= SPARSE_LIMIT:
            inside_ids = _sorted_array(&inside)
        else:
            inside_ids = None
            words = np.empty(n_bit_words, dtype=np.uint32)
            word_view = words
            memcpy(&word_view[0], inside_bits, n_bit_words * sizeof(word_t))
        exit_nodes = _sorted_array(&exits, True)
        narrow_ids = _sorted_array(&narrow)
        if inside_ids is not None and narrow.size == inside.size and (
                narrow.size == 0 or memcmp(narrow.data, inside.data,
                                           narrow.size * sizeof(int32_t)) == 0):
            narrow_ids = inside_ids     # every inside token is narrow (a date's digits)
        closing_ids = _sorted_array(&closing)
        closing_space_ids = _sorted_array(&closing_space)
    finally:
        free(inside_bits)
        free(next_child)
        free(child_end)
        free(states)
        free(inside.data)
        free(exits.data)
        free(narrow.data)
        free(closing.data)
        free(closing_space.data)
    exit_trie = _pooled_exit_trie(vocab_trie, exit_nodes, vocab_size, trie_pool)
    if words is not None and bitset_pool is not None:
        words = bitset_pool.setdefault(words.tobytes(), words)
    return _new_tokens(inside_ids, words, exit_trie, end_state, exit_nodes, n_inside,
                       narrow_ids, closing_ids, closing_space_ids)


cdef inline void _classify(const int32_t* transitions, const uint8_t* class_map,
                           const uint8_t* accepting, const uint64_t* state_allowed,
                           int32_t n_classes, state_id_t from_state, uint8_t byte,
                           state_id_t* state, bint* is_end, bint* narrow_next) noexcept nogil:
    """One DFA step of the trie walk and what it says about the node."""
    state[0] = transitions[<int64_t>from_state * n_classes + class_map[byte]] if from_state else 0
    is_end[0] = state[0] != 0 and accepting[state[0]]
    narrow_next[0] = state[0] != 0 and is_narrow(state_allowed + 4 * <int64_t>state[0], byte)


cdef inline bint _flip(Growable* added, Growable* removed, bint now, bint before,
                       int32_t value) noexcept nogil:
    """Record ``value`` as added or removed when its membership changed."""
    if now == before:
        return True
    return grow_push(added if now else removed, value)


cdef object _patched(base, Growable* added, Growable* removed):
    """The sorted ids of ``base`` (sorted, distinct) without ``removed``, with
    ``added`` (``base`` itself when nothing changed): one merge after sorting
    the two change lists in place (the relative build's few changes; numpy's
    set routines cost tens of µs each here)."""
    if added.size == 0 and removed.size == 0:
        return base
    cdef const int32_t[::1] old = np.ascontiguousarray(base, dtype=np.int32)
    out = np.empty(old.shape[0] + added.size, dtype=np.int32)
    cdef int32_t[::1] result = out
    cdef Py_ssize_t i = 0, a = 0, r = 0, n = 0, n_old = old.shape[0]
    cdef int32_t value
    with nogil:
        if added.size > 1:
            qsort(added.data, added.size, sizeof(int32_t), _int32_order)
        if removed.size > 1:
            qsort(removed.data, removed.size, sizeof(int32_t), _int32_order)
        while i < n_old or a < added.size:
            if a >= added.size or (i < n_old and old[i] <= added.data[a]):
                value = old[i]
                i += 1
                while r < removed.size and removed.data[r] < value:
                    r += 1
                if r < removed.size and removed.data[r] == value:
                    continue
            else:
                value = added.data[a]
                a += 1
            if n == 0 or result[n - 1] != value:
                result[n] = value
                n += 1
    return out[:n]


cpdef TerminalTokens build_terminal_tokens_relative(
        CompiledTables tables, TrieView vocab_trie, terminal_id_t terminal_id,
        state_id_t progress, Py_ssize_t vocab_size, TerminalTokens base,
        state_id_t base_state, const int32_t[:, ::1] depth_classes=None,
        const int32_t[::1] height_rows=None, object bitset_pool=None, object trie_pool=None):
    """``build_terminal_tokens`` for DFA state ``progress``, derived from the
    entry ``base`` of another state ``base_state`` of the same terminal over
    the same trie.

    One walk runs both states side by side and descends only where they
    differ: below a node where both reach the same DFA state, every token,
    exit and narrow flag is the same for both, so the subtree is skipped and
    ``base`` supplies it.  With ``depth_classes`` (the DFA's
    ``state_classes_by_depth``, rows 0..D, or the kept rows that
    ``height_rows`` indexes: row ``height_rows[a]`` agrees for at least a
    bytes), a subtree h edges high is also
    skipped when the two states are equivalent for h + 1 bytes (the flags of
    a node at depth h read the byte set after it): two positions of a
    counted string ``X{0,200}`` differ only on tokens longer than what is
    left of the shorter count.  For the states of a key that must differ from the
    schema's names, or any DFA whose states mostly fall back into one hub
    state, the walk touches a handful of nodes instead of the whole trie.
    When the walk finds no difference, the result is ``base`` itself (with
    its ``end_state``, an accepting state as good as any the walk met)."""
    cdef TerminalInfo info = tables.view.terminal_infos[terminal_id]
    if not info.is_dfa:
        raise ValueError("relative token sets are for DFA terminals")
    cdef DfaInfo dfa = tables.view.dfa_infos[info.dfa_id]
    cdef const int32_t* transitions = tables.view.transitions + dfa.transitions_start
    cdef const uint8_t* class_map = tables.view.class_maps + dfa.class_map_start
    cdef const uint8_t* accepting = tables.view.state_accepting + dfa.state_base
    cdef const uint64_t* state_allowed = tables.view.state_allowed_bytes + 4 * dfa.state_base
    cdef state_id_t state0 = dfa.start if progress == 0 else progress
    if state0 <= 0 or state0 >= dfa.n_states or base_state <= 0 or base_state >= dfa.n_states:
        raise ValueError("DFA state out of range")
    # a dense base's bitset is patched in place of a copy; a sparse base's
    # ids are patched after the walk
    words = np.array(base.inside_bits) if base.dense else None
    cdef word_t[::1] word_view
    cdef word_t* inside_bits = NULL
    if base.dense:
        word_view = words
        inside_bits = &word_view[0]
    cdef Py_ssize_t max_frames = vocab_trie.max_depth + 2
    cdef node_id_t* next_child = <node_id_t*>malloc(max_frames * sizeof(node_id_t))
    cdef node_id_t* child_end = <node_id_t*>malloc(max_frames * sizeof(node_id_t))
    cdef state_id_t* own = <state_id_t*>malloc(max_frames * sizeof(state_id_t))
    cdef state_id_t* other = <state_id_t*>malloc(max_frames * sizeof(state_id_t))
    # [0] added, [1] removed, for: inside, exits, narrow, closing, closing_space
    cdef Growable changes[10]
    cdef Py_ssize_t i, k, depth = 0
    cdef Py_ssize_t n_inside = base.n_inside
    cdef node_id_t child
    cdef state_id_t q, r, end_state = base.end_state
    cdef const int32_t[::1] heights = vocab_trie.node_heights
    cdef bint use_classes = depth_classes is not None
    cdef bint use_rows = height_rows is not None
    cdef Py_ssize_t height, row, n_rows = depth_classes.shape[0] if use_classes else 0
    cdef Py_ssize_t n_heights = height_rows.shape[0] if use_rows else n_rows
    if use_rows and use_classes:
        for i in range(n_heights):
            if not 0 <= height_rows[i] < n_rows:
                raise ValueError("height_rows names a row depth_classes does not have")
    cdef bint q_end, r_end, q_narrow, r_narrow, q_space, has_children
    cdef uint8_t byte
    cdef token_id_t token_id
    for k in range(10):
        changes[k] = growable_empty()
    cdef bint ok = next_child != NULL and child_end != NULL and own != NULL and other != NULL
    cdef node_id_t roots[256]
    cdef uint64_t first_bytes[4]
    cdef int n_roots, next_root = 0
    try:
        if not ok:
            raise MemoryError()
        with nogil:
            # a root child both states kill is skipped like one where they meet
            for k in range(4):
                first_bytes[k] = state_allowed[4 * <int64_t>state0 + k] \
                    | state_allowed[4 * <int64_t>base_state + k]
            n_roots = _start_roots(vocab_trie, first_bytes, roots)
            next_child[0] = 1
            child_end[0] = vocab_trie.node_subtree_ends[0]
            own[0] = state0
            other[0] = base_state
            while ok:
                child = _next_node(vocab_trie, next_child, child_end, &depth, roots, n_roots,
                                   &next_root)
                if child < 0:
                    break
                byte = vocab_trie.node_bytes[child]
                _classify(transitions, class_map, accepting, state_allowed, dfa.n_classes,
                          own[depth], byte, &q, &q_end, &q_narrow)
                _classify(transitions, class_map, accepting, state_allowed, dfa.n_classes,
                          other[depth], byte, &r, &r_end, &r_narrow)
                if q == r:
                    continue
                if q_end:
                    end_state = q
                q_space = is_space(byte)
                for i in range(vocab_trie.node_token_offsets[child],
                               vocab_trie.node_token_offsets[child + 1]):
                    token_id = vocab_trie.token_ids[i]
                    if (q != 0) != (r != 0):
                        ok = ok and grow_push(&changes[0] if q != 0 else &changes[1], token_id)
                        if q != 0:
                            if inside_bits != NULL:
                                bitset_add(inside_bits, token_id)
                            n_inside += 1
                        else:
                            if inside_bits != NULL:
                                inside_bits[token_id >> 5] &= ~((<word_t>1) << (token_id & 31))
                            n_inside -= 1
                    ok = ok and _flip(&changes[4], &changes[5], q_narrow and not q_end,
                                      r_narrow and not r_end, token_id)
                    ok = ok and _flip(&changes[6], &changes[7], q_narrow and q_end,
                                      r_narrow and r_end, token_id)
                    ok = ok and _flip(&changes[8], &changes[9], q_narrow and q_end and q_space,
                                      r_narrow and r_end and q_space, token_id)
                has_children = vocab_trie.node_subtree_ends[child] > child + 1
                if has_children:
                    ok = ok and _flip(&changes[2], &changes[3], q_end, r_end, child)
                    if use_classes:
                        height = heights[child] + 1
                        if height < n_heights:
                            row = height_rows[height] if use_rows else height
                            if depth_classes[row, q] == depth_classes[row, r]:
                                continue
                    depth += 1
                    next_child[depth] = child + 1
                    child_end[depth] = vocab_trie.node_subtree_ends[child]
                    own[depth] = q
                    other[depth] = r
        if not ok:
            raise MemoryError()
        unchanged = True
        for k in range(10):
            if changes[k].size:
                unchanged = False
        if unchanged:
            return base     # the walk met no token or exit the two states treat apart
        inside_ids = None
        if not base.dense:
            inside_ids = _patched(base.inside_ids, &changes[0], &changes[1])
            if n_inside > SPARSE_LIMIT:
                words = np.zeros(n_words(vocab_size), np.uint32)
                word_view = words
                bitset_add_ids(&word_view[0], inside_ids)
                inside_ids = None
        elif n_inside <= SPARSE_LIMIT:
            inside_ids = _ids_of_bits(inside_bits, word_view.shape[0], n_inside)
        exits_changed = changes[2].size > 0 or changes[3].size > 0
        exit_nodes = _patched(base.exit_nodes, &changes[2], &changes[3])
        narrow_ids = _patched(base.narrow_ids, &changes[4], &changes[5])
        closing_ids = _patched(base.closing_ids, &changes[6], &changes[7])
        closing_space_ids = _patched(base.closing_space_ids, &changes[8], &changes[9])
        changes_inside = changes[0].size + changes[1].size
    finally:
        free(next_child)
        free(child_end)
        free(own)
        free(other)
        for k in range(10):
            free(changes[k].data)
    if inside_ids is not None:
        words = None
    elif changes_inside == 0 and base.dense:
        words = base.inside_bits
    elif bitset_pool is not None:
        words = bitset_pool.setdefault(words.tobytes(), words)
    exit_trie = (_pooled_exit_trie(vocab_trie, exit_nodes, vocab_size, trie_pool)
                 if exits_changed else base.exit_trie)
    return _new_tokens(inside_ids, words, exit_trie, end_state, exit_nodes, n_inside,
                       narrow_ids, closing_ids, closing_space_ids)
