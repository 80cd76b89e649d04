//! Exact integer edges: integer and temporal columns binned by integer edges (explicit ones, or
//! `bins="integer"`'s `arange(lo, hi + 2)`) compare in integer arithmetic, as numpy's
//! `searchsorted` does when the sample and the edges share an integer type.
//!
//! The rule is [`EdgeBins`](super::EdgeBins)'s (bin `i` holds `e[i] <= x < e[i+1]`, the last bin closed; or
//! `(e[i], e[i+1]]`, the first closed), with every comparison taken on the exact integers. Two
//! roads give it:
//!
//! - **float64, when every edge lies strictly within ±2^53.** Claim: for any integer `x` and
//!   any integer `e` with `|e| < 2^53`, `fl(x)` (any monotone rounding to float64 that keeps
//!   integers up to 2^53 exact, as Rust's `as f64`, the CPU's vector loops and the GPU's
//!   `__ll2double_rn` all do) compares with `e` as `x` does. Proof: `e` is a float64. When
//!   `|x| <= 2^53`, `fl(x) == x`. When `x > 2^53`, monotony gives `fl(x) >= fl(2^53) = 2^53 > e`,
//!   and `x > e` too; `x < -2^53` is the mirror case. Every step of `EdgeBins` (its guide
//!   included, whose only assumption is a monotone cell of `fl(x)`) and of the flow bins
//!   compares values with edges and nothing else, so its bin of `fl(x)` is the exact bin of `x`.
//!   This keeps the SIMD loops and the guide for every realistic edge of a 32-bit column and
//!   for integers up to 2^53 (`[2^53, 2^53 + 1]` would not: `2^53 + 1` rounds onto the edge).
//! - **integers, otherwise** ([`IntBins`]): the edges as `i128`, each value widened exactly
//!   (every 64-bit integer fits), then the same binary searches. The GPU keeps 64 bits: see
//!   [`KeyedBins`], which these tests prove equal to the `i128` rule on every value.
//!
//! Equal bins (`bins=n`) stay float64 as numpy makes them (its `linspace` is float).

use crate::bins::{BinSpec, Closed, Range, ValueKind};
use crate::error::{HistError, HistResult};

/// Integers within this magnitude (exclusive) compare exactly after rounding to float64.
pub const EXACT_IN_F64: i128 = 1 << 53;

/// Whether the float64 road is exact for these integer edges (see the module's proof).
pub fn exact_in_f64(edges: &[i128]) -> bool {
    edges.iter().all(|e| e.abs() < EXACT_IN_F64)
}

/// Integer edges: exact comparisons for an integer or temporal column, by float64 where that is
/// proved exact (every edge within ±2^53), else in integers; a float column compares them in
/// float64, as numpy's common type is then float64.
pub(super) fn resolve(
    edges: &[i128],
    range: Option<Range>,
    closed: Closed,
    kind: ValueKind,
) -> HistResult<BinSpec> {
    validate(edges)?;
    if kind != ValueKind::Integer || exact_in_f64(edges) || range.is_some() {
        // (`explicit` refuses a `range` beside edges.)
        let floats = super::linspace::table(edges.len(), |i| edges[i] as f64)?;
        return BinSpec::explicit(&floats, range, closed);
    }
    Ok(BinSpec::Integers(IntBins::new(
        crate::alloc::copied(edges)?,
        closed,
    )))
}

/// Explicit integer edges compared exactly (the module's second road).
#[derive(Clone, Debug, PartialEq)]
pub struct IntBins {
    /// `n + 1` edges that never decrease.
    pub edges: Vec<i128>,
    pub closed: Closed,
}

impl IntBins {
    pub fn new(edges: Vec<i128>, closed: Closed) -> Self {
        IntBins { edges, closed }
    }

    pub fn try_clone(&self) -> HistResult<Self> {
        Ok(IntBins {
            edges: crate::alloc::copied(&self.edges)?,
            closed: self.closed,
        })
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.edges.len() - 1
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bin of `x`, or `self.len()` when `x` is not counted (`EdgeBins::bin` on integers).
    #[inline(always)]
    pub fn bin(&self, x: i128) -> usize {
        bin_in(&self.edges, self.closed, x)
    }

    /// Whether `x` lies below the first edge (the flow bins' underflow).
    #[inline(always)]
    pub fn below(&self, x: i128) -> bool {
        x < self.edges[0]
    }

    /// The 64-bit form the GPU reads, for values of `domain`.
    pub fn keyed(&self, domain: Domain, flow: bool) -> HistResult<KeyedBins> {
        let mut keys = crate::alloc::with_capacity(self.edges.len())?;
        keys.extend(self.edges.iter().map(|&e| domain.key(domain.clamp(e))));
        let end = |x: i128| {
            let b = self.bin(x);
            let n = self.len();
            (match (flow, b < n) {
                (false, _) => b,
                (true, true) => b + 1,
                (true, false) if self.below(x) => 0,
                (true, false) => n + 1,
            }) as u32
        };
        Ok(KeyedBins {
            keys,
            at_min: end(domain.min()),
            at_max: end(domain.max()),
        })
    }
}

/// `EdgeBins::bin`'s rule over sorted integers `e` (closed left: edges `<= x`; right: `< x`).
#[inline(always)]
fn bin_in<E: Ord + Copy>(e: &[E], closed: Closed, x: E) -> usize {
    let n = e.len() - 1;
    if !(x >= e[0] && x <= e[n]) {
        return n;
    }
    match closed {
        Closed::Left => (e.partition_point(|&v| v <= x) - 1).min(n - 1),
        Closed::Right => e.partition_point(|&v| v < x).max(1) - 1,
    }
}

/// The values a column holds, as the GPU compares them: Int64 (every signed, narrower unsigned
/// and temporal column widens into it exactly) or UInt64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    Signed,
    Unsigned,
}

