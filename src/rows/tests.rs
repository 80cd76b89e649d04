//! Row binning against a plain reading of Polars' rule (the Python tests hold every frame to
//! Polars' own).

use polars::prelude::*;

use super::*;

/// The rule itself: the number of breakpoints at most the value (left-closed) or below it,
/// in Polars' total order.
fn reference(values: &[f64], breaks: &[f64], closed: Closed) -> Vec<u32> {
    values
        .iter()
        .map(|&x| {
            breaks
                .iter()
                .filter(|&&b| match closed {
                    Closed::Left => f64_key(b) <= f64_key(x),
                    Closed::Right => f64_key(b) < f64_key(x),
                })
                .count() as u32
        })
        .collect()
}

#[test]
fn every_search_follows_the_rule() {
    let values: Vec<f64> = (0..300_000)
        .map(|i| match i % 7 {
            0 => f64::NAN,
            1 => (i % 11) as f64 - 5.0,
            2 => f64::INFINITY,
            3 => -0.0,
            _ => ((i as f64) * 0.618).fract() * 12.0 - 6.0,
        })
        .collect();
    let cases: Vec<Vec<f64>> = vec![
        vec![],
        vec![0.0],
        vec![-1.0, 1.0],
        vec![-3.0, -1.0, -1.0, 0.0, 2.5, 2.5],
        vec![f64::NEG_INFINITY, 0.0, f64::INFINITY],
        vec![1.0, f64::NAN],
        (0..101).map(|i| i as f64 * 0.12 - 6.0).collect(),
    ];
    let column = Series::new("x".into(), &values);
    for breaks in cases {
        for closed in [Closed::Left, Closed::Right] {
            let b = Series::new("b".into(), &breaks);
            let got = bin_rows(&column, &b, closed, NanRows::Bin, Device::Cpu).unwrap();
            let got: Vec<u32> = got.into_no_null_iter().collect();
            assert!(
                got == reference(&values, &breaks, closed),
                "{breaks:?} {closed:?}"
            );
        }
    }
}

#[test]
fn wide_integers_compare_exactly() {
    let big = 1i64 << 60;
    let values = [big - 1, big, big + 1, i64::MIN, i64::MAX];
    let column = Series::new("x".into(), &values);
    let b = Series::new("b".into(), &[big, big + 1]);
    let got = bin_rows(&column, &b, Closed::Left, NanRows::Bin, Device::Cpu).unwrap();
    let got: Vec<u32> = got.into_no_null_iter().collect();
    assert_eq!(got, [0, 1, 2, 0, 2]);
}

#[test]
fn order_statistics_are_the_sorted_values() {
    let values: Vec<f64> = (0..100_000).map(|i| ((i * 7919) % 1000) as f64).collect();
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let positions = [0, 5, 99_999, 50_000, 5];
    let got = select::order_statistics(&Series::new("x".into(), &values), &positions).unwrap();
    let got: Vec<f64> = got.f64().unwrap().into_no_null_iter().collect();
    let expected: Vec<f64> = positions.iter().map(|&p| sorted[p]).collect();
    assert_eq!(got, expected);
}

#[test]
fn ranks_split_ties_in_input_order() {
    let values = [2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0];
    let (bins, starts) = ranks::rank_bins(&Series::new("x".into(), &values), |n| {
        breaks::rank_count_positions(n, 2)
    })
    .unwrap();
    let bins: Vec<u32> = bins.into_no_null_iter().collect();
    assert_eq!(bins, [0, 0, 1, 0, 1, 0, 1]);
    assert_eq!(starts.f64().unwrap().get(0), Some(2.0));
}

#[test]
fn radix_selection_is_the_sorted_keys() {
    use select::Selectable;
    // Spread keys, keys sharing their top bits (the refining passes), one bucket holding most
    // keys, all keys equal, and keys differing only in their lowest bits.
    let n = 300_000u64;
    let spread: Vec<u64> = (0..n)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let high = (0..n).map(|i| (7 << 48) | ((i * 7919) % 5_000)).collect();
    let skewed = (0..n)
        .map(|i| if i % 10 == 0 { i << 40 } else { 42 })
        .collect();
    let equal = vec![u64::MAX; n as usize];
    let low = (0..n).map(|i| i % 3).collect();
    for keys in [spread, high, skewed, equal, low] {
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        let len = keys.len();
        let positions = [0, 1, len / 10, len / 2, len / 2, len - 2, len - 1, 12_345];
        let got = u64::select_at(&keys, &positions).unwrap();
        let expected: Vec<u64> = positions.iter().map(|&p| sorted[p]).collect();
        assert_eq!(got, expected);
    }
    assert!(u64::select_at(&[1, 2, 3], &[3]).is_err());
}

#[test]
fn the_gpu_is_refused_not_replaced() {
    let column = Series::new("x".into(), &[1.0f64, 2.0]);
    let b = Series::new("b".into(), &[1.5f64]);
    let err = bin_rows(&column, &b, Closed::Left, NanRows::Bin, Device::Gpu).unwrap_err();
    assert!(err.to_string().contains("no GPU kernel"), "{err}");
    for device in [Device::Auto, Device::Cpu] {
        assert!(bin_rows(&column, &b, Closed::Left, NanRows::Bin, device).is_ok());
    }
}
