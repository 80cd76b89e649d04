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

/// Chains [`request`] in front of the process's SIGINT handler where that handler is a function
/// (Python's) and not ours already: where SIGINT is ignored or has its default action (no Python
/// signal handling, `signal.SIG_IGN`), nothing changes. The previous handler still runs after
/// [`request`] (it makes the `KeyboardInterrupt`). Python re-installing its own handler
/// (`signal.signal(SIGINT, ...)`, which Jupyter kernels do around every cell) displaces ours:
/// the Python entry points call this again, so a displaced action is chained anew before the
/// next call. One `sigaction` call when nothing changed.
#[cfg(all(feature = "python", unix))]
pub fn chain_sigint() {
    sigint::chain();
}

#[cfg(all(feature = "python", unix))]
mod sigint {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// The handler ours runs after, and whether it takes `siginfo` (`SA_SIGINFO`). Written only
    /// while ours is not installed, so never while ours runs.
    static PREVIOUS: AtomicUsize = AtomicUsize::new(0);
    static PREVIOUS_SIGINFO: AtomicBool = AtomicBool::new(false);
    static INSTALLING: Mutex<()> = Mutex::new(());

    extern "C" fn on_sigint(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        super::request();
        let previous = PREVIOUS.load(Ordering::Acquire);
        if previous == libc::SIG_DFL || previous == libc::SIG_IGN {
            return; // never stored: ours is only installed over a function
        }
        // SAFETY: `previous` is the function the disposition held before ours, called as its
        // flags say it takes its arguments.
        unsafe {
            if PREVIOUS_SIGINFO.load(Ordering::Acquire) {
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(previous);
                f(sig, info, ctx);
            } else {
                let f: extern "C" fn(libc::c_int) = std::mem::transmute(previous);
                f(sig);
            }
        }
    }

    pub(super) fn chain() {
        let Ok(_installing) = INSTALLING.lock() else {
            return;
        };
        type Action = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);
        let ours = on_sigint as Action as usize;
        // SAFETY: plain C structs; sigaction reads and writes the disposition of SIGINT.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current) != 0 {
                return;
            }
            let handler = current.sa_sigaction;
            if handler == ours || handler == libc::SIG_DFL || handler == libc::SIG_IGN {
                return;
            }
            PREVIOUS_SIGINFO.store(current.sa_flags & libc::SA_SIGINFO != 0, Ordering::Release);
            PREVIOUS.store(handler, Ordering::Release);
            let mut chained = current;
            chained.sa_sigaction = ours;
            chained.sa_flags = current.sa_flags | libc::SA_SIGINFO;
            libc::sigaction(libc::SIGINT, &chained, std::ptr::null_mut());
        }
    }
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
