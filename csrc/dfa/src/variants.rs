//! The terminal kinds of grammask's grammar front ends, each built as a
//! `Table` and normalized (trimmed, minimized, canonically numbered):
//! - `Kind::Regex`: strings fully matching a pattern (`#"..."` in KBNF);
//! - `Kind::EarlyEnd` (`#e"..."`): like Regex, but the match ends at its first
//!   accepting state (no transitions leave accepting states);
//! - `Kind::Complement` (`#ex"..."`): valid UTF-8 strings containing no match
//!   of the pattern anywhere (the empty match counts, so a pattern matching ""
//!   gives the empty language);
//! - `Kind::Intersection`: strings fully matching every one of several
//!   patterns, given as one text with the patterns separated by
//!   `INTERSECTION_SEPARATOR` (NUL, which no pattern may contain raw): the
//!   product of their minimal tables (`table::intersect`), minimized;
//! - `Kind::Difference`: strings in the intersection of the first segment
//!   and in none of the later ones, the segments separated by
//!   `DIFFERENCE_SEPARATOR` (SOH, U+0001, which no pattern may contain raw):
//!   `A\0B\x01C\x01D` is (A and B) minus C minus D: one product with every
//!   removed table (`table::subtract_all`) while it fits `ONE_PRODUCT_BYTES`,
//!   else each removal the product with a complement (`table::subtract`)
//!   minimized before the next (the empty table at once when a removed
//!   pattern is written as a kept one);
//! - `Kind::KeyExclusion` (`#!`): JSON keys other than a set of names, built
//!   from the names' trie (`name_trie`);
//! - `literals`: a set of literal strings (a byte trie, or for
//!   case-insensitive sets an escaped alternation through regex-automata);
//! - `substrings` (`#substrs"..."`): every substring of a text that starts
//!   and ends on a character boundary (suffix automaton, Blumer et al. 1985,
//!   intersected with a UTF-8 validator).
//! `utf8_validator` is the 9-state automaton of well-formed UTF-8 (Unicode
//! Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).

use crate::concat::concatenation_table;
use crate::error::{Failure, Limits};
use crate::minimize::{check_limits, normalize};
use crate::name_trie::build_key_exclusion;
use crate::regex_build::{full_match_table, no_match_inside_table, parse};
use crate::table::{intersect, subtract, subtract_all, Table, DEAD};
use regex_syntax::hir::Hir;

/// What a regex terminal means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Regex,
    EarlyEnd,
    Complement,
    Intersection,
    Difference,
    KeyExclusion,
}

/// Separates the patterns of an `Intersection` terminal in its pattern text.
pub const INTERSECTION_SEPARATOR: char = '\0';

/// Separates the kept segment of a `Difference` terminal from the removed ones.
pub const DIFFERENCE_SEPARATOR: char = '\u{1}';

impl Kind {
    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "regex" => Some(Kind::Regex),
            "early_end" => Some(Kind::EarlyEnd),
            "complement" => Some(Kind::Complement),
            "intersection" => Some(Kind::Intersection),
            "difference" => Some(Kind::Difference),
            "key_exclusion" => Some(Kind::KeyExclusion),
            _ => None,
        }
    }
}

/// The minimal table of a regex terminal of the given kind.
pub fn build_regex(pattern: &str, kind: Kind, case_insensitive: bool, limits: &Limits) -> Result<Table, Failure> {
    match kind {
        Kind::Intersection => return build_intersection(pattern, case_insensitive, limits),
        Kind::Difference => return build_difference(pattern, case_insensitive, limits),
        Kind::KeyExclusion if case_insensitive => {
            return Err(Failure::Unsupported { reason: "a key-exclusion terminal is case-sensitive".to_string() })
        }
        Kind::KeyExclusion => return build_key_exclusion(pattern, limits),
        _ => {}
    }
    let hir = parse(pattern, case_insensitive)?;
    match kind {
        Kind::Regex => minimal_full_match(&hir, limits),
        Kind::EarlyEnd => {
            let minimal = minimal_full_match(&hir, limits)?;
            normalize(&minimal.early_end(), limits)
        }
        Kind::Complement => {
            let bytes_without_match = normalize(&no_match_inside_table(&hir, limits)?, &relaxed(limits))?;
            normalize(&intersect(&bytes_without_match, &utf8_validator(), limits)?, limits)
        }
        Kind::Intersection | Kind::Difference | Kind::KeyExclusion => unreachable!("handled above"),
    }
}

