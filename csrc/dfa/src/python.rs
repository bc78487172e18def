//! The pyo3 module `grammask._core._dfa_builder`.
//!
//! Functions `build_regex_table(pattern, kind, case_insensitive, max_states,
//! max_bytes)`, `build_literals_table(strings, case_insensitive, max_states,
//! max_bytes)` and `build_substrings_table(text, max_states, max_bytes)`
//! return a dict: `format_version`, `n_states`, `n_classes`, `start` (ints),
//! `class_map` (256 bytes), `transitions` (n_states * n_classes
//! little-endian i32), `accepting` (n_states bytes, 0 or 1); the contract is
//! stated in `../README.md`.
//!
//! Failures raise `DfaBuildError(kind, reason, position, limit, given,
//! maximum)` with kind "syntax", "unsupported" or "limit";
//! `grammask.terminals` turns it into `RegexError` / `LimitExceeded`.
//! Builds run without the GIL and inside `guard::guarded`: a panic becomes a
//! `DfaBuildError` of kind "internal", never an abort.

use crate::error::{Failure, Limits};
use crate::guard::{guarded, Stop};
use crate::table::Table;
use crate::variants::{build_literals, build_regex, build_substrings, Kind};
use crate::FORMAT_VERSION;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(_dfa_builder, DfaBuildError, PyException);

fn run_build(py: Python<'_>, build: impl FnOnce() -> Result<Table, Failure> + Send) -> PyResult<PyObject> {
    match py.allow_threads(|| guarded(build)) {
        Ok(table) => table_to_dict(py, &table),
        Err(Stop::Failed(failure)) => Err(failure_to_error(&failure)),
        Err(Stop::Panicked(message)) => Err(DfaBuildError::new_err((
            "internal",
            format!("internal error in the DFA builder: {message}"),
            None::<usize>,
            None::<&str>,
            None::<u64>,
            None::<u64>,
        ))),
    }
}

fn failure_to_error(failure: &Failure) -> PyErr {
    match failure {
        Failure::Syntax { position, reason } => {
            DfaBuildError::new_err(("syntax", reason.clone(), *position, None::<&str>, None::<u64>, None::<u64>))
        }
        Failure::Unsupported { reason } => {
            DfaBuildError::new_err(("unsupported", reason.clone(), None::<usize>, None::<&str>, None::<u64>, None::<u64>))
        }
        Failure::Limit { limit, given, maximum } => DfaBuildError::new_err((
            "limit",
            failure.to_string(),
            None::<usize>,
            limit.config_name(),
            *given,
            Some(*maximum),
        )),
    }
}

fn table_to_dict(py: Python<'_>, table: &Table) -> PyResult<PyObject> {
    let transitions: Vec<u8> = table.transitions.iter().flat_map(|&state| (state as i32).to_le_bytes()).collect();
    let accepting: Vec<u8> = table.accepting.iter().map(|&a| a as u8).collect();
    let dict = PyDict::new(py);
    dict.set_item("format_version", FORMAT_VERSION)?;
    dict.set_item("n_states", table.n_states())?;
    dict.set_item("n_classes", table.n_classes)?;
    dict.set_item("start", table.start)?;
    dict.set_item("class_map", PyBytes::new(py, &table.class_map))?;
    dict.set_item("transitions", PyBytes::new(py, &transitions))?;
    dict.set_item("accepting", PyBytes::new(py, &accepting))?;
    Ok(dict.into_any().unbind())
}

fn limits(max_states: usize, max_bytes: usize) -> Limits {
    Limits { max_states, max_bytes }
}

#[pyfunction]
#[pyo3(signature = (pattern, kind, case_insensitive, max_states, max_bytes))]
fn build_regex_table(
    py: Python<'_>,
    pattern: &str,
    kind: &str,
    case_insensitive: bool,
    max_states: usize,
    max_bytes: usize,
) -> PyResult<PyObject> {
    let kind = Kind::from_name(kind)
        .ok_or_else(|| PyValueError::new_err(format!("unknown regex kind {kind:?}: use regex, early_end, complement, intersection, difference or key_exclusion")))?;
    let pattern = pattern.to_string();
    run_build(py, move || build_regex(&pattern, kind, case_insensitive, &limits(max_states, max_bytes)))
}

#[pyfunction]
#[pyo3(signature = (strings, case_insensitive, max_states, max_bytes))]
fn build_literals_table(
    py: Python<'_>,
    strings: Vec<String>,
    case_insensitive: bool,
    max_states: usize,
    max_bytes: usize,
) -> PyResult<PyObject> {
    run_build(py, move || build_literals(&strings, case_insensitive, &limits(max_states, max_bytes)))
}

#[pyfunction]
#[pyo3(signature = (text, max_states, max_bytes))]
fn build_substrings_table(py: Python<'_>, text: &str, max_states: usize, max_bytes: usize) -> PyResult<PyObject> {
    let text = text.to_string();
    run_build(py, move || build_substrings(&text, &limits(max_states, max_bytes)))
}

/// Empties the per-process cache of concatenation pieces (`concat.rs`).
#[pyfunction]
fn clear_piece_cache() {
    crate::concat::clear_cache();
}

#[pymodule]
fn _dfa_builder(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FORMAT_VERSION", FORMAT_VERSION)?;
    m.add("DfaBuildError", m.py().get_type::<DfaBuildError>())?;
    m.add_function(wrap_pyfunction!(build_regex_table, m)?)?;
    m.add_function(wrap_pyfunction!(build_literals_table, m)?)?;
    m.add_function(wrap_pyfunction!(build_substrings_table, m)?)?;
    m.add_function(wrap_pyfunction!(clear_piece_cache, m)?)?;
    Ok(())
}
