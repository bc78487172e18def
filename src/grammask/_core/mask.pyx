# cython: language_level=3
"""Token masks: the token-trie walk and per-terminal token sets.

What it computes
----------------
For a recognizer state, the bitset of vocabulary tokens t such that pushing
the bytes of t succeeds (DESIGN.md section 2, "Exactness").  Bit ``t % 32`` of
word ``t // 32`` of a uint32 array is token t.

Derivation (toktrie, llguidance's ``docs/toktrie.md``; kbnf's eager regex
cache; xgrammar's adaptive token mask cache):

1. Naive: push every token's bytes into a fresh copy of the recognizer.
2. Trie walk (``walk_trie``): tokens sharing a prefix share the pushes of
   that prefix.  Walk a flat DFS-preorder trie, push a byte per edge, pop on
   return, skip a subtree when its byte is not in the recognizer's 256-bit set
   of allowed bytes.  Works over any ``ByteRecognizer`` (Earley core, a DFA,
   a test stub).
3. Per-terminal token sets (``TerminalTokens``): in an Earley set, only
   *scan items* (dot before a terminal) consume bytes.  For a scan item whose
   terminal is in state q (a DFA state or a literal offset), a token t is
   allowed through that item iff either
     a. the terminal's automaton stays alive on all of t ("inside"), or
     b. the automaton is accepting after a non-empty proper prefix p of t and
        the rest t[len(p):] is viable once the terminal ends there ("exit").
   (a) depends only on (terminal, q): one precomputed bitset.  (b) needs the
   grammar after the terminal, but the Earley set reached by ending the
   terminal is the same whatever p was (``push_terminal_end_at``), so all
   remainders can be walked at once in an *exit trie*: the merge of the
   subtrees below every exit node of the vocabulary trie, each merged node
   carrying the ids of the tokens whose remainder it spells.  The empty
   remainder is case (a).  A step inside a JSON string is then one bitset OR
   plus a walk of the few distinct remainders (`",`, `"}`, `":` ...).

Layouts
-------
A trie (vocabulary or exit trie) is four arrays in DFS preorder: node 0 is
the root; ``node_bytes[n]`` is the byte on the edge into n; the subtree of n
is ``[n, node_subtree_ends[n])``; the first child of n is n + 1 when
n + 1 < end(n) and the next sibling of child c is end(c); children are sorted
by byte; tokens whose bytes end at n are
``token_ids[node_token_offsets[n]:node_token_offsets[n + 1]]``.

Invariants the loops rely on (checked by ``TrieView.__init__``): every
``token_id < n_words * 32`` (bitset writes stay in bounds); subtree ends are
in ``(n, n_nodes]`` and nest (the walk's stack depth is at most the trie's
depth, and the stack is allocated with ``max_depth + 2`` frames).
"""

from libc.stdint cimport uint8_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset

import hashlib

import numpy as np

from grammask._core.recognizer cimport ByteRecognizer
from grammask._core.earley cimport EarleyRecognizer
from grammask._core.earley_tables cimport CompiledTables, TerminalInfo, DfaInfo


cdef class TrieView:
    """C views over a trie's arrays (vocabulary trie or exit trie)."""

    cdef readonly object owner
    cdef const uint8_t[::1] node_bytes
    cdef const int32_t[::1] node_subtree_ends
    cdef const int32_t[::1] node_token_offsets
    cdef const int32_t[::1] token_ids
    cdef readonly Py_ssize_t n_nodes
    cdef readonly Py_ssize_t max_depth
    cdef readonly Py_ssize_t n_words

    def __init__(self, node_bytes, node_subtree_ends, node_token_offsets, token_ids,
                 Py_ssize_t max_depth, Py_ssize_t vocab_size, owner=None):
        self.owner = owner
        self.node_bytes = np.ascontiguousarray(node_bytes, dtype=np.uint8)
        self.node_subtree_ends = np.ascontiguousarray(node_subtree_ends, dtype=np.int32)
        self.node_token_offsets = np.ascontiguousarray(node_token_offsets, dtype=np.int32)
        self.token_ids = np.ascontiguousarray(token_ids, dtype=np.int32)
        self.n_nodes = self.node_bytes.shape[0]
        self.max_depth = max_depth
        self.n_words = (vocab_size + 31) // 32
        if self.n_nodes < 1 or self.node_subtree_ends.shape[0] != self.n_nodes \
                or self.node_token_offsets.shape[0] != self.n_nodes + 1:
            raise ValueError("malformed trie arrays")
        ends = np.asarray(self.node_subtree_ends)
        if ends[0] != self.n_nodes or np.any(ends <= np.arange(self.n_nodes)) or np.any(ends > self.n_nodes):
            raise ValueError("malformed trie: subtree ends out of range")
        ids = np.asarray(self.token_ids)
        if len(ids) and (ids.min() < 0 or ids.max() >= vocab_size):
            raise ValueError("malformed trie: token id out of range")

    @classmethod
    def from_token_trie(cls, trie):
        return cls(trie.node_bytes, trie.node_subtree_ends, trie.node_token_offsets,
                   trie.token_ids, trie.max_depth, trie.vocab_size, owner=trie)


