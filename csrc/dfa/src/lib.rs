//! grammask's DFA builder: regex terminals compiled with regex-automata 0.4
//! and exported as plain, minimal tables (see `table.rs` for the layout and
//! invariants, `README.md` for the table contract with the Python side).
//!
//! Modules: `regex_build` (pattern -> regex-automata DFA -> table),
//! `concat` (a concatenation from its pieces' cached minimal tables),
//! `repeat` (a counted repetition of a prefix-free item by a counter),
//! `variants` (early end, complement, literal sets, substrings),
//! `name_trie` (key-exclusion terminals built from a trie of names),
//! `minimize` (trim + Hopcroft + canonical numbering), `table` (the table and
//! intersection), `error` (failures and limits), `word_hash` (the hasher of
//! the crate's own hash maps), `guard` (panics
//! caught and reported), `python` (the pyo3 module,
//! only with the default `python` feature so `cargo test
//! --no-default-features` needs no Python).

pub mod concat;
pub mod error;
pub mod guard;
pub mod minimize;
pub mod name_trie;
pub mod regex_build;
pub mod repeat;
pub mod table;
pub mod variants;
pub mod word_hash;

#[cfg(feature = "python")]
mod python;

/// Version of the exported table layout (bump on any change of meaning).
pub const FORMAT_VERSION: u32 = 1;
