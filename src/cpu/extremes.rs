//! The range of the data: the minimum and maximum of the values that count, in parallel, the
//! null-free stretches in SIMD.

use crate::bins::Extremes;
use crate::input::{extremes_of, wider, Chunk, HostColumn, Piece, Validity, Value};

/// Minimum and maximum of column `c`'s values over the rows valid in every column of `columns`
/// (nulls anywhere drop a row; NaN only drops a value), cut into `pieces`; interrupted
/// (Ctrl-C) between stretches.
pub fn extremes(
    columns: &[&HostColumn<'_>],
    pieces: &[Piece],
    c: usize,
) -> crate::error::HistResult<Extremes> {
    use rayon::prelude::*;
    const STRETCH: usize = 1 << 18;
    const MIN_STRETCHES_PER_TASK: usize = 4;
    let column = columns[c];
    let work: Vec<(&Piece, usize)> = pieces
        .iter()
        .flat_map(|p| (0..p.len).step_by(STRETCH).map(move |s| (p, s)))
        .collect();
    crate::with_dtype!(column.dtype, |T| {
        let stretch = |&(piece, s): &(&Piece, usize)| {
            if crate::interrupt::pending() {
                return None;
            }
            let len = STRETCH.min(piece.len - s);
            let part = piece.part(column, c).slice(s, len);
            let also: Vec<Option<Validity>> = columns
                .iter()
                .enumerate()
                .filter(|&(other, _)| other != c)
                .map(|(other, col)| piece.part(col, other).slice(s, len).validity)
                .collect();
            let values = T::values(part.values).expect("the column's own type");
            chunk_extremes(&part, values, &also)
        };
        // Fewer stretches than two tasks' worth run on the calling thread: a trip through the
        // pool (waking its threads) costs more than they do, tens of µs on 16 cores.
        let reduced = if work.len() < 2 * MIN_STRETCHES_PER_TASK {
            work.iter().filter_map(stretch).reduce(wider)
        } else {
            work.par_iter()
                .with_min_len(MIN_STRETCHES_PER_TASK)
                .filter_map(stretch)
                .reduce_with(wider)
        };
        // Stretches skipped for an interrupt never make extremes.
        crate::interrupt::check()?;
        Ok(extremes_of(reduced))
    })
}

/// How many of column `c`'s values count (valid in every column of `columns`, not NaN) and lie
/// in `window` (inclusive; every value when `None`), and their minimum and maximum: what the
/// estimators that need no more than that read, in one pass and no copy. Interrupted (Ctrl-C)
/// between stretches.
pub fn counted_in<T: Value>(
    columns: &[&HostColumn<'_>],
    pieces: &[Piece],
    c: usize,
    window: Option<(T, T)>,
) -> crate::error::HistResult<(usize, Option<(T, T)>)> {
    use rayon::prelude::*;
    const STRETCH: usize = 1 << 16;
    let column = columns[c];
    let work: Vec<(&Piece, usize)> = pieces
        .iter()
        .flat_map(|p| (0..p.len).step_by(STRETCH).map(move |s| (p, s)))
        .collect();
    let stretch = |&(piece, s): &(&Piece, usize)| -> (usize, Option<(T, T)>) {
        if crate::interrupt::pending() {
            return (0, None);
        }
        let len = STRETCH.min(piece.len - s);
        let part = piece.part(column, c).slice(s, len);
        let validity: Vec<Validity> = columns
            .iter()
            .enumerate()
            .filter_map(|(other, col)| piece.part(col, other).slice(s, len).validity)
            .collect();
        let values = T::values(part.values).expect("the column's own type");
        let (mut n, mut acc) = (0, None);
        for (i, &x) in values.iter().enumerate() {
            let inside = window.is_none_or(|(lo, hi)| x >= lo && x <= hi);
            if inside && !x.is_nan() && validity.iter().all(|v| v.is_valid(i)) {
                n += 1;
                acc = Some(acc.map_or((x, x), |a| wider(a, (x, x))));
            }
        }
        (n, acc)
    };
    let join = |(n, a): (usize, Option<(T, T)>), (m, b): (usize, Option<(T, T)>)| {
        let both = match (a, b) {
            (Some(a), Some(b)) => Some(wider(a, b)),
            (a, b) => a.or(b),
        };
        (n + m, both)
    };
    let found = work.par_iter().map(stretch).reduce(|| (0, None), join);
    crate::interrupt::check()?;
    Ok(found)
}

/// Minimum and maximum of the rows that are valid (here and in `also`, another column's
/// validity over the same rows) and not NaN.
fn chunk_extremes<T: Value>(
    chunk: &Chunk<'_>,
    values: &[T],
    also: &[Option<Validity<'_>>],
) -> Option<(T, T)> {
    if chunk.validity.is_none() && also.iter().all(Option::is_none) {
        // No nulls: the SIMD scan, the same fold as below (NaN skipped, the first of equal
        // values kept) bit for bit.
        return super::simd::min_max(values);
    }
    let valid = |i: usize| {
        chunk.validity.is_none_or(|v| v.is_valid(i))
            && also.iter().all(|a| a.is_none_or(|v| v.is_valid(i)))
    };
    let first = values
        .iter()
        .enumerate()
        .position(|(i, x)| !x.is_nan() && valid(i))?;
    let mut acc = (values[first], values[first]);
    for (i, &x) in values.iter().enumerate().skip(first) {
        if valid(i) {
            acc = wider(acc, (x, x));
        }
    }
    Some(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::pieces;
    use polars::prelude::*;

    #[test]
    fn extremes_skip_nan_and_rows_null_elsewhere() {
        let a = Series::new(
            "a".into(),
            [Some(5.0f64), Some(f64::NAN), Some(-1.0), Some(9.0)],
        );
        let b = Series::new("b".into(), [Some(1i64), Some(1), Some(1), None]);
        let (ca, cb) = (HostColumn::new(&a).unwrap(), HostColumn::new(&b).unwrap());
        let p = pieces(&[&ca, &cb]);
        assert_eq!(
            extremes(&[&ca, &cb], &p, 0).unwrap(),
            Extremes::Float64(-1.0, 5.0)
        );
        assert_eq!(
            extremes(&[&ca], &pieces(&[&ca]), 0).unwrap(),
            Extremes::Float64(-1.0, 9.0)
        );
    }
}
