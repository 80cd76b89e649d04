use super::numeric::{order_statistics, SORT_BELOW};
use super::*;
use crate::bins::{BinSpec, Binning, Closed, Extremes, Range, ValueKind};
use serde_json::Value;

/// A range of Python floats.
fn typed(range: Option<(f64, f64)>) -> Option<Range> {
    range.map(|(lo, hi)| Range::new(lo, hi))
}

/// A column type as the tests build and bin it.
trait Column: SampleValue {
    const KIND: ValueKind;
    const NAME: &'static str;
    fn as_f32(self) -> f32;
    fn as_f64(self) -> f64;
    fn extremes(lo: Self, hi: Self) -> Extremes;
    /// From the fixture: IEEE bits for floats, the integer itself otherwise.
    fn from_json(v: &Value) -> Self;
    /// The fixture's `gen` formula, rounded as numpy's `astype` rounds (floor for integers).
    fn from_generated(x: f64) -> Self;
}

macro_rules! int_column {
    ($($t:ty),*) => {$(
        impl Column for $t {
            const KIND: ValueKind = ValueKind::Integer;
            const NAME: &'static str = stringify!($t);
            fn as_f32(self) -> f32 { self as f32 }
            fn as_f64(self) -> f64 { self as f64 }
            fn extremes(lo: Self, hi: Self) -> Extremes { Extremes::Integer(lo as i128, hi as i128) }
            fn from_json(v: &Value) -> Self {
                let wide = v.as_i64().map(i128::from).or(v.as_u64().map(i128::from)).unwrap();
                <$t>::try_from(wide).unwrap()
            }
            fn from_generated(x: f64) -> Self { x.floor() as $t }
        }
    )*};
}
int_column!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Column for f32 {
    const KIND: ValueKind = ValueKind::Float32;
    const NAME: &'static str = "f32";
    fn as_f32(self) -> f32 {
        self
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn extremes(lo: Self, hi: Self) -> Extremes {
        Extremes::Float32(lo, hi)
    }
    fn from_json(v: &Value) -> Self {
        f32::from_bits(v.as_u64().unwrap() as u32)
    }
    fn from_generated(x: f64) -> Self {
        x as f32
    }
}

impl Column for half::f16 {
    const KIND: ValueKind = ValueKind::Float16;
    const NAME: &'static str = "f16";
    fn as_f32(self) -> f32 {
        self.to_f32()
    }
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
    fn extremes(lo: Self, hi: Self) -> Extremes {
        // Float16 columns are read widened to float32.
        Extremes::Float32(lo.to_f32(), hi.to_f32())
    }
    fn from_json(v: &Value) -> Self {
        half::f16::from_bits(v.as_u64().unwrap() as u16)
    }
    fn from_generated(x: f64) -> Self {
        half::f16::from_f64(x)
    }
}

impl Column for f64 {
    const KIND: ValueKind = ValueKind::Float64;
    const NAME: &'static str = "f64";
    fn as_f32(self) -> f32 {
        self as f32
    }
    fn as_f64(self) -> f64 {
        self
    }
    fn extremes(lo: Self, hi: Self) -> Extremes {
        Extremes::Float64(lo, hi)
    }
    fn from_json(v: &Value) -> Self {
        f64::from_bits(v.as_u64().unwrap())
    }
    fn from_generated(x: f64) -> Self {
        x
    }
}

/// `numpy.histogram(x, bins, range)` counts through the crate's bin contract, on one thread.
fn numpy_histogram<T: Column>(
    x: &[T],
    range: Option<(f64, f64)>,
    bins: usize,
) -> HistResult<Vec<u64>> {
    let range = range.map(|(lo, hi)| Range::new(lo, hi));
    let spec = BinSpec::resolve(&Binning::Count(bins), range, Closed::Left, T::KIND, || {
        let mut valid = x.iter().copied().filter(|v| !v.as_f64().is_nan());
        Ok(match valid.next() {
            None => Extremes::Empty,
            Some(first) => {
                let (lo, hi) = valid.fold((first, first), |(lo, hi), v| {
                    (if v < lo { v } else { lo }, if v > hi { v } else { hi })
                });
                T::extremes(lo, hi)
            }
        })
    })?;
    let mut counts = vec![0u64; bins + 1];
    for &v in x {
        let bin = match &spec {
            BinSpec::Uniform32(u) => u.bin(v.as_f32()),
            BinSpec::Uniform64(u) => u.bin(v.as_f64()),
            BinSpec::Edges(e) => e.bin(v.as_f64()),
            BinSpec::Half(h) => h.bin(v.as_f32()),
            BinSpec::Integers(_) => unreachable!("no integer bins here"),
        };
        counts[bin] += 1;
    }
    counts.truncate(bins);
    Ok(counts)
}

fn estimate<T: Column>(
    estimator: Estimator,
    x: &[T],
    range: Option<(f64, f64)>,
) -> HistResult<Estimate> {
    equal_bin_count(estimator, x, typed(range), &mut |k| {
        numpy_histogram(x, range, k)
    })
}

fn no_histogram(_: usize) -> HistResult<Vec<u64>> {
    panic!("only \"stone\" asks for histograms")
}

// ------------------------------------------------------------------ numpy's own answers

fn fixture_values<T: Column>(case: &Value) -> Vec<T> {
    if let Some(values) = case["values"].as_array() {
        return values.iter().map(T::from_json).collect();
    }
    let gen = &case["gen"];
    let n = gen["n"].as_u64().unwrap();
    let seed = gen["seed"].as_u64().unwrap();
    let scale = gen["scale"].as_f64().unwrap();
    let offset = gen["offset"].as_f64().unwrap();
    (0..n)
        .map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(seed);
            let u = (h >> 11) as f64 / (1u64 << 53) as f64;
            T::from_generated(((u * u) * u - 0.25) * scale + offset)
        })
        .collect()
}

