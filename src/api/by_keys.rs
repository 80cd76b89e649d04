//! Several `by=` keys as one: each key's rows numbered by a dense code, the codes combined into
//! one integer per row, which the single-key path then groups like any integer key (so no
//! kernel, CPU or GPU, ever sees more than one key).

use polars::prelude::*;
use rayon::prelude::*;

use crate::api::by::{group_axis, Look};
use crate::error::{HistError, HistResult};
use crate::input::{HostColumn, Value};
use crate::job::GroupKeys;

/// The keys `by=` groups by: each column, a Struct column read as its fields in order (a null
/// Struct row reads as a null in every field).
pub(crate) fn components(keys: &[Series]) -> HistResult<Vec<Series>> {
    if keys.is_empty() {
        return Err(HistError::InvalidArgument(
            "`by` got no keys: give a column, a list of columns or a pl.struct of them".into(),
        ));
    }
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        match key.dtype() {
            DataType::Struct(fields) if fields.is_empty() => return Err(no_fields(key.name())),
            DataType::Struct(_) => {
                let key = key.propagate_nulls().unwrap_or_else(|| key.clone());
                out.extend(key.struct_()?.fields_as_series());
            }
            _ => out.push(key.clone()),
        }
    }
    Ok(out)
}

/// The fields of [`components`] of key columns of these fields.
pub(crate) fn component_fields(keys: &[Field]) -> HistResult<Vec<Field>> {
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        match key.dtype() {
            DataType::Struct(fields) if fields.is_empty() => return Err(no_fields(key.name())),
            DataType::Struct(fields) => out.extend(fields.iter().cloned()),
            _ => out.push(key.clone()),
        }
    }
    Ok(out)
}

fn no_fields(name: &str) -> HistError {
    HistError::InvalidArgument(format!(
        "the `by` key {name:?} is a Struct with no fields: give it at least one field"
    ))
}

pub(crate) fn check_key(name: &str, dtype: &DataType) -> HistResult<()> {
    if dtype.is_float() {
        return Err(HistError::InvalidArgument(format!(
            "`by` groups rows by exact key values, and the {} key {name:?} would make a group \
             of every distinct float: round or cast it to an integer first",
            crate::dtype::name(dtype)
        )));
    }
    if matches!(
        dtype,
        DataType::List(_) | DataType::Array(..) | DataType::Struct(_)
    ) {
        return Err(HistError::InvalidArgument(format!(
            "the `by` key {name:?} is a {}: group by columns of scalars (a list of them, or a \
             pl.struct of them), e.g. explode a List first",
            crate::dtype::name(dtype)
        )));
    }
    // An Object key reaches the plugin as Binary (its pointers): it would group by address.
    if matches!(dtype, DataType::Binary | DataType::BinaryOffset) {
        return Err(HistError::InvalidArgument(format!(
            "the `by` key {name:?} is {} (an Object column reaches the plugin as Binary): group \
             by an integer, String, Boolean, temporal, Categorical or Enum column",
            crate::dtype::name(dtype)
        )));
    }
    Ok(())
}

/// The result's fields are named by the keys: two keys of one name, or a key named like a bin
/// field, would make two fields of one name.
pub(crate) fn check_names<'a>(keys: impl Iterator<Item = &'a str>) -> HistResult<()> {
    let mut seen = std::collections::HashSet::new();
    for name in keys {
        if [
            crate::output::BIN_START,
            crate::output::BIN_END,
            crate::output::COUNT,
        ]
        .contains(&name)
        {
            return Err(HistError::InvalidArgument(format!(
                "the `by` key {name:?} has the name of a field of the result: alias it \
                 (pl.col({name:?}).alias(...))"
            )));
        }
        if !seen.insert(name) {
            return Err(HistError::InvalidArgument(format!(
                "`by` has two keys named {name:?}: alias one of them (pl.col(...).alias(...))"
            )));
        }
    }
    Ok(())
}

/// Whether `keys` are grouped through [`combined`]: several keys, or one String key (numbered
/// faster than Polars groups it).
pub(crate) fn need_combining(keys: &[Series]) -> bool {
    !matches!(keys, [key] if key.dtype() != &DataType::String)
}

/// One integer per row, equal for two rows exactly where every key is (a null equal to a null
/// of the same key): UInt32 where the combinations fit 32 bits, else UInt64.
pub(crate) fn combined(keys: &[Series]) -> HistResult<Series> {
    let (first, rest) = keys.split_first().expect("at least one key");
    let (codes, count) = dense_codes(first)?;
    let mut ids: Vec<u64> = crate::alloc::collected(codes.iter().map(|&c| c as u64))?;
    let mut bound = count;
    for key in rest {
        let (codes, count) = dense_codes(key)?;
        if bound.saturating_mul(count) > COMBINED_IDS {
            // Number the combinations seen so far densely again: at most one per row.
            let (dense, seen) = dense_codes(&ids_series(ids, bound)?)?;
            ids = crate::alloc::collected(dense.iter().map(|&c| c as u64))?;
            bound = seen;
        }
        // Fewer than 2^32 rows each way (a Polars index): the product fits 64 bits.
        let product = bound.checked_mul(count).ok_or_else(|| {
            HistError::InvalidArgument("`by`: more key combinations than 64 bits number".into())
        })?;
        ids.par_iter_mut()
            .zip(codes.par_iter())
            .for_each(|(id, &c)| *id = *id * count + c as u64);
        bound = product;
    }
    ids_series(ids, bound)
}

