//! The decoders take any byte string: each returns a filter or an error,
//! never panics, and accepts only canonical encodings.
//!
//! Random bytes almost never carry a valid CRC-32C, so each input is also tried
//! with its last four bytes replaced by the checksum of the rest: that lets the
//! fuzzer reach the checks behind the checksum (item count, hasher) and the
//! tables themselves, which are then used. Every input goes to both decoders,
//! the one of a single table and the one of a growable filter's chain.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lockfree_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter};

fn check(data: &[u8]) {
    if let Ok(f) = CuckooFilter::from_bytes(data) {
        assert_eq!(f.to_bytes(), data, "accepted a non-canonical encoding");
        // `capacity` is what is guaranteed to fit; a table may hold more.
        assert!(f.len() <= f.slots());
        // A decoded table is a working table.
        for k in 0..8u32 {
            if f.insert(&k).is_ok() {
                assert!(f.contains(&k));
            }
        }
        for k in 0..8u32 {
            f.remove(&k);
        }
    }
    if let Ok(g) = GrowableCuckooFilter::from_bytes(data) {
        assert_eq!(g.to_bytes(), data, "accepted a non-canonical chain");
        assert!(g.len() <= g.slots());
        // A decoded chain is a working chain: it grows when it must.
        for k in 0..64u32 {
            if g.insert(&k).is_ok() {
                assert!(g.contains(&k));
            }
        }
        for k in 0..64u32 {
            g.remove(&k);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    if data.len() >= 4 {
        let mut fixed = data.to_vec();
        let n = fixed.len() - 4;
        let crc = crc32c::crc32c(&fixed[..n]);
        fixed[n..].copy_from_slice(&crc.to_le_bytes());
        check(&fixed);
    }
});
