//! What `scrub --plot` and `diff --plot` share: a log-scale axis for residuals, the legend
//! panel, the file name in a title, and writing PNG or SVG by the file's extension.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// A chart's axes: time (s) against a value (or its log10).
pub type TimeAxes<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart that draws itself on any plotters backend.
pub trait Chart {
    fn render<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static;
}

/// Draws `chart` to `path`, 1200 x 500: SVG for a `.svg` name, PNG otherwise.
pub fn save(path: &Path, chart: &impl Chart) -> anyhow::Result<()> {
    save_sized(path, chart, (1200, 500))
}

/// [`save`] at `size` pixels. The image is drawn in memory and written to a temporary file
/// next to `path`, then renamed onto it: a plot that fails (a full disk) leaves an earlier
/// file at `path` as it was and no partial file, and says why in plain words (QA 2026-12-08:
/// plots were written in place, so a failure truncated the earlier plot, and the error was
/// the backend's debug dump).
pub fn save_sized(path: &Path, chart: &impl Chart, size: (u32, u32)) -> anyhow::Result<()> {
    lavender_tutorial::plot::register_fonts().map_err(|e| anyhow::anyhow!("{e}"))?;
    lavender_replay::files::check_output(path)?;
    let svg = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    let drawing = |e: anyhow::Error| e.context(format!("drawing {}", path.display()));
    let bytes = if svg {
        let mut text = String::new();
        chart
            .render(SVGBackend::with_string(&mut text, size).into_drawing_area())
            .map_err(drawing)?;
        text.into_bytes()
    } else {
        let (width, height) = size;
        let mut rgb = vec![0u8; width as usize * height as usize * 3];
        chart
            .render(BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area())
            .map_err(drawing)?;
        lavender_tutorial::plot::encode_png(&rgb, size)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
    };
    lavender_tutorial::plot::write_replacing(path, &bytes)
        .map_err(|e| anyhow::anyhow!("cannot write the plot {}: {e}", path.display()))
}

/// The chart's two panels on a white page: the plot, and to its right the legend's, of
/// `legend_width` pixels (so that the legend never covers data).
pub fn panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    legend_width: u32,
) -> anyhow::Result<(DrawingArea<DB, Shift>, DrawingArea<DB, Shift>)>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (width, _) = root.dim_in_pixel();
    Ok(root.split_horizontally(width.saturating_sub(legend_width)))
}

/// Largest and smallest font size of a title line, px.
const TITLE_FONT: (u32, u32) = (20, 11);

/// Each line of `title` (lines split at `\n`) with the largest font size, from
/// [`TITLE_FONT`], at which it fits `width` pixels (the smallest if none does), and its
/// height. A caption wider than its panel was cut off at both ends (QA 2026-12-07: a long
/// `diff --plot` title lost its first file name).
pub fn title_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    width: u32,
) -> anyhow::Result<Vec<(String, u32, u32)>>
where
    DB::ErrorType: 'static,
{
    let mut lines = Vec::new();
    for line in title.lines().filter(|l| !l.is_empty()) {
        let mut size = TITLE_FONT.0;
        let height = loop {
            let (w, h) = area
                .estimate_text_size(line, &("sans-serif", size).into_font().into())
                .map_err(|e| err(&e))?;
            if w <= width || size <= TITLE_FONT.1 {
                break h;
            }
            size -= 1;
        };
        lines.push((line.to_string(), size, height));
    }
    Ok(lines)
}

/// Draws `title` at the top of `area`, each line centred and fitted to the width between the
/// margins ([`title_lines`]); returns the height it takes, px (0 for an empty title).
fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    margin: u32,
) -> anyhow::Result<u32>
where
    DB::ErrorType: 'static,
{
    let (width, _) = area.dim_in_pixel();
    let mut y = margin as i32;
    for (line, size, height) in title_lines(area, title, width.saturating_sub(2 * margin))? {
        let style = ("sans-serif", size).into_font().color(&BLACK).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ),
        );
        area.draw(&Text::new(line, (width as i32 / 2, y), style))
            .map_err(|e| err(&e))?;
        y += height as i32 + 4;
    }
    Ok((y - margin as i32) as u32)
}

