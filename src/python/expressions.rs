//! The plugin's expressions, `histogram`, `histogram_by` and `histogramdd`: each an output type
//! and a run, exported under the names the Python wrapper registers.

use polars::prelude::*;

use crate::options::{HistogramDdOptions, HistogramOptions};
use crate::python::for_python;
use crate::python::plugin::plugin;

plugin!(
    _polars_plugin_field_histogram,
    _polars_plugin_histogram,
    HistogramOptions,
    histogram_field,
    histogram
);
plugin!(
    _polars_plugin_field_histogram_by,
    _polars_plugin_histogram_by,
    ByKwargs,
    histogram_by_field,
    histogram_by
);
plugin!(
    _polars_plugin_field_histogramdd,
    _polars_plugin_histogramdd,
    DdKwargs,
    histogramdd_field,
    histogramdd
);

fn histogram_field(inputs: &[Field], options: &HistogramOptions) -> PolarsResult<Field> {
    let x = &inputs[0];
    let dtype = for_python(crate::histogram_dtype(
        x.dtype(),
        inputs.len() > 1,
        options.density,
    ))?;
    Ok(Field::new(x.name().clone(), dtype))
}

/// Inputs of at least this many bytes, gathered from many pieces, are worth a warning: a plugin
/// that is not elementwise gets its whole input at once (see [`warn_if_gathered`]).
const WARN_GATHERED_BYTES: usize = 1 << 30;

/// Warns once per process where an expression is given a large column gathered from many
/// pieces: what Polars hands a plugin that is not elementwise inside a lazy query (its
/// streaming engine gathers the input in memory first: a file larger than memory fails), with
/// the way to stream it. The warning is Python's (`UserWarning`), which filters can silence.
pub(super) fn warn_if_gathered(inputs: &[Series]) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static WARNED: AtomicBool = AtomicBool::new(false);
    let Some(first) = inputs.first() else { return };
    if first.n_chunks() < 2 || WARNED.load(Ordering::Relaxed) {
        return;
    }
    let bytes: usize = inputs.iter().map(|s| s.estimated_size()).sum();
    if bytes < WARN_GATHERED_BYTES || WARNED.swap(true, Ordering::Relaxed) {
        return;
    }
    let text = format!(
        "a gpu_hist expression was given {:.1} GB at once ({} rows in {} pieces): Polars hands \
         a plugin expression that is not elementwise its whole input, so a lazy query reads \
         the column into memory before it is counted (a file larger than memory fails). To \
         count a file's column as it is read, in bounded memory, use \
         lf.gpu_hist.histogram(column, ...) or polars_gpu_hist.histogram_scan(...): the same \
         frame.",
        bytes as f64 / 1e9,
        first.len(),
        first.n_chunks()
    );
    let Ok(text) = std::ffi::CString::new(text) else {
        return;
    };
    pyo3::Python::attach(|py| {
        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
        // An error here (warnings made errors by a filter) must not fail the histogram.
        let _ = pyo3::PyErr::warn(py, &category, &text, 1);
    });
}

/// `inputs`: the column, then optionally its weights.
fn histogram(inputs: &[Series], options: &HistogramOptions) -> PolarsResult<Series> {
    warn_if_gathered(inputs);
    for_python(crate::api::hist1d::histogram_series(
        &inputs[0],
        inputs.get(1),
        options,
    ))
}

/// `histogram_by`'s kwargs: the options, and each key's name as the query names it (inside
/// `group_by().agg()` and `over()` Polars hands the plugin the keys without their names; a
/// Struct key keeps its fields' names).
#[derive(serde::Deserialize)]
struct ByKwargs {
    options: HistogramOptions,
    keys: Vec<Option<String>>,
}

impl ByKwargs {
    /// The column, the keys (named), then the weights if any.
    fn split<'a, T: Clone>(
        &self,
        inputs: &'a [T],
        rename: impl Fn(&mut T, &str),
    ) -> (&'a T, Vec<T>, Option<&'a T>) {
        let keys = inputs[1..=self.keys.len()]
            .iter()
            .zip(&self.keys)
            .map(|(key, name)| {
                let mut key = key.clone();
                if let Some(name) = name {
                    rename(&mut key, name);
                }
                key
            })
            .collect();
        (&inputs[0], keys, inputs.get(self.keys.len() + 1))
    }
}

fn histogram_by_field(inputs: &[Field], kwargs: &ByKwargs) -> PolarsResult<Field> {
    let (x, keys, weights) = kwargs.split(inputs, |f, name| f.name = name.into());
    let dtype = for_python(crate::histogram_by_keys_dtype(
        x.dtype(),
        &keys,
        weights.is_some(),
        kwargs.options.density,
    ))?;
    Ok(Field::new(x.name().clone(), dtype))
}

/// `inputs`: the column, the group keys, then optionally the weights.
fn histogram_by(inputs: &[Series], kwargs: &ByKwargs) -> PolarsResult<Series> {
    warn_if_gathered(inputs);
    let (x, keys, weights) = kwargs.split(inputs, |s, name| {
        s.rename(name.into());
    });
    for_python(crate::api::by::histogram_by_keys_series(
        x,
        &keys,
        weights,
        &kwargs.options,
    ))
}

/// `histogramdd`'s kwargs: the options, and whether the last input is the weights.
#[derive(serde::Deserialize)]
struct DdKwargs {
    options: HistogramDdOptions,
    weighted: bool,
}

impl DdKwargs {
    fn dims<'a, T>(&self, inputs: &'a [T]) -> (&'a [T], Option<&'a T>) {
        match self.weighted {
            true => (&inputs[..inputs.len() - 1], inputs.last()),
            false => (inputs, None),
        }
    }
}

fn histogramdd_field(inputs: &[Field], kwargs: &DdKwargs) -> PolarsResult<Field> {
    let (dims, weights) = kwargs.dims(inputs);
    let dtype = for_python(crate::histogramdd_dtype(
        dims,
        weights.is_some(),
        kwargs.options.density,
    ))?;
    Ok(Field::new(inputs[0].name().clone(), dtype))
}

/// `inputs`: the 1 to 8 columns, then optionally the weights.
fn histogramdd(inputs: &[Series], kwargs: &DdKwargs) -> PolarsResult<Series> {
    warn_if_gathered(inputs);
    let (dims, weights) = kwargs.dims(inputs);
    for_python(crate::api::histdd::histogramdd_series(
        dims,
        weights,
        &kwargs.options,
    ))
}
