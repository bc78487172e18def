//! Trimming, minimization and canonical renumbering of `Table`s.
//!
//! `normalize` is applied after every construction and transformation:
//! 1. viability: the states that can still reach a match; all others are
//!    equivalent to dead;
//! 2. the blocks of equivalent states: when the states reachable from the
//!    start form no cycle (a counted repetition, a key with capped
//!    whitespace around it, a string with a maxLength), one depth-first
//!    search decides viability and places each state by its row from the
//!    sinks up (Revuz 1992: a state's block is fixed by its acceptance and
//!    its targets' blocks, all known before it; linear, where the
//!    refinement below splits a chain of n counted states in about
//!    n log n steps); otherwise viability by a backward search from the
//!    accepting states, then Hopcroft's partition refinement (Hopcroft
//!    1971; the "smaller half" worklist rule gives O(k n log n)) starting
//!    from the blocks {non-viable}, {accepting}, {viable and not accepting}; a
//!    splitter's incoming transitions are gathered once and grouped by
//!    class, and transitions into the dead state are never stored (the
//!    non-viable block is the initial block left out of the worklist), so
//!    the work follows the live transitions, not k times the states;
//! 3. renumbering: the block of non-viable states becomes state 0, the other
//!    blocks are numbered breadth-first from the start block, in class order
//!    (unreachable blocks disappear);
//! 4. byte classes are recomputed: classes with equal columns merge, numbered
//!    by their smallest byte.
//! The result satisfies the invariants listed in `table.rs`, and two tables
//! of the same language normalize to identical tables (minimal DFAs are
//! unique up to renaming, and steps 3-4 fix the naming).
//! Finally the limits are checked on the finished table.

use crate::error::{table_bytes, Failure, Limit, Limits};
use crate::table::{Table, DEAD};
use crate::word_hash::{WordHash, WordHasher};
use std::collections::HashMap;
use std::hash::Hasher;

/// Trim, minimize, renumber, recompute classes, then check the limits.
pub fn normalize(table: &Table, limits: &Limits) -> Result<Table, Failure> {
    if let Some(block_of) = acyclic_blocks(table) {
        return finish(table, &block_of, limits);
    }
    let incoming = Incoming::new(table);
    let viable = viable_states(table, &incoming);
    if !viable[table.start as usize] {
        return Ok(Table::empty_language());
    }
    let block_of = hopcroft_blocks(table, &incoming, &viable);
    finish(table, &block_of, limits)
}

/// Blocks of states told apart by their rows: a row is a state's acceptance
/// and its targets' blocks, and equal rows share a block.  Blocks are
/// numbered from 0 in the order they are made; `rows` holds each block's
/// row (`1 + n_classes` words), and the blocks whose rows share a hash are
/// chained through `next_same_hash` from `first_of_hash` (no vector per row).
pub(crate) struct RowBlocks {
    width: usize,
    rows: Vec<u32>,
    first_of_hash: HashMap<u64, u32, WordHash>,
    next_same_hash: Vec<u32>,
    row: Vec<u32>,
}

impl RowBlocks {
    pub(crate) fn new(n_classes: usize) -> RowBlocks {
        RowBlocks {
            width: n_classes + 1,
            rows: Vec::new(),
            first_of_hash: HashMap::default(),
            next_same_hash: Vec::new(),
            row: vec![0; n_classes + 1],
        }
    }

    /// The block of `state`'s row in `table` (its acceptance, its targets'
    /// blocks by `block_of`): the block of an equal row made before when
    /// `merge`, else a new one.
    pub(crate) fn place(&mut self, table: &Table, state: usize, block_of: &[u32], merge: bool) -> u32 {
        self.row[0] = table.accepting[state] as u32;
        for (slot, &target) in self.row[1..].iter_mut().zip(table.row(state)) {
            *slot = block_of[target as usize];
        }
        let mut hasher = WordHasher::default();
        for &word in &self.row {
            hasher.write_u32(word);
        }
        let hash = hasher.finish();
        let width = self.width;
        if merge {
            let mut candidate = self.first_of_hash.get(&hash).copied().unwrap_or(u32::MAX);
            while candidate != u32::MAX {
                if self.rows[candidate as usize * width..(candidate as usize + 1) * width] == self.row[..] {
                    return candidate;
                }
                candidate = self.next_same_hash[candidate as usize];
            }
        }
        let block = self.next_same_hash.len() as u32;
        self.next_same_hash.push(self.first_of_hash.insert(hash, block).unwrap_or(u32::MAX));
        self.rows.extend_from_slice(&self.row);
        block
    }
}