/// Axes of time (s) against a log10 value, drawn with their mesh; the y labels give the
/// value itself (ticks fall between powers of ten). `title` is drawn above them, a line per
/// `\n`, each fitted to the width; an empty one draws none.
pub fn time_log_axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x, y): ((f64, f64), (f64, f64)),
    y_desc: &str,
) -> anyhow::Result<TimeAxes<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let margin = 12;
    let title_height = draw_title(area, title, margin)?;
    let mut builder = ChartBuilder::on(area);
    let mut chart = builder
        .margin(margin)
        .margin_top(margin + title_height)
        .x_label_area_size(44)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .label_style(("sans-serif", TICK_FONT))
        .axis_desc_style(("sans-serif", AXIS_FONT))
        .x_desc("time (s)")
        .y_desc(y_desc)
        .y_label_formatter(&|v| format!("{:.1e}", 10f64.powf(*v)))
        .draw()
        .map_err(|e| err(&e))?;
    Ok(chart)
}

/// Tick label and axis description font sizes, px: the tutorial's plots use 14 to 17 (QA
/// 2026-12-07: plotters' default drew the ticks 9.7 px high).
const TICK_FONT: u32 = 14;
const AXIS_FONT: u32 = 15;

/// Width of every panel's y label area, px: panels stacked on one page share their time
/// axis only when their plot areas start at the same x (QA 2026-12-07).
const Y_LABEL_AREA: u32 = 80;

/// The time axis of a plot from `t0` to `t1`, s, with 1.5 % of the span either side, so that
/// a mark at either end (a first divergence at a resumed log's first substep, a spike at the
/// last) stands clear of the axis and the edge (QA 2026-12-07: a diff's divergence line lay
/// on the y axis, unseen). A single frame (or frames at one time) gets a millisecond either
/// side, so that its ticks are distinct (they read one value ten times).
pub fn time_range(t0: f64, t1: f64) -> (f64, f64) {
    if t1 - t0 > 1e-9 {
        let pad = 0.015 * (t1 - t0);
        (t0 - pad, t1 + pad)
    } else {
        (t0 - 1e-3, t0 + 1e-3)
    }
}

/// Axes of time (s) against a linear value over `y`, drawn with their mesh; five ticks,
/// their values rounded to the axis' span ([`tick`]).
pub fn time_linear_axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    (x, y): ((f64, f64), (f64, f64)),
    y_desc: &str,
) -> anyhow::Result<TimeAxes<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(|e| err(&e))?;
    let span = (y.1 - y.0).max(f64::MIN_POSITIVE);
    chart
        .configure_mesh()
        .label_style(("sans-serif", TICK_FONT))
        .axis_desc_style(("sans-serif", AXIS_FONT))
        .x_desc("time (s)")
        .y_desc(y_desc)
        .y_labels(5)
        .y_label_formatter(&|v| tick(*v, span))
        .draw()
        .map_err(|e| err(&e))?;
    Ok(chart)
}

/// A linear axis' tick value `v` on an axis spanning `span`: zero where it is zero to the
/// axis' resolution (a tick at 0 read -2.776e-17), plain decimals for spans from 1e-2 to 1e4,
/// else scientific.
pub fn tick(v: f64, span: f64) -> String {
    if v.abs() < span * 1e-6 {
        "0".into()
    } else if (1e-2..1e4).contains(&span) {
        let decimals = (2.0 - span.log10().floor()).clamp(0.0, 4.0) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.2e}")
    }
}

/// A curve through `points` on `axes`; a lone point (a log of one frame) as a dot, which a
/// line through one point does not draw.
pub fn draw_curve<DB: DrawingBackend>(
    axes: &mut TimeAxes<'_, DB>,
    points: impl Iterator<Item = (f64, f64)>,
    color: RGBColor,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let points: Vec<(f64, f64)> = points.collect();
    if let [point] = points[..] {
        axes.draw_series([Circle::new(point, 3, color.filled())])
            .map_err(|e| err(&e))?;
    }
    axes.draw_series(LineSeries::new(points, color.stroke_width(1)))
        .map_err(|e| err(&e))?;
    Ok(())
}

/// A plotters error as an `anyhow` one.
pub fn err(e: &dyn std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// The range of a log10 axis for `values`: zeros cannot be shown on a log axis, so they sit
/// at the floor, which is lowered only as far as the smallest positive value needs (at most
/// to `10^floor`); with no positive finite value the axis spans `10^floor` to 1.
pub fn log_range(values: impl Iterator<Item = f64>, floor: f64) -> (f64, f64) {
    let positive = values.filter(|v| v.is_finite() && *v > 0.0).map(f64::log10);
    let (lo, hi) = positive.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo.is_finite() {
        let lo = lo.floor().max(floor);
        (lo, (hi.ceil() + 0.5).max(lo + 1.0))
    } else {
        (floor, 0.0)
    }
}

/// A file's name for a title, cut in the middle when longer than `max` characters.
pub fn short_name(path: &Path, max: usize) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= max {
        return name;
    }
    let keep = max.saturating_sub(3) / 2;
    let head: String = chars[..keep].iter().collect();
    let tail: String = chars[chars.len() - keep..].iter().collect();
    format!("{head}...{tail}")
}

