//! Embeds the CUDA kernels' fingerprint: NVRTC results are cached on disk under this key.

use std::fs;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=kernels");
    let mut files: Vec<_> = fs::read_dir("kernels")
        .expect("the kernels/ folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("cu" | "cuh")))
        .collect();
    files.sort();
    // FNV-1a over names and contents: stable across builds and platforms, no dependency.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for path in &files {
        let name = Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for byte in name.bytes().chain(fs::read(path).expect("a kernel source")) {
            hash ^= byte as u64;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=KERNELS_HASH={hash:016x}");
}
