//! Shared plotting helpers: line charts (linear or log y), x-y path plots, annotated heatmaps and a
//! stable/unstable map, each written as PNG and SVG.
//!
//! Text is drawn with DejaVu Sans, embedded through the `dejavu` crate and registered once with
//! plotters' ab_glyph backend under the family names `sans-serif`, `serif` and `monospace`, so the
//! plots render on a machine with no system fonts at all.
//!
//! Log axes are drawn as `log10(y)` on a linear axis labelled `1e-k`; values at or below the
//! chart's `log_floor` (including exact zeros, which a log axis cannot show) are drawn at the floor,
//! and the title says so.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

use crate::TutorialError;

/// The colour type of [`Series`] (re-exported so that callers need not depend on plotters).
pub use plotters::style::RGBColor;

/// Registers the embedded fonts with plotters (once per process).
pub fn register_fonts() -> Result<(), TutorialError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        let sans = dejavu::sans::regular();
        let bold = dejavu::sans::bold();
        let mono = dejavu::sans_mono::regular();
        [
            ("sans-serif", FontStyle::Normal, sans),
            ("sans-serif", FontStyle::Bold, bold),
            ("serif", FontStyle::Normal, sans),
            ("monospace", FontStyle::Normal, mono),
        ]
        .into_iter()
        .all(|(name, style, bytes)| plotters::style::register_font(name, style, bytes).is_ok())
    });
    if ok {
        Ok(())
    } else {
        Err(TutorialError::Font)
    }
}

/// A distinguishable colour for series `i` (Okabe-Ito palette, safe for colour-blind readers).
pub fn color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 7] = [
        RGBColor(0, 114, 178),
        RGBColor(230, 159, 0),
        RGBColor(0, 158, 115),
        RGBColor(213, 94, 0),
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
    ];
    PALETTE[i % PALETTE.len()]
}

/// One named curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// `(x, y)` points in data units.
    pub points: Vec<(f64, f64)>,
    /// Line colour.
    pub color: RGBColor,
    /// Draw dashed (for references such as bounds or closed forms).
    pub dashed: bool,
}

impl Series {
    /// A solid series.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, color: RGBColor) -> Self {
        Series {
            name: name.into(),
            points,
            color,
            dashed: false,
        }
    }

    /// The same series, dashed.
    pub fn dashed(mut self) -> Self {
        self.dashed = true;
        self
    }
}

/// A line chart (one panel).
#[derive(Debug, Clone)]
pub struct LineChart {
    /// Title above the panel.
    pub title: String,
    /// x-axis label, with units.
    pub x_label: String,
    /// y-axis label, with units.
    pub y_label: String,
    /// The curves.
    pub series: Vec<Series>,
    /// Log y axis with this floor (values at or below it are drawn at it); `None` for linear.
    pub log_floor: Option<f64>,
    /// Log x axis (decades; points at x <= 0 are left out); linear if false.
    pub log_x: bool,
    /// Where the legend goes if that corner covers no more data than any other (the corner
    /// covering the fewest points is chosen otherwise).
    pub legend: Corner,
}

/// A corner of the plotting area, for the legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    /// Upper left.
    UpperLeft,
    /// Upper right.
    UpperRight,
    /// Lower left.
    LowerLeft,
    /// Lower right.
    LowerRight,
    /// Middle of the right edge.
    MiddleRight,
}

impl Corner {
    /// The legend's corner: of the four corners and the middle of the right edge, the one
    /// whose legend box (`box_w` x `box_h` as fractions of the plotting area) covers the fewest
    /// of `points` (fractions of the area from the lower left), `self` on a tie. A legend over
    /// a series' extreme values (the deepest troughs, the end of a run) hides what the plot is
    /// for.
    fn least_covering(self, points: &[(f64, f64)], box_w: f64, box_h: f64) -> Corner {
        let region = |c: Corner| -> (f64, f64, f64, f64) {
            let (x0, x1) = match c {
                Corner::UpperLeft | Corner::LowerLeft => (0.0, box_w),
                _ => (1.0 - box_w, 1.0),
            };
            let (y0, y1) = match c {
                Corner::UpperLeft | Corner::UpperRight => (1.0 - box_h, 1.0),
                Corner::LowerLeft | Corner::LowerRight => (0.0, box_h),
                Corner::MiddleRight => (0.5 - box_h / 2.0, 0.5 + box_h / 2.0),
            };
            (x0, x1, y0, y1)
        };
        let covered = |c: Corner| {
            let (x0, x1, y0, y1) = region(c);
            points
                .iter()
                .filter(|&&(x, y)| x >= x0 && x <= x1 && y >= y0 && y <= y1)
                .count()
        };
        let candidates = [
            self,
            Corner::UpperRight,
            Corner::UpperLeft,
            Corner::LowerRight,
            Corner::LowerLeft,
            Corner::MiddleRight,
        ];
        candidates
            .into_iter()
            .min_by_key(|&c| covered(c))
            .unwrap_or(self)
    }

    fn position(self) -> SeriesLabelPosition {
        match self {
            Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
            Corner::UpperRight => SeriesLabelPosition::UpperRight,
            Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
            Corner::LowerRight => SeriesLabelPosition::LowerRight,
            Corner::MiddleRight => SeriesLabelPosition::MiddleRight,
        }
    }
}

