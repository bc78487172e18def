//! Full-match tables of concatenations built from their pieces' minimal
//! tables, so that a piece many patterns share is determinized once per
//! process.
//!
//! What it computes: for a pattern whose parsed form is a concatenation
//! holding a counted repetition (`x{m,n}` with a bound of at least
//! `COUNTED_BOUND`), or is such a repetition alone, the minimal table of the
//! whole pattern, as the left-to-right concatenation of its pieces' minimal
//! tables (each maximal run of other items is one piece, each counted
//! repetition another) and `minimize::normalize` after every step.  A
//! counted repetition of a prefix-free item is built from the item's
//! minimal table by a counter (`repeat`), others through regex-automata.
//! The motivating cases are JSON Schema's member separator
//! `[ \t\n\r]{0,256}:[ \t\n\r]{0,256}` joined with a schema's own value
//! pattern (the two whitespace counts are most of the states, and
//! regex-automata rebuilt them for every joined pattern) and string length
//! bounds (a JSON string character repeated `{0,63}`, 7-20 ms each through
//! regex-automata, about 1 ms by the counter).
//!
//! Why the result is identical to `regex_build::full_match_table` followed by
//! `normalize`: both accept the same language (the concatenation of the
//! pieces' languages is the pattern's), and `normalize` maps equal languages
//! to equal tables (`minimize.rs`).  Limits: every intermediate table is
//! bounded by `max_bytes`; any failure of this path (a piece past a limit,
//! a product too large) returns `None` and the caller builds the pattern as
//! a whole, so errors are exactly the whole-pattern build's.
//!
//! Data layout: `concatenate` is the subset construction over states
//! `(state of a, sorted set of states of b)`, state 0 the dead pair
//! `(dead, {})`, state 1 the start; classes are the common refinement of
//! the two class maps.  Where no accepting state of `a` moves on a class
//! that `b`'s start moves on (`junction`), every such set is empty or `b`'s
//! start alone, and the table is `a`'s and `b`'s side by side; a prefix made
//! that way is not minimized (the next step's or the last `normalize` is
//! what minimizes it).  `PIECES` caches minimal piece tables, and prefix tables, by
//! the pieces' parsed form (their `Debug` text, which spells every class and
//! flag), at most `PIECE_CACHE_BYTES` of tables per process (cleared when a
//! table would not fit; a table larger than a quarter of it is not kept).
//! Each entry keeps the `max_bytes` it was built within, and a request
//! within a smaller `max_bytes` builds again (its build may exceed it on the
//! way to a table that fits), so what a build returns, and whether it
//! fails, does not depend on what the process built before: a build within
//! `max_bytes` succeeds within any larger value with the same table, so an
//! entry serves exactly the requests its build would.  A rebuild within a
//! smaller `max_bytes` replaces the entry (it then serves more requests).

