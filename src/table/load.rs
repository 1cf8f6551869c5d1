//! A table built from its words as they arrive (a filter read from a stream):
//! memory is taken as the words come, so an input that claims a huge table
//! and then ends costs what it delivered, not what it claimed.

use super::memory::Block;
use super::Table;
use crate::error::AllocError;
use crate::fingerprint::Width;
use crate::sync::{AtomicU64, Ordering};

/// Words asked of the source at a time (512 KiB).
const PIECE: usize = 1 << 16;

/// The least the block buffer grows by once it must grow (1 MiB): small
/// inputs take one allocation, large ones double until they reach their size.
const MIN_GROWTH: usize = 1 << 16;

impl<W: Width> Table<W> {
    /// A table of `buckets` buckets (valid, see [`super::valid_bucket_count`])
    /// whose words, in order, `next` writes into the buffers it is given, a
    /// piece at a time. Its count is 0: the caller checks the words, then
    /// sets it ([`Self::set_len`]).
    ///
    /// The outer error is `next`'s, the inner one an allocation that failed.
    /// The blocks grow geometrically as words arrive (doubling, reserved
    /// exactly, never past the table's size), so memory follows the input:
    /// an input that ends early costs at most four times what it delivered,
    /// and one that is whole holds at most 1.5 times its table while the
    /// last growth copies (none where the allocator remaps large blocks, as
    /// glibc's does).
    pub(crate) fn from_pieces<E>(
        buckets: u64,
        mut next: impl FnMut(&mut [u64]) -> Result<(), E>,
    ) -> Result<Result<Self, AllocError>, E> {
        let words = usize::try_from(Self::words_for(buckets));
        let total = usize::try_from(Self::blocks_for(buckets));
        let (Ok(words), Ok(total)) = (words, total) else {
            return Ok(Err(Self::alloc_error(buckets)));
        };
        let mut blocks: Vec<Block> = Vec::new();
        let mut piece = vec![0u64; PIECE.min(words)];
        let mut done = 0;
        while done < words {
            let n = PIECE.min(words - done);
            next(&mut piece[..n])?;
            let needed = (done + n).div_ceil(2);
            if needed > blocks.capacity() {
                // Double, but once a quarter of the table has arrived, go
                // straight to its size: growing never holds more than one
                // and a half times the table (the old blocks and the new).
                let cap = blocks.capacity();
                let to = if 4 * cap >= total {
                    total
                } else {
                    (2 * cap).max(MIN_GROWTH).min(total)
                };
                if blocks.try_reserve_exact(to - blocks.len()).is_err() {
                    return Ok(Err(Self::alloc_error(buckets)));
                }
            }
            // Words pair up into blocks; an odd word waits in the last block.
            for (k, &w) in piece[..n].iter().enumerate() {
                let at = done + k;
                if at % 2 == 0 {
                    blocks.push(Block([AtomicU64::new(w), AtomicU64::new(0)]));
                } else {
                    blocks[at / 2].0[1].store(w, Ordering::Relaxed);
                }
            }
            done += n;
        }
        if blocks.capacity() < total && blocks.try_reserve_exact(total - blocks.len()).is_err() {
            return Ok(Err(Self::alloc_error(buckets)));
        }
        blocks.resize_with(total, || Block([AtomicU64::new(0), AtomicU64::new(0)]));
        let blocks = blocks.into_boxed_slice();
        super::memory::advise_loaded(&blocks);
        Ok(Ok(Self::with_blocks(blocks, buckets)))
    }

    /// A table of `buckets` buckets whose words are `words` (exactly
    /// `words_for(buckets)` of them; extra ones are ignored, missing ones stay
    /// empty) and whose count is `len`, or an error if allocation fails.
    pub(crate) fn from_words(
        buckets: u64,
        words: impl IntoIterator<Item = u64>,
        len: usize,
    ) -> Result<Self, AllocError> {
        let table = Self::new(buckets)?;
        for (i, w) in words.into_iter().take(table.word_count()).enumerate() {
            table.word(i).store(w, Ordering::Relaxed);
        }
        table.count.set(len);
        Ok(table)
    }

    /// Sets the item count of a table built by [`Self::from_pieces`].
    pub(crate) fn set_len(&self, len: usize) {
        self.count.set(len);
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;
    use crate::fingerprint::{W10, W12, W16, W21, W32, W8};

    fn round_trip<W: Width>(buckets: u64) {
        let t = Table::<W>::new(buckets).unwrap();
        for i in 0..buckets * 3 {
            let _ = t.insert(t.position(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i));
        }
        let words: Vec<u64> = t.words().collect();
        let mut from = 0;
        let u = Table::<W>::from_pieces(buckets, |piece| {
            piece.copy_from_slice(&words[from..from + piece.len()]);
            from += piece.len();
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(from, words.len());
        assert_eq!(u.words().collect::<Vec<_>>(), words);
    }

    #[test]
    fn words_arrive_in_order_at_every_width() {
        for buckets in [2, 6, 1000, 70_000] {
            round_trip::<W8>(buckets);
            round_trip::<W10>(buckets);
            round_trip::<W12>(buckets);
            round_trip::<W16>(buckets);
            round_trip::<W21>(buckets);
            round_trip::<W32>(buckets);
        }
    }

    #[test]
    fn an_input_that_ends_early_allocates_what_it_delivered() {
        // A table of 2^32 buckets (32 GiB of 16-bit words) whose source fails
        // after its first piece.
        let mut pieces = 0;
        let r = Table::<W16>::from_pieces(1 << 32, |_| {
            pieces += 1;
            if pieces > 1 {
                Err("ended")
            } else {
                Ok(())
            }
        });
        assert_eq!(r.err(), Some("ended"));
    }
}
