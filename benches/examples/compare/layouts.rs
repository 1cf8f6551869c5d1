//! The layouts section: every fingerprint width on one thread, beside 16-bit,
//! each on a table of the same byte size (a small one that stays in cache and
//! a large one), filled to 95 %.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use benchmarks::*;
use lockfree_cuckoo_filter::FingerprintBits;

use crate::config::Config;
use crate::{best_rate, Progress};

/// The small table's size: it stays in cache.
const SMALL_KIB: usize = 256;

/// The operations a row times, in the order of [`Row::ops`].
const OPS: [&str; 5] = [
    "insert 0 → 95 %",
    "contains (hit)",
    "contains (miss)",
    "remove",
    "contains_batch (miss)",
];

/// Lookups per timed step, and the batch length of `contains_batch`.
const STEP: u64 = 4096;

pub struct Row {
    table: String,
    bits: FingerprintBits,
    bits_per_item: f64,
    fpr: f64,
    fp_queries: u64,
    /// Inserts that failed on the way to 95 %.
    failed: u64,
    /// Operations per second, in the order of [`OPS`].
    ops: [f64; 5],
}

fn layout_name(bits: FingerprintBits) -> String {
    match bits {
        FingerprintBits::Bits9 => "9, semi-sorted".into(),
        FingerprintBits::Bits17 => "17, semi-sorted".into(),
        b => b.bits().to_string(),
    }
}

/// The plain layout of the same memory as a semi-sorted one, if `bits` is
/// semi-sorted.
fn plain_peer(bits: FingerprintBits) -> Option<FingerprintBits> {
    match bits {
        FingerprintBits::Bits9 => Some(FingerprintBits::Bits8),
        FingerprintBits::Bits17 => Some(FingerprintBits::Bits16),
        _ => None,
    }
}

/// Every width on a table of `bytes` bytes.
fn run_table(cfg: &Config, progress: &Progress, table: &str, bytes: usize, rows: &mut Vec<Row>) {
    let window = cfg.st_time;
    for bits in FingerprintBits::ALL {
        let say =
            |msg: &str| progress.say(&format!("layouts, {table} / {} bits: {msg}", bits.bits()));
        let cap = capacity_for_bytes(bits, bytes).expect("a table of the benchmarked size");
        let s = Ours(filter_with(cap, bits));
        let n = items_at(s.slots(), 0.95);

        // The fill from empty, timed; on a small table, again from a cleared
        // one until the window is spent (best of three windows).
        say(&format!("inserting {n} items"));
        let mut failed = 0;
        let mut fill_once = || {
            s.0.clear();
            let t = Instant::now();
            let f = fill_alone(&s, 0, n);
            let secs = t.elapsed().as_secs_f64();
            failed = failed.max(f);
            (n, secs)
        };
        let insert = if s.bytes() <= 8 << 20 {
            best_rate(window, fill_once)
        } else {
            let (ops, secs) = fill_once();
            ops as f64 / secs
        };

        say("lookups");
        let mut cursor = 0;
        let hit = best_rate(window, || {
            let t = Instant::now();
            std::hint::black_box(lookup_hits(&s, n, &mut cursor, STEP));
            (STEP, t.elapsed().as_secs_f64())
        });
        let (mut cursor, mut fp) = (0, 0);
        let miss = best_rate(window, || {
            let t = Instant::now();
            fp += lookup_misses(&s, &mut cursor, STEP);
            (STEP, t.elapsed().as_secs_f64())
        });
        let fp_queries = cursor;

        say("removes");
        let chunk = chunk_for(s.slots());
        let mut cursor = 0;
        let remove = best_rate(window, || {
            let d = timed_removes(&s, n, chunk, chunk, &mut cursor);
            (chunk, d.as_secs_f64())
        });

        say("contains_batch");
        let mut keys = vec![0u64; STEP as usize];
        let mut out = vec![false; STEP as usize];
        let mut next = fp_queries;
        let batch = best_rate(window, || {
            for k in &mut keys {
                *k = miss_key(next);
                next += 1;
            }
            let t = Instant::now();
            s.0.contains_batch(&keys, &mut out);
            let secs = t.elapsed().as_secs_f64();
            std::hint::black_box(&out);
            (STEP, secs)
        });

        rows.push(Row {
            table: table.to_string(),
            bits,
            bits_per_item: s.bytes() as f64 * 8.0 / n as f64,
            fpr: fp as f64 / fp_queries.max(1) as f64,
            fp_queries,
            failed,
            ops: [insert, hit, miss, remove, batch],
        });
    }
}

