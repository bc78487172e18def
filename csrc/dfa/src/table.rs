//! The plain DFA table every builder produces and every transformation
//! consumes, plus the table-level operations (intersection, difference,
//! early end).
//!
//! Layout (what Python receives, see docs/internals.md "Terminal DFAs"):
//! - `class_map[byte]` is the byte's equivalence class, `0..n_classes`;
//! - `transitions[state * n_classes + class]` is the next state;
//! - `accepting[state]` says the bytes read so far form a whole match
//!   (regex-automata's one-byte match delay is already resolved);
//! - `start` is the start state.
//!
//! Invariants of tables leaving `minimize::normalize` (the only way out of
//! the crate): state 0 is the dead state (non-accepting, all transitions to
//! itself); every other state is reachable from `start` and can reach an
//! accepting state; no two states are equivalent; no two classes have equal
//! columns; states are numbered in breadth-first order from `start`, classes
//! in order of their smallest byte, so equal languages give equal tables.
//! Intermediate tables (inside a build) only promise that state 0 is dead.

use crate::error::{Failure, Limits};
use crate::word_hash::WordHash;
use std::collections::{HashMap, VecDeque};

/// The dead state of every table.
pub const DEAD: u32 = 0;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub class_map: [u8; 256],
    pub n_classes: usize,
    pub transitions: Vec<u32>,
    pub accepting: Vec<bool>,
    pub start: u32,
}

impl Table {
    pub fn n_states(&self) -> usize {
        self.accepting.len()
    }

    /// The table of the empty language: only the dead state, which is also the start.
    pub fn empty_language() -> Table {
        Table { class_map: [0; 256], n_classes: 1, transitions: vec![DEAD], accepting: vec![false], start: DEAD }
    }

    #[inline]
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        self.transitions[state as usize * self.n_classes + self.class_map[byte as usize] as usize]
    }

    #[inline]
    pub fn next_by_class(&self, state: u32, class: usize) -> u32 {
        self.transitions[state as usize * self.n_classes + class]
    }

    /// The targets of `state`, one per class.
    #[inline]
    pub fn row(&self, state: usize) -> &[u32] {
        &self.transitions[state * self.n_classes..(state + 1) * self.n_classes]
    }

    /// Whether the whole of `data` is accepted (used by tests and callers alike).
    pub fn fullmatch(&self, data: &[u8]) -> bool {
        let mut state = self.start;
        for &byte in data {
            state = self.next(state, byte);
            if state == DEAD {
                return false;
            }
        }
        self.accepting[state as usize]
    }

    /// One byte per class: the smallest byte mapped to it.
    pub fn class_representatives(&self) -> Vec<u8> {
        let mut representatives = vec![None; self.n_classes];
        for byte in 0..=255u8 {
            let class = self.class_map[byte as usize] as usize;
            if representatives[class].is_none() {
                representatives[class] = Some(byte);
            }
        }
        representatives.into_iter().map(|byte| byte.expect("every class has a byte")).collect()
    }

    /// Builds a table from a per-byte transition function over `n_states`
    /// states (state 0 must be dead), with the identity class map. Meant for
    /// small hand-built automata; `normalize` merges the classes later.
    pub fn from_byte_function(
        n_states: usize,
        start: u32,
        accepting: Vec<bool>,
        next: impl Fn(u32, u8) -> u32,
    ) -> Table {
        let mut class_map = [0u8; 256];
        for byte in 0..=255u8 {
            class_map[byte as usize] = byte;
        }
        let mut transitions = Vec::with_capacity(n_states * 256);
        for state in 0..n_states as u32 {
            for byte in 0..=255u8 {
                transitions.push(if state == DEAD { DEAD } else { next(state, byte) });
            }
        }
        Table { class_map, n_classes: 256, transitions, accepting, start }
    }

    /// Early end (`#e`): the match ends at its first accepting state, so every
    /// transition out of an accepting state goes to the dead state.
    pub fn early_end(mut self) -> Table {
        for state in 0..self.n_states() {
            if self.accepting[state] {
                let row = state * self.n_classes;
                self.transitions[row..row + self.n_classes].fill(DEAD);
            }
        }
        self
    }
}