/// The coarsest partition when the states reachable from the start form
/// no cycle (`None` otherwise): a depth-first search from the start, whose
/// post-order puts every target before its sources, decides each state's
/// viability (it accepts, or a target is viable) and places the viable
/// ones by their rows (`RowBlocks`); by induction on the longest path to a
/// sink, two of them share a block exactly when they are equivalent.  The
/// non-viable states, state 0 and the unreachable states (which `finish`
/// drops) form block 0.
fn acyclic_blocks(table: &Table) -> Option<Vec<u32>> {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let mut color = vec![WHITE; table.n_states()];
    color[DEAD as usize] = BLACK;
    let mut viable = vec![false; table.n_states()];
    let mut block_of = vec![0u32; table.n_states()];
    let mut blocks = RowBlocks::new(table.n_classes);
    blocks.place(table, DEAD as usize, &block_of, false);
    // The search's stack: (state, next class to follow).
    let mut stack: Vec<(u32, usize)> = vec![(table.start, 0)];
    color[table.start as usize] = GREY;
    while let Some(top) = stack.last_mut() {
        let (state, class) = *top;
        if class < table.n_classes {
            top.1 += 1;
            let target = table.row(state as usize)[class] as usize;
            match color[target] {
                WHITE => {
                    color[target] = GREY;
                    stack.push((target as u32, 0));
                }
                GREY => return None,
                _ => {}
            }
            continue;
        }
        stack.pop();
        let state = state as usize;
        color[state] = BLACK;
        viable[state] = table.accepting[state] || table.row(state).iter().any(|&target| viable[target as usize]);
        if viable[state] {
            block_of[state] = blocks.place(table, state, &block_of, true);
        }
    }
    Some(block_of)
}

/// Steps 3-4 and the limit checks, for a partition `block_of` of the states
/// into blocks of equivalent states that the caller knows to be the
/// coarsest one, with every non-viable state in state 0's block (a builder
/// that minimizes by construction, `name_trie`, skips steps 1-2 with it).
pub fn finish(table: &Table, block_of: &[u32], limits: &Limits) -> Result<Table, Failure> {
    if block_of[table.start as usize] == block_of[DEAD as usize] {
        return Ok(Table::empty_language());
    }
    let renumbered = renumber_blocks(table, block_of);
    let finished = merge_equal_classes(renumbered);
    check_limits(&finished, limits)?;
    Ok(finished)
}

/// Fails unless the finished `table` fits `max_states` and `max_bytes`.
pub fn check_limits(table: &Table, limits: &Limits) -> Result<(), Failure> {
    if table.n_states() > limits.max_states {
        return Err(Failure::Limit {
            limit: Limit::States,
            given: Some(table.n_states() as u64),
            maximum: limits.max_states as u64,
        });
    }
    let bytes = table_bytes(table.n_states(), table.n_classes);
    if bytes > limits.max_bytes as u64 {
        return Err(Failure::Limit { limit: Limit::Bytes, given: Some(bytes), maximum: limits.max_bytes as u64 });
    }
    Ok(())
}

/// Incoming transitions grouped by target: the transitions into state q are
/// `edges[offsets[q]..offsets[q + 1]]`, each packed as `class << 32 | source`
/// (so sorting a splitter's edges groups them by class).  Transitions into
/// state 0 are left out: nothing asks for them (state 0 is never viable and
/// its block never splits another, see `hopcroft_blocks`).
struct Incoming {
    offsets: Vec<u32>,
    edges: Vec<u64>,
}

impl Incoming {
    fn new(table: &Table) -> Incoming {
        let n_states = table.n_states();
        let n_classes = table.n_classes;
        let mut offsets = vec![0u32; n_states + 1];
        for &target in &table.transitions {
            if target != DEAD {
                offsets[target as usize + 1] += 1;
            }
        }
        for index in 1..offsets.len() {
            offsets[index] += offsets[index - 1];
        }
        let mut fill = offsets.clone();
        let mut edges = vec![0u64; offsets[n_states] as usize];
        for state in 0..n_states {
            for class in 0..n_classes {
                let target = table.transitions[state * n_classes + class] as usize;
                if target != DEAD as usize {
                    let slot = &mut fill[target];
                    edges[*slot as usize] = (class as u64) << 32 | state as u64;
                    *slot += 1;
                }
            }
        }
        Incoming { offsets, edges }
    }