/// Writes `<stem>.png` and `<stem>.svg` with the given panels stacked vertically.
pub fn line_charts(
    stem: &Path,
    panels: &[LineChart],
    size: (u32, u32),
) -> Result<Vec<PathBuf>, TutorialError> {
    save(stem, size, &Panels(panels))
}

/// An x-y path plot with equal axis scales, clipped to a square view.
#[derive(Debug, Clone)]
pub struct PathPlot {
    /// Title.
    pub title: String,
    /// x-axis label, with units.
    pub x_label: String,
    /// y-axis label, with units.
    pub y_label: String,
    /// Half-width of the square view centred at the origin, in data units; parts of a path
    /// outside it are clipped (and the legend name should say where the path went).
    pub half_width: f64,
    /// The paths.
    pub series: Vec<Series>,
}

/// Writes `<stem>.png` and `<stem>.svg` with a path plot.
pub fn path_plot(stem: &Path, plot: &PathPlot) -> Result<Vec<PathBuf>, TutorialError> {
    save(stem, (900, 900), plot)
}

/// A heatmap whose cells are annotated with their values; darker means smaller (log colour scale).
#[derive(Debug, Clone)]
pub struct Heatmap {
    /// Title.
    pub title: String,
    /// Label of the horizontal axis (columns), with units.
    pub x_label: String,
    /// Label of the vertical axis (rows), with units.
    pub y_label: String,
    /// One label per column.
    pub col_labels: Vec<String>,
    /// One label per row (row 0 is drawn at the top).
    pub row_labels: Vec<String>,
    /// `values[row][col]`.
    pub values: Vec<Vec<f64>>,
    /// The quantity and unit of the values, for the colour bar.
    pub value_label: String,
}

/// Writes `<stem>.png` and `<stem>.svg` with an annotated heatmap.
pub fn heatmap(stem: &Path, map: &Heatmap) -> Result<Vec<PathBuf>, TutorialError> {
    save(stem, (1000, 760), map)
}

/// A map of stable and unstable cells over two parameters, with an optional predicted boundary.
#[derive(Debug, Clone)]
pub struct StabilityMap {
    /// Title.
    pub title: String,
    /// x-axis label, with units.
    pub x_label: String,
    /// y-axis label, with units.
    pub y_label: String,
    /// Cell centres along x (uniformly spaced).
    pub xs: Vec<f64>,
    /// Cell centres along y (uniformly spaced).
    pub ys: Vec<f64>,
    /// `stable[iy][ix]`.
    pub stable: Vec<Vec<bool>>,
    /// A predicted boundary curve, drawn dashed, with its legend name.
    pub boundary: Option<Series>,
    /// Points to mark (e.g. the gains the tests use), with labels.
    pub marks: Vec<(String, f64, f64)>,
}

/// Writes `<stem>.png` and `<stem>.svg` with a stability map.
pub fn stability_map(stem: &Path, map: &StabilityMap) -> Result<Vec<PathBuf>, TutorialError> {
    save(stem, (950, 850), map)
}

type DrawResult = Result<(), String>;

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Something that can draw itself on any plotters backend.
trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult;
}

/// Draws the same figure into `<stem>.png` and `<stem>.svg`.
fn save(
    stem: &Path,
    size: (u32, u32),
    figure: &impl Figure,
) -> Result<Vec<PathBuf>, TutorialError> {
    register_fonts()?;
    let name = stem
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plot".into());
    if let Some(parent) = stem.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| TutorialError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let png = stem.with_file_name(format!("{name}.png"));
    let svg = stem.with_file_name(format!("{name}.svg"));
    let plot_err = |path: &Path, message: String| TutorialError::Plot {
        path: path.to_path_buf(),
        message,
    };
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TutorialError::Io { path, source }
    };
    // Drawn in memory, then written beside the file and renamed onto it: a plot that fails
    // (a full disk, a directory that cannot be written) leaves an earlier file whole, and says
    // why in plain words (QA 2026-12-08: `lavender bench --plot-dir` on a read-only directory
    // ended minutes of timing with the drawing backend's debug dump).
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| plot_err(&png, e.to_string()))?;
        figure.draw(&root).map_err(|e| plot_err(&png, e))?;
        root.present().map_err(|e| plot_err(&png, e.to_string()))?;
    }
    let png_bytes = encode_png(&rgb, size).map_err(|e| plot_err(&png, e))?;
    write_replacing(&png, &png_bytes).map_err(write_err(&png))?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| plot_err(&svg, e.to_string()))?;
        figure.draw(&root).map_err(|e| plot_err(&svg, e))?;
        root.present().map_err(|e| plot_err(&svg, e.to_string()))?;
    }
    write_replacing(&svg, text.as_bytes()).map_err(write_err(&svg))?;
    Ok(vec![png, svg])
}

/// An RGB image (`size` pixels, 3 bytes each, as plotters' bitmap backend draws into a
/// buffer) as PNG bytes.
pub fn encode_png(rgb: &[u8], (width, height): (u32, u32)) -> Result<Vec<u8>, String> {
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        rgb,
        width,
        height,
        image::ColorType::Rgb8,
    )
    .map_err(|e| format!("encoding PNG: {e}"))?;
    Ok(png)
}