fn check_case<T: Column>(
    index: usize,
    case: &Value,
    names: &[Estimator],
    failures: &mut Vec<String>,
) {
    let x: Vec<T> = fixture_values(case);
    let range = case["range"].as_array().map(|r| {
        let bits = |v: &Value| f64::from_bits(v.as_u64().unwrap());
        (bits(&r[0]), bits(&r[1]))
    });
    for (&estimator, expect) in names.iter().zip(case["expect"].as_array().unwrap()) {
        if expect == "skip" {
            continue;
        }
        let got = estimate(estimator, &x, range);
        let what = format!(
            "case {index} ({} n={} range={range:?}) bins=\"{estimator}\"",
            T::NAME,
            x.len()
        );
        match (expect.as_array(), got) {
            (None, Ok(est)) => failures.push(format!("{what}: numpy fails, got {est:?}")),
            (Some(_), Err(e)) => failures.push(format!("{what}: numpy gives {expect}, got {e}")),
            (None, Err(_)) => {}
            (Some(want), Ok(est)) => {
                let bins = want[0].as_u64().unwrap() as usize;
                let width = u64::from_str_radix(want[1].as_str().unwrap(), 16).unwrap();
                let warned = want[2].as_u64().unwrap() == 1;
                if est.bins != bins
                    || est.width.to_bits() != width
                    || est.warning.is_some() != warned
                {
                    failures.push(format!(
                        "{what}: numpy gives {bins} bins, width {:e}, warning {warned}; got {est:?}",
                        f64::from_bits(width)
                    ));
                }
            }
        }
    }
}

#[test]
fn every_estimator_matches_numpy_on_the_fixtures() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/estimators.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let names: Vec<Estimator> = doc["estimators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().parse().unwrap())
        .collect();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 200);
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        match case["dtype"].as_str().unwrap() {
            "float16" => check_case::<half::f16>(i, case, &names, &mut failures),
            "float32" => check_case::<f32>(i, case, &names, &mut failures),
            "float64" => check_case::<f64>(i, case, &names, &mut failures),
            "int8" => check_case::<i8>(i, case, &names, &mut failures),
            "int16" => check_case::<i16>(i, case, &names, &mut failures),
            "int32" => check_case::<i32>(i, case, &names, &mut failures),
            "int64" => check_case::<i64>(i, case, &names, &mut failures),
            "uint8" => check_case::<u8>(i, case, &names, &mut failures),
            "uint16" => check_case::<u16>(i, case, &names, &mut failures),
            "uint32" => check_case::<u32>(i, case, &names, &mut failures),
            "uint64" => check_case::<u64>(i, case, &names, &mut failures),
            other => panic!("unknown dtype {other}"),
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements with numpy:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ------------------------------------------------------------------ names and errors

#[test]
fn names_parse_print_and_serialize_as_numpy_spells_them() {
    for e in Estimator::ALL {
        assert_eq!(e.name().parse::<Estimator>().unwrap(), e);
        assert_eq!(e.to_string(), e.name());
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            format!("\"{}\"", e.name())
        );
        assert_eq!(
            serde_json::from_str::<Estimator>(&format!("\"{e}\"")).unwrap(),
            e
        );
    }
    let err = "Auto".parse::<Estimator>().unwrap_err().to_string();
    assert!(err.contains("\"Auto\""), "{err}");
    for e in Estimator::ALL {
        assert!(err.contains(&format!("\"{e}\"")), "{err}");
    }
}