impl Domain {
    pub fn of(dtype: crate::dtype::DType) -> Domain {
        match dtype {
            crate::dtype::DType::U64 => Domain::Unsigned,
            _ => Domain::Signed,
        }
    }

    pub fn min(self) -> i128 {
        match self {
            Domain::Signed => i64::MIN as i128,
            Domain::Unsigned => 0,
        }
    }

    pub fn max(self) -> i128 {
        match self {
            Domain::Signed => i64::MAX as i128,
            Domain::Unsigned => u64::MAX as i128,
        }
    }

    fn clamp(self, x: i128) -> i128 {
        x.clamp(self.min(), self.max())
    }

    /// The order-preserving 64-bit key of a value of the domain (the kernels' `int_key`): the
    /// value itself for UInt64, its two's complement with the sign bit flipped for Int64.
    pub fn key(self, x: i128) -> u64 {
        match self {
            Domain::Signed => (x as i64 as u64) ^ (1 << 63),
            Domain::Unsigned => x as u64,
        }
    }
}

/// [`IntBins`] for the GPU: 64-bit keys of the edges clamped into the values' domain, and the
/// bins of the domain's two ends worked out exactly here.
///
/// Why clamping is exact for every value strictly inside the domain: an edge below the domain's
/// minimum compares with such a value (`<=`, `<`, `>=`) exactly as the minimum does (both lie
/// below it), and an edge above the maximum as the maximum does. Only the ends themselves can
/// tie with a clamped edge, and their bins are `at_min` and `at_max`.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedBins {
    pub keys: Vec<u64>,
    /// The axis bin (flow bins included where asked) of the domain's minimum and maximum.
    pub at_min: u32,
    pub at_max: u32,
}

impl KeyedBins {
    /// The kernels' `IntEdgeBin` (kernels/binners.cuh), step for step: the axis bin of the
    /// value of key `k`, `n` (or with `flow`, 0 and `n + 1`) where it is not counted.
    pub fn bin(&self, closed: Closed, flow: bool, k: u64) -> usize {
        if k == 0 {
            return self.at_min as usize;
        }
        if k == u64::MAX {
            return self.at_max as usize;
        }
        let n = self.keys.len() - 1;
        let b = bin_in(&self.keys, closed, k);
        match (flow, b < n) {
            (false, _) => b,
            (true, true) => b + 1,
            (true, false) if k < self.keys[0] => 0,
            (true, false) => n + 1,
        }
    }
}

/// Checks integer edges as `validate_edges` checks float ones: two or more, at most
/// `MAX_BINS` bins, never decreasing.
pub(super) fn validate(edges: &[i128]) -> HistResult<()> {
    if edges.len() < 2 {
        return Err(HistError::InvalidArgument(format!(
            "explicit `bins` needs at least two edges, got {}",
            edges.len()
        )));
    }
    if edges.len() - 1 > super::MAX_BINS {
        return Err(HistError::TooManyBins {
            bins: edges.len() - 1,
            max: super::MAX_BINS,
        });
    }
    if let Some(i) = edges.windows(2).position(|w| w[0] > w[1]) {
        return Err(HistError::InvalidArgument(format!(
            "bin edges must increase, but edge {i} ({}) > edge {} ({})",
            edges[i],
            i + 1,
            edges[i + 1]
        )));
    }
    Ok(())
}

/// The Polars rule for edges a user gives, on integers: strictly increasing.
pub fn check_strictly_increasing(edges: &[i128]) -> HistResult<()> {
    match edges.windows(2).position(|w| w[0] >= w[1]) {
        Some(i) => Err(HistError::InvalidArgument(format!(
            "bin edges must increase strictly, but edge {i} ({}) >= edge {} ({})",
            edges[i],
            i + 1,
            edges[i + 1]
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
#[path = "integer_tests.rs"]
mod tests;

/// An integer of any size up to 128 bits, as it travels in arguments: decimal text (serde's
/// buffering of untagged enums cannot hold an `i128`), or a 64-bit number from Rust callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExactInt(pub i128);

impl serde::Serialize for ExactInt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for ExactInt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ExactInt;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer, or one as decimal text")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ExactInt, E> {
                Ok(ExactInt(v as i128))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ExactInt, E> {
                Ok(ExactInt(v as i128))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ExactInt, E> {
                v.trim()
                    .parse::<i128>()
                    .map(ExactInt)
                    .map_err(|_| E::custom(format!("{v:?} is not an integer of at most 127 bits")))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// `Binning::Integers` as it serializes: `{"integers": ["0", "1", ...]}`, so that it never reads
/// back as float edges.
pub(super) mod tagged {
    use super::ExactInt;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Integers {
        integers: Vec<ExactInt>,
    }

    pub fn serialize<S: Serializer>(edges: &[i128], s: S) -> Result<S::Ok, S::Error> {
        let integers = edges.iter().map(|&e| ExactInt(e)).collect();
        Integers { integers }.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<i128>, D::Error> {
        let Integers { integers } = Integers::deserialize(d)?;
        Ok(integers.into_iter().map(|e| e.0).collect())
    }
}