/// The minimal table of the strings fully matching `hir`: from its pieces
/// when it is a concatenation with a counted repetition (`concat`, the same
/// table), else through one regex-automata DFA.
fn minimal_full_match(hir: &Hir, limits: &Limits) -> Result<Table, Failure> {
    match concatenation_table(hir, limits) {
        Some(table) => Ok(table),
        None => normalize(&full_match_table(hir, limits)?, limits),
    }
}

/// Strings fully matching every pattern of `patterns` (split on
/// `INTERSECTION_SEPARATOR`); each part is minimized before the product, so
/// the product's size is bounded by the product of the parts' minimal sizes.
/// Every table on the way is minimal, so the result is only checked
/// against `limits` (normalizing a normalized table gives it back).
fn build_intersection(patterns: &str, case_insensitive: bool, limits: &Limits) -> Result<Table, Failure> {
    let mut result: Option<Table> = None;
    for part in patterns.split(INTERSECTION_SEPARATOR) {
        let table = build_regex(part, Kind::Regex, case_insensitive, &relaxed(limits))?;
        result = Some(match result {
            None => table,
            Some(so_far) => normalize(&intersect(&so_far, &table, limits)?, &relaxed(limits))?,
        });
    }
    checked(result.expect("split yields at least one part"), limits)
}

/// `table` (already normalized) when it fits `limits`.
fn checked(table: Table, limits: &Limits) -> Result<Table, Failure> {
    check_limits(&table, limits)?;
    Ok(table)
}

/// Strings of the first `DIFFERENCE_SEPARATOR`-separated segment (an
/// intersection, see `build_intersection`) matching none of the later
/// segments (plain patterns): several removed patterns in one product
/// (`table::subtract_all`, within `ONE_PRODUCT_BYTES`), else one at a
/// time, each removal multiplying the size by at most the removed
/// pattern's minimal size and the result minimized after each.
/// A removed pattern written exactly as one of the intersected ones removes
/// every string, so the result is empty without building the intersection
/// (`X and Y minus X`, which a JSON Schema `not` inside an `anyOf` branch
/// writes; the intersection alone may exceed the byte limit).
fn build_difference(segments: &str, case_insensitive: bool, limits: &Limits) -> Result<Table, Failure> {
    let mut parts = segments.split(DIFFERENCE_SEPARATOR);
    let kept = parts.next().expect("split yields at least one part");
    let removes_a_kept_part = segments
        .split(DIFFERENCE_SEPARATOR)
        .skip(1)
        .any(|removed| kept.split(INTERSECTION_SEPARATOR).any(|part| part == removed));
    if removes_a_kept_part {
        return Ok(Table::empty_language());
    }
    let kept = build_intersection(kept, case_insensitive, &relaxed(limits))?;
    let removed = parts
        .map(|removed| build_regex(removed, Kind::Regex, case_insensitive, &relaxed(limits)))
        .collect::<Result<Vec<Table>, Failure>>()?;
    remove_all(kept, &removed, limits, ONE_PRODUCT_BYTES)
}

/// The minimal table of the strings of `kept` that no table of `removed`
/// accepts: one product while it fits `one_product_bytes` (and
/// `max_bytes`), else one removal at a time.
fn remove_all(kept: Table, removed: &[Table], limits: &Limits, one_product_bytes: usize) -> Result<Table, Failure> {
    if removed.len() > 1 {
        let budget = Limits { max_states: usize::MAX, max_bytes: limits.max_bytes.min(one_product_bytes) };
        if let Ok(product) = subtract_all(&kept, removed, &budget) {
            return normalize(&product, limits);
        }
    }
    let mut result = kept;
    for table in removed {
        result = normalize(&subtract(&result, table, limits)?, &relaxed(limits))?;
    }
    checked(result, limits)
}

/// Most bytes the one product of a difference with several removed patterns
/// may take (`table::subtract_all`); past it, the patterns are removed one
/// at a time with a minimization after each, which keeps every
/// intermediate table minimal (the result is the same table either way).
const ONE_PRODUCT_BYTES: usize = 8 << 20;

