//! The plan's choices for chosen bin counts, devices and kernels.

use super::*;
use crate::bins::{BinSpec, Binning, Closed, Extremes, Range, ValueKind};
use crate::job::Axis;

fn spec(bins: Binning) -> BinSpec {
    BinSpec::resolve(
        &bins,
        Some(Range::new(0.0, 1.0)).filter(|_| matches!(bins, Binning::Count(_))),
        Closed::Left,
        ValueKind::Float32,
        || Ok(Extremes::Empty),
    )
    .unwrap()
}

/// Host rows of `dtypes` binned by `axes` into `cells` cells.
fn outline<'a>(
    axes: &'a [Axis],
    dtypes: &[DType],
    cells: usize,
    weighted: bool,
    rows: u64,
) -> Outline<'a> {
    Outline {
        axes,
        dtypes: dtypes.to_vec(),
        rows: rows as usize,
        cells,
        weighted,
        row_bytes: dtypes.iter().map(|d| d.size()).sum::<usize>() + 8 * weighted as usize,
        location: crate::job::Location::Host,
        ordinal: 0,
    }
}

/// The plan of a 1-D float32 column binned by `spec`.
fn plan(
    props: &DeviceProps,
    spec: &BinSpec,
    weighted: bool,
    rows: u64,
    force: Option<Family>,
) -> HistResult<Plan> {
    let axes = [Axis::bins(spec.clone(), false)];
    super::plan(
        props,
        &outline(&axes, &[DType::F32], spec.len(), weighted, rows),
        force,
        None,
    )
}

#[test]
fn small_bins_take_shared_memory_with_replicas() {
    let p = plan(
        &DeviceProps::h100(),
        &spec(Binning::Count(256)),
        false,
        1 << 29,
        None,
    )
    .unwrap();
    assert_eq!(p.family, Family::Shared);
    assert_eq!(
        p.kernel.to_string(),
        "count_shared_float32_u32_left_formula64"
    );
    assert_eq!(p.grid, 132 * 4);
    assert_eq!(p.replicas, 16);
    assert_eq!(p.stride, 257); // 256 bins, the spare counter, odd
    assert!(p.to_string().contains("fit in shared memory"));
}

#[test]
fn bins_up_to_the_optin_limit_stay_in_shared_memory() {
    let p = plan(
        &DeviceProps::h100(),
        &spec(Binning::Count(50_000)),
        false,
        1 << 29,
        None,
    )
    .unwrap();
    assert_eq!(
        (p.family, p.grid, p.block, p.replicas),
        (Family::Shared, 132, 1024, 1)
    );
    assert!(p.shared_bytes <= DeviceProps::h100().shared_per_block_optin);
}

#[test]
fn twice_the_bins_of_rows_take_packed_16_bit_counters() {
    // Measured on an H200 (kernel lab, 2^29 float32, 65,536 bins): packed 0.92 ms, spill 1.23
    // on uniform and normal data, so rows take packed (and so do counts by value); spill stays
    // a pin away. Packed sweeps its counters 16 bytes a read: whole groups of 8 bins.
    let p = plan(
        &DeviceProps::h100(),
        &spec(Binning::Count(65_536)),
        false,
        1 << 29,
        None,
    )
    .unwrap();
    assert_eq!(
        (p.family, p.kernel.to_string(), p.block, p.shared_bytes),
        (
            Family::Packed,
            "count_packed_float32_u32_left_formula64".to_string(),
            1024,
            131_072
        )
    );
    assert!(p.to_string().contains("16-bit counters"), "{p}");
    let spill = plan(
        &DeviceProps::h100(),
        &spec(Binning::Count(65_536)),
        false,
        1 << 29,
        Some(Family::Spill),
    )
    .unwrap();
    assert_eq!(
        (spill.kernel.to_string(), spill.block, spill.shared_bytes),
        (
            "count_spill_float32_u32_left_formula64".to_string(),
            1024,
            131_072
        )
    );
    assert!(spill.to_string().contains("spill family"), "{spill}");
}

