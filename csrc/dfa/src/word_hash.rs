//! The hasher of the crate's internal hash maps, whose keys are numbers the
//! crate made itself (state sets in `concat`'s subset construction, rows of
//! block ids in `name_trie`'s minimization, transition columns in
//! `minimize`'s class merging, state pairs in `table`'s products).
//!
//! What it computes: a 64-bit hash by the multiply-rotate step of rustc's
//! FxHasher, one step per 8-byte word (shorter tails zero-padded), several
//! times faster than the default SipHash on such keys.
//!
//! Invariants: deterministic, and only as strong as the keys need: nothing
//! hashed here comes from outside (a key's words are state or block
//! numbers), so collisions cost time, never correctness (`HashMap` compares
//! keys).

use std::hash::{BuildHasherDefault, Hasher};

/// The `HashMap` hasher parameter for `WordHasher`.
pub type WordHash = BuildHasherDefault<WordHasher>;

/// See the module documentation.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, word: u32) {
        self.write_u64(word as u64);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
}