/// Writes `bytes` to a new file beside `path` (beside its target, if `path` is a symbolic
/// link to an existing file) and renames it onto `path`: never truncated in place, so a
/// failure leaves an earlier file as it was, and a reader of the old file keeps it. The
/// temporary file is removed on failure.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = match is_link {
        true => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        false => path.to_path_buf(),
    };
    let mut name = target
        .file_name()
        .map_or_else(|| "plot".into(), |n| n.to_string_lossy().into_owned());
    // Room for the suffix within the usual 255-byte limit of a file name.
    while name.len() > 200 {
        name.pop();
    }
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let partial = target.with_file_name(format!(".{name}.{}-{n}.partial", std::process::id()));
    let written = std::fs::write(&partial, bytes).and_then(|()| std::fs::rename(&partial, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

struct Panels<'a>(&'a [LineChart]);

impl Figure for Panels<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let areas = root.split_evenly((self.0.len().max(1), 1));
        for (panel, area) in self.0.iter().zip(areas.iter()) {
            draw_line_panel(area, panel)?;
        }
        Ok(())
    }
}

/// `1e-k` at whole decades, nothing in between.
fn decade_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-6 {
        format!("1e{}", v.round() as i64)
    } else {
        String::new()
    }
}

/// The spacing plotters gives the labelled ticks of an axis over `lo..hi` with at most
/// `max_points` of them: a power of ten divided by 1, 2, 5, 10, 20, ... as finely as the
/// ticks that fall in the range allow (the rule of its key points for `f64` ranges).
fn tick_spacing(lo: f64, hi: f64, max_points: usize) -> f64 {
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return 1.0;
    }
    let aligned_count = |step: f64| {
        let first = (lo / step).ceil() * step;
        let last = (hi / step).floor() * step;
        (1.0 + (last - first) / step).round() as usize
    };
    let mut scale = 10f64.powf(span.log10().floor());
    if 1 + (span / scale).floor() as usize > max_points {
        scale *= 10.0;
    }
    loop {
        let coarser = scale;
        for divisor in [2.0, 5.0, 10.0] {
            if aligned_count(coarser / divisor) > max_points {
                return scale;
            }
            scale = coarser / divisor;
        }
    }
}

/// Tick labels for a linear axis over `lo..hi`, with the decimals plotters' tick spacing
/// needs ([`tick_spacing`], its default of 11 labels) and in scientific notation for tiny or
/// huge values. Plotters' own labels print at most five decimals, so an axis of micrometres
/// read 0.0 at every tick, and a tick at zero reached by rounding read -0.0 (QA).
fn linear_ticks(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let span = (hi - lo).abs();
    let exponent = |v: f64| {
        if v > 0.0 && v.is_finite() {
            v.log10().floor() as i32
        } else {
            0
        }
    };
    let step = exponent(tick_spacing(lo, hi, 11) * (1.0 + 1e-9));
    let top = exponent(lo.abs().max(hi.abs()));
    let scientific = !(-3..5).contains(&top);
    move |&v| {
        // A tick at zero computed as a rounding error of the range's ends.
        let v = if v.abs() <= span * 1e-9 { 0.0 } else { v };
        if scientific {
            if v == 0.0 {
                return "0".into();
            }
            let d = (top - step).clamp(0, 6) as usize;
            format!("{v:.d$e}")
        } else {
            let d = (-step).clamp(0, 9) as usize;
            format!("{v:.d$}")
        }
    }
}

/// Finite `(min, max)` of the values, or `None`.
fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Widens a degenerate range and pads it by `pad` of its span on both sides.
fn padded((lo, hi): (f64, f64), pad: f64) -> (f64, f64) {
    if hi - lo <= f64::EPSILON * (lo.abs() + hi.abs()).max(1e-300) {
        let d = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        (lo - d, hi + d)
    } else {
        let d = pad * (hi - lo);
        (lo - d, hi + d)
    }
}

