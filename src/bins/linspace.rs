//! Equal bins' edges as numpy's `linspace` (and Polars' breaks) make them, and the formula that
//! made them. Millions of edges are megabytes that a job on the GPU never reads on the host, so
//! edges made by a formula are made on first use, and whether they all increase is proved from
//! the formula where its rounding cannot close a step.

use std::sync::OnceLock;

use crate::bins::BinFloat;
use crate::error::HistResult;

/// Edge `i < n` is `i as P * step + start` rounded to the bins' type, with `P` float32 when
/// `single`, else float64 (one multiply, one add, no fused multiply-add); edge `n` is the
/// last edge as stored. This is how [`linspace`] and Polars' breaks evaluate them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Linspace {
    pub start: f64,
    pub step: f64,
    pub single: bool,
}

impl Linspace {
    /// Edge `i < n` in the bins' type `F`, as the kernels compute it (tests hold it to the
    /// stored edges).
    pub fn edge<F: BinFloat>(&self, i: usize) -> F {
        if self.single {
            F::from_f64((i as f32 * self.step as f32 + self.start as f32) as f64)
        } else {
            F::from_f64(i as f64 * self.step + self.start)
        }
    }

    /// Whether edges `0..n` of this formula, rounded to `F`, increase strictly, shown without
    /// evaluating them (false: not shown, not necessarily false). Either every edge is exact
    /// (`start` and `step` are multiples of one power of two and every edge fits the
    /// significands), or the step is larger than twice the rounding error of any edge.
    fn provably_increasing<F: BinFloat>(&self, n: usize) -> bool {
        // A step that is not positive (or NaN) never increases.
        if self.step.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || n < 2 {
            return n < 2 && self.step > 0.0;
        }
        // Edges near the top of the type's range may round to infinity (two infinite edges do
        // not increase): leave those to the edges themselves.
        let finite_below = match self.single || F::SINGLE {
            true => f32::MAX as f64,
            false => f64::MAX,
        };
        let reach = self.start.abs() + n as f64 * self.step;
        if reach.is_nan() || reach >= finite_below / 2.0 {
            return false;
        }
        let computed_bits = if self.single { 24 } else { 53 };
        let bits = computed_bits.min(if F::SINGLE { 24 } else { 53 });
        let last = (n - 1) as u128;
        // Every edge exact: start = s 2^k, step = t 2^k, |s| + (n - 1) |t| < 2^bits (and the
        // index i itself exact in the arithmetic type).
        // The least exponent of a subnormal of the types involved: below it nothing is exact.
        let least = match self.single || F::SINGLE {
            true => -149,
            false => -1074,
        };
        if let (Some((s, es)), Some((t, et))) = (dyadic(self.start), dyadic(self.step)) {
            let k = es.min(et);
            if k < least {
                return false;
            }
            let scale = |m: i128, e: i32| -> Option<u128> {
                if m == 0 {
                    return Some(0);
                }
                let shift = (e as i64 - k as i64) as u64;
                (shift < 64).then(|| m.unsigned_abs() << shift)
            };
            if let (Some(s), Some(t)) = (scale(s, es), scale(t, et)) {
                let exact_index = last < 1u128 << computed_bits;
                let largest = last.checked_mul(t).and_then(|lt| lt.checked_add(s));
                if exact_index && largest.is_some_and(|m| m < 1u128 << bits) {
                    return true;
                }
            }
        }
        // Otherwise bound each rounding: the index (float32 past 2^24), the product, the sum
        // and the cast to F; the step must exceed twice their sum, with room to spare.
        let unit = |bits: i32| 2f64.powi(1 - bits);
        let (p, f) = (unit(computed_bits), unit(if F::SINGLE { 24 } else { 53 }));
        let tiny = if self.single || F::SINGLE {
            f32::from_bits(1) as f64
        } else {
            f64::from_bits(1)
        };
        let span = n as f64 * self.step;
        let largest = self.start.abs() + span;
        let index = if last < 1u128 << computed_bits {
            0.0
        } else {
            n as f64 * p * self.step
        };
        let error = index + span * p + largest * p + largest * f + 4.0 * tiny;
        self.step > 2.5 * error
    }
}

/// `x` as `m 2^e` with `m` an odd integer (0 as `0 2^i32::MAX`); None for non-finite values.
fn dyadic(x: f64) -> Option<(i128, i32)> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some((0, i32::MAX));
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, e) = match exponent {
        0 => (fraction, -1074),
        _ => (fraction | 1 << 52, exponent - 1075),
    };
    let zeros = mantissa.trailing_zeros();
    let m = (mantissa >> zeros) as i128;
    Some((if x < 0.0 { -m } else { m }, e + zeros as i32))
}

/// Below this many values a table is filled on the calling thread.
pub(crate) const PARALLEL_LEN: usize = 1 << 16;

