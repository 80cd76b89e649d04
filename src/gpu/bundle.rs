//! Kernels compiled ahead of time: a bundle of CUBINs, built when a wheel is built (NVRTC runs
//! without a GPU) for the architectures a wheel serves, and shipped beside the native module,
//! so that the first call on those GPUs compiles nothing. A bundle holds the kernels of one
//! kernel source (its hash): a bundle of other sources is ignored, never loaded; so is a bundle
//! built by an NVRTC newer than the driver (its CUBINs may rely on what that driver lacks).
//!
//! Format: `PGHBNDL2`, the kernels' hash (16 hex bytes), the CUDA version of the NVRTC that
//! built it (u32, 1000 major + 10 minor, as the driver reports its own), the entry count (u32),
//! then per entry the name's length (u16), the name (`<kernel>-sm<arch>`), the payload's length
//! (u32) and FNV-1a checksum (u64), and the payload.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use crate::dtype::DType;
use crate::error::{HistError, HistResult};
use crate::gpu::compile::{self, checksum, KERNELS_HASH};
use crate::gpu::kernel::{AxisKernel, AxisKernels, Family, KernelId, RuleKind, RuleVariant};

const MAGIC: &[u8; 8] = b"PGHBNDL2";

/// Compiled images by entry name (`<kernel>-sm<arch>`), and the CUDA version that built them.
struct Images {
    built_by: u32,
    by_name: HashMap<String, Vec<u8>>,
}

/// The bundle in use, once one is set.
static BUNDLE: OnceLock<Mutex<Option<Images>>> = OnceLock::new();

fn bundle() -> &'static Mutex<Option<Images>> {
    BUNDLE.get_or_init(|| Mutex::new(None))
}

fn entry_name(id: &KernelId, arch: u32) -> String {
    format!("{id}-sm{arch}")
}

/// Reads the bundle at `path`; returns how many kernels it holds for these kernel sources (0
/// when it was built from others, which are ignored).
pub fn load(path: &Path) -> HistResult<usize> {
    let bytes = std::fs::read(path)
        .map_err(|e| HistError::Gpu(format!("cannot read {}: {e}", path.display())))?;
    let entries = parse(&bytes).ok_or_else(|| {
        HistError::Gpu(format!(
            "{} is not a kernel bundle of this version",
            path.display()
        ))
    })?;
    let count = entries.by_name.len();
    *bundle().lock().unwrap_or_else(|p| p.into_inner()) = Some(entries);
    Ok(count)
}

fn parse(bytes: &[u8]) -> Option<Images> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = bytes.get(at..at + n)?;
        at += n;
        Some(s)
    };
    if take(8)? != MAGIC {
        return None;
    }
    if take(16)? != KERNELS_HASH.as_bytes() {
        return Some(Images {
            built_by: 0,
            by_name: HashMap::new(),
        });
    }
    let built_by = u32::from_le_bytes(take(4)?.try_into().ok()?);
    let count = u32::from_le_bytes(take(4)?.try_into().ok()?);
    let mut by_name = HashMap::new();
    for _ in 0..count {
        let name_len = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
        let name = String::from_utf8(take(name_len)?.to_vec()).ok()?;
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        let sum = u64::from_le_bytes(take(8)?.try_into().ok()?);
        let payload = take(len)?;
        if checksum(payload) != sum {
            return None;
        }
        by_name.insert(name, payload.to_vec());
    }
    Some(Images { built_by, by_name })
}

/// The prebuilt CUBIN of `id` for `sm_{arch}`, if the bundle has it and was built by an NVRTC
/// no newer than the driver (`driver`: its CUDA version, 1000 major + 10 minor).
pub fn find(id: &KernelId, arch: u32, driver: u32) -> Option<Vec<u8>> {
    let guard = bundle().lock().unwrap_or_else(|p| p.into_inner());
    let images = guard.as_ref().filter(|b| b.built_by <= driver)?;
    images.by_name.get(&entry_name(id, arch)).cloned()
}

