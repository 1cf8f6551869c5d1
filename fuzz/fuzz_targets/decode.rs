//! The decoders take any byte string: each returns a filter or an error,
//! never panics, and accepts only canonical encodings of the version it
//! writes.
//!
//! Random bytes almost never carry a valid CRC-32C, so each input is also tried
//! with its last four bytes replaced by the checksum of the rest: that lets the
//! fuzzer reach the checks behind the checksum (item count, hasher) and the
//! tables themselves, which are then used. Every input goes to both decoders,
//! the one of a single table and the one of a growable filter's chain.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lockfree_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter};

/// An accepted input must give a working filter: written again, its bytes
/// decode to themselves, and equal the input where that has their length
/// (a version-1 input, or one whose moved entries the decoder put into the
/// table rather than its stash, is written shorter or longer); `len` at most
/// the slots plus the moved entries, so at most the input's length in
/// bytes (a slot takes at least a byte, an entry eight); and inserts that
/// succeed are found (a chain grows when it must).
macro_rules! check_decoder {
    ($filter:ty, $data:expr, $keys:expr) => {
        if let Ok(f) = <$filter>::from_bytes($data) {
            let written = f.to_bytes();
            if written.len() == $data.len() {
                assert_eq!(written, $data, "accepted a non-canonical encoding");
            }
            let again = <$filter>::from_bytes(&written).expect("its own bytes decode");
            assert_eq!(again.to_bytes(), written, "written bytes are not canonical");
            assert!(f.len() <= $data.len());
            for k in 0..$keys {
                if f.insert(&k).is_ok() {
                    assert!(f.contains(&k));
                }
            }
            for k in 0..$keys {
                f.remove(&k);
            }
        }
    };
}

fn check(data: &[u8]) {
    check_decoder!(CuckooFilter, data, 8u32);
    check_decoder!(GrowableCuckooFilter, data, 64u32);
}

/// Every layout's (width, slots per bucket), as a table's header records
/// them at bytes 10 and 11: random bytes seldom name one.
const LAYOUTS: [(u8, u8); 13] = [
    (8, 4),
    (9, 4),
    (10, 8),
    (11, 7),
    (10, 6),
    (12, 6),
    (12, 5),
    (14, 5),
    (16, 4),
    (17, 4),
    (21, 6),
    (23, 3),
    (32, 4),
];

/// `data` with its last four bytes replaced by the checksum of the rest.
fn with_checksum(data: &[u8]) -> Vec<u8> {
    let mut fixed = data.to_vec();
    let n = fixed.len() - 4;
    let crc = crc32c::crc32c(&fixed[..n]);
    fixed[n..].copy_from_slice(&crc.to_le_bytes());
    fixed
}

fuzz_target!(|data: &[u8]| {
    check(data);
    if data.len() >= 4 {
        check(&with_checksum(data));
    }
    // And with the header naming a layout (chosen by byte 10), so that the
    // fuzzer reaches every layout's word checks, the ranked ones' included.
    if data.len() >= 16 {
        let mut named = data.to_vec();
        let (bits, slots) = LAYOUTS[usize::from(named[10]) % LAYOUTS.len()];
        named[10] = bits;
        named[11] = slots;
        check(&with_checksum(&named));
    }
});