#[test]
fn weights_are_refused_with_numpy_reason() {
    let err = weighted_error(Estimator::Fd);
    let msg = err.to_string();
    assert!(
        msg.contains("`Bins::Rule(BinRule::Estimator(Estimator::Fd))`")
            && msg.contains(NUMPY_WEIGHTED_MESSAGE),
        "{msg}"
    );
    let python = err.message(crate::error::Spelling::Python);
    assert!(
        python.contains("`bins=\"fd\"`") && !python.contains("BinRule"),
        "{python}"
    );
}

#[test]
fn empty_samples_get_one_bin() {
    let none: [f64; 0] = [];
    let all_nan = [f64::NAN, f64::NAN];
    for e in Estimator::ALL {
        assert_eq!(
            equal_bin_count(e, &none[..], None, &mut no_histogram)
                .unwrap()
                .bins,
            1
        );
        assert_eq!(
            equal_bin_count(e, &all_nan[..], None, &mut no_histogram)
                .unwrap()
                .bins,
            1
        );
        // A range that keeps nothing.
        let cut = equal_bin_count(
            e,
            &[1.0f64, 2.0][..],
            typed(Some((5.0, 6.0))),
            &mut no_histogram,
        );
        assert_eq!(cut.unwrap().bins, 1);
    }
}

#[test]
fn bad_ranges_and_infinite_data_are_refused_as_numpy_refuses_them() {
    let x = [1.0f64, 2.0, 3.0];
    for range in [(2.0, 1.0), (0.0, f64::INFINITY), (f64::NAN, 1.0)] {
        let err = equal_bin_count(
            Estimator::Auto,
            &x[..],
            typed(Some(range)),
            &mut no_histogram,
        );
        assert!(err.unwrap_err().to_string().contains("`range`"));
    }
    let inf = [1.0f64, f64::INFINITY, 2.0];
    let err = equal_bin_count(Estimator::Sqrt, &inf[..], None, &mut no_histogram).unwrap_err();
    assert!(err.to_string().contains("not finite"), "{err}");
    // np.histogram_bin_edges([1, inf, 2], "sqrt", range=(0, 4)): the infinity is cut away.
    let cut = equal_bin_count(
        Estimator::Sqrt,
        &inf[..],
        typed(Some((0.0, 4.0))),
        &mut no_histogram,
    );
    assert_eq!(cut.unwrap().bins, 6);
}

#[test]
fn a_span_that_overflows_is_an_error_not_a_count() {
    // float32: max - min overflows, as in numpy ("cannot convert float NaN to integer").
    let x = [-3e38f32, 3e38, 0.0];
    for e in [
        Estimator::Sqrt,
        Estimator::Fd,
        Estimator::Stone,
        Estimator::Doane,
    ] {
        let err = estimate(e, &x, None).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "`Bins::Rule(BinRule::Estimator(Estimator::{e:?}))`"
            )),
            "{err}"
        );
    }
    // A width far below the span asks for more bins than a histogram holds (numpy: "Maximum
    // allowed size exceeded").
    let mut x: Vec<f64> = (0..1000).map(|i| (i % 2) as f64 * 1e-300).collect();
    x.push(1.0);
    let err = estimate(Estimator::Fd, &x, None).unwrap_err().to_string();
    assert!(err.contains("more than the"), "{err}");
}

// ------------------------------------------------------------------ the sample

#[test]
fn nan_is_skipped_and_ownership_changes_nothing() {
    let clean: Vec<f64> = (0..500)
        .map(|i| ((i * 37 % 101) as f64).sqrt() * 3.5)
        .collect();
    let mut dirty = clean.clone();
    for i in (0..dirty.len()).step_by(7) {
        dirty.insert(i, f64::NAN);
    }
    for range in [None, Some((1.0, 20.0))] {
        for e in Estimator::ALL {
            let want = estimate(e, &clean, range).unwrap();
            assert_eq!(estimate(e, &dirty, range).unwrap(), want, "{e} {range:?}");
            let owned = equal_bin_count(e, dirty.clone(), typed(range), &mut |k| {
                numpy_histogram(&clean, range, k)
            });
            assert_eq!(owned.unwrap(), want, "{e} {range:?} owned");
        }
    }
}