    fn edges_into(&self, target: u32) -> &[u64] {
        &self.edges[self.offsets[target as usize] as usize..self.offsets[target as usize + 1] as usize]
    }
}

/// States from which an accepting state is reachable (state 0 never is).
fn viable_states(table: &Table, incoming: &Incoming) -> Vec<bool> {
    let mut viable: Vec<bool> = table.accepting.clone();
    viable[DEAD as usize] = false;
    let mut stack: Vec<u32> = (0..table.n_states() as u32).filter(|&s| viable[s as usize]).collect();
    while let Some(state) = stack.pop() {
        for &edge in incoming.edges_into(state) {
            let source = edge as u32;
            if source != DEAD && !viable[source as usize] {
                viable[source as usize] = true;
                stack.push(source);
            }
        }
    }
    viable
}

/// Partition of the states into blocks of equivalent states, as a block id
/// per state. Data layout: `elements` holds the states grouped by block;
/// block b is `elements[block_start[b]..block_end[b]]`, `position[s]` is where
/// s sits in `elements`. While a splitter is applied, the states of block b
/// seen so far are moved to the front: `elements[block_start[b]..][..n_marked[b]]`.
fn hopcroft_blocks(table: &Table, incoming: &Incoming, viable: &[bool]) -> Vec<u32> {
    let n_states = table.n_states();
    let initial_block = |state: usize| -> u32 {
        if !viable[state] {
            0
        } else if table.accepting[state] {
            1
        } else {
            2
        }
    };
    let mut elements: Vec<u32> = (0..n_states as u32).collect();
    elements.sort_by_key(|&state| initial_block(state as usize));
    let mut position = vec![0u32; n_states];
    for (index, &state) in elements.iter().enumerate() {
        position[state as usize] = index as u32;
    }
    let mut block_of = vec![0u32; n_states];
    let mut block_start: Vec<u32> = Vec::new();
    let mut block_end: Vec<u32> = Vec::new();
    let mut index = 0usize;
    while index < n_states {
        let initial = initial_block(elements[index] as usize);
        let start = index;
        while index < n_states && initial_block(elements[index] as usize) == initial {
            block_of[elements[index] as usize] = block_start.len() as u32;
            index += 1;
        }
        block_start.push(start as u32);
        block_end.push(index as u32);
    }
    let mut n_marked = vec![0u32; block_start.len()];
    // Every initial block but one must split the others (Hopcroft); the one
    // left out is the non-viable block, which has the most incoming
    // transitions (nearly every state has some into the dead state).  A
    // split block keeps the larger part under its id, so when it waits in
    // the worklist both parts do; the smaller part always joins it.
    let mut worklist: Vec<u32> = (0..block_start.len() as u32).collect();
    if block_start.len() > 1 && !viable[elements[0] as usize] {
        worklist.remove(0);
    }
    let mut touched: Vec<u32> = Vec::new();
    let mut splitter_edges: Vec<u64> = Vec::new();
    let mut class_ends: Vec<u32> = vec![0; table.n_classes];

    while let Some(splitter_block) = worklist.pop() {
        // The transitions into the splitter, grouped by class: each class's
        // group splits the blocks of its sources in turn.
        let range = block_start[splitter_block as usize] as usize..block_end[splitter_block as usize] as usize;
        group_by_class(elements[range].iter().map(|&target| incoming.edges_into(target)), &mut class_ends, &mut splitter_edges);
        let mut group_start = 0;
        for &group_end in &class_ends {
            let group = &splitter_edges[group_start..group_end as usize];
            group_start = group_end as usize;
            // Mark every state whose transition of this class enters the
            // splitter. A state has one target per class, so nothing is
            // marked twice.
            for &edge in group {
                let source = edge as u32;
                let block = block_of[source as usize] as usize;
                let from = position[source as usize] as usize;
                let to = (block_start[block] + n_marked[block]) as usize;
                let displaced = elements[to];
                elements.swap(from, to);
                position[displaced as usize] = from as u32;
                position[source as usize] = to as u32;
                n_marked[block] += 1;
                if n_marked[block] == 1 {
                    touched.push(block as u32);
                }
            }
            // Split each touched block into marked and unmarked parts; the
            // smaller part becomes the new block and joins the worklist.
            for block in touched.drain(..) {
                let block = block as usize;
                let marked = n_marked[block];
                n_marked[block] = 0;
                let size = block_end[block] - block_start[block];
                if marked == size {
                    continue;
                }
                let new_block = block_start.len();
                if marked <= size - marked {
                    block_start.push(block_start[block]);
                    block_end.push(block_start[block] + marked);
                    block_start[block] += marked;
                } else {
                    block_start.push(block_start[block] + marked);
                    block_end.push(block_end[block]);
                    block_end[block] = block_start[block] + marked;
                }
                n_marked.push(0);
                worklist.push(new_block as u32);
                for index in block_start[new_block]..block_end[new_block] {
                    block_of[elements[index as usize] as usize] = new_block as u32;
                }
            }
        }
    }
    block_of
}