/// Class map of the common refinement of two class maps: byte b's class is
/// determined by the pair (a[b], b[b]); classes are numbered by first byte.
/// Returns the map, the number of classes and, per class, its pair.
pub(crate) fn refine_classes(a: &[u8; 256], b: &[u8; 256]) -> ([u8; 256], Vec<(usize, usize)>) {
    let mut class_map = [0u8; 256];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut pair_ids: HashMap<(usize, usize), u8> = HashMap::new();
    for byte in 0..256 {
        let pair = (a[byte] as usize, b[byte] as usize);
        let class_id = *pair_ids.entry(pair).or_insert_with(|| {
            pairs.push(pair);
            (pairs.len() - 1) as u8
        });
        class_map[byte] = class_id;
    }
    (class_map, pairs)
}

/// Product automaton accepting the intersection of two languages. Pairs with
/// a dead component collapse into the dead state 0. The product may grow
/// past the final state limit while building, so only `max_bytes` bounds it.
pub fn intersect(a: &Table, b: &Table, limits: &Limits) -> Result<Table, Failure> {
    product(a, b, Operation::Intersection, limits)
}

/// Product automaton accepting the strings of `a` that `b` rejects. A pair
/// whose `a` component is dead collapses into the dead state 0; a dead `b`
/// component is kept (`b` can no longer accept, so the pair follows `a`).
/// Only `max_bytes` bounds the product while building, as for `intersect`.
pub fn subtract(a: &Table, b: &Table, limits: &Limits) -> Result<Table, Failure> {
    product(a, b, Operation::Difference, limits)
}

