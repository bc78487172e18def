# Included at module level by earley.pyx: the state key, a 128-bit signature
# of the recognizer's future, as functions of an EarleyRecognizer.
#
# What it computes: ``_state_key`` gives equal keys to two states only if
# they accept the same continuations (with the same acceptance after each
# one), up to 128-bit hash collisions; equal futures reached through
# different inputs, after compaction, or after push/pop round trips give equal
# keys (exactly so for LNF grammars, which have no unit productions; see
# "Normal form" below).  The key never reads set indices, byte positions,
# serial numbers or the compaction epoch.
#
# Definition.  The future depends on the top set's items and, through their
# origins, on what completing (nt, j) does: advance the items of set j waiting
# for nt, and accept if (nt, j) == (start, 0).  So:
#   * target(nt, j) = the signature of completing (nt, j), with j older than
#     the set being keyed:
#       - if (nt, j) != (start, 0), and set j has at least one item waiting
#         for nt, all of them end their production when advanced and lead to
#         the same target(...), completing (nt, j) is completing that target:
#         target(nt, j) is that signature (Leo's deterministic step, extended
#         to several items with equal targets); waiting items predicted in j
#         itself (only with unit productions) are resolved the same way
#         inside j: a single one is followed (as Leo and compaction do),
#         several are resolved recursively up to KEY_UNIT_DEPTH levels;
#       - with no waiting item (and not (start, 0)): a constant DEAD;
#       - otherwise H(TARGET, nt, root, waiting(j)), root = (nt, j) == (start, 0).
#   * waiting(j) = a set hash over the distinct signatures of j's items
#     whose post-dot symbol is a nonterminal (the only ones a completion
#     reads), item signature = H(ITEM, dot, progress, its target), where an
#     item predicted in j (origin == j) has as target the resolution above
#     inside j, or H(SELF, nt, root) when it stays in j (set j's own content
#     is what waiting(j) hashes, so the back reference is exact).
#   * key = H(KEY, accepting, waiting(top), scanning(top)), scanning = the same
#     set hash over the top set's items whose post-dot symbol is a terminal.
# Leo memo entries are not hashed: they are functions of the set contents
# (validated by set serials).  Compaction folds each item's (nt, origin) to
# the top of its Leo chain and drops duplicates: the first rule reaches the
# same target from the unfolded item, and deduplicated sorted signatures make
# the duplicates vanish, so keys do not change.
#
# Normal form: LNF grammars have no unit productions, so items predicted in
# j never end when advanced and the resolution inside j never recurses.  With
# unit productions (hand-built test grammars), unit cycles deeper than
# KEY_UNIT_DEPTH resolve to H(TARGET ...) / SELF: still sound, but then the
# folded (compacted) form may get another key.
#
# Data layout and cost: ``key_sets`` holds waiting(j) per set (plus a
# one-entry memo of the last target(nt, j) computed) and ``key_item_sigs``
# the target signature of every waiting item (set j's from
# ``key_sets[j].sigs_start``), both valid for the sets below ``n_sets_keyed``
# (sets are immutable once built; ``pop_bytes`` lowers the bound, compaction
# resets it).  Scan items are hashed for the top set only.  A key after
# pushing k bytes hashes the k new sets only: per item a memo hit or one scan
# of its origin set's waiting items, plus a sort of each new set's item
# signatures.  The last key is kept with the top set's serial (serials are
# never reused; compaction clears it), so asking again without a push costs
# nothing.
#
# Hash: two 64-bit lanes (splitmix64 and murmur3 finalizers over the word
# sequence, each seeded by a tag), 128 bits together; a set hashes as the
# lane-wise sums of its distinct item signatures; not cryptographic.

from libc.stdlib cimport qsort

cdef uint64_t KEY_TAG_ITEM = 0x6974656d5f736967ULL
cdef uint64_t KEY_TAG_SET = 0x7365745f7369675fULL
cdef uint64_t KEY_TAG_TARGET = 0x7461726765745f5fULL
cdef uint64_t KEY_TAG_SELF = 0x73656c665f5f5f5fULL
cdef uint64_t KEY_TAG_DEAD = 0x646561645f5f5f5fULL
cdef uint64_t KEY_TAG_KEY = 0x73746174655f6b79ULL
# Nesting of unit productions resolved inside one set (see _key_resolve).
cdef int KEY_UNIT_DEPTH = 8
# Sets with at most this many items are sorted by insertion, larger by qsort.
cdef Py_ssize_t KEY_INSERTION_SORT_MAX = 24


cdef struct KeyHasher:
    uint64_t a
    uint64_t b
    uint64_t n_words