fn draw_line_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &LineChart,
) -> DrawResult {
    let transform = |y: f64| match spec.log_floor {
        Some(floor) => y.max(floor).log10(),
        None => y,
    };
    // A log x axis is drawn in decades: x -> log10(x), NaN (left out) at x <= 0.
    let transform_x = |x: f64| match spec.log_x {
        true if x > 0.0 => x.log10(),
        true => f64::NAN,
        false => x,
    };
    let all = || spec.series.iter().flat_map(|s| s.points.iter().copied());
    let (x0, x1) = finite_range(all().map(|p| transform_x(p.0))).unwrap_or((0.0, 1.0));
    let (x0, x1) = match (spec.log_x, x1 > x0) {
        (true, _) if x1.ceil() > x0.floor() => (x0.floor(), x1.ceil()),
        (true, _) => (x0.floor() - 1.0, x1.ceil() + 1.0),
        (false, true) => (x0, x1),
        (false, false) => padded((x0, x1), 0.0),
    };
    let y_range = finite_range(all().map(|p| transform(p.1))).unwrap_or((0.0, 1.0));
    let (y0, y1) = match spec.log_floor {
        Some(_) => {
            let (lo, hi) = (y_range.0.floor(), y_range.1.ceil());
            if hi > lo {
                (lo, hi)
            } else {
                (lo - 1.0, hi + 1.0)
            }
        }
        None => padded(y_range, 0.05),
    };
    let title = match spec.log_floor {
        Some(floor) => format!("{} (values <= {floor:.0e} drawn at it)", spec.title),
        None => spec.title.clone(),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(78)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let decades = (y1 - y0).round() as usize;
    let (x_ticks, y_ticks) = (linear_ticks(x0, x1), linear_ticks(y0, y1));
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(spec.x_label.as_str())
        .y_desc(spec.y_label.as_str())
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17));
    if spec.log_x {
        mesh.x_labels(((x1 - x0).round() as usize + 1).min(12))
            .x_label_formatter(&decade_label);
    } else {
        mesh.x_label_formatter(&x_ticks);
    }
    if spec.log_floor.is_some() {
        mesh.y_labels((decades + 1).min(12))
            .y_label_formatter(&decade_label);
    } else {
        mesh.y_label_formatter(&y_ticks);
    }
    mesh.draw().map_err(err)?;
    // Every drawn point as a fraction of the plotting area, for the legend's placement.
    let mut drawn: Vec<(f64, f64)> = Vec::new();
    for s in &spec.series {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| (transform_x(x), transform(y)))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let fractions: Vec<(f64, f64)> = pts
            .iter()
            .map(|&(x, y)| ((x - x0) / (x1 - x0), (y - y0) / (y1 - y0)))
            .collect();
        drawn.extend(along_segments(&fractions, 0.01));
        // Thick polylines are drawn with mitred joins, which turn rounding noise (zig-zags of a few
        // pixels) into long spikes; dense series are therefore drawn one pixel wide.
        let style = s.color.stroke_width(if pts.len() > 300 { 1 } else { 2 });
        let color = s.color;
        let anno = if s.dashed {
            chart
                .draw_series(DashedLineSeries::new(pts, 8, 5, style))
                .map_err(err)?
        } else {
            chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?
        };
        let dashed = s.dashed;
        anno.label(s.name.as_str())
            .legend(move |at| legend_sample(at, color, dashed));
    }
    // The legend box: about 8 px a character of the longest name plus the line sample, and
    // 20 px a row, with the margin plotters leaves from the edges.
    let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
    let longest = spec.series.iter().map(|s| s.name.chars().count()).max();
    let box_w = (longest.unwrap_or(0) as f64 * 8.0 + 60.0) / f64::from(plot_w.max(1));
    let box_h = (spec.series.len() as f64 * 20.0 + 30.0) / f64::from(plot_h.max(1));
    let corner = spec.legend.least_covering(&drawn, box_w, box_h);
    chart
        .configure_series_labels()
        .position(corner.position())
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// The points of a polyline and, between each two, points at most `step` apart: what a
/// legend would cover is the lines, not only their vertices (QA 2026-12-07: the five-point
/// sweeps of the accuracy-cost plot ran under its legend between their points).
fn along_segments(points: &[(f64, f64)], step: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len());
    for pair in points.windows(2) {
        let ((ax, ay), (bx, by)) = (pair[0], pair[1]);
        let length = (bx - ax).hypot(by - ay);
        // Capped so that a segment leaving the area by far adds no unbounded work.
        let pieces = ((length / step).ceil() as usize).clamp(1, 1000);
        out.extend((0..pieces).map(|i| {
            let t = i as f64 / pieces as f64;
            (ax + t * (bx - ax), ay + t * (by - ay))
        }));
    }
    out.extend(points.last());
    out
}

/// Liang-Barsky clipping of the segment `a -> b` to the square `[-h, h]^2`.
/// Returns the visible part and whether its start and end were cut.
#[allow(clippy::type_complexity)]
fn clip_segment(
    a: (f64, f64),
    b: (f64, f64),
    h: f64,
) -> Option<((f64, f64), (f64, f64), bool, bool)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0 + h), (dx, h - a.0), (-dy, a.1 + h), (dy, h - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| (a.0 + t * dx, a.1 + t * dy);
    Some((at(t0), at(t1), t0 > 0.0, t1 < 1.0))
}

