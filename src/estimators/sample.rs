//! The sample an estimator sees, and numpy's statistics of it (`ptp`, `std`, percentiles) in
//! numpy's own types.

use super::*;

// "sqrt", "sturges" and "rice" need only the sample's size and span (`ptp`): a streaming pass
// over data larger than memory finds both (`equal_bin_count_from_extremes`).

pub(super) fn sqrt_width(n: usize, ptp: Num) -> Num {
    Num::F64(ptp.f64() / (n as f64).sqrt())
}

pub(super) fn sturges_width(n: usize, ptp: Num) -> Num {
    Num::F64(ptp.f64() / ((n as f64).log2() + 1.0))
}

pub(super) fn rice_width(n: usize, ptp: Num) -> Num {
    // `2.0 * x.size ** (1.0 / 3)` is a Python float: float32 data divides in float32.
    let by = 2.0 * python_pow(n as f64, 1.0 / 3.0);
    match ptp {
        Num::F16(p) => Num::F16(h(p.to_f32() / crate::bins::f16_of(by).to_f32())),
        Num::F32(p) => Num::F32(p / by as f32),
        Num::F64(p) => Num::F64(p / by),
    }
}

/// The sample an estimator sees (numpy's `a`, cut to the range) and its extremes.
pub(super) struct Sample<'a, T: SampleValue> {
    pub(super) values: Cow<'a, [T]>,
    pub(super) extremes: Option<(T, T)>,
}

impl<'a, T: SampleValue> Sample<'a, T> {
    pub(super) fn new(values: Cow<'a, [T]>) -> Self {
        let extremes = values
            .par_chunks(PIECE)
            .map(|piece| {
                // Selects rather than branches, so the loop vectorizes.
                let (mut lo, mut hi) = (piece[0], piece[0]);
                if crate::interrupt::pending() {
                    return (lo, hi); // never used: the estimate checks before reading it
                }
                for &x in piece {
                    lo = if x < lo { x } else { lo };
                    hi = if x > hi { x } else { hi };
                }
                (lo, hi)
            })
            .reduce_with(|(a, b), (c, d)| (if c < a { c } else { a }, if d > b { d } else { b }));
        Sample { values, extremes }
    }

    pub(super) fn n(&self) -> usize {
        self.values.len()
    }

    /// `_ptp(x)`.
    pub(super) fn ptp(&self) -> Num {
        let (min, max) = self.extremes.expect("a non-empty sample");
        T::ptp(min, max)
    }

    pub(super) fn sqrt(&self) -> Num {
        sqrt_width(self.n(), self.ptp())
    }

    pub(super) fn sturges(&self) -> Num {
        sturges_width(self.n(), self.ptp())
    }

    pub(super) fn rice(&self) -> Num {
        rice_width(self.n(), self.ptp())
    }

    pub(super) fn scott(&self) -> Num {
        let n = self.n() as f64;
        let factor = python_pow(24.0 * python_pow(std::f64::consts::PI, 0.5) / n, 1.0 / 3.0);
        match self.std() {
            Num::F16(s) => Num::F16(h(crate::bins::f16_of(factor).to_f32() * s.to_f32())),
            Num::F32(s) => Num::F32(factor as f32 * s),
            Num::F64(s) => Num::F64(factor * s),
        }
    }

    pub(super) fn doane(&self) -> Num {
        let n = self.n();
        if n > 2 {
            let nf = n as f64;
            let sg1 = (6.0 * (n - 2) as f64 / ((nf + 1.0) * (n + 3) as f64)).sqrt();
            let sigma = self.std();
            if sigma.f64() > 0.0 {
                let g1 = self.third_moment(self.mean(), sigma);
                // `sg1` is `np.sqrt` of a Python float, a float64 scalar: whatever g1's type,
                // `np.log2(1.0 + np.absolute(g1) / sg1)` is float64.
                let skew = (1.0 + g1.f64().abs() / sg1).log2();
                let denom = (1.0 + nf.log2()) + skew;
                return Num::F64(self.ptp().f64() / denom);
            }
        }
        Num::F64(0.0)
    }