/// How a legend entry is marked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A short line in the entry's colour.
    Line,
    /// A circle, as the chart marks points.
    Circle,
    /// No mark: a line of text continuing the entry above.
    Text,
}

/// The legend: one row per entry, a mark and its text, in a panel of its own (so that it
/// never covers data).
pub fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBColor, Mark)],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let style = ("sans-serif", 14).into_font().color(&BLACK);
    for (row, (text, color, mark)) in entries.iter().enumerate() {
        let y = 60 + 24 * row as i32;
        match mark {
            Mark::Line => area
                .draw(&PathElement::new(
                    vec![(8, y), (30, y)],
                    color.stroke_width(2),
                ))
                .map_err(|e| err(&e))?,
            Mark::Circle => area
                .draw(&Circle::new((18, y), 5, color.stroke_width(2)))
                .map_err(|e| err(&e))?,
            Mark::Text => {}
        }
        area.draw(&Text::new(text.clone(), (38, y - 8), style.clone()))
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_time_gets_a_time_axis_around_it() {
        let (lo, hi) = time_range(1.0, 2.0);
        assert!(
            (lo - 0.985).abs() < 1e-15 && (hi - 2.015).abs() < 1e-15,
            "{lo} {hi}"
        );
        let (lo, hi) = time_range(0.025, 0.025);
        assert!(
            (lo - 0.024).abs() < 1e-15 && (hi - 0.026).abs() < 1e-15,
            "{lo} {hi}"
        );
    }

    #[test]
    fn ticks_are_rounded_to_the_axis_span() {
        assert_eq!(tick(-2.776e-17, 0.7), "0");
        assert_eq!(tick(0.25, 0.7), "0.250");
        assert_eq!(tick(0.35, 0.37), "0.350");
        assert_eq!(tick(120.0, 300.0), "120");
        assert_eq!(tick(3e-5, 1e-4), "3.00e-5");
    }

    #[test]
    fn log_range_floors_zeros_and_spans_the_values() {
        assert_eq!(log_range([0.0, 3e-4, 20.0].into_iter(), -9.0), (-4.0, 2.5));
        assert_eq!(log_range([0.0, f64::NAN].into_iter(), -9.0), (-9.0, 0.0));
        assert_eq!(log_range([1e-20].into_iter(), -12.0), (-12.0, -11.0));
    }

    /// QA (2026-12-07): `diff --plot` of two long names cut its title off at the left.
    #[test]
    fn every_title_line_fits_its_panel() {
        lavender_tutorial::plot::register_fonts().unwrap();
        let mut pixels = vec![0u8; 1200 * 500 * 3];
        let root = BitMapBackend::with_buffer(&mut pixels, (1200, 500)).into_drawing_area();
        let (plot, _) = panels(&root, 290).unwrap();
        let width = 910 - 2 * 12;
        let title = "a-very-long-name-of-a-golden-run.lvlog vs another-long-name-of-a-run.lvlog\n\
                     largest deviation per substep, equal where both record; one log ends \
                     before substep 120";
        let lines = title_lines(&plot, title, width).unwrap();
        assert_eq!(lines.len(), 2);
        for (line, size, _) in &lines {
            let font = ("sans-serif", *size).into_font();
            let (w, _) = plot.estimate_text_size(line, &font.into()).unwrap();
            assert!(w <= width, "{line}: {w} px at {size} px, the panel {width}");
        }
        // A short line keeps the largest size.
        let short = title_lines(&plot, "run.lvlog vs again.lvlog", width).unwrap();
        assert_eq!(short[0].1, TITLE_FONT.0);
        assert!(title_lines(&plot, "", width).unwrap().is_empty());
    }

    #[test]
    fn long_names_are_cut_in_the_middle() {
        assert_eq!(short_name(Path::new("dir/run.lvlog"), 20), "run.lvlog");
        let cut = short_name(Path::new("a-very-long-file-name-of-a-run.lvlog"), 20);
        assert_eq!(cut, "a-very-l...un.lvlog");
        assert!(cut.chars().count() <= 20);
    }
}
