//! Bits per item against the false-positive rate: the README's memory chart.
//!
//! ```text
//! cargo run --release -p benchmarks --example bits_chart            # writes docs/bits.svg
//! cargo run --release -p benchmarks --example bits_chart -- OUT.svg
//! ```
//!
//! Three curves, all computed, nothing timed:
//! - this crate: for each rate `ε`, the layout that
//!   `builder().false_positive_rate(ε)` picks, at the memory a filter built
//!   with `capacity(1_000_000)` reports (`memory_usage()`, per item of
//!   capacity): a step where a layout is sized for the highest load the
//!   builder sizes it for, rising where the builder sizes one for a lower
//!   load to meet the rate;
//! - a Bloom filter with the optimal number of hash functions:
//!   `log2(1/ε) / ln 2 ≈ 1.44 · log2(1/ε)` bits per item;
//! - the cuckoo filter's bound for buckets of four at 95 % load,
//!   `(log2(1/ε) + 3) / 0.95`: what a cuckoo filter with a fingerprint of any
//!   length in bits would need.
//!
//! It also prints where the crate needs fewer bits than the Bloom filter,
//! and the most it needs over it between those bands, which is what the
//! README's "when to pick it" says.

use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};
use plotters::prelude::*;

const OURS: RGBColor = RGBColor(214, 39, 40);
const BLOOM: RGBColor = RGBColor(255, 127, 14);
const BOUND: RGBColor = RGBColor(90, 90, 90);

/// Items the filters are built for.
const ITEMS: usize = 1_000_000;
/// The rates drawn: 10^-9 to 10^-1, this many points per decade.
const PER_DECADE: i32 = 200;
const DECADES: (i32, i32) = (-9, -1);

fn bloom(rate: f64) -> f64 {
    (1.0 / rate).log2() / std::f64::consts::LN_2
}

fn cuckoo_bound(rate: f64) -> f64 {
    ((1.0 / rate).log2() + 3.0) / 0.95
}

/// The layout the builder picks for `rate`, and bits per item of capacity;
/// `None` where no layout reaches the rate.
fn ours(rate: f64) -> Option<(FingerprintBits, f64)> {
    let f = CuckooFilter::builder()
        .capacity(ITEMS)
        .false_positive_rate(rate)
        .build()
        .ok()?;
    Some((
        f.fingerprint_bits(),
        8.0 * f.memory_usage() as f64 / ITEMS as f64,
    ))
}

