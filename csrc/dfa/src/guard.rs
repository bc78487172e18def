//! Running a build so that no Rust panic can cross into Python.
//!
//! `guarded` runs a table build inside `std::panic::catch_unwind` and reports
//! either the table, the build's own `Failure`, or the panic's message. The
//! Python binding turns the last two into exceptions. Uncaught, a panic
//! would reach Python as pyo3's `PanicException`, a `BaseException` that no
//! caller expects.

use crate::error::Failure;
use crate::table::Table;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why a guarded build produced no table.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    Failed(Failure),
    Panicked(String),
}

/// Runs `build`, catching any panic. The build owns or borrows only
/// immutable inputs, so nothing observable is left half-updated by an unwind.
pub fn guarded(build: impl FnOnce() -> Result<Table, Failure>) -> Result<Table, Stop> {
    match catch_unwind(AssertUnwindSafe(build)) {
        Ok(Ok(table)) => Ok(table),
        Ok(Err(failure)) => Err(Stop::Failed(failure)),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Stop::Panicked(message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_values() {
        let outcome = guarded(|| panic!("boom {}", 7));
        assert_eq!(outcome, Err(Stop::Panicked("boom 7".to_string())));
        let outcome = guarded(|| panic!("static"));
        assert_eq!(outcome, Err(Stop::Panicked("static".to_string())));
    }

    #[test]
    fn failures_and_tables_pass_through() {
        let failure = Failure::Unsupported { reason: "no".to_string() };
        assert_eq!(guarded(|| Err(failure.clone())), Err(Stop::Failed(failure)));
        assert_eq!(guarded(|| Ok(Table::empty_language())), Ok(Table::empty_language()));
    }
}
