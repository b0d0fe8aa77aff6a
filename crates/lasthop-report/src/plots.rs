//! SVG plots (plotters' SVG backend): each function returns a standalone `<svg>` string.

use lasthop_experiment::FiveNum;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Plot width and height in pixels.
pub const W: u32 = 1200;
pub const H: u32 = 460;

/// Colours for series: distinguishable, print-safe (Okabe–Ito plus extras).
pub const COLORS: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
    RGBColor(150, 40, 40),
    RGBColor(60, 60, 160),
];

pub fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Drawing a chart failed: plotters' error, as its debug text (the report shows it in place of
/// the chart).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plot: {0}")]
pub struct PlotError(pub String);

type R<T> = Result<T, PlotError>;

fn e<E: std::fmt::Debug>(x: E) -> PlotError {
    PlotError(format!("{x:?}"))
}

/// A line series: label, colour index, points, whether to draw it as steps.
pub struct Line {
    pub label: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
    pub step: bool,
    pub dashed: bool,
}

/// Marks: label, colour, points, shape.
pub struct Marks {
    pub label: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
    pub shape: Shape,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Dot,
    Cross,
    Triangle,
    /// A vertical bar from y to y2 (data segments in the time-sequence graph).
    Bar,
}

/// Vertical bars (x, y_low, y_high) drawn with a colour: the segments of a time-sequence graph.
pub struct Bars {
    pub label: String,
    pub color: RGBColor,
    pub bars: Vec<(f64, f64, f64)>,
}

/// The range of `vals` with 3% padding (from 0 when `zero` and all are positive).
pub fn range(vals: impl Iterator<Item = f64>, zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    let pad = (hi - lo) * 0.03;
    (if zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

/// A tick label for an axis spanning `span`: as many decimals as a tenth of the span needs.
pub fn tick(v: f64, span: f64) -> String {
    let step = (span / 10.0).abs();
    let d = if step >= 1.0 || step == 0.0 || !step.is_finite() {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 9.0) as usize
    };
    let v = if v.abs() < step * 1e-6 { 0.0 } else { v };
    format!("{v:.d$}")
}

/// The corner of the plot area with the fewest points in it (for the legend).
fn legend_corner(
    pts: &[(f64, f64)],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> SeriesLabelPosition {
    let (wx, wy) = ((x1 - x0) * 0.45, (y1 - y0) * 0.4);
    let count = |left: bool, top: bool| {
        pts.iter()
            .filter(|(x, y)| {
                let inx = if left { *x <= x0 + wx } else { *x >= x1 - wx };
                let iny = if top { *y >= y1 - wy } else { *y <= y0 + wy };
                inx && iny
            })
            .count()
    };
    let options = [
        (count(true, true), SeriesLabelPosition::UpperLeft),
        (count(false, true), SeriesLabelPosition::UpperRight),
        (count(false, false), SeriesLabelPosition::LowerRight),
        (count(true, false), SeriesLabelPosition::LowerLeft),
    ];
    let mut best = 0;
    for i in 1..options.len() {
        if options[i].0 < options[best].0 {
            best = i;
        }
    }
    let [a, b, c, d] = options;
    [a.1, b.1, c.1, d.1]
        .into_iter()
        .nth(best)
        .unwrap_or(SeriesLabelPosition::UpperLeft)
}

fn steps(p: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut v = Vec::with_capacity(p.len() * 2);
    for (i, &(x, y)) in p.iter().enumerate() {
        if i > 0 {
            v.push((x, p[i - 1].1));
        }
        v.push((x, y));
    }
    v
}

/// A chart of lines, marks and bars over a numeric x axis.
#[allow(clippy::too_many_arguments)]
pub fn xy_chart(
    title: &str,
    xdesc: &str,
    ydesc: &str,
    lines: &[Line],
    marks: &[Marks],
    bars: &[Bars],
    x_range: Option<(f64, f64)>,
    y_range: Option<(f64, f64)>,
) -> R<String> {
    xy_chart_sized(
        (W, H),
        title,
        xdesc,
        ydesc,
        lines,
        marks,
        bars,
        x_range,
        y_range,
    )
}

/// [`xy_chart`] with a size in pixels.
#[allow(clippy::too_many_arguments)]
pub fn xy_chart_sized(
    size: (u32, u32),
    title: &str,
    xdesc: &str,
    ydesc: &str,
    lines: &[Line],
    marks: &[Marks],
    bars: &[Bars],
    x_range: Option<(f64, f64)>,
    y_range: Option<(f64, f64)>,
) -> R<String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, size).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let xs = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .chain(marks.iter().flat_map(|m| m.points.iter().map(|p| p.0)))
            .chain(bars.iter().flat_map(|b| b.bars.iter().map(|p| p.0)));
        let ys = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .chain(marks.iter().flat_map(|m| m.points.iter().map(|p| p.1)))
            .chain(
                bars.iter()
                    .flat_map(|b| b.bars.iter().flat_map(|p| [p.1, p.2])),
            );
        let (x0, x1) = x_range.unwrap_or_else(|| range(xs, true));
        let (y0, y1) = y_range.unwrap_or_else(|| range(ys, true));
        draw_xy(
            &root,
            title,
            xdesc,
            ydesc,
            lines,
            marks,
            bars,
            (x0, x1),
            (y0, y1),
        )?;
        root.present().map_err(e)?;
    }
    Ok(s)
}