/// Runs the section: the small table, then the large one.
pub fn run(cfg: &Config, progress: &Progress) -> Vec<Row> {
    let mut rows = Vec::new();
    run_table(
        cfg,
        progress,
        &format!("{SMALL_KIB} KiB"),
        SMALL_KIB << 10,
        &mut rows,
    );
    run_table(
        cfg,
        progress,
        &format!("{} MiB", cfg.layouts_mib),
        (cfg.layouts_mib * (1u64 << 20) as f64) as usize,
        &mut rows,
    );
    rows
}

fn mops(x: f64) -> String {
    format!("{:.1} M", x / 1e6)
}

/// The section as markdown: one table, a row per layout and table size, each
/// figure with its ratio to 16-bit on the same table; then each semi-sorted
/// layout's lookups against the plain one of the same memory (9 bits against
/// 8, 17 against 16).
pub fn markdown(rows: &[Row], window: Duration) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "One thread; each table filled from empty to 95 % of its slots (the insert figure \
         times that fill), then the other figures at 95 % ({} ms windows, best of 3; \
         removes re-insert their keys untimed). Ratio in brackets: ops/s ÷ 16-bit's on \
         the same table. Bits per item = `memory_usage()` × 8 ÷ items at 95 %; the rate \
         is measured over the plain misses.\n",
        window.as_millis()
    );
    s.push_str("| table | bits | bits/item | measured FPR |");
    for op in OPS {
        let _ = write!(s, " {op} |");
    }
    s.push_str("\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    let base = |table: &str| {
        rows.iter()
            .find(|r| r.table == table && r.bits == FingerprintBits::Bits16)
            .map(|r| r.ops)
    };
    for r in rows {
        let _ = write!(
            s,
            "| {} | {} | {:.2} | {:.2e} (of {:.1} M) |",
            r.table,
            layout_name(r.bits),
            r.bits_per_item,
            r.fpr,
            r.fp_queries as f64 / 1e6
        );
        let b = base(&r.table);
        for (i, &ops) in r.ops.iter().enumerate() {
            match b {
                Some(b) => {
                    let _ = write!(s, " {} ({:.2}×) |", mops(ops), ops / b[i]);
                }
                None => {
                    let _ = write!(s, " {} |", mops(ops));
                }
            }
        }
        s.push('\n');
    }
    s.push('\n');
    for r in rows {
        if r.failed > 0 {
            let _ = writeln!(
                s,
                "- {} / {} bits: {} inserts failed filling to 95 %.",
                r.table,
                layout_name(r.bits),
                r.failed
            );
        }
    }
    for r in rows {
        let Some(peer) = plain_peer(r.bits) else {
            continue;
        };
        let Some(b) = rows
            .iter()
            .find(|p| p.table == r.table && p.bits == peer)
            .map(|p| p.ops)
        else {
            continue;
        };
        // Lookups are figures 1..=2 and 4 of OPS.
        let _ = writeln!(
            s,
            "- {} / {} bits: semi-sorted lookups at {:.2}× (hit), {:.2}× (miss) and \
             {:.2}× (batched miss) of {}-bit's speed, the plain layout of the same memory",
            r.table,
            layout_name(r.bits),
            r.ops[1] / b[1],
            r.ops[2] / b[2],
            r.ops[4] / b[4],
            peer.bits(),
        );
    }
    s
}
