//! The appendix: every point's five numbers of every metric, by class.

use crate::html::{esc, five_row, FIVE_HEAD};
use lasthop_experiment::catalogue::{
    ConnMetric, Metric, PageClassMetric, PageMetric, PingMetric, RunMetric, ThinMetric, UdpMetric,
};
use lasthop_experiment::{ExperimentInfo, PointSummary, Summary};
use std::fmt::Write as _;

/// The appendix tables: per point, per class, min / 25% / 50% / 75% / max of every metric.
pub(crate) fn appendix(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    h.push_str("<h2>Tables per point (appendix layout)</h2>\n<p class=\"note\">As in the seeds' appendix tables: for each class of connections, min / 25% / median / 75% / max over the replications. Drops (q) router queue, (r) RED, (e) link error are of the data direction; the ACK direction's drops are counted together.</p>\n");
    for p in &s.points {
        point_tables(h, info, p);
    }
}

fn point_tables(h: &mut String, info: &ExperimentInfo, p: &PointSummary) {
    let _ = writeln!(
        h,
        "<details{}><summary>{} ({} runs)</summary>\n<div class=\"blocks\">",
        if info.points.len() <= 4 { " open" } else { "" },
        esc(&p.point),
        p.runs
    );
    for c in p.classes.iter().chain(std::iter::once(&p.all_connections)) {
        let title = if c.scheme == "all" {
            "all connections".to_string()
        } else {
            format!("{} ({})", c.class, c.scheme)
        };
        let _ = write!(
            h,
            "<div class=\"block\"><h4>{}</h4><table>{FIVE_HEAD}",
            esc(&title)
        );
        for &k in ConnMetric::ALL {
            five_row(h, k.label(), c.get(k));
        }
        h.push_str("</table></div>\n");
    }
    let _ = write!(h, "<div class=\"block\"><h4>per run</h4><table>{FIVE_HEAD}");
    for &k in RunMetric::ALL
        .iter()
        .filter(|m| !m.of_parallel_connections())
    {
        five_row(h, k.label(), p.run(k));
    }
    h.push_str("</table></div>\n");
    for c in &p.udp {
        let _ = write!(
            h,
            "<div class=\"block\"><h4>UDP {}</h4><table>{FIVE_HEAD}",
            esc(&c.class.to_string())
        );
        for &k in UdpMetric::ALL {
            five_row(h, k.label(), c.get(k));
        }
        h.push_str("</table></div>\n");
    }
    for c in &p.pings {
        let _ = write!(
            h,
            "<div class=\"block\"><h4>latency probe {}</h4><table>{FIVE_HEAD}",
            esc(&c.class.to_string())
        );
        for &k in PingMetric::ALL {
            five_row(h, k.label(), c.get(k));
        }
        h.push_str("</table></div>\n");
    }
    for c in &p.thin {
        let _ = write!(
            h,
            "<div class=\"block\"><h4>{} (thin streams)</h4><table>{FIVE_HEAD}",
            esc(&c.class.to_string())
        );
        for &k in ThinMetric::ALL {
            five_row(h, k.label(), c.get(k));
        }
        h.push_str("</table></div>\n");
    }
    for c in &p.pages {
        let page = c.class == lasthop_experiment::Class::Page;
        let _ = write!(
            h,
            "<div class=\"block\"><h4>{}</h4><table>{FIVE_HEAD}",
            esc(&if page {
                "page (response, total time; seed 002's summary numbers)".to_string()
            } else {
                format!("page class {}", c.class)
            })
        );
        if page {
            for &k in PageMetric::ALL {
                five_row(h, k.label(), c.get(k));
            }
        } else {
            for &k in PageClassMetric::ALL {
                five_row(h, k.label(), c.get(k));
            }
        }
        h.push_str("</table></div>\n");
    }
    h.push_str("</div></details>\n");
}