cdef inline void _set_node_tokens(TrieView trie, Py_ssize_t node, uint32_t* bits) noexcept nogil:
    cdef Py_ssize_t i
    cdef int32_t token_id
    for i in range(trie.node_token_offsets[node], trie.node_token_offsets[node + 1]):
        token_id = trie.token_ids[i]
        bits[token_id >> 5] |= (<uint32_t>1) << (token_id & 31)


cdef inline bint _bit_in(const uint64_t* set4, uint8_t byte) noexcept nogil:
    return (set4[byte >> 6] >> (byte & 63)) & 1


cdef extern from *:
    """
    static inline int grammask_popcount64(unsigned long long x) { return __builtin_popcountll(x); }
    """
    int grammask_popcount64(unsigned long long x) nogil


cdef inline int _n_bytes_in(const uint64_t* set4) noexcept nogil:
    return (grammask_popcount64(set4[0]) + grammask_popcount64(set4[1])
            + grammask_popcount64(set4[2]) + grammask_popcount64(set4[3]))


# A token is *narrow* when the grammar allows at most this many distinct
# bytes right after it, and no space unless the token itself ends in
# whitespace (a keyword's interior, a fixed count of digits, a forced
# separator, a whitespace run before structure): only there is the canonical
# filter's verdict "allowed" likely to lead into a state where no canonical
# token fits the grammar (a space after a non-space character starts a new
# pre-token in every supported tokenizer), so only narrow tokens are
# re-checked by the engine's canonical lookahead.
cdef int NARROW_BYTE_LIMIT = 16
NARROW_BYTES = NARROW_BYTE_LIMIT


cdef inline bint _is_space(uint8_t byte) noexcept nogil:
    return byte == 0x20 or (0x09 <= byte <= 0x0D)


cdef inline bint _is_narrow(const uint64_t* set4, uint8_t last_byte) noexcept nogil:
    if (set4[0] >> 0x20) & 1 and not _is_space(last_byte):
        return False
    return _n_bytes_in(set4) <= NARROW_BYTE_LIMIT


cdef Py_ssize_t walk_trie(ByteRecognizer recognizer, TrieView trie, uint32_t* bits,
                          int32_t* next_child, int32_t* child_end,
                          uint64_t* allowed, uint32_t* narrow=NULL) noexcept nogil:
    """Mark every token of ``trie`` whose bytes the recognizer accepts from its
    current state; the recognizer ends where it started.  Scratch arrays hold
    ``trie.max_depth + 2`` frames (``allowed``: 4 words a frame).  With ``narrow``, also mark there the accepted
    tokens after which at most ``NARROW_BYTE_LIMIT`` bytes are allowed.
    Returns the number of successful pushes (work done)."""
    cdef Py_ssize_t depth = 0
    cdef Py_ssize_t n_pushes = 0
    cdef int32_t child
    cdef uint8_t byte
    cdef bint has_children
    cdef uint64_t after_leaf[4]
    next_child[0] = 1
    child_end[0] = trie.node_subtree_ends[0]
    recognizer.allowed_bytes(allowed)
    while depth >= 0:
        child = next_child[depth]
        if child >= child_end[depth]:
            if depth > 0:
                recognizer.pop_bytes(1)
            depth -= 1
            continue
        next_child[depth] = trie.node_subtree_ends[child]
        byte = trie.node_bytes[child]
        if not _bit_in(allowed + 4 * depth, byte) or not recognizer.try_push_byte(byte):
            continue
        n_pushes += 1
        _set_node_tokens(trie, child, bits)
        has_children = trie.node_subtree_ends[child] > child + 1
        if has_children:
            # Invariant: depth + 1 <= depth of child <= max_depth.
            depth += 1
            next_child[depth] = child + 1
            child_end[depth] = trie.node_subtree_ends[child]
            recognizer.allowed_bytes(allowed + 4 * depth)
            if narrow != NULL and _is_narrow(allowed + 4 * depth, byte):
                _set_node_tokens(trie, child, narrow)
        else:
            if narrow != NULL and trie.node_token_offsets[child + 1] > trie.node_token_offsets[child]:
                recognizer.allowed_bytes(after_leaf)
                if _is_narrow(after_leaf, byte):
                    _set_node_tokens(trie, child, narrow)
            recognizer.pop_bytes(1)
    return n_pushes


