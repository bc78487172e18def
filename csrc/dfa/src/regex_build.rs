//! Regex patterns (Rust regex syntax) to `Table`s through regex-automata 0.4.
//!
//! Steps: regex-syntax parses the pattern (Unicode and UTF-8 mode on, so
//! syntax errors carry a span and every match is valid UTF-8); a Thompson NFA
//! and then a dense DFA are built with `MatchKind::All` (so `a|ab` matches both
//! "a" and "ab" in full) and size limits; finally `export` walks the DFA from
//! its start state (breadth-first) and copies it into a plain `Table`.
//!
//! The one-byte match delay: a regex-automata DFA enters a match state one
//! byte *after* the match ended (so look-ahead like `$` or `\b` can be
//! resolved). Hence `accepting[s] = is_match_state(next_eoi_state(s))`: the
//! bytes read so far are a whole match iff ending the input here gives a match.
//!
//! Unicode word boundaries (`\b`, `\B` with Unicode on) need a look-ahead a
//! DFA cannot do on non-ASCII bytes; they are rejected with a hint to write
//! `(?-u:\b)`.

use crate::error::{Failure, Limit, Limits};
use crate::table::{Table, DEAD};
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::Hir;
use std::collections::{HashMap, VecDeque};

/// Which language the exported table recognizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// Strings that fully match the pattern (anchored at both ends).
    FullMatch,
    /// Byte strings that contain no match of the pattern anywhere (may
    /// include invalid UTF-8: the caller intersects with a UTF-8 automaton).
    NoMatchInside,
}

/// Parses `pattern`, mapping regex-syntax errors to `Failure::Syntax` with a
/// character offset.
pub fn parse(pattern: &str, case_insensitive: bool) -> Result<Hir, Failure> {
    let mut parser = regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .case_insensitive(case_insensitive)
        .build();
    parser.parse(pattern).map_err(|error| {
        let (byte_offset, reason) = match &error {
            regex_syntax::Error::Parse(error) => (Some(error.span().start.offset), error.kind().to_string()),
            regex_syntax::Error::Translate(error) => (Some(error.span().start.offset), error.kind().to_string()),
            other => (None, other.to_string()),
        };
        let position = byte_offset.map(|offset| pattern[..offset.min(pattern.len())].chars().count());
        Failure::Syntax { position, reason }
    })
}

/// Builds regex-automata's dense DFA for `hir` (not minimized: `normalize` does that).
fn build_dense(hir: &Hir, start_kind: StartKind, limits: &Limits) -> Result<dense::DFA<Vec<u32>>, Failure> {
    if hir.properties().look_set().contains_word_unicode() {
        return Err(Failure::Unsupported {
            reason: "Unicode word boundaries (\\b, \\B) cannot be compiled to a DFA; \
                     use the ASCII forms (?-u:\\b) or (?-u:\\B)"
                .to_string(),
        });
    }
    let byte_limit = Failure::Limit { limit: Limit::Bytes, given: None, maximum: limits.max_bytes as u64 };
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .which_captures(thompson::WhichCaptures::None)
                .nfa_size_limit(Some(limits.max_bytes))
                .shrink(false),
        )
        .build_from_hir(hir)
        .map_err(|error| match error.size_limit() {
            Some(_) => byte_limit.clone(),
            None => Failure::Unsupported { reason: error.to_string() },
        })?;
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(start_kind)
                .minimize(false)
                .byte_classes(true)
                .unicode_word_boundary(false)
                .dfa_size_limit(Some(limits.max_bytes))
                .determinize_size_limit(Some(limits.max_bytes)),
        )
        .build_from_nfa(&nfa)
        .map_err(|error| {
            if error.is_size_limit_exceeded() {
                byte_limit.clone()
            } else {
                Failure::Unsupported { reason: error.to_string() }
            }
        })
}

