//! The column types an estimator reads, sealed: how each computes as numpy does.

use std::cmp::Ordering;

use half::f16;

use super::first_where;

/// How a column's type computes, as far as numpy's statistics care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// numpy's float16: every operation in float32, rounded to float16.
    Float16,
    Float32,
    Float64,
    Integer,
}

/// A numpy scalar as the estimators produce them: float16, float32 or float64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    F16(f16),
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
    /// Only called for float16 and float32 columns (exact for both).
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
    /// The values `(a >= lo) & (a <= hi)` keeps for numpy scalars `lo`, `hi` (NEP 50: the
    /// comparison is in a type that holds both sides, so exact).
    fn window_exact(lo: f64, hi: f64) -> (Self, Self);
    /// `(v + 0.5) - (v - 0.5)` in numpy's types: the span numpy bins when min == max == v.
    fn widened_span(v: Self) -> Num;
    /// Whether the value is finite (numpy refuses an infinite range taken from the data).
    fn is_finite(self) -> bool;
}

// The implementations: integers of every width, float16, float32 and float64.

macro_rules! integer_sample {
    ($($t:ty => $u:ty, $flip:expr),*) => {$(
        impl Sample for $t {
            const CLASS: Class = Class::Integer;
            const KEY_BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn key(self) -> u64 {
                // Signed values flip their sign bit to sort as unsigned.
                ((self as $u ^ $flip) as u64) << (64 - <$t>::BITS)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_f32(self) -> f32 {
                self as f32
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn order(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            fn ptp(min: Self, max: Self) -> Num {
                // The same width, unsigned: exact for every pair of values.
                Num::F64((max as $u).wrapping_sub(min as $u) as f64)
            }
            fn lerp_diff(a: Self, b: Self) -> f64 {
                // Integer arrays subtract in their own width and wrap (numpy 2.4 does not widen).
                b.wrapping_sub(a) as f64
            }
            fn window(lo: f64, hi: f64) -> (Self, Self) {
                // numpy compares integers as float64, a monotone cast: the kept ones are an
                // interval, whose ends a search finds once instead of a cast per value.
                let (min, max) = (<$t>::MIN as i128, <$t>::MAX as i128);
                let first = first_where(min, max, |x| (x as $t) as f64 >= lo);
                let past = first_where(min, max, |x| (x as $t) as f64 > hi);
                match (first, past.unwrap_or(max + 1) - 1) {
                    (Some(a), b) if a <= b => (a as $t, b as $t),
                    _ => (<$t>::MAX, <$t>::MIN),
                }
            }
            fn window_exact(lo: f64, hi: f64) -> (Self, Self) {
                // Against a float scalar numpy compares in a float type that holds the
                // integers (float16 for 8 bits, float32 for 16, float64 above): as float64.
                Self::window(lo, hi)
            }
            fn widened_span(v: Self) -> Num {
                // An integer scalar minus a Python float is float64.
                let v = v as f64;
                Num::F64((v + 0.5) - (v - 0.5))
            }
            fn is_finite(self) -> bool {
                true
            }
        }
    )*};
}
integer_sample!(
    i8 => u8, 1 << 7, i16 => u16, 1 << 15, i32 => u32, 1 << 31, i64 => u64, 1 << 63,
    u8 => u8, 0, u16 => u16, 0, u32 => u32, 0, u64 => u64, 0
);

impl Sample for f32 {
    const CLASS: Class = Class::Float32;
    const KEY_BITS: u32 = 32;
    #[inline(always)]
    fn key(self) -> u64 {
        let bits = self.to_bits();
        let key = if bits >> 31 == 1 {
            !bits
        } else {
            bits | 1 << 31
        };
        (key as u64) << 32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    fn order(&self, other: &Self) -> Ordering {
        self.partial_cmp(other)
            .unwrap_or_else(|| self.total_cmp(other))
    }
    fn ptp(min: Self, max: Self) -> Num {
        Num::F32(max - min)
    }
    fn lerp_diff(a: Self, b: Self) -> f64 {
        (b - a) as f64
    }
    fn window(lo: f64, hi: f64) -> (Self, Self) {
        // A Python float meets a float32 array as float32 (NEP 50).
        (lo as f32, hi as f32)
    }
    fn window_exact(lo: f64, hi: f64) -> (Self, Self) {
        let (a, b) = (lo as f32, hi as f32);
        (
            if (a as f64) < lo { a.next_up() } else { a },
            if (b as f64) > hi { b.next_down() } else { b },
        )
    }
    fn widened_span(v: Self) -> Num {
        Num::F32((v + 0.5) - (v - 0.5))
    }
    fn is_finite(self) -> bool {
        self.is_finite()
    }
}

impl Sample for f64 {
    const CLASS: Class = Class::Float64;
    const KEY_BITS: u32 = 64;
    #[inline(always)]
    fn key(self) -> u64 {
        let bits = self.to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | 1 << 63
        }
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    fn order(&self, other: &Self) -> Ordering {
        self.partial_cmp(other)
            .unwrap_or_else(|| self.total_cmp(other))
    }
    fn ptp(min: Self, max: Self) -> Num {
        Num::F64(max - min)
    }
    fn lerp_diff(a: Self, b: Self) -> f64 {
        b - a
    }
    fn window(lo: f64, hi: f64) -> (Self, Self) {
        (lo, hi)
    }
    fn window_exact(lo: f64, hi: f64) -> (Self, Self) {
        (lo, hi)
    }
    fn widened_span(v: Self) -> Num {
        Num::F64((v + 0.5) - (v - 0.5))
    }
    fn is_finite(self) -> bool {
        self.is_finite()
    }
}

/// The float16 next to finite `x`, above it (`up`) or below it.
fn half_step(x: f16, up: bool) -> f16 {
    let bits = x.to_bits();
    let positive = bits & 0x8000 == 0;
    let next = match (x.to_f32() == 0.0, up) {
        (true, true) => 0x0001,
        (true, false) => 0x8001,
        _ if positive == up => bits + 1,
        _ => bits - 1,
    };
    f16::from_bits(next)
}

/// numpy's float16 arithmetic: the operation in float32, rounded once to float16 (its half
/// loops and scalar math convert to float, compute, and convert back).
#[inline(always)]
pub fn h(x: f32) -> f16 {
    f16::from_f32(x)
}

impl Sample for f16 {
    const CLASS: Class = Class::Float16;
    const KEY_BITS: u32 = 16;
    #[inline(always)]
    fn key(self) -> u64 {
        let bits = self.to_bits();
        let key = if bits >> 15 == 1 {
            !bits
        } else {
            bits | 1 << 15
        };
        (key as u64) << 48
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f16::is_nan(self)
    }
    #[inline(always)]
    fn order(&self, other: &Self) -> Ordering {
        self.partial_cmp(other)
            .unwrap_or_else(|| self.total_cmp(other))
    }
    fn ptp(min: Self, max: Self) -> Num {
        Num::F16(h(max.to_f32() - min.to_f32()))
    }
    fn lerp_diff(a: Self, b: Self) -> f64 {
        h(b.to_f32() - a.to_f32()).to_f64()
    }
    fn window(lo: f64, hi: f64) -> (Self, Self) {
        // A Python float meets a float16 array as float16 (NEP 50).
        (crate::bins::f16_of(lo), crate::bins::f16_of(hi))
    }
    fn window_exact(lo: f64, hi: f64) -> (Self, Self) {
        // The float32 window holds the same float16 values: the first and last of them.
        let (a, b) = f32::window_exact(lo, hi);
        let (a16, b16) = (f16::from_f32(a), f16::from_f32(b));
        (
            if a16.to_f32() < a {
                half_step(a16, true)
            } else {
                a16
            },
            if b16.to_f32() > b {
                half_step(b16, false)
            } else {
                b16
            },
        )
    }
    fn widened_span(v: Self) -> Num {
        let v = v.to_f32();
        Num::F16(h(h(v + 0.5).to_f32() - h(v - 0.5).to_f32()))
    }
    fn is_finite(self) -> bool {
        f16::is_finite(self)
    }
}