/// Splits a polyline into the runs visible in `[-h, h]^2`.
fn clip_runs(points: &[(f64, f64)], h: f64) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for w in points.windows(2) {
        match clip_segment(w[0], w[1], h) {
            Some((a, b, cut_start, cut_end)) => {
                if cur.is_empty() || cut_start {
                    if !cur.is_empty() {
                        runs.push(std::mem::take(&mut cur));
                    }
                    cur.push(a);
                }
                cur.push(b);
                if cut_end {
                    runs.push(std::mem::take(&mut cur));
                }
            }
            None => {
                if !cur.is_empty() {
                    runs.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        runs.push(cur);
    }
    runs
}

impl Figure for PathPlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let h = self.half_width;
        let mut chart = ChartBuilder::on(root)
            .caption(self.title.as_str(), ("sans-serif", 24))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(62)
            .build_cartesian_2d(-h..h, -h..h)
            .map_err(err)?;
        let ticks = linear_ticks(-h, h);
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&ticks)
            .y_label_formatter(&ticks)
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(err)?;
        for s in &self.series {
            let color = s.color;
            let width = if s.dashed { 1 } else { 2 };
            let runs = clip_runs(&s.points, h);
            let mut first = true;
            for run in runs.into_iter().chain(std::iter::once(Vec::new())) {
                if run.is_empty() && !first {
                    continue;
                }
                let anno = if s.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(run, 6, 4, color.stroke_width(width)))
                        .map_err(err)?
                } else {
                    chart
                        .draw_series(LineSeries::new(run, color.stroke_width(width)))
                        .map_err(err)?
                };
                if first {
                    let dashed = s.dashed;
                    anno.label(s.name.as_str())
                        .legend(move |at| legend_sample(at, color, dashed));
                    first = false;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// Viridis, sampled: `t = 0` dark purple (small), `t = 1` yellow (large).
pub fn viridis(t: f64) -> RGBColor {
    const STOPS: [(f64, [f64; 3]); 5] = [
        (0.0, [68.0, 1.0, 84.0]),
        (0.25, [59.0, 82.0, 139.0]),
        (0.5, [33.0, 145.0, 140.0]),
        (0.75, [94.0, 201.0, 98.0]),
        (1.0, [253.0, 231.0, 37.0]),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let i = STOPS.iter().rposition(|s| s.0 <= t).unwrap_or(0).min(3);
    let (ta, ca) = STOPS[i];
    let (tb, cb) = STOPS[i + 1];
    let u = (t - ta) / (tb - ta);
    let c = |k: usize| (ca[k] + u * (cb[k] - ca[k])).round() as u8;
    RGBColor(c(0), c(1), c(2))
}

/// Black or white, whichever reads better on `background` (WCAG contrast: black above a
/// relative luminance of 0.179). A fixed cut in the colour scale left white labels on the
/// light green cells (QA).
pub fn label_color(background: RGBColor) -> RGBColor {
    let linear = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let RGBColor(r, g, b) = background;
    let luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    if luminance > 0.179 {
        BLACK
    } else {
        WHITE
    }
}

/// Where a logarithmic colour bar over `10^lo..10^hi` is labelled, as `(log10 of the value,
/// label)`: over a decade or more at round values (every decade, or every few over many; 1, 2
/// and 5 times them when that gives at least three), over less at evenly spaced values 1, 2 or
/// 5 times a power of ten apart, three to six of them. (The bar's ticks were plotters' evenly
/// spaced logarithms, labelled with values such as 3.61e-2.)
pub fn colour_bar_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let at = |v: f64| v >= lo - 1e-9 && v <= hi + 1e-9;
    let decades = |mantissas: &[f64], every: i32| {
        let mut ticks = Vec::new();
        for k in (lo.floor() as i32)..=(hi.ceil() as i32) {
            for &m in mantissas {
                let v = m.log10() + f64::from(k);
                if (m != 1.0 || k.rem_euclid(every) == 0) && at(v) {
                    ticks.push((v, format!("{m}e{k}")));
                }
            }
        }
        ticks
    };
    if hi - lo > 6.0 {
        return decades(&[1.0], ((hi - lo) / 6.0).ceil() as i32);
    }
    for mantissas in [&[1.0][..], &[1.0, 2.0, 5.0]] {
        let ticks = decades(mantissas, 1);
        if ticks.len() >= 3 {
            return ticks;
        }
    }
    // Less than a decade: evenly spaced values.
    let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
    let power = 10f64.powf(((b - a) / 6.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| ((b - a) / step).floor() <= 6.0)
        .unwrap_or(10.0 * power);
    let digits = (b.log10().floor() - step.log10().floor()).clamp(0.0, 6.0) as usize;
    let first = (a / step).ceil() as i64;
    (first..)
        .map(|i| i as f64 * step)
        .take_while(|&v| v <= b * (1.0 + 1e-12))
        .filter(|&v| v > 0.0 && at(v.log10()))
        .map(|v| (v.log10(), format!("{v:.digits$e}")))
        .collect()
}

/// A compact value label: `3.61e-2`, or `0`.
pub fn format_value(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        format!("{v:.2e}")
    }
}

impl Figure for Heatmap {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let rows = self.values.len();
        let cols = self.values.first().map_or(0, Vec::len);
        if rows == 0 || cols == 0 {
            return Err("empty heatmap".into());
        }
        let logs = || {
            self.values
                .iter()
                .flatten()
                .copied()
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(f64::log10)
        };
        let (lmin, lmax) = finite_range(logs()).unwrap_or((-1.0, 0.0));
        let (lmin, lmax) = if lmax - lmin < 1e-9 {
            (lmin - 0.5, lmax + 0.5)
        } else {
            (lmin, lmax)
        };
        let t_of = |v: f64| {
            if v > 0.0 && v.is_finite() {
                (v.log10() - lmin) / (lmax - lmin)
            } else {
                0.0
            }
        };
        let root = root
            .titled(self.title.as_str(), ("sans-serif", 22))
            .map_err(err)?;
        let (main, bar) = root.split_horizontally(root.dim_in_pixel().0 * 83 / 100);
        let (ncols, nrows) = (cols as i32, rows as i32);
        let mut chart = ChartBuilder::on(&main)
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(88)
            // plotters' integer ranges include their end, so `0..n-1` gives n segments.
            .build_cartesian_2d(
                (0..ncols - 1).into_segmented(),
                (0..nrows - 1).into_segmented(),
            )
            .map_err(err)?;
        let index = |v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => Some(*i),
            SegmentValue::Last => None,
        };
        let col_label = |v: &SegmentValue<i32>| {
            index(v)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| self.col_labels.get(i).cloned())
                .unwrap_or_default()
        };
        let row_label = |v: &SegmentValue<i32>| {
            index(v)
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < rows)
                .and_then(|i| self.row_labels.get(rows - 1 - i).cloned())
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(cols)
            .y_labels(rows)
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&col_label)
            .y_label_formatter(&row_label)
            .label_style(("sans-serif", 16))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(err)?;
        for (r, row) in self.values.iter().enumerate() {
            let y = nrows - 1 - r as i32;
            for (c, &v) in row.iter().enumerate() {
                let x = c as i32;
                let t = t_of(v);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [
                            (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                            (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
                        ],
                        viridis(t).filled(),
                    )))
                    .map_err(err)?;
                let text_color = label_color(viridis(t));
                let style = ("sans-serif", 17)
                    .into_font()
                    .color(&text_color)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                let label = if v.is_finite() {
                    format_value(v)
                } else {
                    "n/a".into()
                };
                chart
                    .draw_series(std::iter::once(Text::new(
                        label,
                        (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y)),
                        style,
                    )))
                    .map_err(err)?;
            }
        }
        // Colour bar.
        let mut bar_chart = ChartBuilder::on(&bar)
            .margin_top(12)
            .margin_bottom(64)
            .margin_right(8)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..1.0, lmin..lmax)
            .map_err(err)?;
        bar_chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .y_desc(self.value_label.as_str())
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        // Round values, placed by hand: the axis' own ticks are evenly spaced logarithms.
        let (bx, by) = bar.get_base_pixel();
        let tick_font = ("sans-serif", 14)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        for (v, text) in colour_bar_ticks(lmin, lmax) {
            let (x, y) = bar_chart.backend_coord(&(0.0, v));
            let (x, y) = (x - bx, y - by);
            bar.draw(&PathElement::new(vec![(x - 5, y), (x, y)], BLACK))
                .map_err(err)?;
            bar.draw(&Text::new(text, (x - 8, y), tick_font.clone()))
                .map_err(err)?;
        }
        let n = 64;
        bar_chart
            .draw_series((0..n).map(|i| {
                let a = lmin + (lmax - lmin) * i as f64 / n as f64;
                let b = lmin + (lmax - lmin) * (i + 1) as f64 / n as f64;
                Rectangle::new(
                    [(0.0, a), (1.0, b)],
                    viridis((i as f64 + 0.5) / n as f64).filled(),
                )
            }))
            .map_err(err)?;
        Ok(())
    }
}

