//! Single-thread kernels: lookups of present and absent keys, and inserts and
//! removes timed at a steady load.

use std::time::{Duration, Instant};

use crate::keys::{fresh_key, key, miss_key};
use crate::subjects::Subject;

/// Looks up `count` keys that are present (keys `0..n`, cycling from `*cursor`).
/// Returns how many were reported present.
#[inline(never)]
pub fn lookup_hits<S: Subject>(s: &S, n: u64, cursor: &mut u64, count: u64) -> u64 {
    let mut found = 0;
    let mut c = *cursor;
    for _ in 0..count {
        found += s.contains(key(c)) as u64;
        c += 1;
        if c == n {
            c = 0;
        }
    }
    *cursor = c;
    found
}

/// Looks up `count` absent keys from `*cursor` on. Returns the false positives.
#[inline(never)]
pub fn lookup_misses<S: Subject>(s: &S, cursor: &mut u64, count: u64) -> u64 {
    let mut found = 0;
    for i in *cursor..*cursor + count {
        found += s.contains(miss_key(i)) as u64;
    }
    *cursor += count;
    found
}

/// Runs `ops` inserts at the subject's current load, timing only the inserts:
/// in chunks of `chunk` fresh keys, each removed again (untimed) so that the
/// load stays where it was. A Bloom filter re-inserts present keys instead
/// (the same k atomic ORs), leaving its bits as they were.
pub fn timed_inserts<S: Subject>(s: &S, n: u64, ops: u64, chunk: u64, fresh: &mut u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = ops;
    while left > 0 {
        let m = left.min(chunk);
        left -= m;
        if S::CAN_DELETE {
            let start = *fresh;
            let t = Instant::now();
            for i in start..start + m {
                std::hint::black_box(s.insert(fresh_key(i)));
            }
            total += t.elapsed();
            for i in start..start + m {
                s.remove(fresh_key(i));
            }
            *fresh += m;
        } else {
            let t = Instant::now();
            for i in 0..m {
                std::hint::black_box(s.insert(key((*fresh + i) % n)));
            }
            total += t.elapsed();
            *fresh += m;
        }
    }
    total
}

/// Runs `ops` removes of present keys, timing only the removes: in chunks,
/// each re-inserted (untimed) afterwards.
pub fn timed_removes<S: Subject>(
    s: &S,
    n: u64,
    ops: u64,
    chunk: u64,
    cursor: &mut u64,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = ops;
    let chunk = chunk.min(n).max(1);
    while left > 0 {
        let m = left.min(chunk);
        left -= m;
        let start = if *cursor + m > n { 0 } else { *cursor };
        let t = Instant::now();
        for i in start..start + m {
            std::hint::black_box(s.remove(key(i)));
        }
        total += t.elapsed();
        for i in start..start + m {
            s.insert(key(i));
        }
        *cursor = start + m;
    }
    total
}

/// The chunk of an insert or remove measurement: 0.5 % of the slots, so the
/// load moves by at most half a point.
pub fn chunk_for(slots: usize) -> u64 {
    (slots as u64 / 200).clamp(64, 1 << 20)
}
