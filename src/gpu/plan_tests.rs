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
        interleaved: false,
    }
}

/// sm_90's constants with the choices made before the kernel lab timed the candidates: tests of
/// the plan's logic use it (or name a tuning of their own), so that a measurement moves an SM90
/// choice without a test to change.
const TODAY: Tuning = Tuning {
    bytes: Family::Shared,
    large_bins: Family::Batched,
    radix_count: CountPass::Paired,
    interleaved: false,
    ..SM90
};

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
        &Tuning {
            arch: Tuning::of(props.compute_capability).arch,
            ..TODAY
        },
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
        (seg.partitions, seg.width_bits, seg.count),
        (32, 15, CountPass::Batched)
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
        (old.kernel.to_string(), old.segments.unwrap().count),
        (
            "count_segmented_float32_u32_left_formula64".to_string(),
            CountPass::Tile
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
        &TODAY,
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
fn weighted_edges_account_for_edges_and_sum_cells() {
    let edges: Vec<f64> = (0..=1000).map(|i| i as f64).collect();
    let p = plan(
        &DeviceProps::h100(),
        &spec(Binning::Edges(edges)),
        true,
        1 << 20,
        None,
    )
    .unwrap();
    // The process's way of summing (`fixed::sums`): float64 additions by default, fixed point
    // under POLARS_GPU_HIST_SUMS=fixed.
    let (name, cell) = match crate::fixed::sums() {
        crate::fixed::Sums::Float => ("count_shared_weighted_float_float32_edges_left", 8),
        crate::fixed::Sums::Fixed => ("count_shared_weighted_float32_edges_left", 24),
    };
    assert_eq!(p.kernel.to_string(), name);
    // The staged edges, then one cell a bin (a double, or three u64 in fixed point) and the spare.
    assert!(p.shared_bytes as u64 >= 1001 * 8 + 1001 * cell);
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
            &TODAY,
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
        &TODAY,
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

/// The needs of a job, for the table below.
fn needs(bins: usize) -> Needs {
    Needs {
        bins,
        weighted: false,
        edge_bytes: 0,
        bytes_by_value: false,
        rows: 1 << 29,
        mean_run: None,
        optin: DeviceProps::h100().shared_per_block_optin as u64,
    }
}

/// A case of the family choice: its name, the job's needs, the tuning, the pin, and the family
/// chosen or the words of the refusal.
type ChoiceCase<'a> = (
    &'a str,
    Needs,
    &'a Tuning,
    Option<Family>,
    Result<Family, &'a str>,
);

/// The family choice is a pure function of what a job needs, the tuning and a pin: a table of
/// cases, each the family chosen or the words of the refusal.
#[test]
fn the_family_choice_follows_a_table() {
    let tuned = Tuning {
        bytes: Family::Banked,
        large_bins: Family::Radix,
        ..TODAY
    };
    let private = Tuning {
        bytes: Family::Private,
        ..TODAY
    };
    let bytes = Needs {
        bytes_by_value: true,
        ..needs(256)
    };
    let weighted = |n| Needs {
        weighted: true,
        ..needs(n)
    };
    let run = |r| Needs {
        mean_run: Some(r),
        ..needs(1 << 20)
    };
    #[rustfmt::skip]
    let cases: Vec<ChoiceCase> = vec![
        ("few bins", needs(256), &TODAY, None, Ok(Family::Shared)),
        ("the most u32 counters a block holds", needs(58_000), &TODAY, None, Ok(Family::Shared)),
        ("twice those as 16-bit counters", needs(65_536), &TODAY, None, Ok(Family::Packed)),
        ("a million bins", needs(1 << 20), &TODAY, None, Ok(Family::Batched)),
        ("a million bins, radix tuned", needs(1 << 20), &tuned, None, Ok(Family::Radix)),
        ("16M bins", needs(1 << 24), &TODAY, None, Ok(Family::Batched)),
        ("long runs", run(64.0), &tuned, None, Ok(Family::Global)),
        ("short runs", run(1.1), &tuned, None, Ok(Family::Radix)),
        ("runs at the threshold", run(4.0), &TODAY, None, Ok(Family::Global)),
        ("bytes by value, today", bytes, &TODAY, None, Ok(Family::Shared)),
        ("bytes by value, banked", bytes, &tuned, None, Ok(Family::Banked)),
        ("bytes by value, private", bytes, &private, None, Ok(Family::Private)),
        ("bytes binned row by row", needs(256), &tuned, None, Ok(Family::Shared)),
        ("the default keeps today's", bytes, &DEFAULT, None, Ok(Family::Shared)),
        ("weighted few", weighted(256), &tuned, None, Ok(Family::Shared)),
        ("weighted many", weighted(1 << 20), &tuned, None, Ok(Family::Global)),
        ("pinned", needs(1 << 20), &TODAY, Some(Family::Radix), Ok(Family::Radix)),
        ("pinned private", needs(1000), &TODAY, Some(Family::Private), Ok(Family::Private)),
        ("pinned spill", needs(65_536), &TODAY, Some(Family::Spill), Ok(Family::Spill)),
        ("pinned shared, too many", needs(1 << 20), &TODAY, Some(Family::Shared), Err("cannot hold")),
        ("pinned packed, too many", needs(1 << 20), &TODAY, Some(Family::Packed), Err("cannot hold")),
        ("pinned banked, too many", needs(4096), &TODAY, Some(Family::Banked), Err("cannot hold")),
        ("pinned private, too many", needs(4096), &TODAY, Some(Family::Private), Err("cannot hold")),
        ("weighted radix", weighted(256), &TODAY, Some(Family::Radix), Err("weighted sums")),
        ("weighted banked", weighted(256), &TODAY, Some(Family::Banked), Err("weighted sums")),
        ("weighted global", weighted(256), &TODAY, Some(Family::Global), Ok(Family::Global)),
    ];
    for (case, needs, tuning, force, want) in cases {
        let got = choose_family(&needs, tuning, force, "an H100");
        match want {
            Ok(family) => assert_eq!(got.map(|(f, _)| f).ok(), Some(family), "{case}"),
            Err(words) => {
                let why = got.unwrap_err().to_string();
                assert!(why.contains(words), "{case}: {why}");
                // A family too small for the bins says on which device.
                assert!(
                    !why.contains("cannot hold") || why.ends_with("on an H100"),
                    "{why}"
                );
            }
        }
    }
}

/// sm_90 has its own constants; every other architecture the default, which never names a
/// family measured on sm_90 alone.
#[test]
fn each_architecture_has_its_tuning() {
    assert_eq!(Tuning::of((9, 0)).arch, "sm_90");
    for cc in [(7, 5), (8, 0), (8, 6), (8, 9), (10, 0), (12, 0)] {
        let t = Tuning::of(cc);
        assert_eq!(t.arch, "default", "{cc:?}");
        assert_eq!((t.bytes, t.large_bins), (Family::Shared, Family::Batched));
    }
}

#[test]
fn tuning_overrides_name_families_strictly() {
    let t = SM90
        .overridden("bytes=banked, large_bins=radix,radix_count=batched")
        .unwrap();
    assert_eq!(
        (t.bytes, t.large_bins, t.radix_count),
        (Family::Banked, Family::Radix, CountPass::Batched)
    );
    assert_eq!(SM90.overridden("").unwrap(), SM90);
    let why = SM90.overridden("bytes=global").unwrap_err();
    assert!(why.contains("shared, banked, private"), "{why}");
    assert!(SM90
        .overridden("large_bins=packed")
        .unwrap_err()
        .contains("batched, radix"));
    assert!(SM90
        .overridden("speed=max")
        .unwrap_err()
        .contains("not a choice"));
    assert!(SM90.overridden("radix_count=tile").is_err());
    assert!(SM90.overridden("interleaved=yes").unwrap().interleaved);
    assert_eq!(
        SM90.overridden("banked_blocks=1")
            .unwrap()
            .most_banked_blocks,
        1
    );
    assert!(SM90.overridden("banked_blocks=8").is_err());
    assert!(SM90
        .overridden("interleaved=1")
        .unwrap_err()
        .contains("yes or no"));
}

/// The rows of one (n, d) array are read whole rows a 16-byte load where the tuning says so, and
/// the kernel's name says it; one axis, or rows not of one array, never are.
#[test]
fn interleaved_rows_where_the_tuning_reads_them_so() {
    let axes = [
        Axis::bins(spec(Binning::Count(1024)), false),
        Axis::bins(spec(Binning::Count(1024)), false),
    ];
    let job = |interleaved| Outline {
        interleaved,
        ..outline(&axes, &[DType::F32, DType::F32], 1 << 20, false, 1 << 27)
    };
    let tuned = Tuning {
        interleaved: true,
        ..TODAY
    };
    let name = |tuning: &Tuning, interleaved| {
        super::plan(&DeviceProps::h100(), tuning, &job(interleaved), None, None)
            .unwrap()
            .kernel
            .to_string()
    };
    let plain = "count_batched_float32_u32_left_formula64_x_float32_u32_left_formula64";
    assert_eq!(name(&TODAY, true), plain);
    assert_eq!(name(&tuned, false), plain);
    assert_eq!(name(&tuned, true), format!("{plain}_interleaved"));
    let KernelId::Count { axes: ids, .. } =
        super::plan(&DeviceProps::h100(), &tuned, &job(true), None, None)
            .unwrap()
            .kernel
    else {
        panic!("a counting kernel")
    };
    assert!(ids.is_interleaved());
    assert!(KernelId::Count {
        family: Family::Radix,
        weighted: false,
        axes: ids
    }
    .defines()
    .contains(&"-DINTERLEAVED=1".to_string()));
    // One axis is never read so.
    assert!(!AxisKernels::one(DType::F32, ids.as_slice()[0].rule)
        .interleaved(true)
        .is_interleaved());
}

/// A 1-D uint8 job of `rows` rows into 256 equal bins over (0, 256): counted by value.
fn bytes_plan(tuning: &Tuning, rows: u64) -> Plan {
    let spec = BinSpec::resolve(
        &Binning::Count(256),
        Some(Range::new(0.0, 256.0)),
        Closed::Left,
        ValueKind::Integer,
        || Ok(Extremes::Empty),
    )
    .unwrap();
    let axes = [Axis::bins(spec, false)];
    super::plan(
        &DeviceProps::h100(),
        tuning,
        &outline(&axes, &[DType::U8], 256, false, rows),
        None,
        None,
    )
    .unwrap()
}

#[test]
fn bytes_counted_by_value_take_the_tuned_family() {
    let today = bytes_plan(&TODAY, 1 << 30);
    assert!(today.fold.is_some());
    assert_eq!(
        (today.family, today.kernel.to_string()),
        (Family::Shared, "count_shared_uint8_index_left".to_string())
    );
    // Banked: 257 bins of 32 lanes, 32,896 bytes a replica; four blocks of 512 an SM, one
    // replica each.
    let banked = bytes_plan(
        &Tuning {
            bytes: Family::Banked,
            ..TODAY
        },
        1 << 30,
    );
    assert_eq!(
        (
            banked.family,
            banked.block,
            banked.grid,
            banked.replicas,
            banked.shared_bytes
        ),
        (Family::Banked, 512, 4 * 132, 1, 32_896)
    );
    assert!(banked.to_string().contains("counters a lane"), "{banked}");
    // One block of 1,024 threads an SM: seven replicas, four or five warps each.
    let wide = bytes_plan(
        &Tuning {
            bytes: Family::Banked,
            most_banked_blocks: 1,
            ..TODAY
        },
        1 << 30,
    );
    assert_eq!(
        (wide.block, wide.grid, wide.replicas, wide.shared_bytes),
        (1024, 132, 7, 7 * 32_896)
    );
    // Private: the totals (1,040 bytes) and as many groups of four warps as fit one block of
    // the optin (7: 896 threads), one block an SM.
    let private = bytes_plan(
        &Tuning {
            bytes: Family::Private,
            ..TODAY
        },
        1 << 30,
    );
    assert_eq!(
        (
            private.family,
            private.block,
            private.grid,
            private.shared_bytes
        ),
        (Family::Private, 896, 132, 1040 + 7 * 32_896)
    );
    assert!(private.shared_bytes <= DeviceProps::h100().shared_per_block_optin);
    assert_eq!(private.kernel.to_string(), "count_private_uint8_index_left");
    assert!(
        private.to_string().contains("8-bit counters a thread"),
        "{private}"
    );
}

#[test]
fn large_bins_take_the_tuned_partition_family() {
    let radix = Tuning {
        large_bins: Family::Radix,
        ..TODAY
    };
    let s = spec(Binning::Count(1 << 20));
    let axes = [Axis::bins(s.clone(), false)];
    let p = super::plan(
        &DeviceProps::h100(),
        &radix,
        &outline(&axes, &[DType::F32], 1 << 20, false, 1 << 29),
        None,
        None,
    )
    .unwrap();
    assert_eq!(p.family, Family::Radix);
    assert_eq!(
        p.kernel.to_string(),
        "count_radix_float32_u32_left_formula64"
    );
    let seg = p.segments.as_ref().unwrap();
    assert_eq!((seg.partitions, seg.count), (32, CountPass::Paired));
    assert_eq!(seg.count.kernel(), KernelId::SegCountPaired);
    // 32 + 33 counters (rounded up to 36), a tile's bins and keys: two blocks an SM.
    assert_eq!(p.shared_bytes, 4 * (32 + 36 + 16384 * 3 / 2));
    assert_eq!((p.grid, p.block), (2 * 132, 512));
    assert!(p.to_string().contains("two long runs at a time"), "{p}");
    assert!(p.to_string().contains("high bits"), "{p}");
    // Pinned, whatever the tuning; its count pass as the tuning says.
    let pinned = plan(
        &DeviceProps::h100(),
        &s,
        false,
        1 << 29,
        Some(Family::Radix),
    )
    .unwrap();
    assert_eq!(pinned.segments.unwrap().count, CountPass::Paired);
}

/// The host sizes the banked and private families' shared memory from these formulas.
#[test]
fn banked_and_private_sizes_match_the_kernels() {
    let cuh = include_str!("../../kernels/counters.cuh");
    assert!(cuh.contains(&format!(
        "constexpr unsigned int PRIVATE_GROUP_THREADS = {PRIVATE_GROUP_THREADS};"
    )));
    assert!(cuh.contains("return (n + 1 + 3) / 4 * 16;"));
    assert_eq!(cuh.matches("return (n + 1) * 128;").count(), 2);
    let n = needs(256);
    assert_eq!(n.private(), (1040, 257 * 128));
    assert_eq!(n.banked(), 257 * 128);
    let radix = include_str!("../../kernels/radix.cuh");
    assert!(radix
        .contains("return 32 + (partitions + 1 + 3) / 4 * 4 + SEG_TILE_ROWS + SEG_TILE_ROWS / 2;"));
}
