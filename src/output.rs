//! Counts to a Polars Struct column: one row per bin with its edges and its count.

use polars::prelude::*;

use crate::bins::BinSpec;
use crate::cpu::Counts;

pub const BIN_START: &str = "bin_start";
pub const BIN_END: &str = "bin_end";
pub const COUNT: &str = "count";

/// The dtype of the result's edges: the column's own for temporal columns, Float64 otherwise.
pub fn edge_dtype(input: &DataType) -> DataType {
    match input {
        DataType::Date | DataType::Datetime(_, _) | DataType::Duration(_) => input.clone(),
        _ => DataType::Float64,
    }
}

/// The dtype of `count`: UInt64 for plain counts, Float64 with weights or density.
pub fn count_dtype(weighted: bool, density: bool) -> DataType {
    if weighted || density {
        DataType::Float64
    } else {
        DataType::UInt64
    }
}

/// The Struct dtype the histogram of a column of `input` dtype has.
pub fn struct_dtype(input: &DataType, weighted: bool, density: bool) -> DataType {
    let edges = edge_dtype(input);
    DataType::Struct(vec![
        Field::new(BIN_START.into(), edges.clone()),
        Field::new(BIN_END.into(), edges),
        Field::new(COUNT.into(), count_dtype(weighted, density)),
    ])
}

/// numpy's `density`: `count / width / total`, in that order, widths in the edges' own type.
pub fn density(spec: &BinSpec, counts: &Counts) -> Vec<f64> {
    let widths = spec.widths();
    match counts {
        Counts::Exact(c) => {
            let total = c.iter().sum::<u64>() as f64;
            c.iter()
                .zip(&widths)
                .map(|(&c, w)| c as f64 / w / total)
                .collect()
        }
        Counts::Weighted(s) => {
            let total: f64 = s.iter().sum();
            s.iter().zip(&widths).map(|(&s, w)| s / w / total).collect()
        }
    }
}

/// Edges named `field`, in the dtype the edges of a column of `input` dtype have.
pub fn edge_series(field: &str, values: &[f64], input: &DataType) -> PolarsResult<Series> {
    let s = Series::new(field.into(), values);
    match edge_dtype(input) {
        DataType::Float64 => Ok(s),
        temporal => s.cast(&temporal.to_physical())?.cast(&temporal),
    }
}

/// The result as a Struct Series named `name`.
pub fn to_struct(
    name: PlSmallStr,
    spec: &BinSpec,
    counts: Counts,
    density_requested: bool,
    input: &DataType,
) -> PolarsResult<Series> {
    let edges = spec.edges_f64();
    let n = edges.len() - 1;
    let start = edge_series(BIN_START, &edges[..n], input)?;
    let end = edge_series(BIN_END, &edges[1..], input)?;
    let count = if density_requested {
        Series::new(COUNT.into(), density(spec, &counts))
    } else {
        match counts {
            Counts::Exact(c) => Series::new(COUNT.into(), c),
            Counts::Weighted(s) => Series::new(COUNT.into(), s),
        }
    };
    Ok(StructChunked::from_series(name, n, [start, end, count].iter())?.into_series())
}