#[test]
fn integer_data_never_gets_bins_narrower_than_one() {
    // np.histogram_bin_edges(np.array([0, 1, 2, 3] * 250, np.int64), "sqrt"): width 3/sqrt(1000)
    // is raised to 1, so 3 bins; as floats, ceil(3 / 0.0949) = 32.
    let ints: Vec<i64> = (0..1000).map(|i| i % 4).collect();
    let est = equal_bin_count(Estimator::Sqrt, &ints[..], None, &mut no_histogram).unwrap();
    assert_eq!((est.bins, est.width), (3, 3.0 / 1000f64.sqrt()));
    let floats: Vec<f64> = ints.iter().map(|&v| v as f64).collect();
    let est = equal_bin_count(Estimator::Sqrt, &floats[..], None, &mut no_histogram).unwrap();
    assert_eq!(est.bins, 32);
}

#[test]
fn narrow_integers_take_numpy_wrapping_quartile_differences() {
    // np.percentile(np.array([-100, 100], np.int8), [75, 25]) == [114, -114]: 100 - (-100)
    // wraps to -56 in int8.
    let x = [-100i8, 100];
    let (p75, p25) = quartiles(&x[..], (-100, 100)).unwrap();
    assert_eq!((p75, p25), (114.0, -114.0));
}

// ------------------------------------------------------------------ numpy's arithmetic

#[test]
fn sums_are_numpy_pairwise_sums() {
    // np.full(100000, 0.1, np.float32).sum() == 10000.0009765625; one running sum: 9998.557.
    let tenths = vec![0.1f32; 100_000];
    assert_eq!(pairwise_sum(&tenths, |v: f32| v), 10_000.001);
    // np.mean(np.arange(1, 100001, dtype=np.int64) * 92233720368547) == 4.611732135287536e18:
    // buffers of 8192 cast values; one pairwise sum over all of them gives ...535e18.
    let big: Vec<i64> = (1..=100_000i64).map(|i| i * 92_233_720_368_547).collect();
    assert_eq!(buffered_sum_f64(&big) / 1e5, 4.611732135287536e18);
    assert_eq!(
        pairwise_sum(&big, |v: i64| v as f64) / 1e5,
        4.611732135287535e18
    );
}

#[test]
fn dot_products_follow_openblas() {
    // p = counts / 97; numpy's p.dot(p) is 0x1.ce5175f257724p-5, a running sum ...725p-5.
    let counts = [7, 2, 5, 5, 6, 5, 9, 3, 7, 4, 6, 4, 2, 5, 5, 6, 3, 6, 3, 4];
    let p: Vec<f64> = counts.iter().map(|&c| c as f64 / 97.0).collect();
    assert_eq!(openblas_ddot_self(&p), 0.056_435_327_877_564_03);
    let running: f64 = p.iter().map(|v| v * v).sum();
    assert_ne!(running, openblas_ddot_self(&p));
    // Fewer than 16 values: one running sum.
    let short = &p[..15];
    assert_eq!(
        openblas_ddot_self(short),
        short.iter().fold(0.0, |s, v| s + v * v)
    );
}

/// The radix selection must return the sorted order's values, whatever the distribution.
#[test]
fn order_statistics_are_those_of_the_sorted_sample() {
    fn check<T: Column + std::fmt::Debug>(x: Vec<T>) {
        let mut sorted = x.clone();
        sorted.sort_unstable_by(|a, b| a.order(b));
        let n = x.len();
        let ranks = [
            0,
            1,
            n / 4,
            n / 4 + 1,
            n / 2,
            3 * n / 4,
            3 * n / 4 + 1,
            n - 2,
            n - 1,
        ];
        let mut ranks = ranks.to_vec();
        ranks.sort_unstable();
        ranks.dedup();
        let got = order_statistics(&x, (sorted[0], sorted[n - 1]), &ranks).unwrap();
        for (&r, g) in ranks.iter().zip(got) {
            assert!(
                g.order(&sorted[r]).is_eq(),
                "{} rank {r}: {g:?} vs {:?}",
                T::NAME,
                sorted[r]
            );
        }
    }
    let n = 3 * SORT_BELOW + 7;
    let hash = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
    check::<f64>((0..n).map(|i| (hash(i) as f64).ln() - 20.0).collect());
    check::<f64>((0..n).map(|i| [-0.0, 0.0, 1e-300, -5.0][i % 4]).collect());
    check::<f64>(
        (0..n)
            .map(|i| if i % 3 == 0 { -f64::MAX } else { f64::MAX })
            .collect(),
    );
    check::<f32>(
        (0..n)
            .map(|i| (hash(i) % 1000) as f32 * 1e-3 - 0.5)
            .collect(),
    );
    check::<f32>(
        (0..n)
            .map(|i| f32::from_bits(1 + (hash(i) % 50) as u32))
            .collect(),
    );
    check::<i8>((0..n).map(|i| hash(i) as i8).collect());
    check::<u16>((0..n).map(|i| (hash(i) % 3) as u16 + 65_000).collect());
    check::<i32>((0..n).map(|i| hash(i) as i32).collect());
    check::<i64>((0..n).map(|i| hash(i) as i64 - (1 << 52)).collect());
    check::<i64>(
        (0..n)
            .map(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX })
            .collect(),
    );
    check::<u64>((0..n).map(|i| u64::MAX - hash(i) % 7).collect());
    check::<u64>(vec![42; n]);
}