cdef class WalkScratch:
    """Per-thread scratch frames for ``walk_trie`` (never shared)."""

    cdef int32_t* next_child
    cdef int32_t* child_end
    cdef uint64_t* allowed
    cdef Py_ssize_t n_frames

    def __cinit__(self, Py_ssize_t max_depth):
        self.n_frames = max_depth + 2
        self.next_child = <int32_t*>malloc(self.n_frames * sizeof(int32_t))
        self.child_end = <int32_t*>malloc(self.n_frames * sizeof(int32_t))
        self.allowed = <uint64_t*>malloc(4 * self.n_frames * sizeof(uint64_t))
        if not self.next_child or not self.child_end or not self.allowed:
            raise MemoryError()

    def __dealloc__(self):
        free(self.next_child)
        free(self.child_end)
        free(self.allowed)


def fill_walk(ByteRecognizer recognizer, TrieView trie, uint32_t[::1] bits):
    """Plain trie walk from the recognizer's state into ``bits`` (OR-ed in).
    Returns the number of pushes."""
    if bits.shape[0] < trie.n_words:
        raise ValueError("bitset too short for the trie's vocabulary")
    cdef WalkScratch scratch = WalkScratch(trie.max_depth)
    cdef Py_ssize_t n_pushes
    with nogil:
        n_pushes = walk_trie(recognizer, trie, &bits[0], scratch.next_child,
                             scratch.child_end, scratch.allowed)
    return n_pushes


# ---------------------------------------------------------------------------
# Per-terminal token sets
# ---------------------------------------------------------------------------

cdef struct Growable:
    int32_t* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef Growable _EMPTY = Growable(NULL, 0, 0)


cdef bint _grow_push(Growable* array, int32_t value) noexcept nogil:
    cdef int32_t* bigger
    cdef Py_ssize_t capacity
    if array.size == array.capacity:
        capacity = array.capacity * 2 if array.capacity else 64
        bigger = <int32_t*>realloc(array.data, capacity * sizeof(int32_t))
        if not bigger:
            return False
        array.data = bigger
        array.capacity = capacity
    array.data[array.size] = value
    array.size += 1
    return True