#[test]
fn large_bins_are_segmented_and_forcing_shared_fails_clearly() {
    let s = spec(Binning::Count(1 << 20));
    let p = plan(&DeviceProps::h100(), &s, false, 1 << 29, None).unwrap();
    assert_eq!(p.family, Family::Batched);
    let seg = p.segments.as_ref().unwrap();
    assert_eq!(
        (seg.partitions, seg.width_bits, seg.batched),
        (32, 15, true)
    );
    // One launch for all 2^29 rows on an 80 GB H100.
    assert_eq!(p.rows_per_launch, 1 << 29);
    assert!(p.scratch_bytes() >= 2 << 29);
    assert!(p.to_string().contains("32 partition(s) of 32768 bins"));
    // The segmented family stays reachable by a pin, with its own passes.
    assert_eq!(
        p.kernel.to_string(),
        "count_batched_float32_u32_left_formula64"
    );
    let old = plan(
        &DeviceProps::h100(),
        &s,
        false,
        1 << 29,
        Some(Family::Segmented),
    )
    .unwrap();
    assert_eq!(
        (old.kernel.to_string(), old.segments.unwrap().batched),
        (
            "count_segmented_float32_u32_left_formula64".to_string(),
            false
        )
    );
    for family in [Family::Shared, Family::Packed, Family::Spill] {
        let err = plan(&DeviceProps::h100(), &s, false, 1 << 29, Some(family));
        assert!(err.unwrap_err().to_string().contains("cannot hold"));
    }
}

#[test]
fn weighted_sums_never_take_the_counting_families() {
    let s = spec(Binning::Count(1 << 20));
    let p = plan(&DeviceProps::h100(), &s, true, 1 << 20, None).unwrap();
    assert_eq!(p.family, Family::Global);
    for family in [
        Family::Packed,
        Family::Spill,
        Family::Segmented,
        Family::Batched,
    ] {
        let err = plan(&DeviceProps::h100(), &s, true, 1 << 20, Some(family));
        assert!(err.unwrap_err().to_string().contains("weighted sums"));
    }
}

/// n-D jobs count each row's cell in one kernel over every axis, with any family.
#[test]
fn n_d_jobs_count_cells_in_one_kernel() {
    let axes = [
        Axis::bins(spec(Binning::Count(1024)), false),
        Axis::bins(spec(Binning::Count(1024)), false),
    ];
    let p = super::plan(
        &DeviceProps::h100(),
        &outline(&axes, &[DType::F32, DType::F32], 1 << 20, false, 1 << 27),
        None,
        None,
    )
    .unwrap();
    assert_eq!(p.family, Family::Batched);
    assert_eq!(
        p.kernel.to_string(),
        "count_batched_float32_u32_left_formula64_x_float32_u32_left_formula64"
    );
    assert_eq!(p.kernel.axes().len(), 2);
    // The segmented keys only: no column of cells.
    assert!(p.scratch_bytes() < 3 << 27);
}

/// The host sizes the segmented scratch and shared memory from these constants.
#[test]
fn segmented_constants_match_the_kernels() {
    let cuh = include_str!("../../kernels/segmented.cuh");
    assert!(cuh.contains(&format!("#define SEG_TILE_ROWS {SEG_TILE_ROWS}\n")));
    assert!(cuh.contains(&format!(
        "#define SEG_PARTITION_THREADS {SEG_PARTITION_THREADS}\n"
    )));
}

#[test]
fn weighted_edges_account_for_edges_and_doubles() {
    let edges: Vec<f64> = (0..=1000).map(|i| i as f64).collect();
    let p = plan(
        &DeviceProps::h100(),
        &spec(Binning::Edges(edges)),
        true,
        1 << 20,
        None,
    )
    .unwrap();
    assert_eq!(
        p.kernel.to_string(),
        "count_shared_weighted_float32_edges_left"
    );
    assert!(p.shared_bytes as u64 >= 1001 * 8 + 1001 * 8);
}

#[test]
fn small_inputs_get_a_small_grid() {
    let p = plan(
        &DeviceProps::h100(),
        &spec(Binning::Count(16)),
        false,
        1000,
        None,
    )
    .unwrap();
    assert_eq!(p.grid, 1);
}

#[test]
fn an_older_gpu_with_less_shared_memory() {
    let a100 = DeviceProps {
        name: "A100".into(),
        compute_capability: (8, 0),
        sm_count: 108,
        shared_per_block_optin: 166_912,
        shared_per_sm: 167_936,
        max_threads_per_sm: 2048,
        l2_bytes: 41_943_040,
        total_memory: 42_298_834_944,
        pageable_memory_access: false,
    };
    let p = plan(&a100, &spec(Binning::Count(45_000)), false, 1 << 29, None).unwrap();
    assert_eq!(p.family, Family::Packed);
    let p = plan(&a100, &spec(Binning::Count(40_000)), false, 1 << 29, None).unwrap();
    assert_eq!(p.family, Family::Shared);
}