    /// `2.0 * iqr * x.size ** (-1.0 / 3.0)`.
    pub(super) fn fd(&self) -> HistResult<Num> {
        let n = self.n() as f64;
        let extremes = self.extremes.expect("a non-empty sample");
        let (p75, p25) = quartiles(&self.values, extremes)?;
        let iqr = p75 - p25;
        Ok(Num::F64(2.0 * iqr * python_pow(n, -1.0 / 3.0)))
    }

    pub(super) fn auto(&self) -> HistResult<Num> {
        let sturges = self.sturges();
        let sqrt = self.sqrt();
        let fd = self.fd()?;
        // Python's max and min keep the first argument unless the second is strictly beyond.
        let half_sqrt = Num::F64(sqrt.f64() / 2.0);
        let fd_corrected = if half_sqrt.f64() > fd.f64() {
            half_sqrt
        } else {
            fd
        };
        Ok(if sturges.f64() < fd_corrected.f64() {
            sturges
        } else {
            fd_corrected
        })
    }

    /// The width of the "stone" minimum, and whether it is numpy's upper bound (its warning).
    pub(super) fn stone(
        &self,
        histogram: &mut dyn FnMut(usize) -> HistResult<Vec<u64>>,
    ) -> HistResult<(Num, bool)> {
        let n = self.n();
        let ptp = self.ptp();
        if n <= 1 || ptp.f64() == 0.0 {
            return Ok((Num::F64(0.0), false));
        }
        if ptp.f64().is_infinite() {
            // numpy's histograms then index with NaN and fail.
            return Err(HistError::argument(|s| {
                format!(
                    "{} cannot estimate a bin count for this data: its span, max - min, \
                     overflows {} (numpy fails here too); pass a number of bins",
                    Estimator::Stone.spelled(s),
                    ptp.precision()
                )
            }));
        }
        let upper = 100.max((n as f64).sqrt() as usize);
        // numpy's `p_k = np.histogram(x, bins=k, range=range)[0] / n`.
        let mut probabilities = |bins: usize| -> HistResult<Vec<f64>> {
            let counts = histogram(bins).map_err(|e| match e {
                HistError::InvalidArgument(_) | HistError::Argument { .. } => {
                    HistError::argument(|s| {
                        format!(
                            "{} compares histograms of 1 to {upper} bins, and the one of {bins} \
                             bins fails: {}",
                            Estimator::Stone.spelled(s),
                            e.message(s)
                        )
                    })
                }
                other => other,
            })?;
            if counts.len() != bins {
                return Err(HistError::Internal(format!(
                    "the \"stone\" estimator: the histogram for {bins} bins has {} counts",
                    counts.len()
                )));
            }
            crate::alloc::collected(counts.iter().map(|&c| c as f64 / n as f64))
        };
        // `(2 - (n + 1) * p.dot(p)) / hh`, and how far another rounding of the dot product
        // (any order of the sum, fused or not) could move it: within `k` products' rounding.
        let score =
            |bins: usize, dot: f64| (2.0 - (n + 1) as f64 * dot) / ptp.div_count(bins).f64();
        let slack = |bins: usize, dot: f64, j: f64| {
            let eps = f64::EPSILON;
            let moved = (n + 1) as f64 * dot * 2.0 * (bins as f64 + 2.0) * eps;
            (moved + 4.0 * eps * ((n + 1) as f64 * dot + 2.0)) / ptp.div_count(bins).f64()
                + 4.0 * eps * j.abs()
        };
        let mut scored = crate::alloc::with_capacity(upper)?;
        for bins in 1..=upper {
            let dot = openblas_ddot_self(&probabilities(bins)?);
            let j = score(bins, dot);
            scored.push((bins, j, slack(bins, dot, j)));
        }
        // Python's `min(range(1, upper + 1), key=jhat)`: the first candidate strictly smallest.
        let first_min = |scores: &[(usize, f64)]| {
            let mut best = scores[0];
            for &(bins, j) in &scores[1..] {
                if j < best.1 {
                    best = (bins, j);
                }
            }
            best.0
        };
        let ours: Vec<(usize, f64)> = scored.iter().map(|&(b, j, _)| (b, j)).collect();
        let mut best = first_min(&ours);
        let ceiling = scored
            .iter()
            .map(|&(_, j, s)| j + s)
            .fold(f64::INFINITY, f64::min);
        let near: Vec<usize> = scored
            .iter()
            .filter(|&&(_, j, s)| j - s <= ceiling)
            .map(|&(bins, _, _)| bins)
            .collect();
        if let (true, Some(dot)) = (near.len() > 1, DOT_PRODUCT.get()) {
            // Counts that rounding could reorder: scored again by the registered dot product
            // (numpy's own); every other count scores above them whatever the rounding.
            let mut rescored = Vec::with_capacity(near.len());
            for &bins in &near {
                match dot(&probabilities(bins)?) {
                    Some(d) => rescored.push((bins, score(bins, d))),
                    None => break,
                }
            }
            if rescored.len() == near.len() {
                best = first_min(&rescored);
            }
        }
        Ok((ptp.div_count(best), best == upper))
    }