/// Combined ids past this many would no longer fit UInt32: the ids so far are renumbered first.
const COMBINED_IDS: u64 = 1 << 32;

/// `ids` (all below `bound`) as a Series: UInt32 where they fit, which the group axis reads
/// through a table when their span is narrow.
fn ids_series(ids: Vec<u64>, bound: u64) -> HistResult<Series> {
    Ok(match bound <= COMBINED_IDS {
        true => {
            let narrow: Vec<u32> = crate::alloc::collected(ids.iter().map(|&id| id as u32))?;
            UInt32Chunked::from_vec("by".into(), narrow).into_series()
        }
        false => UInt64Chunked::from_vec("by".into(), ids).into_series(),
    })
}

/// Each row's code among the values of `key`, equal exactly where the values are (a null a value
/// of its own), all below the count returned.
fn dense_codes(key: &Series) -> HistResult<(Vec<u32>, u64)> {
    if key.dtype() == &DataType::String {
        return string_codes(key);
    }
    let (column, groups, _) = group_axis(key, Look::AllRows)?;
    let count = groups.count as u64;
    let codes = match groups.keys {
        GroupKeys::Ids => {
            let ids = column.u32()?.rechunk();
            crate::alloc::collected(ids.cont_slice()?.iter().copied())?
        }
        GroupKeys::Table { lo, table, .. } => {
            let column = HostColumn::new(&column)?;
            let dtype = column.dtype;
            crate::with_dtype!(dtype, |T| through_table::<T>(&column, lo, &table))?
        }
    };
    Ok((codes, count))
}

/// Strings numbered as a Categorical numbers them (one hashing pass: a third of the time of
/// Polars' grouping of the strings, which gathers every group's rows): the category's id plus
/// one, 0 for a null. The categories are this call's own, dropped with it, not Polars' global
/// ones (which would keep every string for the life of the process).
fn string_codes(key: &Series) -> HistResult<(Vec<u32>, u64)> {
    let categories = Categories::random(PlSmallStr::EMPTY, CategoricalPhysical::U32);
    let categorical = key.cast(&DataType::from_categories(categories))?;
    let physical = categorical.to_physical_repr();
    let ids = physical.u32()?;
    let count = ids.max().map_or(0, |id| id as u64 + 1) + 1;
    let codes = crate::alloc::collected(ids.iter().map(|id| id.map_or(0, |id| id + 1)))?;
    Ok((codes, count))
}

/// `table[x - lo]` of every value `x` of an integer column without nulls.
fn through_table<T: Value>(
    column: &HostColumn<'_>,
    lo: i64,
    table: &[u32],
) -> HistResult<Vec<u32>> {
    let mut out: Vec<u32> = crate::alloc::zeroed(column.len())?;
    let mut rest = out.as_mut_slice();
    for chunk in &column.chunks {
        let values = T::values(chunk.values).expect("the column's own type");
        let (head, tail) = rest.split_at_mut(values.len());
        head.par_iter_mut()
            .zip(values.par_iter())
            .for_each(|(code, &x)| *code = table[(x.as_i64() - lo) as usize]);
        rest = tail;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(series: &Series) -> Vec<u64> {
        let ids = series.cast(&DataType::UInt64).unwrap();
        ids.u64().unwrap().into_no_null_iter().collect()
    }

    #[test]
    fn rows_share_an_id_exactly_where_every_key_is_equal() {
        let a = Series::new("a".into(), [Some(1i64), Some(1), None, Some(1), None]);
        let b = Series::new(
            "b".into(),
            [Some("x"), Some("y"), Some("x"), Some("x"), Some("x")],
        );
        let got = ids(&combined(&[a, b]).unwrap());
        assert_eq!(got[0], got[3]);
        assert_eq!(got[2], got[4]);
        let distinct: std::collections::HashSet<_> = [got[0], got[1], got[2]].into();
        assert_eq!(distinct.len(), 3);
    }

    #[test]
    fn combinations_past_32_bits_are_renumbered_first() {
        // Three keys of 2^12 distinct values each: 2^36 combinations, 2^12 of them present.
        let n = 1 << 12;
        let key = |name: &str, mul: i64| {
            let values: Vec<i64> = (0..n).map(|i| (i * mul) % n).collect();
            Series::new(name.into(), values)
        };
        let keys = [key("a", 1), key("b", 7), key("c", 13)];
        let got = combined(&keys).unwrap();
        assert_eq!(got.dtype(), &DataType::UInt32);
        assert_eq!(got.n_unique().unwrap(), n as usize);
    }
}