/// `[f(0), ..., f(len - 1)]`, on every core when `len` is large: each value is computed on
/// its own, so the result does not depend on the split. An out-of-memory error, not an abort,
/// when `len` values do not fit.
pub(crate) fn table<T: Send>(
    len: usize,
    f: impl Fn(usize) -> T + Sync + Send,
) -> HistResult<Vec<T>> {
    use rayon::prelude::*;
    let mut out = crate::alloc::with_capacity(len)?;
    if len < PARALLEL_LEN {
        out.extend((0..len).map(f));
    } else {
        // An indexed parallel iterator writes into the reserved room: no other allocation.
        out.par_extend((0..len).into_par_iter().with_min_len(1 << 14).map(f));
    }
    Ok(out)
}

/// Whether every value is below the next.
pub(crate) fn increasing<P: PartialOrd + Sync>(edges: &[P]) -> bool {
    use rayon::prelude::*;
    if edges.len() < PARALLEL_LEN {
        edges.windows(2).all(|w| w[0] < w[1])
    } else {
        edges
            .par_windows(2)
            .with_min_len(1 << 14)
            .all(|w| w[0] < w[1])
    }
}

/// The `n + 1` edges of equal bins: made from their formula on first use where one made them,
/// held from the start where none did.
#[derive(Clone, Debug)]
pub struct Edges<F> {
    n: usize,
    first: F,
    last: F,
    formula: Option<Linspace>,
    made: OnceLock<Vec<F>>,
}

impl<F: BinFloat> Edges<F> {
    /// Edges computed already (no formula made them).
    pub fn held(edges: Vec<F>) -> Self {
        Edges {
            n: edges.len() - 1,
            first: edges[0],
            last: edges[edges.len() - 1],
            formula: None,
            made: OnceLock::from(edges),
        }
    }

    /// The `n + 1` edges of `formula`, the last one `last`, made on first use.
    pub fn of_formula(formula: Linspace, n: usize, last: F) -> Self {
        Edges {
            n,
            first: formula.edge(0),
            last,
            formula: Some(formula),
            made: OnceLock::new(),
        }
    }

    /// The number of bins.
    pub fn bins(&self) -> usize {
        self.n
    }

    pub fn first(&self) -> F {
        self.first
    }

    pub fn last(&self) -> F {
        self.last
    }

    /// The formula that makes them, where one does.
    pub fn formula(&self) -> Option<Linspace> {
        self.formula
    }

    /// Edge `i` (the ends without making the others).
    pub fn at(&self, i: usize) -> F {
        match i {
            0 => self.first,
            i if i == self.n => self.last,
            i => match self.formula {
                Some(f) if self.made.get().is_none() => f.edge(i),
                _ => self.all()[i],
            },
        }
    }

    /// All `n + 1` edges, made now if a formula makes them and nothing asked before; an
    /// out-of-memory error when they do not fit.
    pub fn try_all(&self) -> HistResult<&[F]> {
        if let Some(made) = self.made.get() {
            return Ok(made);
        }
        let formula = self.formula.expect("held edges are made at once");
        let (n, last) = (self.n, self.last);
        let made = table(n + 1, |i| if i == n { last } else { formula.edge(i) })?;
        Ok(self.made.get_or_init(|| made))
    }

    /// All `n + 1` edges as float64 in an array of their own, made in parallel: from the formula
    /// where nothing made them before (no array of `F` on the way), else from those made.
    pub fn to_f64(&self) -> HistResult<Vec<f64>> {
        if let Some(made) = self.made.get() {
            return table(made.len(), |i| made[i].to_f64());
        }
        let formula = self.formula.expect("held edges are made at once");
        let (n, last) = (self.n, self.last);
        table(n + 1, |i| {
            if i == n {
                last.to_f64()
            } else {
                formula.edge::<F>(i).to_f64()
            }
        })
    }

    /// All `n + 1` edges ([`Self::try_all`]; callers that may be first to ask for millions of
    /// edges ask it, and propagate running out of memory).
    pub fn all(&self) -> &[F] {
        self.try_all()
            .unwrap_or_else(|e| panic!("making {} edges: {e}", self.n + 1))
    }

    /// A copy, or an out-of-memory error.
    pub fn try_clone(&self) -> HistResult<Self> {
        let made = OnceLock::new();
        if let Some(edges) = self.made.get() {
            let _ = made.set(crate::alloc::copied(edges)?);
        }
        Ok(Edges { made, ..*self })
    }

    /// Whether every edge is below the next: from the formula where that can be shown without
    /// making them (the last step is checked on its own), else edge by edge.
    pub fn increasing(&self) -> HistResult<bool> {
        Ok(match self.formula {
            Some(f) if self.made.get().is_none() && f.provably_increasing::<F>(self.n) => {
                self.n == 0 || f.edge::<F>(self.n - 1) < self.last
            }
            _ => increasing(self.try_all()?),
        })
    }
}