cdef object _growable_to_numpy(Growable* array):
    result = np.empty(array.size, dtype=np.int32)
    cdef int32_t[::1] view = result
    cdef Py_ssize_t i
    for i in range(array.size):
        view[i] = array.data[i]
    return result


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
    """

    cdef readonly object inside_ids
    cdef readonly object inside_bits
    cdef readonly TrieView exit_trie
    cdef readonly int32_t end_state
    cdef readonly Py_ssize_t n_exit_nodes
    cdef readonly object narrow_ids
    cdef readonly object closing_ids
    cdef readonly object closing_space_ids
    cdef const int32_t[::1] _inside_ids
    cdef const uint32_t[::1] _inside_bits
    cdef const int32_t[::1] _narrow_ids
    cdef const int32_t[::1] _closing_ids
    cdef const int32_t[::1] _closing_space_ids
    cdef bint dense

    def __init__(self, inside_ids, inside_bits, exit_trie, int32_t end_state,
                 Py_ssize_t n_exit_nodes, narrow_ids=(), closing_ids=(), closing_space_ids=()):
        """Exactly one of ``inside_ids`` (sorted int32) and ``inside_bits``
        (uint32 bitset covering the vocabulary) is given."""
        self.dense = inside_bits is not None
        self.inside_ids = None if self.dense else np.ascontiguousarray(inside_ids, dtype=np.int32)
        self.inside_bits = inside_bits
        if self.dense:
            self._inside_bits = inside_bits
        else:
            self._inside_ids = self.inside_ids
        self.exit_trie = exit_trie
        self.end_state = end_state
        self.n_exit_nodes = n_exit_nodes
        self.narrow_ids = np.ascontiguousarray(narrow_ids, dtype=np.int32)
        self.closing_ids = np.ascontiguousarray(closing_ids, dtype=np.int32)
        self.closing_space_ids = np.ascontiguousarray(closing_space_ids, dtype=np.int32)
        self._narrow_ids = self.narrow_ids
        self._closing_ids = self.closing_ids
        self._closing_space_ids = self.closing_space_ids

    cdef void or_inside(self, uint32_t* bits) noexcept nogil:
        cdef Py_ssize_t i
        if self.dense:
            for i in range(self._inside_bits.shape[0]):
                bits[i] |= self._inside_bits[i]
        else:
            _or_ids(self._inside_ids, bits)


cdef inline void _or_ids(const int32_t[::1] ids, uint32_t* bits) noexcept nogil:
    cdef Py_ssize_t i
    cdef int32_t token_id
    for i in range(ids.shape[0]):
        token_id = ids[i]
        bits[token_id >> 5] |= (<uint32_t>1) << (token_id & 31)


cdef inline int32_t _literal_step(const uint8_t* literal, int32_t length, int32_t offset,
                                  uint8_t byte) noexcept nogil:
    """Literal automaton: state = bytes matched + 1 (0 is dead)."""
    if offset < length and literal[offset] == byte:
        return offset + 2
    return 0


# Exit tries with at most this many nodes are walked byte by byte; larger
# ones are handled by recursing over their own per-terminal token sets.
cdef Py_ssize_t WALK_LIMIT = 4096

# Inside sets with at most this many tokens are kept as id lists, larger ones
# as bitsets (16 KB for a 131k vocabulary, shared between equal sets).
cdef Py_ssize_t SPARSE_LIMIT = 256


def build_terminal_tokens(CompiledTables tables, TrieView vocab_trie, int32_t terminal_id,
                          int32_t progress, Py_ssize_t vocab_size, dict bitset_pool=None,
                          dict trie_pool=None):
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
    cdef int32_t state0, end_state = -1
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
    cdef int32_t* next_child = <int32_t*>malloc(max_frames * sizeof(int32_t))
    cdef int32_t* child_end = <int32_t*>malloc(max_frames * sizeof(int32_t))
    cdef int32_t* states = <int32_t*>malloc(max_frames * sizeof(int32_t))
    cdef Growable inside = _EMPTY
    cdef Growable exits = _EMPTY
    cdef Growable narrow = _EMPTY
    cdef Growable closing = _EMPTY
    cdef Growable closing_space = _EMPTY
    words = np.zeros((vocab_size + 31) // 32, dtype=np.uint32)
    cdef uint32_t[::1] word_view = words
    cdef uint32_t* inside_bits = &word_view[0]
    cdef int32_t token_id
    cdef Py_ssize_t n_inside = 0
    cdef Py_ssize_t depth = 0
    cdef int32_t child, state, i
    cdef bint ok = next_child != NULL and child_end != NULL and states != NULL
    cdef bint is_end
    try:
        if not ok:
            raise MemoryError()
        with nogil:
            next_child[0] = 1
            child_end[0] = vocab_trie.node_subtree_ends[0]
            states[0] = state0
            while depth >= 0 and ok:
                child = next_child[depth]
                if child >= child_end[depth]:
                    depth -= 1
                    continue
                next_child[depth] = vocab_trie.node_subtree_ends[child]
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
                    narrow_next = _is_narrow(state_allowed + 4 * <int64_t>state,
                                             vocab_trie.node_bytes[child])
                else:
                    narrow_next = is_end or literal[state - 1] != 0x20 \
                        or _is_space(vocab_trie.node_bytes[child])
                for i in range(vocab_trie.node_token_offsets[child],
                               vocab_trie.node_token_offsets[child + 1]):
                    token_id = vocab_trie.token_ids[i]
                    inside_bits[token_id >> 5] |= (<uint32_t>1) << (token_id & 31)
                    n_inside += 1
                    if n_inside <= SPARSE_LIMIT:
                        ok = ok and _grow_push(&inside, token_id)
                    if narrow_next:
                        ok = ok and _grow_push(&closing if is_end else &narrow, token_id)
                        if is_end and _is_space(vocab_trie.node_bytes[child]):
                            ok = ok and _grow_push(&closing_space, token_id)
                if vocab_trie.node_subtree_ends[child] > child + 1:
                    if is_end:
                        ok = ok and _grow_push(&exits, child)
                    depth += 1
                    next_child[depth] = child + 1
                    child_end[depth] = vocab_trie.node_subtree_ends[child]
                    states[depth] = state
        if not ok:
            raise MemoryError()
        inside_ids = np.sort(_growable_to_numpy(&inside)) if n_inside <= SPARSE_LIMIT else None
        exit_nodes = _growable_to_numpy(&exits)
        narrow_ids = np.sort(_growable_to_numpy(&narrow))
        closing_ids = np.sort(_growable_to_numpy(&closing))
        closing_space_ids = np.sort(_growable_to_numpy(&closing_space))
    finally:
        free(next_child)
        free(child_end)
        free(states)
        free(inside.data)
        free(exits.data)
        free(narrow.data)
        free(closing.data)
        free(closing_space.data)
    exit_trie = None
    if len(exit_nodes):
        # The merge depends only on the trie and the exit nodes: states with
        # the same exits (e.g. every state deep inside ``[^"]{0,500}``) share
        # one exit trie, built once.
        pool_key = (id(vocab_trie), hashlib.blake2b(exit_nodes.tobytes(), digest_size=20).digest())
        exit_trie = trie_pool.get(pool_key) if trie_pool is not None else None
        if exit_trie is None:
            exit_trie = merge_subtrees(vocab_trie, exit_nodes, vocab_size)
            if trie_pool is not None:
                trie_pool[pool_key] = exit_trie
    if inside_ids is not None:
        words = None
    elif bitset_pool is not None:
        words = bitset_pool.setdefault(words.tobytes(), words)
    return TerminalTokens(inside_ids, words, exit_trie, end_state, len(exit_nodes),
                          narrow_ids, closing_ids, closing_space_ids)


def merge_subtrees(TrieView trie, exit_nodes, Py_ssize_t vocab_size):
    """The trie of all remainders below ``exit_nodes``: the merge of their
    children's subtrees under one root (tokens ending at an exit node itself
    are not included: their remainder is empty).

    Each merged node keeps the *source set* of vocabulary nodes it stands for
    as a segment of one stack-like buffer; its children are the children of
    its sources grouped by byte (a counting sort over 256 buckets), so the
    output comes out in DFS preorder with children sorted by byte."""
    cdef const int32_t[::1] sources0 = np.ascontiguousarray(exit_nodes, dtype=np.int32)
    cdef Growable buffer = _EMPTY, node_bytes = _EMPTY, subtree_ends = _EMPTY
    cdef Growable token_offsets = _EMPTY, token_ids = _EMPTY
    cdef Growable frame_node = _EMPTY, frame_cursor = _EMPTY, frame_end = _EMPTY, frame_base = _EMPTY
    cdef Py_ssize_t counts[257]
    cdef Py_ssize_t i, j, start, end, cursor, node, child, bucket, group_end, n_children
    cdef Py_ssize_t max_depth = 0
    cdef int32_t source, b
    cdef bint ok = True
    try:
        with nogil:
            # Root node.
            ok = _grow_push(&node_bytes, 0) and _grow_push(&subtree_ends, 0) \
                and _grow_push(&token_offsets, 0)
            # Sources of the root: the exit nodes; children are expanded below.
            start = buffer.size
            for i in range(sources0.shape[0]):
                ok = ok and _grow_push(&buffer, sources0[i])
            ok = ok and _expand_children(trie, &buffer, start, buffer.size, counts)
            # Frames: (merged node, cursor into its children segment, segment end, base)
            ok = ok and _grow_push(&frame_node, 0) and _grow_push(&frame_cursor, <int32_t>(start + sources0.shape[0])) \
                and _grow_push(&frame_end, <int32_t>buffer.size) and _grow_push(&frame_base, <int32_t>start)
            while ok and frame_node.size > 0:
                i = frame_node.size - 1
                cursor = frame_cursor.data[i]
                end = frame_end.data[i]
                if cursor >= end:
                    subtree_ends.data[frame_node.data[i]] = <int32_t>node_bytes.size
                    buffer.size = frame_base.data[i]
                    frame_node.size -= 1; frame_cursor.size -= 1; frame_end.size -= 1; frame_base.size -= 1
                    continue
                b = trie.node_bytes[buffer.data[cursor]]
                group_end = cursor
                while group_end < end and trie.node_bytes[buffer.data[group_end]] == b:
                    group_end += 1
                frame_cursor.data[i] = <int32_t>group_end
                node = node_bytes.size
                ok = ok and _grow_push(&node_bytes, b) and _grow_push(&subtree_ends, 0)
                for j in range(cursor, group_end):
                    source = buffer.data[j]
                    for child in range(trie.node_token_offsets[source], trie.node_token_offsets[source + 1]):
                        ok = ok and _grow_push(&token_ids, trie.token_ids[child])
                ok = ok and _grow_push(&token_offsets, <int32_t>token_ids.size)
                if frame_node.size > max_depth:
                    max_depth = frame_node.size
                # Children of this merged node: children of sources [cursor, group_end).
                start = buffer.size
                n_children = 0
                for j in range(cursor, group_end):
                    source = buffer.data[j]
                    if trie.node_subtree_ends[source] > source + 1:
                        n_children += 1
                        ok = ok and _grow_push(&buffer, source)
                if n_children == 0:
                    buffer.size = start
                    subtree_ends.data[node] = <int32_t>node_bytes.size
                    continue
                ok = ok and _expand_children(trie, &buffer, start, buffer.size, counts)
                ok = ok and _grow_push(&frame_node, <int32_t>node) \
                    and _grow_push(&frame_cursor, <int32_t>(start + n_children)) \
                    and _grow_push(&frame_end, <int32_t>buffer.size) and _grow_push(&frame_base, <int32_t>start)
        if not ok:
            raise MemoryError()
        # token_offsets holds, per node in creation (= preorder) order, the
        # end of its tokens (the root's is 0); prepending 0 gives the starts.
        offsets = np.concatenate([np.zeros(1, dtype=np.int32), _growable_to_numpy(&token_offsets)])
        return TrieView(_growable_to_numpy(&node_bytes).astype(np.uint8),
                        _growable_to_numpy(&subtree_ends), offsets,
                        _growable_to_numpy(&token_ids), max_depth + 1, vocab_size)
    finally:
        free(buffer.data); free(node_bytes.data); free(subtree_ends.data)
        free(token_offsets.data); free(token_ids.data)
        free(frame_node.data); free(frame_cursor.data); free(frame_end.data); free(frame_base.data)


cdef bint _expand_children(TrieView trie, Growable* buffer, Py_ssize_t start, Py_ssize_t end,
                           Py_ssize_t* counts) noexcept nogil:
    """Append, after ``buffer[start:end]`` (the sources), the children of all
    sources sorted by byte (stable); the sources stay in place."""
    cdef Py_ssize_t i, b, total, source, child, out
    memset(counts, 0, 257 * sizeof(Py_ssize_t))
    for i in range(start, end):
        source = buffer.data[i]
        child = source + 1
        while child < trie.node_subtree_ends[source]:
            counts[trie.node_bytes[child] + 1] += 1
            child = trie.node_subtree_ends[child]
    for b in range(256):
        counts[b + 1] += counts[b]
    total = counts[256]
    out = buffer.size
    for i in range(total):
        if not _grow_push(buffer, 0):
            return False
    for i in range(start, end):
        source = buffer.data[i]
        child = source + 1
        while child < trie.node_subtree_ends[source]:
            b = trie.node_bytes[child]
            buffer.data[out + counts[b]] = <int32_t>child
            counts[b] += 1
            child = trie.node_subtree_ends[child]
    return True


# ---------------------------------------------------------------------------
# The grammar mask over the Earley core
# ---------------------------------------------------------------------------

def bounded_state_classes(transitions, accepting, Py_ssize_t depth):
    """For each state of a DFA, the smallest state that agrees with it on
    dead-ness (state 0) and acceptance after every input of at most
    ``depth`` bytes: Moore's partition refinement stopped after ``depth``
    rounds (or when stable).  Returns int32[n_states]."""
    table = np.asarray(transitions)
    n_states = table.shape[0]
    classes = np.asarray(accepting).astype(np.int64) + 1
    classes[0] = 0
    n_classes = len(np.unique(classes))
    for _ in range(depth):
        if n_classes == n_states:
            break
        signature = np.column_stack([classes, classes[table]])
        order = np.lexsort(signature.T[::-1])
        ordered = signature[order]
        starts_group = np.any(ordered[1:] != ordered[:-1], axis=1)
        refined = np.empty(n_states, dtype=np.int64)
        refined[order] = np.concatenate([[0], np.cumsum(starts_group)])
        n_refined = int(refined.max()) + 1
        classes = refined
        if n_refined == n_classes:
            break
        n_classes = n_refined
    smallest = np.full(int(classes.max()) + 1, n_states, dtype=np.int64)
    np.minimum.at(smallest, classes, np.arange(n_states))
    return smallest[classes].astype(np.int32)


cdef class MaskComputer:
    """Computes grammar masks for recognizers of one compiled grammar.

    Immutable after construction except for the lazily filled cache of
    ``TerminalTokens`` per (terminal id, progress), which is guarded by a
    lock so one MaskComputer can serve engines on several threads.

    DFA states are cached by their *depth-bounded class*: two states that
    agree on dead-ness and acceptance for every string no longer than the
    longest token have the same ``TerminalTokens``, so ``[a-z ]{0,500}``'s
    hundreds of states share a few dozen entries.  ``state_representatives``
    maps each global DFA state to the smallest state of its class."""

    cdef readonly TrieView vocab_trie
    cdef readonly CompiledTables tables
    cdef readonly Py_ssize_t vocab_size
    cdef readonly Py_ssize_t n_words
    cdef readonly object state_representatives
    cdef const int32_t[::1] _representatives
    cdef dict cache
    cdef dict bitset_pool
    cdef dict trie_pool
    cdef object lock

    def __init__(self, CompiledTables tables, TrieView vocab_trie, Py_ssize_t vocab_size):
        import threading
        self.tables = tables
        self.vocab_trie = vocab_trie
        self.vocab_size = vocab_size
        self.n_words = (vocab_size + 31) // 32
        self.cache = {}
        self.bitset_pool = {}
        self.trie_pool = {}
        self.lock = threading.Lock()
        parts = [bounded_state_classes(dfa.transitions, dfa.accepting, vocab_trie.max_depth)
                 for dfa in tables.lnf.dfas]
        self.state_representatives = np.ascontiguousarray(
            np.concatenate(parts) if parts else np.zeros(1, np.int32), dtype=np.int32)
        self._representatives = self.state_representatives

    @property
    def n_cached_terminal_states(self):
        return len(self.cache)

    @property
    def n_distinct_bitsets(self):
        return len(self.bitset_pool)

    cpdef TerminalTokens terminal_tokens(self, TrieView trie, int32_t terminal_id, int32_t progress):
        """The cached ``TerminalTokens`` of (terminal, progress) over ``trie``
        (the vocabulary trie, or an exit trie owned by another entry)."""
        key = (id(trie), terminal_id, progress)
        entry = self.cache.get(key)
        if entry is None:
            with self.lock:
                entry = self.cache.get(key)
                if entry is None:
                    entry = build_terminal_tokens(self.tables, trie, terminal_id, progress,
                                                  self.vocab_size, self.bitset_pool, self.trie_pool)
                    self.cache[key] = entry
        return entry

    def fill(self, EarleyRecognizer recognizer, uint32_t[::1] bits, uint32_t[::1] narrow=None):
        """Write the grammar mask of the recognizer's current state into
        ``bits`` (overwritten; EOS is the caller's business).  With
        ``narrow`` (same length, overwritten), also write there a superset of
        the allowed tokens after which the grammar allows at most
        ``NARROW_BYTES`` distinct next bytes (the canonical lookahead's
        candidates).  The recognizer ends in the state it started in."""
        if bits.shape[0] < self.n_words:
            raise ValueError("bitset too short for the vocabulary")
        cdef uint32_t* narrow_words = NULL
        memset(&bits[0], 0, bits.shape[0] * sizeof(uint32_t))
        if narrow is not None:
            if narrow.shape[0] < self.n_words:
                raise ValueError("narrow bitset too short for the vocabulary")
            memset(&narrow[0], 0, narrow.shape[0] * sizeof(uint32_t))
            narrow_words = &narrow[0]
        self._fill_level(recognizer, self.vocab_trie, &bits[0], narrow_words,
                         WalkScratch(self.vocab_trie.max_depth))
        # A push that failed for want of memory or items (not because the
        # byte is wrong) would silently drop tokens: raise it instead.
        recognizer.raise_pending_error()

    cdef int _fill_level(self, EarleyRecognizer recognizer, TrieView trie, uint32_t* out,
                         uint32_t* narrow, WalkScratch scratch) except -1:
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
        cdef int32_t terminal_id, progress
        cdef TerminalTokens entry
        cdef const TerminalInfo* terminal
        cdef set seen = set()
        cdef bint first_visit, ended, follow_narrow
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
                    _or_ids(entry._narrow_ids, narrow)
            follow_narrow = narrow != NULL and entry._closing_ids.shape[0] > 0
            if entry.exit_trie is None and not follow_narrow:
                continue
            if not recognizer.push_terminal_end_at(k, entry.end_state):
                continue
            try:
                if follow_narrow:
                    recognizer.allowed_bytes(follow)
                    if _is_narrow(follow, 0):
                        _or_ids(entry._closing_ids, narrow)
                    elif _is_narrow(follow, 0x20):
                        _or_ids(entry._closing_space_ids, narrow)
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
    """The bytes the recognizer allows next, as an int bitmask (bit b = byte
    b allowed), and whether they are narrow after a token ending in
    ``last_byte`` (see ``NARROW_BYTES``)."""
    cdef uint64_t words[4]
    recognizer.allowed_bytes(words)
    return (int(words[0]) | int(words[1]) << 64 | int(words[2]) << 128 | int(words[3]) << 192,
            _is_narrow(words, last_byte))


def pop_probe(EarleyRecognizer recognizer, Py_ssize_t n_bytes):
    """Undo a successful ``push_probe`` of ``n_bytes`` bytes."""
    with nogil:
        recognizer.pop_bytes(n_bytes)


# ---------------------------------------------------------------------------
# Bitsets to logits
# ---------------------------------------------------------------------------

ctypedef fused real_t:
    float
    double


cdef void _mask_row(real_t[:] row, const uint32_t* bits, Py_ssize_t n_words,
                    Py_ssize_t vocab_size, real_t minus_inf) noexcept nogil:
    """row[t] = -inf for every t whose bit is clear; t >= vocab_size too."""
    cdef Py_ssize_t n = row.shape[0]
    cdef Py_ssize_t word_index, t, base, limit
    cdef uint32_t word
    for word_index in range(n_words):
        base = word_index * 32
        if base >= n:
            return
        word = bits[word_index]
        if word == <uint32_t>0xFFFFFFFFu and base + 32 <= vocab_size:
            continue
        limit = base + 32
        if limit > n:
            limit = n
        if word == 0:
            for t in range(base, limit):
                row[t] = minus_inf
        else:
            for t in range(base, limit):
                if t >= vocab_size or not ((word >> (t - base)) & 1):
                    row[t] = minus_inf
    for t in range(n_words * 32, n):
        row[t] = minus_inf


def mask_rows(real_t[:, :] logits, const uint32_t[::1] bits, Py_ssize_t vocab_size):
    """Set logits of disallowed tokens to -inf in every row, in place.
    Columns past ``vocab_size`` (padded model vocabularies) are disallowed.
    Works on strided views (llama-cpp-python passes a non-contiguous one)."""
    cdef Py_ssize_t r
    cdef real_t minus_inf = -float("inf")
    with nogil:
        for r in range(logits.shape[0]):
            _mask_row(logits[r], &bits[0], bits.shape[0], vocab_size, minus_inf)
