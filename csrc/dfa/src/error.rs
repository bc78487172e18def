//! Why a DFA could not be built, as plain data (no pyo3 here).
//!
//! The Python binding (`python.rs`) turns a `Failure` into one Python exception
//! whose arguments `grammask.terminals` maps onto `grammask.RegexError`
//! (syntax and unsupported features) or `grammask.LimitExceeded` (size
//! limits, named by the `grammask.Config` fields `max_dfa_states` and
//! `max_dfa_bytes`).

use std::fmt;

/// Which configurable limit a build ran into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Number of states of a finished (trimmed, minimized) table.
    States,
    /// Bytes of a table or of regex-automata's NFA/DFA while building.
    Bytes,
}

impl Limit {
    /// The `grammask.Config` field (and keyword argument) that raises it.
    pub fn config_name(self) -> &'static str {
        match self {
            Limit::States => "max_dfa_states",
            Limit::Bytes => "max_dfa_bytes",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The pattern does not parse. `position` is a character (code point)
    /// offset into the pattern; `reason` is regex-syntax's own message.
    Syntax { position: Option<usize>, reason: String },
    /// The pattern parses but uses something a DFA cannot do.
    Unsupported { reason: String },
    /// A size limit was hit. `given` is the size reached when it is known.
    Limit { limit: Limit, given: Option<u64>, maximum: u64 },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Syntax { position: Some(position), reason } => {
                write!(f, "regex syntax error at character {position}: {reason}")
            }
            Failure::Syntax { position: None, reason } => write!(f, "regex syntax error: {reason}"),
            Failure::Unsupported { reason } => write!(f, "unsupported regex: {reason}"),
            Failure::Limit { limit, given: Some(given), maximum } => {
                write!(f, "limit {} exceeded ({given} > {maximum})", limit.config_name())
            }
            Failure::Limit { limit, given: None, maximum } => {
                write!(f, "limit {} exceeded (limit {maximum})", limit.config_name())
            }
        }
    }
}

/// The two size limits every build honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most states a finished table may have.
    pub max_states: usize,
    /// Most bytes any table (or regex-automata structure) may take while building.
    pub max_bytes: usize,
}

impl Limits {
    /// Fails unless a table of `n_states` x `n_classes` u32 transitions fits
    /// in `max_bytes`. Used before allocating intermediate tables.
    pub fn check_table_bytes(&self, n_states: usize, n_classes: usize) -> Result<(), Failure> {
        let bytes = table_bytes(n_states, n_classes);
        if bytes > self.max_bytes as u64 {
            return Err(Failure::Limit {
                limit: Limit::Bytes,
                given: Some(bytes),
                maximum: self.max_bytes as u64,
            });
        }
        Ok(())
    }
}

/// Size of an exported table: 256-entry class map, u32 transitions, one
/// accepting byte per state.
pub fn table_bytes(n_states: usize, n_classes: usize) -> u64 {
    256 + 4 * (n_states as u64) * (n_classes as u64) + n_states as u64
}
