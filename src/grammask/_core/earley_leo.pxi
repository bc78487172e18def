# Included at module level by earley.pyx: Leo memo and compaction, as
# functions of an EarleyRecognizer (algorithm and invariants: earley.pyx).

cdef void _leo_clear(EarleyRecognizer self) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(self.leo_capacity):
        self.leo_entries[i].key = -1
    self.n_leo_entries = 0

# ------------------------------------------------------------------
# Leo's optimization (lazy, memoized per (set, nt))
# ------------------------------------------------------------------

cdef int64_t _leo_step(EarleyRecognizer self, Py_ssize_t set_id, int32_t nt) noexcept nogil:
    """One Leo step: (B, i) if set ``set_id`` has exactly one item whose
    post-dot symbol is ``nt`` and advancing it completes its production
    (as (B, i)); LEO_NONE otherwise.  Never steps past (start, 0)."""
    cdef const GrammarView* tables = self.grammar
    cdef Py_ssize_t idx, found = -1
    if set_id == 0 and nt == tables.start_id:
        return LEO_NONE
    for idx in range(self.set_nt_starts[set_id], self.set_starts[set_id + 1]):
        if tables.symbol_ids[self.items[idx].dot] == nt:
            if found >= 0:
                return LEO_NONE
            found = idx
    if found < 0 or not tables.symbol_is_last[self.items[found].dot]:
        return LEO_NONE
    return _pair_key(self.items[found].origin, self.items[found].nt)

cdef int64_t _leo_top(EarleyRecognizer self, Py_ssize_t set_id, int32_t nt) noexcept nogil:
    """Top of the Leo chain from completing (nt, set_id): the completion
    it is equivalent to, LEO_NONE if there is no Leo item, LEO_ERROR on
    memory error.  Memoizes every (set, nt) of the chain it walks (values
    are always real tops, never LEO_NONE)."""
    cdef Py_ssize_t depth = 0, capacity
    cdef int64_t key = _pair_key(set_id, nt)
    cdef int64_t value, step
    cdef void* p
    while True:
        if _leo_lookup(self, key, &value):
            break
        step = _leo_step(self, <Py_ssize_t>(key >> 32), <int32_t>(key & LOW32))
        if step == LEO_NONE:
            # Not memoized: recomputing scans the set once, as the normal
            # completion that follows does anyway; memoizing only chain
            # entries keeps the memo small and cache-resident.
            value = LEO_NONE
            break
        if depth == self.chain_capacity:
            capacity = _pow2_at_least(self.chain_capacity * 2)
            p = realloc(self.chain_keys, capacity * sizeof(int64_t))
            if p == NULL:
                self.error_code = ERROR_MEMORY
                return LEO_ERROR
            self.chain_keys = <int64_t*>p
            p = realloc(self.chain_steps, capacity * sizeof(int64_t))
            if p == NULL:
                self.error_code = ERROR_MEMORY
                return LEO_ERROR
            self.chain_steps = <int64_t*>p
            self.chain_capacity = capacity
        self.chain_keys[depth] = key
        self.chain_steps[depth] = step
        depth += 1
        key = step
    # value is the top reached from ``key``; unwind: top(k) = top(step(k)) or step(k).
    while depth > 0:
        depth -= 1
        if value == LEO_NONE:
            value = self.chain_steps[depth]
        if not _leo_store(self, self.chain_keys[depth], value):
            return LEO_ERROR
    return value

cdef bint _leo_lookup(EarleyRecognizer self, int64_t key, int64_t* value) noexcept nogil:
    cdef Py_ssize_t mask = self.leo_capacity - 1
    cdef Py_ssize_t slot = <Py_ssize_t>(_mix64(<uint64_t>key) & <uint64_t>mask)
    cdef Py_ssize_t set_id = <Py_ssize_t>(key >> 32)
    cdef LeoEntry* entry
    if self.set_leo_nts[set_id] == <int32_t>(key & LOW32):
        value[0] = self.set_leo_tops[set_id]
        return True
    if self.n_leo_entries == 0:
        return False
    while self.leo_entries[slot].key != -1:
        entry = &self.leo_entries[slot]
        if entry.key == key:
            if set_id < self.n_sets and entry.serial == self.set_serials[set_id]:
                value[0] = _pair_key(entry.top_origin, entry.top_nt)
                return True
            return False
        slot = (slot + 1) & mask
    return False

