//! Filling a [`Histogram`]: columns (host or device) checked against the binning, read as
//! numpy's sample, counted by the engine, and added only when every step succeeded.

use polars::prelude::*;

use super::{DeviceWeights, Histogram};
use crate::api::axes::{numpy_sample, weights_f64};
use crate::api::device::{gpu_holding, one_dtype_and_length};
use crate::bins::BinSpec;
use crate::counts::Counts;
use crate::engine::{self, Placement};
use crate::error::{HistError, HistResult};
use crate::input::HostColumn;
use crate::job::{self, DeviceColumn, DeviceRows, HostRows, Job, Rows};
use crate::DeviceArray;

impl Histogram {
    /// Counts `columns` (one per axis, of one length) into the histogram, and with
    /// `Storage::Weight` sums `weights` and their squares (required there, refused otherwise).
    /// A row with a null anywhere is not counted. Nothing changes on error.
    pub fn fill(&mut self, columns: &[Series], weights: Option<&Series>) -> HistResult<()> {
        self.check_fill(columns.len(), weights.is_some())?;
        let len = columns[0].len();
        if let Some(c) = columns.iter().find(|c| c.len() != len) {
            return Err(HistError::InvalidArgument(format!(
                "the columns of a fill must have one length: {:?} has {} rows, {:?} has {len}",
                c.name().as_str(),
                c.len(),
                columns[0].name().as_str()
            )));
        }
        let (sample, kind) = numpy_sample(columns)?;
        let dtypes: Vec<&DataType> = columns.iter().map(|c| c.dtype()).collect();
        let resolved = self.binnings_for(&dtypes, kind)?;
        let specs = self.specs_with(&resolved);
        let weights = weights.map(|w| weights_f64(len, w)).transpose()?;
        let placement = self.placement();
        let counts = self.count(&specs, host_rows(&sample, weights.as_ref())?, &placement)?;
        let squares = match &weights {
            Some(w) if self.squares.is_some() => {
                let w = w.f64()?;
                let squared = (w * w).into_series();
                Some(self.count(&specs, host_rows(&sample, Some(&squared))?, &placement)?)
            }
            _ => None,
        };
        let counted = match &counts {
            Counts::Exact(c) => Some(c.iter().sum::<u64>()),
            Counts::Weighted(_) => None,
        };
        let flow = super::flow::host_flow(&specs, &sample, weights.as_ref(), counted)?;
        let flow = self.flow.plus(&flow)?;
        self.add(&counts, weighted(&squares))?;
        self.flow = flow;
        self.take(resolved);
        Ok(())
    }

    /// Counts arrays in GPU memory (one per axis, of one dtype and length) where they lie.
    pub fn fill_device(
        &mut self,
        columns: &[DeviceArray],
        weights: Option<DeviceWeights>,
    ) -> HistResult<()> {
        self.check_fill(columns.len(), weights.is_some())?;
        let (dtype, len) = one_dtype_and_length(columns.iter().copied())?;
        let polars = dtype.polars();
        let resolved = self.binnings_for(&vec![&polars; columns.len()], dtype.kind())?;
        let specs = self.specs_with(&resolved);
        let ptrs: Vec<u64> = columns.iter().map(|c| c.ptr).collect();
        let ordinal = gpu_holding(&ptrs, weights.map(|w| w.values), len)?.ordinal();
        let device_rows = |weights: Option<u64>| {
            Rows::Device(DeviceRows {
                columns: columns
                    .iter()
                    .map(|c| DeviceColumn {
                        ptr: c.ptr,
                        dtype,
                        stride: 1,
                    })
                    .collect(),
                weights,
                len,
                ordinal,
            })
        };
        let placement = self.placement();
        let counts = self.count(&specs, device_rows(weights.map(|w| w.values)), &placement)?;
        let squares = match weights {
            Some(w) if self.squares.is_some() => {
                Some(self.count(&specs, device_rows(Some(w.squares)), &placement)?)
            }
            _ => None,
        };
        self.add(&counts, weighted(&squares))?;
        self.take(resolved);
        Ok(())
    }

    /// Where this histogram counts, with the settings the environment gives now (once a fill).
    fn placement(&self) -> Placement {
        Placement::asked(self.options.device, self.options.kernel)
    }

    fn count(
        &self,
        specs: &[&BinSpec],
        rows: Rows<'_>,
        placement: &Placement,
    ) -> HistResult<Counts> {
        let axes = specs
            .iter()
            .map(|s| Ok(job::Axis::bins(s.try_clone()?, false)))
            .collect::<HistResult<_>>()?;
        let job = Job::new(axes, rows)?;
        Ok(engine::count(&job, placement)?.0)
    }
}

/// The sums of squared weights of a weighted count.
fn weighted(squares: &Option<Counts>) -> Option<&[f64]> {
    match squares {
        Some(Counts::Weighted(q)) => Some(q),
        _ => None,
    }
}

fn host_rows<'a>(columns: &'a [Series], weights: Option<&'a Series>) -> HistResult<Rows<'a>> {
    let columns = columns
        .iter()
        .map(HostColumn::new)
        .collect::<HistResult<_>>()?;
    Ok(Rows::Host(HostRows::new(
        columns,
        weights.map(HostColumn::new).transpose()?,
    )?))
}