cdef inline uint64_t _fmix64(uint64_t x) noexcept nogil:
    # murmur3 finalizer
    x ^= x >> 33
    x *= 0xff51afd7ed558ccdULL
    x ^= x >> 33
    x *= 0xc4ceb9fe1a85ec53ULL
    x ^= x >> 33
    return x


cdef inline void _kh_init(KeyHasher* h, uint64_t tag) noexcept nogil:
    h.a = _mix64(tag ^ 0x243f6a8885a308d3ULL)
    h.b = _fmix64(tag + 0x13198a2e03707344ULL)
    h.n_words = 0


cdef inline void _kh_add(KeyHasher* h, uint64_t word) noexcept nogil:
    h.a = _mix64(h.a ^ word)
    h.b = _fmix64(h.b + (word ^ 0xa4093822299f31d0ULL))
    h.n_words += 1


cdef inline void _kh_finish(KeyHasher* h, uint64_t* out2) noexcept nogil:
    out2[0] = _mix64(h.a ^ (h.n_words * 0x9e3779b97f4a7c15ULL))
    out2[1] = _fmix64(h.b ^ out2[0])


cdef inline void _tagged_constant(uint64_t tag, uint64_t word1, uint64_t word2, uint64_t* out2) noexcept nogil:
    cdef KeyHasher h
    _kh_init(&h, tag)
    _kh_add(&h, word1)
    _kh_add(&h, word2)
    _kh_finish(&h, out2)


cdef int _sig_compare(const void* left, const void* right) noexcept nogil:
    cdef const uint64_t* a = <const uint64_t*>left
    cdef const uint64_t* b = <const uint64_t*>right
    if a[0] != b[0]:
        return -1 if a[0] < b[0] else 1
    if a[1] != b[1]:
        return -1 if a[1] < b[1] else 1
    return 0


cdef void _sort_sigs(uint64_t* sigs, Py_ssize_t n) noexcept nogil:
    """Sort n (lo, hi) pairs ascending."""
    cdef Py_ssize_t i, j
    cdef uint64_t lo, hi
    if n > KEY_INSERTION_SORT_MAX:
        qsort(sigs, n, 2 * sizeof(uint64_t), _sig_compare)
        return
    for i in range(1, n):
        lo = sigs[2 * i]
        hi = sigs[2 * i + 1]
        j = i
        while j > 0 and (sigs[2 * j - 2] > lo or (sigs[2 * j - 2] == lo and sigs[2 * j - 1] > hi)):
            sigs[2 * j] = sigs[2 * j - 2]
            sigs[2 * j + 1] = sigs[2 * j - 1]
            j -= 1
        sigs[2 * j] = lo
        sigs[2 * j + 1] = hi


cdef inline uint64_t* _waiting_sig(EarleyRecognizer self, Py_ssize_t set_id, Py_ssize_t idx) noexcept nogil:
    """Stored target signature of waiting item idx of set set_id."""
    return &self.key_item_sigs[2 * (self.key_sets[set_id].sigs_start + idx - self.set_nt_starts[set_id])]


cdef bint _key_reserve(EarleyRecognizer self) noexcept nogil:
    """Room for every set, every waiting item, and one set's scratch; sets
    the signature offsets of the sets to key."""
    cdef Py_ssize_t capacity, s, largest = 0
    cdef int64_t n_sigs = 0
    cdef void* p
    if self.key_sets_capacity < self.n_sets:
        capacity = _pow2_at_least(self.n_sets)
        p = realloc(self.key_sets, capacity * sizeof(KeySetEntry))
        if p == NULL:
            self.error_code = ERROR_MEMORY
            return False
        self.key_sets = <KeySetEntry*>p
        self.key_sets_capacity = capacity
    if self.n_sets_keyed > 0:
        s = self.n_sets_keyed - 1
        n_sigs = self.key_sets[s].sigs_start + self.set_starts[s + 1] - self.set_nt_starts[s]
    for s in range(self.n_sets_keyed, self.n_sets):
        self.key_sets[s].sigs_start = n_sigs
        n_sigs += self.set_starts[s + 1] - self.set_nt_starts[s]
        if self.set_starts[s + 1] - self.set_starts[s] > largest:
            largest = self.set_starts[s + 1] - self.set_starts[s]
    if self.key_items_capacity < n_sigs:
        capacity = _pow2_at_least(n_sigs)
        p = realloc(self.key_item_sigs, 2 * capacity * sizeof(uint64_t))
        if p == NULL:
            self.error_code = ERROR_MEMORY
            return False
        self.key_item_sigs = <uint64_t*>p
        self.key_items_capacity = capacity
    if self.key_scratch_capacity < largest:
        capacity = _pow2_at_least(largest)
        p = realloc(self.key_scratch, 2 * capacity * sizeof(uint64_t))
        if p == NULL:
            self.error_code = ERROR_MEMORY
            return False
        self.key_scratch = <uint64_t*>p
        self.key_scratch_capacity = capacity
    return True