cdef bint _leo_store(EarleyRecognizer self, int64_t key, int64_t value) noexcept nogil:
    cdef Py_ssize_t mask, slot, i, n_valid = 0, capacity, set_id
    cdef LeoEntry* old_entries
    cdef Py_ssize_t old_capacity
    set_id = <Py_ssize_t>(key >> 32)
    if self.set_leo_nts[set_id] < 0 or self.set_leo_nts[set_id] == <int32_t>(key & LOW32):
        self.set_leo_nts[set_id] = <int32_t>(key & LOW32)
        self.set_leo_tops[set_id] = value
        return True
    if (self.n_leo_entries + 1) * 2 > self.leo_capacity:
        # Rebuild without stale entries (sets popped since), growing if needed.
        old_entries = self.leo_entries
        old_capacity = self.leo_capacity
        for i in range(old_capacity):
            set_id = <Py_ssize_t>(old_entries[i].key >> 32)
            if (old_entries[i].key != -1 and set_id < self.n_sets
                    and old_entries[i].serial == self.set_serials[set_id]):
                n_valid += 1
        capacity = _pow2_at_least((n_valid + 1) * 4)
        self.leo_entries = <LeoEntry*>malloc(capacity * sizeof(LeoEntry))
        if self.leo_entries == NULL:
            self.leo_entries = old_entries
            self.error_code = ERROR_MEMORY
            return False
        self.leo_capacity = capacity
        _leo_clear(self)
        mask = capacity - 1
        for i in range(old_capacity):
            set_id = <Py_ssize_t>(old_entries[i].key >> 32)
            if (old_entries[i].key != -1 and set_id < self.n_sets
                    and old_entries[i].serial == self.set_serials[set_id]):
                slot = <Py_ssize_t>(_mix64(<uint64_t>old_entries[i].key) & <uint64_t>mask)
                while self.leo_entries[slot].key != -1:
                    slot = (slot + 1) & mask
                self.leo_entries[slot] = old_entries[i]
                self.n_leo_entries += 1
        free(old_entries)
    mask = self.leo_capacity - 1
    slot = <Py_ssize_t>(_mix64(<uint64_t>key) & <uint64_t>mask)
    while self.leo_entries[slot].key != -1 and self.leo_entries[slot].key != key:
        slot = (slot + 1) & mask
    if self.leo_entries[slot].key == -1:
        self.n_leo_entries += 1
    set_id = <Py_ssize_t>(key >> 32)
    self.leo_entries[slot].key = key
    self.leo_entries[slot].serial = self.set_serials[set_id]
    self.leo_entries[slot].top_nt = <int32_t>(value & LOW32)
    self.leo_entries[slot].top_origin = <int32_t>(value >> 32)
    return True

# ----------------------------------------------------------------------
# Compaction
# ----------------------------------------------------------------------

cdef bint _compact(EarleyRecognizer self, Py_ssize_t keep_last_sets) noexcept nogil:
    """Fold origins through Leo chains, drop sets that are older than the
    last ``keep_last_sets`` pushes and not referenced by any live item,
    renumber origins.  Returns False (state intact) on memory error."""
    cdef Py_ssize_t top = self.n_sets - 1
    cdef Py_ssize_t horizon = top - keep_last_sets
    cdef Py_ssize_t s, idx, write = 0, new_start, new_nt_start, n_new_sets = 0, part
    cdef Py_ssize_t old_start, old_nt_start, old_end
    cdef uint8_t* live
    cdef int64_t* new_index
    cdef int64_t top_key
    cdef Item* item
    cdef Item candidate
    cdef int inserted
    if horizon < self.rollback_floor:
        horizon = self.rollback_floor
    live = <uint8_t*>calloc(self.n_sets, sizeof(uint8_t))
    new_index = <int64_t*>malloc(self.n_sets * sizeof(int64_t))
    if live == NULL or new_index == NULL:
        free(live)
        free(new_index)
        self.error_code = ERROR_MEMORY
        return False
    # 1. Fold (nt, origin) to the top of its Leo chain and mark referenced
    #    sets, newest first (an item's origin is <= its set).  Folding keeps
    #    each item's meaning: completing (nt, origin) and completing the
    #    chain's top lead to the same items.
    for s in range(horizon, self.n_sets):
        live[s] = 1
    s = top
    while s >= 0:
        if live[s]:
            for idx in range(self.set_starts[s], self.set_starts[s + 1]):
                item = &self.items[idx]
                if self.use_leo:
                    top_key = _leo_top(self, item.origin, item.nt)
                    if top_key == LEO_ERROR:
                        free(live)
                        free(new_index)
                        return False
                    if top_key != LEO_NONE:
                        item.nt = <int32_t>(top_key & LOW32)
                        item.origin = <int32_t>(top_key >> 32)
                live[item.origin] = 1
        s -= 1
    # 2. Move live sets down (new positions never pass old ones), dropping
    #    duplicates that folding created, and renumber.
    for s in range(self.n_sets):
        if not live[s]:
            continue
        new_index[s] = n_new_sets
        old_start = self.set_starts[s]
        old_nt_start = self.set_nt_starts[s]
        old_end = self.set_starts[s + 1]
        new_start = write
        new_nt_start = write
        self.dedup_stamp = self.next_serial
        self.dedup_n_tabled = 0
        self.next_serial += 1
        for part in range(2):
            for idx in range(old_start if part == 0 else old_nt_start,
                             old_nt_start if part == 0 else old_end):
                candidate = self.items[idx]
                # 1: new, 0: duplicate, -1: no memory for the table (keep it)
                inserted = _dedup_insert(self, &candidate, new_start, write)
                if inserted != 0:
                    self.items[write] = candidate
                    write += 1
            if part == 0:
                new_nt_start = write
        self.set_starts[n_new_sets] = new_start
        self.set_nt_starts[n_new_sets] = new_nt_start
        self.set_serials[n_new_sets] = self.set_serials[s]
        self.set_accepting[n_new_sets] = self.set_accepting[s]
        self.set_leo_nts[n_new_sets] = -1
        n_new_sets += 1
    self.set_starts[n_new_sets] = write
    for idx in range(write):
        self.items[idx].origin = <int32_t>new_index[self.items[idx].origin]
    self.rollback_floor = new_index[horizon]
    self.n_dropped_sets += self.n_sets - n_new_sets
    self.n_sets = n_new_sets
    self.n_items = write
    self.compaction_epoch += 1
    self.n_sets_keyed = 0
    self.key_last_serial = 0
    _leo_clear(self)
    free(live)
    free(new_index)
    self.error_code = ERROR_NONE
    return True

