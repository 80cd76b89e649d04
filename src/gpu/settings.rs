//! What the environment asks of the GPU path, read once where a call enters the library and
//! passed down as a value: nothing below the entry points reads the environment, a call's
//! settings do not change while it runs, and a test varies them per call by passing its own.
//! (The CPU's instruction set, `POLARS_GPU_HIST_SIMD`, is chosen once a process: `cpu::simd`.)

use std::ffi::OsString;
use std::path::PathBuf;

use crate::gpu::Transfer;

pub const TRANSFER_ENV: &str = "POLARS_GPU_HIST_TRANSFER";
pub const DEVICE_BYTES_ENV: &str = "POLARS_GPU_HIST_DEVICE_BYTES";
pub const CACHE_ENV: &str = "POLARS_GPU_HIST_CACHE";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// How host rows reach the device (`POLARS_GPU_HIST_TRANSFER`: auto, pageable, staged,
    /// registered), for benchmarks.
    pub transfer: Transfer,
    /// Device bytes a call's rows may take at most (`POLARS_GPU_HIST_DEVICE_BYTES`: tests force
    /// the streaming path with it); `None`: what is free, less a reserve.
    pub device_bytes: Option<usize>,
    /// Where compiled kernels are kept: `POLARS_GPU_HIST_CACHE`, else `$XDG_CACHE_HOME` or
    /// `~/.cache`, under `polars-gpu-hist` (`None`: no HOME). Kernels load once a process, so
    /// the GPU keeps the directory of the settings it was opened with.
    pub kernel_cache: Option<PathBuf>,
}

impl Settings {
    /// The settings the process's environment asks for now.
    pub fn from_env() -> Settings {
        Settings::from_vars(|name| std::env::var_os(name))
    }

    /// The settings that environment variables looked up by `var` ask for.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Settings {
        let text = |name: &str| var(name).and_then(|v| v.into_string().ok());
        let transfer = match text(TRANSFER_ENV).as_deref().map(str::trim) {
            Some("pageable") => Transfer::Pageable,
            Some("staged") => Transfer::Staged,
            Some("registered") => Transfer::Registered,
            _ => Transfer::Auto,
        };
        let kernel_cache = var(CACHE_ENV).map(PathBuf::from).or_else(|| {
            let base = var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(base.join("polars-gpu-hist"))
        });
        Settings {
            transfer,
            device_bytes: text(DEVICE_BYTES_ENV).and_then(|v| v.trim().parse().ok()),
            kernel_cache,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(vars: &[(&str, &str)]) -> Settings {
        Settings::from_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn settings_come_from_the_variables_given() {
        assert_eq!(
            of(&[]),
            Settings {
                transfer: Transfer::Auto,
                device_bytes: None,
                kernel_cache: None,
            }
        );
        let asked = of(&[
            (TRANSFER_ENV, "registered"),
            (DEVICE_BYTES_ENV, " 4096 "),
            ("HOME", "/home/me"),
        ]);
        assert_eq!(asked.transfer, Transfer::Registered);
        assert_eq!(asked.device_bytes, Some(4096));
        assert_eq!(
            asked.kernel_cache,
            Some(PathBuf::from("/home/me/.cache/polars-gpu-hist"))
        );
        let cache = of(&[
            (CACHE_ENV, "/tmp/k"),
            ("XDG_CACHE_HOME", "/x"),
            (DEVICE_BYTES_ENV, "lots"),
        ]);
        assert_eq!(cache.kernel_cache, Some(PathBuf::from("/tmp/k")));
        assert_eq!(cache.device_bytes, None, "not a number: no cap");
        let xdg = of(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/home/me")]);
        assert_eq!(xdg.kernel_cache, Some(PathBuf::from("/x/polars-gpu-hist")));
    }
}
