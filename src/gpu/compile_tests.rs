//! The kernels compile with NVRTC (CI has NVRTC from PyPI, no GPU), and the disk cache trusts
//! only what it should.

use super::*;
use crate::dtype::DType;
use crate::family::Family;
use crate::gpu::kernel::{AxisKernel, AxisKernels, RuleKind, RuleVariant};
use crate::job::FlowBins;

fn rule(kind: RuleKind) -> RuleVariant {
    RuleVariant {
        kind,
        right: false,
        literal: false,
        formula: 0,
        wide: false,
        flow: FlowBins::None,
    }
}

/// Every family, rule kind and variant flag, every value type at least once, one to eight
/// axes.
fn kernels() -> Vec<KernelId> {
    let mut out = Vec::new();
    let count = |family, weighted, dtype, rule| KernelId::Count {
        family,
        weighted,
        axes: AxisKernels::one(dtype, rule),
    };
    let axis = |dtype, rule| AxisKernel { dtype, rule };
    for family in Family::ALL {
        out.push(count(family, false, DType::F32, rule(RuleKind::U32)));
    }
    for family in [Family::Shared, Family::Global] {
        out.push(count(family, true, DType::F64, rule(RuleKind::Edges)));
    }
    let variants = [
        RuleVariant {
            right: true,
            ..rule(RuleKind::U64)
        },
        RuleVariant {
            literal: true,
            wide: true,
            ..rule(RuleKind::U32)
        },
        RuleVariant {
            literal: true,
            formula: 1,
            ..rule(RuleKind::U64)
        },
        RuleVariant {
            formula: 2,
            ..rule(RuleKind::U32)
        },
        RuleVariant {
            flow: FlowBins::Outside,
            right: true,
            ..rule(RuleKind::Edges)
        },
        // A Histogram's flow from GPU memory: NaN in a bin of its own.
        RuleVariant {
            flow: FlowBins::OutsideAndNan,
            formula: 2,
            ..rule(RuleKind::U32)
        },
    ];
    for v in variants {
        out.push(count(Family::Global, false, DType::F32, v));
    }
    let int_flow = RuleVariant {
        flow: FlowBins::OutsideAndNan,
        ..rule(RuleKind::Integers)
    };
    out.push(count(Family::Shared, true, DType::I32, int_flow));
    for dtype in DType::ALL {
        out.push(count(Family::Shared, false, dtype, rule(RuleKind::U64)));
        out.push(KernelId::Extremes { dtype });
    }
    // n-D: columns of several types, each with its own rule (by=: a key table or group ids).
    let mixed = [
        axis(DType::I8, rule(RuleKind::U64)),
        axis(
            DType::U16,
            RuleVariant {
                flow: FlowBins::Outside,
                ..rule(RuleKind::Edges)
            },
        ),
        axis(
            DType::F32,
            RuleVariant {
                formula: 2,
                ..rule(RuleKind::U32)
            },
        ),
    ];
    for family in Family::ALL {
        out.push(KernelId::Count {
            family,
            weighted: false,
            axes: AxisKernels::new(&mixed),
        });
    }
    out.push(KernelId::Count {
        family: Family::Shared,
        weighted: true,
        axes: AxisKernels::new(&[
            axis(DType::I64, rule(RuleKind::Table)),
            axis(DType::F64, rule(RuleKind::U64)),
        ]),
    });
    out.push(KernelId::Count {
        family: Family::Global,
        weighted: false,
        axes: AxisKernels::new(&[axis(DType::F64, rule(RuleKind::U64)); 8]),
    });
    // The rows of one (n, d) array, whole rows a 16-byte load: float32 pairs in every family,
    // weighted, float64 pairs, uint8 rows of 8 and int16 rows of 4 with explicit edges.
    let pairs = AxisKernels::new(&[axis(DType::F32, rule(RuleKind::U32)); 2]).interleaved(true);
    for family in Family::ALL {
        out.push(KernelId::Count {
            family,
            weighted: false,
            axes: pairs,
        });
    }
    out.push(KernelId::Count {
        family: Family::Shared,
        weighted: true,
        axes: pairs,
    });
    for axes in [
        AxisKernels::new(&[axis(DType::F64, rule(RuleKind::U64)); 2]),
        AxisKernels::new(&[axis(DType::U8, rule(RuleKind::U64)); 8]),
        AxisKernels::new(&[axis(DType::I16, rule(RuleKind::Edges)); 4]),
    ] {
        out.push(KernelId::Count {
            family: Family::Radix,
            weighted: false,
            axes: axes.interleaved(true),
        });
    }
    out.push(count(
        Family::Segmented,
        false,
        DType::U32,
        rule(RuleKind::Index),
    ));
    // Integer edges compared exactly: every integer type (UInt64 keys itself, the rest widen to
    // Int64), staged (shared) and read from global memory, both sides closed, with flow bins.
    for dtype in [
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
    ] {
        out.push(count(
            Family::Shared,
            false,
            dtype,
            rule(RuleKind::Integers),
        ));
    }
    for family in Family::ALL.into_iter().filter(|&f| f != Family::Shared) {
        let v = RuleVariant {
            right: true,
            flow: FlowBins::Outside,
            ..rule(RuleKind::Integers)
        };
        out.push(count(family, false, DType::U64, v));
    }
    out.push(KernelId::Count {
        family: Family::Shared,
        weighted: true,
        axes: AxisKernels::new(&[
            axis(
                DType::I64,
                RuleVariant {
                    flow: FlowBins::Outside,
                    ..rule(RuleKind::Integers)
                },
            ),
            axis(DType::U64, rule(RuleKind::Integers)),
        ]),
    });
    // Counting by value: each narrow integer type, then the fold.
    for dtype in [DType::I8, DType::U8, DType::I16, DType::U16] {
        out.push(count(Family::Shared, false, dtype, rule(RuleKind::Index)));
        out.push(count(Family::Packed, false, dtype, rule(RuleKind::Index)));
        out.push(count(Family::Spill, false, dtype, rule(RuleKind::Index)));
        out.push(count(Family::Private, false, dtype, rule(RuleKind::Index)));
        out.push(count(Family::Banked, false, dtype, rule(RuleKind::Index)));
    }
    out.push(KernelId::Fold);
    out.push(KernelId::Magnitudes);
    out.push(KernelId::FixedSums);
    out.push(KernelId::SegScan);
    out.push(KernelId::SegCount);
    out.push(KernelId::SegCountBatched);
    out.push(KernelId::SegCountPaired);
    out.push(KernelId::Edges { dtype: DType::F32 });
    out.push(KernelId::Edges { dtype: DType::F64 });
    out.push(KernelId::Proof { dtype: DType::F32 });
    out.push(KernelId::Proof { dtype: DType::F64 });
    out
}