#[allow(clippy::too_many_arguments)]
fn draw_xy(
    root: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    xdesc: &str,
    ydesc: &str,
    lines: &[Line],
    marks: &[Marks],
    bars: &[Bars],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> R<()> {
    let mut c = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(xdesc)
        .y_desc(ydesc)
        .x_label_formatter(&|v| tick(*v, x1 - x0))
        .y_label_formatter(&|v| tick(*v, y1 - y0))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(e)?;
    let mut legend = false;
    for b in bars {
        let col = b.color;
        let s = c
            .draw_series(b.bars.iter().map(move |&(x, lo, hi)| {
                PathElement::new(vec![(x, lo), (x, hi)], col.stroke_width(2))
            }))
            .map_err(e)?;
        if !b.label.is_empty() {
            legend = true;
            s.label(&b.label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], col.filled()));
        }
    }
    for l in lines {
        let col = l.color;
        let pts = if l.step {
            steps(&l.points)
        } else {
            l.points.clone()
        };
        let style = col.stroke_width(2);
        let s = if l.dashed {
            c.draw_series(DashedLineSeries::new(pts, 6, 4, style))
                .map_err(e)?
        } else {
            c.draw_series(LineSeries::new(pts, style)).map_err(e)?
        };
        if !l.label.is_empty() {
            legend = true;
            s.label(&l.label).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], col.stroke_width(3))
            });
        }
    }
    for m in marks {
        let col = m.color;
        let shape = m.shape;
        let label = m.label.clone();
        if !label.is_empty() {
            legend = true;
        }
        match shape {
            Shape::Cross => {
                let s = c
                    .draw_series(
                        m.points
                            .iter()
                            .map(move |&p| Cross::new(p, 6, col.stroke_width(2))),
                    )
                    .map_err(e)?;
                if !label.is_empty() {
                    s.label(label)
                        .legend(move |(x, y)| Cross::new((x + 7, y), 6, col.stroke_width(2)));
                }
            }
            Shape::Triangle => {
                let s = c
                    .draw_series(
                        m.points
                            .iter()
                            .map(move |&p| TriangleMarker::new(p, 6, col.filled())),
                    )
                    .map_err(e)?;
                if !label.is_empty() {
                    s.label(label)
                        .legend(move |(x, y)| TriangleMarker::new((x + 7, y), 6, col.filled()));
                }
            }
            Shape::Dot | Shape::Bar => {
                let s = c
                    .draw_series(
                        m.points
                            .iter()
                            .map(move |&p| Circle::new(p, 3, col.filled())),
                    )
                    .map_err(e)?;
                if !label.is_empty() {
                    s.label(label)
                        .legend(move |(x, y)| Circle::new((x + 7, y), 4, col.filled()));
                }
            }
        }
    }
    if legend {
        let pts: Vec<(f64, f64)> = lines
            .iter()
            .flat_map(|l| l.points.iter().copied())
            .chain(marks.iter().flat_map(|m| m.points.iter().copied()))
            .chain(
                bars.iter()
                    .flat_map(|b| b.bars.iter().flat_map(|p| [(p.0, p.1), (p.0, p.2)])),
            )
            .collect();
        c.configure_series_labels()
            .position(legend_corner(&pts, (x0, x1), (y0, y1)))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

/// Empirical CDFs: for each series its label and the corners of its steps
/// ([`crate::series::cdf`]), drawn as a line.
pub fn cdf_chart(title: &str, xdesc: &str, curves: &[(String, Vec<(f64, f64)>)]) -> R<String> {
    cdf_chart_sized((W, H), title, xdesc, curves, None)
}

/// [`cdf_chart`] with a size and, to compare charts, a fixed x range.
pub fn cdf_chart_sized(
    size: (u32, u32),
    title: &str,
    xdesc: &str,
    curves: &[(String, Vec<(f64, f64)>)],
    x_range: Option<(f64, f64)>,
) -> R<String> {
    cdf_chart_y(size, title, xdesc, curves, x_range, (0.0, 1.02))
}

/// [`cdf_chart_sized`] with the y axis from `y_range.0` to `y_range.1` (seed 003's zoom on the
/// tail, 0.65–1: give curves that start at the lower bound, see `series::thin::zoom_cdf`).
pub fn cdf_chart_y(
    size: (u32, u32),
    title: &str,
    xdesc: &str,
    curves: &[(String, Vec<(f64, f64)>)],
    x_range: Option<(f64, f64)>,
    y_range: (f64, f64),
) -> R<String> {
    let lines: Vec<Line> = curves
        .iter()
        .enumerate()
        .map(|(i, (label, pts))| Line {
            label: label.clone(),
            color: color(i),
            points: pts.clone(),
            step: false,
            dashed: false,
        })
        .collect();
    let xs = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let xr = x_range.unwrap_or_else(|| range(xs, false));
    xy_chart_sized(
        size,
        title,
        xdesc,
        "fraction ≤ x",
        &lines,
        &[],
        &[],
        Some(xr),
        Some(y_range),
    )
}

/// Box plots from five-number summaries: groups along x (a point each), boxes within a group
/// (a class each, coloured by class). Whiskers are min and max. `y_range`: fixed y axis
/// (default: the data's range with headroom for the legend).
pub fn box_chart(
    title: &str,
    ydesc: &str,
    groups: &[String],
    classes: &[String],
    boxes: &[(usize, usize, FiveNum)],
    y_range: Option<(f64, f64)>,
) -> R<String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (y0, y1) = match y_range {
            Some(r) => r,
            None => {
                let (y0, y1) = range(boxes.iter().flat_map(|b| [b.2.min, b.2.max]), false);
                // Headroom for the legend above the boxes.
                (y0, y1 + (y1 - y0) * 0.22)
            }
        };
        let ng = groups.len().max(1) as f64;
        let groups_v = groups.to_vec();
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(-0.5f64..ng - 0.5, y0..y1)
            .map_err(e)?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(groups.len().max(1) * 2 + 1)
            .x_label_formatter(&|x| {
                let r = x.round();
                if (x - r).abs() < 1e-6 && r >= 0.0 {
                    groups_v.get(r as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc(ydesc)
            .y_label_formatter(&|v| tick(*v, y1 - y0))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        let nc = classes.len().max(1) as f64;
        let width = 0.8 / nc;
        for (ci, cname) in classes.iter().enumerate() {
            let col = color(ci);
            let mine: Vec<(usize, FiveNum)> = boxes
                .iter()
                .filter(|b| b.1 == ci)
                .map(|b| (b.0, b.2))
                .collect();
            let mut elems: Vec<PathElement<(f64, f64)>> = vec![];
            let mut rects = vec![];
            for (g, f) in &mine {
                let x = *g as f64 - 0.4 + width * (ci as f64 + 0.5);
                let (l, r) = (x - width * 0.35, x + width * 0.35);
                rects.push(Rectangle::new(
                    [(l, f.p25), (r, f.p75)],
                    col.mix(0.25).filled(),
                ));
                rects.push(Rectangle::new(
                    [(l, f.p25), (r, f.p75)],
                    col.stroke_width(2),
                ));
                elems.push(PathElement::new(
                    vec![(l, f.median), (r, f.median)],
                    col.stroke_width(3),
                ));
                elems.push(PathElement::new(
                    vec![(x, f.p75), (x, f.max)],
                    col.stroke_width(1),
                ));
                elems.push(PathElement::new(
                    vec![(x, f.p25), (x, f.min)],
                    col.stroke_width(1),
                ));
                let (wl, wr) = (x - width * 0.18, x + width * 0.18);
                elems.push(PathElement::new(
                    vec![(wl, f.max), (wr, f.max)],
                    col.stroke_width(1),
                ));
                elems.push(PathElement::new(
                    vec![(wl, f.min), (wr, f.min)],
                    col.stroke_width(1),
                ));
            }
            c.draw_series(rects).map_err(e)?;
            let s = c.draw_series(elems).map_err(e)?;
            if classes.len() > 1 {
                s.label(cname).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], col.filled())
                });
            }
        }
        let pts: Vec<(f64, f64)> = boxes
            .iter()
            .flat_map(|(g, ci, f)| {
                let x = *g as f64 - 0.4 + width * (*ci as f64 + 0.5);
                [
                    (x, f.min),
                    (x, f.p25),
                    (x, f.median),
                    (x, f.p75),
                    (x, f.max),
                ]
            })
            .collect();
        if classes.len() > 1 {
            c.configure_series_labels()
                .position(legend_corner(&pts, (-0.5, ng - 0.5), (y0, y1)))
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(180, 180, 180))
                .label_font(("sans-serif", 14))
                .draw()
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    Ok(s)
}