cdef bint _key_resolve(EarleyRecognizer self, int32_t nt, Py_ssize_t set_id,
                       uint64_t* out2, int32_t* stays_nt, int depth) noexcept nogil:
    """What completing (nt, set_id) amounts to.  True: out2 is the signature
    of an older target it equals (or DEAD).  False: it stays in set_id, as
    completing (stays_nt[0], set_id).  Reads the stored target signatures of
    set_id's items whose origin is older; items predicted in set_id itself
    that end when advanced (unit productions only) are resolved recursively,
    ``depth`` levels deep at most (KEY_UNIT_DEPTH: unit cycles stop there)."""
    cdef const GrammarView* tables = self.grammar
    cdef Py_ssize_t idx, n_waiting, n_steps = 0
    cdef uint64_t first_sig[2]
    cdef uint64_t sig[2]
    cdef int32_t inner_nt
    cdef Item* item
    cdef Item* single
    while True:
        stays_nt[0] = nt
        if set_id == 0 and nt == tables.start_id:
            return False
        n_waiting = 0
        single = NULL
        for idx in range(self.set_nt_starts[set_id], self.set_starts[set_id + 1]):
            item = &self.items[idx]
            if tables.symbol_ids[item.dot] != nt:
                continue
            if not tables.symbol_is_last[item.dot]:
                return False
            n_waiting += 1
            single = item
        if n_waiting == 0:
            _tagged_constant(KEY_TAG_DEAD, 0, 0, out2)
            return True
        if n_waiting == 1 and single.origin >= set_id:
            # One item predicted in set_id itself: follow it (Leo's step).
            nt = single.nt
            n_steps += 1
            if n_steps > tables.n_nonterminals:
                return False
            continue
        break
    # Every waiting item ends its production: equal to their common target, if any.
    n_waiting = 0
    for idx in range(self.set_nt_starts[set_id], self.set_starts[set_id + 1]):
        item = &self.items[idx]
        if tables.symbol_ids[item.dot] != nt:
            continue
        if item.origin < set_id:
            sig[0] = _waiting_sig(self, set_id, idx)[0]
            sig[1] = _waiting_sig(self, set_id, idx)[1]
        elif depth >= KEY_UNIT_DEPTH or not _key_resolve(self, item.nt, set_id, sig, &inner_nt, depth + 1):
            return False
        if n_waiting == 0:
            first_sig[0] = sig[0]
            first_sig[1] = sig[1]
        elif sig[0] != first_sig[0] or sig[1] != first_sig[1]:
            return False
        n_waiting += 1
    out2[0] = first_sig[0]
    out2[1] = first_sig[1]
    return True


cdef void _key_target(EarleyRecognizer self, int32_t nt, Py_ssize_t set_id,
                      Py_ssize_t keyed_set, uint64_t* out2) noexcept nogil:
    """Signature of completing (nt, set_id), for an item of set ``keyed_set``
    (set_id <= keyed_set; set_id == keyed_set: a back reference)."""
    cdef int32_t stays_nt
    cdef KeyHasher h
    cdef bint root
    cdef KeySetEntry* origin = &self.key_sets[set_id]
    if set_id < keyed_set and origin.memo_nt == nt:
        out2[0] = origin.memo_lo
        out2[1] = origin.memo_hi
        return
    if not _key_resolve(self, nt, set_id, out2, &stays_nt, 0):
        root = set_id == 0 and stays_nt == self.grammar.start_id
        if set_id == keyed_set:
            _tagged_constant(KEY_TAG_SELF, <uint64_t><uint32_t>stays_nt, root, out2)
            return
        _kh_init(&h, KEY_TAG_TARGET)
        _kh_add(&h, <uint64_t><uint32_t>stays_nt)
        _kh_add(&h, root)
        _kh_add(&h, origin.waiting_lo)
        _kh_add(&h, origin.waiting_hi)
        _kh_finish(&h, out2)
    if set_id < keyed_set:
        origin.memo_nt = nt
        origin.memo_lo = out2[0]
        origin.memo_hi = out2[1]


cdef inline void _key_item_sig(const Item* item, const uint64_t* target, uint64_t* out2) noexcept nogil:
    """Signature of an item: (dot, progress) mixed into each lane of its
    target signature."""
    cdef uint64_t position = <uint64_t><uint32_t>item.dot << 32 | <uint32_t>item.progress
    out2[0] = _mix64(target[0] ^ _mix64(position ^ KEY_TAG_ITEM))
    out2[1] = _fmix64(target[1] + _fmix64(position + KEY_TAG_ITEM))