/// CI installs NVRTC from PyPI and sets PGH_REQUIRE_NVRTC=1, so a kernel that does not compile
/// fails there; elsewhere the test is skipped when no NVRTC is found.
#[test]
fn every_kind_of_kernel_compiles_for_ampere_and_hopper() {
    if !nvrtc_present() {
        assert!(
            std::env::var_os("PGH_REQUIRE_NVRTC").is_none(),
            "PGH_REQUIRE_NVRTC is set but libnvrtc was not found on the library path"
        );
        eprintln!("skipped: no NVRTC here");
        return;
    }
    let jobs: Vec<(KernelId, u32)> = [80, 90]
        .into_iter()
        .flat_map(|arch| kernels().into_iter().map(move |k| (k, arch)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&(id, arch)) =
                    jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let out = compile(&id, arch, false).unwrap();
                    assert!(
                        out.starts_with(b"\x7fELF"),
                        "{id} sm_{arch}: not an ELF cubin"
                    );
                }
            });
        }
    });
    // The module names its one entry point as the host calls it.
    let ptx = compile(&kernels()[0], 90, true).unwrap();
    assert!(String::from_utf8_lossy(&ptx).contains(".entry count("));
}

/// The weighted families of both ways of summing (`crate::fixed::Sums`): the float sums a
/// process uses by default (the bundle's) and the fixed point `POLARS_GPU_HIST_SUMS=fixed` picks
/// (compiled on first use), one of which the process-wide choice keeps out of [`kernels`].
#[test]
fn weighted_kernels_compile_in_fixed_point_and_float_sums() {
    if !nvrtc_present() {
        assert!(std::env::var_os("PGH_REQUIRE_NVRTC").is_none());
        return;
    }
    for family in [Family::Shared, Family::Global] {
        let id = KernelId::Count {
            family,
            weighted: true,
            axes: AxisKernels::one(DType::F32, rule(RuleKind::U32)),
        };
        for float in [false, true] {
            let mut defines: Vec<String> = id
                .defines()
                .into_iter()
                .filter(|d| !d.starts_with("-DFLOAT_SUMS"))
                .collect();
            if float {
                defines.push("-DFLOAT_SUMS=1".into());
            }
            for arch in [80, 90] {
                let out = compile_with(&id, defines.clone(), arch, false).unwrap();
                assert!(out.starts_with(b"\x7fELF"), "{id} float={float} sm_{arch}");
            }
        }
    }
}