/// The kept integers are found by their interval's ends: they must be exactly those numpy keeps
/// by comparing each value, cast to float64, with the range.
#[test]
fn integer_windows_keep_what_numpy_keeps() {
    fn check<T: Column + std::fmt::Debug>(values: &[T], ranges: &[(f64, f64)]) {
        for &(lo, hi) in ranges {
            let (first, last) = T::window(lo, hi);
            for &x in values {
                let numpy = x.as_f64() >= lo && x.as_f64() <= hi;
                let ours = x >= first && x <= last;
                assert_eq!(ours, numpy, "{} {x:?} in [{lo}, {hi}]", T::NAME);
            }
        }
    }
    let p53 = 2f64.powi(53);
    let p63 = 2f64.powi(63);
    let ranges = [
        (-0.5, 0.5),
        (0.5, 0.5),
        (-1e300, 1e300),
        (3.0, 2.0 + 1e-9),
        (p53, p53 + 2.0),
        (p53 - 1.0, p53 + 4.0),
        (-p63, -p63 + 4096.0),
        (p63 - 4096.0, p63),
        (2f64.powi(64) - 4096.0, 2f64.powi(64)),
        (-130.0, 127.5),
        (255.0, 300.0),
    ];
    let near = |c: i128| (-3000..=3000).map(move |d| c + d);
    let wide: Vec<i128> = [
        0,
        1 << 53,
        -(1 << 63),
        (1 << 63) - 1,
        (1 << 64) - 1,
        1 << 60,
    ]
    .into_iter()
    .flat_map(near)
    .collect();
    macro_rules! each {
        ($($t:ty),*) => {$(
            let values: Vec<$t> = wide.iter().filter_map(|&v| <$t>::try_from(v).ok()).collect();
            check::<$t>(&values, &ranges);
        )*};
    }
    each!(i8, i16, i32, i64, u8, u16, u32, u64);
}

#[test]
fn extremes_alone_give_the_counts_of_the_whole_sample() {
    // What a streaming pass finds (size, min, max of the values counted) is all "sturges",
    // "rice" and "sqrt" need: the same count as from every value, per type and range.
    fn check<T: SampleValue + Copy>(values: &[T], range: Option<(f64, f64)>, kept: &[T]) {
        let extremes = kept.iter().fold(None, |acc: Option<(T, T)>, &x| match acc {
            None => Some((x, x)),
            Some((lo, hi)) => Some((
                if x.order(&lo).is_lt() { x } else { lo },
                if x.order(&hi).is_gt() { x } else { hi },
            )),
        });
        for e in [Estimator::Sturges, Estimator::Rice, Estimator::Sqrt] {
            let whole = equal_bin_count(e, values, typed(range), &mut no_histogram).unwrap();
            let summary = equal_bin_count_from_extremes(e, kept.len(), extremes, typed(range))
                .unwrap()
                .unwrap();
            assert_eq!(summary, whole, "{e} over {range:?}");
        }
        let fd = equal_bin_count_from_extremes(Estimator::Fd, kept.len(), extremes, typed(range));
        assert!(fd.unwrap().is_none());
    }
    let f32s: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
    check(&f32s, None, &f32s);
    let window: Vec<f32> = f32s
        .iter()
        .copied()
        .filter(|&x| (-10.0..=500.0).contains(&x))
        .collect();
    check(&f32s, Some((-10.0, 500.0)), &window);
    let i8s: Vec<i8> = (0..300).map(|i| (i % 251) as i8).collect();
    check(&i8s, None, &i8s);
    let u64s = [u64::MAX, 0, 17];
    check(&u64s, None, &u64s);
    check::<f64>(&[], None, &[]);
    check(&[2.5f64; 7], None, &[2.5f64; 7]);
}
