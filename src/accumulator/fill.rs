//! Filling a [`Histogram`]: columns (host or device) checked against the binning, read as
//! numpy's sample, counted by the engine, and added only when every step succeeded.

use polars::prelude::*;

use super::flow::{split_flow, Flow};
use super::{DeviceWeights, Histogram};
use crate::api::axes::{numpy_sample, weights_f64};
use crate::api::device::{gpu_holding, one_dtype_and_length};
use crate::bins::BinSpec;
use crate::counts::Counts;
use crate::engine::{self, Placement};
use crate::error::{HistError, HistResult};
use crate::input::HostColumn;
use crate::job::{self, DeviceColumn, DeviceRows, FlowBins, HostRows, Job, Rows};
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
        // Counts get their flow from flow bins counted in the same pass (split off here); sums of
        // weights classify the rows outside by masks (a row with a null weight is no row of the
        // flow bins' row counts).
        let flow_bins = match weights {
            None => FlowBins::OutsideAndNan,
            Some(_) => FlowBins::None,
        };
        let counts = self.count(
            &specs,
            flow_bins,
            host_rows(&sample, weights.as_ref())?,
            &placement,
        )?;
        let squares = match &weights {
            Some(w) if self.squares.is_some() => {
                let w = w.f64()?;
                let squared = (w * w).into_series();
                Some(self.count(
                    &specs,
                    FlowBins::None,
                    host_rows(&sample, Some(&squared))?,
                    &placement,
                )?)
            }
            _ => None,
        };
        let (counts, flow) = match counts {
            Counts::Exact(rows) => {
                let bins: Vec<usize> = specs.iter().map(|s| s.len()).collect();
                let (counted, underflow, overflow, nan) = split_flow(rows, &bins);
                let seen = counted.iter().sum::<u64>() + underflow + overflow + nan;
                let flow = Flow {
                    rows: len as u64,
                    // The rows no bin took: a null on some axis.
                    null: len as u64 - seen,
                    nan,
                    underflow,
                    overflow,
                    ..Flow::default()
                };
                (Counts::Exact(counted), flow)
            }
            sums => (
                sums,
                super::flow::host_flow(&specs, &sample, weights.as_ref())?,
            ),
        };
        let flow = self.flow.plus(&flow)?;
        let squares = squares.map(|q| match q {
            Counts::Weighted(q) => q,
            Counts::Exact(_) => unreachable!("squared weights are sums"),
        });
        self.add_owned(counts, squares)?;
        self.flow = flow;
        self.take(resolved);
        Ok(())
    }

    /// Counts arrays in GPU memory (one per axis, of one dtype and length) where they lie, and
    /// their flow in the same pass: every axis gets flow bins for what falls below and above it
    /// and for NaN ([`FlowBins::OutsideAndNan`]), split off on the host ([`split_flow`]). A
    /// weighted fill counts the rows once more, for the flow's row counts.
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
        let bins: Vec<usize> = specs.iter().map(|s| s.len()).collect();
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
        let with_flow = FlowBins::OutsideAndNan;
        let Counts::Exact(rows) = self.count(&specs, with_flow, device_rows(None), &placement)?
        else {
            unreachable!("an unweighted count")
        };
        let (counted, underflow, overflow, nan) = split_flow(rows, &bins);
        let mut flow = Flow {
            rows: len,
            nan,
            underflow,
            overflow,
            ..Flow::default()
        };
        let (counts, squares) = match weights {
            None => (Counts::Exact(counted), None),
            Some(w) => {
                let sums = |ptr| -> HistResult<(Vec<f64>, f64, f64, f64)> {
                    let rows = device_rows(Some(ptr));
                    match self.count(&specs, with_flow, rows, &placement)? {
                        Counts::Weighted(s) => Ok(split_flow(s, &bins)),
                        Counts::Exact(_) => unreachable!("a weighted count"),
                    }
                };
                let (values, uw, ow, _) = sums(w.values)?;
                (flow.underflow_weight, flow.overflow_weight) = (uw, ow);
                let squares = match self.squares.is_some() {
                    true => {
                        let (squares, uq, oq, _) = sums(w.squares)?;
                        (flow.underflow_squares, flow.overflow_squares) = (uq, oq);
                        Some(squares)
                    }
                    false => None,
                };
                (Counts::Weighted(values), squares)
            }
        };
        let flow = self.flow.plus(&flow)?;
        self.add_owned(counts, squares)?;
        self.flow = flow;
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
        flow: FlowBins,
        rows: Rows<'_>,
        placement: &Placement,
    ) -> HistResult<Counts> {
        let axes = specs
            .iter()
            .map(|s| Ok(job::Axis::bins(s.try_clone()?, flow)))
            .collect::<HistResult<_>>()?;
        let job = Job::new(axes, rows)?;
        Ok(engine::count(&job, placement)?.0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulator::{AccumulatorOptions, Axis, Storage};

    /// Flow bins split on the host (how counts get their flow, on either backend) classify rows
    /// as the masks of a weighted host fill do: the same job counted here on the CPU (1 to 3
    /// axes, weighted or not, nulls, NaN and infinities on every axis, values on the edges and
    /// outside).
    #[test]
    fn flow_bins_split_as_the_masks_classify_rows() {
        let values = [
            -1.0,
            f64::NAN,
            0.0,
            0.25,
            0.5,
            1.0,
            1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.75,
            0.999,
            -0.0,
            0.3,
        ];
        for dims in 1..=3u32 {
            // Every combination of the values over the axes.
            let n = values.len().pow(dims);
            let columns: Vec<Series> = (0..dims)
                .map(|d| {
                    let step = values.len().pow(d);
                    // A null every 17 rows, at other rows on each axis.
                    let column: Vec<Option<f64>> = (0..n)
                        .map(|i| {
                            (i % 17 != 3 + d as usize).then(|| values[i / step % values.len()])
                        })
                        .collect();
                    Series::new(format!("x{d}").into(), column)
                })
                .collect();
            let weights: Vec<f64> = (0..n).map(|i| (i % 7) as f64 * 0.5 - 1.0).collect();
            let weights = Series::new("w".into(), weights);
            let dims = dims as usize;
            for weighted in [false, true] {
                let storage = if weighted {
                    Storage::Weight
                } else {
                    Storage::Count
                };
                let options = AccumulatorOptions {
                    storage,
                    ..Default::default()
                };
                let axes = (0..dims).map(|d| Axis::regular(3 + d, 0.0, 1.0)).collect();
                let mut host = Histogram::new(axes, options).unwrap();
                let w = weighted.then_some(&weights);
                host.fill(&columns, w).unwrap();
                let specs: Vec<&BinSpec> = (0..dims).map(|d| host.spec(d)).collect();
                let bins: Vec<usize> = specs.iter().map(|s| s.len()).collect();
                let with_flow = FlowBins::OutsideAndNan;
                let placement = host.placement();
                let count = |w: Option<&Series>| {
                    let rows = host_rows(&columns, w).unwrap();
                    host.count(&specs, with_flow, rows, &placement).unwrap()
                };
                let Counts::Exact(rows) = count(None) else {
                    panic!("an unweighted count")
                };
                let (counted, underflow, overflow, nan) = split_flow(rows, &bins);
                let f = *host.flow();
                let masks = super::super::flow::host_flow(&specs, &columns, None).unwrap();
                let context = format!("{dims} axes, weighted {weighted}");
                for flow in [f, masks] {
                    assert_eq!(
                        (flow.nan, flow.underflow, flow.overflow),
                        (nan, underflow, overflow),
                        "{context}"
                    );
                }
                if !weighted {
                    assert_eq!(f.null, masks.null, "{context}");
                    assert!(f.null > 0, "{context}");
                    assert_eq!(host.exact_counts().unwrap(), &counted[..], "{context}");
                    continue;
                }
                let squared = (&weights * &weights).unwrap();
                for (w, kept, under, over) in [
                    (
                        &weights,
                        host.counts(),
                        f.underflow_weight,
                        f.overflow_weight,
                    ),
                    (
                        &squared,
                        &Counts::Weighted(host.squared_weights().unwrap().to_vec()),
                        f.underflow_squares,
                        f.overflow_squares,
                    ),
                ] {
                    let Counts::Weighted(sums) = count(Some(w)) else {
                        panic!("a weighted count")
                    };
                    let (inner, below, above, _) = split_flow(sums, &bins);
                    assert_eq!(kept, &Counts::Weighted(inner), "{context}");
                    assert_eq!((below, above), (under, over), "{context}");
                }
            }
        }
    }
}