/// The kernels a bundle holds: what plans choose for every column type with numpy's and
/// Polars' equal bins and explicit edges, counted or weighted, the automatic range, and the
/// common n-D (two float axes) and `by=` (an integer key beside a float column) jobs; variants
/// plans seldom need (numpy's literal rule, flow bins, more axes)
/// compile on first use.
pub fn common_kernels() -> Vec<KernelId> {
    use Family::{Batched, Global, Packed, Segmented, Shared, Spill};
    let rule = |kind, right, formula, literal, wide| RuleVariant {
        kind,
        right,
        literal,
        formula,
        wide,
        flow: false,
    };
    let one = |family, weighted, dtype, rule| KernelId::Count {
        family,
        weighted,
        axes: AxisKernels::one(dtype, rule),
    };
    // Both segmented families and both 16-bit ones: the batched and spill families chosen,
    // the segmented and packed ones for comparison.
    let mut out = vec![
        KernelId::SegScan,
        KernelId::SegCount,
        KernelId::SegCountBatched,
    ];
    for dtype in [DType::F32, DType::F64] {
        out.push(KernelId::Edges { dtype });
        out.push(KernelId::Proof { dtype });
    }
    for dtype in DType::ALL {
        out.push(KernelId::Extremes { dtype });
        // numpy's equal bins: float32 data from its own range (float32 edges, formula 2) or a
        // range of Python floats (float64 edges, a float64 estimate), other data in float64.
        let numpy = match dtype {
            DType::F32 => vec![(RuleKind::U32, 2), (RuleKind::U32, 1)],
            _ => vec![(RuleKind::U64, 1)],
        };
        for (kind, formula) in numpy {
            for family in [Shared, Packed, Spill, Segmented, Batched, Global] {
                out.push(one(
                    family,
                    false,
                    dtype,
                    rule(kind, false, formula, false, false),
                ));
            }
            out.push(one(
                Shared,
                true,
                dtype,
                rule(kind, false, formula, false, false),
            ));
        }
        // Polars' equal bins (closed right) are float64 for every column type.
        let polars = rule(RuleKind::U64, true, 1, false, false);
        for family in [Shared, Packed, Spill, Segmented, Batched, Global] {
            out.push(one(family, false, dtype, polars));
        }
        out.push(one(Shared, true, dtype, polars));
        for right in [false, true] {
            out.push(one(
                Shared,
                false,
                dtype,
                rule(RuleKind::Edges, right, 0, false, false),
            ));
            // Integer edges past 2^53, compared exactly: Int64, Datetime and Duration columns.
            if dtype == DType::I64 {
                out.push(one(
                    Shared,
                    false,
                    dtype,
                    rule(RuleKind::Integers, right, 0, false, false),
                ));
            }
        }
    }
    // Narrow integer columns counted by value (`job::ByValue`): 256 counters in the shared
    // family, 65,536 as 16-bit counters in the spill one (or the packed one), then the fold.
    for dtype in [DType::I8, DType::U8, DType::I16, DType::U16] {
        for family in [Shared, Packed, Spill] {
            out.push(one(
                family,
                false,
                dtype,
                rule(RuleKind::Index, false, 0, false, false),
            ));
        }
    }
    out.push(KernelId::Fold);
    // numpy.histogramdd of two float columns: equal bins from the data (the sample's own type)
    // or a range of Python floats (float64 edges), the edge bin found by the cheap rule.
    for (dtype, equal) in [
        (DType::F32, vec![(RuleKind::U32, 2), (RuleKind::U64, 1)]),
        (DType::F64, vec![(RuleKind::U64, 1)]),
    ] {
        let mut pairs: Vec<RuleVariant> = equal
            .into_iter()
            .map(|(kind, formula)| rule(kind, false, formula, false, false))
            .collect();
        pairs.push(rule(RuleKind::Edges, false, 0, false, false));
        for r in pairs {
            let axes = AxisKernels::new(&[AxisKernel { dtype, rule: r }; 2]);
            for family in [Shared, Packed, Spill, Segmented, Batched, Global] {
                out.push(KernelId::Count {
                    family,
                    weighted: false,
                    axes,
                });
            }
            for family in [Shared, Global] {
                out.push(KernelId::Count {
                    family,
                    weighted: true,
                    axes,
                });
            }
        }
    }
    // by=: integer keys through a table, which travel as UInt16 or UInt32 offsets (or group
    // ids), beside a float column with numpy's bins over a range of Python floats.
    let keys = [
        AxisKernel {
            dtype: DType::U16,
            rule: rule(RuleKind::Table, false, 0, false, false),
        },
        AxisKernel {
            dtype: DType::U32,
            rule: rule(RuleKind::Table, false, 0, false, false),
        },
        AxisKernel {
            dtype: DType::U32,
            rule: rule(RuleKind::Index, false, 0, false, false),
        },
    ];
    let values = [
        AxisKernel {
            dtype: DType::F32,
            rule: rule(RuleKind::U32, false, 1, false, false),
        },
        AxisKernel {
            dtype: DType::F64,
            rule: rule(RuleKind::U64, false, 1, false, false),
        },
    ];
    for key in keys {
        for value in values {
            for family in [Shared, Packed, Spill, Segmented, Batched] {
                out.push(KernelId::Count {
                    family,
                    weighted: false,
                    axes: AxisKernels::new(&[key, value]),
                });
            }
        }
    }
    out
}

