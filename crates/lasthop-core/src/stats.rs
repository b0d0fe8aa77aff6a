//! Quantiles, defined once for the whole project (the analysis and the experiment summaries
//! re-export this; the link model's trace summary uses it).

/// The `p`-quantile (0 ≤ p ≤ 1) of `sorted` (ascending, no NaN) by linear interpolation between
/// order statistics: h = (n − 1)·p, q = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]) (Hyndman and
/// Fan's type 7, the default of numpy and pandas). The median of an even count is therefore the
/// mean of the two middle values, as in the seeds' tables. `None` for an empty slice.
pub fn quantile(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let frac = h - lo as f64;
    Some(sorted[lo] + frac * (sorted[hi] - sorted[lo]))
}