/// Many numpy bins take the cheap rule where it is proved, and replay numpy's arithmetic where a
/// walk (the device's, in a call) found numpy's estimate straying: the plan takes a settled proof
/// as it is.
#[test]
fn large_numpy_bins_take_the_cheap_rule_where_it_is_proved() {
    let props = DeviceProps::h100();
    let proved = spec(Binning::Count(1 << 20));
    let p = plan(&props, &proved, false, 1 << 29, None).unwrap();
    assert!(!p.kernel.axes()[0].rule.literal, "{}", p.kernel);
    // Another range, so that the proof above is not remembered for it.
    let strays = BinSpec::resolve(
        &Binning::Count(1 << 20),
        Some(Range::new(0.0, 2.0)),
        Closed::Left,
        ValueKind::Float32,
        || Ok(Extremes::Empty),
    )
    .unwrap();
    let BinSpec::Uniform32(u) = &strays else {
        panic!("float32 bins")
    };
    u.settle_proof(crate::bins::Walk {
        near: false,
        worst: 0.0,
    });
    let p = plan(&props, &strays, false, 1 << 29, None).unwrap();
    assert!(p.kernel.axes()[0].rule.literal, "{}", p.kernel);
}

/// Sorted data, or data of few values, runs in one bin: large histograms then take atomics.
#[test]
fn long_runs_in_a_sample_take_the_global_family_past_shared_memory() {
    let props = DeviceProps::h100();
    let axes = [Axis::bins(spec(Binning::Count(1 << 20)), false)];
    let with = |run| {
        super::plan(
            &props,
            &outline(&axes, &[DType::F32], 1 << 20, false, 1 << 29),
            None,
            run,
        )
    };
    assert_eq!(with(Some(1.1)).unwrap().family, Family::Batched);
    let p = with(Some(64.0)).unwrap();
    assert_eq!(p.family, Family::Global);
    assert!(p.to_string().contains("runs 64 rows in one bin"), "{p}");
    // Small histograms stay in shared memory whatever the data.
    let small = [Axis::bins(spec(Binning::Count(256)), false)];
    let p = super::plan(
        &props,
        &outline(&small, &[DType::F32], 256, false, 1 << 29),
        None,
        Some(64.0),
    );
    assert_eq!(p.unwrap().family, Family::Shared);
}

#[test]
fn segmented_launches_grow_with_the_device_memory_within_bounds() {
    let gib = 1u64 << 30;
    for (memory, rows) in [
        (8 * gib, 1 << 28),
        (40 * gib, 1 << 28),
        (DeviceProps::h100().total_memory, 1 << 29),
        (141 * gib, 1 << 30),
        (1 << 44, 1 << 30),
    ] {
        assert_eq!(seg_rows_per_launch(memory), rows, "{memory} bytes");
    }
}

/// Settings are values each call passes down: two calls of one plan, each with its own, route
/// their rows each by its own (and neither changes what the other sees).
#[test]
fn each_call_routes_its_rows_by_its_own_settings() {
    use crate::gpu::{expected_route, Route, Settings, Transfer};
    let p = plan(
        &DeviceProps::h100(),
        &spec(Binning::Count(256)),
        false,
        1 << 20,
        None,
    )
    .unwrap();
    let roomy = Settings {
        transfer: Transfer::Pageable,
        device_bytes: Some(1 << 30),
        ..Default::default()
    };
    let tight = Settings {
        transfer: Transfer::Registered,
        device_bytes: Some(1 << 20),
        ..Default::default()
    };
    let uploaded = Route::Uploaded {
        transfer: Transfer::Pageable,
    };
    assert_eq!(expected_route(1 << 20, 4, &p, &roomy), uploaded);
    // 1 MiB less the counts holds windows of 130,816 rows of 4 bytes, twice over: 9 of them.
    assert_eq!(
        expected_route(1 << 20, 4, &p, &tight),
        Route::Streamed {
            transfer: Transfer::Registered,
            windows: 9
        }
    );
    assert_eq!(expected_route(1 << 20, 4, &p, &roomy), uploaded);
    assert_eq!(expected_route(1 << 20, 0, &p, &tight), Route::Pinned);
}