    /// `np.mean(x)`: float32 for float32 data (the float32 sum divided in float64 and rounded
    /// back), float16 summed in float32 cast buffers and divided in float64, integers summed as
    /// float64 in numpy's cast buffers.
    pub(super) fn mean(&self) -> Num {
        let x = &self.values[..];
        let n = x.len();
        match T::CLASS {
            Class::Float16 => Num::F16(crate::bins::f16_of(
                buffered_sum_f32(x, |v| v.to_f32()) as f64 / n as f64,
            )),
            Class::Float32 => Num::F32(div_rounded_f32(pairwise_sum(x, |v| v.to_f32()), n)),
            Class::Float64 => Num::F64(pairwise_sum(x, |v| v.to_f64()) / n as f64),
            Class::Integer => Num::F64(buffered_sum_f64(x) / n as f64),
        }
    }

    /// `np.std(x)`. Its mean (`_var`'s own) is `np.mean`'s but for float16, which `_var` sums
    /// in float16 (float32 accumulators, no cast, rounded once) before dividing in float64.
    pub(super) fn std(&self) -> Num {
        let x = &self.values[..];
        let n = x.len();
        let mean = match T::CLASS {
            Class::Float16 => {
                let sum = h(pairwise_sum(x, |v| v.to_f32()));
                Num::F16(crate::bins::f16_of(sum.to_f64() / n as f64))
            }
            _ => self.mean(),
        };
        match mean {
            Num::F16(mean) => {
                let mean = mean.to_f32();
                // Each deviation and its square rounded to float16, summed as float16 is.
                let sq = h(pairwise_sum(x, |v| {
                    let d = h(v.to_f32() - mean).to_f32();
                    h(d * d).to_f32()
                }));
                let var = crate::bins::f16_of(sq.to_f64() / n as f64);
                Num::F16(h(var.to_f32().sqrt()))
            }
            Num::F32(mean) => {
                let sq = pairwise_sum(x, |v| {
                    let d = v.to_f32() - mean;
                    d * d
                });
                Num::F32(div_rounded_f32(sq, n).sqrt())
            }
            Num::F64(mean) => {
                // Deviations are a float64 array: summed whole, not in cast buffers.
                let sq = pairwise_sum(x, |v| {
                    let d = v.to_f64() - mean;
                    d * d
                });
                Num::F64((sq / n as f64).sqrt())
            }
        }
    }

    /// Doane's `g1 = np.mean(((x - np.mean(x)) / sigma) ** 3)`, in the data's float type.
    pub(super) fn third_moment(&self, mean: Num, sigma: Num) -> Num {
        let x = &self.values[..];
        let n = x.len();
        match (mean, sigma) {
            (Num::F16(mean), Num::F16(sigma)) => {
                let (mean, sigma) = (mean.to_f32(), sigma.to_f32());
                let cube = move |v: T| {
                    let t = h(h(v.to_f32() - mean).to_f32() / sigma).to_f32();
                    h(libm_powf(t, 3.0)).to_f32()
                };
                Num::F16(crate::bins::f16_of(
                    buffered_sum_f32(x, cube) as f64 / n as f64,
                ))
            }
            (Num::F32(mean), Num::F32(sigma)) => {
                let cubes = pairwise_sum(x, |v| libm_powf((v.to_f32() - mean) / sigma, 3.0));
                Num::F32(div_rounded_f32(cubes, n))
            }
            (mean, sigma) => {
                let (mean, sigma) = (mean.f64(), sigma.f64());
                let cubes = pairwise_sum(x, |v| libm_pow((v.to_f64() - mean) / sigma, 3.0));
                Num::F64(cubes / n as f64)
            }
        }
    }
}