impl<F: BinFloat> PartialEq for Edges<F> {
    /// Equal edges: a formula, its bin count and last edge make them all.
    fn eq(&self, other: &Self) -> bool {
        (self.n, self.first, self.last, self.formula)
            == (other.n, other.first, other.last, other.formula)
            && (self.formula.is_some() || self.all() == other.all())
    }
}

/// numpy's `linspace(start, stop, n + 1)` computed in `P`: `i * ((stop - start) / n) + start`,
/// with the last edge set to `stop`, made from that formula on first use; made at once where
/// the step underflows to 0 or the span overflows (no formula then).
pub fn linspace<P: BinFloat>(start: P, stop: P, n: usize) -> HistResult<Edges<P>> {
    linspace_as(start, stop, n)
}

/// [`linspace`] computed in `P`, each edge then rounded to `F` (numpy's `linspace(...,
/// dtype=F)`), without an array of `P`.
pub fn linspace_as<P: BinFloat, F: BinFloat>(start: P, stop: P, n: usize) -> HistResult<Edges<F>> {
    let delta = stop - start;
    let div = P::from_usize(n);
    let step = delta / div;
    let to_f = |p: P| F::from_f64(p.to_f64());
    if delta.is_finite() && step.to_f64() != 0.0 {
        let formula = Linspace {
            start: start.to_f64(),
            step: step.to_f64(),
            single: P::SINGLE,
        };
        return Ok(Edges::of_formula(formula, n, to_f(stop)));
    }
    let mut edges = if !delta.is_finite() {
        // The span overflows `P` (numpy makes NaN edges here): each edge as a weighted mean of
        // the ends, which stays finite.
        table(n + 1, |i| {
            let t = P::from_usize(i) / div;
            to_f(start - start * t + stop * t)
        })?
    } else {
        table(n + 1, |i| to_f(P::from_usize(i) / div * delta + start))?
    };
    edges[n] = to_f(stop);
    Ok(Edges::held(edges))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edges a float64 formula makes beyond float32's range round to infinity: two infinite
    /// edges do not increase (numpy: "Too many bins"), whatever the formula's step.
    #[test]
    fn edges_that_round_to_infinity_are_not_shown_increasing() {
        let e = linspace_as::<f64, f32>(-1e39, 3e38, 2).unwrap();
        assert!(!e.increasing().unwrap());
        let e = linspace_as::<f64, f32>(-3e38, 3e38, 2).unwrap();
        assert!(e.increasing().unwrap());
    }

    /// The proof never claims what checking every edge refutes, and claims the common cases.
    #[test]
    fn the_increase_shown_from_the_formula_holds_edge_by_edge() {
        let mut shown = 0;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..2000 {
            let n = 1 + (next() % [7, 1000, 70_000, 1 << 18][case % 4]) as usize;
            let lo = match next() % 4 {
                0 => 0.0,
                1 => (next() % 1000) as f64 / 7.0,
                2 => -((next() % (1 << 40)) as f64),
                _ => f64::from_bits(next() >> 2) * if next() % 2 == 0 { 1.0 } else { -1.0 },
            };
            let width = match next() % 4 {
                0 => 1.0,
                1 => (next() % 1000 + 1) as f64 * 1e-9,
                2 => (next() % (1 << 30) + 1) as f64,
                _ => lo.abs() * 1e-7 + 1e-300,
            };
            let hi = lo + width;
            if !(lo.is_finite() && hi.is_finite() && hi > lo) {
                continue;
            }
            for single in [false, true] {
                let (ok, claims) = if single {
                    let e = linspace_as::<f32, f32>(lo as f32, hi as f32, n).unwrap();
                    let claims = e.increasing().unwrap();
                    (increasing(e.all()), claims)
                } else {
                    let e = linspace_as::<f64, f32>(lo, hi, n).unwrap();
                    let e64 = linspace::<f64>(lo, hi, n).unwrap();
                    let claims = e.increasing().unwrap() && e64.increasing().unwrap();
                    (increasing(e.all()) && increasing(e64.all()), claims)
                };
                assert!(ok || !claims, "n={n} lo={lo} hi={hi} single={single}");
                shown += claims as usize;
            }
        }
        assert!(shown > 500, "the proof shows too little: {shown}");
        // The benchmark's bins, 2^24 float32 edges over [0, 1] from a float64 linspace, and a
        // million float32 bins: shown without making a single edge.
        for n in [1 << 24, 1_000_000] {
            let e = linspace_as::<f64, f32>(0.0, 1.0, n).unwrap();
            assert!(e.increasing().unwrap());
            assert!(e.made.get().is_none());
        }
    }

    #[test]
    fn dyadic_parts() {
        assert_eq!(dyadic(0.75), Some((3, -2)));
        assert_eq!(dyadic(-6.0), Some((-3, 1)));
        assert_eq!(dyadic(f64::from_bits(1)), Some((1, -1074)));
        assert_eq!(dyadic(f64::NAN), None);
    }
}