/// Product automaton accepting the strings of `a` that none of `removed`
/// accepts: one product over tuples (state of `a`, state of each removed
/// table) instead of one subtraction per removed table, each minimized
/// before the next.  Removing many names or patterns that die after a few
/// bytes (JSON keys other than a schema's listed ones) reaches about the
/// sum of their sizes in tuples, built and minimized once.  A tuple whose
/// `a` component is dead is the dead state 0; dead removed components are
/// kept (they can no longer accept).  Only `max_bytes` bounds it.  The
/// pairs of `intersect` and `subtract` keep their own loop (`product`):
/// its pairs packed in one word hash faster than tuples, and the largest
/// intersections (0.5-1.8 s) took a third longer through this one.
///
/// Data layout: tuple `i` is `tuples[i * width..(i + 1) * width]`, `width`
/// = 1 + `removed.len()`; classes are the common refinement of every class
/// map, each class read in a table through its smallest byte.
pub fn subtract_all(a: &Table, removed: &[Table], limits: &Limits) -> Result<Table, Failure> {
    if a.start == DEAD {
        return Ok(Table::empty_language());
    }
    let mut class_map = a.class_map;
    let mut n_classes = a.n_classes;
    for table in removed {
        let (refined, pairs) = refine_classes(&class_map, &table.class_map);
        class_map = refined;
        n_classes = pairs.len();
    }
    let mut representatives = vec![0u8; n_classes];
    for byte in (0..=255u8).rev() {
        representatives[class_map[byte as usize] as usize] = byte;
    }
    let tables: Vec<&Table> = std::iter::once(a).chain(removed.iter()).collect();
    let width = tables.len();
    // Per table, per class of the product: the table's own class.
    let classes: Vec<Vec<usize>> = tables
        .iter()
        .map(|table| representatives.iter().map(|&byte| table.class_map[byte as usize] as usize).collect())
        .collect();
    let mut ids: HashMap<Box<[u32]>, u32, WordHash> = HashMap::default();
    let mut tuples: Vec<u32> = vec![DEAD; width];
    tuples.extend(tables.iter().map(|table| table.start));
    ids.insert(tuples[width..].into(), 1);
    let mut transitions: Vec<u32> = vec![DEAD; n_classes];
    let mut accepting = vec![false];
    let mut next: Vec<u32> = vec![DEAD; width];
    let mut state_id = 1;
    while state_id * width < tuples.len() {
        let tuple = state_id * width..(state_id + 1) * width;
        accepting.push(
            a.accepting[tuples[tuple.start] as usize]
                && removed.iter().zip(&tuples[tuple.start + 1..tuple.end]).all(|(table, &state)| !table.accepting[state as usize]),
        );
        for class in 0..n_classes {
            next[0] = a.next_by_class(tuples[tuple.start], classes[0][class]);
            if next[0] == DEAD {
                transitions.push(DEAD);
                continue;
            }
            for index in 1..width {
                let state = tuples[tuple.start + index];
                next[index] = if state == DEAD { DEAD } else { tables[index].next_by_class(state, classes[index][class]) };
            }
            let next_id = match ids.get(&next[..]) {
                Some(&next_id) => next_id,
                None => {
                    let next_id = (tuples.len() / width) as u32;
                    limits.check_table_bytes(next_id as usize + 1, n_classes)?;
                    ids.insert(next.clone().into_boxed_slice(), next_id);
                    tuples.extend_from_slice(&next);
                    next_id
                }
            };
            transitions.push(next_id);
        }
        state_id += 1;
    }
    Ok(Table { class_map, n_classes, transitions, accepting, start: 1 })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Operation {
    Intersection,
    Difference,
}

/// The reachable part of the product of `a` and `b` for `operation`; state 0
/// is the dead pair, state 1 the pair of start states.
fn product(a: &Table, b: &Table, operation: Operation, limits: &Limits) -> Result<Table, Failure> {
    let (class_map, class_pairs) = refine_classes(&a.class_map, &b.class_map);
    let n_classes = class_pairs.len();
    if a.start == DEAD || (operation == Operation::Intersection && b.start == DEAD) {
        return Ok(Table::empty_language());
    }
    let dead_pair = |next_a: u32, next_b: u32| match operation {
        Operation::Intersection => next_a == DEAD || next_b == DEAD,
        Operation::Difference => next_a == DEAD,
    };
    // Pair ids by the pair packed in one word (`a << 32 | b`).
    let mut ids: HashMap<u64, u32, WordHash> = HashMap::default();
    let key = |state_a: u32, state_b: u32| (state_a as u64) << 32 | state_b as u64;
    let mut pairs: Vec<(u32, u32)> = vec![(DEAD, DEAD)];
    let mut queue = VecDeque::new();
    ids.insert(key(a.start, b.start), 1);
    pairs.push((a.start, b.start));
    queue.push_back(1u32);
    let mut transitions: Vec<u32> = vec![DEAD; n_classes];
    let mut accepting = vec![false];
    while let Some(state_id) = queue.pop_front() {
        let (state_a, state_b) = pairs[state_id as usize];
        debug_assert_eq!(transitions.len(), state_id as usize * n_classes);
        let (accept_a, accept_b) = (a.accepting[state_a as usize], b.accepting[state_b as usize]);
        accepting.push(match operation {
            Operation::Intersection => accept_a && accept_b,
            Operation::Difference => accept_a && !accept_b,
        });
        for &(class_a, class_b) in &class_pairs {
            let next_a = a.next_by_class(state_a, class_a);
            let next_b = b.next_by_class(state_b, class_b);
            if dead_pair(next_a, next_b) {
                transitions.push(DEAD);
                continue;
            }
            let next_id = match ids.get(&key(next_a, next_b)) {
                Some(&next_id) => next_id,
                None => {
                    let next_id = pairs.len() as u32;
                    limits.check_table_bytes(pairs.len() + 1, n_classes)?;
                    ids.insert(key(next_a, next_b), next_id);
                    pairs.push((next_a, next_b));
                    queue.push_back(next_id);
                    next_id
                }
            };
            transitions.push(next_id);
        }
    }
    Ok(Table { class_map, n_classes, transitions, accepting, start: 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { max_states: 10_000, max_bytes: 1 << 24 }
    }

    /// a* over bytes: state 1 loops on 'a', everything else dies.
    fn a_star() -> Table {
        Table::from_byte_function(2, 1, vec![false, true], |_, byte| if byte == b'a' { 1 } else { DEAD })
    }

    /// Strings of even length over any byte.
    fn even_length() -> Table {
        Table::from_byte_function(3, 1, vec![false, true, false], |state, _| if state == 1 { 2 } else { 1 })
    }

    #[test]
    fn intersection_of_a_star_and_even_length() {
        let table = intersect(&a_star(), &even_length(), &limits()).unwrap();
        for n in 0..7 {
            let text = vec![b'a'; n];
            assert_eq!(table.fullmatch(&text), n % 2 == 0, "length {n}");
        }
        assert!(!table.fullmatch(b"ab"));
        let minimal = crate::minimize::normalize(&table, &limits()).unwrap();
        assert_eq!((minimal.n_states(), minimal.n_classes), (3, 2));
    }

    #[test]
    fn difference_of_a_star_and_even_length() {
        let table = subtract(&a_star(), &even_length(), &limits()).unwrap();
        for n in 0..7 {
            let text = vec![b'a'; n];
            assert_eq!(table.fullmatch(&text), n % 2 == 1, "length {n}");
        }
        assert!(!table.fullmatch(b"b"));
        let rest = subtract(&even_length(), &a_star(), &limits()).unwrap();
        assert!(rest.fullmatch(b"ab") && !rest.fullmatch(b"") && !rest.fullmatch(b"aa"));
        assert!(rest.fullmatch(b"bbbb") && !rest.fullmatch(b"b"));
        let nothing = subtract(&a_star(), &a_star(), &limits()).unwrap();
        assert_eq!(crate::minimize::normalize(&nothing, &limits()).unwrap(), Table::empty_language());
    }

    #[test]
    fn subtracting_several_at_once_equals_one_by_one() {
        let removed = [a_star(), even_length(), Table::from_byte_function(3, 1, vec![false, false, true], |state, byte| match (state, byte) {
            (1, b'b') => 2,
            _ => DEAD,
        })];
        let any = Table::from_byte_function(2, 1, vec![false, true], |_, _| 1);
        let mut one_by_one = crate::minimize::normalize(&any, &limits()).unwrap();
        for table in &removed {
            one_by_one = crate::minimize::normalize(&subtract(&one_by_one, table, &limits()).unwrap(), &limits()).unwrap();
        }
        let at_once = crate::minimize::normalize(&subtract_all(&any, &removed, &limits()).unwrap(), &limits()).unwrap();
        assert_eq!(at_once, one_by_one);
        for (text, expected) in [(&b""[..], false), (b"a", false), (b"b", false), (b"c", true), (b"ab", false), (b"abc", true),
                                 (b"aaa", false), (b"bab", true)] {
            assert_eq!(at_once.fullmatch(text), expected, "{text:?}");
        }
        assert_eq!(subtract_all(&Table::empty_language(), &removed, &limits()).unwrap(), Table::empty_language());
        let tight = Limits { max_states: 10, max_bytes: 300 };
        assert!(matches!(subtract_all(&any, &removed, &tight), Err(Failure::Limit { .. })));
    }

    #[test]
    fn early_end_stops_at_first_accepting_state() {
        let table = a_star().early_end();
        assert!(table.fullmatch(b""));
        assert!(!table.fullmatch(b"a"));
    }

    #[test]
    fn intersection_respects_byte_limit() {
        let tight = Limits { max_states: 10, max_bytes: 260 };
        let failure = intersect(&even_length(), &even_length(), &tight).unwrap_err();
        assert!(matches!(failure, Failure::Limit { .. }));
    }
}
