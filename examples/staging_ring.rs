//! Where the staging ring's time goes, on a GPU host: 128 MiB of pageable host memory to the
//! device through `transfer::upload` (staged, pageable, page-locked in place) beside the DMA
//! engine alone, then the same turn loop written out here with the time of its parts (the
//! threads' copies into pinned memory, the waits for a free slot, queueing the copy), for turns of
//! 4 to 32 MiB, constant or doubling from a small first one.
//!
//! Usage: cargo run --release --example staging_ring (needs a GPU).

use std::time::Instant;

use cudarc::driver::{DevicePtrMut, DriverError};
use polars_gpu_hist::gpu::{self, transfer, transfer::Transfer};
use rayon::prelude::*;

const LEN: usize = 128 << 20;
const PIECE: usize = 256 << 10;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = gpu::get()?;
    let stream = gpu.stream_after_default()?;
    stream.context().bind_to_thread()?;
    let src: Vec<u8> = (0..LEN).map(|i| i as u8).collect();
    let mut dst = stream.alloc_zeros::<u8>(LEN)?;
    println!(
        "{} threads, {} MiB",
        rayon::current_num_threads(),
        LEN >> 20
    );
    for how in [Transfer::Staged, Transfer::Pageable, Transfer::Registered] {
        let mut times = Vec::new();
        for _ in 0..9 {
            let start = Instant::now();
            transfer::upload(gpu, &stream, &src, &mut dst, how)?;
            stream.synchronize()?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let ms = median(times);
        println!(
            "upload {how:?}: {ms:.2} ms ({:.1} GB/s)",
            LEN as f64 / ms / 1e6
        );
    }
    let staged = |label: &str,
                  dst: &mut cudarc::driver::CudaSlice<u8>|
     -> Result<(), Box<dyn std::error::Error>> {
        let mut times = Vec::new();
        for _ in 0..9 {
            let start = Instant::now();
            transfer::upload(gpu, &stream, &src, dst, Transfer::Staged)?;
            stream.synchronize()?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        println!("upload Staged ({label}): {:.2} ms", median(times));
        Ok(())
    };
    staged("again", &mut dst)?;
    // Turn sizes from `first`, doubling up to `steady`.
    let schedule = |first: usize, steady: usize| {
        let mut turns = Vec::new();
        let (mut at, mut turn) = (0, first);
        while at < LEN {
            turns.push(turn.min(LEN - at));
            at += turn;
            turn = (2 * turn).min(steady);
        }
        turns
    };
    let variants = [
        ("3 x 4 MiB", 3, schedule(4 << 20, 4 << 20), PIECE),
        ("3 x 8 MiB", 3, schedule(8 << 20, 8 << 20), PIECE),
        (
            "3 x 8 MiB, 512 KiB pieces",
            3,
            schedule(8 << 20, 8 << 20),
            2 * PIECE,
        ),
        ("3 x 16 MiB", 3, schedule(16 << 20, 16 << 20), PIECE),
        (
            "3 x 16 MiB, 1 MiB pieces",
            3,
            schedule(16 << 20, 16 << 20),
            4 * PIECE,
        ),
        ("4 x 16 MiB", 4, schedule(16 << 20, 16 << 20), PIECE),
        ("3 x 32 MiB", 3, schedule(32 << 20, 32 << 20), PIECE),
        (
            "3, 2 MiB doubling to 16",
            3,
            schedule(2 << 20, 16 << 20),
            PIECE,
        ),
        (
            "3, 4 MiB doubling to 16",
            3,
            schedule(4 << 20, 16 << 20),
            PIECE,
        ),
        (
            "3, 4 MiB doubling to 32",
            3,
            schedule(4 << 20, 32 << 20),
            PIECE,
        ),
    ];
    for (label, depth, turns, piece) in variants {
        let biggest = *turns.iter().max().expect("a turn");
        let slots: Vec<*mut u8> = (0..depth)
            .map(|_| {
                unsafe { cudarc::driver::result::malloc_host(biggest, 0) }.map(|p| p as *mut u8)
            })
            .collect::<Result<_, DriverError>>()?;
        let mut parts = Vec::new();
        for _ in 0..9 {
            let (mut make, mut wait, mut queue) = (0.0, 0.0, 0.0);
            let mut events: Vec<Option<cudarc::driver::CudaEvent>> =
                (0..depth).map(|_| None).collect();
            let start = Instant::now();
            let (dst_ptr, _record) = dst.device_ptr_mut(&stream);
            let mut at = 0;
            for (i, &len) in turns.iter().enumerate() {
                let k = i % depth;
                let t = Instant::now();
                if let Some(e) = events[k].take() {
                    e.synchronize()?;
                }
                wait += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let staging = unsafe { std::slice::from_raw_parts_mut(slots[k], len) };
                staging
                    .par_chunks_mut(piece)
                    .enumerate()
                    .for_each(|(p, out)| {
                        out.copy_from_slice(&src[at + p * piece..at + p * piece + out.len()])
                    });
                make += t.elapsed().as_secs_f64();
                let t = Instant::now();
                unsafe {
                    cudarc::driver::result::memcpy_htod_async(
                        dst_ptr + at as u64,
                        &staging[..],
                        stream.cu_stream(),
                    )
                }?;
                events[k] = Some(stream.record_event(None)?);
                queue += t.elapsed().as_secs_f64();
                at += len;
            }
            stream.synchronize()?;
            let total = start.elapsed().as_secs_f64();
            parts.push([total * 1e3, make * 1e3, wait * 1e3, queue * 1e3]);
        }
        parts.sort_by(|a, b| a[0].total_cmp(&b[0]));
        let [total, make, wait, queue] = parts[parts.len() / 2];
        println!(
            "ring {label}: {total:.2} ms ({:.1} GB/s): make {make:.2}, wait {wait:.2}, queue {queue:.2}",
            LEN as f64 / total / 1e6
        );
        for p in slots {
            unsafe { cudarc::driver::result::free_host(p as _) }?;
        }
    }
    staged("last", &mut dst)?;
    Ok(())
}
