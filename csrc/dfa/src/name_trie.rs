//! Key-exclusion terminals (`Kind::KeyExclusion`, KBNF `#!`): JSON object
//! keys other than a set of names, built straight from the names' trie, so
//! no regex spells the names and nothing is determinized but the small
//! fallback pattern.
//!
//! Pattern text: `prefix ␁ fallback ␁ blocked ␁ name ␁ name ...`, where ␁ is
//! `KEY_SEPARATOR` (U+0001) and zero or more names follow. Language: the
//! bytes of `prefix`, then a walk down the trie of `names` from its root,
//! one raw UTF-8 character at a time:
//! - a character that some name continues the current path with moves down
//!   the trie, except that at the root the characters of `blocked` are dead
//!   (their subtrees belong to other terminals);
//! - `"` ends the input when no name ends at the current node, and is dead
//!   where one does;
//! - any other character: the rest of the input, from that character on,
//!   must fully match the regex `fallback`.
//!
//! Names may not contain `"` or `\` (JSON would escape them, and their raw
//! trie steps would clash with the closing quote and the fallback's escapes).
//!
//! States: the dead state, one per byte of `prefix`, one per byte-trie node,
//! the end state (after the closing quote) and the fallback's minimal DFA.
//! A trie node inside a multi-byte character keeps the fallback state after
//! that character's bytes so far (`position`), so a byte no name continues
//! with moves to where the fallback would be. Byte classes: the fallback's,
//! refined by every byte of the prefix, the names, `blocked` and `"`.
//! Minimal by construction (`equivalent_blocks`: equal rows merged from the
//! leaves up, no partition refinement), then renumbered canonically by
//! `minimize::finish`, so the table is the one `normalize` would give. The
//! bytes limit is checked on the table to be as each trie node is made (the
//! build is one pass over the names' bytes, so an oversized terminal stops
//! early), the state limit on the minimal table.

use crate::error::{Failure, Limits};
use crate::minimize::{finish, RowBlocks};
use crate::table::{Table, DEAD};
use crate::variants::{build_regex, relaxed, Kind};
use std::cell::RefCell;

/// Separates the parts of a key-exclusion pattern text.
pub const KEY_SEPARATOR: char = '\u{1}';

const UNSET: u32 = u32::MAX;
const BLOCKED: u32 = u32::MAX - 1;

/// The minimal table of a key-exclusion pattern text (see the module docs).
pub fn build_key_exclusion(text: &str, limits: &Limits) -> Result<Table, Failure> {
    let (table, end, n_fallback) = unminimized(text, limits)?;
    finish(&table, &equivalent_blocks(&table, end, n_fallback), limits)
}

/// The table before minimization, the end state and the fallback's size.
fn unminimized(text: &str, limits: &Limits) -> Result<(Table, usize, usize), Failure> {
    let mut parts = text.split(KEY_SEPARATOR);
    let (prefix, fallback_pattern, blocked) = match (parts.next(), parts.next(), parts.next()) {
        (Some(prefix), Some(fallback), Some(blocked)) => (prefix, fallback, blocked),
        _ => {
            return Err(Failure::Syntax {
                position: None,
                reason: "a key-exclusion pattern is a prefix, a fallback regex and the blocked characters, \
                         separated by U+0001, then the names"
                    .to_string(),
            })
        }
    };
    let names: Vec<&str> = parts.collect();
    if names.iter().any(|name| name.contains(['"', '\\'])) {
        return Err(Failure::Unsupported { reason: "a key-exclusion name contains '\"' or '\\'".to_string() });
    }
    let fallback = cached_fallback(fallback_pattern, limits)?;
    let (class_map, representatives) = classes(&fallback, prefix, blocked, &names);
    let n_classes = representatives.len();
    let other_states = 2 + prefix.len() + fallback.n_states();
    let trie = Trie::build(&fallback, &class_map, n_classes, blocked, &names, |n_nodes| {
        limits.check_table_bytes(other_states + n_nodes, n_classes)
    })?;
    let table = assemble(&fallback, &trie, prefix, class_map, &representatives);
    Ok((table, 1 + prefix.len() + trie.n_nodes(), fallback.n_states()))
}