/// Copies the part of `dfa` reachable from its start state into a `Table`
/// (state 0 dead, others in breadth-first order, regex-automata's classes).
fn export(dfa: &dense::DFA<Vec<u32>>, mode: Export, limits: &Limits) -> Result<Table, Failure> {
    let byte_classes = dfa.byte_classes();
    let mut class_map = [0u8; 256];
    for byte in 0..=255u8 {
        class_map[byte as usize] = byte_classes.get(byte);
    }
    let n_classes = class_map.iter().map(|&c| c as usize + 1).max().unwrap_or(1);
    let mut representatives = vec![0u8; n_classes];
    for byte in (0..=255u8).rev() {
        representatives[class_map[byte as usize] as usize] = byte;
    }
    let anchored = match mode {
        Export::FullMatch => Anchored::Yes,
        Export::NoMatchInside => Anchored::No,
    };
    let start_id = dfa
        .start_state(&start::Config::new().anchored(anchored))
        .map_err(|error| Failure::Unsupported { reason: error.to_string() })?;
    let quit = || Failure::Unsupported {
        reason: "the DFA gave up (quit state) on this pattern; avoid Unicode word boundaries".to_string(),
    };
    // A regex-automata state maps to our dead state when no string can be
    // accepted through it: its dead state for full matching; for "no match
    // inside", every state that reports a (delayed) match.
    let is_dead = |id: StateID| match mode {
        Export::FullMatch => dfa.is_dead_state(id),
        Export::NoMatchInside => dfa.is_match_state(id),
    };
    let ends_in_match = |id: StateID| dfa.is_match_state(dfa.next_eoi_state(id));
    if is_dead(start_id) {
        return Ok(Table::empty_language());
    }
    let mut ids: HashMap<StateID, u32> = HashMap::new();
    let mut originals: Vec<StateID> = vec![start_id];
    ids.insert(start_id, 1);
    let mut queue = VecDeque::from([start_id]);
    let mut transitions: Vec<u32> = vec![DEAD; n_classes];
    let mut accepting = vec![false];
    while let Some(id) = queue.pop_front() {
        if dfa.is_quit_state(id) {
            return Err(quit());
        }
        accepting.push(match mode {
            Export::FullMatch => ends_in_match(id),
            Export::NoMatchInside => !ends_in_match(id),
        });
        for &byte in &representatives {
            let next = dfa.next_state(id, byte);
            if dfa.is_quit_state(next) {
                return Err(quit());
            }
            if is_dead(next) {
                transitions.push(DEAD);
                continue;
            }
            let next_id = match ids.get(&next) {
                Some(&next_id) => next_id,
                None => {
                    let next_id = originals.len() as u32 + 1;
                    limits.check_table_bytes(next_id as usize + 1, n_classes)?;
                    ids.insert(next, next_id);
                    originals.push(next);
                    queue.push_back(next);
                    next_id
                }
            };
            transitions.push(next_id);
        }
    }
    Ok(Table { class_map, n_classes, transitions, accepting, start: 1 })
}

/// Unnormalized table of the strings that fully match `hir`.
pub fn full_match_table(hir: &Hir, limits: &Limits) -> Result<Table, Failure> {
    let dfa = build_dense(hir, StartKind::Anchored, limits)?;
    export(&dfa, Export::FullMatch, limits)
}

/// Unnormalized table of the byte strings containing no match of `hir`.
pub fn no_match_inside_table(hir: &Hir, limits: &Limits) -> Result<Table, Failure> {
    let dfa = build_dense(hir, StartKind::Unanchored, limits)?;
    export(&dfa, Export::NoMatchInside, limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { max_states: 10_000, max_bytes: 1 << 23 }
    }

    fn full(pattern: &str) -> Table {
        full_match_table(&parse(pattern, false).unwrap(), &limits()).unwrap()
    }

    #[test]
    fn match_delay_is_resolved() {
        let table = full("[a-z]+");
        assert!(!table.accepting[table.start as usize]);
        assert!(table.fullmatch(b"a"));
        assert!(table.fullmatch(b"abc"));
        assert!(!table.fullmatch(b""));
        assert!(!table.fullmatch(b"ab1"));
    }

    #[test]
    fn alternation_matches_every_branch_in_full() {
        let table = full("a|ab");
        assert!(table.fullmatch(b"a"));
        assert!(table.fullmatch(b"ab"));
        assert!(!table.fullmatch(b"abb"));
    }

    #[test]
    fn end_anchor_and_ascii_word_boundary_use_end_of_input() {
        assert!(full("ab$").fullmatch(b"ab"));
        let table = full(r"a(?-u:\b)");
        assert!(table.fullmatch(b"a"));
    }

    #[test]
    fn syntax_error_position_counts_characters() {
        let failure = parse("éé(", false).unwrap_err();
        assert!(matches!(failure, Failure::Syntax { position: Some(2), .. }), "{failure:?}");
    }

    #[test]
    fn unicode_word_boundary_is_rejected_with_a_hint() {
        let failure = full_match_table(&parse(r"\bx", false).unwrap(), &limits()).unwrap_err();
        match failure {
            Failure::Unsupported { reason } => assert!(reason.contains("(?-u:\\b)")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn exploding_pattern_hits_the_byte_limit() {
        let small = Limits { max_states: 10_000, max_bytes: 1 << 20 };
        let failure = full_match_table(&parse("(a|b)*a(a|b){30}", false).unwrap(), &small).unwrap_err();
        assert!(matches!(failure, Failure::Limit { limit: Limit::Bytes, .. }), "{failure:?}");
    }

    #[test]
    fn no_match_inside_respects_end_anchor() {
        let table = no_match_inside_table(&parse("a$", false).unwrap(), &limits()).unwrap();
        assert!(table.fullmatch(b"ab"));
        assert!(!table.fullmatch(b"ba"));
        assert!(table.fullmatch(b""));
    }
}
