use super::*;
use crate::gpu::bundle_kernels::common_kernels;

fn key(format: Format, arch: u32, built_by: u32) -> SectionKey {
    SectionKey {
        format,
        arch,
        built_by,
    }
}

/// A section of one image per name, packed as `build` packs it.
fn section(key: SectionKey, images: &[(&str, &[u8])]) -> (SectionKey, usize, Vec<u8>) {
    let mut raw = (images.len() as u32).to_le_bytes().to_vec();
    for (name, image) in images {
        raw.extend_from_slice(&(name.len() as u16).to_le_bytes());
        raw.extend_from_slice(name.as_bytes());
        raw.extend_from_slice(&(image.len() as u32).to_le_bytes());
        raw.extend_from_slice(image);
    }
    let packed = zstd::bulk::compress(&raw, 3).unwrap();
    (key, raw.len(), packed)
}

#[test]
fn a_bundle_round_trips_and_a_foreign_or_torn_one_is_not_used() {
    let dir = std::env::temp_dir().join(format!("pgh-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("k.bundle");
    let scan = KernelId::SegScan.to_string();
    write(
        &path,
        &[
            section(key(Format::Cubin, 90, 13000), &[(&scan, b"cubin90")]),
            section(key(Format::Ptx, 75, 13000), &[(&scan, b"ptx75-13")]),
            section(key(Format::Ptx, 75, 12000), &[(&scan, b"ptx75-12")]),
        ],
    )
    .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let sections = parse(&bytes).unwrap();
    assert_eq!(sections.len(), 3);
    assert_eq!(sections[0].images()[&scan], b"cubin90");
    // Another kernel source: no sections. A torn or damaged file: refused.
    let mut foreign = bytes.clone();
    foreign[8] ^= 1;
    assert!(parse(&foreign).unwrap().is_empty());
    let mut torn = bytes.clone();
    torn.pop();
    assert!(parse(&torn).is_none());
    let mut damaged = bytes.clone();
    *damaged.last_mut().unwrap() ^= 1;
    assert!(parse(&damaged).is_none());

    // Read on first use; the image chosen by architecture, driver and source.
    set_path(path.clone());
    let found = |arch, driver, source| {
        find(&KernelId::SegScan, arch, driver, source).map(|image| (image.format, image.bytes))
    };
    assert_eq!(
        found(90, 13000, Source::Auto),
        Some((Format::Cubin, b"cubin90".to_vec()))
    );
    assert_eq!(
        found(90, 13000, Source::Ptx),
        Some((Format::Ptx, b"ptx75-13".to_vec()))
    );
    // A CUDA 12 driver: only what NVRTC 12.0 built.
    assert_eq!(
        found(90, 12040, Source::Auto),
        Some((Format::Ptx, b"ptx75-12".to_vec()))
    );
    assert_eq!(found(90, 11080, Source::Auto), None);
    assert_eq!(found(90, 13000, Source::Nvrtc), None);
    assert!(find(&KernelId::SegCount, 90, 13000, Source::Auto).is_none());

    // Merged from two builds: the sections of both.
    let other = dir.join("k12.bundle");
    write(
        &other,
        &[section(key(Format::Ptx, 75, 12000), &[(&scan, b"p")])],
    )
    .unwrap();
    let merged = dir.join("merged.bundle");
    assert_eq!(merge(&merged, &[path.clone(), other]).unwrap(), 4);
    assert_eq!(read(&merged).unwrap().len(), 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_section_follows_the_architecture_and_the_drivers_version() {
    let keys = [
        key(Format::Cubin, 75, 13000),
        key(Format::Cubin, 80, 13000),
        key(Format::Cubin, 86, 13000),
        key(Format::Cubin, 90, 13000),
        key(Format::Cubin, 120, 13000),
        key(Format::Ptx, 75, 13000),
        key(Format::Ptx, 75, 12000),
    ];
    let chosen = |arch, driver, source| choose(&keys, arch, driver, source);
    // Its own CUBIN first, then PTX (the newer NVRTC's first).
    assert_eq!(chosen(90, 13000, Source::Auto), [3, 5, 6]);
    // An sm_89 runs the sm_86 and sm_80 CUBINs (same major, older minor), never sm_90's.
    assert_eq!(chosen(89, 13020, Source::Auto), [2, 1, 5, 6]);
    // An architecture newer than every CUBIN (sm_130) or of another major (sm_110): PTX.
    assert_eq!(chosen(130, 13090, Source::Auto), [5, 6]);
    assert_eq!(chosen(110, 13000, Source::Auto), [5, 6]);
    // An sm_70 (Volta): nothing prebuilt runs on it.
    assert!(chosen(70, 13000, Source::Auto).is_empty());
    // CUDA 12.x drivers: only NVRTC 12.0's PTX; CUDA 11: nothing.
    assert_eq!(chosen(90, 12000, Source::Auto), [6]);
    assert_eq!(chosen(80, 12080, Source::Auto), [6]);
    assert!(chosen(90, 11080, Source::Auto).is_empty());
    // Forced: the PTX path leaves out CUBINs, NVRTC leaves out the bundle.
    assert_eq!(chosen(90, 13000, Source::Ptx), [5, 6]);
    assert!(chosen(90, 13000, Source::Nvrtc).is_empty());
}

#[test]
fn the_kernel_source_is_parsed_strictly() {
    assert_eq!(Source::parse(""), Ok(Source::Auto));
    assert_eq!(Source::parse("ptx"), Ok(Source::Ptx));
    assert_eq!(Source::parse("nvrtc"), Ok(Source::Nvrtc));
    assert!(Source::parse("PTX")
        .unwrap_err()
        .contains("auto, ptx or nvrtc"));
}

#[test]
fn the_common_kernels_are_distinct() {
    let all = common_kernels();
    let unique: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(unique.len(), all.len());
}

/// A bundle holds the weighted kernels of the process that builds it (a kernel's name and defines
/// follow `fixed::sums`): built with the default, those are the float sums' (`_weighted_float`),
/// the way every process without POLARS_GPU_HIST_SUMS=fixed launches; the fixed-point ones
/// compile on first use. scripts/build_bundle.py clears the variable so that a bundle always
/// holds the default's.
#[test]
fn the_bundle_holds_the_default_weighted_kernels() {
    assert_eq!(crate::fixed::DEFAULT_SUMS, crate::fixed::Sums::Float);
    let weighted: Vec<String> = common_kernels()
        .iter()
        .filter(|k| matches!(k, KernelId::Count { weighted: true, .. }))
        .map(|k| k.to_string())
        .collect();
    assert!(weighted.len() >= 20, "{weighted:?}");
    if crate::fixed::sums() == crate::fixed::DEFAULT_SUMS {
        assert!(
            weighted.iter().all(|n| n.contains("_weighted_float_")),
            "{weighted:?}"
        );
    }
}

/// The bundle `make bundle` builds, built here with the NVRTC CI installs (no GPU): every common
/// kernel as a CUBIN for the lowest and the newest architecture NVRTC lists and as PTX for the
/// lowest. The whole matrix (every architecture, about 13 x 190 compiles: 18 of `make test`'s 28
/// minutes on 2 cores) is built where the bundle is, by `make bundle` and `make wheel`
/// (scripts/build_bundle.py fails on a kernel that does not build and checks that every section
/// holds every kernel); PGH_ALL_ARCHS=1 runs it here too. CI sets PGH_REQUIRE_NVRTC=1; elsewhere
/// the test is skipped without NVRTC.
#[test]
fn every_bundle_kernel_compiles_for_the_lowest_and_newest_architecture() {
    if !compile::nvrtc_present() {
        assert!(
            std::env::var_os("PGH_REQUIRE_NVRTC").is_none(),
            "PGH_REQUIRE_NVRTC is set but libnvrtc was not found on the library path"
        );
        eprintln!("skipped: no NVRTC here");
        return;
    }
    let supported = compile::supported_archs().unwrap();
    assert!(
        supported.contains(&75) && supported.contains(&90),
        "{supported:?}"
    );
    let archs = if std::env::var_os("PGH_ALL_ARCHS").is_some() {
        supported.clone()
    } else {
        vec![supported[0], supported[supported.len() - 1]]
    };
    let kernels = common_kernels();
    let path = std::env::temp_dir().join(format!("pgh-all-archs-{}.bundle", std::process::id()));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let started = std::time::Instant::now();
    let report = build(&path, &archs, &archs[..1], &kernels, threads).unwrap();
    eprintln!(
        "{} kernels x {} sections in {:.0} s: {:.1} MB packed",
        kernels.len(),
        report.len(),
        started.elapsed().as_secs_f64(),
        std::fs::metadata(&path).unwrap().len() as f64 / 1e6
    );
    let sections = read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(sections.len(), archs.len() + 1);
    for section in &sections {
        let images = section.images();
        assert_eq!(images.len(), kernels.len(), "{:?}", section.key);
        for (name, image) in images {
            match section.key.format {
                Format::Cubin => assert!(image.starts_with(b"\x7fELF"), "{name}: not a CUBIN"),
                Format::Ptx => assert!(
                    String::from_utf8_lossy(image).contains(".entry "),
                    "{name}: PTX without an entry point"
                ),
            }
        }
    }
}