/// The coarsest partition of `table`'s states into equivalent ones, by
/// construction: the fallback's states are pairwise inequivalent (it is
/// minimal) and are not viable only when dead; every other state is the
/// prefix chain, the trie or the end state, an acyclic part whose edges
/// lead down or into the fallback. Going from the leaves up, a state is
/// equivalent to an earlier one exactly when both accept alike and their
/// rows (targets as blocks) are equal: by induction every target is
/// already its block's one representative. A state that cannot reach a
/// match has an all-dead row, so it joins the dead state's block.
fn equivalent_blocks(table: &Table, end: usize, n_fallback: usize) -> Vec<u32> {
    let mut block_of = vec![u32::MAX; table.n_states()];
    block_of[DEAD as usize] = 0;
    for state in 1..n_fallback {
        block_of[end + state] = state as u32;
    }
    let mut blocks = RowBlocks::new(table.n_classes);
    // The dead state and the fallback's states: blocks 0 .. n_fallback - 1, in order.
    for (block, state) in std::iter::once(DEAD as usize).chain((1..n_fallback).map(|state| end + state)).enumerate() {
        let placed = blocks.place(table, state, &block_of, false);
        debug_assert_eq!(placed as usize, block);
    }
    for state in std::iter::once(end).chain((1..end).rev()) {
        block_of[state] = blocks.place(table, state, &block_of, true);
    }
    block_of
}

thread_local! {
    /// The last fallback built on this thread: the terminals cut from one
    /// trie share their fallback pattern.
    static LAST_FALLBACK: RefCell<Option<(String, Limits, Table)>> = const { RefCell::new(None) };
}

/// The fallback's minimal table, built once for consecutive terminals of one trie.
fn cached_fallback(pattern: &str, limits: &Limits) -> Result<Table, Failure> {
    let cached = LAST_FALLBACK.with(|last| match &*last.borrow() {
        Some((text, built_with, table)) if text == pattern && built_with == limits => Some(table.clone()),
        _ => None,
    });
    if let Some(table) = cached {
        return Ok(table);
    }
    let table = build_regex(pattern, Kind::Regex, false, &relaxed(limits))?;
    LAST_FALLBACK.with(|last| *last.borrow_mut() = Some((pattern.to_string(), *limits, table.clone())));
    Ok(table)
}

/// Byte classes: bytes share a class when the fallback does not tell them
/// apart and neither occurs in the prefix, the names, `blocked` or is `"`.
/// Returns the class map and each class's smallest byte.
fn classes(fallback: &Table, prefix: &str, blocked: &str, names: &[&str]) -> ([u8; 256], Vec<u8>) {
    let mut own_class = [false; 256];
    own_class[b'"' as usize] = true;
    for byte in prefix.bytes().chain(blocked.bytes()).chain(names.iter().flat_map(|name| name.bytes())) {
        own_class[byte as usize] = true;
    }
    let mut class_map = [0u8; 256];
    let mut representatives: Vec<u8> = Vec::new();
    // The class of the bytes of each fallback class that have none of their own.
    let mut shared: [Option<u8>; 256] = [None; 256];
    for byte in 0..256usize {
        let mut new_class = || {
            representatives.push(byte as u8);
            (representatives.len() - 1) as u8
        };
        class_map[byte] = if own_class[byte] {
            new_class()
        } else {
            *shared[fallback.class_map[byte] as usize].get_or_insert_with(new_class)
        };
    }
    (class_map, representatives)
}

/// The byte trie of the names: node 0 is the root; `children[node * k + class]`
/// is a child node, `UNSET` or `BLOCKED`.
struct Trie {
    children: Vec<u32>,
    ends_name: Vec<bool>,
    at_boundary: Vec<bool>,
    position: Vec<u32>,
    n_classes: usize,
}

