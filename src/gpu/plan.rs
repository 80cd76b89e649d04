//! Which kernel runs, on what grid, with how much shared memory: one plain, printable value
//! computed from the device's properties, the bins and the input. No CUDA needed here.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::bins::{BinSpec, Closed};
use crate::error::{HistError, HistResult};

/// What the plan needs to know of a device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceProps {
    pub name: String,
    pub compute_capability: (u32, u32),
    pub sm_count: u32,
    /// Largest dynamic shared memory one block may opt into.
    pub shared_per_block_optin: u32,
    pub shared_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub l2_bytes: u32,
    pub total_memory: u64,
    /// Whether kernels may read pageable host memory directly (HMM/ATS systems such as Grace
    /// Hopper); PCIe hosts report false and a column must be copied.
    pub pageable_memory_access: bool,
}

impl DeviceProps {
    /// An H100 SXM as the driver reports it: for tests and for `explain` without a GPU.
    pub fn h100() -> Self {
        DeviceProps {
            name: "NVIDIA H100 80GB HBM3 (assumed)".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            shared_per_block_optin: 232_448,
            shared_per_sm: 233_472,
            max_threads_per_sm: 2048,
            l2_bytes: 52_428_800,
            total_memory: 85_029_158_912,
            pageable_memory_access: false,
        }
    }
}

/// A kernel family (see `kernels/histogram.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Per-block histograms in shared memory, replicated per warp group, merged to global.
    Shared,
    /// Warp-aggregated atomics straight into the global histogram.
    Global,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Shared => "shared",
            Family::Global => "global",
        }
    }
}

/// How a value becomes a bin on the device: the three rule kinds of [`BinSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    Uniform32,
    Uniform64,
    Edges,
}

impl RuleKind {
    pub fn of(spec: &BinSpec) -> Self {
        match spec {
            BinSpec::Uniform32(_) => RuleKind::Uniform32,
            BinSpec::Uniform64(_) => RuleKind::Uniform64,
            BinSpec::Edges(_) => RuleKind::Edges,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            RuleKind::Uniform32 => "u32",
            RuleKind::Uniform64 => "u64",
            RuleKind::Edges => "edges",
        }
    }
}

/// Threads per block: 16 warps, so 4 blocks fill an SM of 2048 threads; a histogram so large
/// that only one block fits per SM gets 1024 threads instead, to keep more loads in flight.
pub const BLOCK_THREADS: u32 = 512;
const BIG_BLOCK_THREADS: u32 = 1024;
/// A block's u32 counters must not wrap: each launch gives a block fewer rows than this.
pub const MAX_ROWS_PER_BLOCK: u64 = 1 << 31;

/// The launch of one histogram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub kernel: String,
    pub family: Family,
    pub bins: usize,
    pub rows: u64,
    pub grid: u32,
    pub block: u32,
    /// Copies of the histogram per block (shared family), each `stride` counters apart.
    pub replicas: u32,
    pub stride: u32,
    pub shared_bytes: u32,
    /// Rows one launch may take before the block counters could wrap.
    pub rows_per_launch: u64,
    pub device: String,
    pub reason: String,
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "kernel   {} ({} family) on {}",
            self.kernel,
            self.family.name(),
            self.device
        )?;
        writeln!(f, "input    {} rows, {} bins", self.rows, self.bins)?;
        writeln!(f, "grid     {} blocks x {} threads", self.grid, self.block)?;
        if self.family == Family::Shared {
            writeln!(
                f,
                "shared   {} bytes per block: {} replica(s) of {} counters",
                self.shared_bytes, self.replicas, self.stride
            )?;
        }
        write!(f, "why      {}", self.reason)
    }
}

/// The plan for `spec` over `rows` values on `props`; `force` pins the family (benchmarks, tests).
pub fn plan(
    props: &DeviceProps,
    spec: &BinSpec,
    weighted: bool,
    rows: u64,
    force: Option<Family>,
) -> HistResult<Plan> {
    let edge_bytes: u64 = match spec {
        BinSpec::Edges(e) => (e.edges.len() as u64 * 8).div_ceil(16) * 16,
        _ => 0,
    };
    let mut plan = layout(props, spec.len(), edge_bytes, weighted, rows, force)?;
    let closed = match spec.closed() {
        Closed::Left => "left",
        Closed::Right => "right",
    };
    plan.kernel = format!(
        "hist_{}{}_{}_{}",
        plan.family.name(),
        if weighted { "_weighted" } else { "" },
        RuleKind::of(spec).suffix(),
        closed
    );
    Ok(plan)
}

/// The plan for a linearized n-D histogram of `cells` cells (`kernels/histogramdd.cuh`): the
/// same families and grid as 1-D, the per-dimension rules read from the kernel's parameters.
pub fn plan_linear(
    props: &DeviceProps,
    cells: usize,
    weighted: bool,
    rows: u64,
    force: Option<Family>,
) -> HistResult<Plan> {
    let mut plan = layout(props, cells, 0, weighted, rows, force)?;
    plan.kernel = format!(
        "histdd_{}{}",
        plan.family.name(),
        if weighted { "_weighted" } else { "" }
    );
    Ok(plan)
}

