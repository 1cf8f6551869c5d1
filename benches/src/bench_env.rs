//! The settings of the criterion benches. A criterion bench parses its own
//! command line (everything after `--` is criterion's), so these come from
//! environment variables instead; the examples take flags.
//!
//! - `CF_SIZES`: the tables to run, `small`, `big` or `small,big` (the default);
//! - `CF_SMALL_ITEMS`: the small table's capacity (default 65536);
//! - `CF_BIG_MIB`: the big table's size in MiB (default 512, or 8 when the
//!   bench binary runs as a test);
//! - `CF_THREADS`: the thread counts of the concurrent runs (default `1,2,4,8`).

use crate::concurrent::{parse_threads, DEFAULT_THREADS};
use crate::tables::{Size, Tables};

/// The value of `name`, parsed by `parse`, or `default` when it is unset.
/// Panics on a value that does not parse: a bench run that silently ignored
/// a setting would report figures for the wrong workload.
fn var<T>(name: &str, default: T, parse: impl FnOnce(&str) -> Result<T, String>) -> T {
    match std::env::var(name) {
        Ok(v) => parse(&v).unwrap_or_else(|e| panic!("{name}={v:?}: {e}")),
        Err(_) => default,
    }
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.trim().parse().map_err(|_| "not a number".to_string())
}

/// The tables named in `CF_SIZES`.
pub fn sizes() -> Vec<Size> {
    var("CF_SIZES", vec![Size::Small, Size::Big], Size::parse_list)
}

/// The table sizes: `CF_SMALL_ITEMS` and `CF_BIG_MIB`. The big table defaults
/// to 8 MiB instead of 512 when the bench binary runs as a test (`cargo test
/// --benches` passes no `--bench` argument), so that a smoke test does not
/// fill 512 MiB.
pub fn tables() -> Tables {
    let benching = std::env::args().any(|a| a == "--bench");
    let big_default = if benching {
        Tables::DEFAULT.big_mib
    } else {
        8.0
    };
    Tables {
        small_items: var("CF_SMALL_ITEMS", Tables::DEFAULT.small_items, number),
        big_mib: var("CF_BIG_MIB", big_default, number),
    }
}

/// The thread counts in `CF_THREADS`.
pub fn thread_counts() -> Vec<usize> {
    var("CF_THREADS", DEFAULT_THREADS.to_vec(), parse_threads)
}