use crate::error::{table_bytes, Failure, Limits};
use crate::minimize::{check_limits, normalize};
use crate::regex_build::full_match_table;
use crate::repeat::counted_repetition;
use crate::table::{Table, DEAD};
use crate::variants::relaxed;
use crate::word_hash::WordHash;
use regex_syntax::hir::{Hir, HirKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A repetition whose lower or upper bound reaches this is its own piece.
pub const COUNTED_BOUND: u32 = 16;

/// Most bytes of tables (`error::table_bytes`) the cache holds per process.
const PIECE_CACHE_BYTES: u64 = 32 << 20;

/// The cached tables by key, each with the `max_bytes` it was built within,
/// and their total size in bytes.
static PIECES: Mutex<Option<(HashMap<String, (usize, Arc<Table>)>, u64)>> = Mutex::new(None);

/// The minimal table of `hir` built piece by piece, or `None` when `hir` is
/// neither a concatenation with a counted repetition and other items nor a
/// counted repetition alone, or when any step fails (the caller then builds
/// it whole).
pub fn concatenation_table(hir: &Hir, limits: &Limits) -> Option<Table> {
    let pieces = split(hir)?;
    let keys: Vec<String> = pieces.iter().map(|piece| format!("{piece:?}")).collect();
    let last = pieces.len() - 1;
    if last == 0 {
        let piece = cached(&keys[0], limits, || build_piece(&pieces[0], limits))?;
        check_limits(&piece, limits).ok()?;
        return Some(Table::clone(&piece));
    }
    let mut prefix_key = keys[0].clone();
    let mut result = cached(&prefix_key, limits, || build_piece(&pieces[0], limits))?;
    for index in 1..last {
        prefix_key.push('\0');
        prefix_key.push_str(&keys[index]);
        let piece = cached(&keys[index], limits, || build_piece(&pieces[index], limits))?;
        result = cached(&prefix_key, limits, || next_prefix(&result, &piece, &relaxed(limits)))?;
    }
    let piece = cached(&keys[last], limits, || build_piece(&pieces[last], limits))?;
    normalize(&concatenate(&result, &piece, &relaxed(limits)).ok()?, limits).ok()
}

/// The prefix `a` followed by the piece `b`: a junction's table as it is
/// (it only puts the two side by side, so the last step's `normalize`
/// minimizes it with the rest), else the subset construction's, minimized.
fn next_prefix(a: &Table, b: &Table, limits: &Limits) -> Option<Table> {
    if a.start == DEAD || b.start == DEAD {
        return Some(Table::empty_language());
    }
    let (class_map, class_pairs) = crate::table::refine_classes(&a.class_map, &b.class_map);
    junction(a, b, &class_map, &class_pairs, limits)
        .or_else(|| normalize(&subsets(a, b, class_map, &class_pairs, limits).ok()?, limits).ok())
}

/// The pieces of a concatenation holding a counted repetition beside other
/// items: each counted repetition alone, each run of other items as one
/// concatenation; a counted repetition alone is its one piece.  `None`
/// when there is nothing to split, or when the
/// pattern has a look-around assertion (`^`, `$`, `\b`: its meaning depends
/// on the bytes beside it, which a piece built alone does not see).
fn split(hir: &Hir) -> Option<Vec<Hir>> {
    if !hir.properties().look_set().is_empty() {
        return None;
    }
    let items = match hir.kind() {
        HirKind::Concat(items) => items,
        _ if counted(hir) => return Some(vec![hir.clone()]),
        _ => return None,
    };
    if !items.iter().any(counted) {
        return None;
    }
    let mut pieces: Vec<Hir> = Vec::new();
    let mut run: Vec<Hir> = Vec::new();
    for item in items {
        if counted(item) {
            if !run.is_empty() {
                pieces.push(Hir::concat(std::mem::take(&mut run)));
            }
            pieces.push(item.clone());
        } else {
            run.push(item.clone());
        }
    }
    if !run.is_empty() {
        pieces.push(Hir::concat(run));
    }
    (pieces.len() > 1).then_some(pieces)
}

/// Whether `item` is a counted repetition: a bound of at least `COUNTED_BOUND`.
fn counted(item: &Hir) -> bool {
    match item.kind() {
        HirKind::Repetition(repetition) => {
            repetition.min >= COUNTED_BOUND || repetition.max.is_some_and(|max| max >= COUNTED_BOUND)
        }
        _ => false,
    }
}

/// A piece's minimal table (only `max_bytes` bounds it): a counted
/// repetition of a prefix-free item by the counter product
/// (`repeat::counted_repetition`, the item's table cached like a piece's),
/// anything else through regex-automata.
fn build_piece(piece: &Hir, limits: &Limits) -> Option<Table> {
    let relaxed = relaxed(limits);
    if let HirKind::Repetition(repetition) = piece.kind() {
        if counted(piece) {
            let item_key = format!("{:?}", repetition.sub);
            let item = cached(&item_key, limits, || build_piece(&repetition.sub, limits))?;
            if let Some(table) = counted_repetition(&item, repetition.min, repetition.max, &relaxed) {
                return normalize(&table.ok()?, &relaxed).ok();
            }
        }
    }
    normalize(&full_match_table(piece, &relaxed).ok()?, &relaxed).ok()
}

/// The table cached under `key` (a piece's, or a prefix's: its pieces' keys
/// joined by NUL) when it was built within at most `limits.max_bytes`, else
/// `build`'s, cached when built (see the module docstring).
fn cached(key: &str, limits: &Limits, build: impl FnOnce() -> Option<Table>) -> Option<Arc<Table>> {
    let hit = PIECES.lock().ok()?.as_ref().and_then(|(cache, _)| match cache.get(key) {
        Some((built_within, table)) if *built_within <= limits.max_bytes => Some(Arc::clone(table)),
        _ => None,
    });
    if hit.is_some() {
        return hit;
    }
    let table = Arc::new(build()?);
    let bytes = table_bytes(table.n_states(), table.n_classes);
    if bytes <= PIECE_CACHE_BYTES / 4 {
        let mut guard = PIECES.lock().ok()?;
        let (cache, total) = guard.get_or_insert_with(|| (HashMap::new(), 0));
        if *total + bytes > PIECE_CACHE_BYTES {
            cache.clear();
            *total = 0;
        }
        if cache.get(key).map_or(true, |(built_within, _)| limits.max_bytes < *built_within)
            && cache.insert(key.to_string(), (limits.max_bytes, Arc::clone(&table))).is_none()
        {
            *total += bytes;
        }
    }
    Some(table)
}

/// Empties `PIECES` (`grammask.clear_caches` calls it through `terminals`).
pub fn clear_cache() {
    if let Ok(mut guard) = PIECES.lock() {
        *guard = None;
    }
}

/// The table of the strings `xy` with `x` accepted by `a` and `y` by `b`
/// (subset construction, see the module docstring, unless `junction`
/// applies); only `max_bytes` bounds it.
pub fn concatenate(a: &Table, b: &Table, limits: &Limits) -> Result<Table, Failure> {
    if a.start == DEAD || b.start == DEAD {
        return Ok(Table::empty_language());
    }
    let (class_map, class_pairs) = crate::table::refine_classes(&a.class_map, &b.class_map);
    match junction(a, b, &class_map, &class_pairs, limits) {
        Some(table) => Ok(table),
        None => subsets(a, b, class_map, &class_pairs, limits),
    }
}

/// `concatenate` by the subset construction.
fn subsets(
    a: &Table,
    b: &Table,
    class_map: [u8; 256],
    class_pairs: &[(usize, usize)],
    limits: &Limits,
) -> Result<Table, Failure> {
    let n_classes = class_pairs.len();
    // A state's key: its state of `a`, then its sorted set of states of `b`.
    let key_of = |state_a: u32, set: &mut Vec<u32>| {
        if a.accepting[state_a as usize] && !set.contains(&b.start) {
            set.push(b.start);
        }
        set.sort_unstable();
        set.insert(0, state_a);
    };
    let mut start = Vec::new();
    key_of(a.start, &mut start);
    let mut ids: HashMap<Box<[u32]>, u32, WordHash> = HashMap::default();
    let mut keys: Vec<Box<[u32]>> = vec![Box::new([DEAD]), start.clone().into_boxed_slice()];
    ids.insert(start.into_boxed_slice(), 1);
    let mut transitions: Vec<u32> = vec![DEAD; n_classes];
    let mut accepting = vec![false];
    let mut current: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    let mut state_id = 1;
    while state_id < keys.len() {
        current.clear();
        current.extend_from_slice(&keys[state_id]);
        state_id += 1;
        accepting.push(current[1..].iter().any(|&state_b| b.accepting[state_b as usize]));
        for &(class_a, class_b) in class_pairs {
            next.clear();
            for &state_b in &current[1..] {
                let next_b = b.next_by_class(state_b, class_b);
                if next_b != DEAD && !next.contains(&next_b) {
                    next.push(next_b);
                }
            }
            let next_a = a.next_by_class(current[0], class_a);
            if next_a == DEAD && next.is_empty() {
                transitions.push(DEAD);
                continue;
            }
            key_of(next_a, &mut next);
            let next_id = match ids.get(&next[..]) {
                Some(&next_id) => next_id,
                None => {
                    let next_id = keys.len() as u32;
                    limits.check_table_bytes(keys.len() + 1, n_classes)?;
                    ids.insert(next.clone().into_boxed_slice(), next_id);
                    keys.push(next.clone().into_boxed_slice());
                    next_id
                }
            };
            transitions.push(next_id);
        }
    }
    Ok(Table { class_map, n_classes, transitions, accepting, start: 1 })
}

/// The concatenation without subsets, when no accepting state of `a` has a
/// class on which both `a` and `b`'s start move (`None` otherwise): then
/// every state of the subset construction is a state of `a`, holding `b`'s
/// start exactly when it accepts, or a state of `b` alone, so the table is
/// `a`'s states (state ids kept) followed by `b`'s live states, with `b`'s
/// start's moves added to the accepting states of `a` (a prefix-free `a`
/// such as a quoted key, or `a` and `b` starting on disjoint bytes such as
/// a member separator and a string).  Same language as the subset
/// construction's table, at most `|a| + |b| - 1` states and no set hashing.
fn junction(
    a: &Table,
    b: &Table,
    class_map: &[u8; 256],
    class_pairs: &[(usize, usize)],
    limits: &Limits,
) -> Option<Table> {
    let n_classes = class_pairs.len();
    for state in 1..a.n_states() as u32 {
        if a.accepting[state as usize]
            && class_pairs.iter().any(|&(class_a, class_b)| {
                a.next_by_class(state, class_a) != DEAD && b.next_by_class(b.start, class_b) != DEAD
            })
        {
            return None;
        }
    }
    let n_states = a.n_states() + b.n_states() - 1;
    if limits.check_table_bytes(n_states, n_classes).is_err() {
        return None;   // the subset construction decides (its table may lack b's start)
    }
    let offset = a.n_states() as u32 - 1;
    let in_b = |state: u32| if state == DEAD { DEAD } else { state + offset };
    let mut transitions: Vec<u32> = Vec::with_capacity(n_states * n_classes);
    let mut accepting: Vec<bool> = Vec::with_capacity(n_states);
    transitions.resize(n_classes, DEAD);
    accepting.push(false);
    for state in 1..a.n_states() as u32 {
        let ends = a.accepting[state as usize];
        accepting.push(ends && b.accepting[b.start as usize]);
        for &(class_a, class_b) in class_pairs {
            let next = a.next_by_class(state, class_a);
            transitions.push(if next != DEAD {
                next
            } else if ends {
                in_b(b.next_by_class(b.start, class_b))
            } else {
                DEAD
            });
        }
    }
    for state in 1..b.n_states() as u32 {
        accepting.push(b.accepting[state as usize]);
        for &(_, class_b) in class_pairs {
            transitions.push(in_b(b.next_by_class(state, class_b)));
        }
    }
    Some(Table { class_map: *class_map, n_classes, transitions, accepting, start: a.start })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regex_build::parse;

    fn limits() -> Limits {
        Limits { max_states: 100_000, max_bytes: 1 << 26 }
    }

    fn whole(pattern: &str) -> Table {
        normalize(&full_match_table(&parse(pattern, false).unwrap(), &limits()).unwrap(), &limits()).unwrap()
    }

    #[test]
    fn junctions_give_the_subset_constructions_table() {
        let fragments = [
            "\"[a-z]{0,20}\"", "[ \t]{0,30}:[ \t]{0,30}", "a{0,16}", "b{16}", "(?:ab|b){2,18}", "x*y",
            "[0-9]+", "-?[0-9]+(?:\\.[0-9]+)?", "é{3}", "\"(?:[^\"\\\\]|\\\\.)*\"", "a?", "(?:a|bb)*",
        ];
        let mut joined = 0;
        for first in fragments {
            for second in fragments {
                let (a, b) = (whole(first), whole(second));
                let (class_map, pairs) = crate::table::refine_classes(&a.class_map, &b.class_map);
                let expected = normalize(&subsets(&a, &b, class_map, &pairs, &limits()).unwrap(), &limits()).unwrap();
                if let Some(table) = junction(&a, &b, &class_map, &pairs, &limits()) {
                    assert_eq!(normalize(&table, &limits()).unwrap(), expected, "{first} then {second}");
                    joined += 1;
                }
                assert_eq!(expected, whole(&format!("(?:{first})(?:{second})")), "{first} then {second}");
            }
        }
        assert!(joined >= 60, "the junction applied to {joined} pairs only");
    }

    #[test]
    fn pieces_give_the_whole_patterns_table() {
        for pattern in [
            r"[ \t\n\r]{0,256}:[ \t\n\r]{0,256}",
            r#"(?:[ \t\n\r]{0,256}:[ \t\n\r]{0,256})(?:"[0-9]{4}-[0-9]{2}-[0-9]{2}")"#,
            r#"(?:[ \t\n\r]{0,20}:[ \t\n\r]{0,20})(?:"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}){0,20}")"#,
            r"a{0,16}a{16,}b?",
            r"(?:ab|a){16}(?:b|ba){0,17}a*",
            r"x{16}|y",
            r"é{16,20}[^a]{3}",
            r"a{0,20}(?-u:\b)b|a{0,20}(?-u:\b)",
            r"a{0,20}$b?",
            r"(?-u:\B)a{0,20}b",
        ] {
            let hir = parse(pattern, false).unwrap();
            let built = concatenation_table(&hir, &limits());
            let expected = whole(pattern);
            match built {
                Some(table) => assert_eq!(table, expected, "{pattern}"),
                None => assert!(split(&hir).is_none(), "{pattern}: split but not built"),
            }
        }
    }

    #[test]
    fn combinations_of_fragments_give_the_whole_patterns_tables() {
        let mut checked = 0;
        let fragments = ["a{0,16}", "b{16}", "(?:ab|b){2,18}", "b", "a?", "(?:a|bb)*", "x{17,}", "[^b]", "é"];
        for first in fragments {
            for second in fragments {
                for third in ["", ":", "[^b]{2}"] {
                    let pattern = format!("{first}{third}{second}");
                    let hir = parse(&pattern, false).unwrap();
                    let Ok(expected) = full_match_table(&hir, &limits()).and_then(|t| normalize(&t, &limits())) else {
                        continue;
                    };
                    checked += 1;
                    match concatenation_table(&hir, &limits()) {
                        Some(table) => assert_eq!(table, expected, "{pattern}"),
                        None => assert!(split(&hir).is_none(), "{pattern}: split but not built"),
                    }
                }
            }
        }
        assert!(checked > 230, "{checked}");
    }

    #[test]
    fn concatenation_accepts_exactly_the_products() {
        let a = whole("a|ab");
        let b = whole("b*c?");
        let table = concatenate(&a, &b, &limits()).unwrap();
        for (text, expected) in [("a", true), ("ab", true), ("abb", true), ("abc", true), ("ac", true),
                                 ("", false), ("b", false), ("aca", false), ("abcb", false)] {
            assert_eq!(table.fullmatch(text.as_bytes()), expected, "{text}");
        }
        let empty = Table::empty_language();
        assert_eq!(concatenate(&a, &empty, &limits()).unwrap(), Table::empty_language());
    }

    #[test]
    fn a_piece_built_within_larger_limits_serves_larger_requests_only() {
        // Building `\S+` (a piece of both patterns) takes more than 6,000 bytes;
        // its minimal table takes less.
        let tight = Limits { max_states: 100_000, max_bytes: 6_000 };
        let first = parse(r"a{16}\S+", false).unwrap();
        let second = parse(r"b{16}\S+", false).unwrap();
        clear_cache();
        assert!(concatenation_table(&first, &tight).is_none());
        assert!(concatenation_table(&second, &limits()).is_some());
        assert!(concatenation_table(&first, &tight).is_none());
        assert_eq!(concatenation_table(&first, &limits()).unwrap(), whole(r"a{16}\S+"));
    }

    #[test]
    fn a_piece_past_the_byte_limit_falls_back() {
        let tight = Limits { max_states: 100, max_bytes: 2_000 };
        assert!(concatenation_table(&parse("a{0,300}b", false).unwrap(), &tight).is_none());
    }
}
