//! Counts per bin (cell, n-D): exact integers, or sums of weights with their squares.

use serde::{Deserialize, Serialize};

use crate::error::{HistError, HistResult};

/// What a histogram holds per bin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Counts {
    /// Rows per bin, exact.
    Exact(Vec<u64>),
    /// Sums of weights per bin.
    Weighted(Vec<f64>),
}

impl Counts {
    /// `n` zero counts, or zero sums when `weighted`; a `MemoryError`-like error instead of an
    /// abort when `n` bins do not fit in memory.
    pub fn zeros(n: usize, weighted: bool) -> HistResult<Counts> {
        Ok(if weighted {
            Counts::Weighted(zeroed(n)?)
        } else {
            Counts::Exact(zeroed(n)?)
        })
    }

    pub fn len(&self) -> usize {
        match self {
            Counts::Exact(c) => c.len(),
            Counts::Weighted(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_weighted(&self) -> bool {
        matches!(self, Counts::Weighted(_))
    }

    /// Bin `i` as float64 (for density and plots).
    pub fn get_f64(&self, i: usize) -> f64 {
        match self {
            Counts::Exact(c) => c[i] as f64,
            Counts::Weighted(s) => s[i],
        }
    }

    /// A copy, or an out-of-memory error.
    pub fn try_clone(&self) -> HistResult<Counts> {
        Ok(match self {
            Counts::Exact(c) => Counts::Exact(crate::alloc::copied(c)?),
            Counts::Weighted(s) => Counts::Weighted(crate::alloc::copied(s)?),
        })
    }

    /// Adds `other` bin by bin; exact counts past 2^64 - 1 are an error, never a wrap, and
    /// leave `self` as it was (checked before anything is added).
    pub fn add(&mut self, other: &Counts) -> HistResult<()> {
        match (self, other) {
            (Counts::Exact(a), Counts::Exact(b)) if a.len() == b.len() => {
                // One pass (a million bins are megabytes), undone on the rare overflow.
                let mut overflow = false;
                a.iter_mut().zip(b).for_each(|(x, &y)| {
                    let (sum, o) = x.overflowing_add(y);
                    *x = sum;
                    overflow |= o;
                });
                if overflow {
                    a.iter_mut()
                        .zip(b)
                        .for_each(|(x, &y)| *x = x.wrapping_sub(y));
                    return Err(HistError::Overflow);
                }
                Ok(())
            }
            (Counts::Weighted(a), Counts::Weighted(b)) if a.len() == b.len() => {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                Ok(())
            }
            _ => Err(HistError::InvalidArgument(
                "counts of different shapes or kinds cannot be added".into(),
            )),
        }
    }
}

pub use crate::alloc::zeroed;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_past_u64_is_an_error() {
        let mut a = Counts::Exact(vec![u64::MAX - 1, 0]);
        assert!(a.add(&Counts::Exact(vec![1, 1])).is_ok());
        assert!(matches!(
            a.add(&Counts::Exact(vec![0, 1]).try_clone().unwrap()),
            Ok(())
        ));
        assert!(matches!(
            a.add(&Counts::Exact(vec![0, 1]).try_clone().unwrap()),
            Ok(())
        ));
        // The first bin overflows: the second is left as it was.
        assert!(matches!(
            a.add(&Counts::Exact(vec![1, 5])),
            Err(HistError::Overflow)
        ));
        assert_eq!(a, Counts::Exact(vec![u64::MAX, 3]));
    }
}