impl Figure for StabilityMap {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let step = |v: &[f64]| {
            if v.len() > 1 {
                v[1] - v[0]
            } else {
                1.0
            }
        };
        let (dx, dy) = (step(&self.xs), step(&self.ys));
        let (Some(&xa), Some(&xb), Some(&ya), Some(&yb)) = (
            self.xs.first(),
            self.xs.last(),
            self.ys.first(),
            self.ys.last(),
        ) else {
            return Err("empty stability map".into());
        };
        let (x0, x1, y0, y1) = (xa - dx / 2.0, xb + dx / 2.0, ya - dy / 2.0, yb + dy / 2.0);
        let mut chart = ChartBuilder::on(root)
            .caption(self.title.as_str(), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        let (x_ticks, y_ticks) = (linear_ticks(x0, x1), linear_ticks(y0, y1));
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&x_ticks)
            .y_label_formatter(&y_ticks)
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(err)?;
        let stable_color = RGBColor(120, 200, 170);
        let unstable_color = RGBColor(240, 150, 110);
        let cells = self.stable.iter().enumerate().flat_map(|(iy, row)| {
            row.iter().enumerate().filter_map(move |(ix, &ok)| {
                let (x, y) = (*self.xs.get(ix)?, *self.ys.get(iy)?);
                let color = if ok { stable_color } else { unstable_color };
                Some(Rectangle::new(
                    [(x - dx / 2.0, y - dy / 2.0), (x + dx / 2.0, y + dy / 2.0)],
                    color.filled(),
                ))
            })
        });
        chart.draw_series(cells).map_err(err)?;
        for (name, color) in [("stable", stable_color), ("unstable", unstable_color)] {
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 20, y + 6)], color.filled())
                });
        }
        if let Some(b) = &self.boundary {
            let pts: Vec<(f64, f64)> = b
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| (x0..=x1).contains(&x) && (y0..=y1).contains(&y))
                .collect();
            let color = b.color;
            chart
                .draw_series(DashedLineSeries::new(pts, 10, 6, color.stroke_width(3)))
                .map_err(err)?
                .label(b.name.as_str())
                .legend(move |at| legend_sample(at, color, true));
        }
        // Labels go to the right of their marks. Marks close together (e.g. (10, 10) and
        // (7.5, 5) on a 150 x 300 map are a few pixels apart) would overlap: taken from the
        // lowest on screen up, a label that would overlap one already placed moves a line up,
        // else down, then two, ..., staying inside the plot.
        const LINE: i32 = 20;
        let (_, rows) = chart.plotting_area().get_pixel_range();
        let mut marks: Vec<_> = self
            .marks
            .iter()
            .map(|(label, x, y)| (label, *x, *y, chart.backend_coord(&(*x, *y))))
            .collect();
        marks.sort_by_key(|m| std::cmp::Reverse((m.3 .1, m.3 .0)));
        // Every marker's disc, so that no label is written over another marker (QA: the
        // "modest" marker covered the "p" of "particle-circle").
        let discs: Vec<(i32, i32)> = marks.iter().map(|m| m.3).collect();
        let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
        for (label, x, y, (px, py)) in marks {
            chart
                .draw_series(std::iter::once(Circle::new((x, y), 6, BLACK.filled())))
                .map_err(err)?;
            let width = 10 * (label.chars().count() as i32 + 2);
            let free = |dy: i32| {
                let (t, b) = (py + dy - LINE / 2, py + dy + LINE / 2);
                let others = discs
                    .iter()
                    .filter(|&&d| d != (px, py))
                    .map(|&(x, y)| (x - 8, y - 8, x + 8, y + 8));
                (dy == 0 || (rows.start <= t && b <= rows.end))
                    && !placed
                        .iter()
                        .copied()
                        .chain(others)
                        .any(|(l2, t2, r2, b2)| px < r2 && l2 < px + width && t < b2 && t2 < b)
            };
            let dy = (0..8)
                .flat_map(|k| [-k * LINE, k * LINE])
                .find(|&dy| free(dy))
                .unwrap_or(0);
            placed.push((px, py + dy - LINE / 2, px + width, py + dy + LINE / 2));
            let style = ("sans-serif", 16)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((x, y)) + Text::new(format!("  {label}"), (0, dy), style),
                ))
                .map_err(err)?;
            // A label moved off its marker's line is tied to it by a leader (QA 2026-12-07:
            // "particle-circle", two lines up, read as the label of the marker above).
            if dy != 0 {
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(6, 0), (12, dy)], BLACK.stroke_width(1)),
                    ))
                    .map_err(err)?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// A legend sample: two segments of one colour at a legend entry's position.
