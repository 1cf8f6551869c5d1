//! The charts of a run, as SVG: the whole run (single-thread bars per table,
//! throughput against threads per mix, our lookups by hash against the memory
//! limit), and the README's summary (one and two threads against the peers).

use super::*;
use plotters::prelude::*;

use super::plot::{self, log_range, Area, Res};

const IMPLS: [(&str, RGBColor); 8] = [
    (OURS, RGBColor(214, 39, 40)),
    ("atomic-cuckoo-filter", RGBColor(31, 119, 180)),
    ("cuckoofilter", RGBColor(44, 160, 44)),
    ("RwLock<cuckoofilter>", RGBColor(44, 160, 44)),
    ("Mutex<cuckoofilter>", RGBColor(148, 103, 189)),
    ("fastbloom AtomicBloomFilter", RGBColor(255, 127, 14)),
    (KERNEL, RGBColor(90, 90, 90)),
    (SharingKernel::NAME, RGBColor(150, 150, 150)),
];

fn color(name: &str) -> RGBColor {
    IMPLS.iter().find(|c| c.0 == name).map_or(BLACK, |c| c.1)
}

/// Grouped bars: one group per label, one bar per implementation present.
fn bars(
    area: &Area<'_>,
    title: &str,
    groups: &[(String, Vec<(&'static str, f64)>)],
    log: bool,
) -> Res<()> {
    let (names, (lo, hi)) = bars_of(groups);
    let k = groups.len() as f64;
    let labels: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    let fmt = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
            labels[i as usize].clone()
        } else {
            String::new()
        }
    };
    let mut b = ChartBuilder::on(area);
    b.caption(title, ("sans-serif", 18))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(60);
    let width = 0.8 / names.len().max(1) as f64;
    let draw = |names: &[&str], ys: &dyn Fn(f64) -> f64, y0: f64| {
        let mut v = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            for (ni, n) in names.iter().enumerate() {
                if let Some(r) = g.1.iter().find(|r| r.0 == *n) {
                    let x0 = gi as f64 - 0.4 + ni as f64 * width;
                    v.push((n.to_string(), [(x0, y0), (x0 + width * 0.9, ys(r.1))]));
                }
            }
        }
        v
    };
    if log {
        let mut c = b.build_cartesian_2d(-0.5..k - 0.5, (lo..hi).log_scale())?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(groups.len() + 2)
            .x_label_formatter(&fmt)
            .y_desc("million ops/s (log)")
            .draw()?;
        let rects = draw(&names, &|v| v / 1e6, lo);
        for n in &names {
            let col = color(n);
            c.draw_series(
                rects
                    .iter()
                    .filter(|r| r.0 == *n)
                    .map(move |r| Rectangle::new(r.1, col.filled())),
            )?
            .label(*n)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], col.filled()));
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 12))
            .draw()?;
    } else {
        let top = groups
            .iter()
            .flat_map(|g| g.1.iter().map(|r| r.1 / 1e6))
            .fold(0f64, f64::max)
            * 1.15;
        let mut c = b.build_cartesian_2d(-0.5..k - 0.5, 0f64..top.max(1e-3))?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(groups.len() + 2)
            .x_label_formatter(&fmt)
            .y_desc("million lookups/s")
            .draw()?;
        let rects = draw(&names, &|v| v / 1e6, 0.0);
        for n in &names {
            let col = color(n);
            c.draw_series(
                rects
                    .iter()
                    .filter(|r| r.0 == *n)
                    .map(move |r| Rectangle::new(r.1, col.filled())),
            )?
            .label(*n)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], col.filled()));
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 12))
            .draw()?;
    }
    Ok(())
}