cdef void _key_set_hash(uint64_t* sigs, Py_ssize_t n, uint64_t* out2) noexcept nogil:
    """Set hash of n item signatures (sorted in place): the lane-wise sums of
    the distinct ones, mixed with their number.  Item signatures are strongly
    mixed, so sums make an order-independent set hash without a serial hash
    chain; sorting finds the duplicates."""
    cdef Py_ssize_t k, n_distinct = 0
    cdef uint64_t sum_a = 0, sum_b = 0
    _sort_sigs(sigs, n)
    for k in range(n):
        if k > 0 and sigs[2 * k] == sigs[2 * k - 2] and sigs[2 * k + 1] == sigs[2 * k - 1]:
            continue
        sum_a += sigs[2 * k]
        sum_b += sigs[2 * k + 1]
        n_distinct += 1
    out2[0] = _mix64(sum_a ^ (<uint64_t>n_distinct * 0x9e3779b97f4a7c15ULL) ^ KEY_TAG_SET)
    out2[1] = _fmix64(sum_b + out2[0])


cdef void _key_set(EarleyRecognizer self, Py_ssize_t s) noexcept nogil:
    """Store the target signature of every waiting item of set s, then
    waiting(s).  Sets below s are keyed; sigs_start of s is set."""
    cdef Py_ssize_t idx, n = 0
    cdef Item* item
    cdef uint64_t out2[2]
    cdef int32_t last_nt = -1
    self.key_sets[s].memo_nt = -1
    # Older origins first: resolving inside s reads those items' signatures.
    for idx in range(self.set_nt_starts[s], self.set_starts[s + 1]):
        item = &self.items[idx]
        if item.origin < s:
            _key_target(self, item.nt, item.origin, s, _waiting_sig(self, s, idx))
    # Predictions of one nonterminal are stored next to each other: resolve once.
    for idx in range(self.set_nt_starts[s], self.set_starts[s + 1]):
        item = &self.items[idx]
        if item.origin >= s:
            if item.nt != last_nt:
                _key_target(self, item.nt, s, s, out2)
                last_nt = item.nt
            _waiting_sig(self, s, idx)[0] = out2[0]
            _waiting_sig(self, s, idx)[1] = out2[1]
    for idx in range(self.set_nt_starts[s], self.set_starts[s + 1]):
        _key_item_sig(&self.items[idx], _waiting_sig(self, s, idx), &self.key_scratch[2 * n])
        n += 1
    _key_set_hash(self.key_scratch, n, out2)
    self.key_sets[s].waiting_lo = out2[0]
    self.key_sets[s].waiting_hi = out2[1]


cdef void _key_scanning(EarleyRecognizer self, Py_ssize_t s, uint64_t* out2) noexcept nogil:
    """Set hash of set s's scan items (s keyed; their targets are computed
    here, they are needed for the top set only)."""
    cdef Py_ssize_t idx, n = 0
    cdef Item* item
    cdef uint64_t target[2]
    for idx in range(self.set_starts[s], self.set_nt_starts[s]):
        item = &self.items[idx]
        _key_target(self, item.nt, item.origin if item.origin < s else s, s, target)
        _key_item_sig(item, target, &self.key_scratch[2 * n])
        n += 1
    _key_set_hash(self.key_scratch, n, out2)


cdef bint _state_key(EarleyRecognizer self, uint64_t* out2) noexcept nogil:
    """The key of the current state (definition above); False (error_code
    set) if memory ran out."""
    cdef Py_ssize_t top = self.n_sets - 1
    cdef Py_ssize_t s
    cdef uint64_t scanning[2]
    cdef KeyHasher h
    if self.key_last_serial == self.set_serials[top] and self.n_sets_keyed == self.n_sets:
        out2[0] = self.key_last[0]
        out2[1] = self.key_last[1]
        return True
    if self.n_sets_keyed < self.n_sets:
        if not _key_reserve(self):
            return False
        for s in range(self.n_sets_keyed, self.n_sets):
            _key_set(self, s)
        self.n_sets_keyed = self.n_sets
    _key_scanning(self, top, scanning)
    _kh_init(&h, KEY_TAG_KEY)
    _kh_add(&h, self.set_accepting[top])
    _kh_add(&h, self.key_sets[top].waiting_lo)
    _kh_add(&h, self.key_sets[top].waiting_hi)
    _kh_add(&h, scanning[0])
    _kh_add(&h, scanning[1])
    _kh_finish(&h, out2)
    self.key_last_serial = self.set_serials[top]
    self.key_last[0] = out2[0]
    self.key_last[1] = out2[1]
    return True
