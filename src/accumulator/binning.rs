//! How a [`Histogram`]'s axes become bins: checked and resolved when it is made, and resolved
//! again for the kind of values a fill brings (numpy's bins depend on the sample's dtype).

use polars::prelude::*;

use super::axis::ValueDtype;
use super::{AccumulatorOptions, Axis, Histogram, Span};
use crate::bins::{BinSpec, Binning, Closed, Extremes, Range, ValueKind};
use crate::error::{HistError, HistResult};
use crate::MAX_DIMS;

impl Histogram {
    pub(super) fn check_fill(&self, columns: usize, weights: bool) -> HistResult<()> {
        if columns != self.axes.len() {
            return Err(HistError::InvalidArgument(format!(
                "this histogram has {} axes: a fill takes one column per axis, got {columns}",
                self.axes.len()
            )));
        }
        match (self.is_weighted(), weights) {
            (true, false) => Err(HistError::argument(|s| {
                format!(
                    "this histogram sums weights ({}): every fill needs `weights`",
                    s.weight_storage()
                )
            })),
            (false, true) => Err(HistError::argument(|s| {
                format!(
                    "this histogram counts rows: make it with {} to sum weights",
                    s.weight_storage()
                )
            })),
            _ => Ok(()),
        }
    }

    /// Checks that values of `dtypes` (read as `kind`) bin like the histogram's earlier fills;
    /// returns each axis' new resolution where this fill changes it (the first fill), without
    /// applying it.
    pub(super) fn binnings_for(
        &self,
        dtypes: &[&DataType],
        kind: ValueKind,
    ) -> HistResult<Vec<Option<Resolved>>> {
        (0..self.axes.len())
            .map(|i| self.binning_for(i, dtypes[i], kind))
            .collect()
    }

    pub(super) fn binning_for(
        &self,
        i: usize,
        dtype: &DataType,
        kind: ValueKind,
    ) -> HistResult<Option<Resolved>> {
        let value_dtype = ValueDtype::of(dtype)?;
        let axis = &self.axes[i];
        let current = &self.resolved[i];
        let dd = self.axes.len() > 1;
        if let Span::Data(e) = &axis.span {
            if let Some(k) = e.kind().filter(|&k| k != kind) {
                return Err(HistError::InvalidArgument(format!(
                    "this histogram's range was taken from {k:?} data; a {dtype:?} column bins \
                     differently (cast it, or take the range from this column)"
                )));
            }
        }
        match &current.dtype {
            Some((first, first_dtype)) => {
                if (first.is_temporal() || value_dtype.is_temporal()) && *first != value_dtype {
                    return Err(HistError::InvalidArgument(format!(
                        "this histogram was first filled with {first_dtype:?}; a {dtype:?} column \
                         cannot be added to it (its values have other units)"
                    )));
                }
                if current.agrees.contains(&kind)
                    || resolve(axis, self.options.closed, kind, dd)? == current.spec
                {
                    // A cache miss here costs one resolution per call; kinds are few.
                    return Ok(None);
                }
                Err(HistError::InvalidArgument(format!(
                    "this histogram was first filled with {first_dtype:?}, which numpy bins with \
                     other edges than a {dtype:?} column (float32 data gets float32 edges): cast \
                     the column to {first_dtype:?}, or use one histogram per dtype"
                )))
            }
            None => {
                let spec = if current.agrees.contains(&kind) {
                    current.spec.try_clone()?
                } else {
                    resolve(axis, self.options.closed, kind, dd)?
                };
                Ok(Some(Resolved {
                    spec,
                    dtype: Some((value_dtype, dtype.clone())),
                    agrees: vec![kind],
                }))
            }
        }
    }

    pub(super) fn specs_with<'s>(&'s self, resolved: &'s [Option<Resolved>]) -> Vec<&'s BinSpec> {
        resolved
            .iter()
            .zip(&self.resolved)
            .map(|(new, current)| &new.as_ref().unwrap_or(current).spec)
            .collect()
    }

    pub(super) fn take(&mut self, resolved: Vec<Option<Resolved>>) {
        for (slot, new) in self.resolved.iter_mut().zip(resolved) {
            if let Some(r) = new {
                *slot = r;
            }
        }
    }
}

/// An axis' resolved binning and the dtype (if any fill fixed it) it was resolved for.
#[derive(Clone, Debug)]
pub(super) struct Resolved {
    pub(super) spec: BinSpec,
    pub(super) dtype: Option<(ValueDtype, DataType)>,
    /// Value kinds known to resolve to `spec` (a cache: resolving costs O(bins)).
    pub(super) agrees: Vec<ValueKind>,
}

/// The number of cells of `axes`, checked before anything is resolved or allocated: 1 to
/// [`MAX_DIMS`] axes, valid bin counts, at most [`crate::bins::MAX_BINS`] cells in all.
pub(super) fn checked_cells(axes: &[Axis]) -> HistResult<usize> {
    if !(1..=MAX_DIMS).contains(&axes.len()) {
        return Err(HistError::InvalidArgument(format!(
            "a Histogram has 1 to {MAX_DIMS} axes, got {}",
            axes.len()
        )));
    }
    let lengths = axes
        .iter()
        .map(|a| match &a.bins {
            &Binning::Count(n) => crate::bins::validate_count(n).map(|()| n),
            Binning::Edges(e) => Ok(e.len().saturating_sub(1)),
            Binning::Integers(e) => Ok(e.len().saturating_sub(1)),
        })
        .collect::<HistResult<Vec<_>>>()?;
    Ok(crate::job::row_major(&lengths)?.1)
}

/// Each axis' binning before any fill (for Float64 values, or the data range's kind).
pub(super) fn resolve_axes(
    axes: &[Axis],
    options: AccumulatorOptions,
) -> HistResult<Vec<Resolved>> {
    let dd = axes.len() > 1;
    axes.iter()
        .map(|axis| {
            if let (&Binning::Count(n), Span::None) = (&axis.bins, &axis.span) {
                return Err(HistError::argument(|s| {
                    format!(
                        "a mergeable histogram of {} needs {}: a range taken from each \
                         batch's data would bin every batch differently",
                        s.count(n),
                        s.accumulator_range()
                    )
                }));
            }
            let kind = match &axis.span {
                Span::Data(e) => e.kind().unwrap_or(ValueKind::Float64),
                _ => ValueKind::Float64,
            };
            Ok(Resolved {
                spec: resolve(axis, options.closed, kind, dd)?,
                dtype: None,
                agrees: vec![kind],
            })
        })
        .collect()
}

/// The axis' binning for values of `kind`: `numpy.histogram`'s for one axis, or
/// `numpy.histogramdd`'s (`dd`) for several.
pub(super) fn resolve(
    axis: &Axis,
    closed: Closed,
    kind: ValueKind,
    dd: bool,
) -> HistResult<BinSpec> {
    let (range, extremes) = match &axis.span {
        Span::None => (None, Extremes::Empty),
        &Span::Range(lo, hi) => (Some(Range::new(lo, hi)), Extremes::Empty),
        Span::Data(e) => (None, e.to_extremes()?),
    };
    if dd {
        BinSpec::resolve_dd(&axis.bins, range, closed, kind, || Ok(extremes))
    } else {
        BinSpec::resolve(&axis.bins, range, closed, kind, || Ok(extremes))
    }
}

impl Resolved {
    pub(super) fn try_clone(&self) -> HistResult<Self> {
        Ok(Resolved {
            spec: self.spec.try_clone()?,
            dtype: self.dtype.clone(),
            agrees: self.agrees.clone(),
        })
    }
}
