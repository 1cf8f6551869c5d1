//! For each false-positive rate asked, the layout the builder picks, the
//! memory it costs per item and the rate measured, beside a Bloom filter's
//! `1.44 · log2(1/ε)` bits per item. Reproducible: every filter has the
//! fixed seed `DEFAULT_SEED`.
//!
//! ```text
//! cargo run --release --example rates [items]
//! ```
//!
//! Each filter is built for `items` items (2 000 000 by default) and filled
//! with them; the rate is measured over twice as many keys never inserted.
//! Each row is checked against its target: bits per item at most the figure
//! given, and the false positives counted at most 1.15 times as many as the
//! rate asked expects, or, where it expects few (at 10⁻⁶, four), at most
//! three standard deviations of such a count above them: a count of four or
//! five says little of a rate either way.

use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits, DEFAULT_SEED};

/// Rate asked, and the most bits per item allowed for it (at 2 %, the memory
/// of 8-bit fingerprints: the semi-sorted 9-bit layout's).
const TARGETS: [(f64, f64); 6] = [
    (0.03, 8.7),
    (0.02, 8.7),
    (0.01, 13.9),
    (0.002, 17.3),
    (1e-4, 17.3),
    (1e-6, 34.5),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let items: u64 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("items must be a number: {e}"))?,
        None => 2_000_000,
    };
    let probes = 2 * items;
    println!("{items} items, rate measured over {probes} absent keys, seed DEFAULT_SEED\n");
    println!(
        "| rate asked | layout | bits per item | target | measured rate | bound at load | Bloom 1.44·log2(1/ε) | met |"
    );
    println!("|---|---|--:|--:|--:|--:|--:|---|");
    let mut all_met = true;
    for (rate, target_bits) in TARGETS {
        let filter = CuckooFilter::builder()
            .capacity(items as usize)
            .false_positive_rate(rate)
            .seed(DEFAULT_SEED)
            .build()?;
        for k in 0..items {
            filter.insert(&k)?;
        }
        let false_positives = (items..items + probes)
            .filter(|k| filter.contains(k))
            .count();
        let measured = false_positives as f64 / probes as f64;
        let bits_per_item = filter.memory_usage() as f64 * 8.0 / items as f64;
        let bloom = 1.44 * (1.0 / rate).log2();
        // A count of rare events is Poisson: its deviation is its root.
        let expected = rate * probes as f64;
        let allowed = (1.15 * expected).max(expected + 3.0 * expected.sqrt());
        let met = bits_per_item <= target_bits && false_positives as f64 <= allowed;
        all_met &= met;
        println!(
            "| {} | {} | {bits_per_item:.2} | ≤ {target_bits} | {} | {} | {bloom:.1} | {} |",
            percent(rate),
            layout(filter.fingerprint_bits()),
            percent(measured),
            percent(filter.false_positive_rate()),
            if met { "yes" } else { "no" },
        );
    }
    println!(
        "\n{}",
        if all_met {
            "every target met"
        } else {
            "some targets not met (see the last column)"
        }
    );
    Ok(())
}

/// A layout's name.
fn layout(bits: FingerprintBits) -> String {
    match bits {
        FingerprintBits::Bits9 => "9-bit semi-sorted".into(),
        FingerprintBits::Bits17 => "17-bit semi-sorted".into(),
        FingerprintBits::Ranked8 => "ranked 8 (9.5-bit)".into(),
        FingerprintBits::Ranked7 => "ranked 7 (10.6-bit)".into(),
        FingerprintBits::Ranked6 => "ranked 6 (12-bit)".into(),
        FingerprintBits::Ranked5 => "ranked 5 (14-bit)".into(),
        FingerprintBits::Ranked3 => "ranked 3 (22.1-bit)".into(),
        b => format!("{}-bit", b.bits()),
    }
}

/// A rate as a percentage with three significant digits (in scientific
/// notation, as a fraction, below 10^-5).
fn percent(rate: f64) -> String {
    if rate == 0.0 {
        return "0".into();
    }
    if rate < 1e-5 {
        return format!("{rate:.2e}");
    }
    let p = rate * 100.0;
    let decimals = (2 - p.log10().floor() as i32).max(0) as usize;
    format!("{p:.decimals$} %")
}