/// Intermediate tables may exceed the final state limit; only bytes bound them.
pub(crate) fn relaxed(limits: &Limits) -> Limits {
    Limits { max_states: usize::MAX, max_bytes: limits.max_bytes }
}

/// The minimal table accepting exactly the given strings.
pub fn build_literals(strings: &[String], case_insensitive: bool, limits: &Limits) -> Result<Table, Failure> {
    if strings.is_empty() {
        return Ok(Table::empty_language());
    }
    if case_insensitive {
        let alternatives: Vec<String> = strings.iter().map(|s| regex_syntax::escape(s)).collect();
        return build_regex(&alternatives.join("|"), Kind::Regex, true, limits);
    }
    normalize(&literal_trie(strings, limits)?, limits)
}

/// Byte trie: state 1 is the root, every other state a proper prefix's end.
/// Classes: one per byte occurring in the strings, plus one for all others.
fn literal_trie(strings: &[String], limits: &Limits) -> Result<Table, Failure> {
    let (class_map, n_classes) = classes_of_bytes(strings.iter().flat_map(|s| s.bytes()));
    let n_bytes: usize = strings.iter().map(|s| s.len()).sum();
    limits.check_table_bytes(n_bytes + 2, n_classes)?;
    let mut transitions = vec![DEAD; 2 * n_classes];
    let mut accepting = vec![false, false];
    for string in strings {
        let mut state = 1usize;
        for byte in string.bytes() {
            let slot = state * n_classes + class_map[byte as usize] as usize;
            if transitions[slot] == DEAD {
                transitions[slot] = accepting.len() as u32;
                accepting.push(false);
                transitions.extend(std::iter::repeat(DEAD).take(n_classes));
            }
            state = transitions[slot] as usize;
        }
        accepting[state] = true;
    }
    Ok(Table { class_map, n_classes, transitions, accepting, start: 1 })
}

/// Class map giving each byte of `bytes` its own class and every other byte
/// one shared class (class 0 when byte 0 is absent).
fn classes_of_bytes(bytes: impl Iterator<Item = u8>) -> ([u8; 256], usize) {
    let mut present = [false; 256];
    for byte in bytes {
        present[byte as usize] = true;
    }
    let mut class_map = [0u8; 256];
    let mut n_classes = 0usize;
    let mut other_class: Option<u8> = None;
    for byte in 0..256 {
        class_map[byte] = if present[byte] {
            n_classes += 1;
            (n_classes - 1) as u8
        } else {
            *other_class.get_or_insert_with(|| {
                n_classes += 1;
                (n_classes - 1) as u8
            })
        };
    }
    (class_map, n_classes)
}

/// The minimal table of all substrings of `text` (including "") that start
/// and end on character boundaries.
pub fn build_substrings(text: &str, limits: &Limits) -> Result<Table, Failure> {
    let suffixes = suffix_automaton(text.as_bytes(), limits)?;
    let on_boundaries = intersect(&suffixes, &utf8_validator(), limits)?;
    normalize(&on_boundaries, limits)
}