/// Copies the edges of `lists` into `grouped`, ordered by class (a counting
/// sort); the edges of class c end at `class_ends[c]` (`class_ends` holds one
/// entry per class).
fn group_by_class<'a>(lists: impl Iterator<Item = &'a [u64]> + Clone, class_ends: &mut [u32], grouped: &mut Vec<u64>) {
    class_ends.fill(0);
    let mut total = 0;
    for list in lists.clone() {
        for &edge in list {
            class_ends[(edge >> 32) as usize] += 1;
        }
        total += list.len();
    }
    let mut end = 0;
    for count in class_ends.iter_mut() {
        end += *count;
        *count = end - *count;
    }
    grouped.clear();
    grouped.resize(total, 0);
    for list in lists {
        for &edge in list {
            let slot = &mut class_ends[(edge >> 32) as usize];
            grouped[*slot as usize] = edge;
            *slot += 1;
        }
    }
}

/// Quotient table over the blocks: the dead block is state 0, the others are
/// numbered breadth-first from the start block.  One pass: the blocks are
/// numbered as the breadth-first search meets them, and each block's row
/// is written as the search leaves it (the search's order is the table's).
fn renumber_blocks(table: &Table, block_of: &[u32]) -> Table {
    let n_classes = table.n_classes;
    let n_blocks = block_of.iter().map(|&b| b as usize + 1).max().unwrap_or(1);
    let mut representative = vec![u32::MAX; n_blocks];
    for state in (0..table.n_states()).rev() {
        representative[block_of[state] as usize] = state as u32;
    }
    let dead_block = block_of[DEAD as usize];
    let mut new_id = vec![u32::MAX; n_blocks];
    new_id[dead_block as usize] = DEAD;
    let start_block = block_of[table.start as usize];
    new_id[start_block as usize] = 1;
    let mut order = vec![dead_block, start_block];
    let mut transitions = vec![DEAD; n_classes];
    let mut accepting = vec![false];
    let mut next_in_order = 1;
    while next_in_order < order.len() {
        let state = representative[order[next_in_order] as usize];
        next_in_order += 1;
        accepting.push(table.accepting[state as usize]);
        for &target in table.row(state as usize) {
            let next_block = block_of[target as usize] as usize;
            if new_id[next_block] == u32::MAX {
                new_id[next_block] = order.len() as u32;
                order.push(next_block as u32);
            }
            transitions.push(new_id[next_block]);
        }
    }
    Table { class_map: table.class_map, n_classes, transitions, accepting, start: 1 }
}