/// Family, grid, replicas and shared memory for `bins` counters (and `edge_bytes` of edges
/// staged before them); the caller names the kernel.
fn layout(
    props: &DeviceProps,
    bins: usize,
    edge_bytes: u64,
    weighted: bool,
    rows: u64,
    force: Option<Family>,
) -> HistResult<Plan> {
    let counter_bytes: u64 = if weighted { 8 } else { 4 };
    // An odd stride puts each replica's bin i in a different bank.
    let stride = (bins as u64) | 1;
    let one_copy = edge_bytes + stride * counter_bytes;
    let optin = props.shared_per_block_optin as u64;
    let fits = one_copy <= optin;

    let (family, mut reason) = match force {
        Some(Family::Shared) if !fits => {
            return Err(HistError::InvalidArgument(format!(
                "the shared-memory kernel cannot hold {bins} bins ({one_copy} bytes) in the \
                 {optin} bytes of shared memory a block may have on {}",
                props.name
            )))
        }
        Some(family) => (family, "forced by the caller".to_string()),
        None if fits => (
            Family::Shared,
            format!("{bins} bins fit in shared memory ({one_copy} of {optin} bytes a block)"),
        ),
        None => (
            Family::Global,
            format!(
                "{bins} bins ({one_copy} bytes) exceed the {optin} bytes of shared memory a \
                 block may have: warp-aggregated global atomics"
            ),
        ),
    };

    let (grid_per_sm, block, replicas, shared_bytes) = match family {
        Family::Shared => {
            // As many blocks per SM as shared memory allows (up to 4 of 512 threads), then as
            // many replicas as fit in each block's share, at most one per warp.
            let per_sm = props.shared_per_sm as u64;
            let blocks = (1..=props.max_threads_per_sm / BLOCK_THREADS)
                .rev()
                .find(|&b| one_copy * b as u64 + 1024 * b as u64 <= per_sm)
                .unwrap_or(1);
            let budget = (per_sm / blocks as u64).saturating_sub(1024).min(optin);
            let block = if blocks == 1 {
                BIG_BLOCK_THREADS
            } else {
                BLOCK_THREADS
            };
            let replicas = ((budget - edge_bytes) / (stride * counter_bytes))
                .clamp(1, BLOCK_THREADS as u64 / 32) as u32;
            let bytes = edge_bytes + replicas as u64 * stride * counter_bytes;
            reason.push_str(&format!(
                "; {blocks} block(s) per SM, {replicas} replica(s) so that one hot bin \
                 does not serialize a block"
            ));
            (blocks, block, replicas, bytes as u32)
        }
        Family::Global => (
            props.max_threads_per_sm / BLOCK_THREADS,
            BLOCK_THREADS,
            1,
            0,
        ),
    };
    let full_grid = props.sm_count * grid_per_sm;
    // Small inputs: no more blocks than 8 rows a thread can keep busy.
    let needed = rows.div_ceil(block as u64 * 8).max(1);
    let grid = (full_grid as u64).min(needed) as u32;
    Ok(Plan {
        kernel: String::new(),
        family,
        bins,
        rows,
        grid,
        block,
        replicas,
        stride: stride as u32,
        shared_bytes,
        rows_per_launch: grid as u64 * MAX_ROWS_PER_BLOCK,
        device: props.name.clone(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bins::{Bins, Extremes, ValueKind};

    fn spec(bins: Bins) -> BinSpec {
        BinSpec::resolve(
            &bins,
            Some((0.0, 1.0)).filter(|_| matches!(bins, Bins::Count(_))),
            Closed::Left,
            ValueKind::Float32,
            || Extremes::Empty,
        )
        .unwrap()
    }

    #[test]
    fn small_bins_take_shared_memory_with_replicas() {
        let p = plan(
            &DeviceProps::h100(),
            &spec(Bins::Count(256)),
            false,
            1 << 29,
            None,
        )
        .unwrap();
        assert_eq!(p.family, Family::Shared);
        assert_eq!(p.kernel, "hist_shared_u32_left");
        assert_eq!(p.grid, 132 * 4);
        assert_eq!(p.replicas, 16);
        assert_eq!(p.stride, 257);
        assert!(p.to_string().contains("fit in shared memory"));
    }

    #[test]
    fn bins_up_to_the_optin_limit_stay_in_shared_memory() {
        let p = plan(
            &DeviceProps::h100(),
            &spec(Bins::Count(50_000)),
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
    fn large_bins_go_global_and_forcing_shared_fails_clearly() {
        let s = spec(Bins::Count(1 << 20));
        let p = plan(&DeviceProps::h100(), &s, false, 1 << 29, None).unwrap();
        assert_eq!(p.family, Family::Global);
        let err = plan(
            &DeviceProps::h100(),
            &s,
            false,
            1 << 29,
            Some(Family::Shared),
        );
        assert!(err.unwrap_err().to_string().contains("cannot hold"));
    }

    #[test]
    fn weighted_edges_account_for_edges_and_doubles() {
        let edges: Vec<f64> = (0..=1000).map(|i| i as f64).collect();
        let p = plan(
            &DeviceProps::h100(),
            &spec(Bins::Edges(edges)),
            true,
            1 << 20,
            None,
        )
        .unwrap();
        assert_eq!(p.kernel, "hist_shared_weighted_edges_left");
        assert!(p.shared_bytes as u64 >= 1001 * 8 + 1001 * 8);
    }

    #[test]
    fn small_inputs_get_a_small_grid() {
        let p = plan(
            &DeviceProps::h100(),
            &spec(Bins::Count(16)),
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
        let p = plan(&a100, &spec(Bins::Count(45_000)), false, 1 << 29, None).unwrap();
        assert_eq!(p.family, Family::Global);
        let p = plan(&a100, &spec(Bins::Count(40_000)), false, 1 << 29, None).unwrap();
        assert_eq!(p.family, Family::Shared);
    }
}
