//! A histogram of some of another's axes, each kept or cut to some of its edges: the empty
//! histogram that a slice, a rebinning or a projection fills (the Python wrapper moves the
//! contents, flow cells included, with `set_contents`).
//!
//! An axis kept keeps its binning as given (and so merges with histograms made alike), unless
//! numpy would bin it otherwise at the new number of axes (`numpy.histogram` and
//! `numpy.histogramdd` make other edges for some dtypes): then, as a cut axis, it takes the edges
//! its counts were made with, explicit. Dtypes carry over: a cut axis compares a later fill as
//! numpy compares data with explicit edges, which bins it as before.

use polars::prelude::*;

use super::{AccumulatorOptions, Axis, Histogram, Storage};
use crate::bins::{BinSpec, Binning};
use crate::error::{HistError, HistResult};

impl Histogram {
    /// An empty histogram of `axes` of this one, in their order: `(i, None)` keeps axis `i`,
    /// `(i, Some(indices))` cuts it to its edges at `indices` (increasing, at least two); the
    /// storage given, the options and dtypes this one's.
    pub fn reshaped(
        &self,
        axes: &[(usize, Option<Vec<usize>>)],
        storage: Storage,
    ) -> HistResult<Histogram> {
        if let Some((i, _)) = axes.iter().find(|(i, _)| *i >= self.axes.len()) {
            return Err(HistError::InvalidArgument(format!(
                "axis {i} of a histogram of {} axes",
                self.axes.len()
            )));
        }
        let options = AccumulatorOptions {
            storage,
            ..self.options
        };
        let dtypes: Vec<Option<DataType>> =
            axes.iter().map(|(i, _)| self.dtype(*i).cloned()).collect();
        let mut cut: Vec<Option<Vec<usize>>> = axes.iter().map(|(_, c)| c.clone()).collect();
        loop {
            let new_axes = axes
                .iter()
                .zip(&cut)
                .map(|((i, _), c)| match c {
                    None => self.axes[*i].try_clone(),
                    Some(indices) => self.cut_axis(*i, indices),
                })
                .collect::<HistResult<Vec<Axis>>>()?;
            let mut h = Histogram::new(new_axes, options)?;
            h.fix_dtypes(&dtypes)?;
            // A kept axis binned otherwise at this number of axes takes its edges as they are.
            let differs: Vec<usize> = axes
                .iter()
                .enumerate()
                .filter(|&(k, (i, _))| cut[k].is_none() && h.spec(k) != self.spec(*i))
                .map(|(k, _)| k)
                .collect();
            if differs.is_empty() {
                return Ok(h);
            }
            for k in differs {
                cut[k] = Some((0..=self.spec(axes[k].0).len()).collect());
            }
        }
    }

    /// Axis `i` cut to its resolved edges at `indices`: exact integers where its edges are,
    /// else float64 (float32 and float16 edges widen exactly).
    fn cut_axis(&self, i: usize, indices: &[usize]) -> HistResult<Axis> {
        let spec = self.spec(i);
        let n = spec.len();
        let increasing = indices.windows(2).all(|w| w[0] < w[1]);
        if indices.len() < 2 || !increasing || indices.iter().any(|&j| j > n) {
            return Err(HistError::InvalidArgument(format!(
                "a cut of an axis of {n} bins takes at least two increasing edge indices in \
                 [0, {n}], got {indices:?}"
            )));
        }
        Ok(match spec {
            BinSpec::Integers(b) => Axis {
                bins: Binning::Integers(indices.iter().map(|&j| b.edges[j]).collect()),
                span: super::Span::None,
            },
            other => {
                let edges = other.edges_f64()?;
                Axis::variable(indices.iter().map(|&j| edges[j]).collect())
            }
        })
    }

    /// Resolves each axis for the dtype given (`None`: not filled yet), as the first fill of
    /// those dtypes would: one axis by its own dtype, several by the sample's common dtype.
    pub(super) fn fix_dtypes(&mut self, dtypes: &[Option<DataType>]) -> HistResult<()> {
        let known = dtypes
            .iter()
            .flatten()
            .map(crate::dtype::reading)
            .collect::<HistResult<Vec<_>>>()?;
        let (_, common) = crate::dtype::sample(known);
        for (i, dtype) in dtypes.iter().enumerate() {
            if let Some(dtype) = dtype {
                let kind = if self.axes.len() > 1 {
                    common
                } else {
                    crate::dtype::reading(dtype)?.kind()
                };
                if let Some(r) = self.binning_for(i, dtype, kind)? {
                    self.resolved[i] = r;
                }
            }
        }
        Ok(())
    }
}
