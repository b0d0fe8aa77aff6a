//! The report's HTML helpers: escaping, numbers, the style sheet, a figure with its caption,
//! a row of five numbers, the rows of ours beside the published values, and the page-width
//! rule: a table wider than [`COLUMN_BUDGET`] columns shows a narrow table of its key columns
//! with the full table folded below it.

use crate::plots::PlotError;
use lasthop_experiment::FiveNum;
use std::fmt::Write as _;

/// The most columns a table shown unfolded may have: ten columns of numbers (about 80 px each)
/// fit the report's 1300 px page; a wider table is folded below a narrow one ([`fold_wide`]).
pub const COLUMN_BUDGET: usize = 10;

/// HTML-escapes text (for element content and double-quoted attribute values).
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Formats a number for a table: integers as such, others with 4 significant digits.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    if x == x.round() && x.abs() < 1e12 {
        return format!("{}", x as i64);
    }
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A number or "–".
pub(crate) fn num_or_dash(x: Option<f64>) -> String {
    x.map_or("–".to_string(), num)
}

/// The relative difference of two medians as a signed percentage, "–" when undefined.
pub(crate) fn delta(ours: f64, published: f64) -> String {
    if published != 0.0 && ours.is_finite() && published.is_finite() {
        format!("{:+.1}%", (ours - published) / published * 100.0)
    } else {
        "–".into()
    }
}