impl Trie {
    /// `check(n)` fails when a table with `n` trie nodes is too large.
    fn build(
        fallback: &Table,
        class_map: &[u8; 256],
        n_classes: usize,
        blocked: &str,
        names: &[&str],
        check: impl Fn(usize) -> Result<(), Failure>,
    ) -> Result<Trie, Failure> {
        check(1)?;
        let mut trie = Trie {
            children: vec![UNSET; n_classes],
            ends_name: vec![false],
            at_boundary: vec![true],
            position: vec![fallback.start],
            n_classes,
        };
        let mut buffer = [0u8; 4];
        for char in blocked.chars() {
            let bytes = char.encode_utf8(&mut buffer).as_bytes();
            let mut node = 0usize;
            for (index, &byte) in bytes.iter().enumerate() {
                let slot = node * n_classes + class_map[byte as usize] as usize;
                if index + 1 == bytes.len() {
                    trie.children[slot] = BLOCKED;
                } else {
                    node = trie.child(slot, fallback, byte, false, &check)?;
                }
            }
        }
        'names: for name in names {
            let mut node = 0usize;
            for char in name.chars() {
                let bytes = char.encode_utf8(&mut buffer).as_bytes();
                for (index, &byte) in bytes.iter().enumerate() {
                    let slot = node * n_classes + class_map[byte as usize] as usize;
                    if trie.children[slot] == BLOCKED {
                        continue 'names;
                    }
                    node = trie.child(slot, fallback, byte, index + 1 == bytes.len(), &check)?;
                }
            }
            trie.ends_name[node] = true;
        }
        Ok(trie)
    }

    /// The node at `slot` (a parent's row entry for `byte`), made when new.
    fn child(
        &mut self,
        slot: usize,
        fallback: &Table,
        byte: u8,
        at_boundary: bool,
        check: &impl Fn(usize) -> Result<(), Failure>,
    ) -> Result<usize, Failure> {
        if self.children[slot] == UNSET {
            check(self.n_nodes() + 1)?;
            let parent = slot / self.n_classes;
            let position = if at_boundary { fallback.start } else { fallback.next(self.position[parent], byte) };
            self.children[slot] = self.ends_name.len() as u32;
            self.ends_name.push(false);
            self.at_boundary.push(at_boundary);
            self.position.push(position);
            self.children.extend(std::iter::repeat(UNSET).take(self.n_classes));
        }
        Ok(self.children[slot] as usize)
    }

    fn n_nodes(&self) -> usize {
        self.ends_name.len()
    }
}