/// Merges classes whose transition columns are equal; classes are numbered
/// in order of their smallest byte.  Each column's hash is accumulated in
/// one row-major pass (no column is copied out), columns are compared
/// only when their hashes meet, and a table whose classes neither merge
/// nor move is returned as it is.
fn merge_equal_classes(table: Table) -> Table {
    let n_states = table.n_states();
    let n_classes = table.n_classes;
    let mut hashes = vec![0u64; n_classes];
    for row in table.transitions.chunks_exact(n_classes) {
        for (hash, &target) in hashes.iter_mut().zip(row) {
            *hash = (hash.rotate_left(5) ^ target as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    let same_column = |a: usize, b: usize| {
        (0..n_states).all(|state| table.next_by_class(state as u32, a) == table.next_by_class(state as u32, b))
    };
    // Kept classes by hash: the first class with each distinct column.
    let mut by_hash: HashMap<u64, Vec<u8>, WordHash> = HashMap::default();
    let mut kept_classes: Vec<usize> = Vec::new();
    let mut new_class_of_old: Vec<Option<u8>> = vec![None; n_classes];
    let mut class_map = [0u8; 256];
    for byte in 0..256 {
        let old_class = table.class_map[byte] as usize;
        let new_class = *new_class_of_old[old_class].get_or_insert_with(|| {
            let candidates = by_hash.entry(hashes[old_class]).or_default();
            match candidates.iter().find(|&&kept| same_column(kept_classes[kept as usize], old_class)) {
                Some(&kept) => kept,
                None => {
                    kept_classes.push(old_class);
                    let new_class = (kept_classes.len() - 1) as u8;
                    candidates.push(new_class);
                    new_class
                }
            }
        });
        class_map[byte] = new_class;
    }
    if kept_classes.iter().enumerate().all(|(new_class, &old_class)| new_class == old_class)
        && kept_classes.len() == n_classes
    {
        return Table { class_map, ..table };
    }
    let n_kept = kept_classes.len();
    let mut transitions = Vec::with_capacity(n_states * n_kept);
    for row in table.transitions.chunks_exact(n_classes) {
        transitions.extend(kept_classes.iter().map(|&old_class| row[old_class]));
    }
    Table { class_map, n_classes: n_kept, transitions, accepting: table.accepting, start: table.start }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { max_states: 10_000, max_bytes: 1 << 24 }
    }

    /// Strings over {a, b} whose length is a multiple of 3, built with
    /// redundant states (a counter mod 6) that minimization must merge.
    fn length_multiple_of_three_redundant() -> Table {
        Table::from_byte_function(7, 1, vec![false, true, false, false, true, false, false], |state, byte| {
            if byte == b'a' || byte == b'b' {
                (state % 6) + 1
            } else {
                DEAD
            }
        })
    }

    #[test]
    fn minimization_merges_equivalent_states() {
        let table = normalize(&length_multiple_of_three_redundant(), &limits()).unwrap();
        assert_eq!(table.n_states(), 4);
        assert_eq!(table.n_classes, 2);
        assert_eq!(table.class_map[b'a' as usize], table.class_map[b'b' as usize]);
        for n in 0..10 {
            assert_eq!(table.fullmatch(&vec![b'a'; n]), n % 3 == 0);
        }
    }

    #[test]
    fn trimming_sends_hopeless_states_to_dead() {
        // 'a' leads to a state that loops forever without accepting.
        let table = Table::from_byte_function(4, 1, vec![false, false, false, true], |state, byte| match (state, byte) {
            (1, b'a') => 2,
            (2, _) => 2,
            (1, b'b') => 3,
            _ => DEAD,
        });
        let table = normalize(&table, &limits()).unwrap();
        assert_eq!(table.n_states(), 3);
        assert_eq!(table.next(table.start, b'a'), DEAD);
        assert!(table.fullmatch(b"b"));
    }

    #[test]
    fn empty_language_has_only_the_dead_state() {
        let table = Table::from_byte_function(2, 1, vec![false, false], |_, _| 1);
        let table = normalize(&table, &limits()).unwrap();
        assert_eq!(table, Table::empty_language());
    }

    #[test]
    fn equal_languages_give_equal_tables() {
        let three = normalize(&length_multiple_of_three_redundant(), &limits()).unwrap();
        let direct = Table::from_byte_function(4, 1, vec![false, true, false, false], |state, byte| {
            if byte == b'a' || byte == b'b' {
                state % 3 + 1
            } else {
                DEAD
            }
        });
        assert_eq!(normalize(&direct, &limits()).unwrap(), three);
    }

    #[test]
    fn classes_merge_by_column_and_are_numbered_by_smallest_byte() {
        // (a|c)*b: 'a' and 'c' have equal columns, 'b' its own, every other byte dead.
        let table = Table::from_byte_function(3, 1, vec![false, false, true], |state, byte| match (state, byte) {
            (1, b'a' | b'c') => 1,
            (1, b'b') => 2,
            _ => DEAD,
        });
        let table = normalize(&table, &limits()).unwrap();
        assert_eq!(table.n_classes, 3);
        assert_eq!(table.class_map[0], 0);
        assert_eq!(table.class_map[b'a' as usize], 1);
        assert_eq!(table.class_map[b'c' as usize], 1);
        assert_eq!(table.class_map[b'b' as usize], 2);
        assert!(table.fullmatch(b"acab") && !table.fullmatch(b"abc"));
        // A normalized table is its own normal form (classes neither merge nor move).
        assert_eq!(normalize(&table, &limits()).unwrap(), table);
    }

    #[test]
    fn acyclic_tables_get_the_partition_refinements_blocks() {
        use crate::regex_build::{full_match_table, parse};
        let patterns = [
            "a{0,20}b{3}", "[ \t]{0,30}:[ \t]{0,30}", "\"[a-z]{1,12}\"", "(?:ab|a){0,9}c?",
            "[0-9]{4}-[0-9]{2}-[0-9]{2}", "(?:x|xy|xyz){2,6}", "é{0,5}[^a]{2}", "(?:aa|bb|ab|ba){3}|a{5}",
        ];
        for pattern in patterns {
            let table = full_match_table(&parse(pattern, false).unwrap(), &limits()).unwrap();
            let incoming = Incoming::new(&table);
            let viable = viable_states(&table, &incoming);
            let blocks = acyclic_blocks(&table).expect(pattern);
            let by_refinement = finish(&table, &hopcroft_blocks(&table, &incoming, &viable), &limits()).unwrap();
            assert_eq!(finish(&table, &blocks, &limits()).unwrap(), by_refinement, "{pattern}");
            assert_eq!(normalize(&table, &limits()).unwrap(), by_refinement, "{pattern}");
        }
        for pattern in ["a*", "(?:ab)+c", "x{3}(?:y|z)*"] {
            let table = full_match_table(&parse(pattern, false).unwrap(), &limits()).unwrap();
            assert!(acyclic_blocks(&table).is_none(), "{pattern}");
        }
    }

    /// A table over 'a', 'b', 'c' (every other byte dead) with `n_states`
    /// states whose transitions lead only to later states in a random order
    /// (no cycle) or, with `cyclic`, anywhere; random targets, dead
    /// transitions and acceptance from the xorshift state `seed`.
    fn random_table(seed: &mut u64, n_states: usize, cyclic: bool) -> Table {
        let mut next = move || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        let mut order: Vec<u32> = (1..n_states as u32).collect();
        for index in (1..order.len()).rev() {
            order.swap(index, next() as usize % (index + 1));
        }
        let mut class_map = [3u8; 256];
        class_map[b'a' as usize] = 0;
        class_map[b'b' as usize] = 1;
        class_map[b'c' as usize] = 2;
        let mut transitions = vec![DEAD; n_states * 4];
        let mut accepting = vec![false; n_states];
        for (rank, &state) in order.iter().enumerate() {
            accepting[state as usize] = next() % 3 == 0;
            for class in 0..3 {
                let later = order.len() - rank - 1;
                transitions[state as usize * 4 + class] = if next() % 4 == 0 {
                    DEAD
                } else if cyclic {
                    order[next() as usize % order.len()]
                } else if later > 0 {
                    order[rank + 1 + next() as usize % later]
                } else {
                    DEAD
                };
            }
        }
        Table { class_map, n_classes: 4, transitions, accepting, start: order[0] }
    }

    #[test]
    fn random_acyclic_tables_get_the_partition_refinements_blocks() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut n_acyclic = 0;
        for round in 0..3000 {
            let n_states = 2 + round % 40;
            let table = random_table(&mut seed, n_states, round % 5 == 4);
            let incoming = Incoming::new(&table);
            let viable = viable_states(&table, &incoming);
            let expected = if viable[table.start as usize] {
                finish(&table, &hopcroft_blocks(&table, &incoming, &viable), &limits()).unwrap()
            } else {
                Table::empty_language()
            };
            if let Some(blocks) = acyclic_blocks(&table) {
                n_acyclic += 1;
                assert_eq!(finish(&table, &blocks, &limits()).unwrap(), expected, "round {round}");
            }
            assert_eq!(normalize(&table, &limits()).unwrap(), expected, "round {round}");
        }
        assert!(n_acyclic > 2000, "{n_acyclic}");
    }

    #[test]
    fn state_limit_is_checked_on_the_minimal_table() {
        let tight = Limits { max_states: 3, max_bytes: 1 << 24 };
        let failure = normalize(&length_multiple_of_three_redundant(), &tight).unwrap_err();
        assert_eq!(failure, Failure::Limit { limit: Limit::States, given: Some(4), maximum: 3 });
    }
}