type LegendSample<DB> = plotters::element::ComposedElement<
    (i32, i32),
    DB,
    PathElement<(i32, i32)>,
    PathElement<(i32, i32)>,
>;

/// A legend's line sample at `at`, 24 px long, as two segments: a dash and a
/// gap and a dash for a dashed series (QA 2026-12-07: every sample was solid, so a dashed
/// bound read as a solid curve that was not there), the whole line twice for a solid one.
fn legend_sample<DB: DrawingBackend>(
    at: (i32, i32),
    color: RGBColor,
    dashed: bool,
) -> LegendSample<DB> {
    let [a, b] = if dashed {
        [vec![(0, 0), (9, 0)], vec![(15, 0), (24, 0)]]
    } else {
        [vec![(0, 0), (24, 0)], vec![(0, 0), (24, 0)]]
    };
    EmptyElement::at(at)
        + PathElement::new(a, color.stroke_width(3))
        + PathElement::new(b, color.stroke_width(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_file_is_replaced_whole_and_long_names_fit() {
        let dir = std::env::temp_dir().join(format!("lavender-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // 250 bytes: the temporary name beside it must still fit 255.
        let long = dir.join(format!("{}.png", "p".repeat(246)));
        std::fs::write(&long, b"earlier").unwrap();
        write_replacing(&long, b"new plot").unwrap();
        assert_eq!(std::fs::read(&long).unwrap(), b"new plot");
        let missing = dir.join("no-such-dir").join("x.png");
        assert!(write_replacing(&missing, b"x").is_err());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fonts_register_without_system_fonts() {
        register_fonts().unwrap();
        register_fonts().unwrap();
    }

    #[test]
    fn a_legend_avoids_the_lines_between_points_too() {
        let diagonal = along_segments(&[(0.0, 0.0), (1.0, 1.0)], 0.01);
        // ceil(sqrt(2) / 0.01) = 142 pieces, and the last vertex.
        assert_eq!(diagonal.len(), 143);
        assert_eq!(diagonal.first(), Some(&(0.0, 0.0)));
        assert_eq!(diagonal.last(), Some(&(1.0, 1.0)));
        // A line across the top that leaves the area to the right: neither vertex lies in the
        // upper right corner's box, the line does.
        let line = [(0.5, 0.95), (1.2, 0.95)];
        let side = 0.3;
        assert_eq!(
            Corner::UpperRight.least_covering(&line, side, side),
            Corner::UpperRight
        );
        assert_eq!(
            Corner::UpperRight.least_covering(&along_segments(&line, 0.01), side, side),
            Corner::UpperLeft
        );
    }

    #[test]
    fn clipping_splits_paths_at_the_view() {
        let pts = [(0.0, 0.0), (2.0, 0.0), (2.0, 0.5), (0.0, 0.5)];
        let runs = clip_runs(&pts, 1.0);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0], vec![(0.0, 0.0), (1.0, 0.0)]);
        assert_eq!(runs[1], vec![(1.0, 0.5), (0.0, 0.5)]);
        assert!(clip_runs(&[(5.0, 5.0), (6.0, 5.0)], 1.0).is_empty());
    }

    #[test]
    fn labels_read_on_every_cell_colour() {
        // White on the dark half of viridis, black from its light green on (t = 0.6 was
        // white before, contrast 2.6: below the 3:1 that large text needs).
        assert_eq!(label_color(viridis(0.0)), WHITE);
        assert_eq!(label_color(viridis(0.3)), WHITE);
        assert_eq!(label_color(viridis(0.6)), BLACK);
        assert_eq!(label_color(viridis(1.0)), BLACK);
        assert_eq!(label_color(RGBColor(255, 255, 0)), BLACK);
    }

    #[test]
    fn colour_bar_ticks_are_round_values() {
        let labels =
            |lo, hi| -> Vec<String> { colour_bar_ticks(lo, hi).into_iter().map(|t| t.1).collect() };
        // Three decades: the decades.
        assert_eq!(labels(-4.3, -1.2), ["1e-4", "1e-3", "1e-2"]);
        // One and a half: 1, 2 and 5.
        assert_eq!(
            labels(-2.05, -0.6),
            ["1e-2", "2e-2", "5e-2", "1e-1", "2e-1"]
        );
        // A fifth of a decade: evenly spaced values.
        assert_eq!(
            labels(-2.1, -1.9),
            ["8.0e-3", "9.0e-3", "1.0e-2", "1.1e-2", "1.2e-2"]
        );
        // The sweep's 1.19e-2 to 1.28e-2.
        let narrow = labels(1.19e-2f64.log10(), 1.28e-2f64.log10());
        assert_eq!(
            narrow,
            ["1.20e-2", "1.22e-2", "1.24e-2", "1.26e-2", "1.28e-2"]
        );
        // Twelve decades: every other one.
        assert_eq!(labels(-12.5, -0.5).len(), 6);
        // Placed at the values' logarithms.
        for (v, text) in colour_bar_ticks(-2.05, -0.6) {
            let value: f64 = text.parse().unwrap();
            assert!((value.log10() - v).abs() < 1e-12, "{text} at {v}");
        }
    }

    #[test]
    fn linear_ticks_show_the_spacing_and_no_negative_zero() {
        let unit = linear_ticks(-1.0, 1.0);
        assert_eq!(unit(&-1e-17), "0.0");
        assert_eq!(unit(&0.4), "0.4");
        // Micrometres: plotters' labels read 0.0 at every tick.
        let micro = linear_ticks(0.0, 5e-6);
        assert_eq!(micro(&2e-6), "2.0e-6");
        assert_eq!(micro(&0.0), "0");
        let big = linear_ticks(0.0, 3e5);
        assert_eq!(big(&2e5), "2.0e5");
        assert_eq!(linear_ticks(0.0, 60.0)(&20.0), "20");
        // QA: a 5 s run's axis (ticks every 0.5 s) read 0 0 1 2 2 2 3 4 4 4 5.
        assert_eq!(tick_spacing(0.0, 5.0, 11), 0.5);
        assert_eq!(linear_ticks(0.0, 5.0)(&2.5), "2.5");
        assert_eq!(tick_spacing(1.0 / 60.0, 5.0, 11), 0.5);
        assert_eq!(tick_spacing(0.0, 1.0, 11), 0.1);
        assert_eq!(linear_ticks(1.0 / 30.0, 1.0)(&0.2), "0.2");
        // Whatever the range, the labels of plotters' own ticks are all different.
        for (lo, hi) in [
            (0.0, 5.0),
            (-0.013, 0.027),
            (3.0, 3.7),
            (0.0, 2e-6),
            (-40.0, 125.0),
        ] {
            let ticks = linear_ticks(lo, hi);
            let step = tick_spacing(lo, hi, 11);
            let labels: Vec<String> = (0..)
                .map(|i| (lo / step).ceil() * step + f64::from(i) * step)
                .take_while(|v| *v <= hi + 1e-12)
                .map(|v| ticks(&v))
                .collect();
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(unique, labels, "{lo}..{hi}");
            assert!(labels.len() >= 3, "{lo}..{hi}: {labels:?}");
        }
    }

    #[test]
    fn viridis_is_darker_for_small_values() {
        let lum = |c: RGBColor| 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
        let mut prev = -1.0;
        for i in 0..=10 {
            let l = lum(viridis(i as f64 / 10.0));
            assert!(l > prev, "luminance must increase with the value");
            prev = l;
        }
    }

    #[test]
    fn plots_are_written_as_png_and_svg() {
        let dir =
            std::env::temp_dir().join(format!("lavender-tutorial-plot-{}", std::process::id()));
        let chart = LineChart {
            title: "test".into(),
            x_label: "t (s)".into(),
            y_label: "|C| (m^2)".into(),
            series: vec![Series::new(
                "a",
                vec![(0.0, 0.0), (1.0, 1e-3), (2.0, 1.0)],
                color(0),
            )],
            log_floor: Some(1e-18),
            log_x: false,
            legend: Corner::UpperLeft,
        };
        let files = line_charts(&dir.join("chart"), &[chart], (640, 400)).unwrap();
        assert_eq!(files.len(), 2);
        for f in &files {
            let len = std::fs::metadata(f).unwrap().len();
            assert!(len > 1000, "{} is only {len} bytes", f.display());
        }
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("|C| (m^2)"), "axis label must be in the SVG");
        std::fs::remove_dir_all(&dir).ok();
    }
}