/// The whole table: dead, the prefix's states, the trie's nodes, the end
/// state, then the fallback's states (its dead state is the table's).
fn assemble(fallback: &Table, trie: &Trie, prefix: &str, class_map: [u8; 256], representatives: &[u8]) -> Table {
    let n_classes = representatives.len();
    let root = 1 + prefix.len() as u32;
    let end = root + trie.n_nodes() as u32;
    let outside = |state: u32| if state == DEAD { DEAD } else { end + state };
    let n_states = end as usize + fallback.n_states();
    let mut transitions = vec![DEAD; n_states * n_classes];
    for (index, byte) in prefix.bytes().enumerate() {
        let state = 1 + index;
        transitions[state * n_classes + class_map[byte as usize] as usize] = state as u32 + 1;
    }
    let quote_class = class_map[b'"' as usize] as usize;
    for node in 0..trie.n_nodes() {
        let row = (root as usize + node) * n_classes;
        for (class, &byte) in representatives.iter().enumerate() {
            let child = trie.children[node * n_classes + class];
            transitions[row + class] = if child == BLOCKED {
                DEAD
            } else if child != UNSET {
                root + child
            } else if trie.at_boundary[node] && class == quote_class {
                if trie.ends_name[node] { DEAD } else { end }
            } else {
                outside(fallback.next(trie.position[node], byte))
            };
        }
    }
    for state in 1..fallback.n_states() as u32 {
        let row = outside(state) as usize * n_classes;
        for (class, &byte) in representatives.iter().enumerate() {
            transitions[row + class] = outside(fallback.next(state, byte));
        }
    }
    let mut accepting = vec![false; n_states];
    accepting[end as usize] = true;
    for state in 1..fallback.n_states() as u32 {
        accepting[outside(state) as usize] = fallback.accepting[state as usize];
    }
    Table { class_map, n_classes, transitions, accepting, start: 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Limit;

    fn limits() -> Limits {
        Limits { max_states: 10_000, max_bytes: 1 << 23 }
    }

    fn text(prefix: &str, fallback: &str, blocked: &str, names: &[&str]) -> String {
        let mut parts = vec![prefix, fallback, blocked];
        parts.extend_from_slice(names);
        parts.join("\u{1}")
    }

    /// The language stated in the module docs, decided character by character.
    fn expected(prefix: &str, fallback: &Table, blocked: &str, names: &[&str], input: &str) -> bool {
        let Some(rest) = input.strip_prefix(prefix) else { return false };
        let mut path = String::new();
        for (offset, char) in rest.char_indices() {
            let continued = format!("{path}{char}");
            if path.is_empty() && blocked.contains(char) {
                return false;
            } else if names.iter().any(|name| name.starts_with(continued.as_str())) {
                path = continued;
            } else if char == '"' {
                return offset + 1 == rest.len() && !names.contains(&path.as_str());
            } else {
                return fallback.fullmatch(rest[offset..].as_bytes());
            }
        }
        false
    }

    fn all_strings(alphabet: &[&str], max_len: usize) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..max_len {
            frontier = frontier.iter().flat_map(|s| alphabet.iter().map(move |piece| format!("{s}{piece}"))).collect();
            out.extend(frontier.iter().cloned());
        }
        out
    }

    #[test]
    fn agrees_with_the_stated_language() {
        let fallback_pattern = "(?:[a-z]|\\\\n|é)[a-z]*\"";
        let fallback = build_regex(fallback_pattern, Kind::Regex, false, &limits()).unwrap();
        let cases: Vec<(&str, &str, Vec<&str>)> = vec![
            ("\"", "", vec!["ab", "abc", "b", "é", "éa", "ü"]),
            ("\"", "", vec!["", "a"]),
            ("\"", "b", vec!["ab", "b"]),
            ("\"x", "", vec![]),
            ("\"", "é", vec!["ab", "éa"]),
        ];
        let pieces = ["a", "b", "c", "é", "ü", "\"", "\\n", "\\", "x"];
        for (prefix, blocked, names) in cases {
            let table = build_key_exclusion(&text(prefix, fallback_pattern, blocked, &names), &limits()).unwrap();
            let text = text(prefix, fallback_pattern, blocked, &names);
            let (whole, _, _) = unminimized(&text, &limits()).unwrap();
            assert_eq!(crate::minimize::normalize(&whole, &limits()).unwrap(), table);
            for input in all_strings(&pieces, 5) {
                let want = expected(prefix, &fallback, blocked, &names, &input);
                assert_eq!(table.fullmatch(input.as_bytes()), want, "{prefix:?} {blocked:?} {names:?} {input:?}");
            }
            assert!(!table.fullmatch(b"\"a\xff\""));
        }
    }

    #[test]
    fn minimal_by_construction_equals_hopcroft() {
        let alphabet = ["a", "b", "é", "ü", "x", "\u{1F600}"];
        let mut seed = 12345u64;
        let mut names: Vec<String> = Vec::new();
        for _ in 0..300 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let length = (seed >> 33) % 6;
            let name: String = (0..length).map(|i| alphabet[((seed >> (20 + 3 * i)) % 6) as usize]).collect();
            names.push(name);
        }
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        for fallback in ["(?:[a-z]|\\\\n|é)[a-z]*\"", "[^\"]*\"", "x"] {
            for blocked in ["", "a", "é\u{1F600}"] {
                let text = text("\"", fallback, blocked, &refs);
                let (whole, _, _) = unminimized(&text, &limits()).unwrap();
                let expected = crate::minimize::normalize(&whole, &limits()).unwrap();
                assert_eq!(build_key_exclusion(&text, &limits()).unwrap(), expected, "{fallback} {blocked}");
            }
        }
    }

    #[test]
    fn names_with_quotes_or_backslashes_are_refused() {
        let failure = build_key_exclusion(&text("\"", "x", "", &["a\"b"]), &limits()).unwrap_err();
        assert!(matches!(failure, Failure::Unsupported { .. }));
        assert!(matches!(build_key_exclusion("\"\u{1}x", &limits()), Err(Failure::Syntax { .. })));
    }

    #[test]
    fn limits_are_checked_before_and_after() {
        let names: Vec<String> = (0..2000).map(|i| format!("n{i}x{}", i * 7919 % 1000)).collect();
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let pattern = text("\"", "[a-z]*\"", "", &refs);
        let few_bytes = Limits { max_states: 10_000, max_bytes: 1 << 12 };
        let failure = build_key_exclusion(&pattern, &few_bytes).unwrap_err();
        assert!(matches!(failure, Failure::Limit { limit: Limit::Bytes, .. }));
        let few_states = Limits { max_states: 50, max_bytes: 1 << 23 };
        let failure = build_key_exclusion(&pattern, &few_states).unwrap_err();
        assert!(matches!(failure, Failure::Limit { limit: Limit::States, .. }));
    }
}