/// No counting kernel reads its parameters through an address held in a register, nor copies
/// them to local memory: NVRTC 13.5 compiled such a late load (of an edge array's address past
/// the parameters' first 256 bytes) into a read of null on an H100 with a 13.0 driver.
#[test]
fn counting_kernels_read_their_parameters_at_fixed_offsets() {
    if !nvrtc_present() {
        return;
    }
    // Every shipped kernel (the bundle's) and every kind above.
    let jobs: Vec<KernelId> = kernels()
        .into_iter()
        .chain(crate::gpu::bundle_kernels::common_kernels())
        .filter(|k| !k.axes().is_empty())
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(id) =
                    jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let ptx = String::from_utf8(compile(id, 90, true).unwrap()).unwrap();
                    let through_register = ptx
                        .lines()
                        .filter(|l| l.contains("ld.param") && l.contains("[%r"))
                        .collect::<Vec<_>>();
                    assert!(through_register.is_empty(), "{id}: {through_register:?}");
                    assert!(
                        !ptx.contains(".local"),
                        "{id} copies its parameters to local memory"
                    );
                }
            });
        }
    });
}

#[test]
fn entries_round_trip_and_damaged_ones_are_refused() {
    let dir = std::env::temp_dir().join(format!("pgh-cache-test-{}", std::process::id()));
    fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    let payload = b"\x7fELF a cubin".to_vec();
    write_entry(&dir, "k.cubin", &payload).unwrap();
    assert_eq!(read_entry(&dir.join("k.cubin")), Some(payload.clone()));
    // A torn or altered entry is not loaded.
    let mut bytes = fs::read(dir.join("k.cubin")).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    fs::write(dir.join("k.cubin"), &bytes).unwrap();
    assert_eq!(read_entry(&dir.join("k.cubin")), None);
    fs::write(dir.join("short.cubin"), b"PGHCUBN1").unwrap();
    assert_eq!(read_entry(&dir.join("short.cubin")), None);
    // Nor one reached through a symbolic link.
    write_entry(&dir, "real.cubin", &payload).unwrap();
    std::os::unix::fs::symlink(dir.join("real.cubin"), dir.join("link.cubin")).unwrap();
    assert_eq!(read_entry(&dir.join("link.cubin")), None);
    // Writing never follows a link planted at the final name: the rename replaces the link.
    let victim = dir.join("victim");
    fs::write(&victim, b"keep").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("planted.cubin")).unwrap();
    write_entry(&dir, "planted.cubin", &payload).unwrap();
    assert_eq!(fs::read(&victim).unwrap(), b"keep");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cache_others_can_write_is_not_used() {
    let dir = std::env::temp_dir().join(format!("pgh-open-cache-{}", std::process::id()));
    fs::DirBuilder::new().mode(0o777).create(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    // The directory a call's settings name, as the environment would give it.
    let settings = crate::gpu::Settings::from_vars(|name| {
        (name == crate::gpu::settings::CACHE_ENV).then(|| dir.clone().into_os_string())
    });
    let status = cache_status(settings.kernel_cache.as_deref());
    assert!(status.unwrap_err().contains("can be written by others"));
    assert!(cache_status(None).unwrap_err().contains("no HOME"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cache_of_ours_readable_by_others_is_made_private() {
    let dir = std::env::temp_dir().join(format!("pgh-readable-cache-{}", std::process::id()));
    fs::DirBuilder::new().mode(0o755).create(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    private_dir(&dir, me).unwrap();
    let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cache_of_another_user_is_not_used_nor_changed() {
    let dir = std::env::temp_dir().join(format!("pgh-foreign-cache-{}", std::process::id()));
    fs::DirBuilder::new().mode(0o755).create(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let someone_else = unsafe { libc::geteuid() } + 1;
    let why = private_dir(&dir, someone_else).unwrap_err();
    assert!(why.contains("belongs to another user"), "{why}");
    let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755, "a directory not ours is left as it is");
    // Nor is a link to a directory, even one of ours.
    let link = dir.with_extension("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    // SAFETY: geteuid has no preconditions.
    let why = private_dir(&link, unsafe { libc::geteuid() }).unwrap_err();
    assert!(why.contains("not a directory"), "{why}");
    fs::remove_file(&link).unwrap();
    fs::remove_dir_all(&dir).unwrap();
}
