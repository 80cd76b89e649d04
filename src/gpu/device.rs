//! Which GPU a call counts on. Arrays in GPU memory are counted on the device that holds them
//! (found from their address); host rows on the calling thread's current device, the one
//! `cupy.cuda.Device(k)` or `torch.cuda.set_device(k)` made current, else device 0; pinned
//! columns on the device they were pinned to. A call leaves the thread's current device as it
//! found it ([`KeepCurrent`]).

use cudarc::driver::sys::{self, CUmemorytype, CUpointer_attribute as Attr};

use crate::error::{HistError, HistResult};

/// Where memory a kernel reads lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// Memory of GPU `k`: only kernels on that GPU can read it.
    Device(i32),
    /// Managed or page-locked host memory: every GPU reads it through unified addressing.
    Anywhere,
}

/// `device` as an index of the `count` GPUs the process sees, or an error naming the argument.
pub fn checked_ordinal(device: i64, count: usize) -> HistResult<usize> {
    match usize::try_from(device) {
        Ok(k) if k < count => Ok(k),
        _ => Err(HistError::InvalidArgument(format!(
            "`device` {device} is out of range: this process sees {count} GPU{}, numbered 0 to \
             {}; pass one of those (CUDA_VISIBLE_DEVICES decides which GPUs the process sees)",
            if count == 1 { "" } else { "s" },
            count.saturating_sub(1)
        ))),
    }
}

/// The one GPU that the memory of every `(what, home)` lives on, or `default` where none is
/// bound to a GPU; an error naming two that lie on different GPUs (a kernel faults on another
/// GPU's memory).
pub fn one_device(
    homes: impl IntoIterator<Item = (String, Home)>,
    default: i32,
) -> HistResult<i32> {
    let mut first: Option<(String, i32)> = None;
    for (what, home) in homes {
        let Home::Device(k) = home else { continue };
        match &first {
            None => first = Some((what, k)),
            Some((other, j)) if *j != k => {
                return Err(HistError::InvalidArgument(format!(
                    "the arrays of one call must be on one GPU: {what} is on GPU {k}, but \
                     {other} on GPU {j}; copy them to one device first (e.g. \
                     `cupy.asarray(a)` under `with cupy.cuda.Device({j}):`, or `t.to(\"cuda:{j}\")`)"
                )))
            }
            Some(_) => {}
        }
    }
    Ok(first.map_or(default, |(_, k)| k))
}

/// Where the memory at `ptr` lives, or an error naming `what` where CUDA does not know it (a
/// host buffer handed over as device memory).
pub fn home_of(ptr: u64, what: &str) -> HistResult<Home> {
    let mut kind: u32 = 0;
    let mut managed: u32 = 0;
    let mut ordinal: i32 = -1;
    // SAFETY: each out-pointer is valid and of the width its attribute writes (an unsigned
    // int, an unsigned int, an int); the driver is loaded (a GPU was counted before).
    let known = unsafe {
        sys::cuPointerGetAttribute(
            (&mut kind as *mut u32).cast(),
            Attr::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr,
        ) == sys::CUresult::CUDA_SUCCESS
            && sys::cuPointerGetAttribute(
                (&mut managed as *mut u32).cast(),
                Attr::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                ptr,
            ) == sys::CUresult::CUDA_SUCCESS
            && sys::cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                Attr::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            ) == sys::CUresult::CUDA_SUCCESS
    };
    if !known {
        return Err(HistError::InvalidArgument(format!(
            "{what} at {ptr:#x} is not memory CUDA knows (a host buffer given as GPU memory?): \
             pass an array in GPU memory, or a host array or Series"
        )));
    }
    Ok(
        match kind == CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 && managed == 0 {
            true => Home::Device(ordinal),
            false => Home::Anywhere,
        },
    )
}

/// The calling thread's current device: that of its current context (CuPy's and PyTorch's
/// current device), else device 0. Device 0 too where there is no driver.
pub fn current() -> i32 {
    if super::context::device_count().is_err() {
        return 0;
    }
    let Ok(Some(_)) = cudarc::driver::result::ctx::get_current() else {
        return 0;
    };
    let mut device: sys::CUdevice = 0;
    // SAFETY: a context is current on this thread; one valid out-pointer.
    if unsafe { sys::cuCtxGetDevice(&mut device) } != sys::CUresult::CUDA_SUCCESS {
        return 0;
    }
    ordinal_of(device)
}

/// The ordinal of a device handle (the driver's handles are not promised to be ordinals).
fn ordinal_of(device: sys::CUdevice) -> i32 {
    let count = super::context::device_count().unwrap_or(0) as i32;
    (0..count)
        .find(|&k| cudarc::driver::result::device::get(k).is_ok_and(|d| d == device))
        .unwrap_or(0)
}

/// Restores the calling thread's current context when dropped: a call binds the context of the
/// GPU it counts on, and the caller's current device (CuPy's, PyTorch's) must not change under
/// it.
pub struct KeepCurrent(Option<sys::CUcontext>);

impl KeepCurrent {
    /// The thread's current context now: none where the driver is not initialized yet
    /// (nothing to keep where there is no driver).
    pub fn now() -> KeepCurrent {
        if !super::context::driver_present() {
            return KeepCurrent(None);
        }
        let current = cudarc::driver::result::ctx::get_current().ok().flatten();
        KeepCurrent(Some(current.unwrap_or(std::ptr::null_mut())))
    }
}

impl Drop for KeepCurrent {
    fn drop(&mut self) {
        if let Some(ctx) = self.0 {
            // SAFETY: `ctx` was current on this thread (or null: none), and a primary context
            // is never destroyed while the process holds it.
            unsafe { sys::cuCtxSetCurrent(ctx) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_out_of_range_is_refused_naming_the_argument() {
        assert_eq!(checked_ordinal(1, 2).unwrap(), 1);
        assert_eq!(checked_ordinal(0, 1).unwrap(), 0);
        for (device, count) in [(2, 2), (-1, 2), (0, 0), (i64::MAX, 4)] {
            let e = checked_ordinal(device, count).unwrap_err().to_string();
            assert!(
                e.contains(&format!("`device` {device} is out of range")),
                "{e}"
            );
            assert!(e.contains(&format!("sees {count} GPU")), "{e}");
        }
    }

    /// Without a driver (CI) host rows name device 0, and keeping the current context is a
    /// no-op: nothing touches the missing driver.
    #[test]
    fn without_a_driver_the_current_device_is_0() {
        if super::super::context::driver_present() {
            return;
        }
        assert_eq!(current(), 0);
        drop(KeepCurrent::now());
        assert!(super::super::context::device_count().is_err());
    }

    #[test]
    fn the_arrays_of_a_call_name_their_one_device() {
        let at = |what: &str, home| (what.to_string(), home);
        // Nothing bound to a GPU: the default.
        assert_eq!(one_device([], 3).unwrap(), 3);
        assert_eq!(one_device([at("x", Home::Anywhere)], 3).unwrap(), 3);
        // Arrays on device 1, with managed memory beside them, count on device 1.
        let on_one = [
            at("x", Home::Device(1)),
            at("w", Home::Anywhere),
            at("y", Home::Device(1)),
        ];
        assert_eq!(one_device(on_one, 0).unwrap(), 1);
        // Two GPUs in one call: refused, naming both arrays and devices.
        let mixed = [
            at("column 0", Home::Device(0)),
            at("column 1", Home::Device(1)),
        ];
        let e = one_device(mixed, 0).unwrap_err().to_string();
        assert!(
            e.contains("column 1 is on GPU 1, but column 0 on GPU 0"),
            "{e}"
        );
    }
}
