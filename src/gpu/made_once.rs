//! A map of values each made once, where making one is slow (an NVRTC compile takes seconds)
//! and using a made one is quick (a launch of a loaded kernel). A value is made outside the
//! map's lock, so a first-use compile never stalls other threads' launches; two threads making
//! the same value both make it, and the first one stored is kept (a compile of one kernel gives
//! the same kernel, and the disk cache writes its entry by rename).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

use crate::error::HistResult;

pub struct MadeOnce<K, V> {
    made: Mutex<HashMap<K, V>>,
}

impl<K, V> Default for MadeOnce<K, V> {
    fn default() -> Self {
        MadeOnce {
            made: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash + Clone, V> MadeOnce<K, V> {
    /// `then` applied to the value of `key`, made first by `make` if there is none yet. Only
    /// `then` runs under the lock: it must be quick.
    pub fn with<T>(
        &self,
        key: &K,
        make: impl FnOnce() -> HistResult<V>,
        then: impl FnOnce(&mut V) -> HistResult<T>,
    ) -> HistResult<T> {
        if let Some(value) = self.lock().get_mut(key) {
            return then(value);
        }
        let made = make()?;
        let mut values = self.lock();
        then(values.entry(key.clone()).or_insert(made))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, V>> {
        // A panic in `then` leaves the map as it was: every entry is whole.
        self.made.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::MadeOnce;
    use crate::error::HistError;

    /// How long a test waits for the other thread before it calls the two serialized.
    const PATIENCE: Duration = Duration::from_secs(20);

    /// One thread compiles (its `make` waits until the other thread has launched); the other
    /// launches a kernel loaded before. Were the compile to hold the lock, the launch would wait
    /// for the compile and the compile for the launch: the compile gives up after `PATIENCE`.
    #[test]
    fn a_compile_does_not_hold_up_launches_of_loaded_kernels() {
        let kernels = &MadeOnce::default();
        kernels.with(&"loaded", || Ok(1), |_| Ok(())).unwrap();
        let (compiling, compile_started) = mpsc::channel();
        let (launched, launch_done) = mpsc::channel();
        std::thread::scope(|scope| {
            let compile = scope.spawn(move || {
                kernels.with(
                    &"fresh",
                    || {
                        compiling.send(()).unwrap();
                        launch_done
                            .recv_timeout(PATIENCE)
                            .map_err(|_| HistError::Internal("the launch waited".into()))?;
                        Ok(2)
                    },
                    |k| Ok(*k),
                )
            });
            compile_started.recv().unwrap();
            let launch = kernels.with(&"loaded", || unreachable!("loaded before"), |k| Ok(*k));
            launched.send(()).unwrap();
            assert_eq!(launch.unwrap(), 1);
            assert_eq!(compile.join().unwrap().unwrap(), 2);
        });
    }

    /// Two threads compile the same kernel at once: both finish, and both use the one kept.
    #[test]
    fn concurrent_compiles_of_one_kernel_keep_the_first_stored() {
        let kernels = &MadeOnce::default();
        let (slow_started, slow_running) = mpsc::channel();
        let (fast_stored, fast_done) = mpsc::channel();
        std::thread::scope(|scope| {
            let slow = scope.spawn(move || {
                kernels.with(
                    &"same",
                    || {
                        slow_started.send(()).unwrap();
                        fast_done
                            .recv_timeout(PATIENCE)
                            .map_err(|_| HistError::Internal("the compiles serialized".into()))?;
                        Ok("slow")
                    },
                    |k| Ok(*k),
                )
            });
            slow_running.recv().unwrap();
            let fast = kernels.with(&"same", || Ok("fast"), |k| Ok(*k));
            fast_stored.send(()).unwrap();
            assert_eq!(fast.unwrap(), "fast");
            assert_eq!(slow.join().unwrap().unwrap(), "fast");
        });
    }
}
