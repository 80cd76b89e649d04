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
        match self.std(self.mean()) {
            Num::F32(s) => Num::F32(factor as f32 * s),
            Num::F64(s) => Num::F64(factor * s),
        }
    }

    pub(super) fn doane(&self) -> Num {
        let n = self.n();
        if n > 2 {
            let nf = n as f64;
            let sg1 = (6.0 * (n - 2) as f64 / ((nf + 1.0) * (n + 3) as f64)).sqrt();
            let mean = self.mean();
            let sigma = self.std(mean);
            if sigma.f64() > 0.0 {
                let g1 = self.third_moment(mean, sigma);
                let denom = (1.0 + nf.log2()) + (1.0 + g1.abs() / sg1).log2();
                return Num::F64(self.ptp().f64() / denom);
            }
        }
        Num::F64(0.0)
    }

    /// `2.0 * iqr * x.size ** (-1.0 / 3.0)`.
    pub(super) fn fd(&self) -> Num {
        let n = self.n() as f64;
        let extremes = self.extremes.expect("a non-empty sample");
        let (p75, p25) = quartiles(&self.values, extremes);
        let iqr = p75 - p25;
        Num::F64(2.0 * iqr * python_pow(n, -1.0 / 3.0))
    }

    pub(super) fn auto(&self) -> Num {
        let sturges = self.sturges();
        let sqrt = self.sqrt();
        let fd = self.fd();
        // Python's max and min keep the first argument unless the second is strictly beyond.
        let half_sqrt = Num::F64(sqrt.f64() / 2.0);
        let fd_corrected = if half_sqrt.f64() > fd.f64() {
            half_sqrt
        } else {
            fd
        };
        if sturges.f64() < fd_corrected.f64() {
            sturges
        } else {
            fd_corrected
        }
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
                    s.rule("stone"),
                    ptp.precision()
                )
            }));
        }
        let upper = 100.max((n as f64).sqrt() as usize);
        let mut jhat = |bins: usize| -> HistResult<f64> {
            let hh = ptp.div_count(bins).f64();
            let counts = histogram(bins).map_err(|e| match e {
                HistError::InvalidArgument(_) | HistError::Argument { .. } => {
                    HistError::argument(|s| {
                        format!(
                            "{} compares histograms of 1 to {upper} bins, and the one of {bins} \
                             bins fails: {}",
                            s.rule("stone"),
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
            let p: Vec<f64> = counts.iter().map(|&c| c as f64 / n as f64).collect();
            Ok((2.0 - (n + 1) as f64 * openblas_ddot_self(&p)) / hh)
        };
        // Python's `min(range(1, upper + 1), key=jhat)`: the first candidate strictly smallest.
        let (mut best, mut best_j) = (1, jhat(1)?);
        for bins in 2..=upper {
            let j = jhat(bins)?;
            if j < best_j {
                best = bins;
                best_j = j;
            }
        }
        Ok((ptp.div_count(best), best == upper))
    }

    /// `np.mean(x)`: float32 for float32 data (the float32 sum divided in float64 and rounded
    /// back), integers summed as float64 in numpy's cast buffers.
    pub(super) fn mean(&self) -> Num {
        let x = &self.values[..];
        let n = x.len();
        match T::CLASS {
            Class::Float32 => Num::F32(div_rounded_f32(pairwise_sum(x, |v| v.to_f32()), n)),
            Class::Float64 => Num::F64(pairwise_sum(x, |v| v.to_f64()) / n as f64),
            Class::Integer => Num::F64(buffered_sum_f64(x) / n as f64),
        }
    }

    /// `np.std(x)` given `np.mean(x)` (`_var` computes the same mean).
    pub(super) fn std(&self, mean: Num) -> Num {
        let x = &self.values[..];
        let n = x.len();
        match mean {
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

    /// Doane's `g1 = np.mean(((x - np.mean(x)) / sigma) ** 3)`, as float64.
    pub(super) fn third_moment(&self, mean: Num, sigma: Num) -> f64 {
        let x = &self.values[..];
        let n = x.len();
        match (mean, sigma) {
            (Num::F32(mean), Num::F32(sigma)) => {
                let cubes = pairwise_sum(x, |v| libm_powf((v.to_f32() - mean) / sigma, 3.0));
                div_rounded_f32(cubes, n) as f64
            }
            (mean, sigma) => {
                let (mean, sigma) = (mean.f64(), sigma.f64());
                let cubes = pairwise_sum(x, |v| libm_pow((v.to_f64() - mean) / sigma, 3.0));
                cubes / n as f64
            }
        }
    }
}
