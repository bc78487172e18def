//! grammask's DFA builder (placeholder during bootstrap).
use pyo3::prelude::*;

#[pymodule]
fn _dfa_builder(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FORMAT_VERSION", 1u32)?;
    Ok(())
}
