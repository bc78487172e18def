//! Trimming, minimization and canonical renumbering of `Table`s.
//!
//! `normalize` is applied after every construction and transformation:
//! 1. viability: a backward search from the accepting states finds the states
//!    that can still reach a match; all others are equivalent to dead;
//! 2. Hopcroft's partition refinement (Hopcroft 1971; the "smaller half"
//!    worklist rule gives O(k n log n)) starting from the blocks
//!    {non-viable}, {accepting}, {viable and not accepting};
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
use std::collections::{HashMap, VecDeque};

/// Trim, minimize, renumber, recompute classes, then check the limits.
pub fn normalize(table: &Table, limits: &Limits) -> Result<Table, Failure> {
    let inverse = Inverse::new(table);
    let viable = viable_states(table, &inverse);
    if !viable[table.start as usize] {
        return Ok(Table::empty_language());
    }
    let block_of = hopcroft_blocks(table, &inverse, &viable);
    finish(table, &block_of, limits)
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
    let finished = merge_equal_classes(&renumbered);
    if finished.n_states() > limits.max_states {
        return Err(Failure::Limit {
            limit: Limit::States,
            given: Some(finished.n_states() as u64),
            maximum: limits.max_states as u64,
        });
    }
    let bytes = table_bytes(finished.n_states(), finished.n_classes);
    if bytes > limits.max_bytes as u64 {
        return Err(Failure::Limit { limit: Limit::Bytes, given: Some(bytes), maximum: limits.max_bytes as u64 });
    }
    Ok(finished)
}

/// Incoming transitions grouped by (class, target): the sources of class c
/// into state q are `sources[offsets[c * n + q]..offsets[c * n + q + 1]]`.
struct Inverse {
    offsets: Vec<u32>,
    sources: Vec<u32>,
    n_states: usize,
}

impl Inverse {
    fn new(table: &Table) -> Inverse {
        let n_states = table.n_states();
        let n_classes = table.n_classes;
        let mut offsets = vec![0u32; n_classes * n_states + 1];
        for state in 0..n_states {
            for class in 0..n_classes {
                let target = table.transitions[state * n_classes + class] as usize;
                offsets[class * n_states + target + 1] += 1;
            }
        }
        for index in 1..offsets.len() {
            offsets[index] += offsets[index - 1];
        }
        let mut fill = offsets.clone();
        let mut sources = vec![0u32; n_states * n_classes];
        for state in 0..n_states {
            for class in 0..n_classes {
                let target = table.transitions[state * n_classes + class] as usize;
                let slot = &mut fill[class * n_states + target];
                sources[*slot as usize] = state as u32;
                *slot += 1;
            }
        }
        Inverse { offsets, sources, n_states }
    }

    fn sources(&self, class: usize, target: u32) -> &[u32] {
        let index = class * self.n_states + target as usize;
        &self.sources[self.offsets[index] as usize..self.offsets[index + 1] as usize]
    }
}

/// States from which an accepting state is reachable (state 0 never is).
fn viable_states(table: &Table, inverse: &Inverse) -> Vec<bool> {
    let mut viable: Vec<bool> = table.accepting.clone();
    viable[DEAD as usize] = false;
    let mut stack: Vec<u32> = (0..table.n_states() as u32).filter(|&s| viable[s as usize]).collect();
    while let Some(state) = stack.pop() {
        for class in 0..table.n_classes {
            for &source in inverse.sources(class, state) {
                if source != DEAD && !viable[source as usize] {
                    viable[source as usize] = true;
                    stack.push(source);
                }
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
fn hopcroft_blocks(table: &Table, inverse: &Inverse, viable: &[bool]) -> Vec<u32> {
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
    let mut in_worklist = vec![true; block_start.len()];
    let mut worklist: Vec<u32> = (0..block_start.len() as u32).collect();
    let mut touched: Vec<u32> = Vec::new();
    let mut splitter: Vec<u32> = Vec::new();

    while let Some(splitter_block) = worklist.pop() {
        in_worklist[splitter_block as usize] = false;
        splitter.clear();
        let range = block_start[splitter_block as usize] as usize..block_end[splitter_block as usize] as usize;
        splitter.extend_from_slice(&elements[range]);
        for class in 0..table.n_classes {
            // Mark every state whose class-`class` transition enters the splitter.
            // A state has one target per class, so nothing is marked twice.
            for &target in &splitter {
                for &source in inverse.sources(class, target) {
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
                in_worklist.push(true);
                worklist.push(new_block as u32);
                for index in block_start[new_block]..block_end[new_block] {
                    block_of[elements[index as usize] as usize] = new_block as u32;
                }
            }
        }
    }
    block_of
}

/// Quotient table over the blocks: the dead block is state 0, the others are
/// numbered breadth-first from the start block.
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
    let mut queue = VecDeque::from([start_block]);
    while let Some(block) = queue.pop_front() {
        let state = representative[block as usize];
        for class in 0..n_classes {
            let next_block = block_of[table.next_by_class(state, class) as usize];
            if new_id[next_block as usize] == u32::MAX {
                new_id[next_block as usize] = order.len() as u32;
                order.push(next_block);
                queue.push_back(next_block);
            }
        }
    }
    let mut transitions = Vec::with_capacity(order.len() * n_classes);
    let mut accepting = Vec::with_capacity(order.len());
    for &block in &order {
        let state = representative[block as usize];
        accepting.push(block != dead_block && table.accepting[state as usize]);
        for class in 0..n_classes {
            let next = if block == dead_block { DEAD } else { new_id[block_of[table.next_by_class(state, class) as usize] as usize] };
            transitions.push(next);
        }
    }
    Table { class_map: table.class_map, n_classes, transitions, accepting, start: 1 }
}

/// Merges classes whose transition columns are equal; classes are numbered
/// in order of their smallest byte.
fn merge_equal_classes(table: &Table) -> Table {
    let n_states = table.n_states();
    let mut column_ids: HashMap<Vec<u32>, u8> = HashMap::new();
    let mut kept_classes: Vec<usize> = Vec::new();
    let mut new_class_of_old: Vec<Option<u8>> = vec![None; table.n_classes];
    let mut class_map = [0u8; 256];
    for byte in 0..256 {
        let old_class = table.class_map[byte] as usize;
        let new_class = *new_class_of_old[old_class].get_or_insert_with(|| {
            let column: Vec<u32> = (0..n_states as u32).map(|s| table.next_by_class(s, old_class)).collect();
            *column_ids.entry(column).or_insert_with(|| {
                kept_classes.push(old_class);
                (kept_classes.len() - 1) as u8
            })
        });
        class_map[byte] = new_class;
    }
    let n_classes = kept_classes.len();
    let mut transitions = Vec::with_capacity(n_states * n_classes);
    for state in 0..n_states as u32 {
        for &old_class in &kept_classes {
            transitions.push(table.next_by_class(state, old_class));
        }
    }
    Table { class_map, n_classes, transitions, accepting: table.accepting.clone(), start: table.start }
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
    fn state_limit_is_checked_on_the_minimal_table() {
        let tight = Limits { max_states: 3, max_bytes: 1 << 24 };
        let failure = normalize(&length_multiple_of_three_redundant(), &tight).unwrap_err();
        assert_eq!(failure, Failure::Limit { limit: Limit::States, given: Some(4), maximum: 3 });
    }
}