/// Compiles `kernels` for each of `archs` with NVRTC, on `threads` threads, into a bundle at
/// `path`. Returns the number of kernels written.
pub fn build(
    path: &Path,
    archs: &[u32],
    kernels: &[KernelId],
    threads: usize,
) -> HistResult<usize> {
    let jobs: Vec<(KernelId, u32)> = archs
        .iter()
        .flat_map(|&arch| kernels.iter().map(move |&k| (k, arch)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(jobs.len()));
    let failure = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                while let Some(&(id, arch)) =
                    jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    match compile::compile(&id, arch, false) {
                        Ok(cubin) => results
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((entry_name(&id, arch), cubin)),
                        Err(e) => {
                            *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut entries = results.into_inner().unwrap_or_else(|p| p.into_inner());
    entries.sort();
    let (major, minor) = compile::nvrtc_version()?;
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(KERNELS_HASH.as_bytes());
    out.extend_from_slice(&((major * 1000 + minor * 10) as u32).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for (name, payload) in &entries {
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&checksum(payload).to_le_bytes());
        out.extend_from_slice(payload);
    }
    std::fs::write(path, out)
        .map_err(|e| HistError::Gpu(format!("cannot write {}: {e}", path.display())))?;
    Ok(entries.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_round_trips_and_a_foreign_one_is_ignored() {
        let dir = std::env::temp_dir().join(format!("pgh-bundle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.bundle");
        // Built by hand: the build path needs NVRTC, which the compile test covers.
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(KERNELS_HASH.as_bytes());
        bytes.extend_from_slice(&13050u32.to_le_bytes());
        bytes.extend_from_slice(&1u32.to_le_bytes());
        let name = entry_name(&KernelId::SegScan, 90);
        bytes.extend_from_slice(&(name.len() as u16).to_le_bytes());
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&checksum(b"abc").to_le_bytes());
        bytes.extend_from_slice(b"abc");
        let parsed = parse(&bytes).unwrap();
        assert_eq!(parsed.by_name[&name], b"abc");
        assert_eq!(parsed.built_by, 13050);
        let mut foreign = bytes.clone();
        foreign[8] ^= 1;
        assert!(parse(&foreign).unwrap().by_name.is_empty());
        let mut torn = bytes.clone();
        torn.pop();
        assert!(parse(&torn).is_none());
        std::fs::write(&path, &bytes).unwrap();
        load(&path).unwrap();
        // Built by NVRTC 13.5: used under a 13.5 driver, not under a 13.0 one.
        assert_eq!(
            find(&KernelId::SegScan, 90, 13050).as_deref(),
            Some(&b"abc"[..])
        );
        assert_eq!(find(&KernelId::SegScan, 90, 13000), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_common_kernels_are_distinct() {
        let all = common_kernels();
        let unique: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
    }
}
