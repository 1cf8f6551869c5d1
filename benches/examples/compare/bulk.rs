//! The bulk section: the workload of the C++ reference's
//! `benchmarks/bulk-insert-and-query.cc` (efficient/cuckoofilter), run for
//! this crate exactly as `examples/bulk_insert_and_query` runs it, beside the
//! C++ figures measured on the CI-type machines (quoted: no C++ is built here).

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

/// The C++ reference on the same workload, measured on the CI-type machines.
const CPP: &str = "\
The C++ reference, built with `-O3 -march=native` from efficient/cuckoofilter,
`bulk-insert-and-query.exe N`, one run each, right after the run of `compare`
that wrote docs/compare.md (million operations per second; lookups at 0 / 25
/ 50 / 75 / 100 % present). On the machine of runs G and H (2-core Intel
Xeon VM), run H (2026-11-24):

| C++ | adds | 0 % | 25 % | 50 % | 75 % | 100 % |
|---|--:|--:|--:|--:|--:|--:|
| Cuckoo16, 1 M | 24.64 | 144 | 144 | 146 | 139 | 145 |
| Cuckoo8, 1 M | 27.27 | 263 | 248 | 262 | 263 | 264 |
| Cuckoo16, 30 M | 10.15 | 37.4 | 38.2 | 35.8 | 37.1 | 36.5 |

On the machine of runs A to F (2026-11-23, run F, 2-core AMD EPYC VM):

| C++ | adds | 0 % | 25 % | 50 % | 75 % | 100 % |
|---|--:|--:|--:|--:|--:|--:|
| Cuckoo16, 1 M | 34.21 | 229 | 231 | 227 | 229 | 227 |
| Cuckoo8, 1 M | 38.16 | 303 | 290 | 295 | 283 | 284 |
| Cuckoo16, 30 M | 9.15 | 34.6 | 34.0 | 34.9 | 25.6 | 34.2 |
";

/// The section's markdown: this run's rows, then the quoted C++ figures.
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
    s.push('\n');
    s.push_str(CPP);
    s
}
