//! Ctrl-C during a long call: a process-wide flag that the row loops read between blocks, so
//! that a call stops within a block's time instead of running to its end.
//!
//! The flag is raised only while a call is running (a [`Scope`] is alive), and it is cleared
//! when the last running call ends: a Ctrl-C between calls is Python's alone, and one that
//! stopped a call never reaches the next. Nothing raises it by itself: the Python module chains
//! a SIGINT action in front of Python's own handler ([`chain_sigint`]), which still runs (it
//! makes the `KeyboardInterrupt`); Rust programs may call [`request`] from their own handler.
//!
//! A stopped call returns [`HistError::Interrupted`] before it touches anything it shares:
//! counts of an interrupted fill are never merged, caches are never filled with a half count.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{HistError, HistResult};

/// Bit 0: an interrupt is pending. The bits above: the number of running calls.
struct Flag(AtomicU64);
const PENDING: u64 = 1;
const CALL: u64 = 2;

/// The process's flag (tests make their own).
static FLAG: Flag = Flag::new();

impl Flag {
    const fn new() -> Flag {
        Flag(AtomicU64::new(0))
    }

    fn enter(&self) {
        self.0.fetch_add(CALL, Ordering::AcqRel);
    }

    fn leave(&self) {
        // The last call to end clears a pending interrupt: it was for the calls now over.
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                Some(if s >> 1 == 1 { 0 } else { s - CALL })
            });
    }

    fn request(&self) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                (s >> 1 > 0).then_some(s | PENDING)
            });
    }

    #[inline(always)]
    fn pending(&self) -> bool {
        self.0.load(Ordering::Relaxed) & PENDING != 0
    }
}

/// A running call: interrupts are honoured while one is alive.
#[must_use = "a scope ends when dropped"]
pub struct Scope(());

impl Scope {
    pub fn enter() -> Scope {
        FLAG.enter();
        Scope(())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        FLAG.leave();
    }
}

/// Asks every running call to stop (async-signal-safe: one atomic update). Does nothing when
/// no call is running.
pub fn request() {
    FLAG.request();
}

/// Whether the running calls were asked to stop (one relaxed load: cheap enough per block).
#[inline(always)]
pub fn pending() -> bool {
    FLAG.pending()
}

/// [`HistError::Interrupted`] when the running calls were asked to stop.
#[inline]
pub fn check() -> HistResult<()> {
    match pending() {
        true => Err(HistError::Interrupted),
        false => Ok(()),
    }
}

/// Chains [`request`] in front of the process's SIGINT handler, once, and only where that
/// handler is a function (Python's): where SIGINT is ignored or has its default action (no
/// Python, `python -X` embedding without signals, `signal.SIG_IGN`), nothing changes. The
/// previous handler still runs after [`request`]; Python re-installing its own handler
/// (`signal.signal(SIGINT, ...)`) removes ours, and calls then run to their end as before.
#[cfg(all(feature = "python", unix))]
pub fn chain_sigint() {
    use std::sync::Once;
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: reading the current disposition; `old` is a plain C struct.
        let handled = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
        };
        if handled {
            // SAFETY: the action only updates an atomic, which is async-signal-safe.
            let _ = unsafe { signal_hook_registry::register(libc::SIGINT, request) };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_counts_only_while_a_call_runs() {
        // A flag of its own: the process's is shared with every test running beside this one.
        let flag = Flag::new();
        flag.request();
        assert!(
            !flag.pending(),
            "no call runs: the interrupt is Python's alone"
        );
        flag.enter();
        flag.enter();
        assert!(!flag.pending());
        flag.request();
        assert!(flag.pending());
        flag.leave();
        assert!(flag.pending(), "a call still runs: it stops too");
        flag.leave();
        assert!(!flag.pending(), "the last call to end clears it");
        flag.enter();
        assert!(!flag.pending(), "the next call runs");
    }

    #[test]
    fn the_error_reads_as_the_python_package_looks_for_it() {
        assert_eq!(
            HistError::Interrupted.to_string(),
            crate::error::INTERRUPTED
        );
    }
}