/// Suffix automaton of `text` (its states recognize exactly the substrings;
/// at most 2n states), as a table whose states are all accepting but dead.
fn suffix_automaton(text: &[u8], limits: &Limits) -> Result<Table, Failure> {
    const NONE: u32 = u32::MAX;
    let (class_map, n_classes) = classes_of_bytes(text.iter().copied());
    limits.check_table_bytes(2 * text.len() + 2, n_classes)?;
    // Automaton state i (root = 0) becomes table state i + 1.
    let mut next: Vec<u32> = vec![NONE; n_classes];
    let mut length: Vec<usize> = vec![0];
    let mut link: Vec<u32> = vec![NONE];
    let mut last = 0u32;
    for &byte in text {
        let class = class_map[byte as usize] as usize;
        let current = length.len() as u32;
        length.push(length[last as usize] + 1);
        link.push(NONE);
        next.extend(std::iter::repeat(NONE).take(n_classes));
        let mut state = last;
        while state != NONE && next[state as usize * n_classes + class] == NONE {
            next[state as usize * n_classes + class] = current;
            state = link[state as usize];
        }
        if state == NONE {
            link[current as usize] = 0;
        } else {
            let target = next[state as usize * n_classes + class];
            if length[state as usize] + 1 == length[target as usize] {
                link[current as usize] = target;
            } else {
                let clone = length.len() as u32;
                length.push(length[state as usize] + 1);
                link.push(link[target as usize]);
                let row = target as usize * n_classes;
                let copied: Vec<u32> = next[row..row + n_classes].to_vec();
                next.extend(copied);
                while state != NONE && next[state as usize * n_classes + class] == target {
                    next[state as usize * n_classes + class] = clone;
                    state = link[state as usize];
                }
                link[target as usize] = clone;
                link[current as usize] = clone;
            }
        }
        last = current;
    }
    let n_states = length.len() + 1;
    let mut transitions = vec![DEAD; n_classes];
    transitions.extend(next.iter().map(|&target| if target == NONE { DEAD } else { target + 1 }));
    let mut accepting = vec![true; n_states];
    accepting[DEAD as usize] = false;
    Ok(Table { class_map, n_classes, transitions, accepting, start: 1 })
}

/// The minimal automaton of well-formed UTF-8 (accepting exactly between
/// characters), with its byte classes merged so products stay narrow.
pub fn utf8_validator() -> Table {
    let generous = Limits { max_states: 64, max_bytes: 1 << 20 };
    normalize(&utf8_validator_by_bytes(), &generous).expect("the UTF-8 automaton has 9 states")
}

