//! Several `by=` keys as one: each key's rows numbered by a dense code, the codes combined into
//! one integer per row, which the single-key path then groups like any integer key (so no
//! kernel, CPU or GPU, ever sees more than one key).

use polars::prelude::*;
use polars_arrow::array::{Array, View};
use rayon::prelude::*;

use crate::api::groups::{group_axis, Look};
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
/// of the same key): a UInt32 column (there are never more combinations than rows; those past
/// 32 bits are numbered densely again).
pub(crate) fn combined(keys: &[Series]) -> HistResult<Series> {
    let (first, rest) = keys.split_first().expect("at least one key");
    let (mut ids, mut bound) = dense_codes(first)?;
    for key in rest {
        let (codes, count) = dense_codes(key)?;
        if bound.saturating_mul(count) > COMBINED_IDS {
            // Number the combinations seen so far densely again: at most one per row.
            (ids, bound) = dense_codes(&UInt32Chunked::from_vec("by".into(), ids).into_series())?;
        }
        if bound.saturating_mul(count) <= COMBINED_IDS {
            // id * count + c < bound * count <= 2^32.
            ids.par_iter_mut()
                .zip(codes.par_iter())
                .for_each(|(id, &c)| *id = (*id as u64 * count + c as u64) as u32);
            bound *= count;
            continue;
        }
        // Fewer than 2^32 rows each way (a Polars index): the product fits 64 bits, and is
        // numbered densely again at once.
        let wide: Vec<u64> = crate::alloc::collected(
            ids.iter()
                .zip(codes.iter())
                .map(|(&id, &c)| id as u64 * count + c as u64),
        )?;
        (ids, bound) = dense_codes(&UInt64Chunked::from_vec("by".into(), wide).into_series())?;
    }
    Ok(UInt32Chunked::from_vec("by".into(), ids).into_series())
}

/// Combined ids past this many would no longer fit UInt32: the ids so far are renumbered first.
const COMBINED_IDS: u64 = 1 << 32;

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

/// Strings numbered by hashing each row's string once (a sixth of the time of a cast to
/// Categorical, a tenth of Polars' grouping of the strings, which gathers every group's rows):
/// each part of the rows, one per thread, numbers its own distinct strings, and the parts'
/// numbers are then mapped onto one numbering. 0 for a null, the strings from 1.
fn string_codes(key: &Series) -> HistResult<(Vec<u32>, u64)> {
    let strings = key.str()?;
    let rows = strings.len();
    let part_rows = rows
        .div_ceil(rayon::current_num_threads().max(1))
        .max(STRING_PART_ROWS);
    let parts: Vec<StringChunked> = (0..rows)
        .step_by(part_rows)
        .map(|start| strings.slice(start as i64, part_rows.min(rows - start)))
        .collect();
    let mut codes: Vec<u32> = crate::alloc::zeroed(rows)?;
    // Each part's distinct strings in the order it numbered them (its code - 1).
    let seen: Vec<Vec<&str>> = codes
        .par_chunks_mut(part_rows.max(1))
        .zip(parts.par_iter())
        .map(|(codes, part)| number_part(part, codes))
        .collect();
    let mut numbering: PlHashMap<&str, u32> = PlHashMap::new();
    let renumbered: Vec<Vec<u32>> = seen
        .iter()
        .map(|strings| {
            let mut codes = Vec::with_capacity(strings.len() + 1);
            codes.push(0);
            for &s in strings {
                let next = numbering.len() as u32 + 1;
                codes.push(*numbering.entry(s).or_insert(next));
            }
            codes
        })
        .collect();
    codes
        .par_chunks_mut(part_rows.max(1))
        .zip(renumbered.par_iter())
        .for_each(|(codes, renumbered)| {
            for code in codes {
                *code = renumbered[*code as usize];
            }
        });
    Ok((codes, numbering.len() as u64 + 1))
}

/// Rows a part of a String key has at least: fewer would cost more in maps than they save.
const STRING_PART_ROWS: usize = 1 << 16;

/// Numbers the strings of `part` in order of first appearance from 1 (0: null) into `codes`;
/// returns the distinct strings in that order. A string of up to 12 bytes lies inside its
/// 16-byte view (its length, then its bytes): it is looked up as that one integer, with no
/// string compare; longer ones by their bytes.
fn number_part<'a>(part: &'a StringChunked, codes: &mut [u32]) -> Vec<&'a str> {
    let mut short: PlHashMap<u128, u32> = PlHashMap::new();
    let mut long: PlHashMap<&'a str, u32> = PlHashMap::new();
    let mut order = Vec::new();
    let mut rest = codes;
    for array in part.downcast_iter() {
        let (codes, tail) = rest.split_at_mut(array.len());
        rest = tail;
        let valid = |i: usize| array.validity().is_none_or(|v| v.get_bit(i));
        for (i, (code, view)) in codes.iter_mut().zip(array.views().iter()).enumerate() {
            if !valid(i) {
                continue;
            }
            // SAFETY: `i` is a row of `array`.
            let string = || unsafe { array.value_unchecked(i) };
            let mut first = |s: &'a str| {
                order.push(s);
                order.len() as u32
            };
            *code = match view.length <= View::MAX_INLINE_SIZE {
                // The bytes past the string are zero by Arrow's layout; masked all the same.
                true => {
                    let bits = 32 + 8 * view.length;
                    let inline = view.as_u128() & (u128::MAX >> (128 - bits));
                    *short.entry(inline).or_insert_with(|| first(string()))
                }
                false => *long.entry(string()).or_insert_with(|| first(string())),
            };
        }
    }
    order
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

    /// Strings over several parts (each numbers its own, then one numbering): equal codes
    /// exactly where the strings are, short (inline) and long ones, nulls 0.
    #[test]
    fn strings_share_a_code_exactly_where_they_are_equal() {
        let rows = 5 * STRING_PART_ROWS + 17;
        let value = |i: usize| match i % 7 {
            0 => None,
            1 => Some(format!("a string longer than twelve bytes {}", i % 101)),
            _ => Some(format!("k{}", (i * 31) % 997)),
        };
        let values: Vec<Option<String>> = (0..rows).rev().map(value).collect();
        let key = Series::new("k".into(), values.clone());
        let (codes, count) = string_codes(&key).unwrap();
        let mut seen = std::collections::HashMap::new();
        for (value, &code) in values.iter().zip(&codes) {
            match value {
                None => assert_eq!(code, 0),
                Some(v) => assert_eq!(*seen.entry(v.clone()).or_insert(code), code, "{v}"),
            }
        }
        let distinct: std::collections::HashSet<_> = seen.values().copied().collect();
        assert_eq!(distinct.len(), seen.len());
        assert_eq!(count, seen.len() as u64 + 1);
        assert!(codes.iter().all(|&c| (c as u64) < count));
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