pub(crate) const CSS: &str = r#"
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px 32px; color: #222; max-width: 1300px; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 21px; margin-top: 36px; border-bottom: 2px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 17px; margin-top: 22px; }
p.note { color: #555; font-size: 14px; max-width: 1100px; }
table { border-collapse: collapse; margin: 8px 0 18px 0; font-size: 13.5px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f3f7; }
td.l, th.l { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
tr.first td { border-top: 2px solid #888; }
.blocks { display: flex; flex-wrap: wrap; gap: 10px 28px; }
.block h4 { margin: 6px 0 2px 0; font-size: 14px; }
figure { margin: 12px 0 20px 0; }
.grid2 { display: grid; grid-template-columns: repeat(2, 660px); gap: 0 12px; }
figcaption { font-size: 13px; color: #555; max-width: 1150px; }
svg { max-width: 100%; height: auto; border: 1px solid #eee; }
details > summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
details.wide { overflow-x: auto; }
code { background: #f4f4f4; padding: 0 3px; }
"#;

/// A chart (an `<svg>` whose text plotters escaped) with its caption, or the plot's error in
/// its place.
pub(crate) fn figure(h: &mut String, svg: Result<String, PlotError>, caption: &str) {
    match svg {
        Ok(svg) => {
            let _ = writeln!(
                h,
                "<figure>{svg}<figcaption>{}</figcaption></figure>",
                esc(caption)
            );
        }
        Err(e) => {
            let _ = writeln!(
                h,
                "<p class=\"note\">({}: {})</p>",
                esc(caption),
                esc(&e.to_string())
            );
        }
    }
}

pub(crate) fn five_row(h: &mut String, label: &str, f: Option<&FiveNum>) {
    let _ = write!(h, "<tr><td class=\"l\">{}</td>", esc(label));
    match f {
        Some(f) => {
            let _ = writeln!(
                h,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                num(f.min),
                num(f.p25),
                num(f.median),
                num(f.p75),
                num(f.max),
                f.n
            );
        }
        None => h.push_str("<td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>0</td></tr>\n"),
    }
}

pub(crate) const FIVE_HEAD: &str = "<tr><th class=\"l\">name</th><th>min</th><th>25%</th><th>50%</th><th>75%</th><th>max</th><th>n</th></tr>\n";

/// A row of ours with the published values of the same columns below it (seed 001's first
/// 10 KB, seed 003's host tables).
pub(crate) struct OursPublished<'a> {
    /// The key cells (already HTML), blank in the published row.
    pub keys: Vec<String>,
    pub ours: &'a [Option<f64>],
    pub published: Option<&'a [Option<f64>]>,
}

/// A table of [`OursPublished`] rows: the key headings (HTML), an unheaded column saying
/// "ours" or "published", and the columns `pick` of `heads` (every column when `None`).
pub(crate) fn ours_published_table(
    key_heads: &[&str],
    heads: &[&str],
    rows: &[OursPublished],
    pick: Option<&[usize]>,
) -> String {
    let all: Vec<usize> = (0..heads.len()).collect();
    let pick = pick.unwrap_or(&all);
    let mut h = String::from("<table><tr>");
    // The first key column is left-aligned, the others (a count of runs) are numbers.
    for (i, k) in key_heads.iter().enumerate() {
        let _ = write!(
            h,
            "<th{}>{k}</th>",
            if i == 0 { " class=\"l\"" } else { "" }
        );
    }
    h.push_str("<th class=\"l\"></th>");
    for &i in pick {
        let _ = write!(h, "<th>{}</th>", esc(heads[i]));
    }
    h.push_str("</tr>\n");
    let cells = |h: &mut String, v: &[Option<f64>]| {
        for &i in pick {
            let _ = write!(h, "<td>{}</td>", num_or_dash(v.get(i).copied().flatten()));
        }
    };
    for r in rows {
        h.push_str("<tr class=\"first\">");
        for (i, k) in r.keys.iter().enumerate() {
            let _ = write!(
                h,
                "<td{}>{k}</td>",
                if i == 0 { " class=\"l\"" } else { "" }
            );
        }
        h.push_str("<td class=\"l\">ours</td>");
        cells(&mut h, r.ours);
        h.push_str("</tr>\n");
        if let Some(p) = r.published {
            h.push_str("<tr>");
            for _ in &r.keys {
                h.push_str("<td></td>");
            }
            h.push_str("<td class=\"l\">published</td>");
            cells(&mut h, p);
            h.push_str("</tr>\n");
        }
    }
    h.push_str("</table>\n");
    h
}

/// The columns of the widest row of the first table in `html` (cells counted with their
/// `colspan`).
pub fn table_columns(html: &str) -> usize {
    let Some(start) = html.find("<table") else {
        return 0;
    };
    let end = html[start..]
        .find("</table>")
        .map_or(html.len(), |e| start + e);
    html[start..end]
        .split("<tr")
        .skip(1)
        .map(|row| {
            row.split('<')
                .filter(|t| t.starts_with("td") || t.starts_with("th"))
                .map(|t| {
                    let tag = &t[..t.find('>').unwrap_or(t.len())];
                    tag.split("colspan=\"")
                        .nth(1)
                        .and_then(|x| x.split('"').next())
                        .and_then(|x| x.parse::<usize>().ok())
                        .unwrap_or(1)
                })
                .sum::<usize>()
        })
        .max()
        .unwrap_or(0)
}

/// Writes the table `full`; when it is wider than [`COLUMN_BUDGET`], writes `narrow` (its key
/// columns, within the budget) and folds `full` below it under "`what`: every column".
pub(crate) fn fold_wide(h: &mut String, narrow: &str, full: &str, what: &str) {
    let n = table_columns(full);
    if n <= COLUMN_BUDGET {
        h.push_str(full);
        return;
    }
    debug_assert!(table_columns(narrow) <= COLUMN_BUDGET, "{narrow}");
    h.push_str(narrow);
    let _ = writeln!(
        h,
        "<details class=\"wide\"><summary>{}: every column ({n})</summary>",
        esc(what)
    );
    h.push_str(full);
    h.push_str("</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_text_and_attribute_quotes() {
        assert_eq!(
            esc(r#"a<b>&"c" 'd'"#),
            "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39;"
        );
    }

    #[test]
    fn columns_count_the_widest_row_with_colspans() {
        assert_eq!(table_columns("<p>no table</p>"), 0);
        let t = "<table><tr><th rowspan=\"2\">p</th><th colspan=\"4\">c1</th><th>x</th></tr>\n<tr><th>a</th><th>b</th></tr><tr><td class=\"l\">1</td><td>2</td></tr></table>";
        assert_eq!(table_columns(t), 6);
    }

    #[test]
    fn a_wide_table_is_folded_below_its_narrow_one() {
        let row = |n: usize| format!("<table><tr>{}</tr></table>\n", "<td>1</td>".repeat(n));
        let mut h = String::new();
        fold_wide(&mut h, "narrow", &row(COLUMN_BUDGET), "T");
        assert_eq!(
            h,
            row(COLUMN_BUDGET),
            "within the budget: the full table alone"
        );
        let mut h = String::new();
        fold_wide(&mut h, &row(3), &row(COLUMN_BUDGET + 1), "T");
        assert_eq!(
            h,
            format!(
                "{}<details class=\"wide\"><summary>T: every column (11)</summary>\n{}</details>\n",
                row(3),
                row(11)
            )
        );
    }

    #[test]
    fn ours_with_the_published_row_below_and_picked_columns() {
        let rows = [OursPublished {
            keys: vec!["p&amp;1".into(), "2".into()],
            ours: &[Some(1.5), None, Some(3.0)],
            published: Some(&[Some(1.0), Some(2.0), None]),
        }];
        let t = ours_published_table(&["point", "runs"], &["a", "b<", "c"], &rows, Some(&[1, 2]));
        assert_eq!(
            t,
            "<table><tr><th class=\"l\">point</th><th>runs</th><th class=\"l\"></th><th>b&lt;</th><th>c</th></tr>\n<tr class=\"first\"><td class=\"l\">p&amp;1</td><td>2</td><td class=\"l\">ours</td><td>–</td><td>3</td></tr>\n<tr><td></td><td></td><td class=\"l\">published</td><td>2</td><td>–</td></tr>\n</table>\n"
        );
    }
}
