//! The sharing limit: the least a concurrent mix on a shared table must do,
//! to compare our two-thread scaling with. Every operation reads two random
//! words of an array the size of our table, and a write (insert or remove)
//! then swaps one of them by compare-and-swap, as our insert and remove
//! change one bucket. Run through the same driver and key streams as the
//! filters ([`crate::run_concurrent`]), it measures what the machine charges
//! when two cores write lines that both read: the cache-line transfers that
//! no design of a shared table can avoid.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::keys::{scale, splitmix};
use crate::subjects::Subject;

/// An array of words that the mix reads and swaps; see the module docs.
pub struct SharingKernel {
    words: Box<[AtomicU64]>,
    slots: usize,
}

impl SharingKernel {
    /// An array of `bytes` bytes (at least two words), standing for a table
    /// of `slots` items.
    pub fn new(bytes: usize, slots: usize) -> Self {
        let words = (bytes / 8).max(2);
        Self {
            words: (0..words as u64)
                .map(|i| AtomicU64::new(splitmix(i)))
                .collect(),
            slots,
        }
    }

    /// The two words of `key`, read.
    #[inline(always)]
    fn read(&self, key: u64) -> (&AtomicU64, u64, u64) {
        let h = splitmix(key);
        let n = self.words.len() as u64;
        let first = &self.words[scale(h, n) as usize];
        let a = first.load(Ordering::Acquire);
        let b = self.words[scale(h >> 32, n) as usize].load(Ordering::Acquire);
        (first, a, b)
    }

    /// Reads the two words and swaps the first for a new value.
    #[inline(always)]
    fn write(&self, key: u64) -> bool {
        let (first, a, b) = self.read(key);
        first
            .compare_exchange(
                a,
                a.wrapping_add(b | 1),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }
}

impl Subject for SharingKernel {
    const NAME: &'static str = "sharing limit (2 random reads, a CAS per write)";
    const CAN_DELETE: bool = false;

    fn insert(&self, key: u64) -> bool {
        self.write(key)
    }

    fn contains(&self, key: u64) -> bool {
        let (_, a, b) = self.read(key);
        (a ^ b) & 1 == 0
    }

    fn remove(&self, key: u64) -> bool {
        self.write(key)
    }

    fn slots(&self) -> usize {
        self.slots
    }

    fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}
