//! The bulk section: the workload of the C++ reference's
//! `benchmarks/bulk-insert-and-query.cc` (efficient/cuckoofilter), run for
//! this crate exactly as `examples/bulk_insert_and_query` runs it. No C++ is
//! built here: `benches/reference/compare.py` runs the C++ binary beside
//! that example, alternated, and prints the ratios BENCHMARKS.md quotes.

use benchmarks::bulk_insert_and_query::{run as run_workload, Report};
use lockfree_cuckoo_filter::FingerprintBits;

use crate::Progress;

/// The configurations of the section: items and fingerprint width.
const RUNS: [(usize, FingerprintBits); 3] = [
    (1_000_000, FingerprintBits::Bits16),
    (1_000_000, FingerprintBits::Bits8),
    (30_000_000, FingerprintBits::Bits16),
];

/// Runs the workload once per configuration (quick: 1 M items, 16 bits only).
pub fn run(quick: bool, progress: &Progress) -> Vec<Report> {
    let runs = if quick { &RUNS[..1] } else { &RUNS[..] };
    runs.iter()
        .filter_map(|&(items, bits)| {
            progress.say(&format!("bulk: {items} items, {} bits", bits.bits()));
            match run_workload(items, bits) {
                Ok(r) => Some(r),
                Err(e) => {
                    eprintln!("compare: bulk, {items} items: cannot build the filter: {e}");
                    None
                }
            }
        })
        .collect()
}

/// The section's markdown: the legend and this run's rows.
pub fn markdown(rows: &[Report]) -> String {
    let mut s = String::new();
    s.push_str(Report::LEGEND);
    s.push_str(" Sized for N items; built with this run's flags.\n\n");
    s.push_str(&Report::header());
    s.push('\n');
    for r in rows {
        s.push_str(&r.row());
        s.push('\n');
    }
    s
}
