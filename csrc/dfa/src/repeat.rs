//! Counted repetitions `x{m,n}` / `x{m,}` of a prefix-free piece, built from
//! the piece's minimal table by a counter product instead of a subset
//! construction.
//!
//! What it computes: the (unnormalized) full-match table of `x{m,n}` when the
//! minimal table of `x` is prefix-free (no match is a proper prefix of
//! another) and does not match the empty string.  JSON Schema's length
//! bounds write such repetitions of one JSON string character
//! (`(?:[ !#-\[\]-\u{D7FF}...]|\\["\\/bfnrt]|\\u....){0,63}`): regex-automata
//! determinizes the NFA's 63 optional copies, 7-20 ms per count, while the
//! counter product is linear in its size.
//!
//! Why a counter suffices: in a prefix-free language every string has at
//! most one split into matches of `x`, and a matcher that reaches the
//! accepting state of `x`'s minimal table must start the next copy there
//! (the accepting state has no live transition).  So the reading of any
//! prefix is determined by the number `k` of finished copies and the state
//! `q` of `x`'s table inside the current copy.
//!
//! Data layout: state 0 is dead; state `1 + k * w + i` is (`k` copies
//! finished, the current copy in the `i`-th non-dead, non-accepting state
//! of `x`), `w` their number, for `k` in `0..copies` (`copies` is `n` when
//! bounded, `m + 1` when not: past `m` finished copies the count stays at
//! `m`); a bounded repetition adds a last state for `n` finished copies,
//! which accepts and has no transitions.  Classes are `x`'s.  Accepting:
//! (`k`, start of `x`) with `k >= m` (and, bounded, the last state).
//!
//! Invariants: the result is only trimmed and minimized by the caller
//! (`minimize::normalize`), which maps it to the same table as the
//! whole-pattern build (equal languages give equal normalized tables);
//! its size is checked against `max_bytes` before it is allocated.

use crate::error::{Failure, Limits};
use crate::table::{Table, DEAD};

/// The table of `x{min,max}` (`max` None: unbounded) from `x`'s minimal
/// table, or `None` when `x` matches the empty string or is not
/// prefix-free (the caller then builds the repetition another way).
pub fn counted_repetition(x: &Table, min: u32, max: Option<u32>, limits: &Limits) -> Option<Result<Table, Failure>> {
    if x.start == DEAD || x.accepting[x.start as usize] || !is_prefix_free(x) {
        return None;
    }
    let n_classes = x.n_classes;
    // Inner states of x (neither dead nor accepting), numbered 0..width.
    let mut inner_index = vec![u32::MAX; x.n_states()];
    let mut width = 0u32;
    for state in 1..x.n_states() {
        if !x.accepting[state] {
            inner_index[state] = width;
            width += 1;
        }
    }
    let (copies, last) = match max {
        Some(max) => (max as usize, true),
        None => (min as usize + 1, false),
    };
    let n_states = 1 + copies * width as usize + usize::from(last);
    if let Err(failure) = limits.check_table_bytes(n_states, n_classes) {
        return Some(Err(failure));
    }
    let last_state = (n_states - 1) as u32;
    let start_index = inner_index[x.start as usize];
    let state_of = |copy: usize, inner: u32| 1 + (copy as u32) * width + inner;
    // The state after finishing copy number `finished` (1-based count).
    let after_copy = |finished: usize| -> u32 {
        match max {
            Some(max) if finished == max as usize => last_state,
            Some(_) => state_of(finished, start_index),
            None => state_of(finished.min(min as usize), start_index),
        }
    };
    let mut transitions = vec![DEAD; n_states * n_classes];
    let mut accepting = vec![false; n_states];
    for copy in 0..copies {
        for state in 1..x.n_states() as u32 {
            let inner = inner_index[state as usize];
            if inner == u32::MAX {
                continue;
            }
            let row = state_of(copy, inner) as usize * n_classes;
            for class in 0..n_classes {
                let next = x.next_by_class(state, class);
                transitions[row + class] = if next == DEAD {
                    DEAD
                } else if x.accepting[next as usize] {
                    after_copy(copy + 1)
                } else {
                    state_of(copy, inner_index[next as usize])
                };
            }
        }
        accepting[state_of(copy, start_index) as usize] = copy >= min as usize;
    }
    if last {
        accepting[last_state as usize] = true;
    }
    // x{0,0} (or x{0}): only the empty string; the last state is the start.
    let start = if copies == 0 { last_state } else { state_of(0, start_index) };
    Some(Ok(Table { class_map: x.class_map, n_classes, transitions, accepting, start }))
}

/// Whether no match of `x` is a proper prefix of another: every accepting
/// state of the (trimmed) table has only dead transitions.
fn is_prefix_free(x: &Table) -> bool {
    (0..x.n_states()).filter(|&state| x.accepting[state]).all(|state| {
        let row = state * x.n_classes;
        x.transitions[row..row + x.n_classes].iter().all(|&next| next == DEAD)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minimize::normalize;
    use crate::regex_build::{full_match_table, parse};

    fn limits() -> Limits {
        Limits { max_states: 1_000_000, max_bytes: 1 << 27 }
    }

    fn whole(pattern: &str) -> Table {
        normalize(&full_match_table(&parse(pattern, false).unwrap(), &limits()).unwrap(), &limits()).unwrap()
    }

    fn repeated(piece: &str, min: u32, max: Option<u32>) -> Option<Table> {
        let x = whole(piece);
        counted_repetition(&x, min, max, &limits()).map(|table| normalize(&table.unwrap(), &limits()).unwrap())
    }

    #[test]
    fn counter_product_gives_the_whole_patterns_table() {
        let json_char = r#"(?:[ !#-\[\]-\x{D7FF}\x{E000}-\x{10FFFF}]|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})"#;
        let mut checked = 0;
        for piece in [json_char, "[a-c]", "ab|ba", "é|x", "(?:ab|c)d", "[ \t\n\r]", r"\x{10000}|a"] {
            for (min, max) in [(0, Some(0)), (0, Some(1)), (1, Some(1)), (0, Some(5)), (3, Some(7)), (4, Some(4)),
                               (0, None), (1, None), (3, None), (0, Some(17)), (16, Some(20))] {
                let bounds = match max {
                    Some(max) => format!("{{{min},{max}}}"),
                    None => format!("{{{min},}}"),
                };
                let pattern = format!("(?:{piece}){bounds}");
                let table = repeated(piece, min, max).expect("prefix-free piece");
                assert_eq!(table, whole(&pattern), "{pattern}");
                checked += 1;
            }
        }
        assert_eq!(checked, 77);
    }

    #[test]
    fn pieces_that_are_not_prefix_free_or_match_empty_are_declined() {
        for piece in ["a|ab", "a+", "a*b?", "(?:ab)*", "", "a?"] {
            assert!(repeated(piece, 0, Some(20)).is_none(), "{piece}");
        }
        assert!(counted_repetition(&Table::empty_language(), 0, Some(3), &limits()).is_none());
    }

    #[test]
    fn the_product_is_checked_against_the_byte_limit_before_it_is_built() {
        let tight = Limits { max_states: 100, max_bytes: 4_000 };
        let x = whole("[a-c]");
        assert!(matches!(counted_repetition(&x, 0, Some(1_000), &tight), Some(Err(Failure::Limit { .. }))));
    }
}