/// The chart's label of a layout: `s` for semi-sorted, `rB` for ranked.
fn layout_name(bits: FingerprintBits) -> String {
    match bits {
        FingerprintBits::Bits9 | FingerprintBits::Bits17 => format!("{}s", bits.bits()),
        b => benchmarks::short_name(b),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "docs/bits.svg".into());
    let rates: Vec<f64> = (DECADES.0 * PER_DECADE..=DECADES.1 * PER_DECADE)
        .map(|i| 10f64.powf(f64::from(i) / f64::from(PER_DECADE)))
        .collect();
    let ours: Vec<(f64, Option<(FingerprintBits, f64)>)> =
        rates.iter().map(|&r| (r, ours(r))).collect();

    // Where each layout's step starts and ends, and where it is below Bloom.
    println!("| layout | rates it is picked for | bits per item | Bloom filter, bits per item |");
    println!("|---|---|--:|--:|");
    let mut i = 0;
    while i < ours.len() {
        let Some((bits, most)) = ours[i].1 else {
            i += 1;
            continue;
        };
        let mut j = i;
        while j + 1 < ours.len() && ours[j + 1].1.map(|o| o.0) == Some(bits) {
            j += 1;
        }
        let (lo, hi) = (ours[i].0, ours[j].0);
        // The rates rise with `i`: the most bits at the smallest rate
        // (sized for the lowest load), the least at the largest.
        let least = ours[j].1.map_or(most, |o| o.1);
        let cost = if most > least {
            format!("{least:.2} to {most:.2}")
        } else {
            format!("{least:.2}")
        };
        println!(
            "| {} | {lo:.1e} to {hi:.1e} | {cost} | {:.1} to {:.1} |",
            layout_name(bits),
            bloom(hi),
            bloom(lo)
        );
        i = j + 1;
    }
    println!();
    let mut below = Vec::new();
    let mut start = None;
    for (k, &(r, o)) in ours.iter().enumerate() {
        let wins = o.is_some_and(|(_, b)| b < bloom(r));
        match (wins, start) {
            (true, None) => start = Some(r),
            (false, Some(s)) => {
                below.push((s, ours[k - 1].0));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        below.push((s, ours.last().unwrap().0));
    }
    for (lo, hi) in &below {
        println!("fewer bits than a Bloom filter from {lo:.1e} to {hi:.1e}");
    }
    // The most it takes over a Bloom filter, in the ranges the README names.
    for (lo, hi) in [(1e-6, 1e-2), (1e-7, 1e-6), (1e-2, 3e-2)] {
        let worst = ours
            .iter()
            .filter(|&&(r, _)| r >= lo * 0.999 && r <= hi * 1.001)
            .filter_map(|&(r, o)| o.map(|(_, b)| (b / bloom(r), r)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((ratio, at)) = worst {
            println!(
                "from {lo:.0e} to {hi:.0e}: at most {:.1} % more bits than a Bloom filter (at {at:.1e})",
                (ratio - 1.0) * 100.0
            );
        }
    }

    let root = SVGBackend::new(&out, (640, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let x_range = 10f64.powi(DECADES.0)..10f64.powi(DECADES.1);
    let mut c = ChartBuilder::on(&root)
        .caption(
            "memory against false-positive rate (1 M items; s = semi-sorted, rB = ranked, B a word)",
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(44)
        .build_cartesian_2d(x_range.log_scale(), 0f64..46f64)?;
    c.configure_mesh()
        .x_labels(9)
        .y_labels(10)
        .x_label_formatter(&|x| format!("1e{}", x.log10().round()))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("false-positive rate")
        .y_desc("bits per item")
        .max_light_lines(0)
        .label_style(("sans-serif", 12))
        .draw()?;

    // Both straight lines on a log axis: their two ends are enough.
    let ends = [rates[0], rates[rates.len() - 1]];
    let bound: Vec<(f64, f64)> = ends.iter().map(|&r| (r, cuckoo_bound(r))).collect();
    c.draw_series(LineSeries::new(bound, BOUND.stroke_width(1)))?
        .label("cuckoo bound (log2(1/ε) + 3) / 0.95")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BOUND.stroke_width(1)));
    let bl: Vec<(f64, f64)> = ends.iter().map(|&r| (r, bloom(r))).collect();
    c.draw_series(LineSeries::new(bl, BLOOM.stroke_width(2)))?
        .label("Bloom filter, 1.44 · log2(1/ε)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLOOM.stroke_width(2)));

    // The step: only the corners, so the SVG stays small.
    let mut step: Vec<(f64, f64)> = Vec::new();
    let mut labels = Vec::new();
    let mut last: Option<FingerprintBits> = None;
    for &(r, o) in &ours {
        let Some((bits, b)) = o else { continue };
        if last != Some(bits) {
            if let Some(&(_, prev)) = step.last() {
                step.push((r, prev));
            }
            labels.push((r, b, bits));
            last = Some(bits);
        }
        step.push((r, b));
    }
    let step: Vec<(f64, f64)> = step
        .iter()
        .enumerate()
        .filter(|&(k, p)| {
            k == 0 || k + 1 == step.len() || p.1 != step[k - 1].1 || p.1 != step[k + 1].1
        })
        .map(|(_, &p)| p)
        .collect();
    c.draw_series(LineSeries::new(step, OURS.stroke_width(2)))?
        .label("lockfree-cuckoo-filter (the builder's layout)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], OURS.stroke_width(2)));
    c.draw_series(labels.into_iter().map(|(r, b, bits)| {
        Text::new(
            layout_name(bits),
            (r * 1.15, b + 2.6),
            ("sans-serif", 11).into_font().color(&OURS),
        )
    }))?;
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 11))
        .draw()?;
    root.present()?;
    eprintln!("wrote {out}");
    Ok(())
}
