//! Fills a subject with the keys of the initial set.

use crate::keys::key;
use crate::subjects::Subject;

/// Inserts keys `from..to`, with `threads` threads where the subject allows.
/// Returns the number of failed inserts.
pub fn fill<S: Subject + Sync>(s: &S, from: u64, to: u64, threads: usize) -> u64 {
    if to <= from {
        return 0;
    }
    let threads = if S::PARALLEL_FILL {
        threads.max(1) as u64
    } else {
        1
    };
    let span = to - from;
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                sc.spawn(move || {
                    let (lo, hi) = (from + span * t / threads, from + span * (t + 1) / threads);
                    (lo..hi).filter(|&i| !s.insert(key(i))).count() as u64
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// [`fill`] for subjects that are not `Sync`: one thread.
pub fn fill_alone<S: Subject>(s: &S, from: u64, to: u64) -> u64 {
    (from..to).filter(|&i| !s.insert(key(i))).count() as u64
}

/// Items at load `load` (0..1) of a subject.
pub fn items_at(slots: usize, load: f64) -> u64 {
    (slots as f64 * load) as u64
}
