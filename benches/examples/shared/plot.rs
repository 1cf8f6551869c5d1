//! SVG drawing shared by the examples that chart their runs (`compare`,
//! `scaling`): a log-scale range, and lines of throughput over categories.
//! Not an example itself (cargo takes only `examples/*.rs` and
//! `examples/*/main.rs`); each includes it with `#[path]`.

use plotters::prelude::*;

pub type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A log axis's range, in millions, from the values: whole decades around
/// them.
pub fn log_range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = vals
        .filter(|v| *v > 0.0)
        .fold((f64::MAX, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi <= 0.0 {
        return (0.1, 10.0);
    }
    let lo = 10f64.powf((lo / 1e6).log10().floor());
    let hi = 10f64.powf((hi / 1e6).log10().ceil());
    (lo, if hi > lo { hi } else { lo * 10.0 })
}

/// One line per series over the categories `xs`, values in ops/s drawn in
/// millions on a log axis; a series's zeros are left out. The legend goes
/// in the corner `legend`, where the lines are not.
pub fn lines(
    area: &Area<'_>,
    title: &str,
    xs: &[String],
    y_desc: &str,
    series: &[(String, RGBColor, Vec<f64>)],
    legend: SeriesLabelPosition,
) -> Res<()> {
    let (lo, hi) = log_range(series.iter().flat_map(|s| s.2.iter().copied()));
    let fmt = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < xs.len() {
            xs[i as usize].clone()
        } else {
            String::new()
        }
    };
    let mut c = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.3..xs.len() as f64 - 0.7, (lo..hi).log_scale())?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(xs.len() + 2)
        .x_label_formatter(&fmt)
        .y_desc(y_desc)
        .draw()?;
    for (name, col, ys) in series {
        let col = *col;
        let pts: Vec<(f64, f64)> = ys
            .iter()
            .enumerate()
            .filter(|p| *p.1 > 0.0)
            .map(|(i, &y)| (i as f64, y / 1e6))
            .collect();
        c.draw_series(LineSeries::new(pts.clone(), col.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], col.stroke_width(2)));
        c.draw_series(
            pts.into_iter()
                .map(move |p| Circle::new(p, 3, col.filled())),
        )?;
    }
    c.configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 11))
        .draw()?;
    Ok(())
}