/// The UTF-8 automaton over raw bytes (state 1 = between characters, the
/// only accepting state).
fn utf8_validator_by_bytes() -> Table {
    const BOUNDARY: u32 = 1;
    const NEED_1: u32 = 2; // one continuation byte 80..BF left
    const NEED_2: u32 = 3; // two continuation bytes left
    const NEED_3: u32 = 4; // three continuation bytes left
    const AFTER_E0: u32 = 5; // next byte A0..BF (no overlong 3-byte forms)
    const AFTER_ED: u32 = 6; // next byte 80..9F (no surrogates)
    const AFTER_F0: u32 = 7; // next byte 90..BF (no overlong 4-byte forms)
    const AFTER_F4: u32 = 8; // next byte 80..8F (nothing above U+10FFFF)
    let mut accepting = vec![false; 9];
    accepting[BOUNDARY as usize] = true;
    Table::from_byte_function(9, BOUNDARY, accepting, |state, byte| match (state, byte) {
        (BOUNDARY, 0x00..=0x7F) => BOUNDARY,
        (BOUNDARY, 0xC2..=0xDF) => NEED_1,
        (BOUNDARY, 0xE0) => AFTER_E0,
        (BOUNDARY, 0xE1..=0xEC | 0xEE..=0xEF) => NEED_2,
        (BOUNDARY, 0xED) => AFTER_ED,
        (BOUNDARY, 0xF0) => AFTER_F0,
        (BOUNDARY, 0xF1..=0xF3) => NEED_3,
        (BOUNDARY, 0xF4) => AFTER_F4,
        (NEED_1, 0x80..=0xBF) => BOUNDARY,
        (NEED_2, 0x80..=0xBF) => NEED_1,
        (NEED_3, 0x80..=0xBF) => NEED_2,
        (AFTER_E0, 0xA0..=0xBF) => NEED_1,
        (AFTER_ED, 0x80..=0x9F) => NEED_1,
        (AFTER_F0, 0x90..=0xBF) => NEED_2,
        (AFTER_F4, 0x80..=0x8F) => NEED_2,
        _ => DEAD,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Limit;

    fn limits() -> Limits {
        Limits { max_states: 10_000, max_bytes: 1 << 23 }
    }

    /// Small deterministic byte strings: every string over `alphabet` up to `max_len`.
    fn all_strings(alphabet: &[&[u8]], max_len: usize) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut frontier = vec![Vec::new()];
        for _ in 0..max_len {
            let mut grown = Vec::new();
            for prefix in &frontier {
                for piece in alphabet {
                    let mut s: Vec<u8> = prefix.clone();
                    s.extend_from_slice(piece);
                    grown.push(s);
                }
            }
            out.extend(grown.iter().cloned());
            frontier = grown;
        }
        out
    }

    #[test]
    fn utf8_validator_agrees_with_std() {
        let table = utf8_validator();
        assert_eq!((table.n_states(), table.n_classes), (9, 12));
        let pieces: Vec<&[u8]> = vec![b"a", b"\xc3", b"\xa9", b"\xe0", b"\xed", b"\x9f", b"\xbf", b"\xf4", b"\x8f", b"\x90", b"\xff", b"\xc0"];
        for s in all_strings(&pieces, 4) {
            assert_eq!(table.fullmatch(&s), std::str::from_utf8(&s).is_ok(), "{s:?}");
        }
    }

    #[test]
    fn early_end_cuts_after_first_match() {
        let table = build_regex("[0-9]+", Kind::EarlyEnd, false, &limits()).unwrap();
        assert!(table.fullmatch(b"7"));
        assert!(!table.fullmatch(b"77"));
        let table = build_regex("a|ab", Kind::EarlyEnd, false, &limits()).unwrap();
        assert!(table.fullmatch(b"a"));
        assert!(!table.fullmatch(b"ab"));
    }

    #[test]
    fn complement_rejects_strings_containing_a_match() {
        let table = build_regex("ab", Kind::Complement, false, &limits()).unwrap();
        let pieces: Vec<&[u8]> = vec![b"a", b"b", b"\xc3\xa9", b"\xff"];
        for s in all_strings(&pieces, 5) {
            let expected = std::str::from_utf8(&s).map(|t| !t.contains("ab")).unwrap_or(false);
            assert_eq!(table.fullmatch(&s), expected, "{s:?}");
        }
    }

    #[test]
    fn complement_of_a_nullable_pattern_is_empty() {
        let table = build_regex("a*", Kind::Complement, false, &limits()).unwrap();
        assert_eq!(table, Table::empty_language());
    }

    #[test]
    fn intersection_matches_every_part() {
        let table = build_regex("[ab]{2,4}\0.*a.*\0(?:aa|b)*", Kind::Intersection, false, &limits()).unwrap();
        let pieces: Vec<&[u8]> = vec![b"a", b"b", b"c"];
        for s in all_strings(&pieces, 6) {
            let t = std::str::from_utf8(&s).unwrap();
            let pairs_ok = t.replace("aa", "").chars().all(|c| c == 'b');
            let expected = (2..=4).contains(&t.len()) && !t.contains('c') && t.contains('a') && pairs_ok;
            assert_eq!(table.fullmatch(&s), expected, "{t:?}");
        }
        let one = build_regex("x+", Kind::Intersection, false, &limits()).unwrap();
        assert_eq!(one, build_regex("x+", Kind::Regex, false, &limits()).unwrap());
        let empty = build_regex("a\0b", Kind::Intersection, false, &limits()).unwrap();
        assert_eq!(empty, Table::empty_language());
    }

    #[test]
    fn difference_removes_every_later_segment() {
        let table = build_regex("[ab]{1,4}\0.*a.*\u{1}b*ab*\u{1}aaa.*", Kind::Difference, false, &limits()).unwrap();
        let pieces: Vec<&[u8]> = vec![b"a", b"b", b"c"];
        for s in all_strings(&pieces, 5) {
            let t = std::str::from_utf8(&s).unwrap();
            let kept = (1..=4).contains(&t.len()) && !t.contains('c') && t.contains('a');
            let expected = kept && t.matches('a').count() != 1 && !t.starts_with("aaa");
            assert_eq!(table.fullmatch(&s), expected, "{t:?}");
        }
        let nothing_removed = build_regex("x+", Kind::Difference, false, &limits()).unwrap();
        assert_eq!(nothing_removed, build_regex("x+", Kind::Regex, false, &limits()).unwrap());
        let all_removed = build_regex("x+\u{1}x*", Kind::Difference, false, &limits()).unwrap();
        assert_eq!(all_removed, Table::empty_language());
    }

    #[test]
    fn one_product_and_one_removal_at_a_time_give_the_same_table() {
        let limits = limits();
        let kept = build_regex(r#""(?:[a-z]|\\u00[0-9a-f]{2})*""#, Kind::Regex, false, &limits).unwrap();
        let removed: Vec<Table> = [r#""(?:n|\\u006e)(?:a|\\u0061)me""#, r#""id""#, r#""x[0-9]*""#, r#""[a-c]{2,5}""#, r#""""#]
            .iter()
            .map(|pattern| build_regex(pattern, Kind::Regex, false, &limits).unwrap())
            .collect();
        let at_once = remove_all(kept.clone(), &removed, &limits, ONE_PRODUCT_BYTES).unwrap();
        let one_by_one = remove_all(kept, &removed, &limits, 0).unwrap();
        assert_eq!(at_once, one_by_one);
        for (text, expected) in [("\"name\"", false), ("\"\\u006eame\"", false), ("\"names\"", true), ("\"id\"", false),
                                 ("\"x\"", false), ("\"xa\"", true), ("\"abc\"", false), ("\"abcabc\"", true), ("\"\"", false), ("\"q\"", true)] {
            assert_eq!(at_once.fullmatch(text.as_bytes()), expected, "{text}");
        }
    }

    #[test]
    fn removing_a_kept_part_empties_the_difference_within_any_limit() {
        // The intersection alone (about 80 states) is past these limits.
        let tight = Limits { max_states: 10, max_bytes: 4_096 };
        let text = "[a-z]{0,40}\0.*q.*\u{1}.*z.*\u{1}[a-z]{0,40}";
        assert_eq!(build_regex(text, Kind::Difference, false, &tight).unwrap(), Table::empty_language());
        let failure = build_regex("[a-z]{0,40}\0.*q.*\u{1}.*z.*", Kind::Difference, false, &tight).unwrap_err();
        assert!(matches!(failure, Failure::Limit { .. }), "{failure:?}");
        // Equal text only: a removed pattern equivalent to a part but written
        // otherwise goes through the products (same language, same table).
        let spelled_otherwise = build_regex("x+\u{1}xx*", Kind::Difference, false, &limits()).unwrap();
        assert_eq!(spelled_otherwise, Table::empty_language());
    }

    #[test]
    fn literals_match_exactly_the_set() {
        let words: Vec<String> = ["if", "in", "int", "", "é"].iter().map(|s| s.to_string()).collect();
        let table = build_literals(&words, false, &limits()).unwrap();
        let pieces: Vec<&[u8]> = vec![b"i", b"f", b"n", b"t", "é".as_bytes()];
        for s in all_strings(&pieces, 4) {
            let expected = words.iter().any(|w| w.as_bytes() == s.as_slice());
            assert_eq!(table.fullmatch(&s), expected, "{s:?}");
        }
    }

    #[test]
    fn case_insensitive_literals() {
        let words = vec!["Select".to_string()];
        let table = build_literals(&words, true, &limits()).unwrap();
        assert!(table.fullmatch(b"SELECT"));
        assert!(table.fullmatch(b"select"));
        assert!(!table.fullmatch(b"selec"));
    }

    #[test]
    fn substrings_start_and_end_on_character_boundaries() {
        let text = "abéab";
        let table = build_substrings(text, &limits()).unwrap();
        let pieces: Vec<&[u8]> = vec![b"a", b"b", b"\xc3", b"\xa9"];
        for s in all_strings(&pieces, 5) {
            let expected = std::str::from_utf8(&s).map(|t| text.contains(t)).unwrap_or(false);
            assert_eq!(table.fullmatch(&s), expected, "{s:?}");
        }
    }

    #[test]
    fn literal_set_equals_its_regex() {
        let words: Vec<String> = ["cat", "car", "cart"].iter().map(|s| s.to_string()).collect();
        let trie = build_literals(&words, false, &limits()).unwrap();
        let regex = build_regex("cat|car|cart", Kind::Regex, false, &limits()).unwrap();
        assert_eq!(trie, regex);
    }

    #[test]
    fn state_limit_on_long_bounded_repetition() {
        let small = Limits { max_states: 100, max_bytes: 1 << 23 };
        let failure = build_regex("[a-z]{0,500}", Kind::Regex, false, &small).unwrap_err();
        assert_eq!(failure, Failure::Limit { limit: Limit::States, given: Some(502), maximum: 100 });
    }
}