/// Throughput against threads, one line per implementation.
fn lines(
    area: &Area<'_>,
    title: &str,
    threads: &[usize],
    series: &[(&'static str, Vec<f64>)],
) -> Res<()> {
    let xs: Vec<String> = threads.iter().map(|t| format!("{t} thr")).collect();
    let series: Vec<_> = series
        .iter()
        .map(|(name, ys)| (name.to_string(), color(name), ys.clone()))
        .collect();
    plot::lines(
        area,
        title,
        &xs,
        "million ops/s, all threads (log)",
        &series,
        SeriesLabelPosition::LowerRight,
    )
}

pub fn draw(path: &std::path::Path, res: &Results, cfg: &Config, machine: &str) -> Res<()> {
    let sizes = &cfg.sizes;
    let has_limit = res.ops.keys().any(|k| matches!(k.1, Kind::Limit { .. }));
    let rows = 1 + sizes.len() + usize::from(has_limit);
    let root = SVGBackend::new(path, (1500, 420 * rows as u32 + 60)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!("lockfree-cuckoo-filter vs peers — {machine}"),
        ("sans-serif", 20),
    )?;
    let areas = root.split_evenly((rows, 1));
    // Row 1: single-thread, one panel per size.
    let st = areas[0].split_evenly((1, sizes.len().max(1)));
    for (area, &size) in st.iter().zip(sizes) {
        let mut groups = Vec::new();
        for load in [50, 95] {
            for op in Op::ALL {
                if let Some(rows) = res.ops.get(&(size, Kind::Single { load, op })) {
                    groups.push((format!("{} {load}%", op.short()), rows.clone()));
                }
            }
        }
        bars(
            area,
            &format!("single thread, {} table", size.name()),
            &groups,
            true,
        )?;
    }
    // One row per size: the three mixes.
    for (row, &size) in sizes.iter().enumerate() {
        let panels = areas[1 + row].split_evenly((1, Mix::ALL.len()));
        for (m, (area, mix)) in panels.iter().zip(Mix::ALL).enumerate() {
            let mut series: Vec<(&'static str, Vec<f64>)> = Vec::new();
            for &(name, _) in &IMPLS {
                let ys: Vec<f64> = cfg
                    .threads
                    .iter()
                    .map(|&t| {
                        let k = Kind::Conc { mix: m, threads: t };
                        res.get(size, k, name).unwrap_or(0.0)
                    })
                    .collect();
                if ys.iter().any(|&y| y > 0.0) {
                    series.push((name, ys));
                }
            }
            let title = format!(
                "{} table, {} lookup/insert/remove @ 90 %",
                size.name(),
                mix.name()
            );
            lines(area, &title, &cfg.threads, &series)?;
        }
    }
    if has_limit {
        let size = Size::Big;
        let mut groups = Vec::new();
        for batched in [false, true] {
            if let Some(rows) = res.ops.get(&(size, Kind::Limit { batched })) {
                let o = res.get(size, Kind::Limit { batched }, OURS).unwrap_or(0.0);
                let l = res
                    .get(size, Kind::Limit { batched }, KERNEL)
                    .unwrap_or(f64::NAN);
                let label = format!(
                    "{}: ours = {:.0} % of limit",
                    if batched { "batched" } else { "plain" },
                    100.0 * o / l
                );
                groups.push((label, rows.clone()));
            }
        }
        let area = &areas[rows - 1];
        let half = area.split_evenly((1, 2));
        bars(
            &half[0],
            "big table: lookups by hash vs the memory limit",
            &groups,
            false,
        )?;
    }
    root.present()?;
    Ok(())
}

/// The README's chart: per table, single-thread lookups and inserts at 95 %
/// load and the 90/5/5 mix on one and two threads, one bar per
/// implementation (no Mutex, no limits), on a log scale.
pub fn draw_summary(path: &std::path::Path, res: &Results) -> Res<()> {
    // cuckoofilter is shared behind a RwLock in the mixes: one bar, one colour.
    let names = [
        OURS,
        "atomic-cuckoo-filter",
        "cuckoofilter",
        "fastbloom AtomicBloomFilter",
    ];
    let pick = |size: Size, kind: Kind| -> Vec<(&'static str, f64)> {
        res.ops
            .get(&(size, kind))
            .map(|rows| {
                rows.iter()
                    .map(|r| match r.0 {
                        "RwLock<cuckoofilter>" => ("cuckoofilter", r.1),
                        _ => *r,
                    })
                    .filter(|r| names.contains(&r.0))
                    .collect()
            })
            .unwrap_or_default()
    };
    let sizes: Vec<Size> = [Size::Small, Size::Big]
        .into_iter()
        .filter(|&s| res.ops.keys().any(|k| k.0 == s))
        .collect();
    let width = 460 * sizes.len().max(1) as u32;
    let root = SVGBackend::new(path, (width, 320)).into_drawing_area();
    root.fill(&WHITE)?;
    // The legend is a strip of its own, so that it never covers a bar.
    let (strip, body) = root.split_vertically(24);
    let mut x = 60;
    for n in names {
        let label = if n == "cuckoofilter" {
            "cuckoofilter (RwLock in 90/5/5)"
        } else {
            n
        };
        strip.draw(&Rectangle::new([(x, 8), (x + 10, 18)], color(n).filled()))?;
        strip.draw(&Text::new(label, (x + 14, 8), ("sans-serif", 12)))?;
        x += 24 + 7 * label.len() as i32;
    }
    let panels = body.split_evenly((1, sizes.len().max(1)));
    for (area, &size) in panels.iter().zip(&sizes) {
        let mut groups = Vec::new();
        for (op, label) in [(Op::Hit, "hit"), (Op::Miss, "miss"), (Op::Insert, "insert")] {
            let rows = pick(size, Kind::Single { load: 95, op });
            if !rows.is_empty() {
                groups.push((label.to_string(), rows));
            }
        }
        // Mix::ALL[1] is 90/5/5.
        for threads in [1, 2] {
            let rows = pick(size, Kind::Conc { mix: 1, threads });
            if !rows.is_empty() {
                groups.push((format!("90/5/5 ×{threads}"), rows));
            }
        }
        let title = match size {
            Size::Small => "small table (in cache)".to_string(),
            _ => "big table (far beyond cache)".to_string(),
        };
        compact_bars(area, &title, &groups)?;
    }
    root.present()?;
    Ok(())
}

/// Grouped bars on a log scale, without light grid lines or legend, small
/// fonts: the README's chart, kept to a few kilobytes.
fn compact_bars(
    area: &Area<'_>,
    title: &str,
    groups: &[(String, Vec<(&'static str, f64)>)],
) -> Res<()> {
    let (names, (lo, hi)) = bars_of(groups);
    let labels: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    let fmt = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
            labels[i as usize].clone()
        } else {
            String::new()
        }
    };
    let k = groups.len() as f64;
    let mut c = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 14))
        .margin(6)
        .x_label_area_size(22)
        .y_label_area_size(48)
        .build_cartesian_2d(-0.5..k - 0.5, (lo..hi).log_scale())?;
    c.configure_mesh()
        .disable_x_mesh()
        .max_light_lines(0)
        .x_labels(groups.len() + 2)
        .x_label_formatter(&fmt)
        .y_label_formatter(&|y| format!("{y}"))
        .y_desc("million ops/s (log)")
        .label_style(("sans-serif", 11))
        .draw()?;
    let width = 0.8 / names.len().max(1) as f64;
    for (ni, n) in names.iter().enumerate() {
        let col = color(n);
        let mut rects = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            if let Some(r) = g.1.iter().find(|r| r.0 == *n) {
                let x0 = gi as f64 - 0.4 + ni as f64 * width;
                rects.push([(x0, lo), (x0 + width * 0.9, r.1 / 1e6)]);
            }
        }
        c.draw_series(
            rects
                .into_iter()
                .map(move |r| Rectangle::new(r, col.filled())),
        )?;
    }
    Ok(())
}

/// The implementations that have a bar in `groups`, in the legend's order,
/// and the range of their values on a log axis.
fn bars_of(groups: &[(String, Vec<(&'static str, f64)>)]) -> (Vec<&'static str>, (f64, f64)) {
    let names = IMPLS
        .iter()
        .map(|c| c.0)
        .filter(|n| groups.iter().any(|g| g.1.iter().any(|r| r.0 == *n)))
        .collect();
    let range = log_range(groups.iter().flat_map(|g| g.1.iter().map(|r| r.1)));
    (names, range)
}
