//! `bench_retention --compare --plot`: the comparison as an SVG chart.

use super::compare::{CaseResult, Impl, Plan};

/// The `--compare` table as an SVG bar chart: median time (log scale) and
/// peak RSS per case and implementation.
pub(super) fn svg(results: &[CaseResult], plan: &Plan) -> String {
    let colors = [
        (Impl::Sereal, "#2b6cb0"),
        (Impl::Guard, "#38a169"),
        (Impl::Snapshot, "#d69e2e"),
        (Impl::Perl, "#c05621"),
        (Impl::Floor, "#718096"),
    ];
    let impls: Vec<(Impl, &str)> = colors
        .into_iter()
        .filter(|&(i, _)| plan.columns().contains(&i) || (i == Impl::Floor && plan.floor()))
        .collect();
    let (w, panel_h, top) = (760.0, 260.0, 40.0);
    let group_w = (w - 120.0) / results.len().max(1) as f64;
    let bar_w = group_w / (impls.len() + 1) as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        2.0 * panel_h + 2.0 * top + 60.0
    );
    let value = |r: &CaseResult, imp: Impl, rss: bool| -> Option<f64> {
        if imp == Impl::Floor {
            return if rss {
                None
            } else {
                r.floor.as_ref().map(|f| f.median_ms)
            };
        }
        r.median_of(imp, |x| {
            if rss {
                x.peak_rss_kb as f64
            } else {
                x.median_ms
            }
        })
    };
    for (p, (title, rss)) in [
        (
            format!("Median {} time (ms, log scale)", plan.verb()),
            false,
        ),
        ("Peak RSS (MiB)".to_string(), true),
    ]
    .into_iter()
    .enumerate()
    {
        let y0 = top + p as f64 * (panel_h + top);
        let vals: Vec<f64> = results
            .iter()
            .flat_map(|r| impls.iter().filter_map(move |&(i, _)| value(r, i, rss)))
            .collect();
        let max = vals.iter().cloned().fold(1e-9, f64::max);
        let min = vals
            .iter()
            .cloned()
            .filter(|v| *v > 0.0)
            .fold(max, f64::min);
        let (lo, hi) = if rss {
            (0.0, max / 1024.0 * 1.1)
        } else {
            ((min / 2.0).log10().floor(), max.log10().ceil())
        };
        let scale = |v: f64| -> f64 {
            let f = if rss {
                v / 1024.0 / hi
            } else {
                ((v.max(1e-9)).log10() - lo) / (hi - lo)
            };
            panel_h * f.clamp(0.0, 1.0)
        };
        s += &format!(
            "<text x=\"60\" y=\"{}\" font-size=\"14\">{title}</text>\n",
            y0 - 12.0
        );
        s += &format!(
            "<line x1=\"60\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n",
            y0 + panel_h,
            w - 40.0,
            y0 + panel_h
        );
        if !rss {
            for e in lo as i32..=hi as i32 {
                let y = y0 + panel_h - scale(10f64.powi(e));
                s += &format!(
                    "<line x1=\"60\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/><text x=\"55\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                    w - 40.0,
                    y + 4.0,
                    10f64.powi(e)
                );
            }
        } else {
            for k in 0..=4 {
                let v = hi * k as f64 / 4.0;
                let y = y0 + panel_h - panel_h * k as f64 / 4.0;
                s += &format!(
                    "<line x1=\"60\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/><text x=\"55\" y=\"{}\" text-anchor=\"end\">{v:.0}</text>\n",
                    w - 40.0,
                    y + 4.0
                );
            }
        }
        for (g, r) in results.iter().enumerate() {
            let gx = 70.0 + g as f64 * group_w;
            for (k, &(imp, color)) in impls.iter().enumerate() {
                if let Some(v) = value(r, imp, rss) {
                    let h = scale(v);
                    let x = gx + k as f64 * bar_w;
                    s += &format!(
                        "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{color}\"><title>{} {}: {v:.1}</title></rect>\n",
                        y0 + panel_h - h,
                        bar_w - 2.0,
                        r.case,
                        imp.name()
                    );
                }
            }
            s += &format!(
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}k {}</text>\n",
                gx + impls.len() as f64 / 2.0 * bar_w,
                y0 + panel_h + 15.0,
                r.count / 1000,
                r.case
            );
        }
    }
    let ly = 2.0 * panel_h + 2.0 * top + 45.0;
    for (k, &(imp, color)) in impls.iter().enumerate() {
        let x = 70.0 + k as f64 * 110.0;
        s += &format!(
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{color}\"/><text x=\"{}\" y=\"{ly}\">{}</text>\n",
            ly - 10.0,
            x + 16.0,
            imp.name()
        );
    }
    s + "</svg>\n"
}
