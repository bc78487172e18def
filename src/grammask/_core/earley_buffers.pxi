# Included at module level by earley.pyx: growth of the jagged buffers and
# the per-set scratch hash tables (item dedup, pending completions), as
# functions of an EarleyRecognizer (layout and invariants: earley.pyx).
# All return False / -1 with error_code set when a limit or memory runs out.

cdef bint _reserve_items(EarleyRecognizer self, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t needed = self.n_items + extra
    cdef Py_ssize_t capacity
    cdef Item* grown
    if needed > self.max_items:
        self.n_items_requested = needed
        self.error_code = ERROR_LIMIT
        return False
    if needed <= self.items_capacity:
        return True
    capacity = self.items_capacity * 2
    while capacity < needed:
        capacity *= 2
    grown = <Item*>realloc(self.items, capacity * sizeof(Item))
    if grown == NULL:
        self.error_code = ERROR_MEMORY
        return False
    self.items = grown
    self.items_capacity = capacity
    return True


cdef bint _reserve_sets(EarleyRecognizer self) noexcept nogil:
    # Room for the set being built at index n_sets (and set_starts[n_sets + 1]).
    cdef Py_ssize_t capacity
    cdef void* p
    if self.n_sets < self.sets_capacity:
        return True
    capacity = self.sets_capacity * 2
    p = realloc(self.set_starts, (capacity + 1) * sizeof(int64_t))
    if p == NULL:
        self.error_code = ERROR_MEMORY
        return False
    self.set_starts = <int64_t*>p
    p = realloc(self.set_nt_starts, capacity * sizeof(int64_t))
    if p == NULL:
        self.error_code = ERROR_MEMORY
        return False
    self.set_nt_starts = <int64_t*>p
    p = realloc(self.set_serials, capacity * sizeof(uint64_t))
    if p == NULL:
        self.error_code = ERROR_MEMORY
        return False
    self.set_serials = <uint64_t*>p
    p = realloc(self.set_accepting, capacity * sizeof(uint8_t))
    if p == NULL:
        self.error_code = ERROR_MEMORY
        return False
    self.set_accepting = <uint8_t*>p
    p = realloc(self.set_leo_nts, capacity * sizeof(int32_t))
    if p == NULL:
        self.error_code = ERROR_MEMORY
        return False
    self.set_leo_nts = <int32_t*>p
    p = realloc(self.set_leo_tops, capacity * sizeof(int64_t))
    if p == NULL:
        self.error_code = ERROR_MEMORY
        return False
    self.set_leo_tops = <int64_t*>p
    self.sets_capacity = capacity
    return True


cdef int _dedup_insert(EarleyRecognizer self, Item* candidate, Py_ssize_t set_start, Py_ssize_t set_end) noexcept nogil:
    """Is ``candidate`` new among items[set_start:set_end]?  Returns 1 if it
    is (the caller then stores it at set_end), 0 if already present, -1 on
    memory error.  Small sets are scanned; from DEDUP_LINEAR_MAX items on, a
    hash table (entries stamped ``dedup_stamp``) is filled lazily:
    ``dedup_n_tabled`` items of the set are in it."""
    cdef Py_ssize_t n_present = set_end - set_start
    cdef Py_ssize_t capacity, mask, slot, i
    cdef uint64_t stamp = self.dedup_stamp
    if n_present <= DEDUP_LINEAR_MAX:
        for i in range(set_start, set_end):
            if _same_item(&self.items[i], candidate):
                return 0
        return 1
    if (n_present + 1) * 2 > self.dedup_capacity:
        capacity = _pow2_at_least((n_present + 1) * 4)
        free(self.dedup_slots)
        free(self.dedup_stamps)
        self.dedup_slots = <int32_t*>malloc(capacity * sizeof(int32_t))
        self.dedup_stamps = <uint64_t*>calloc(capacity, sizeof(uint64_t))
        if self.dedup_slots == NULL or self.dedup_stamps == NULL:
            self.dedup_capacity = 0
            self.error_code = ERROR_MEMORY
            return -1
        self.dedup_capacity = capacity
        self.dedup_n_tabled = 0
    mask = self.dedup_capacity - 1
    while self.dedup_n_tabled < n_present:
        i = self.dedup_n_tabled
        slot = <Py_ssize_t>(_item_hash(&self.items[set_start + i]) & <uint64_t>mask)
        while self.dedup_stamps[slot] == stamp:
            slot = (slot + 1) & mask
        self.dedup_stamps[slot] = stamp
        self.dedup_slots[slot] = <int32_t>i
        self.dedup_n_tabled += 1
    slot = <Py_ssize_t>(_item_hash(candidate) & <uint64_t>mask)
    while self.dedup_stamps[slot] == stamp:
        if _same_item(&self.items[set_start + self.dedup_slots[slot]], candidate):
            return 0
        slot = (slot + 1) & mask
    self.dedup_stamps[slot] = stamp
    self.dedup_slots[slot] = <int32_t>n_present
    self.dedup_n_tabled = n_present + 1
    return 1


cdef bint _mark_done(EarleyRecognizer self, int64_t key) noexcept nogil:
    """Record completion ``key`` for the set being built; False if it was
    already recorded (error_code is set if memory ran out)."""
    cdef Py_ssize_t capacity, mask, slot, i
    cdef uint64_t stamp = self.dedup_stamp
    cdef int64_t* old_keys
    cdef uint64_t* old_stamps
    cdef Py_ssize_t old_capacity
    if (self.n_done + 1) * 2 > self.done_capacity:
        old_keys = self.done_keys
        old_stamps = self.done_stamps
        old_capacity = self.done_capacity
        capacity = _pow2_at_least((self.n_done + 1) * 4)
        self.done_keys = <int64_t*>malloc(capacity * sizeof(int64_t))
        self.done_stamps = <uint64_t*>calloc(capacity, sizeof(uint64_t))
        if self.done_keys == NULL or self.done_stamps == NULL:
            free(old_keys)
            free(old_stamps)
            self.done_capacity = 0
            self.error_code = ERROR_MEMORY
            return False
        self.done_capacity = capacity
        mask = capacity - 1
        for i in range(old_capacity):
            if old_stamps[i] == stamp:
                slot = <Py_ssize_t>(_mix64(<uint64_t>old_keys[i]) & <uint64_t>mask)
                while self.done_stamps[slot] == stamp:
                    slot = (slot + 1) & mask
                self.done_stamps[slot] = stamp
                self.done_keys[slot] = old_keys[i]
        free(old_keys)
        free(old_stamps)
    mask = self.done_capacity - 1
    slot = <Py_ssize_t>(_mix64(<uint64_t>key) & <uint64_t>mask)
    while self.done_stamps[slot] == stamp:
        if self.done_keys[slot] == key:
            return False
        slot = (slot + 1) & mask
    self.done_stamps[slot] = stamp
    self.done_keys[slot] = key
    self.n_done += 1
    return True


cdef bint _enqueue_completion(EarleyRecognizer self, int32_t nt, int32_t origin) noexcept nogil:
    cdef int64_t key = _pair_key(origin, nt)
    cdef Py_ssize_t capacity
    cdef int64_t* grown
    if not _mark_done(self, key):
        return self.error_code == ERROR_NONE
    if self.n_queued == self.queue_capacity:
        capacity = _pow2_at_least(self.queue_capacity * 2)
        grown = <int64_t*>realloc(self.completion_queue, capacity * sizeof(int64_t))
        if grown == NULL:
            self.error_code = ERROR_MEMORY
            return False
        self.completion_queue = grown
        self.queue_capacity = capacity
    self.completion_queue[self.n_queued] = key
    self.n_queued += 1
    return True
