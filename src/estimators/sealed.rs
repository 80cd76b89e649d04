//! The column types an estimator reads, sealed: how each computes as numpy does.

use std::cmp::Ordering;

/// How a column's type computes, as far as numpy's statistics care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Float32,
    Float64,
    Integer,
}

/// A numpy scalar as the estimators produce them: float32 or float64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    F32(f32),
    F64(f64),
}

pub trait Sample: Copy + PartialOrd + Send + Sync + 'static {
    const CLASS: Class;
    /// The significant (top) bits of [`Sample::key`].
    const KEY_BITS: u32;
    /// An unsigned key in the values' order, left-aligned in 64 bits.
    fn key(self) -> u64;
    /// numpy's cast to float64 (round to nearest).
    fn to_f64(self) -> f64;
    /// Only called for float32 columns.
    fn to_f32(self) -> f32;
    fn is_nan(self) -> bool;
    /// A total order that agrees with `<` on the values a sample holds (no NaN).
    fn order(&self, other: &Self) -> Ordering;
    /// numpy's `_unsigned_subtract(max, min)`: the data span in the column's type.
    fn ptp(min: Self, max: Self) -> Num;
    /// `b - a` as `np.percentile`'s `_lerp` takes it, in the column's type, then as float64.
    fn lerp_diff(a: Self, b: Self) -> f64;
    /// The values numpy's `(a >= lo) & (a <= hi)` keeps (`lo`, `hi` Python floats), as an
    /// inclusive interval of this type (empty when its start exceeds its end).
    fn window(lo: f64, hi: f64) -> (Self, Self);
    /// `(v + 0.5) - (v - 0.5)` in numpy's types: the span numpy bins when min == max == v.
    fn widened_span(v: Self) -> Num;
    /// Whether the value is finite (numpy refuses an infinite range taken from the data).
    fn is_finite(self) -> bool;
}
